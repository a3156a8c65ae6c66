//! `Unshift`: undo `z` trailing zero bytes of a CRC-32 register, `y = U_z·x`.
//!
//! Ports: `x` (32-bit register), `z` (count of zero bytes, 0 to 2^STAGES - 1), `y` (32 bits,
//! combinational).
//!
//! Built for the clock: output bit `i` is `^(x & row_i(z))`, where `row_i(z)` is row `i` of
//! `U_z`, a constant picked by `z`. The mask select depends on `z` alone (registered upstream,
//! so it settles early), each term `x_j & row_ij(z)` is one LUT of `x_j` and the bits of `z`,
//! and one balanced XOR tree of at most 32 terms follows: about four LUT levels whatever the
//! width. (A chain of conditional matrices `U_{2^k}`, one per bit of `z`, costs fewer LUTs but
//! puts four to seven XOR trees in series: 11 levels and 100 MHz on ECP5 at 64 bits.)
//!
//! A leaf primitive with hand-emitted Verilog (one always block holding the whole chain): as
//! separate `XorMatrix` instances inside a kernel, Verilator sees a false combinational loop
//! through the kernel's single always block (UNOPTFLAT). The rust-hdl simulation evaluates the
//! same matrices in software; the differential test compares the two.

use crate::crc::gf2;
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct Unshift<const ZW: usize> {
    pub x: Signal<In, Bits<32>>,
    pub z: Signal<In, Bits<ZW>>,
    pub y: Signal<Out, Bits<32>>,
    _stages: Vec<[u32; 32]>,
    /// Rows of `U_z` for every `z` in 0..2^stages (the Verilog's mask table).
    _table: Vec<[u32; 32]>,
}

impl<const ZW: usize> Unshift<ZW> {
    /// A chain of `stages` conditional matrices (`stages <= ZW`).
    pub fn new(stages: usize) -> Self {
        assert!(
            (1..=ZW).contains(&stages),
            "{stages} stages need a {stages}-bit count (at least 1)"
        );
        Self {
            x: Default::default(),
            z: Default::default(),
            y: Default::default(),
            _stages: (0..stages).map(|k| gf2::unshift_rows(1 << k)).collect(),
            _table: (0..1usize << stages).map(gf2::unshift_rows).collect(),
        }
    }
}

impl<const ZW: usize> Logic for Unshift<ZW> {
    fn update(&mut self) {
        let z = self.z.val();
        let v =
            self._stages
                .iter()
                .enumerate()
                .fold(self.x.val().index() as u32, |v, (k, rows)| {
                    if z.get_bit(k) {
                        gf2::apply(rows, v)
                    } else {
                        v
                    }
                });
        self.y.next = u64::from(v).to_bits();
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let n = self._stages.len();
        let mut s = String::new();
        for i in 0..32 {
            s += &format!("reg [31:0] m{i};\n");
        }
        s += "always @(*) begin\n";
        for i in 0..32 {
            s += &format!("    case (z[{}:0])\n", n - 1);
            for (z, rows) in self._table.iter().enumerate() {
                s += &format!("        {n}'d{z}: m{i} = 32'h{:08x};\n", rows[i]);
            }
            s += "    endcase\n";
            s += &format!("    y[{i}] = ^(x & m{i});\n");
        }
        s += "end\n";
        Verilog::Custom(s)
    }
}
