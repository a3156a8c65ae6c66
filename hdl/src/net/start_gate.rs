//! `StartGate`: makes a frame stream continuous. A frame leaves only when `START` of its
//! beats, or all of it, are here; from then on, as long as the input's pauses inside the frame
//! total fewer than `START` cycles, its beats leave one per clock while `m_axis_tready` holds.
//! A PHY that cannot wait inside a frame (XGMII, a hard MAC's packet interface) needs that.
//!
//! In `MacTx` nothing upstream pauses inside a frame any more: the queues are store and
//! forward, and the FCS writer, which used to wait one or two cycles for the CRC tap before a
//! frame's last beat, has two skids of lead (see `mac_tx.rs`). The gate stays as the
//! guarantee: a start threshold of two beats absorbs a one-cycle pause anywhere inside a
//! frame, for three cycles of latency (the second beat's arrival, the FIFO's register, the
//! output skid). It was four beats and five cycles while the FCS writer still paused.
//!
//! Ports: `s_axis_*` in, `m_axis_*` out, through a `Skid`: every output, `s_axis_tready`
//! included, comes from registers. Any `tkeep` passes unchanged.
//!
//! How: an eight-entry register FIFO with counts of its beats (`n`) and of the last beats in
//! it (`lasts`). The head may go to the skid while a frame is open, or when `n >= START`, or
//! when a last beat is inside (then the head frame is whole here). It takes a beat while
//! `n < 7`. The skid passes a beat a clock while its reader is ready, so the gate's promise
//! holds at `m_axis`, one cycle later.

use crate::host::k;
use crate::prelude::*;
use crate::stream::Skid;

/// Beats held before a frame starts.
pub const START: u64 = 2;
const DEPTH: usize = 8;

#[derive(LogicBlock)]
pub struct StartGate<const DW: usize, const KW: usize> {
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
    e_data: Vec<DFF<Bits<DW>>>,
    e_keep: Vec<DFF<Bits<KW>>>,
    e_last: Vec<DFF<Bit>>,
    idx: Vec<Constant<Bits<3>>>,
    wp: DFF<Bits<3>>,
    rp: DFF<Bits<3>>,
    n: DFF<Bits<4>>,
    lasts: DFF<Bits<4>>,
    open: DFF<Bit>,
    start: Constant<Bits<4>>,
    room: Constant<Bits<4>>,
    one: Constant<Bits<4>>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    valid: Signal<Local, Bit>,
    h_last: Signal<Local, Bit>,
}

impl<const DW: usize, const KW: usize> StartGate<DW, KW> {
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
            e_data: (0..DEPTH).map(|_| Default::default()).collect(),
            e_keep: (0..DEPTH).map(|_| Default::default()).collect(),
            e_last: (0..DEPTH).map(|_| Default::default()).collect(),
            idx: (0..DEPTH).map(|i| k(i as u64)).collect(),
            wp: Default::default(),
            rp: Default::default(),
            n: Default::default(),
            lasts: Default::default(),
            open: Default::default(),
            start: k(START),
            room: k(DEPTH as u64 - 1),
            one: k(1),
            push: Default::default(),
            pop: Default::default(),
            valid: Default::default(),
            h_last: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for StartGate<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for StartGate<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, wp, rp, n, lasts, open);
        for i in 0..self.e_data.len() {
            self.e_data[i].clock.next = self.clk.val();
            self.e_keep[i].clock.next = self.clk.val();
            self.e_last[i].clock.next = self.clk.val();
            self.e_data[i].d.next = self.e_data[i].q.val();
            self.e_keep[i].d.next = self.e_keep[i].q.val();
            self.e_last[i].d.next = self.e_last[i].q.val();
        }
        // The head entry.
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.out.s_axis_tdata.next = self.e_data[0].q.val();
        self.out.s_axis_tkeep.next = self.e_keep[0].q.val();
        self.h_last.next = self.e_last[0].q.val();
        for i in 0..self.e_data.len() {
            if self.rp.q.val() == self.idx[i].val() {
                self.out.s_axis_tdata.next = self.e_data[i].q.val();
                self.out.s_axis_tkeep.next = self.e_keep[i].q.val();
                self.h_last.next = self.e_last[i].q.val();
            }
        }
        self.out.s_axis_tlast.next = self.h_last.val();
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();
        self.valid.next = (self.n.q.val() >= self.one.val())
            & (self.open.q.val()
                | (self.n.q.val() >= self.start.val())
                | (self.lasts.q.val() >= self.one.val()));
        self.out.s_axis_tvalid.next = self.valid.val();
        self.s_axis_tready.next = self.n.q.val() < self.room.val();
        self.push.next = self.s_axis_tvalid.val() & (self.n.q.val() < self.room.val());
        self.pop.next = self.valid.val() & self.out.s_axis_tready.val();
        if self.push.val() {
            for i in 0..self.e_data.len() {
                if self.wp.q.val() == self.idx[i].val() {
                    self.e_data[i].d.next = self.s_axis_tdata.val();
                    self.e_keep[i].d.next = self.s_axis_tkeep.val();
                    self.e_last[i].d.next = self.s_axis_tlast.val();
                }
            }
            self.wp.d.next = self.wp.q.val() + bits::<3>(1);
        }
        if self.pop.val() {
            self.rp.d.next = self.rp.q.val() + bits::<3>(1);
            self.open.d.next = !self.h_last.val();
        }
        if self.push.val() & !self.pop.val() {
            self.n.d.next = self.n.q.val() + bits::<4>(1);
        }
        if !self.push.val() & self.pop.val() {
            self.n.d.next = self.n.q.val() - bits::<4>(1);
        }
        if (self.push.val() & self.s_axis_tlast.val()) & !(self.pop.val() & self.h_last.val()) {
            self.lasts.d.next = self.lasts.q.val() + bits::<4>(1);
        }
        if !(self.push.val() & self.s_axis_tlast.val()) & (self.pop.val() & self.h_last.val()) {
            self.lasts.d.next = self.lasts.q.val() - bits::<4>(1);
        }
        if self.rst.val() {
            self.wp.d.next = bits::<3>(0);
            self.rp.d.next = bits::<3>(0);
            self.n.d.next = bits::<4>(0);
            self.lasts.d.next = bits::<4>(0);
            self.open.d.next = false;
        }
    }
}
