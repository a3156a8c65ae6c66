//! `Crc32`: the IEEE 802.3 CRC-32 of every frame on an AXI-stream, observed as a tap.
//!
//! Ports:
//! - `s_axis_*`: the stream being observed. `tvalid` and `tready` are both inputs: the block
//!   never stalls the stream, it counts a beat when both are high (so it can sit beside a MAC's
//!   FCS insert or check without adding back-pressure). `tkeep` is all ones on every beat but
//!   the last, where it is contiguous from lane 0 (1 to KW lanes; 0 lanes is an empty beat).
//! - `m_crc_tdata`, `m_crc_tvalid`: the CRC of each frame (initial value and final XOR applied),
//!   a one-cycle pulse 2 cycles after the frame's last beat. No ready: a tap result is taken.
//! - `m_crc_tuser`: bit 0 is set when the frame broke the keep rule above; the CRC of such a
//!   frame treats the null lanes as zero bytes and is not the CRC of the valid bytes.
//!
//! Throughput: one beat per clock, back-to-back frames with no idle cycle between them.

use crate::crc::crc_core::{CrcCore, ZW};
use crate::prelude::*;
use crate::stream::{lane_masks, ones, zeros};
use crate::util::bits_from_u64;
use ferroce_spec::crc::INIT;

#[derive(LogicBlock)]
pub struct Crc32<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<In, Bit>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub m_crc_tdata: Signal<Out, Bits<32>>,
    pub m_crc_tvalid: Signal<Out, Bit>,
    pub m_crc_tuser: Signal<Out, Bit>,
    core: CrcCore<DW>,
    in_frame: DFF<Bit>,
    bad_acc: DFF<Bit>,
    bad_pipe: [DFF<Bit>; 2],
    beat: Signal<Local, Bit>,
    keep_p1: Signal<Local, Bits<KW>>,
    bad: Signal<Local, Bit>,
    data_mask: Signal<Local, Bits<DW>>,
    lane_mask: Vec<Constant<Bits<DW>>>,
    zeros_if_top: Vec<Constant<Bits<ZW>>>,
    all_lanes: Constant<Bits<ZW>>,
    init: Constant<Bits<32>>,
    one_kw: Constant<Bits<KW>>,
    full_keep: Constant<Bits<KW>>,
    zero_kw: Constant<Bits<KW>>,
    zero_dw: Constant<Bits<DW>>,
}

impl<const DW: usize, const KW: usize> Crc32<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            m_crc_tdata: Default::default(),
            m_crc_tvalid: Default::default(),
            m_crc_tuser: Default::default(),
            core: CrcCore::new(),
            in_frame: Default::default(),
            bad_acc: Default::default(),
            bad_pipe: Default::default(),
            beat: Default::default(),
            keep_p1: Default::default(),
            bad: Default::default(),
            data_mask: Default::default(),
            lane_mask: lane_masks::<DW>(),
            zeros_if_top: (0..KW)
                .map(|l| Constant::new(bits_from_u64::<ZW>((KW - 1 - l) as u64)))
                .collect(),
            all_lanes: Constant::new(bits_from_u64::<ZW>(KW as u64)),
            init: Constant::new(bits_from_u64::<32>(u64::from(INIT))),
            one_kw: Constant::new(bits_from_u64::<KW>(1)),
            full_keep: ones(),
            zero_kw: zeros(),
            zero_dw: zeros(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Crc32<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Crc32<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, in_frame, bad_acc);
        self.bad_pipe[0].clock.next = self.clk.val();
        self.bad_pipe[1].clock.next = self.clk.val();
        self.core.clk.next = self.clk.val();
        self.core.rst.next = self.rst.val();
        self.beat.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();
        // Null lanes become zero bytes; the core undoes the zero fill after the last byte.
        self.data_mask.next = self.zero_dw.val();
        self.core.last_zeros.next = self.all_lanes.val();
        for l in 0..KW {
            if self.s_axis_tkeep.val().get_bit(l) {
                self.data_mask.next = self.data_mask.val() | self.lane_mask[l].val();
                self.core.last_zeros.next = self.zeros_if_top[l].val();
            }
        }
        // Contiguous from lane 0 <=> keep & (keep + 1) == 0.
        self.keep_p1.next = self.s_axis_tkeep.val() + self.one_kw.val();
        self.bad.next = self.s_axis_tkeep.val() != self.full_keep.val();
        if self.s_axis_tlast.val() {
            self.bad.next = (self.s_axis_tkeep.val() & self.keep_p1.val()) != self.zero_kw.val();
        }
        self.core.beat.next = self.beat.val();
        self.core.data.next = self.s_axis_tdata.val() & self.data_mask.val();
        self.core.first.next = !self.in_frame.q.val();
        self.core.first_state.next = self.init.val();
        self.core.last.next = self.s_axis_tlast.val();
        if self.beat.val() {
            self.in_frame.d.next = !self.s_axis_tlast.val();
            self.bad_acc.d.next = self.bad_acc.q.val() | self.bad.val();
            if self.s_axis_tlast.val() {
                self.bad_acc.d.next = false;
            }
        }
        // The keep error travels beside the core's two pipeline stages.
        self.bad_pipe[0].d.next =
            self.beat.val() & self.s_axis_tlast.val() & (self.bad_acc.q.val() | self.bad.val());
        self.bad_pipe[1].d.next = self.bad_pipe[0].q.val();
        if self.rst.val() {
            self.in_frame.d.next = false;
            self.bad_acc.d.next = false;
        }
        self.m_crc_tdata.next = self.core.crc.val();
        self.m_crc_tvalid.next = self.core.crc_valid.val();
        self.m_crc_tuser.next = self.bad_pipe[1].q.val();
    }
}
