//! `RecvQueue`: the receive queues. The responder asks it for a QP's next receive WQE when a
//! message that consumes one arrives (a SEND, a WRITE with immediate); it answers with the
//! WQE's `wr_id` and its scatter list checked, or that none is posted (the responder then
//! answers RNR NAK).
//!
//! Ports:
//! - `s_qpw_{en,index,data}`: BAR0's QP table write-through (640 bits: the receive queue's
//!   fields lie past bit 512). This block keeps each QP's `rq_base`, `rq_log_size`, `rq_cqn`
//!   and `pdn`; a write with `init_rq` also sets the QP's consumer index from `rq_ci`.
//! - `s_rdb_{en,qpn,pi}`: receive doorbells (`regs::DB_RQ_PI`): the QP's producer index, kept
//!   in a RAM (one per cycle, no handshake).
//! - `s_mrw_*`: BAR0's MR table write-through, for the key check.
//! - `s_req_{valid,ready,qpn}`: a request for QP `qpn`'s next receive WQE; one at a time.
//!   With `s_req_sq`, the request is for the send queue's WQE at index `s_req_idx` instead
//!   (an RDMA READ's, whose response lands in its SGEs): fetched and checked the same way
//!   (local write), nothing consumed. With `s_req_at`, the request is an atomic's read of the
//!   8 bytes at `s_req_addr` (the responder checked the rkey): answered with `m_ans_data`
//!   (the bytes as one little-endian value) and status 0, or GENERAL_ERR if the read failed;
//!   nothing fetched from a ring, nothing consumed.
//! - `m_ans_*`: the answer, held until `m_ans_ready`: `status` 0 (a WQE: `wr_id`, `nsge`, the
//!   SGEs' addresses and lengths, `len` their sum, `cqn` the QP's receive CQ), `ANS_NONE` (no
//!   WQE posted: nothing consumed), or a work completion status for a WQE that is consumed in
//!   error: LOC_PROT_ERR (an SGE's lkey does not name a region of the QP's PD with local
//!   write access that holds it), LOC_QP_OP_ERR (more than `MAX_SGE` SGEs), LOC_LEN_ERR (the
//!   SGEs add up to more than 2^31 bytes), GENERAL_ERR (the WQE fetch failed).
//! - `m_rd_{addr,len,tvalid,tready}` / `s_rd_*`: WQE reads (128 bytes) and their bytes, from a
//!   DMA read engine (first byte in lane 0, `tuser` on the last beat if the read failed).
//! - `s_peek_index` in, `m_peek_ci` out: a QP's consumer index, for BAR0's QUERY.
//! - counters: `bad_wqe` (WQEs consumed in error), `empty` (requests that found none).
//!
//! ```text
//!  s_req -> [Look: context, ci, pi] -> [Check: ci == pi? NONE] -> m_rd (the WQE at ci)
//!        -> [Fetch: 128 bytes shift in] -> [Prot: one key check per SGE, lengths added]
//!        -> [Ans: m_ans] -> [Wb: ci + 1 written back, unless NONE]
//! ```
//!
//! A WQE is consumed when it is answered (in error too): IBA consumes a receive WQE with the
//! message that lands in it, and its completion (success or error) is the responder's to
//! write. A host write with `init_rq` to the QP of the request in flight wins: the answer's
//! write-back is skipped.
//!
//! Clock: 161 MHz on ECP5 (`ferroce pnr`), held to 156.25 by the timing gate. One request
//! takes about 25 cycles plus the fetch's latency; the responder asks once per message that
//! consumes a receive WQE.

use crate::host::{field_at, k};
use crate::prelude::*;
use crate::rc::KeyCheck;
use ferroce_spec::layout::Layout;
use ferroce_spec::queues::{
    ACCESS_LOCAL_WRITE, MAX_MSG_LEN, MAX_SGE, QP_CTX, RECV_WQE, RECV_WQE_LEN, SGE, SGE_LEN,
    WC_GENERAL_ERR, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR, WC_LOC_QP_OP_ERR, WQE_SGE_AT,
};

