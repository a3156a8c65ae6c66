//! The out-of-context wrapper `ferroce pnr` places a design in: a register on every port bit
//! but the design's clocks, so that its input and output paths are register to register, as
//! they are inside a larger design.

use ferroce_hdl::emit::PortDecl;
use std::fmt::Write as _;

/// The wrapper's module name.
pub const WRAPPER: &str = "ferroce_pnr_wrap";

/// A design's clocks: its one-bit inputs named `clk` or `<side>_clk` (a clock crossing has
/// one per side).
pub fn clock_ports(ports: &[PortDecl]) -> Vec<&str> {
    ports
        .iter()
        .filter(|p| p.input && p.width == 1 && (p.name == "clk" || p.name.ends_with("_clk")))
        .map(|p| p.name.as_str())
        .collect()
}

/// The clock a port is registered on: `<side>_clk` for a port named `<side>_...`, else the
/// first clock (`clk` when there is one).
fn domain_of<'a>(name: &str, clocks: &[&'a str]) -> &'a str {
    clocks
        .iter()
        .copied()
        .find(|c| {
            c.strip_suffix("clk")
                .is_some_and(|side| !side.is_empty() && name.starts_with(side))
        })
        .or_else(|| clocks.iter().copied().find(|c| *c == "clk"))
        .or_else(|| clocks.first().copied())
        .unwrap_or("clk")
}

/// The wrapper: the design with a register on every port bit but its clocks, each on the clock
/// of the port's side ([`domain_of`]). Plain Verilog-2005.
pub fn wrapper(top: &str, ports: &[PortDecl]) -> String {
    let range = |w: usize| {
        if w > 1 {
            format!("[{}:0] ", w - 1)
        } else {
            String::new()
        }
    };
    let mut clocks = clock_ports(ports);
    if clocks.is_empty() {
        clocks.push("clk");
    }
    let clocked = |p: &&PortDecl| !clocks.contains(&p.name.as_str());
    let mut s = format!(
        "// Out-of-context wrapper for {top}: one register on every port bit (written by ferroce pnr).\n\
         module {WRAPPER} (\n    {}",
        clocks
            .iter()
            .map(|c| format!("input wire {c}"))
            .collect::<Vec<_>>()
            .join(",\n    ")
    );
    for p in ports.iter().filter(clocked) {
        let dir = if p.input { "input wire" } else { "output wire" };
        let _ = write!(s, ",\n    {dir} {}{}", range(p.width), p.name);
    }
    s += "\n);\n";
    for p in ports.iter().filter(clocked) {
        let pre = if p.input { "wrap_i__" } else { "wrap_o__" };
        let _ = writeln!(s, "    reg {}{pre}{};", range(p.width), p.name);
        if !p.input {
            let _ = writeln!(s, "    wire {}wrap_w__{};", range(p.width), p.name);
            let _ = writeln!(s, "    assign {0} = wrap_o__{0};", p.name);
        }
    }
    for c in &clocks {
        let _ = writeln!(s, "    always @(posedge {c}) begin");
        for p in ports
            .iter()
            .filter(clocked)
            .filter(|p| domain_of(&p.name, &clocks) == *c)
        {
            if p.input {
                let _ = writeln!(s, "        wrap_i__{0} <= {0};", p.name);
            } else {
                let _ = writeln!(s, "        wrap_o__{0} <= wrap_w__{0};", p.name);
            }
        }
        s += "    end\n";
    }
    let _ = write!(
        s,
        "    {top} dut (\n        {}",
        clocks
            .iter()
            .map(|c| format!(".{c}({c})"))
            .collect::<Vec<_>>()
            .join(",\n        ")
    );
    for p in ports.iter().filter(clocked) {
        let src = if p.input { "wrap_i__" } else { "wrap_w__" };
        let _ = write!(s, ",\n        .{0}({src}{0})", p.name);
    }
    s += "\n    );\nendmodule\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_registers_every_port_but_clk() {
        let ports = [
            PortDecl {
                name: "clk".into(),
                input: true,
                width: 1,
            },
            PortDecl {
                name: "a".into(),
                input: true,
                width: 8,
            },
            PortDecl {
                name: "y".into(),
                input: false,
                width: 1,
            },
        ];
        let w = wrapper("t", &ports);
        assert!(w.contains("wrap_i__a <= a;"));
        assert!(w.contains("wrap_o__y <= wrap_w__y;"));
        assert!(w.contains(".a(wrap_i__a)"));
        assert!(!w.contains("wrap_i__clk"));
    }

    #[test]
    fn a_crossings_ports_are_registered_on_their_sides_clocks() {
        let port = |name: &str, input| PortDecl {
            name: name.into(),
            input,
            width: 1,
        };
        let ports = [
            port("s_clk", true),
            port("s_tvalid", true),
            port("m_clk", true),
            port("m_tvalid", false),
        ];
        assert_eq!(clock_ports(&ports), ["s_clk", "m_clk"]);
        let w = wrapper("t", &ports);
        let s_block = w.split("always @(posedge s_clk)").nth(1).unwrap_or("");
        let s_block = s_block.split("end").next().unwrap_or("");
        assert!(s_block.contains("wrap_i__s_tvalid <= s_tvalid;"), "{w}");
        let m_block = w.split("always @(posedge m_clk)").nth(1).unwrap_or("");
        assert!(
            m_block.contains("wrap_o__m_tvalid <= wrap_w__m_tvalid;"),
            "{w}"
        );
        assert!(
            w.contains(".s_clk(s_clk)") && w.contains(".m_clk(m_clk)"),
            "{w}"
        );
    }
}
