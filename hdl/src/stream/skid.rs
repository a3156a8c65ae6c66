//! `Skid`: a two-entry stream buffer whose outputs, `s_axis_tready` included, come from
//! registers only. It is how ferroce composes blocks: a parent kernel drives a child's inputs
//! and reads its outputs in one always block, so any combinational path from a child input to
//! a child output would be a loop to Verilator (UNOPTFLAT). A block that ends in a `Skid`, and
//! whose `s_*_tready` is a function of its registers and its skids' `s_axis_tready`, can be
//! wired to any other such block (docs/ARCHITECTURE.md, "Composition").
//!
//! One beat per clock in steady state: the second entry fills only while the consumer stalls.
//!
//! `tuser` travels with its beat (a frame marked bad on its last beat, `TxQueues`); a user of
//! a stream without one ties `s_axis_tuser` low and leaves `m_axis_tuser` unread.

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct Skid<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    h_valid: DFF<Bit>,
    h_data: DFF<Bits<DW>>,
    h_keep: DFF<Bits<KW>>,
    h_last: DFF<Bit>,
    h_user: DFF<Bit>,
    t_valid: DFF<Bit>,
    t_data: DFF<Bits<DW>>,
    t_keep: DFF<Bits<KW>>,
    t_last: DFF<Bit>,
    t_user: DFF<Bit>,
    pop: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
}

impl<const DW: usize, const KW: usize> Skid<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            h_valid: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            h_last: Default::default(),
            h_user: Default::default(),
            t_valid: Default::default(),
            t_data: Default::default(),
            t_keep: Default::default(),
            t_last: Default::default(),
            t_user: Default::default(),
            pop: Default::default(),
            push: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Skid<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Skid<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, h_valid, h_data, h_keep, h_last, h_user, t_valid, t_data, t_keep, t_last,
            t_user
        );
        self.s_axis_tready.next = !self.t_valid.q.val();
        self.m_axis_tdata.next = self.h_data.q.val();
        self.m_axis_tkeep.next = self.h_keep.q.val();
        self.m_axis_tlast.next = self.h_last.q.val();
        self.m_axis_tuser.next = self.h_user.q.val();
        self.m_axis_tvalid.next = self.h_valid.q.val();
        self.pop.next = self.h_valid.q.val() & self.m_axis_tready.val();
        self.push.next = self.s_axis_tvalid.val() & !self.t_valid.q.val();
        if self.pop.val() {
            if self.t_valid.q.val() {
                // The waiting beat moves up; no push can happen while it waits.
                self.h_data.d.next = self.t_data.q.val();
                self.h_keep.d.next = self.t_keep.q.val();
                self.h_last.d.next = self.t_last.q.val();
                self.h_user.d.next = self.t_user.q.val();
                self.t_valid.d.next = false;
            } else {
                self.h_valid.d.next = self.push.val();
                self.h_data.d.next = self.s_axis_tdata.val();
                self.h_keep.d.next = self.s_axis_tkeep.val();
                self.h_last.d.next = self.s_axis_tlast.val();
                self.h_user.d.next = self.s_axis_tuser.val();
            }
        } else if self.push.val() {
            if self.h_valid.q.val() {
                self.t_valid.d.next = true;
                self.t_data.d.next = self.s_axis_tdata.val();
                self.t_keep.d.next = self.s_axis_tkeep.val();
                self.t_last.d.next = self.s_axis_tlast.val();
                self.t_user.d.next = self.s_axis_tuser.val();
            } else {
                self.h_valid.d.next = true;
                self.h_data.d.next = self.s_axis_tdata.val();
                self.h_keep.d.next = self.s_axis_tkeep.val();
                self.h_last.d.next = self.s_axis_tlast.val();
                self.h_user.d.next = self.s_axis_tuser.val();
            }
        }
        if self.rst.val() {
            self.h_valid.d.next = false;
            self.t_valid.d.next = false;
        }
    }
}