/// QP table address width (256 QPs).
pub const QA: usize = 8;
/// QP context bits of the write-through.
pub const QPW_W: usize = 640;
/// MR context bits of the write-through.
pub const MR_W: usize = 256;
/// Bits of a receive WQE.
const RWQE_W: usize = RECV_WQE_LEN * 8;
/// This block's copy of a QP's fields: rq_base 0/64, rq_log_size 64/5, rq_cqn 72/16,
/// pdn 88/16, sq_base 104/64, sq_log_size 168/5.
const RQC_W: usize = 173;
/// The answer's SGEs: address 0/64, length 64/32, per SGE.
pub const ANS_SGE_W: usize = 96;
/// The answer's SGE list.
pub const ANS_W: usize = ANS_SGE_W * MAX_SGE;
/// `m_ans_status` when no WQE is posted.
pub const ANS_NONE: u32 = 0xFF;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum RqState {
    Idle,
    Look,
    Addr,
    Check,
    Fetch,
    Prot,
    Ans,
    Wb,
}

fn at10(l: &Layout, name: &str) -> Constant<Bits<10>> {
    field_at(l, name)
}

#[derive(LogicBlock)]
pub struct RecvQueue<const DW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<QPW_W>>,
    pub s_rdb_en: Signal<In, Bit>,
    pub s_rdb_qpn: Signal<In, Bits<24>>,
    pub s_rdb_pi: Signal<In, Bits<16>>,
    pub s_mrw_en: Signal<In, Bit>,
    pub s_mrw_index: Signal<In, Bits<QA>>,
    pub s_mrw_data: Signal<In, Bits<MR_W>>,
    pub s_req_valid: Signal<In, Bit>,
    pub s_req_ready: Signal<Out, Bit>,
    pub s_req_qpn: Signal<In, Bits<QA>>,
    pub s_req_sq: Signal<In, Bit>,
    pub s_req_idx: Signal<In, Bits<16>>,
    pub s_req_at: Signal<In, Bit>,
    pub s_req_addr: Signal<In, Bits<64>>,
    pub m_ans_data: Signal<Out, Bits<64>>,
    pub m_ans_valid: Signal<Out, Bit>,
    pub m_ans_ready: Signal<In, Bit>,
    pub m_ans_status: Signal<Out, Bits<8>>,
    pub m_ans_wrid: Signal<Out, Bits<64>>,
    pub m_ans_nsge: Signal<Out, Bits<3>>,
    pub m_ans_sges: Signal<Out, Bits<ANS_W>>,
    pub m_ans_len: Signal<Out, Bits<32>>,
    pub m_ans_cqn: Signal<Out, Bits<16>>,
    pub m_rd_addr: Signal<Out, Bits<64>>,
    pub m_rd_len: Signal<Out, Bits<13>>,
    pub m_rd_tvalid: Signal<Out, Bit>,
    pub m_rd_tready: Signal<In, Bit>,
    pub s_rd_tdata: Signal<In, Bits<DW>>,
    pub s_rd_tlast: Signal<In, Bit>,
    pub s_rd_tuser: Signal<In, Bit>,
    pub s_rd_tvalid: Signal<In, Bit>,
    pub s_rd_tready: Signal<Out, Bit>,
    pub s_peek_index: Signal<In, Bits<QA>>,
    pub m_peek_ci: Signal<Out, Bits<16>>,
    pub bad_wqe: Signal<Out, Bits<32>>,
    pub empty: Signal<Out, Bits<32>>,
    rqc_ram: RAM<Bits<RQC_W>, QA>,
    ci_ram: RAM<Bits<16>, QA>,
    ci_peek: RAM<Bits<16>, QA>,
    pi_ram: RAM<Bits<16>, QA>,
    keys: KeyCheck,
    state: DFF<RqState>,
    qpn: DFF<Bits<QA>>,
    sqm: DFF<Bit>,
    atm: DFF<Bit>,
    at_addr: DFF<Bits<64>>,
    w_base: DFF<Bits<64>>,
    w_slot: DFF<Bits<16>>,
    idx: DFF<Bits<16>>,
    s_base: Signal<Local, Bits<64>>,
    s_log: Signal<Local, Bits<5>>,
    s_slot: Signal<Local, Bits<16>>,
    x_sbase: Constant<Bits<10>>,
    x_slog: Constant<Bits<10>>,
    dirty: DFF<Bit>,
    rqc: DFF<Bits<RQC_W>>,
    ci: DFF<Bits<16>>,
    pi: DFF<Bits<16>>,
    wqe: DFF<Bits<RWQE_W>>,
    have: DFF<Bit>,
    fail: DFF<Bit>,
    kq: DFF<Bits<3>>,
    ka: DFF<Bits<3>>,
    kbad: DFF<Bit>,
    tot: DFF<Bits<40>>,
    rd_addr: DFF<Bits<64>>,
    rd_valid: DFF<Bit>,
    ans_valid: DFF<Bit>,
    ans_status: DFF<Bits<8>>,
    n_bad: DFF<Bits<32>>,
    n_empty: DFF<Bits<32>>,
    // Locals.
    rqc_w: Signal<Local, Bits<RQC_W>>,
    qpw_init: Signal<Local, Bit>,
    c_base: Signal<Local, Bits<64>>,
    c_log: Signal<Local, Bits<5>>,
    c_cqn: Signal<Local, Bits<16>>,
    c_pdn: Signal<Local, Bits<16>>,
    slot: Signal<Local, Bits<16>>,
    w_nsge: Signal<Local, Bits<8>>,
    k_more: Signal<Local, Bit>,
    q_addr: Signal<Local, Bits<64>>,
    q_len: Signal<Local, Bits<32>>,
    q_lkey: Signal<Local, Bits<32>>,
    sges: Signal<Local, Bits<ANS_W>>,
    e_addr: Signal<Local, Bits<64>>,
    e_len: Signal<Local, Bits<32>>,
    ci_wen: Signal<Local, Bit>,
    ci_waddr: Signal<Local, Bits<QA>>,
    ci_wdata: Signal<Local, Bits<16>>,
    // Constants.
    x_base: Constant<Bits<10>>,
    x_log: Constant<Bits<10>>,
    x_cqn: Constant<Bits<10>>,
    x_pdn: Constant<Bits<10>>,
    x_ci: Constant<Bits<10>>,
    x_init: Constant<Bits<10>>,
    w_x_nsge: Constant<Bits<10>>,
    w_x_wrid: Constant<Bits<10>>,
    sg_x_addr: Vec<Constant<Bits<10>>>,
    sg_x_len: Vec<Constant<Bits<10>>>,
    sg_x_lkey: Vec<Constant<Bits<10>>>,
    a_addr: Vec<Constant<Bits<9>>>,
    a_len: Vec<Constant<Bits<9>>>,
    ix: Vec<Constant<Bits<3>>>,
    dw_step: Constant<Bits<11>>,
    wqe_top: Constant<Bits<11>>,
    data_at: Constant<Bits<10>>,
    wqe_len: Constant<Bits<13>>,
    wqe_sh: Constant<Bits<5>>,
    max_sge: Constant<Bits<8>>,
    max_len: Constant<Bits<40>>,
    need: Constant<Bits<8>>,
    st_none: Constant<Bits<8>>,
    st_prot: Constant<Bits<8>>,
    st_op: Constant<Bits<8>>,
    st_len: Constant<Bits<8>>,
    st_dma: Constant<Bits<8>>,
}

