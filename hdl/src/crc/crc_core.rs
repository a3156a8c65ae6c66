//! Parallel CRC-32 core: one beat of `DW` bits per clock, XOR matrices computed at elaboration.
//!
//! Ports (all synchronous to `clk`, `rst` active high):
//! - `beat`: a beat of `data` is consumed this cycle.
//! - `data`: the beat, lane 0 first; lanes outside the covered region must already be zero.
//! - `first`, `first_state`: this beat opens a message (may be the same beat as `last`); the register starts from `first_state`
//!   instead of its running value. A message opening at lane `s` passes `U_s(init)` so that the
//!   `s` leading zero lanes bring the register to `init` (see `gf2::unshift`).
//! - `last`, `last_zeros`: this beat closes the message, whose last `last_zeros` lanes are zero
//!   fill; the result is corrected by `U_end_zeros`, which undoes those zero bytes.
//! - `crc`, `crc_valid`: the CRC (final XOR applied), valid for one cycle, two cycles after the
//!   `last` beat.
//!
//! ```text
//!  stage 1:  T = A·(first ? first_state : state) ⊕ B·data      state <= T
//!  stage 2:  V = U_1^z0 · U_2^z1 · ... · U_W^zk · T           crc  <= ~V
//! ```
//! Throughput one beat per clock with no bubble between messages (a new message may start on
//! the beat after `last`). Latency 2 cycles. The `U` stage is log2(lanes)+1 conditional 32x32
//! matrices, so zero fill costs 32-bit logic instead of one data matrix per keep count.

use crate::crc::gf2;
use crate::crc::unshift::Unshift;
use crate::crc::xor_matrix::XorMatrix;
use crate::prelude::*;
use crate::util::{bits_from_bools, bits_from_u64, log2_exact};

/// Width of `last_zeros`: up to 128 lanes (1024-bit datapath).
pub const ZW: usize = 8;

#[derive(LogicBlock)]
pub struct CrcCore<const DW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub beat: Signal<In, Bit>,
    pub data: Signal<In, Bits<DW>>,
    pub first: Signal<In, Bit>,
    pub first_state: Signal<In, Bits<32>>,
    pub last: Signal<In, Bit>,
    pub last_zeros: Signal<In, Bits<ZW>>,
    pub crc: Signal<Out, Bits<32>>,
    pub crc_valid: Signal<Out, Bit>,
    state: DFF<Bits<32>>,
    t_reg: DFF<Bits<32>>,
    z_reg: DFF<Bits<ZW>>,
    last_reg: DFF<Bit>,
    crc_reg: DFF<Bits<32>>,
    valid_reg: DFF<Bit>,
    state_mat: XorMatrix<32, 32>,
    data_mat: XorMatrix<DW, 32>,
    unshift: Unshift<ZW>,
    ones: Constant<Bits<32>>,
}

impl<const DW: usize> CrcCore<DW> {
    /// Lanes per beat.
    pub const LANES: usize = DW / 8;
    /// Conditional unshift stages: `last_zeros` ranges over 0..=LANES.
    pub const STAGES: usize = (DW / 8).trailing_zeros() as usize + 1;

    pub fn new() -> Self {
        assert!(
            DW.is_multiple_of(8) && DW >= 8,
            "datapath width {DW} is not whole bytes"
        );
        let lanes = DW / 8;
        log2_exact(lanes);
        assert!(lanes < (1 << ZW), "{lanes} lanes do not fit last_zeros");
        let rows32 = |rows: [u32; 32]| -> Vec<Bits<32>> {
            rows.iter()
                .map(|&r| bits_from_u64::<32>(u64::from(r)))
                .collect()
        };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            beat: Default::default(),
            data: Default::default(),
            first: Default::default(),
            first_state: Default::default(),
            last: Default::default(),
            last_zeros: Default::default(),
            crc: Default::default(),
            crc_valid: Default::default(),
            state: Default::default(),
            t_reg: Default::default(),
            z_reg: Default::default(),
            last_reg: Default::default(),
            crc_reg: Default::default(),
            valid_reg: Default::default(),
            state_mat: XorMatrix::new(rows32(gf2::state_rows(lanes))),
            data_mat: XorMatrix::new(
                gf2::data_rows(lanes)
                    .iter()
                    .map(|r| bits_from_bools::<DW>(r))
                    .collect(),
            ),
            unshift: Unshift::new(Self::STAGES),
            ones: Constant::new(0xFFFF_FFFFu64.to_bits()),
        }
    }
}

impl<const DW: usize> Default for CrcCore<DW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize> Logic for CrcCore<DW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, state, t_reg, z_reg, last_reg, crc_reg, valid_reg);
        // Stage 1: the data matrix over the whole beat.
        self.state_mat.x.next = self.state.q.val();
        if self.first.val() {
            self.state_mat.x.next = self.first_state.val();
        }
        self.data_mat.x.next = self.data.val();
        self.last_reg.d.next = false;
        if self.beat.val() {
            self.state.d.next = self.state_mat.y.val() ^ self.data_mat.y.val();
            if self.last.val() {
                self.t_reg.d.next = self.state_mat.y.val() ^ self.data_mat.y.val();
                self.z_reg.d.next = self.last_zeros.val();
                self.last_reg.d.next = true;
            }
        }
        // Stage 2: undo the zero fill after the last byte, one power of two per stage.
        self.unshift.x.next = self.t_reg.q.val();
        self.unshift.z.next = self.z_reg.q.val();
        self.crc_reg.d.next = self.unshift.y.val() ^ self.ones.val();
        self.valid_reg.d.next = self.last_reg.q.val();
        if self.rst.val() {
            self.last_reg.d.next = false;
            self.valid_reg.d.next = false;
        }
        self.crc.next = self.crc_reg.q.val();
        self.crc_valid.next = self.valid_reg.q.val();
    }
}
