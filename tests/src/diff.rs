//! The differential comparer: every output of a rust-hdl block against the Verilator model's
//! port of the same name, found by walking the block with rust-hdl's probe, so no hand-written
//! list of outputs can miss one.
//!
//! [`Outputs::new`] pairs the block's top-level outputs with the model's ports and fails if the
//! two sides do not have the same set of outputs with the same widths (an interface field
//! `s.data` is the port `s$data` in Verilog, `s__024data` in Verilator's C++).
//! [`Outputs::check`] compares them all after a clock edge and names every one that differs.

use anyhow::{bail, ensure, Result};
use ferroce_hdl::prelude::{Atom, AtomKind, Block, Probe};
use ferroce_sim::{Direction, Model, Port};

/// Every top-level output of a block, as (Verilog name, width, little-endian bytes).
fn hdl_outputs(block: &dyn Block) -> Result<Vec<(String, usize, Vec<u8>)>> {
    struct Walk {
        depth: usize,
        namespace: Vec<String>,
        out: Vec<(String, usize, Vec<u8>)>,
        bad: Option<String>,
    }
    impl Probe for Walk {
        fn visit_start_scope(&mut self, _name: &str, _node: &dyn Block) {
            self.depth += 1;
        }
        fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
            self.depth -= 1;
        }
        fn visit_start_namespace(&mut self, name: &str, _node: &dyn Block) {
            if self.depth == 1 {
                self.namespace.push(name.to_string());
            }
        }
        fn visit_end_namespace(&mut self, _name: &str, _node: &dyn Block) {
            if self.depth == 1 {
                self.namespace.pop();
            }
        }
        fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
            if self.depth != 1
                || !matches!(
                    signal.kind(),
                    AtomKind::OutputParameter | AtomKind::OutputPassthrough
                )
            {
                return;
            }
            let mut path = self.namespace.clone();
            path.push(name.to_string());
            let full = path.join("$");
            match literal_bytes(&format!("{:x}", signal.verilog()), signal.bits()) {
                Some(b) => self.out.push((full, signal.bits(), b)),
                None => {
                    self.bad.get_or_insert(full);
                }
            }
        }
    }
    let mut w = Walk {
        depth: 0,
        namespace: Vec::new(),
        out: Vec::new(),
        bad: None,
    };
    block.accept("top", &mut w);
    if let Some(name) = w.bad {
        bail!("output {name}: its rust-hdl value is not a plain unsigned number");
    }
    Ok(w.out)
}

/// `N'hXXXX` (a `VerilogLiteral` in hex) as `ceil(bits / 8)` little-endian bytes.
fn literal_bytes(lit: &str, bits: usize) -> Option<Vec<u8>> {
    let hex = lit.split_once("'h")?.1;
    let mut out = vec![0u8; bits.div_ceil(8)];
    for (i, c) in hex.bytes().rev().enumerate() {
        let v = (c as char).to_digit(16)? as u8;
        let byte = out.get_mut(i / 2)?;
        *byte |= v << (4 * (i % 2));
    }
    Some(out)
}

/// The Verilator model's name for a Verilog port name.
fn verilator_name(verilog: &str) -> String {
    verilog.replace('$', "__024")
}

/// The outputs of one block paired with its model's ports.
pub struct Outputs {
    ports: Vec<(String, Port)>,
}

impl Outputs {
    /// Pair every output of `block` with `model`'s port of the same name. Fails when an output
    /// has no port, a port has no output, or their widths differ.
    pub fn new(block: &dyn Block, model: &Model) -> Result<Outputs> {
        let outs = hdl_outputs(block)?;
        ensure!(!outs.is_empty(), "the rust-hdl block has no outputs");
        let mut ports = Vec::new();
        for (name, width, _) in &outs {
            let vname = verilator_name(name);
            ensure!(
                model.has_port(&vname),
                "output {name} of the rust-hdl block has no port in {}",
                model.name()
            );
            let p = model.port(&vname)?;
            ensure!(
                p.dir == Direction::Output,
                "{name} is an output of the rust-hdl block but an input of {}",
                model.name()
            );
            ensure!(
                p.width == *width,
                "{name}: {width} bits in rust-hdl, {} in {}",
                p.width,
                model.name()
            );
            ports.push((name.clone(), p));
        }
        let known: std::collections::HashSet<String> =
            outs.iter().map(|(n, _, _)| verilator_name(n)).collect();
        let extra: Vec<&str> = model
            .ports()
            .filter(|(n, _, d)| *d == Direction::Output && !known.contains(*n))
            .map(|(n, _, _)| n)
            .collect();
        ensure!(
            extra.is_empty(),
            "{} has outputs the rust-hdl block lacks: {extra:?}",
            model.name()
        );
        Ok(Outputs { ports })
    }

    /// How many outputs are compared.
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// Compare every output; on a difference, fail naming each differing output with both
    /// values (hex, most significant byte first).
    pub fn check(&self, block: &dyn Block, model: &Model, cycle: u64) -> Result<()> {
        let outs = hdl_outputs(block)?;
        ensure!(
            outs.len() == self.ports.len(),
            "the block's outputs changed"
        );
        let hex = |b: &[u8]| {
            b.iter()
                .rev()
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        };
        let mut bad = Vec::new();
        for ((name, _, want), (pname, port)) in outs.iter().zip(&self.ports) {
            ensure!(
                name == pname,
                "the block's outputs changed order ({name}, {pname})"
            );
            let got = model.get_bytes(*port);
            if &got != want {
                bad.push(format!(
                    "{name}: Verilator {} rust-hdl {}",
                    hex(&got),
                    hex(want)
                ));
            }
        }
        ensure!(
            bad.is_empty(),
            "cycle {cycle}: {} of {} outputs differ:\n  {}",
            bad.len(),
            self.ports.len(),
            bad.join("\n  ")
        );
        Ok(())
    }
}

/// The same reset on both sides of a differential test: `rst` high for three clock edges,
/// then low for one, on the rust-hdl block (`set_rst`, `edge`) and on the Verilator model.
pub fn reset_both<B>(
    hdl: &mut B,
    tb: &mut ferroce_sim::Tb,
    set_rst: impl Fn(&mut B, bool),
    edge: impl Fn(&mut B),
) -> Result<()> {
    set_rst(hdl, true);
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(hdl);
        tb.rising_edge()?;
    }
    set_rst(hdl, false);
    tb.set("rst", 0)?;
    edge(hdl);
    tb.rising_edge()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_become_little_endian_bytes() {
        assert_eq!(literal_bytes("1'h1", 1), Some(vec![1]));
        assert_eq!(literal_bytes("12'habc", 12), Some(vec![0xbc, 0x0a]));
        assert_eq!(literal_bytes("32'h0", 32), Some(vec![0, 0, 0, 0]));
        assert_eq!(
            literal_bytes("64'h123456789abcdef0", 64),
            Some(vec![0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12])
        );
        assert_eq!(literal_bytes("8'h-1", 8), None);
        assert_eq!(verilator_name("s$data"), "s__024data");
    }
}