impl<const DW: usize> RecvQueue<DW> {
    pub fn new() -> Self {
        assert!(
            DW <= RWQE_W && RWQE_W.is_multiple_of(DW),
            "a receive WQE is a whole number of beats"
        );
        assert_eq!(RWQE_W, 1 << 10, "receive WQE bit positions are 10 bits");
        assert!(QP_CTX.fields.iter().all(|f| f.bit + f.width <= QPW_W));
        const { assert!(MAX_SGE < 8, "SGE indices are 3 bits") };
        let sge_at = |i: usize, name: &str| -> Constant<Bits<10>> {
            let f = SGE.find(name).expect("an SGE field");
            k(((WQE_SGE_AT + i * SGE_LEN) * 8 + f.bit) as u64)
        };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            s_rdb_en: Default::default(),
            s_rdb_qpn: Default::default(),
            s_rdb_pi: Default::default(),
            s_mrw_en: Default::default(),
            s_mrw_index: Default::default(),
            s_mrw_data: Default::default(),
            s_req_valid: Default::default(),
            s_req_ready: Default::default(),
            s_req_qpn: Default::default(),
            s_req_sq: Default::default(),
            s_req_idx: Default::default(),
            sqm: Default::default(),
            atm: Default::default(),
            at_addr: Default::default(),
            s_req_at: Default::default(),
            s_req_addr: Default::default(),
            m_ans_data: Default::default(),
            w_base: Default::default(),
            w_slot: Default::default(),
            idx: Default::default(),
            s_base: Default::default(),
            s_log: Default::default(),
            s_slot: Default::default(),
            x_sbase: at10(&QP_CTX, "sq_base"),
            x_slog: at10(&QP_CTX, "sq_log_size"),
            m_ans_valid: Default::default(),
            m_ans_ready: Default::default(),
            m_ans_status: Default::default(),
            m_ans_wrid: Default::default(),
            m_ans_nsge: Default::default(),
            m_ans_sges: Default::default(),
            m_ans_len: Default::default(),
            m_ans_cqn: Default::default(),
            m_rd_addr: Default::default(),
            m_rd_len: Default::default(),
            m_rd_tvalid: Default::default(),
            m_rd_tready: Default::default(),
            s_rd_tdata: Default::default(),
            s_rd_tlast: Default::default(),
            s_rd_tuser: Default::default(),
            s_rd_tvalid: Default::default(),
            s_rd_tready: Default::default(),
            s_peek_index: Default::default(),
            m_peek_ci: Default::default(),
            bad_wqe: Default::default(),
            empty: Default::default(),
            rqc_ram: RAM::default(),
            ci_ram: RAM::default(),
            ci_peek: RAM::default(),
            pi_ram: RAM::default(),
            keys: KeyCheck::new(),
            state: DFF::default(),
            qpn: Default::default(),
            dirty: Default::default(),
            rqc: Default::default(),
            ci: Default::default(),
            pi: Default::default(),
            wqe: Default::default(),
            have: Default::default(),
            fail: Default::default(),
            kq: Default::default(),
            ka: Default::default(),
            kbad: Default::default(),
            tot: Default::default(),
            rd_addr: Default::default(),
            rd_valid: Default::default(),
            ans_valid: Default::default(),
            ans_status: Default::default(),
            n_bad: Default::default(),
            n_empty: Default::default(),
            rqc_w: Default::default(),
            qpw_init: Default::default(),
            c_base: Default::default(),
            c_log: Default::default(),
            c_cqn: Default::default(),
            c_pdn: Default::default(),
            slot: Default::default(),
            w_nsge: Default::default(),
            k_more: Default::default(),
            q_addr: Default::default(),
            q_len: Default::default(),
            q_lkey: Default::default(),
            sges: Default::default(),
            e_addr: Default::default(),
            e_len: Default::default(),
            ci_wen: Default::default(),
            ci_waddr: Default::default(),
            ci_wdata: Default::default(),
            x_base: at10(&QP_CTX, "rq_base"),
            x_log: at10(&QP_CTX, "rq_log_size"),
            x_cqn: at10(&QP_CTX, "rq_cqn"),
            x_pdn: at10(&QP_CTX, "pdn"),
            x_ci: at10(&QP_CTX, "rq_ci"),
            x_init: at10(&QP_CTX, "init_rq"),
            w_x_nsge: at10(&RECV_WQE, "num_sge"),
            w_x_wrid: at10(&RECV_WQE, "wr_id"),
            sg_x_addr: (0..MAX_SGE).map(|i| sge_at(i, "addr")).collect(),
            sg_x_len: (0..MAX_SGE).map(|i| sge_at(i, "length")).collect(),
            sg_x_lkey: (0..MAX_SGE).map(|i| sge_at(i, "lkey")).collect(),
            a_addr: (0..MAX_SGE).map(|i| k((ANS_SGE_W * i) as u64)).collect(),
            a_len: (0..MAX_SGE)
                .map(|i| k((ANS_SGE_W * i + 64) as u64))
                .collect(),
            ix: (0..MAX_SGE as u64).map(k).collect(),
            dw_step: k(DW as u64),
            wqe_top: k((RWQE_W - DW) as u64),
            data_at: k((RWQE_W - DW) as u64),
            wqe_len: k(RECV_WQE_LEN as u64),
            wqe_sh: k(RECV_WQE_LEN.trailing_zeros().into()),
            max_sge: k(MAX_SGE as u64),
            max_len: k(MAX_MSG_LEN.into()),
            need: k(ACCESS_LOCAL_WRITE.into()),
            st_none: k(ANS_NONE.into()),
            st_prot: k(WC_LOC_PROT_ERR.into()),
            st_op: k(WC_LOC_QP_OP_ERR.into()),
            st_len: k(WC_LOC_LEN_ERR.into()),
            st_dma: k(WC_GENERAL_ERR.into()),
        }
    }
}

