//! `QpFail`: one error state for the whole QP. Each RC engine finds its own errors (the
//! requester a local one: a WQE refused, a fetch or a payload read failed; the completer a
//! fatal NAK received, retries run out, a READ that failed to land; the responder a fatal NAK
//! it sent), and IBA (10.3.1, 9.9.3) has one QP state: whichever engine finds the error, the
//! QP is in Error for all of them. This block is where the engines' reports meet: it keeps a
//! bit per QP the NIC failed, which every engine reads (the requester sends nothing more, the
//! responder takes no more requests or READ responses, the completer flushes), and hands each
//! report to the engines that have work to do for it and did not make it: the completer
//! flushes the QP's outstanding send work requests, the responder its receive WQEs.
//!
//! A report for a QP already failed changes nothing (each engine's own work for its own
//! report is its own business). A QP table write that resets the QP (`init_sq` or `init_rq`)
//! clears its bit and any flush not yet handed over, the one on offer included; the engines
//! take none while BAR0 writes, and drop one whose bit they find clear. The host moving a QP
//! to ERR is not a report: each engine reads the table's writes itself.
//!
//! Ports:
//! - `s_{req,cpl,resp}_{valid,qpn}`: reports, a pulse each, any number in a cycle.
//! - `s_qpw_{en,index,data}`: BAR0's QP table write-through.
//! - `failed`: a bit per QP, a register; set the cycle after the report.
//! - `m_cpl_{valid,ready,qpn}`, `m_resp_{valid,ready,qpn}`: QPs to flush, for the completer
//!   (reports of the requester and the responder) and the responder (reports of the requester
//!   and the completer), each held until taken.
//! - `s_req_local`: with a requester's report, a local error (not a READ response it refused,
//!   which fails the QP all the same).
//! - `local_fails`: QPs the requester's local errors failed (counter).
//!
//! Each consumer has a bit per QP waiting to be handed over and a scan pointer that visits one
//! QP a cycle, so a report is handed over within one round (256 cycles, 1.6 us at 156.25 MHz)
//! of the consumer being ready, whatever the number of reports: nothing is ever dropped.
//!
//! ```text
//!  reports --> failed (per QP) --> every engine
//!          \-> pending (per consumer, per QP) --> [scan: pending at ptr?] --> m_cpl / m_resp
//! ```

use crate::host::bar0::{OBJ_A as QA, QP_W};
use crate::host::field_at;
use crate::prelude::*;
use ferroce_spec::queues::QP_CTX;

/// QPs: one bit each.
pub const NQ: usize = 1 << QA;

#[derive(LogicBlock)]
pub struct QpFail {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_qpn: Signal<In, Bits<QA>>,
    pub s_req_local: Signal<In, Bit>,
    pub s_cpl_valid: Signal<In, Bit>,
    pub s_cpl_qpn: Signal<In, Bits<QA>>,
    pub s_resp_valid: Signal<In, Bit>,
    pub s_resp_qpn: Signal<In, Bits<QA>>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<QP_W>>,
    pub failed: Signal<Out, Bits<NQ>>,
    pub m_cpl_valid: Signal<Out, Bit>,
    pub m_cpl_ready: Signal<In, Bit>,
    pub m_cpl_qpn: Signal<Out, Bits<QA>>,
    pub m_resp_valid: Signal<Out, Bit>,
    pub m_resp_ready: Signal<In, Bit>,
    pub m_resp_qpn: Signal<Out, Bits<QA>>,
    pub local_fails: Signal<Out, Bits<32>>,
    fail: DFF<Bits<NQ>>,
    p_cpl: DFF<Bits<NQ>>,
    p_resp: DFF<Bits<NQ>>,
    c_ptr: DFF<Bits<QA>>,
    c_v: DFF<Bit>,
    c_q: DFF<Bits<QA>>,
    r_ptr: DFF<Bits<QA>>,
    r_v: DFF<Bit>,
    r_q: DFF<Bits<QA>>,
    n_local: DFF<Bits<32>>,
    loc_new: DFF<Bit>,
    init_v: Signal<Local, Bit>,
    init_c: Signal<Local, Bit>,
    init_cp: Signal<Local, Bit>,
    init_r: Signal<Local, Bit>,
    init_rp: Signal<Local, Bit>,
    b_req: Signal<Local, Bits<NQ>>,
    b_cpl: Signal<Local, Bits<NQ>>,
    b_resp: Signal<Local, Bits<NQ>>,
    n_req: Signal<Local, Bits<NQ>>,
    n_cpl: Signal<Local, Bits<NQ>>,
    n_resp: Signal<Local, Bits<NQ>>,
    b_init: Signal<Local, Bits<NQ>>,
    c_take: Signal<Local, Bits<NQ>>,
    r_take: Signal<Local, Bits<NQ>>,
    x_init_sq: Constant<Bits<10>>,
    x_init_rq: Constant<Bits<10>>,
    one: Constant<Bits<NQ>>,
}

