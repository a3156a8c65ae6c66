//! `JobPark`: one READ response job set aside between two of its packets, so that a long
//! response takes turns with the QPs that have work requests to send instead of holding the
//! requester until its last byte (a 2 GiB response would hold every local QP for 1.7 s at
//! 10 Gb/s). The requester parks the job it serves when it has sent its quantum, or has no
//! credit for the next packet, while a QP or a rewind waits; it takes the parked job back
//! before any new one from the responder.
//!
//! One slot is enough and keeps each QP's responses in order: a job is parked only by the
//! requester serving it, which takes a new job from the responder only when the slot is empty.
//! So at most one job is ever begun and not finished, and the jobs queued behind it are
//! all younger.
//!
//! The slot holds the job's record (`READ_JOB`) and where it had got to: the next response's
//! PSN, the bytes still to send and their address, whether its first packet has gone, and
//! whether it is cut (below).
//!
//! A duplicate READ (or atomic) coming in for the parked job's QP cuts the job as the
//! requester cuts the job in its hands: when the duplicate's PSN is not after the next
//! response's and is not the job's own first PSN, the peer has gone back past it, and the job
//! sends one more packet only (`READ_JOB.dup`; the requester's `cut`). This block applies the
//! rule to every duplicate from the cycle the job is parked to the cycle it is taken, both
//! included; the requester applies it from the cycle after.
//!
//! Ports:
//! - `s_park`, `s_{job,psn,rem,va,first,cut}`: park a job (one cycle).
//! - `s_take`: the parked job is taken (the slot is free from the next cycle).
//! - `s_dup_valid`, `s_dup_{qpn,psn}`: a duplicate's job entering the requester's job queue
//!   (its `READ_JOB` fields).
//! - `m_valid`, `m_{job,psn,rem,va,first,cut}`: the slot, all registers. After a take the
//!   fields keep their values until the next park.
//!
//! Bad input: a park while the slot is full and not being taken. The requester never asks
//! for one (above); the slot keeps its job, so such a bug would lose the new job's rest,
//! never mix two jobs.

use crate::host::{field_at, k};
use crate::prelude::*;
use crate::rc::iface::JOB_W;
use ferroce_spec::meta::READ_JOB;

/// Half the PSN space: a PSN difference at or past it is negative.
const HALF: u64 = 1 << 23;

#[derive(LogicBlock)]
pub struct JobPark {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_park: Signal<In, Bit>,
    pub s_job: Signal<In, Bits<JOB_W>>,
    pub s_psn: Signal<In, Bits<24>>,
    pub s_rem: Signal<In, Bits<32>>,
    pub s_va: Signal<In, Bits<64>>,
    pub s_first: Signal<In, Bit>,
    pub s_cut: Signal<In, Bit>,
    pub s_take: Signal<In, Bit>,
    pub s_dup_valid: Signal<In, Bit>,
    pub s_dup_qpn: Signal<In, Bits<24>>,
    pub s_dup_psn: Signal<In, Bits<24>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_job: Signal<Out, Bits<JOB_W>>,
    pub m_psn: Signal<Out, Bits<24>>,
    pub m_rem: Signal<Out, Bits<32>>,
    pub m_va: Signal<Out, Bits<64>>,
    pub m_first: Signal<Out, Bit>,
    pub m_cut: Signal<Out, Bit>,
    v: DFF<Bit>,
    job: DFF<Bits<JOB_W>>,
    psn: DFF<Bits<24>>,
    rem: DFF<Bits<32>>,
    va: DFF<Bits<64>>,
    first: DFF<Bit>,
    cut: DFF<Bit>,
    // The slot as the duplicate rule sees it this cycle: a job parked now, else the one held.
    put: Signal<Local, Bit>,
    b_live: Signal<Local, Bit>,
    b_qpn: Signal<Local, Bits<24>>,
    b_psn0: Signal<Local, Bits<24>>,
    b_next: Signal<Local, Bits<24>>,
    b_cut: Signal<Local, Bit>,
    d_qpn: Signal<Local, Bits<24>>,
    d_psn: Signal<Local, Bits<24>>,
    hit: Signal<Local, Bit>,
    half: Constant<Bits<24>>,
    x_qpn: Constant<Bits<8>>,
    x_psn: Constant<Bits<8>>,
}

