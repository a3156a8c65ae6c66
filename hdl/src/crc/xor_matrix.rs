//! `XorMatrix`: `y = M·x` over GF(2), a constant matrix chosen at elaboration.
//!
//! Ports: `x` (`N` bits in), `y` (`M` bits out, combinational). Output bit `i` is the parity of
//! `x & rows[i]`: an XOR tree of the selected inputs. This is a leaf primitive, like rust-hdl's
//! own DFF and RAM: its Verilog is written here (one `^(x & MASK)` per output bit) and its
//! rust-hdl simulation computes the same parities; the differential test compares the two.
//! It exists because rust-hdl 0.46's kernels cannot assemble a vector bit by bit.

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct XorMatrix<const N: usize, const M: usize> {
    pub x: Signal<In, Bits<N>>,
    pub y: Signal<Out, Bits<M>>,
    _rows: Vec<Bits<N>>,
}

impl<const N: usize, const M: usize> XorMatrix<N, M> {
    /// `rows[i]` selects the inputs whose parity is output bit `i`.
    pub fn new(rows: Vec<Bits<N>>) -> Self {
        assert_eq!(rows.len(), M, "an {M}-output matrix needs {M} rows");
        Self {
            x: Default::default(),
            y: Default::default(),
            _rows: rows,
        }
    }
}

impl<const N: usize, const M: usize> Logic for XorMatrix<N, M> {
    fn update(&mut self) {
        let x = self.x.val();
        self.y.next = self
            ._rows
            .iter()
            .enumerate()
            .fold(Bits::<M>::default(), |acc, (i, row)| {
                acc.replace_bit(i, (x & *row).xor())
            });
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let body: String = self
            ._rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let mask = (0..N).rev().fold(String::with_capacity(N), |mut s, b| {
                    s.push(if row.get_bit(b) { '1' } else { '0' });
                    s
                });
                format!("    y[{i}] = ^(x & {N}'b{mask});\n")
            })
            .collect();
        Verilog::Custom(format!("always @(*) begin\n{body}end\n"))
    }
}