impl QpFail {
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_req_valid: Default::default(),
            s_req_qpn: Default::default(),
            s_req_local: Default::default(),
            s_cpl_valid: Default::default(),
            s_cpl_qpn: Default::default(),
            s_resp_valid: Default::default(),
            s_resp_qpn: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            failed: Default::default(),
            m_cpl_valid: Default::default(),
            m_cpl_ready: Default::default(),
            m_cpl_qpn: Default::default(),
            m_resp_valid: Default::default(),
            m_resp_ready: Default::default(),
            m_resp_qpn: Default::default(),
            local_fails: Default::default(),
            fail: Default::default(),
            p_cpl: Default::default(),
            p_resp: Default::default(),
            c_ptr: Default::default(),
            c_v: Default::default(),
            c_q: Default::default(),
            r_ptr: Default::default(),
            r_v: Default::default(),
            r_q: Default::default(),
            n_local: Default::default(),
            loc_new: Default::default(),
            init_v: Default::default(),
            init_c: Default::default(),
            init_cp: Default::default(),
            init_r: Default::default(),
            init_rp: Default::default(),
            b_req: Default::default(),
            b_cpl: Default::default(),
            b_resp: Default::default(),
            n_req: Default::default(),
            n_cpl: Default::default(),
            n_resp: Default::default(),
            b_init: Default::default(),
            c_take: Default::default(),
            r_take: Default::default(),
            x_init_sq: field_at(&QP_CTX, "init_sq"),
            x_init_rq: field_at(&QP_CTX, "init_rq"),
            one: crate::host::k(1),
        }
    }
}

impl Default for QpFail {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for QpFail {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, fail, p_cpl, p_resp, c_ptr, c_v, c_q, r_ptr, r_v, r_q, n_local, loc_new
        );
        self.failed.next = self.fail.q.val();
        self.m_cpl_valid.next = self.c_v.q.val();
        self.m_cpl_qpn.next = self.c_q.q.val();
        self.m_resp_valid.next = self.r_v.q.val();
        self.m_resp_qpn.next = self.r_q.q.val();
        self.local_fails.next = self.n_local.q.val();

