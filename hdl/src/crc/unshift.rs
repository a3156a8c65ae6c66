//! `Unshift`: undo `z` trailing zero bytes of a CRC-32 register, `y = U_z·x`.
//!
//! Ports: `x` (32-bit register), `z` (count of zero bytes, 0 to 2^STAGES - 1), `y` (32 bits,
//! combinational). `U_z` is built as a chain of `STAGES` conditional matrices `U_{2^k}`, one per
//! bit of `z`, so the cost is STAGES x 32 XOR trees of up to 32 inputs each.
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
}

impl<const ZW: usize> Unshift<ZW> {
    /// A chain of `stages` conditional matrices (`stages <= ZW`).
    pub fn new(stages: usize) -> Self {
        assert!(stages <= ZW, "{stages} stages need a {stages}-bit count");
        Self {
            x: Default::default(),
            z: Default::default(),
            y: Default::default(),
            _stages: (0..stages).map(|k| gf2::unshift_rows(1 << k)).collect(),
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
        for k in 0..=n {
            s += &format!("reg [31:0] v{k};\n");
        }
        s += "always @(*) begin\n    v0 = x;\n";
        for (k, rows) in self._stages.iter().enumerate() {
            for (i, r) in rows.iter().enumerate() {
                s += &format!(
                    "    v{n1}[{i}] = z[{k}] ? ^(v{k} & 32'h{r:08x}) : v{k}[{i}];\n",
                    n1 = k + 1
                );
            }
        }
        s += &format!("    y = v{n};\nend\n");
        Verilog::Custom(s)
    }
}