impl<const DW: usize> Default for RecvQueue<DW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize> Logic for RecvQueue<DW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, state, qpn, sqm, atm, at_addr, w_base, w_slot, idx, dirty, rqc, ci, pi, wqe,
            have, fail, kq, ka, kbad, tot, rd_addr, rd_valid, ans_valid, ans_status, n_bad,
            n_empty
        );
        self.rqc_ram.read_clock.next = self.clk.val();
        self.rqc_ram.write_clock.next = self.clk.val();
        self.ci_ram.read_clock.next = self.clk.val();
        self.ci_ram.write_clock.next = self.clk.val();
        self.ci_peek.read_clock.next = self.clk.val();
        self.ci_peek.write_clock.next = self.clk.val();
        self.pi_ram.read_clock.next = self.clk.val();
        self.pi_ram.write_clock.next = self.clk.val();
        self.keys.clk.next = self.clk.val();
        self.keys.rst.next = self.rst.val();
        self.keys.s_mrw_en.next = self.s_mrw_en.val();
        self.keys.s_mrw_index.next = self.s_mrw_index.val();
        self.keys.s_mrw_data.next = self.s_mrw_data.val();

        // Outputs.
        self.m_rd_addr.next = self.rd_addr.q.val();
        self.m_rd_len.next = self.wqe_len.val();
        if self.atm.q.val() {
            self.m_rd_len.next = bits::<13>(8);
        }
        self.m_rd_tvalid.next = self.rd_valid.q.val();
        if self.m_rd_tready.val() {
            self.rd_valid.d.next = false;
        }
        self.s_rd_tready.next = true;
        self.s_req_ready.next = self.state.q.val() == RqState::Idle;
        self.m_ans_valid.next = self.ans_valid.q.val();
        self.m_ans_status.next = self.ans_status.q.val();
        self.m_ans_wrid.next = self.wqe.q.val().get_bits::<64>(self.w_x_wrid.val().index());
        // An atomic's 8 bytes: its one beat's first, shifted in at the top.
        self.m_ans_data.next = self.wqe.q.val().get_bits::<64>(self.data_at.val().index());
        self.w_nsge.next = self.wqe.q.val().get_bits::<8>(self.w_x_nsge.val().index());
        self.m_ans_nsge.next = self.w_nsge.val().get_bits::<3>(0);
        self.m_ans_len.next = self.tot.q.val().get_bits::<32>(0);
        self.c_base.next = self.rqc.q.val().get_bits::<64>(0);
        self.c_log.next = self.rqc.q.val().get_bits::<5>(64);
        self.s_base.next = self.rqc.q.val().get_bits::<64>(104);
        self.s_log.next = self.rqc.q.val().get_bits::<5>(168);
        self.c_cqn.next = self.rqc.q.val().get_bits::<16>(72);
        self.c_pdn.next = self.rqc.q.val().get_bits::<16>(88);
        self.m_ans_cqn.next = self.c_cqn.val();
        self.bad_wqe.next = self.n_bad.q.val();
        self.empty.next = self.n_empty.q.val();

        // The copies: the QP table's write-through, the doorbells, the write-back.
        self.rqc_w.next = bit_cast::<RQC_W, 64>(
            self.s_qpw_data
                .val()
                .get_bits::<64>(self.x_base.val().index()),
        ) | (bit_cast::<RQC_W, 5>(
            self.s_qpw_data
                .val()
                .get_bits::<5>(self.x_log.val().index()),
        ) << 64)
            | (bit_cast::<RQC_W, 16>(
                self.s_qpw_data
                    .val()
                    .get_bits::<16>(self.x_cqn.val().index()),
            ) << 72)
            | (bit_cast::<RQC_W, 16>(
                self.s_qpw_data
                    .val()
                    .get_bits::<16>(self.x_pdn.val().index()),
            ) << 88)
            | (bit_cast::<RQC_W, 64>(
                self.s_qpw_data
                    .val()
                    .get_bits::<64>(self.x_sbase.val().index()),
            ) << 104)
            | (bit_cast::<RQC_W, 5>(
                self.s_qpw_data
                    .val()
                    .get_bits::<5>(self.x_slog.val().index()),
            ) << 168);
        self.rqc_ram.write_address.next = self.s_qpw_index.val();
        self.rqc_ram.write_data.next = self.rqc_w.val();
        self.rqc_ram.write_enable.next = self.s_qpw_en.val();
        self.qpw_init.next = self
            .s_qpw_data
            .val()
            .get_bits::<1>(self.x_init.val().index())
            == bits::<1>(1);
        self.ci_waddr.next = self.s_qpw_index.val();
        self.ci_wdata.next = self
            .s_qpw_data
            .val()
            .get_bits::<16>(self.x_ci.val().index());
        self.ci_wen.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.pi_ram.write_address.next = self.s_rdb_qpn.val().get_bits::<QA>(0);
        self.pi_ram.write_data.next = self.s_rdb_pi.val();
        self.pi_ram.write_enable.next =
            self.s_rdb_en.val() & (self.s_rdb_qpn.val().get_bits::<16>(8) == bits::<16>(0));
        self.rqc_ram.read_address.next = self.qpn.q.val();
        self.ci_ram.read_address.next = self.qpn.q.val();
        self.pi_ram.read_address.next = self.qpn.q.val();
        if self.state.q.val() == RqState::Idle {
            self.rqc_ram.read_address.next = self.s_req_qpn.val();
            self.ci_ram.read_address.next = self.s_req_qpn.val();
            self.pi_ram.read_address.next = self.s_req_qpn.val();
        }
        if self.s_qpw_en.val() & self.qpw_init.val() & (self.s_qpw_index.val() == self.qpn.q.val())
        {
            self.dirty.d.next = true;
        }

        // SGE `kq` of the WQE for the key check; the answer's SGE list.
        self.q_addr.next = bits::<64>(0);
        self.q_len.next = bits::<32>(0);
        self.q_lkey.next = bits::<32>(0);
        self.sges.next = bits::<ANS_W>(0);
        for i in 0..MAX_SGE {
            if self.kq.q.val() == self.ix[i].val() {
                self.q_addr.next = self
                    .wqe
                    .q
                    .val()
                    .get_bits::<64>(self.sg_x_addr[i].val().index());
                self.q_len.next = self
                    .wqe
                    .q
                    .val()
                    .get_bits::<32>(self.sg_x_len[i].val().index());
                self.q_lkey.next = self
                    .wqe
                    .q
                    .val()
                    .get_bits::<32>(self.sg_x_lkey[i].val().index());
            }
            self.e_addr.next = self
                .wqe
                .q
                .val()
                .get_bits::<64>(self.sg_x_addr[i].val().index());
            self.e_len.next = self
                .wqe
                .q
                .val()
                .get_bits::<32>(self.sg_x_len[i].val().index());
            self.sges.next = self.sges.val()
                | (bit_cast::<ANS_W, 64>(self.e_addr.val()) << self.a_addr[i].val())
                | (bit_cast::<ANS_W, 32>(self.e_len.val()) << self.a_len[i].val());
        }
        self.m_ans_sges.next = self.sges.val();
        self.keys.s_valid.next = false;
        self.keys.s_key.next = self.q_lkey.val();
        self.keys.s_pdn.next = self.c_pdn.val();
        self.keys.s_addr.next = self.q_addr.val();
        self.keys.s_len.next = self.q_len.val();
        self.keys.s_need.next = self.need.val();
        self.k_more.next = bit_cast::<8, 3>(self.kq.q.val()) < self.w_nsge.val();
        self.slot.next = self.ci.q.val() & ((bits::<16>(1) << self.c_log.val()) - bits::<16>(1));
        self.s_slot.next = self.idx.q.val() & ((bits::<16>(1) << self.s_log.val()) - bits::<16>(1));
        // The WQE's ring base and slot, registered for Check: the receive ring's at `ci`, or
        // (an RDMA READ's WQE) the send ring's at `idx`.
        self.w_base.d.next = self.c_base.val();
        self.w_slot.d.next = self.slot.val();
        if self.sqm.q.val() {
            self.w_base.d.next = self.s_base.val();
            self.w_slot.d.next = self.s_slot.val();
        }

        // WQE beats shift in from the top (constant shifts).
        if self.s_rd_tvalid.val() {
            self.wqe.d.next = (self.wqe.q.val() >> self.dw_step.val())
                | (bit_cast::<RWQE_W, DW>(self.s_rd_tdata.val()) << self.wqe_top.val());
            if self.s_rd_tlast.val() {
                self.have.d.next = true;
                self.fail.d.next = self.s_rd_tuser.val();
            }
        }

        match self.state.q.val() {
            RqState::Idle => {
                if self.s_req_valid.val() {
                    self.qpn.d.next = self.s_req_qpn.val();
                    self.sqm.d.next = self.s_req_sq.val();
                    self.atm.d.next = self.s_req_at.val();
                    self.at_addr.d.next = self.s_req_addr.val();
                    self.idx.d.next = self.s_req_idx.val();
                    self.dirty.d.next = self.s_qpw_en.val()
                        & self.qpw_init.val()
                        & (self.s_qpw_index.val() == self.s_req_qpn.val());
                    self.state.d.next = RqState::Look;
                }
            }
            RqState::Look => {
                self.rqc.d.next = self.rqc_ram.read_data.val();
                self.ci.d.next = self.ci_ram.read_data.val();
                self.pi.d.next = self.pi_ram.read_data.val();
                self.state.d.next = RqState::Addr;
            }
            RqState::Addr => {
                // The WQE's ring and slot, registered (the address add is Check's).
                self.state.d.next = RqState::Check;
            }
            RqState::Check => {
                if self.dirty.q.val() {
                    // The host reset the queue under the request: look again.
                    self.dirty.d.next = false;
                    self.state.d.next = RqState::Look;
                } else if self.atm.q.val() {
                    // An atomic's 8 bytes.
                    if !self.rd_valid.q.val() {
                        self.rd_addr.d.next = self.at_addr.q.val();
                        self.rd_valid.d.next = true;
                        self.have.d.next = false;
                        self.state.d.next = RqState::Fetch;
                    }
                } else if self.sqm.q.val() {
                    // A send WQE again (an RDMA READ's, for its response's SGEs).
                    if !self.rd_valid.q.val() {
                        self.rd_addr.d.next = self.w_base.q.val()
                            + (bit_cast::<64, 16>(self.w_slot.q.val()) << self.wqe_sh.val());
                        self.rd_valid.d.next = true;
                        self.have.d.next = false;
                        self.state.d.next = RqState::Fetch;
                    }
                } else if self.ci.q.val() == self.pi.q.val() {
                    self.n_empty.d.next = self.n_empty.q.val() + bits::<32>(1);
                    self.ans_status.d.next = self.st_none.val();
                    self.ans_valid.d.next = true;
                    self.wqe.d.next = bits::<RWQE_W>(0);
                    self.tot.d.next = bits::<40>(0);
                    self.state.d.next = RqState::Ans;
                } else if !self.rd_valid.q.val() {
                    self.rd_addr.d.next = self.w_base.q.val()
                        + (bit_cast::<64, 16>(self.w_slot.q.val()) << self.wqe_sh.val());
                    self.rd_valid.d.next = true;
                    self.have.d.next = false;
                    self.state.d.next = RqState::Fetch;
                }
            }
            RqState::Fetch => {
                if self.have.q.val() {
                    self.kq.d.next = bits::<3>(0);
                    self.ka.d.next = bits::<3>(0);
                    self.kbad.d.next = false;
                    self.tot.d.next = bits::<40>(0);
                    self.state.d.next = RqState::Prot;
                    if self.atm.q.val() {
                        self.ans_status.d.next = bits::<8>(0);
                        if self.fail.q.val() {
                            self.ans_status.d.next = self.st_dma.val();
                        }
                        self.ans_valid.d.next = true;
                        self.state.d.next = RqState::Ans;
                    } else if self.fail.q.val() {
                        self.ans_status.d.next = self.st_dma.val();
                        self.ans_valid.d.next = true;
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                        self.state.d.next = RqState::Ans;
                    } else if self.w_nsge.val() > self.max_sge.val() {
                        self.ans_status.d.next = self.st_op.val();
                        self.ans_valid.d.next = true;
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                        self.state.d.next = RqState::Ans;
                    }
                }
            }
            RqState::Prot => {
                if self.k_more.val() {
                    self.keys.s_valid.next = true;
                    self.kq.d.next = self.kq.q.val() + bits::<3>(1);
                    self.tot.d.next = self.tot.q.val() + bit_cast::<40, 32>(self.q_len.val());
                }
                if self.keys.m_valid.val() {
                    self.ka.d.next = self.ka.q.val() + bits::<3>(1);
                    if !self.keys.m_ok.val() {
                        self.kbad.d.next = true;
                    }
                }
                if !self.k_more.val() & (self.ka.q.val() == self.kq.q.val()) {
                    self.ans_status.d.next = bits::<8>(0);
                    self.ans_valid.d.next = true;
                    self.state.d.next = RqState::Ans;
                    if self.kbad.q.val() {
                        self.ans_status.d.next = self.st_prot.val();
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                    } else if self.tot.q.val() > self.max_len.val() {
                        self.ans_status.d.next = self.st_len.val();
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                    }
                }
            }
            RqState::Ans => {
                if self.m_ans_ready.val() {
                    self.ans_valid.d.next = false;
                    self.state.d.next = RqState::Idle;
                    if (self.ans_status.q.val() != self.st_none.val())
                        & !self.sqm.q.val()
                        & !self.atm.q.val()
                    {
                        self.state.d.next = RqState::Wb;
                    }
                }
            }
            RqState::Wb => {
                // The WQE is consumed: ci + 1 (unless the host reset the queue meanwhile; a
                // table write has the port first).
                if self.dirty.q.val() {
                    self.state.d.next = RqState::Idle;
                } else if !self.ci_wen.val() {
                    self.ci_waddr.next = self.qpn.q.val();
                    self.ci_wdata.next = self.ci.q.val() + bits::<16>(1);
                    self.ci_wen.next = true;
                    self.state.d.next = RqState::Idle;
                }
            }
        }
        self.ci_ram.write_address.next = self.ci_waddr.val();
        self.ci_ram.write_data.next = self.ci_wdata.val();
        self.ci_ram.write_enable.next = self.ci_wen.val();
        self.ci_peek.write_address.next = self.ci_waddr.val();
        self.ci_peek.write_data.next = self.ci_wdata.val();
        self.ci_peek.write_enable.next = self.ci_wen.val();
        self.ci_peek.read_address.next = self.s_peek_index.val();
        self.m_peek_ci.next = self.ci_peek.read_data.val();
        if self.rst.val() {
            self.state.d.next = RqState::Idle;
            self.rd_valid.d.next = false;
            self.ans_valid.d.next = false;
            self.have.d.next = false;
            self.n_bad.d.next = bits::<32>(0);
            self.n_empty.d.next = bits::<32>(0);
        }
    }
}