impl JobPark {
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_park: Default::default(),
            s_job: Default::default(),
            s_psn: Default::default(),
            s_rem: Default::default(),
            s_va: Default::default(),
            s_first: Default::default(),
            s_cut: Default::default(),
            s_take: Default::default(),
            s_dup_valid: Default::default(),
            s_dup_qpn: Default::default(),
            s_dup_psn: Default::default(),
            m_valid: Default::default(),
            m_job: Default::default(),
            m_psn: Default::default(),
            m_rem: Default::default(),
            m_va: Default::default(),
            m_first: Default::default(),
            m_cut: Default::default(),
            v: Default::default(),
            job: Default::default(),
            psn: Default::default(),
            rem: Default::default(),
            va: Default::default(),
            first: Default::default(),
            cut: Default::default(),
            put: Default::default(),
            b_live: Default::default(),
            b_qpn: Default::default(),
            b_psn0: Default::default(),
            b_next: Default::default(),
            b_cut: Default::default(),
            d_qpn: Default::default(),
            d_psn: Default::default(),
            hit: Default::default(),
            half: k(HALF),
            x_qpn: field_at(&READ_JOB, "qpn"),
            x_psn: field_at(&READ_JOB, "psn"),
        }
    }
}

impl Default for JobPark {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for JobPark {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, v, job, psn, rem, va, first, cut);
        self.m_valid.next = self.v.q.val();
        self.m_job.next = self.job.q.val();
        self.m_psn.next = self.psn.q.val();
        self.m_rem.next = self.rem.q.val();
        self.m_va.next = self.va.q.val();
        self.m_first.next = self.first.q.val();
        self.m_cut.next = self.cut.q.val();

        // A park fills a free slot (or one emptied this cycle); a full one keeps its job.
        self.put.next = self.s_park.val() & (!self.v.q.val() | self.s_take.val());
        if self.put.val() {
            self.job.d.next = self.s_job.val();
            self.psn.d.next = self.s_psn.val();
            self.rem.d.next = self.s_rem.val();
            self.va.d.next = self.s_va.val();
            self.first.d.next = self.s_first.val();
        }
        if self.s_take.val() {
            self.v.d.next = false;
        }
        if self.put.val() {
            self.v.d.next = true;
        }

        // The duplicate rule, on the job parked now or the one held (taken this cycle too).
        self.b_live.next = self.v.q.val();
        self.b_qpn.next = self.job.q.val().get_bits::<24>(self.x_qpn.val().index());
        self.b_psn0.next = self.job.q.val().get_bits::<24>(self.x_psn.val().index());
        self.b_next.next = self.psn.q.val();
        self.b_cut.next = self.cut.q.val();
        if self.put.val() {
            self.b_live.next = true;
            self.b_qpn.next = self.s_job.val().get_bits::<24>(self.x_qpn.val().index());
            self.b_psn0.next = self.s_job.val().get_bits::<24>(self.x_psn.val().index());
            self.b_next.next = self.s_psn.val();
            self.b_cut.next = self.s_cut.val();
        }
        self.d_qpn.next = self.s_dup_qpn.val();
        self.d_psn.next = self.s_dup_psn.val();
        self.hit.next = self.s_dup_valid.val()
            & self.b_live.val()
            & (self.d_qpn.val() == self.b_qpn.val())
            & ((self.b_next.val() - self.d_psn.val()) < self.half.val())
            & (self.d_psn.val() != self.b_psn0.val());
        if self.b_live.val() {
            self.cut.d.next = self.b_cut.val() | self.hit.val();
        }

        if self.rst.val() {
            self.v.d.next = false;
            self.cut.d.next = false;
        }
    }
}
