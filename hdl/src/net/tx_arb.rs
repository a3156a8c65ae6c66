//! `TxArb`: the two sources of packets in front of `TxFrame`. Source `a` (the requester) sends
//! a record and a payload packet per packet; source `b` (the responder's ACKs and NAKs) sends
//! records of packets without payload. Records are taken one at a time, alternating when both
//! wait; for a `b` record the arbiter makes the empty payload packet (one empty last beat)
//! that `TxFrame` expects.
//!
//! Ports: `s_a_meta_*`, `s_a_pay_*`, `s_b_meta_*` in; `m_meta_*`, `m_pay_*` out (`TxFrame`'s
//! `s_meta`, `s_pay`). `tuser` on an `a` packet's last beat (its bytes are bad: the frame is
//! dropped before the wire) goes out with it; `b`'s empty beats have it low.
//!
//! ```text
//!  s_a_meta --\                    /--> order FIFO (a or b, per record)
//!              >-- grant (a reg) --+--> meta FIFO --> m_meta
//!  s_b_meta --/
//!  s_a_pay --------------------------> (head of order: a: the packet; b: one empty beat)
//!                                       --> Skid --> m_pay
//! ```
//!
//! The grant is a register: it turns to the other source after a record when the other waits,
//! or when only the other waits (one idle cycle). Records leave through a FIFO and payload
//! beats through a `Skid`, and every `s_*_tready` depends on registers only: the block
//! composes (docs/ARCHITECTURE.md, "Composition").

use crate::prelude::*;
use crate::stream::{Fifo, Skid};
use ferroce_spec::meta::TX_META;

const META_W: usize = TX_META.len * 8;

#[derive(LogicBlock)]
pub struct TxArb<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_a_meta_tdata: Signal<In, Bits<META_W>>,
    pub s_a_meta_tvalid: Signal<In, Bit>,
    pub s_a_meta_tready: Signal<Out, Bit>,
    pub s_a_pay_tdata: Signal<In, Bits<DW>>,
    pub s_a_pay_tkeep: Signal<In, Bits<KW>>,
    pub s_a_pay_tlast: Signal<In, Bit>,
    pub s_a_pay_tuser: Signal<In, Bit>,
    pub s_a_pay_tvalid: Signal<In, Bit>,
    pub s_a_pay_tready: Signal<Out, Bit>,
    pub s_b_meta_tdata: Signal<In, Bits<META_W>>,
    pub s_b_meta_tvalid: Signal<In, Bit>,
    pub s_b_meta_tready: Signal<Out, Bit>,
    pub m_meta_tdata: Signal<Out, Bits<META_W>>,
    pub m_meta_tvalid: Signal<Out, Bit>,
    pub m_meta_tready: Signal<In, Bit>,
    pub m_pay_tdata: Signal<Out, Bits<DW>>,
    pub m_pay_tkeep: Signal<Out, Bits<KW>>,
    pub m_pay_tlast: Signal<Out, Bit>,
    pub m_pay_tuser: Signal<Out, Bit>,
    pub m_pay_tvalid: Signal<Out, Bit>,
    pub m_pay_tready: Signal<In, Bit>,
    grant_b: DFF<Bit>,
    meta: Fifo<META_W, 1, 2>,
    order: Fifo<1, 2, 3>,
    pay: Skid<DW, KW>,
    take_a: Signal<Local, Bit>,
    take_b: Signal<Local, Bit>,
    head_b: Signal<Local, Bit>,
}

