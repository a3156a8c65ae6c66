//! `Pad`: Ethernet padding. A frame shorter than `ETH_MIN_FRAME_NO_FCS` (60) bytes leaves
//! with zero bytes added up to 60, so that with its FCS it is the 64-byte minimum (IEEE 802.3
//! 4.2.3.3). Longer frames pass unchanged; bytes past `tkeep` on a last beat leave as zeros.
//!
//! Ports: `s_axis_*` in, `m_axis_*` out (through a `Skid`; `s_axis_tready` depends on
//! registers only). One beat per clock; a frame that needs more beats takes them.

use crate::host::k;
use crate::prelude::*;
use crate::stream::{counts, data_of_count, keep_of_count, ones, Skid};
use ferroce_spec::headers::ETH_MIN_FRAME_NO_FCS;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum PadState {
    Pass,
    Fill,
}

#[derive(LogicBlock)]
pub struct Pad<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    out: Skid<DW, KW>,
    state: DFF<PadState>,
    count: DFF<Bits<16>>,
    rem: DFF<Bits<16>>,
    take: Signal<Local, Bit>,
    n: Signal<Local, Bits<16>>,
    need: Signal<Local, Bits<16>>,
    rem_next: Signal<Local, Bits<16>>,
    keep_need: Signal<Local, Bits<KW>>,
    keep_rem: Signal<Local, Bits<KW>>,
    masked: Signal<Local, Bits<DW>>,
    keepc: Vec<Constant<Bits<KW>>>,
    dmask: Vec<Constant<Bits<DW>>>,
    nc: Vec<Constant<Bits<16>>>,
    kw: Constant<Bits<16>>,
    min: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
}

impl<const DW: usize, const KW: usize> Pad<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            out: Skid::new(),
            state: Default::default(),
            count: Default::default(),
            rem: Default::default(),
            take: Default::default(),
            n: Default::default(),
            need: Default::default(),
            rem_next: Default::default(),
            keep_need: Default::default(),
            keep_rem: Default::default(),
            masked: Default::default(),
            keepc: keep_of_count::<KW>(),
            dmask: data_of_count::<DW>(),
            nc: counts(KW),
            kw: k(KW as u64),
            min: k(ETH_MIN_FRAME_NO_FCS as u64),
            full_keep: ones::<KW>(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Pad<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Pad<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, state, count, rem);
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();

        self.s_axis_tready.next =
            (self.state.q.val() == PadState::Pass) & self.out.s_axis_tready.val();
        self.take.next = self.s_axis_tready.val() & self.s_axis_tvalid.val();
        self.n.next = self.kw.val();
        if self.s_axis_tlast.val() {
            self.n.next = bits::<16>(0);
            for i in 0..(KW + 1) {
                if self.s_axis_tkeep.val() == self.keepc[i].val() {
                    self.n.next = self.nc[i].val();
                }
            }
        }
        self.masked.next = self.s_axis_tdata.val();
        for i in 0..(KW + 1) {
            if self.n.val() == self.nc[i].val() {
                self.masked.next = self.s_axis_tdata.val() & self.dmask[i].val();
            }
        }
        // Bytes still owed to reach the minimum, counted from this beat's first lane.
        self.need.next = bits::<16>(0);
        if self.count.q.val() < self.min.val() {
            self.need.next = self.min.val() - self.count.q.val();
        }
        self.rem_next.next = bits::<16>(0);
        if self.need.val() > self.kw.val() {
            self.rem_next.next = self.need.val() - self.kw.val();
        }
        self.keep_need.next = self.full_keep.val();
        self.keep_rem.next = self.full_keep.val();
        for i in 0..(KW + 1) {
            if self.need.val() == self.nc[i].val() {
                self.keep_need.next = self.keepc[i].val();
            }
            if self.rem.q.val() == self.nc[i].val() {
                self.keep_rem.next = self.keepc[i].val();
            }
        }

        self.out.s_axis_tvalid.next = false;
        self.out.s_axis_tdata.next = self.masked.val();
        self.out.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.out.s_axis_tlast.next = self.s_axis_tlast.val();
        match self.state.q.val() {
            PadState::Pass => {
                if self.take.val() {
                    self.out.s_axis_tvalid.next = true;
                    if self.count.q.val() < self.min.val() {
                        self.count.d.next = self.count.q.val() + self.kw.val();
                    }
                    if self.s_axis_tlast.val() {
                        self.count.d.next = bits::<16>(0);
                        if self.n.val() < self.need.val() {
                            self.out.s_axis_tkeep.next = self.keep_need.val();
                            if self.need.val() > self.kw.val() {
                                self.out.s_axis_tkeep.next = self.full_keep.val();
                                self.out.s_axis_tlast.next = false;
                                self.rem.d.next = self.rem_next.val();
                                self.state.d.next = PadState::Fill;
                            }
                        }
                    }
                }
            }
            PadState::Fill => {
                if self.out.s_axis_tready.val() {
                    self.out.s_axis_tvalid.next = true;
                    self.out.s_axis_tdata.next = bits::<DW>(0);
                    self.out.s_axis_tkeep.next = self.keep_rem.val();
                    self.out.s_axis_tlast.next = false;
                    if self.rem.q.val() > self.kw.val() {
                        self.rem.d.next = self.rem.q.val() - self.kw.val();
                    } else {
                        self.out.s_axis_tkeep.next = self.keep_rem.val();
                        self.out.s_axis_tlast.next = true;
                        self.state.d.next = PadState::Pass;
                    }
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = PadState::Pass;
            self.count.d.next = bits::<16>(0);
        }
    }
}