        // The reports of this cycle, each a QP not failed yet.
        self.b_req.next = bits::<NQ>(0);
        if self.s_req_valid.val() {
            self.b_req.next = self.one.val() << self.s_req_qpn.val();
        }
        self.b_cpl.next = bits::<NQ>(0);
        if self.s_cpl_valid.val() {
            self.b_cpl.next = self.one.val() << self.s_cpl_qpn.val();
        }
        self.b_resp.next = bits::<NQ>(0);
        if self.s_resp_valid.val() {
            self.b_resp.next = self.one.val() << self.s_resp_qpn.val();
        }
        self.n_req.next = self.b_req.val() & !self.fail.q.val();
        self.n_cpl.next = self.b_cpl.val() & !self.fail.q.val();
        self.n_resp.next = self.b_resp.val() & !self.fail.q.val();
        // (The count a cycle later: the report's QP looked up, then the add.)
        self.loc_new.d.next = self.s_req_valid.val()
            & self.s_req_local.val()
            & !self.fail.q.val().get_bit(self.s_req_qpn.val().index());
        if self.loc_new.q.val() {
            self.n_local.d.next = self.n_local.q.val() + bits::<32>(1);
        }
        // A reset of the QP (a write with `init_sq` or `init_rq`) clears it.
        self.init_v.next = self.s_qpw_en.val()
            & ((self.s_qpw_data.val().get_bit(self.x_init_sq.val().index()))
                | (self.s_qpw_data.val().get_bit(self.x_init_rq.val().index())));
        self.b_init.next = bits::<NQ>(0);
        if self.init_v.val() {
            self.b_init.next = self.one.val() << self.s_qpw_index.val();
        }
        // (The scans compare the reset's QP number rather than pick from the bits.)
        self.init_c.next = self.init_v.val() & (self.s_qpw_index.val() == self.c_q.q.val());
        self.init_cp.next = self.init_v.val() & (self.s_qpw_index.val() == self.c_ptr.q.val());
        self.init_r.next = self.init_v.val() & (self.s_qpw_index.val() == self.r_q.q.val());
        self.init_rp.next = self.init_v.val() & (self.s_qpw_index.val() == self.r_ptr.q.val());

        // The completer's flushes: scan for a pending QP while none is held (one the reset
        // of this cycle clears is neither picked nor kept).
        self.c_take.next = bits::<NQ>(0);
        if self.c_v.q.val() & self.m_cpl_ready.val() {
            self.c_v.d.next = false;
            self.c_take.next = self.one.val() << self.c_q.q.val();
        }
        if self.init_c.val() {
            self.c_v.d.next = false;
        }
        if !self.c_v.q.val() {
            self.c_ptr.d.next = self.c_ptr.q.val() + bits::<QA>(1);
            if self.p_cpl.q.val().get_bit(self.c_ptr.q.val().index()) & !self.init_cp.val() {
                self.c_v.d.next = true;
                self.c_q.d.next = self.c_ptr.q.val();
            }
        }
        // The responder's, the same way.
        self.r_take.next = bits::<NQ>(0);
        if self.r_v.q.val() & self.m_resp_ready.val() {
            self.r_v.d.next = false;
            self.r_take.next = self.one.val() << self.r_q.q.val();
        }
        if self.init_r.val() {
            self.r_v.d.next = false;
        }
        if !self.r_v.q.val() {
            self.r_ptr.d.next = self.r_ptr.q.val() + bits::<QA>(1);
            if self.p_resp.q.val().get_bit(self.r_ptr.q.val().index()) & !self.init_rp.val() {
                self.r_v.d.next = true;
                self.r_q.d.next = self.r_ptr.q.val();
            }
        }

        self.fail.d.next =
            (self.fail.q.val() | self.b_req.val() | self.b_cpl.val() | self.b_resp.val())
                & !self.b_init.val();
        self.p_cpl.d.next =
            ((self.p_cpl.q.val() & !self.c_take.val()) | self.n_req.val() | self.n_resp.val())
                & !self.b_init.val();
        self.p_resp.d.next =
            ((self.p_resp.q.val() & !self.r_take.val()) | self.n_req.val() | self.n_cpl.val())
                & !self.b_init.val();

        if self.rst.val() {
            self.fail.d.next = bits::<NQ>(0);
            self.p_cpl.d.next = bits::<NQ>(0);
            self.p_resp.d.next = bits::<NQ>(0);
            self.c_v.d.next = false;
            self.r_v.d.next = false;
            self.c_ptr.d.next = bits::<QA>(0);
            self.r_ptr.d.next = bits::<QA>(0);
            self.n_local.d.next = bits::<32>(0);
            self.loc_new.d.next = false;
        }
    }
}