impl<const DW: usize, const KW: usize> TxArb<DW, KW> {
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_a_meta_tdata: Default::default(),
            s_a_meta_tvalid: Default::default(),
            s_a_meta_tready: Default::default(),
            s_a_pay_tdata: Default::default(),
            s_a_pay_tkeep: Default::default(),
            s_a_pay_tlast: Default::default(),
            s_a_pay_tuser: Default::default(),
            s_a_pay_tvalid: Default::default(),
            s_a_pay_tready: Default::default(),
            s_b_meta_tdata: Default::default(),
            s_b_meta_tvalid: Default::default(),
            s_b_meta_tready: Default::default(),
            m_meta_tdata: Default::default(),
            m_meta_tvalid: Default::default(),
            m_meta_tready: Default::default(),
            m_pay_tdata: Default::default(),
            m_pay_tkeep: Default::default(),
            m_pay_tlast: Default::default(),
            m_pay_tuser: Default::default(),
            m_pay_tvalid: Default::default(),
            m_pay_tready: Default::default(),
            grant_b: Default::default(),
            meta: Fifo::new(),
            order: Fifo::new(),
            pay: Skid::new(),
            take_a: Default::default(),
            take_b: Default::default(),
            head_b: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for TxArb<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for TxArb<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, grant_b);
        self.meta.clk.next = self.clk.val();
        self.meta.rst.next = self.rst.val();
        self.order.clk.next = self.clk.val();
        self.order.rst.next = self.rst.val();
        self.pay.clk.next = self.clk.val();
        self.pay.rst.next = self.rst.val();

        // Records: the granted source into the record FIFO, its name into the order FIFO.
        self.s_a_meta_tready.next =
            !self.grant_b.q.val() & self.meta.s_tready.val() & self.order.s_tready.val();
        self.s_b_meta_tready.next =
            self.grant_b.q.val() & self.meta.s_tready.val() & self.order.s_tready.val();
        self.take_a.next = self.s_a_meta_tvalid.val()
            & !self.grant_b.q.val()
            & self.meta.s_tready.val()
            & self.order.s_tready.val();
        self.take_b.next = self.s_b_meta_tvalid.val()
            & self.grant_b.q.val()
            & self.meta.s_tready.val()
            & self.order.s_tready.val();
        self.meta.s_tdata.next = self.s_a_meta_tdata.val();
        if self.grant_b.q.val() {
            self.meta.s_tdata.next = self.s_b_meta_tdata.val();
        }
        self.meta.s_tvalid.next = self.take_a.val() | self.take_b.val();
        self.order.s_tdata.next = bits::<1>(0);
        if self.grant_b.q.val() {
            self.order.s_tdata.next = bits::<1>(1);
        }
        self.order.s_tvalid.next = self.take_a.val() | self.take_b.val();
        self.m_meta_tdata.next = self.meta.m_tdata.val();
        self.m_meta_tvalid.next = self.meta.m_tvalid.val();
        self.meta.m_tready.next = self.m_meta_tready.val();
        // The grant turns after a record when the other source waits, or at once when only
        // the other source waits.
        if self.grant_b.q.val() {
            if self.s_a_meta_tvalid.val() & (self.take_b.val() | !self.s_b_meta_tvalid.val()) {
                self.grant_b.d.next = false;
            }
        } else if self.s_b_meta_tvalid.val() & (self.take_a.val() | !self.s_a_meta_tvalid.val()) {
            self.grant_b.d.next = true;
        }

        // Payload packets in record order: `a`'s packet, or an empty last beat for `b`.
        self.head_b.next = self.order.m_tdata.val() == bits::<1>(1);
        self.pay.s_axis_tdata.next = self.s_a_pay_tdata.val();
        self.pay.s_axis_tkeep.next = self.s_a_pay_tkeep.val();
        self.pay.s_axis_tlast.next = self.s_a_pay_tlast.val();
        self.pay.s_axis_tuser.next = self.s_a_pay_tuser.val();
        self.pay.s_axis_tvalid.next = self.order.m_tvalid.val() & self.s_a_pay_tvalid.val();
        self.s_a_pay_tready.next = self.order.m_tvalid.val()
            & (self.order.m_tdata.val() == bits::<1>(0))
            & self.pay.s_axis_tready.val();
        self.order.m_tready.next =
            self.s_a_pay_tvalid.val() & self.s_a_pay_tlast.val() & self.pay.s_axis_tready.val();
        if self.head_b.val() {
            self.pay.s_axis_tdata.next = bits::<DW>(0);
            self.pay.s_axis_tkeep.next = bits::<KW>(0);
            self.pay.s_axis_tlast.next = true;
            self.pay.s_axis_tuser.next = false;
            self.pay.s_axis_tvalid.next = self.order.m_tvalid.val();
            self.order.m_tready.next = self.pay.s_axis_tready.val();
        }
        self.m_pay_tdata.next = self.pay.m_axis_tdata.val();
        self.m_pay_tkeep.next = self.pay.m_axis_tkeep.val();
        self.m_pay_tlast.next = self.pay.m_axis_tlast.val();
        self.m_pay_tuser.next = self.pay.m_axis_tuser.val();
        self.m_pay_tvalid.next = self.pay.m_axis_tvalid.val();
        self.pay.m_axis_tready.next = self.m_pay_tready.val();
        if self.rst.val() {
            self.grant_b.d.next = false;
        }
    }
}
