//! `Completer`: turns the requester's sent work requests into completions. It keeps, per QP,
//! the oldest PSN not yet acknowledged (`una`) from the ACKs the responder hands over, and
//! retires each QP's work requests in that QP's send order: one is done when an ACK covers its
//! last PSN, at once when the requester refused it, or when the peer NAKed it with a fatal
//! code. A done request that was signaled, or that failed, gets a CQE written by DMA into its
//! CQ's ring. QPs do not wait for each other: a QP whose oldest request is not done holds only
//! its own later ones.
//!
//! Ports:
//! - `s_sent_*`: `spec::meta::SENT` records from the requester, in send order.
//! - `s_rack_*`: `spec::meta::RX_ACK` records from the responder.
//! - `s_rland_*`: `RX_ACK` records with `read` set: an RDMA READ's response (or an atomic's
//!   ATOMIC ACKNOWLEDGE) has landed (or failed with its `status`), taken after the ACKs. A
//!   READ's or an atomic's request retires only when one has moved the QP's `rd_una` past its
//!   last PSN: an ACK past it says nothing of its bytes. One of an earlier epoch than the
//!   QP's (`RX_ACK.epoch`: it landed, and is reported, after the QP's reset) is dropped.
//! - `s_qpw_*`, `s_cqw_*`: BAR0's QP and CQ table write-throughs (a QP write with `init_sq`
//!   sets the QP's `una` from `una_psn` and clears its error, any other leaves them; a CQ
//!   write sets the ring and its index).
//! - `m_una_{en,qpn,psn}`: every write of a QP's state, with its `una` (the requester's
//!   window follows it).
//! - `s_peek_index` in, `m_peek_cpl` out: a QP's `una` (bits 0..24) and error status (24..32,
//!   0: none), for BAR0's QUERY (a copy of the per-QP state RAM with the same writes, read at
//!   BAR0's command index every cycle; a QP with an error reads as ERR).
//! - `m_wr_*`, `m_wd_*`: CQE writes (address, 32 bytes) and their bytes, to a `DmaWrite`.
//! - `m_qerr_{valid,qpn}`: a pulse (a register) when this block fails a QP (a fatal NAK,
//!   retries run out, a READ's local error), to `QpFail`: the requester stops sending for it
//!   and flushes its queued work requests, the responder flushes its receive WQEs.
//! - `s_failed`: a bit per QP any engine failed (`QpFail`): its requests not yet done flush;
//!   `s_fail_{valid,ready,qpn}`: a QP another engine failed, taken in Idle (after ACKs and
//!   landings): its timer stops and its head is looked at, so its requests flush at once.
//! - `s_pfail_{valid,ready,qpn,psn}`: a request packet whose payload read failed (the
//!   requester's `m_pfail`), taken in Idle after the landings as a READ that failed to land:
//!   the QP's error is set (GENERAL_ERR) and reported, `una` stays, and the PSN is kept
//!   (`lerr`): the request holding it takes the error, those before it not acknowledged flush
//!   without it. (A READ response's failure goes to the responder, which NAKs it.)
//!   `s_pfail_epoch`: the QP's epoch when the read was issued; a record of an earlier epoch
//!   (the QP reset since) is dropped.
//! - A QP's error not yet given to a request (a fatal NAK, a failed payload read) goes to the
//!   first request the requester flushed (`SENT` with WR_FLUSH_ERR) if no request handed over
//!   took it: a failed QP yields at its next packet, so the message it was sending (whose
//!   record it had not handed over) is flushed, and it is the one the error names.
//! - `s_snd_{en,qpn,psn,epoch}`: the requester's new request packets; an ACK or NAK for a
//!   PSN past the QP's last one sent in its epoch, or a NAK behind `una`, is dropped
//!   (`ghosts`).
//! - `m_ret_{valid,qpn,count,shared}`: a request taken off the pool (registers): its QP, the
//!   QP's requests retired so far (mod 2^8) and whether it held a shared entry, so the
//!   requester keeps every QP within its share and never hands over more than the pool holds.
//! - counters: `naks` (NAKs and RNR NAKs received), `bad_cq` (a request whose CQ number is not
//!   in the table: retired without a CQE), `cqes` (CQEs written), `ghosts` (ACKs and NAKs
//!   dropped: a PSN never sent, a NAK behind `una`).
//!
//! Outstanding work, per QP: a pool of `POOL` (512, `spec::meta::SENT_POOL`) entries in block
//! RAM holds the `SENT` records; each QP's entries form a list in send order (`lst`: head, tail,
//! a not-empty bit and the count of requests retired per QP; `nxt`: the entry after each
//! entry); entries never used are handed out by a counter (`fresh`), entries given back go
//! through a free list (`free_q`). The requester hands a QP's record over only within the
//! QP's share (an entry reserved for each QP, and at most `SENT_PER_QP` in all from the
//! shared half), so an entry is always there for the next one and a QP whose peer never
//! answers holds only its share. A queue of
//! QPs whose head may now retire (`rdy_q`, each QP in it at most once: `sched`) says which
//! head to look at: a QP goes in when a request lands at the head of its empty list, when an
//! ACK or a landing for it is taken and it has requests, when its head retired and more
//! follow, and on every BAR0 write of its context (ERR, RESET). A head that is not done yet
//! is left until one of those comes. After reset the block clears every QP's list (256
//! cycles, state `Init`) before it takes anything.
//!
//! ```text
//!  s_rack/s_rland --> [Idle: take] -> [Ack: una, rd_una, error updated] -> [Kick: QP queued]
//!  s_sent --> FIFO --> [Idle] -> [Append: entry at the QP's list tail] -(list was empty)-> [Kick]
//!  rdy_q --> [Idle] -> [HeadA: the QP's list] -> [HeadB: its head entry] -> [Sent: acknowledged,
//!      refused or failed? no: back to Idle; yes: off the list, entry freed, CQE if signaled
//!      or failed] -> [Cqe: 32 bytes to m_wd, CQ index + 1] -(more on the list)-> [Kick]
//! ```
//!
//! ACKs: an ACK for PSN p means every PSN up to p arrived (`una` = p + 1), a NAK for p means every
//! PSN before p did (`una` = p); `una` only moves forward. A NAK code IBA reserves (or the reserved
//! syndrome 010) fails the request like a remote operational error (as rxe). An answer must name a
//! PSN the requester has sent in the QP's epoch (IBA 9.7.5.1, rxe's `check_psn`): one past the last
//! PSN sent (a stale ACK of the QP's last connection, a bogus peer) would complete work never
//! delivered, and a NAK behind `una` (reordered, duplicated, stale) would start an RNR wait or fail
//! the QP for nothing; both are dropped and counted. A NAK with a fatal code (invalid request,
//! remote access or remote operational error) fails the request it names with REM_INV_REQ_ERR,
//! REM_ACCESS_ERR or REM_OP_ERR, and the QP's later requests with WR_FLUSH_ERR. After the
//! request that took a QP's error, every later one flushes, acknowledged or not (an ACK can
//! pass a READ whose response was lost; rxe flushes the whole send queue).
//!
//! Retries (IBA 9.7.6.1, go back N): a `Timers` entry per QP runs while the QP has requests
//! out (set when its list stops being empty, again at every progress: `una` or `rd_una`
//! moving; off when the list empties or the QP fails). When it fires, or at once for a NAK
//! PSN sequence error, the head request is read and the requester told to send again from
//! `una` inside it (`m_rew_{valid,ready,qpn,ci,psn,pkts}`: the head's send-queue index, the
//! PSN and the packets of it to skip; an atomic from its start), counting a retry;
//! after `retry_cnt` retries without progress the next expiry fails the QP, the head with
//! RETRY_EXC_ERR and the rest WR_FLUSH_ERR.
//!
//! A READ goes on from its first missing response (IBA 9.7.4.1.4, as rxe adjusts the iova):
//! the responder's READ cursor for the QP (`m_rpk_qpn` out, `s_rpk_data` in: its next PSN,
//! epoch, held bit, and whether responses came since `m_rpk_clr`) names the PSN, when a
//! response of the head READ has landed; the requester then asks for the rest of it at that
//! PSN. A READ that landed more since the last retry has made progress (the point is kept in
//! the per-QP state), so a long READ over a lossy link never runs out of retries while it
//! moves. An ACK expiry while the head READ's responses still come (landed or dropped: the
//! peer may be sending a stream a retry made stale, the retry's own queued behind it) is not
//! a timeout: the timer starts again. The responder tells of a READ's responses skipping past
//! the expected one three times (`RX_ACK.gap`): a retry at once, as for a sequence NAK (not
//! counted as a NAK received), if none was made since a READ of the QP last landed (the
//! peer's streams a retry makes stale are sent to their end: retries at every loss would
//! pile them up); otherwise the timer finds the loss. An ACK past a head READ or atomic whose
//! response has not come (the READ cursor not past its last PSN) says the response was lost
//! (the peer answers in PSN order; rxe's `check_psn`): a retry at once when the head is looked
//! at after it, under the same rule, not a timeout that every later ACK puts off.
//! An RNR NAK starts an RNR wait of the NAK's timer code instead (a sequence NAK for the same
//! PSN does not cut it short); when it ends the requester sends again from the NAKed PSN; the
//! `rnr_retry`+1-th RNR NAK without progress fails the QP with RNR_RETRY_EXC_ERR (7: never).
//! Counters `timeouts`, `seq_naks`, `rnr_naks` (received) and `retry_exc` (QPs failed so).
//! The host moving a QP to ERR (a context write with state ERR) flushes its outstanding
//! requests the same way; a later `init_sq` write (RESET) clears that. A move to RESET also
//! starts a new epoch (the context's `epoch`, which every `SENT` record carries): requests of
//! an earlier epoch complete silently when they reach the head, without a CQE (IBA discards
//! a reset QP's work). An ACK or landing taken before a RESET of its QP and not yet applied
//! belongs to the QP's last life and is dropped. The per-QP state is read again after any
//! BAR0 write of the QP table before it is acted on (`qpw_d`).
//!
//! The CQE: `spec::queues::CQE`, its owner bit the inverse of the pass over the ring
//! (`(pi >> log_size) & 1`), its `epoch` the one its request or landing was taken in (a CQE
//! already on its way to the host when the QP is reset lands after the reset; the host knows
//! it by its epoch). The CQ's producer index is kept in this block's copy of the CQ
//! table only (the NIC does not return a CQ's context). The host's consumer index is not
//! known to the NIC: a host that lets its CQ overflow loses completions (as with verbs).
//! Received ACKs are taken before sent requests, and those before heads to look at.
//!

use crate::host::{field_at, k};
use crate::prelude::*;
use crate::rc::iface::{PA, POOL, QA, RC_W, RPK_W};
use crate::rc::timers::{Timers, MODE_ACK, MODE_NOW, MODE_OFF, MODE_RNR};
use crate::stream::Fifo;
use ferroce_spec::headers::{
    AETH_NAK_INV_REQ, AETH_NAK_PSN_SEQ, AETH_NAK_REM_ACCESS, AETH_NAK_REM_OP,
};
use ferroce_spec::meta::{RECV_DONE, RX_ACK, SENT};
use ferroce_spec::queues::{
    CQE, CQE_LEN, CQ_CTX, QP_CTX, QP_STATE_ERR, WC_GENERAL_ERR, WC_REM_ACCESS_ERR,
    WC_REM_INV_REQ_ERR, WC_REM_OP_ERR, WC_RETRY_EXC_ERR, WC_RNR_RETRY_EXC_ERR, WC_WR_FLUSH_ERR,
    WQE_FLAG_SIGNALED, WR_ATOMIC_CMP_AND_SWP, WR_ATOMIC_FETCH_AND_ADD, WR_RDMA_READ, WR_TO_WC,
};

pub const QP_W: usize = crate::host::bar0::QP_W;
pub const CQ_W: usize = 128;
const SENT_W: usize = SENT.len * 8;
const RCV_W: usize = RECV_DONE.len * 8;
const RACK_W: usize = RX_ACK.len * 8;
const CQE_W: usize = CQE_LEN * 8;
/// Per QP, as QUERY reads it: una 0/24, error status 24/8 (0: none).
const QST_W: usize = 32;
/// A QP's failed-payload-read word (`lerr`): the PSN where the read failed (bits 0..24) and,
/// above it, whether there is one.
const LERR_PSN_W: usize = 24;
const LERR_ON: usize = LERR_PSN_W;
const LERR_W: usize = LERR_PSN_W + 1;
/// Per QP, as this block keeps it: those, the epoch 32/8, `rd_una` 40/24 (the PSN after
/// the last READ response landed), and the retry counts: timeouts and sequence NAKs 64/3,
/// RNR NAKs 67/3, since the last progress; 70: an RNR wait runs; 71/24: the PSN the last
/// retry went on from (`una_psn` - 1 after a RESET: none; a READ that lands more between two
/// retries makes progress; a READ's skipped response, `RX_ACK.gap`, or an answer past a READ
/// whose response has not come, at another PSN is retried at once).
const QS_W: usize = 95;
const CNT_W: usize = 7;
/// Per QP, from its context: `retry_cnt` 0/3, `rnr_retry` 3/3.
const PRM_W: usize = 6;
/// Per CQ: base 0/64, log_size 64/5, pi 96/32 (the CQ_CTX positions, checked in `new`).
const CQS_W: usize = 128;

/// Per QP, its list in the pool: head 0/9, tail 9/9, not empty 18, records retired 19/8 (the
/// kernel spells the positions out).
const LST_W: usize = 2 * PA + 1 + RC_W;
const _: () = assert!(PA == 9 && LST_W == 27);

/// Work request opcodes with a completion opcode (`WR_TO_WC`).
const WR_N: usize = WR_TO_WC.len();

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum CplState {
    Idle,
    Init,
    Ack,
    Kick,
    Append,
    HeadA,
    HeadB,
    TmoA,
    TmoB,
    TmoC,
    Sent,
    Rcv,
    Cqe,
}

#[derive(LogicBlock)]
pub struct Completer<const DW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_sent_tdata: Signal<In, Bits<SENT_W>>,
    pub s_sent_tvalid: Signal<In, Bit>,
    pub s_sent_tready: Signal<Out, Bit>,
    pub s_rack_tdata: Signal<In, Bits<RACK_W>>,
    pub s_rack_tvalid: Signal<In, Bit>,
    pub s_rack_tready: Signal<Out, Bit>,
    pub s_rland_tdata: Signal<In, Bits<RACK_W>>,
    pub s_rland_tvalid: Signal<In, Bit>,
    pub s_rland_tready: Signal<Out, Bit>,
    rd_una: Signal<Local, Bits<24>>,
    new_rd: Signal<Local, Bits<24>>,
    rd_adv: Signal<Local, Bits<24>>,
    a_read: Signal<Local, Bit>,
    a_lst: Signal<Local, Bits<8>>,
    is_rd: Signal<Local, Bit>,
    since_rd: Signal<Local, Bits<24>>,
    wr_rd: Constant<Bits<8>>,
    wr_cs: Constant<Bits<8>>,
    wr_fa: Constant<Bits<8>>,
    r_read: Constant<Bits<7>>,
    r_lst: Constant<Bits<7>>,
    pub s_rcv_tdata: Signal<In, Bits<RCV_W>>,
    pub s_rcv_tvalid: Signal<In, Bit>,
    pub s_rcv_tready: Signal<Out, Bit>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<QP_W>>,
    pub s_peek_index: Signal<In, Bits<QA>>,
    pub m_peek_cpl: Signal<Out, Bits<QST_W>>,
    /// Every write of a QP's state, its `una` (the requester's window follows it).
    pub m_una_en: Signal<Out, Bit>,
    pub m_una_qpn: Signal<Out, Bits<QA>>,
    pub m_una_psn: Signal<Out, Bits<24>>,
    una_v: DFF<Bit>,
    una_q: DFF<Bits<QA>>,
    una_p: DFF<Bits<24>>,
    pub m_qerr_valid: Signal<Out, Bit>,
    pub m_qerr_qpn: Signal<Out, Bits<QA>>,
    /// QPs failed (`QpFail::failed`), and those another engine failed, to flush.
    pub s_failed: Signal<In, Bits<256>>,
    pub s_fail_valid: Signal<In, Bit>,
    pub s_fail_ready: Signal<Out, Bit>,
    pub s_fail_qpn: Signal<In, Bits<QA>>,
    take_fail: Signal<Local, Bit>,
    pub s_pfail_valid: Signal<In, Bit>,
    pub s_pfail_ready: Signal<Out, Bit>,
    pub s_pfail_qpn: Signal<In, Bits<QA>>,
    pub s_pfail_psn: Signal<In, Bits<24>>,
    pub s_pfail_epoch: Signal<In, Bits<8>>,
    take_pf: Signal<Local, Bit>,
    /// The answer's epoch (`RX_ACK.epoch`, with `read`).
    a_ep: Signal<Local, Bits<8>>,
    r_ep: Constant<Bits<7>>,
    /// A failed payload read taken, as the `RX_ACK` of a READ that failed at landing.
    pf_word: Signal<Local, Bits<RACK_W>>,
    /// The answer in `Ack` is a request's failed payload read (its PSN is where it failed).
    a_pf: DFF<Bit>,
    /// Per QP: where a failed payload read failed it (PSN 0/24, valid 24), read beside the
    /// QP's state: the request holding that PSN takes the error, those before it flush.
    lerr: RAM<Bits<LERR_W>, QA>,
    err_real: Signal<Local, Bit>,
    lp_on: Signal<Local, Bit>,
    lp_cov: Signal<Local, Bit>,
    lp_early: Signal<Local, Bit>,
    r_status: Constant<Bits<7>>,
    wc_gen: Constant<Bits<8>>,
    f_err: Signal<Local, Bit>,
    f_still: Signal<Local, Bit>,
    /// The requester's new request packets (`Requester::m_snd_*`): per QP, the PSN after the
    /// last one sent and the epoch it was sent in.
    pub s_snd_en: Signal<In, Bit>,
    pub s_snd_qpn: Signal<In, Bits<QA>>,
    pub s_snd_psn: Signal<In, Bits<24>>,
    pub s_snd_epoch: Signal<In, Bits<8>>,
    /// ACKs and NAKs dropped: a PSN never sent, or a NAK behind `una` (stale).
    pub ghosts: Signal<Out, Bits<32>>,
    snd_ram: RAM<Bits<32>, QA>,
    n_ghost: DFF<Bits<32>>,
    snd_lim: Signal<Local, Bits<24>>,
    ghost_gap: Signal<Local, Bits<24>>,
    nak_back: Signal<Local, Bits<24>>,
    ghost: Signal<Local, Bit>,
    /// A record taken off the pool: its QP, the QP's records retired so far (mod 2^`RC_W`)
    /// and whether it held a shared entry, so the requester keeps each QP within its share.
    pub m_ret_valid: Signal<Out, Bit>,
    pub m_ret_qpn: Signal<Out, Bits<QA>>,
    pub m_ret_count: Signal<Out, Bits<RC_W>>,
    pub m_ret_shared: Signal<Out, Bit>,
    retire_v: DFF<Bit>,
    ret_q: DFF<Bits<QA>>,
    ret_n: DFF<Bits<RC_W>>,
    ret_s: DFF<Bit>,
    l_ret: Signal<Local, Bits<RC_W>>,
    l_ret1: Signal<Local, Bits<RC_W>>,
    s_shared: Signal<Local, Bit>,
    x_shared: Constant<Bits<8>>,
    rd_pass: Signal<Local, Bit>,
    qst_pass: Signal<Local, Bits<QS_W>>,
    last1: Signal<Local, Bits<24>>,
    rd_fwd: Signal<Local, Bits<24>>,
    pub s_cqw_en: Signal<In, Bit>,
    pub s_cqw_index: Signal<In, Bits<QA>>,
    pub s_cqw_data: Signal<In, Bits<CQ_W>>,
    pub m_wr_addr: Signal<Out, Bits<64>>,
    pub m_wr_len: Signal<Out, Bits<13>>,
    pub m_wr_tvalid: Signal<Out, Bit>,
    pub m_wr_tready: Signal<In, Bit>,
    pub m_wd_tdata: Signal<Out, Bits<DW>>,
    pub m_wd_tlast: Signal<Out, Bit>,
    pub m_wd_tvalid: Signal<Out, Bit>,
    pub m_wd_tready: Signal<In, Bit>,
    pub naks: Signal<Out, Bits<32>>,
    pub m_rew_valid: Signal<Out, Bit>,
    pub m_rew_ready: Signal<In, Bit>,
    pub m_rew_qpn: Signal<Out, Bits<QA>>,
    pub m_rew_ci: Signal<Out, Bits<16>>,
    pub m_rew_psn: Signal<Out, Bits<24>>,
    pub m_rew_pkts: Signal<Out, Bits<24>>,
    pub m_rpk_qpn: Signal<Out, Bits<QA>>,
    pub s_rpk_data: Signal<In, Bits<RPK_W>>,
    pub m_rpk_clr: Signal<Out, Bit>,
    a_gap: Signal<Local, Bit>,
    r_gap: Constant<Bits<7>>,
    rd_head: Signal<Local, Bit>,
    gap_go: Signal<Local, Bit>,
    rx_exp: Signal<Local, Bits<24>>,
    rx_off: Signal<Local, Bits<24>>,
    rx_ok: Signal<Local, Bit>,
    rx_prog: Signal<Local, Bit>,
    /// The head READ's or atomic's response has come (the READ cursor is past it).
    rx_past: Signal<Local, Bits<24>>,
    /// Where a retry of the head would go on from, and the state with it as the last retry's.
    rew_at: Signal<Local, Bits<24>>,
    qst_rew: Signal<Local, Bits<QS_W>>,
    /// The head is a READ or an atomic whose response was lost: an answer past it came.
    rd_lost: Signal<Local, Bit>,
    /// A RESET's `una_psn` - 1: no retry made yet.
    qpw_res: Signal<Local, Bits<24>>,
    rd_res: Signal<Local, Bits<24>>,
    s_span: Signal<Local, Bits<24>>,
    pub timeouts: Signal<Out, Bits<32>>,
    pub seq_naks: Signal<Out, Bits<32>>,
    pub rnr_naks: Signal<Out, Bits<32>>,
    pub retry_exc: Signal<Out, Bits<32>>,
    tmr: Timers,
    prm: RAM<Bits<PRM_W>, QA>,
    rew_v: DFF<Bit>,
    rew_gone: Signal<Local, Bit>,
    rew_q: DFF<Bits<QA>>,
    rew_ci: DFF<Bits<16>>,
    rew_psn: DFF<Bits<24>>,
    rew_pkts: DFF<Bits<24>>,
    t_mode: DFF<Bits<2>>,
    n_tmo: DFF<Bits<32>>,
    n_seq: DFF<Bits<32>>,
    n_rnr: DFF<Bits<32>>,
    n_rexc: DFF<Bits<32>>,
    take_tmo: Signal<Local, Bit>,
    cnt: Signal<Local, Bits<CNT_W>>,
    new_cnt: Signal<Local, Bits<CNT_W>>,
    cnt1: Signal<Local, Bits<CNT_W>>,
    cnt0: Signal<Local, Bits<CNT_W>>,
    rnr_wait: Signal<Local, Bit>,
    rnr_exp: Signal<Local, Bit>,
    retries: Signal<Local, Bits<3>>,
    rnrs: Signal<Local, Bits<3>>,
    p_retry: Signal<Local, Bits<3>>,
    p_rnr: Signal<Local, Bits<3>>,
    a_is_rnr: Signal<Local, Bit>,
    a_is_seq: Signal<Local, Bit>,
    a_prog: Signal<Local, Bit>,
    s_first: Signal<Local, Bits<24>>,
    s_sqi: Signal<Local, Bits<16>>,
    r_off: Signal<Local, Bits<24>>,
    qst_keep: Signal<Local, Bits<QS_W>>,
    x_first: Constant<Bits<8>>,
    x_sqi: Constant<Bits<8>>,
    nak_seq: Constant<Bits<8>>,
    wc_rexc: Constant<Bits<8>>,
    md_off: Constant<Bits<2>>,
    md_ack: Constant<Bits<2>>,
    md_rnr: Constant<Bits<2>>,
    md_now: Constant<Bits<2>>,
    pub bad_cq: Signal<Out, Bits<32>>,
    pub cqes: Signal<Out, Bits<32>>,
    sent_q: Fifo<SENT_W, 2, 3>,
    pool: RAM<Bits<SENT_W>, PA>,
    nxt: RAM<Bits<PA>, PA>,
    lst: RAM<Bits<LST_W>, QA>,
    free_q: Fifo<PA, PA, 10>,
    fresh: DFF<Bits<10>>,
    rdy_q: Fifo<QA, QA, 9>,
    sched: DFF<Bits<256>>,
    cur: DFF<Bits<SENT_W>>,
    cur_q: DFF<Bits<QA>>,
    cur_head: DFF<Bits<PA>>,
    cur_tail: DFF<Bits<PA>>,
    cur_next: DFF<Bits<PA>>,
    more: DFF<Bit>,
    kq: DFF<Bits<QA>>,
    qpw_d: DFF<Bit>,
    a_stale: DFF<Bit>,
    swp: DFF<Bits<9>>,
    take_rack: Signal<Local, Bit>,
    take_rland: Signal<Local, Bit>,
    take_rcv: Signal<Local, Bit>,
    take_sent: Signal<Local, Bit>,
    take_rdy: Signal<Local, Bit>,
    can_alloc: Signal<Local, Bit>,
    alloc: Signal<Local, Bits<PA>>,
    n_qpn: Signal<Local, Bits<QA>>,
    l_head: Signal<Local, Bits<PA>>,
    l_tail: Signal<Local, Bits<PA>>,
    l_ne: Signal<Local, Bit>,
    lw_addr: Signal<Local, Bits<QA>>,
    lw_data: Signal<Local, Bits<LST_W>>,
    lw_en: Signal<Local, Bit>,
    retire: Signal<Local, Bit>,
    to_cqe: Signal<Local, Bit>,
    more_now: Signal<Local, Bit>,
    k_push: Signal<Local, Bit>,
    h_push: Signal<Local, Bit>,
    k_bit: Signal<Local, Bits<256>>,
    k_in: Signal<Local, Bit>,
    hq_bit: Signal<Local, Bits<256>>,
    hq_in: Signal<Local, Bit>,
    p_bit: Signal<Local, Bits<256>>,
    sched_set: Signal<Local, Bits<256>>,
    sched_clr: Signal<Local, Bits<256>>,
    rcv_q: Fifo<RCV_W, 2, 3>,
    rcv: DFF<Bits<RCV_W>>,
    rcv_img: Signal<Local, Bits<CQE_W>>,
    v_cqn: Signal<Local, Bits<16>>,
    rcv_ep: Signal<Local, Bits<8>>,
    qst_ram: RAM<Bits<QS_W>, QA>,
    qst_peek: RAM<Bits<QST_W>, QA>,
    qw_addr: Signal<Local, Bits<QA>>,
    qw_data: Signal<Local, Bits<QS_W>>,
    qw_lo: Signal<Local, Bits<QST_W>>,
    qw_en: Signal<Local, Bit>,
    cq_ram: RAM<Bits<CQS_W>, QA>,
    state: DFF<CplState>,
    rack: DFF<Bits<RACK_W>>,
    cqe: DFF<Bits<CQE_W>>,
    beats: DFF<Bits<4>>,
    wr_addr: DFF<Bits<64>>,
    wr_valid: DFF<Bit>,
    wd_data: DFF<Bits<DW>>,
    wd_last: DFF<Bit>,
    wd_valid: DFF<Bit>,
    n_naks: DFF<Bits<32>>,
    qerr_v: DFF<Bit>,
    qerr_q: DFF<Bits<QA>>,
    herr: DFF<Bits<256>>,
    h_bit: Signal<Local, Bits<256>>,
    h_err: Signal<Local, Bit>,
    h_shift: Signal<Local, Bits<256>>,
    q_err: Signal<Local, Bits<8>>,
    n_bad_cq: DFF<Bits<32>>,
    n_cqes: DFF<Bits<32>>,
    // Locals.
    a_qpn: Signal<Local, Bits<QA>>,
    a_syn: Signal<Local, Bits<8>>,
    a_psn: Signal<Local, Bits<24>>,
    una: Signal<Local, Bits<24>>,
    err: Signal<Local, Bits<8>>,
    new_una: Signal<Local, Bits<24>>,
    adv: Signal<Local, Bits<24>>,
    new_err: Signal<Local, Bits<8>>,
    s_qpn: Signal<Local, Bits<24>>,
    s_status: Signal<Local, Bits<8>>,
    s_flags: Signal<Local, Bits<8>>,
    s_wr_op: Signal<Local, Bits<8>>,
    s_cqn: Signal<Local, Bits<16>>,
    s_wrid: Signal<Local, Bits<64>>,
    s_len: Signal<Local, Bits<32>>,
    s_last: Signal<Local, Bits<24>>,
    s_epoch: Signal<Local, Bits<8>>,
    q_epoch: Signal<Local, Bits<8>>,
    stale: Signal<Local, Bit>,
    since: Signal<Local, Bits<24>>,
    acked: Signal<Local, Bit>,
    pass: Signal<Local, Bits<32>>,
    pi_next: Signal<Local, Bits<32>>,
    beats_next: Signal<Local, Bits<4>>,
    status: Signal<Local, Bits<8>>,
    want_cqe: Signal<Local, Bit>,
    cq_base: Signal<Local, Bits<64>>,
    cq_log: Signal<Local, Bits<5>>,
    cq_pi: Signal<Local, Bits<32>>,
    slot: Signal<Local, Bits<32>>,
    owner: Signal<Local, Bits<1>>,
    wc_op: Signal<Local, Bits<8>>,
    cqe_img: Signal<Local, Bits<CQE_W>>,
    wd_free: Signal<Local, Bit>,
    qst_w: Signal<Local, Bits<QS_W>>,
    // Constants.
    q_una: Constant<Bits<10>>,
    q_init: Constant<Bits<10>>,
    q_ep: Constant<Bits<10>>,
    q_retry: Constant<Bits<10>>,
    q_rnr: Constant<Bits<10>>,
    r_qpn: Constant<Bits<7>>,
    r_syn: Constant<Bits<7>>,
    r_psn: Constant<Bits<7>>,
    x_qpn: Constant<Bits<8>>,
    x_status: Constant<Bits<8>>,
    x_flags: Constant<Bits<8>>,
    x_wr_op: Constant<Bits<8>>,
    x_cqn: Constant<Bits<8>>,
    x_wrid: Constant<Bits<8>>,
    x_len: Constant<Bits<8>>,
    x_last: Constant<Bits<8>>,
    x_epoch: Constant<Bits<8>>,
    c_wrid: Constant<Bits<8>>,
    c_len: Constant<Bits<8>>,
    c_qpn: Constant<Bits<8>>,
    c_op: Constant<Bits<8>>,
    c_status: Constant<Bits<8>>,
    c_owner: Constant<Bits<8>>,
    c_flags: Constant<Bits<8>>,
    c_imm: Constant<Bits<8>>,
    c_src: Constant<Bits<8>>,
    c_epoch: Constant<Bits<8>>,
    v_qpn: Constant<Bits<8>>,
    v_status: Constant<Bits<8>>,
    v_op: Constant<Bits<8>>,
    v_flags: Constant<Bits<8>>,
    v_cqn_at: Constant<Bits<8>>,
    v_wrid: Constant<Bits<8>>,
    v_ep: Constant<Bits<8>>,
    v_len: Constant<Bits<8>>,
    v_imm: Constant<Bits<8>>,
    v_src: Constant<Bits<8>>,
    wc_rnr: Constant<Bits<8>>,
    nak_inv: Constant<Bits<8>>,
    nak_acc: Constant<Bits<8>>,
    nak_op: Constant<Bits<8>>,
    wc_inv: Constant<Bits<8>>,
    wc_acc: Constant<Bits<8>>,
    wc_rop: Constant<Bits<8>>,
    wc_flush: Constant<Bits<8>>,
    lerr_on: Constant<Bits<5>>,
    one256: Constant<Bits<256>>,
    q_state: Constant<Bits<10>>,
    st_err: Constant<Bits<4>>,
    wr_codes: Vec<Constant<Bits<8>>>,
    wc_codes: Vec<Constant<Bits<8>>>,
    signaled: Constant<Bits<8>>,
    cqe_len: Constant<Bits<13>>,
    n_beats: Constant<Bits<4>>,
    dw_shift: Constant<Bits<9>>,
    pi_clear: Constant<Bits<CQS_W>>,
    pool_n: Constant<Bits<10>>,
}

impl<const DW: usize> Completer<DW> {
    /// `timer_unit_cycles`: core clock cycles per `TIMER_UNIT_NS` (40 at 156.25 MHz).
    pub fn new(timer_unit_cycles: u64) -> Self {
        assert!(
            DW <= CQE_W && CQE_W.is_multiple_of(DW),
            "a CQE is a whole number of beats"
        );
        for (name, bit, width) in [("base", 0, 64), ("log_size", 64, 5), ("pi", 96, 32)] {
            let f = CQ_CTX.field(name);
            assert_eq!((f.bit, f.width), (bit, width), "CQ_CTX.{name} moved");
        }
        let mut clear = vec![true; CQS_W];
        clear[96..128].fill(false);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_sent_tdata: Default::default(),
            s_sent_tvalid: Default::default(),
            s_sent_tready: Default::default(),
            s_rack_tdata: Default::default(),
            s_rack_tvalid: Default::default(),
            s_rack_tready: Default::default(),
            s_failed: Default::default(),
            s_fail_valid: Default::default(),
            s_fail_ready: Default::default(),
            s_fail_qpn: Default::default(),
            take_fail: Default::default(),
            s_pfail_valid: Default::default(),
            s_pfail_ready: Default::default(),
            s_pfail_qpn: Default::default(),
            s_pfail_psn: Default::default(),
            s_pfail_epoch: Default::default(),
            a_ep: Default::default(),
            r_ep: field_at(&RX_ACK, "epoch"),
            take_pf: Default::default(),
            pf_word: Default::default(),
            a_pf: Default::default(),
            lerr: RAM::default(),
            err_real: Default::default(),
            lp_on: Default::default(),
            lp_cov: Default::default(),
            lp_early: Default::default(),
            r_status: field_at(&RX_ACK, "status"),
            wc_gen: k(WC_GENERAL_ERR.into()),
            f_err: Default::default(),
            f_still: Default::default(),
            s_snd_en: Default::default(),
            s_snd_qpn: Default::default(),
            s_snd_psn: Default::default(),
            s_snd_epoch: Default::default(),
            ghosts: Default::default(),
            snd_ram: RAM::default(),
            n_ghost: Default::default(),
            snd_lim: Default::default(),
            ghost_gap: Default::default(),
            nak_back: Default::default(),
            ghost: Default::default(),
            m_ret_valid: Default::default(),
            m_ret_qpn: Default::default(),
            m_ret_count: Default::default(),
            m_ret_shared: Default::default(),
            retire_v: Default::default(),
            ret_q: Default::default(),
            ret_n: Default::default(),
            ret_s: Default::default(),
            l_ret: Default::default(),
            l_ret1: Default::default(),
            s_shared: Default::default(),
            x_shared: field_at(&SENT, "shared"),
            rd_pass: Default::default(),
            qst_pass: Default::default(),
            last1: Default::default(),
            rd_fwd: Default::default(),
            s_rland_tdata: Default::default(),
            s_rland_tvalid: Default::default(),
            s_rland_tready: Default::default(),
            rd_una: Default::default(),
            new_rd: Default::default(),
            rd_adv: Default::default(),
            a_read: Default::default(),
            a_lst: Default::default(),
            is_rd: Default::default(),
            since_rd: Default::default(),
            wr_rd: k(WR_RDMA_READ.into()),
            wr_cs: k(WR_ATOMIC_CMP_AND_SWP.into()),
            wr_fa: k(WR_ATOMIC_FETCH_AND_ADD.into()),
            r_read: field_at(&RX_ACK, "read"),
            r_lst: field_at(&RX_ACK, "status"),
            s_rcv_tdata: Default::default(),
            s_rcv_tvalid: Default::default(),
            s_rcv_tready: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            s_peek_index: Default::default(),
            m_peek_cpl: Default::default(),
            m_una_en: Default::default(),
            m_una_qpn: Default::default(),
            m_una_psn: Default::default(),
            una_v: Default::default(),
            una_q: Default::default(),
            una_p: Default::default(),
            m_qerr_valid: Default::default(),
            m_qerr_qpn: Default::default(),
            s_cqw_en: Default::default(),
            s_cqw_index: Default::default(),
            s_cqw_data: Default::default(),
            m_wr_addr: Default::default(),
            m_wr_len: Default::default(),
            m_wr_tvalid: Default::default(),
            m_wr_tready: Default::default(),
            m_wd_tdata: Default::default(),
            m_wd_tlast: Default::default(),
            m_wd_tvalid: Default::default(),
            m_wd_tready: Default::default(),
            naks: Default::default(),
            m_rew_valid: Default::default(),
            m_rew_ready: Default::default(),
            m_rew_qpn: Default::default(),
            m_rew_ci: Default::default(),
            m_rew_psn: Default::default(),
            m_rew_pkts: Default::default(),
            m_rpk_qpn: Default::default(),
            s_rpk_data: Default::default(),
            m_rpk_clr: Default::default(),
            a_gap: Default::default(),
            r_gap: field_at(&RX_ACK, "gap"),
            rd_head: Default::default(),
            gap_go: Default::default(),
            rx_exp: Default::default(),
            rx_off: Default::default(),
            rx_ok: Default::default(),
            rx_prog: Default::default(),
            rx_past: Default::default(),
            rew_at: Default::default(),
            qst_rew: Default::default(),
            rd_lost: Default::default(),
            qpw_res: Default::default(),
            rd_res: Default::default(),
            s_span: Default::default(),
            timeouts: Default::default(),
            seq_naks: Default::default(),
            rnr_naks: Default::default(),
            retry_exc: Default::default(),
            tmr: Timers::new(timer_unit_cycles),
            prm: RAM::default(),
            rew_v: Default::default(),
            rew_gone: Default::default(),
            rew_q: Default::default(),
            rew_ci: Default::default(),
            rew_psn: Default::default(),
            rew_pkts: Default::default(),
            t_mode: Default::default(),
            n_tmo: Default::default(),
            n_seq: Default::default(),
            n_rnr: Default::default(),
            n_rexc: Default::default(),
            take_tmo: Default::default(),
            cnt: Default::default(),
            new_cnt: Default::default(),
            cnt1: Default::default(),
            cnt0: Default::default(),
            rnr_wait: Default::default(),
            retries: Default::default(),
            rnr_exp: Default::default(),
            rnrs: Default::default(),
            p_retry: Default::default(),
            p_rnr: Default::default(),
            a_is_rnr: Default::default(),
            a_is_seq: Default::default(),
            a_prog: Default::default(),
            s_first: Default::default(),
            s_sqi: Default::default(),
            r_off: Default::default(),
            qst_keep: Default::default(),
            x_first: field_at(&SENT, "first_psn"),
            x_sqi: field_at(&SENT, "sq_index"),
            nak_seq: k(AETH_NAK_PSN_SEQ.into()),
            wc_rexc: k(WC_RETRY_EXC_ERR.into()),
            md_off: k(MODE_OFF),
            md_ack: k(MODE_ACK),
            md_rnr: k(MODE_RNR),
            md_now: k(MODE_NOW),
            bad_cq: Default::default(),
            cqes: Default::default(),
            sent_q: Fifo::new(),
            pool: RAM::default(),
            nxt: RAM::default(),
            lst: RAM::default(),
            free_q: Fifo::new(),
            fresh: Default::default(),
            rdy_q: Fifo::new(),
            sched: Default::default(),
            cur: Default::default(),
            cur_q: Default::default(),
            cur_head: Default::default(),
            cur_tail: Default::default(),
            cur_next: Default::default(),
            more: Default::default(),
            kq: Default::default(),
            qpw_d: Default::default(),
            a_stale: Default::default(),
            swp: Default::default(),
            take_rack: Default::default(),
            take_rland: Default::default(),
            take_rcv: Default::default(),
            take_sent: Default::default(),
            take_rdy: Default::default(),
            can_alloc: Default::default(),
            alloc: Default::default(),
            n_qpn: Default::default(),
            l_head: Default::default(),
            l_tail: Default::default(),
            l_ne: Default::default(),
            lw_addr: Default::default(),
            lw_data: Default::default(),
            lw_en: Default::default(),
            retire: Default::default(),
            to_cqe: Default::default(),
            more_now: Default::default(),
            k_push: Default::default(),
            h_push: Default::default(),
            k_bit: Default::default(),
            k_in: Default::default(),
            hq_bit: Default::default(),
            hq_in: Default::default(),
            p_bit: Default::default(),
            sched_set: Default::default(),
            sched_clr: Default::default(),
            pool_n: k(POOL as u64),
            rcv_q: Fifo::new(),
            rcv: Default::default(),
            rcv_img: Default::default(),
            v_cqn: Default::default(),
            rcv_ep: Default::default(),
            qst_ram: RAM::default(),
            qst_peek: RAM::default(),
            qw_addr: Default::default(),
            qw_data: Default::default(),
            qw_lo: Default::default(),
            qw_en: Default::default(),
            cq_ram: RAM::default(),
            state: DFF::default(),
            rack: Default::default(),
            cqe: Default::default(),
            beats: Default::default(),
            wr_addr: Default::default(),
            wr_valid: Default::default(),
            wd_data: Default::default(),
            wd_last: Default::default(),
            wd_valid: Default::default(),
            n_naks: Default::default(),
            qerr_v: Default::default(),
            qerr_q: Default::default(),
            herr: Default::default(),
            h_bit: Default::default(),
            h_err: Default::default(),
            h_shift: Default::default(),
            q_err: Default::default(),
            n_bad_cq: Default::default(),
            n_cqes: Default::default(),
            a_qpn: Default::default(),
            a_syn: Default::default(),
            a_psn: Default::default(),
            una: Default::default(),
            err: Default::default(),
            new_una: Default::default(),
            adv: Default::default(),
            new_err: Default::default(),
            s_qpn: Default::default(),
            s_status: Default::default(),
            s_flags: Default::default(),
            s_wr_op: Default::default(),
            s_cqn: Default::default(),
            s_wrid: Default::default(),
            s_len: Default::default(),
            s_last: Default::default(),
            s_epoch: Default::default(),
            q_epoch: Default::default(),
            stale: Default::default(),
            since: Default::default(),
            acked: Default::default(),
            pass: Default::default(),
            pi_next: Default::default(),
            beats_next: Default::default(),
            status: Default::default(),
            want_cqe: Default::default(),
            cq_base: Default::default(),
            cq_log: Default::default(),
            cq_pi: Default::default(),
            slot: Default::default(),
            owner: Default::default(),
            wc_op: Default::default(),
            cqe_img: Default::default(),
            wd_free: Default::default(),
            qst_w: Default::default(),
            q_una: field_at(&QP_CTX, "una_psn"),
            q_init: field_at(&QP_CTX, "init_sq"),
            q_ep: field_at(&QP_CTX, "epoch"),
            q_retry: field_at(&QP_CTX, "retry_cnt"),
            q_rnr: field_at(&QP_CTX, "rnr_retry"),
            r_qpn: field_at(&RX_ACK, "qpn"),
            r_syn: field_at(&RX_ACK, "syndrome"),
            r_psn: field_at(&RX_ACK, "psn"),
            x_qpn: field_at(&SENT, "qpn"),
            x_status: field_at(&SENT, "status"),
            x_flags: field_at(&SENT, "flags"),
            x_wr_op: field_at(&SENT, "wr_opcode"),
            x_cqn: field_at(&SENT, "cqn"),
            x_wrid: field_at(&SENT, "wr_id"),
            x_len: field_at(&SENT, "byte_len"),
            x_last: field_at(&SENT, "last_psn"),
            x_epoch: field_at(&SENT, "epoch"),
            c_wrid: field_at(&CQE, "wr_id"),
            c_len: field_at(&CQE, "byte_len"),
            c_qpn: field_at(&CQE, "qpn"),
            c_op: field_at(&CQE, "opcode"),
            c_status: field_at(&CQE, "status"),
            c_owner: field_at(&CQE, "owner"),
            c_flags: field_at(&CQE, "wc_flags"),
            c_imm: field_at(&CQE, "imm_data"),
            c_src: field_at(&CQE, "src_qp"),
            c_epoch: field_at(&CQE, "epoch"),
            v_qpn: field_at(&RECV_DONE, "qpn"),
            v_status: field_at(&RECV_DONE, "status"),
            v_op: field_at(&RECV_DONE, "opcode"),
            v_flags: field_at(&RECV_DONE, "wc_flags"),
            v_cqn_at: field_at(&RECV_DONE, "cqn"),
            v_wrid: field_at(&RECV_DONE, "wr_id"),
            v_ep: field_at(&RECV_DONE, "epoch"),
            v_len: field_at(&RECV_DONE, "byte_len"),
            v_imm: field_at(&RECV_DONE, "imm_data"),
            v_src: field_at(&RECV_DONE, "src_qp"),
            wc_rnr: k(WC_RNR_RETRY_EXC_ERR.into()),
            nak_inv: k(AETH_NAK_INV_REQ.into()),
            nak_acc: k(AETH_NAK_REM_ACCESS.into()),
            nak_op: k(AETH_NAK_REM_OP.into()),
            wc_inv: k(WC_REM_INV_REQ_ERR.into()),
            wc_acc: k(WC_REM_ACCESS_ERR.into()),
            wc_rop: k(WC_REM_OP_ERR.into()),
            wc_flush: k(WC_WR_FLUSH_ERR.into()),
            lerr_on: k(LERR_ON as u64),
            one256: k(1),
            q_state: field_at(&QP_CTX, "state"),
            st_err: k(QP_STATE_ERR.into()),
            wr_codes: WR_TO_WC.iter().map(|p| k(p.0.into())).collect(),
            wc_codes: WR_TO_WC.iter().map(|p| k(p.1.into())).collect(),
            signaled: k(WQE_FLAG_SIGNALED.into()),
            cqe_len: k(CQE_LEN as u64),
            n_beats: k((CQE_W / DW) as u64),
            dw_shift: k(DW as u64 % CQE_W as u64),
            pi_clear: Constant::new(crate::util::bits_from_bools(&clear)),
        }
    }
}

impl<const DW: usize> Logic for Completer<DW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, state, rack, cqe, beats, wr_addr, wr_valid, wd_data, wd_last, wd_valid,
            n_naks, n_bad_cq, n_cqes, qerr_v, qerr_q, herr, rcv, retire_v, ret_q, ret_n, ret_s,
            fresh, sched, cur, cur_q, cur_head, cur_tail, cur_next, more, kq, qpw_d, swp, a_stale,
            a_pf, rew_v, rew_q, rew_ci, rew_psn, rew_pkts, t_mode, n_tmo, n_seq, n_rnr, n_rexc,
            una_v, una_q, una_p, n_ghost
        );
        // The timers: the QP table's timeouts; sets from the states below.
        self.tmr.clk.next = self.clk.val();
        self.tmr.rst.next = self.rst.val();
        self.tmr.s_qpw_en.next = self.s_qpw_en.val();
        self.tmr.s_qpw_index.next = self.s_qpw_index.val();
        self.tmr.s_qpw_data.next = self.s_qpw_data.val();
        self.tmr.s_set_en.next = false;
        self.tmr.s_set_qpn.next = self.cur_q.q.val();
        self.tmr.s_set_mode.next = self.md_ack.val();
        self.tmr.s_set_code.next = bits::<5>(0);
        self.tmr.s_exp_ready.next = false;
        // Each QP's retry limits, from the table's writes; read where the state is.
        self.prm.read_clock.next = self.clk.val();
        self.prm.write_clock.next = self.clk.val();
        self.prm.write_address.next = self.s_qpw_index.val();
        self.prm.write_data.next = bit_cast::<PRM_W, 3>(
            self.s_qpw_data
                .val()
                .get_bits::<3>(self.q_retry.val().index()),
        ) | (bit_cast::<PRM_W, 3>(
            self.s_qpw_data
                .val()
                .get_bits::<3>(self.q_rnr.val().index()),
        ) << 3);
        self.prm.write_enable.next = self.s_qpw_en.val();
        // A rewind for the requester: held until taken.
        self.m_rew_valid.next = self.rew_v.q.val();
        self.m_rew_qpn.next = self.rew_q.q.val();
        self.m_rew_ci.next = self.rew_ci.q.val();
        self.m_rew_psn.next = self.rew_psn.q.val();
        self.m_rew_pkts.next = self.rew_pkts.q.val();
        if self.m_rew_ready.val() {
            self.rew_v.d.next = false;
        }
        self.timeouts.next = self.n_tmo.q.val();
        self.seq_naks.next = self.n_seq.q.val();
        self.rnr_naks.next = self.n_rnr.q.val();
        self.retry_exc.next = self.n_rexc.q.val();
        self.m_qerr_valid.next = self.qerr_v.q.val();
        self.m_qerr_qpn.next = self.qerr_q.q.val();
        self.qerr_v.d.next = false;
        // The host's ERR: set by a context write with state ERR, cleared by an init_sq write.
        self.h_bit.next = self.one256.val() << self.s_qpw_index.val();
        if self.s_qpw_en.val() {
            if self
                .s_qpw_data
                .val()
                .get_bits::<1>(self.q_init.val().index())
                == bits::<1>(1)
            {
                self.herr.d.next = self.herr.q.val() & !self.h_bit.val();
            } else if self
                .s_qpw_data
                .val()
                .get_bits::<4>(self.q_state.val().index())
                == self.st_err.val()
            {
                self.herr.d.next = self.herr.q.val() | self.h_bit.val();
            }
        }
        self.sent_q.clk.next = self.clk.val();
        self.rcv_q.clk.next = self.clk.val();
        self.rcv_q.rst.next = self.rst.val();
        self.rcv_q.s_tdata.next = self.s_rcv_tdata.val();
        self.rcv_q.s_tvalid.next = self.s_rcv_tvalid.val();
        self.s_rcv_tready.next = self.rcv_q.s_tready.val();
        self.rcv_q.m_tready.next = false;
        self.sent_q.rst.next = self.rst.val();
        self.free_q.clk.next = self.clk.val();
        self.free_q.rst.next = self.rst.val();
        self.rdy_q.clk.next = self.clk.val();
        self.rdy_q.rst.next = self.rst.val();
        self.pool.read_clock.next = self.clk.val();
        self.pool.write_clock.next = self.clk.val();
        self.nxt.read_clock.next = self.clk.val();
        self.nxt.write_clock.next = self.clk.val();
        self.lst.read_clock.next = self.clk.val();
        self.lst.write_clock.next = self.clk.val();
        self.qpw_d.d.next = self.s_qpw_en.val();
        self.qst_ram.read_clock.next = self.clk.val();
        self.qst_ram.write_clock.next = self.clk.val();
        self.qst_peek.read_clock.next = self.clk.val();
        self.qst_peek.write_clock.next = self.clk.val();
        self.cq_ram.read_clock.next = self.clk.val();
        self.cq_ram.write_clock.next = self.clk.val();

        // Inputs and outputs.
        self.sent_q.s_tdata.next = self.s_sent_tdata.val();
        self.sent_q.s_tvalid.next = self.s_sent_tvalid.val();
        self.s_sent_tready.next = self.sent_q.s_tready.val();
        self.sent_q.m_tready.next = false;
        self.s_rack_tready.next = self.state.q.val() == CplState::Idle;
        // READ landings come second (a record per READ, after its bytes).
        self.s_rland_tready.next =
            (self.state.q.val() == CplState::Idle) & !self.s_rack_tvalid.val();
        self.m_wr_addr.next = self.wr_addr.q.val();
        self.m_wr_len.next = self.cqe_len.val();
        self.m_wr_tvalid.next = self.wr_valid.q.val();
        if self.m_wr_tready.val() {
            self.wr_valid.d.next = false;
        }
        self.m_wd_tdata.next = self.wd_data.q.val();
        self.m_wd_tlast.next = self.wd_last.q.val();
        self.m_wd_tvalid.next = self.wd_valid.q.val();
        self.wd_free.next = !self.wd_valid.q.val() | self.m_wd_tready.val();
        self.beats_next.next = self.beats.q.val() + bits::<4>(1);
        if self.m_wd_tready.val() {
            self.wd_valid.d.next = false;
        }
        self.naks.next = self.n_naks.q.val();
        self.bad_cq.next = self.n_bad_cq.q.val();
        self.cqes.next = self.n_cqes.q.val();

        // The received ACK.
        self.a_qpn.next = self.rack.q.val().get_bits::<QA>(self.r_qpn.val().index());
        self.a_syn.next = self.rack.q.val().get_bits::<8>(self.r_syn.val().index());
        self.a_psn.next = self.rack.q.val().get_bits::<24>(self.r_psn.val().index());
        // The request being looked at (the head of its QP's list).
        self.s_qpn.next = self.cur.q.val().get_bits::<24>(self.x_qpn.val().index());
        self.s_status.next = self.cur.q.val().get_bits::<8>(self.x_status.val().index());
        self.s_flags.next = self.cur.q.val().get_bits::<8>(self.x_flags.val().index());
        self.s_wr_op.next = self.cur.q.val().get_bits::<8>(self.x_wr_op.val().index());
        self.s_cqn.next = self.cur.q.val().get_bits::<16>(self.x_cqn.val().index());
        self.s_wrid.next = self.cur.q.val().get_bits::<64>(self.x_wrid.val().index());
        self.s_len.next = self.cur.q.val().get_bits::<32>(self.x_len.val().index());
        self.s_last.next = self.cur.q.val().get_bits::<24>(self.x_last.val().index());
        self.s_epoch.next = self.cur.q.val().get_bits::<8>(self.x_epoch.val().index());
        self.s_shared.next = self.cur.q.val().get_bit(self.x_shared.val().index());

        // Per-QP state and the CQ copy: the tables' writes, else this block's. Read at the
        // ACK's or the head request's QP (and CQ), the address held while it is worked on.
        self.qw_addr.next = self.s_qpw_index.val();
        self.qpw_res.next = self
            .s_qpw_data
            .val()
            .get_bits::<24>(self.q_una.val().index())
            - bits::<24>(1);
        self.qw_data.next = bit_cast::<QS_W, 24>(
            self.s_qpw_data
                .val()
                .get_bits::<24>(self.q_una.val().index()),
        ) | (bit_cast::<QS_W, 8>(
            self.s_qpw_data.val().get_bits::<8>(self.q_ep.val().index()),
        ) << 32)
            | (bit_cast::<QS_W, 24>(
                self.s_qpw_data
                    .val()
                    .get_bits::<24>(self.q_una.val().index()),
            ) << 40)
            | (bit_cast::<QS_W, 24>(self.qpw_res.val()) << 71);
        self.qw_en.next = self.s_qpw_en.val()
            & (self
                .s_qpw_data
                .val()
                .get_bits::<1>(self.q_init.val().index())
                == bits::<1>(1));
        self.cq_ram.write_address.next = self.s_cqw_index.val();
        self.cq_ram.write_data.next = self.s_cqw_data.val();
        self.cq_ram.write_enable.next = self.s_cqw_en.val();
        // What Idle takes, in this order: a received ACK, a READ landing, a receive
        // completion, a sent request (when the pool has an entry for it), a QP whose head may
        // retire (not while BAR0 writes: it may push to the same queue).
        self.can_alloc.next =
            (self.fresh.q.val() != self.pool_n.val()) | self.free_q.m_tvalid.val();
        self.take_rack.next = (self.state.q.val() == CplState::Idle) & self.s_rack_tvalid.val();
        self.take_rland.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & self.s_rland_tvalid.val();
        // A QP another engine failed: its requests flush (the Kick state waits for BAR0's
        // writes; a kick of a QP reset meanwhile finds nothing to flush).
        // A packet whose payload read failed: as a READ that failed at landing (the QP fails,
        // `una` stays), its PSN kept (`lerr`).
        self.take_pf.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & self.s_pfail_valid.val();
        self.s_pfail_ready.next = self.take_pf.val();
        self.pf_word.next = (bit_cast::<RACK_W, QA>(self.s_pfail_qpn.val()) << self.r_qpn.val())
            | (bit_cast::<RACK_W, 8>(self.s_pfail_epoch.val()) << self.r_ep.val())
            | (bit_cast::<RACK_W, 24>(self.s_pfail_psn.val()) << self.r_psn.val())
            | (bits::<RACK_W>(1) << self.r_read.val())
            | (bit_cast::<RACK_W, 8>(self.wc_gen.val()) << self.r_status.val());
        self.take_fail.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & !self.s_pfail_valid.val()
            & self.s_fail_valid.val();
        self.s_fail_ready.next = self.take_fail.val();
        self.f_still.next =
            (self.s_failed.val() & (self.one256.val() << self.s_fail_qpn.val())) != bits::<256>(0);
        self.take_tmo.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & !self.s_pfail_valid.val()
            & !self.take_fail.val()
            & self.tmr.m_exp_valid.val()
            & !self.s_qpw_en.val();
        self.take_rcv.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & !self.s_pfail_valid.val()
            & !self.take_fail.val()
            & !self.take_tmo.val()
            & self.rcv_q.m_tvalid.val();
        self.take_sent.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & !self.s_pfail_valid.val()
            & !self.take_fail.val()
            & !self.take_tmo.val()
            & !self.rcv_q.m_tvalid.val()
            & self.sent_q.m_tvalid.val()
            & self.can_alloc.val();
        self.take_rdy.next = (self.state.q.val() == CplState::Idle)
            & !self.s_rack_tvalid.val()
            & !self.s_rland_tvalid.val()
            & !self.s_pfail_valid.val()
            & !self.take_fail.val()
            & !self.take_tmo.val()
            & !self.rcv_q.m_tvalid.val()
            & !(self.sent_q.m_tvalid.val() & self.can_alloc.val())
            & self.rdy_q.m_tvalid.val()
            & !self.s_qpw_en.val();
        self.n_qpn.next = self
            .sent_q
            .m_tdata
            .val()
            .get_bits::<QA>(self.x_qpn.val().index());
        // The per-QP state and the QP's list: read at the QP being worked on (held while it
        // is), or at what Idle takes.
        self.qst_ram.read_address.next = self.cur_q.q.val();
        self.lst.read_address.next = self.cur_q.q.val();
        if self.state.q.val() == CplState::Ack {
            self.qst_ram.read_address.next = self.a_qpn.val();
            self.lst.read_address.next = self.a_qpn.val();
        }
        // A receive completion: its QP's state (the epoch), from when it is taken.
        if self.state.q.val() == CplState::Rcv {
            self.qst_ram.read_address.next =
                self.rcv.q.val().get_bits::<QA>(self.v_qpn.val().index());
        }
        if self.take_rcv.val() {
            self.qst_ram.read_address.next = self
                .rcv_q
                .m_tdata
                .val()
                .get_bits::<QA>(self.v_qpn.val().index());
        }
        if self.take_tmo.val() {
            self.qst_ram.read_address.next = self.tmr.m_exp_qpn.val();
            self.lst.read_address.next = self.tmr.m_exp_qpn.val();
        }
        if self.state.q.val() == CplState::Append {
            self.lst.read_address.next = self.n_qpn.val();
        }
        if self.take_rack.val() {
            self.qst_ram.read_address.next = self
                .s_rack_tdata
                .val()
                .get_bits::<QA>(self.r_qpn.val().index());
            self.lst.read_address.next = self
                .s_rack_tdata
                .val()
                .get_bits::<QA>(self.r_qpn.val().index());
        }
        if self.take_rland.val() {
            self.qst_ram.read_address.next = self
                .s_rland_tdata
                .val()
                .get_bits::<QA>(self.r_qpn.val().index());
            self.lst.read_address.next = self
                .s_rland_tdata
                .val()
                .get_bits::<QA>(self.r_qpn.val().index());
        }
        if self.take_pf.val() {
            self.qst_ram.read_address.next = self.s_pfail_qpn.val();
            self.lst.read_address.next = self.s_pfail_qpn.val();
        }
        if self.take_sent.val() {
            self.lst.read_address.next = self.n_qpn.val();
        }
        if self.take_rdy.val() {
            self.lst.read_address.next = self.rdy_q.m_tdata.val();
        }
        self.prm.read_address.next = self.qst_ram.read_address.val();
        // Where a payload read failed the QP: cleared by a reset (`init_sq`), set or cleared
        // by `Ack` when the QP's error is set (below).
        self.lerr.read_clock.next = self.clk.val();
        self.lerr.write_clock.next = self.clk.val();
        self.lerr.read_address.next = self.qst_ram.read_address.val();
        self.lerr.write_address.next = self.s_qpw_index.val();
        self.lerr.write_data.next = bits::<LERR_W>(0);
        self.lerr.write_enable.next = self.s_qpw_en.val()
            & (self
                .s_qpw_data
                .val()
                .get_bits::<1>(self.q_init.val().index())
                == bits::<1>(1));
        // What the requester has sent, per QP: read beside the QP's state.
        self.snd_ram.read_clock.next = self.clk.val();
        self.snd_ram.write_clock.next = self.clk.val();
        self.snd_ram.write_address.next = self.s_snd_qpn.val();
        self.snd_ram.write_data.next = bit_cast::<32, 24>(self.s_snd_psn.val())
            | (bit_cast::<32, 8>(self.s_snd_epoch.val()) << 24);
        self.snd_ram.write_enable.next = self.s_snd_en.val();
        self.snd_ram.read_address.next = self.qst_ram.read_address.val();
        self.ghosts.next = self.n_ghost.q.val();
        self.l_head.next = self.lst.read_data.val().get_bits::<PA>(0);
        self.l_tail.next = self.lst.read_data.val().get_bits::<PA>(9);
        self.l_ne.next = self.lst.read_data.val().get_bit(18);
        self.l_ret.next = self.lst.read_data.val().get_bits::<RC_W>(19);
        self.l_ret1.next = self.l_ret.val() + bits::<RC_W>(1);
        // The head entry: read at the list's head in HeadA, held after.
        self.pool.read_address.next = self.cur_head.q.val();
        self.nxt.read_address.next = self.cur_head.q.val();
        if (self.state.q.val() == CplState::HeadA) | (self.state.q.val() == CplState::TmoA) {
            self.pool.read_address.next = self.l_head.val();
            self.nxt.read_address.next = self.l_head.val();
        }
        // An entry for a request handed over: never used yet, else given back.
        self.alloc.next = self.free_q.m_tdata.val();
        if self.fresh.q.val() != self.pool_n.val() {
            self.alloc.next = self.fresh.q.val().get_bits::<PA>(0);
        }
        self.pool.write_address.next = self.alloc.val();
        self.pool.write_data.next = self.sent_q.m_tdata.val();
        self.pool.write_enable.next = self.state.q.val() == CplState::Append;
        self.nxt.write_address.next = self.l_tail.val();
        self.nxt.write_data.next = self.alloc.val();
        self.nxt.write_enable.next = (self.state.q.val() == CplState::Append) & self.l_ne.val();
        self.free_q.m_tready.next =
            (self.state.q.val() == CplState::Append) & (self.fresh.q.val() == self.pool_n.val());
        self.lw_addr.next = self.cur_q.q.val();
        self.lw_data.next = bits::<LST_W>(0);
        self.lw_en.next = false;
        self.retire.next = false;
        self.to_cqe.next = false;
        // The queue of QPs whose head may retire: a QP is in it at most once (`sched`), so
        // 256 entries never overflow. BAR0's QP writes push theirs (ERR, RESET, a new epoch
        // may retire the head); the Kick state pushes `kq` when BAR0 does not.
        self.hq_bit.next = self.one256.val() << self.s_qpw_index.val();
        self.hq_in.next = (self.sched.q.val() & self.hq_bit.val()) != bits::<256>(0);
        self.k_bit.next = self.one256.val() << self.kq.q.val();
        self.k_in.next = (self.sched.q.val() & self.k_bit.val()) != bits::<256>(0);
        self.p_bit.next = self.one256.val() << self.rdy_q.m_tdata.val();
        self.h_push.next = self.s_qpw_en.val() & !self.hq_in.val() & self.rdy_q.s_tready.val();
        self.k_push.next = (self.state.q.val() == CplState::Kick)
            & !self.s_qpw_en.val()
            & !self.k_in.val()
            & self.rdy_q.s_tready.val();
        self.rdy_q.s_tvalid.next = self.h_push.val() | self.k_push.val();
        self.rdy_q.s_tdata.next = self.kq.q.val();
        if self.s_qpw_en.val() {
            self.rdy_q.s_tdata.next = self.s_qpw_index.val();
        }
        self.rdy_q.m_tready.next = self.take_rdy.val();
        self.sched_set.next = bits::<256>(0);
        if self.h_push.val() {
            self.sched_set.next = self.hq_bit.val();
        }
        if self.k_push.val() {
            self.sched_set.next = self.k_bit.val();
        }
        self.sched_clr.next = bits::<256>(0);
        if self.take_rdy.val() {
            self.sched_clr.next = self.p_bit.val();
        }
        self.sched.d.next = (self.sched.q.val() & !self.sched_clr.val()) | self.sched_set.val();
        self.cq_ram.read_address.next = self.s_cqn.val().get_bits::<QA>(0);
        if self.state.q.val() == CplState::HeadB {
            self.cq_ram.read_address.next = self
                .pool
                .read_data
                .val()
                .get_bits::<QA>(self.x_cqn.val().index());
        }
        // A receive completion: its CQ is read from when it is taken.
        self.v_cqn.next = self.rcv.q.val().get_bits::<16>(self.v_cqn_at.val().index());
        self.rcv_ep.next = self.rcv.q.val().get_bits::<8>(self.v_ep.val().index());
        if self.state.q.val() == CplState::Rcv {
            self.cq_ram.read_address.next = self.v_cqn.val().get_bits::<QA>(0);
        }
        if self.take_rcv.val() {
            self.cq_ram.read_address.next = self
                .rcv_q
                .m_tdata
                .val()
                .get_bits::<QA>(self.v_cqn_at.val().index());
        }
        self.una.next = self.qst_ram.read_data.val().get_bits::<24>(0);
        self.err.next = self.qst_ram.read_data.val().get_bits::<8>(24);
        self.q_epoch.next = self.qst_ram.read_data.val().get_bits::<8>(32);
        self.rd_una.next = self.qst_ram.read_data.val().get_bits::<24>(40);
        self.cnt.next = self.qst_ram.read_data.val().get_bits::<CNT_W>(64);
        self.rd_res.next = self.qst_ram.read_data.val().get_bits::<24>(71);
        self.retries.next = self.cnt.val().get_bits::<3>(0);
        self.rnr_wait.next = self.cnt.val().get_bit(6);
        // An expiry that ends an RNR wait: the RNR timer's, or one at once that stands in for
        // it (put off while a rewind waited, or after the head retired).
        self.rnr_exp.next = (self.t_mode.q.val() == self.md_rnr.val())
            | ((self.t_mode.q.val() == self.md_now.val()) & self.rnr_wait.val());
        // The counts with the RNR wait over, and with a retry more.
        self.cnt0.next = self.cnt.val() & bits::<CNT_W>(0x3F);
        self.cnt1.next = self.cnt0.val() + bits::<CNT_W>(1);
        self.rnrs.next = self.cnt.val().get_bits::<3>(3);
        self.p_retry.next = self.prm.read_data.val().get_bits::<3>(0);
        self.p_rnr.next = self.prm.read_data.val().get_bits::<3>(3);
        self.a_read.next = self.rack.q.val().get_bit(88);
        self.a_ep.next = self.rack.q.val().get_bits::<8>(self.r_ep.val().index());
        self.a_lst.next = self.rack.q.val().get_bits::<8>(96);
        // The responder's word that a READ's responses skipped one: a sequence NAK of ours.
        self.a_gap.next = self.rack.q.val().get_bit(self.r_gap.val().index());
        // A request of an earlier epoch (sent before the QP's last RESET) completes silently.
        self.stale.next = self.s_epoch.val() != self.q_epoch.val();
        self.h_shift.next = self.one256.val() << self.s_qpn.val().get_bits::<QA>(0);
        self.h_err.next = (self.herr.q.val() & self.h_shift.val()) != bits::<256>(0);
        self.f_err.next = (self.s_failed.val() & self.h_shift.val()) != bits::<256>(0);
        self.q_err.next = self.err.val();
        if (self.err.val() == bits::<8>(0)) & (self.h_err.val() | self.f_err.val()) {
            self.q_err.next = self.wc_flush.val();
        }
        self.cq_base.next = self.cq_ram.read_data.val().get_bits::<64>(0);
        self.cq_log.next = self.cq_ram.read_data.val().get_bits::<5>(64);
        self.cq_pi.next = self.cq_ram.read_data.val().get_bits::<32>(96);

        // The answer's kind.
        self.a_is_rnr.next =
            !self.a_read.val() & (self.a_syn.val().get_bits::<3>(5) == bits::<3>(1));
        self.a_is_seq.next = !self.a_read.val() & (self.a_syn.val() == self.nak_seq.val());
        // An ACK moves `una` to its PSN + 1, a NAK to its PSN, never backwards; a fatal NAK
        // sets the QP's error.
        self.new_una.next = self.a_psn.val() + bits::<24>(1);
        if self.a_syn.val().get_bits::<3>(5) != bits::<3>(0) {
            self.new_una.next = self.a_psn.val();
        }
        // A READ that failed at landing moves nothing.
        if self.a_read.val() & (self.a_lst.val() != bits::<8>(0)) {
            self.new_una.next = self.una.val();
        }
        self.adv.next = self.new_una.val() - self.una.val();
        self.new_err.next = self.err.val();
        if self.err.val() == bits::<8>(0) {
            if self.a_syn.val() == self.nak_inv.val() {
                self.new_err.next = self.wc_inv.val();
            } else if self.a_syn.val() == self.nak_acc.val() {
                self.new_err.next = self.wc_acc.val();
            } else if self.a_syn.val() == self.nak_op.val() {
                self.new_err.next = self.wc_rop.val();
            } else if !self.a_read.val()
                & ((self.a_syn.val().get_bits::<3>(5) == bits::<3>(2))
                    | ((self.a_syn.val().get_bits::<3>(5) == bits::<3>(3))
                        & (self.a_syn.val().get_bits::<5>(0) > bits::<5>(3))))
            {
                // A reserved syndrome, or a NAK code IBA reserves (9.7.5.1, table 43): the
                // peer refused the request without saying how. As rxe: a remote operational
                // error, which fails the QP (it used to be taken as an ACK of nothing).
                self.new_err.next = self.wc_rop.val();
            } else if self.a_read.val() {
                // A READ's own error at landing (its status).
                self.new_err.next = self.a_lst.val();
            } else if self.a_is_rnr.val()
                & (self.p_rnr.val() != bits::<3>(7))
                & (self.rnrs.val() >= self.p_rnr.val())
            {
                // RNR NAK with the QP's `rnr_retry` used up (7: without end).
                self.new_err.next = self.wc_rnr.val();
            }
        }
        // An answer that names no request sent (IBA 9.7.5.1: a response's PSN must be that of
        // an outstanding request; rxe's `check_psn`): past the last PSN sent in the QP's epoch
        // (nothing sent in it: past `una`), a ghost (a stale ACK of the QP's last connection,
        // a bogus peer); a NAK behind `una`, stale (a reordered or duplicated one). Dropped
        // and counted: neither moves `una`, starts an RNR wait or fails the QP.
        self.snd_lim.next = self.una.val();
        if self.snd_ram.read_data.val().get_bits::<8>(24) == self.q_epoch.val() {
            self.snd_lim.next = self.snd_ram.read_data.val().get_bits::<24>(0);
        }
        self.ghost_gap.next = self.snd_lim.val() - bits::<24>(1) - self.a_psn.val();
        self.nak_back.next = self.a_psn.val() - self.una.val();
        self.ghost.next = !self.a_read.val()
            & !self.a_gap.val()
            & ((self.ghost_gap.val() >= bits::<24>(0x80_0000))
                | ((self.a_syn.val().get_bits::<3>(5) != bits::<3>(0))
                    & (self.nak_back.val() >= bits::<24>(0x80_0000))));
        // A READ landed: `rd_una` past it too (forward only).
        self.new_rd.next = self.rd_una.val();
        self.rd_adv.next = self.a_psn.val() - self.rd_una.val();
        if self.a_read.val()
            & (self.a_lst.val() == bits::<8>(0))
            & (self.rd_adv.val() < bits::<24>(0x80_0000))
        {
            self.new_rd.next = self.a_psn.val() + bits::<24>(1);
        }
        // What the answer says for the retry counts: one that moved `una` (an ACK, or a NAK
        // naming a later PSN) or `rd_una` (a landing) is progress and clears them; an RNR
        // NAK counts one.
        self.a_prog.next = ((self.adv.val() != bits::<24>(0))
            & (self.adv.val().get_bits::<1>(23) == bits::<1>(0)))
            | (self.new_rd.val() != self.rd_una.val());
        self.new_cnt.next = self.cnt.val();
        if self.a_prog.val() {
            self.new_cnt.next = bits::<CNT_W>(0);
        }
        if self.a_is_rnr.val() {
            self.new_cnt.next = ((self.new_cnt.val() + bits::<CNT_W>(8)) & bits::<CNT_W>(0x3F))
                | bits::<CNT_W>(0x40);
        }
        // A READ's skipped response: a retry at once, unless the last retry went on from
        // that PSN already (the responder tells once per missing response; a stream made
        // stale by a retry skips the same one).
        self.gap_go.next = self.a_gap.val() & (self.a_psn.val() != self.rd_res.val());
        self.qst_w.next = (bit_cast::<QS_W, 24>(self.rd_res.val()) << 71)
            | (bit_cast::<QS_W, CNT_W>(self.new_cnt.val()) << 64)
            | (bit_cast::<QS_W, 24>(self.new_rd.val()) << 40)
            | (bit_cast::<QS_W, 8>(self.q_epoch.val()) << 32)
            | (bit_cast::<QS_W, 8>(self.new_err.val()) << 24)
            | bit_cast::<QS_W, 24>(self.una.val());
        if (self.adv.val() != bits::<24>(0)) & (self.adv.val().get_bits::<1>(23) == bits::<1>(0)) {
            self.qst_w.next = (bit_cast::<QS_W, 24>(self.rd_res.val()) << 71)
                | (bit_cast::<QS_W, CNT_W>(self.new_cnt.val()) << 64)
                | (bit_cast::<QS_W, 24>(self.new_rd.val()) << 40)
                | (bit_cast::<QS_W, 8>(self.q_epoch.val()) << 32)
                | (bit_cast::<QS_W, 8>(self.new_err.val()) << 24)
                | bit_cast::<QS_W, 24>(self.new_una.val());
        }
        // The state as it is, retry counts and error aside (the retry states' writes).
        self.qst_keep.next = (bit_cast::<QS_W, 24>(self.rd_res.val()) << 71)
            | (bit_cast::<QS_W, 24>(self.rd_una.val()) << 40)
            | (bit_cast::<QS_W, 8>(self.q_epoch.val()) << 32)
            | bit_cast::<QS_W, 24>(self.una.val());

        // The head request: acknowledged when `una` is past its last PSN (mod 2^24).
        self.since.next = self.una.val() - bits::<24>(1) - self.s_last.val();
        // A READ or an atomic is done when its response has landed (an ACK past it means
        // nothing for its bytes).
        self.is_rd.next = (self.s_wr_op.val() == self.wr_rd.val())
            | (self.s_wr_op.val() == self.wr_cs.val())
            | (self.s_wr_op.val() == self.wr_fa.val());
        self.since_rd.next = self.rd_una.val() - bits::<24>(1) - self.s_last.val();
        self.acked.next = (self.since.val() < bits::<24>(0x80_0000))
            & (!self.is_rd.val() | (self.since_rd.val() < bits::<24>(0x80_0000)));
        // Where a retry of the head request starts: at `una` inside it, at its start for a
        // READ or an atomic (its response comes whole) or when `una` lies before it.
        self.s_first.next = self.cur.q.val().get_bits::<24>(self.x_first.val().index());
        self.s_sqi.next = self.cur.q.val().get_bits::<16>(self.x_sqi.val().index());
        self.r_off.next = self.una.val() - self.s_first.val();
        if self.is_rd.val() | (self.r_off.val().get_bits::<1>(23) == bits::<1>(1)) {
            self.r_off.next = bits::<24>(0);
        }
        // A READ whose responses have been landing (the responder's READ cursor is held at
        // a PSN inside it, in the QP's epoch) goes on from its first missing response (IBA
        // 9.7.4.1.4, as rxe): the requester asks for the rest of it at that PSN.
        self.m_rpk_qpn.next = self.cur_q.q.val();
        self.rx_exp.next = self.s_rpk_data.val().get_bits::<24>(0);
        self.rx_off.next = self.rx_exp.val() - self.s_first.val();
        self.s_span.next = self.s_last.val() - self.s_first.val();
        self.rd_head.next = self.s_wr_op.val() == self.wr_rd.val();
        self.rx_ok.next = self.rd_head.val()
            & self.s_rpk_data.val().get_bit(32)
            & (self.s_rpk_data.val().get_bits::<8>(24) == self.q_epoch.val())
            & (self.rx_off.val() != bits::<24>(0))
            & (self.rx_off.val() <= self.s_span.val());
        if self.rx_ok.val() {
            self.r_off.next = self.rx_off.val();
        }
        // ... and one that landed more since the last retry has made progress.
        self.rx_prog.next = self.rx_ok.val() & (self.rx_exp.val() != self.rd_res.val());
        self.rew_at.next = self.s_first.val() + self.r_off.val();
        self.qst_rew.next = (self.qst_keep.val() & !(bits::<QS_W>(0xFF_FFFF) << 71))
            | (bit_cast::<QS_W, 24>(self.rew_at.val()) << 71);
        // An answer past a READ or an atomic whose response has not come (an ACK of a later
        // request: `una` past the head's last PSN + 1; the peer sends responses in PSN order)
        // says the response was lost: a retry at once, as rxe's `check_psn`, not a timeout
        // that every later ACK puts off. Not when the READ cursor is past the head in the
        // QP's epoch (its response came and is landing), in an RNR wait, or when the last
        // retry went on from the same PSN already (the ACKs of the stream it made stale).
        self.rx_past.next = self.rx_exp.val() - bits::<24>(1) - self.s_last.val();
        self.rd_lost.next = self.is_rd.val()
            & (self.since.val() != bits::<24>(0))
            & (self.since.val() < bits::<24>(0x80_0000))
            & !((self.s_rpk_data.val().get_bits::<8>(24) == self.q_epoch.val())
                & (self.rx_past.val() < bits::<24>(0x80_0000)))
            & !self.rnr_wait.val()
            & (self.rew_at.val() != self.rd_res.val());
        // READ responses of the QP coming (landed or not, `s_rpk_data` bit 33) keep its ACK
        // timer from timing out (the peer is still sending, perhaps a stream a retry has
        // made stale and it has not cut yet, or READs ahead of the head's ACK).
        self.m_rpk_clr.next = false;
        // A QP failed with a status of its own (not yet given to a request): a request the
        // requester flushed takes it, as the first one flushed is the one it was sending when
        // the QP failed (it yields at its next packet), whose record it had not handed over.
        // A QP a failed payload read failed: the request holding the PSN where it failed
        // takes the error (GENERAL_ERR); one before it, not acknowledged, flushes without
        // using it up.
        self.err_real.next =
            (self.err.val() != bits::<8>(0)) & (self.err.val() != self.wc_flush.val());
        self.lp_on.next = self
            .lerr
            .read_data
            .val()
            .get_bit(self.lerr_on.val().index())
            & self.err_real.val();
        self.lp_cov.next = (self.lerr.read_data.val().get_bits::<LERR_PSN_W>(0)
            - self.s_first.val())
            <= self.s_span.val();
        self.lp_early.next = self.lp_on.val()
            & (self.s_status.val() == bits::<8>(0))
            & !self.acked.val()
            & !self.lp_cov.val();
        self.status.next = self.s_status.val();
        if self.s_status.val() == bits::<8>(0) {
            if self.acked.val() {
                self.status.next = bits::<8>(0);
                // After the request that took the QP's error, every one flushes, acknowledged
                // or not (an ACK can pass a READ whose response was lost; rxe flushes the
                // whole send queue once the QP is in error).
                if self.err.val() == self.wc_flush.val() {
                    self.status.next = self.wc_flush.val();
                }
            } else {
                self.status.next = self.q_err.val();
            }
        }
        if self.lp_early.val() {
            self.status.next = self.wc_flush.val();
        }
        if self.err_real.val() & (self.s_status.val() == self.wc_flush.val()) {
            self.status.next = self.err.val();
        }
        self.want_cqe.next = ((self.s_flags.val() & self.signaled.val()) != bits::<8>(0))
            | (self.status.val() != bits::<8>(0));
        self.slot.next = self.cq_pi.val() & ((bits::<32>(1) << self.cq_log.val()) - bits::<32>(1));
        self.pi_next.next = self.cq_pi.val() + bits::<32>(1);
        self.pass.next = self.cq_pi.val() >> self.cq_log.val();
        self.owner.next = bits::<1>(1);
        if (self.pass.val() & bits::<32>(1)) != bits::<32>(0) {
            self.owner.next = bits::<1>(0);
        }
        // The completion opcode of the request's opcode (`WR_TO_WC`).
        self.wc_op.next = bits::<8>(0);
        for i in 0..WR_N {
            if self.s_wr_op.val() == self.wr_codes[i].val() {
                self.wc_op.next = self.wc_codes[i].val();
            }
        }
        self.cqe_img.next = (bit_cast::<CQE_W, 64>(self.s_wrid.val()) << self.c_wrid.val())
            | (bit_cast::<CQE_W, 32>(self.s_len.val()) << self.c_len.val())
            | (bit_cast::<CQE_W, 24>(self.s_qpn.val()) << self.c_qpn.val())
            | (bit_cast::<CQE_W, 8>(self.wc_op.val()) << self.c_op.val())
            | (bit_cast::<CQE_W, 8>(self.status.val()) << self.c_status.val())
            | (bit_cast::<CQE_W, 8>(self.s_epoch.val()) << self.c_epoch.val())
            | (bit_cast::<CQE_W, 1>(self.owner.val()) << self.c_owner.val());
        self.rcv_img.next =
            (bit_cast::<CQE_W, 64>(self.rcv.q.val().get_bits::<64>(self.v_wrid.val().index()))
                << self.c_wrid.val())
                | (bit_cast::<CQE_W, 32>(
                    self.rcv.q.val().get_bits::<32>(self.v_len.val().index()),
                ) << self.c_len.val())
                | (bit_cast::<CQE_W, 24>(
                    self.rcv.q.val().get_bits::<24>(self.v_qpn.val().index()),
                ) << self.c_qpn.val())
                | (bit_cast::<CQE_W, 8>(self.rcv.q.val().get_bits::<8>(self.v_op.val().index()))
                    << self.c_op.val())
                | (bit_cast::<CQE_W, 8>(
                    self.rcv.q.val().get_bits::<8>(self.v_status.val().index()),
                ) << self.c_status.val())
                | (bit_cast::<CQE_W, 8>(
                    self.rcv.q.val().get_bits::<8>(self.v_flags.val().index()),
                ) << self.c_flags.val())
                | (bit_cast::<CQE_W, 32>(
                    self.rcv.q.val().get_bits::<32>(self.v_imm.val().index()),
                ) << self.c_imm.val())
                | (bit_cast::<CQE_W, 24>(
                    self.rcv.q.val().get_bits::<24>(self.v_src.val().index()),
                ) << self.c_src.val())
                | (bit_cast::<CQE_W, 8>(self.rcv_ep.val()) << self.c_epoch.val())
                | (bit_cast::<CQE_W, 1>(self.owner.val()) << self.c_owner.val());

        self.last1.next = self.s_last.val() + bits::<24>(1);
        // (Forward only: a READ behind it may have landed already.)
        self.rd_fwd.next = self.last1.val() - self.rd_una.val();
        self.rd_pass.next = !self.stale.val()
            & (self.s_status.val() == bits::<8>(0))
            & self.acked.val()
            & !self.is_rd.val()
            & (self.rd_fwd.val() != bits::<24>(0))
            & (self.rd_fwd.val() <= bits::<24>(0x80_0000))
            & (self.s_qpn.val().get_bits::<16>(8) == bits::<16>(0));
        self.qst_pass.next = (bit_cast::<QS_W, 24>(self.rd_res.val()) << 71)
            | (bit_cast::<QS_W, CNT_W>(self.cnt.val()) << 64)
            | (bit_cast::<QS_W, 24>(self.last1.val()) << 40)
            | (bit_cast::<QS_W, 8>(self.q_epoch.val()) << 32)
            | (bit_cast::<QS_W, 8>(self.err.val()) << 24)
            | bit_cast::<QS_W, 24>(self.una.val());
        // This QP has more requests after the one retired now.
        self.more_now.next = self.cur_head.q.val() != self.cur_tail.q.val();
        match self.state.q.val() {
            CplState::Idle => {
                self.a_stale.d.next = false;
                self.a_pf.d.next = false;
                if self.take_rack.val() {
                    self.rack.d.next = self.s_rack_tdata.val();
                    self.state.d.next = CplState::Ack;
                } else if self.take_rland.val() {
                    self.rack.d.next = self.s_rland_tdata.val();
                    self.state.d.next = CplState::Ack;
                } else if self.take_pf.val() {
                    self.rack.d.next = self.pf_word.val();
                    self.a_pf.d.next = true;
                    self.state.d.next = CplState::Ack;
                } else if self.take_fail.val() {
                    // Failed by another engine (and not reset since): the timer stops, the
                    // head is looked at (it flushes, and the rest after it).
                    if self.f_still.val() {
                        self.tmr.s_set_en.next = true;
                        self.tmr.s_set_qpn.next = self.s_fail_qpn.val();
                        self.tmr.s_set_mode.next = self.md_off.val();
                        self.kq.d.next = self.s_fail_qpn.val();
                        self.state.d.next = CplState::Kick;
                    }
                } else if self.take_tmo.val() {
                    self.tmr.s_exp_ready.next = true;
                    self.cur_q.d.next = self.tmr.m_exp_qpn.val();
                    self.t_mode.d.next = self.tmr.m_exp_mode.val();
                    self.state.d.next = CplState::TmoA;
                } else if self.take_rcv.val() {
                    self.rcv.d.next = self.rcv_q.m_tdata.val();
                    self.rcv_q.m_tready.next = true;
                    self.more.d.next = false;
                    self.state.d.next = CplState::Rcv;
                } else if self.take_sent.val() {
                    self.state.d.next = CplState::Append;
                } else if self.take_rdy.val() {
                    self.cur_q.d.next = self.rdy_q.m_tdata.val();
                    self.state.d.next = CplState::HeadA;
                }
            }
            CplState::Init => {
                // After reset: every QP's list empty.
                self.lw_addr.next = self.swp.q.val().get_bits::<QA>(0);
                self.lw_en.next = true;
                self.swp.d.next = self.swp.q.val() + bits::<9>(1);
                if self.swp.q.val() == bits::<9>(255) {
                    self.state.d.next = CplState::Idle;
                }
            }
            CplState::Ack => {
                // An answer taken before a RESET of its QP (a write with `init_sq`) belongs
                // to the QP's last life: dropped.
                if self.s_qpw_en.val()
                    & (self.s_qpw_index.val() == self.a_qpn.val())
                    & (self
                        .s_qpw_data
                        .val()
                        .get_bits::<1>(self.q_init.val().index())
                        == bits::<1>(1))
                {
                    self.a_stale.d.next = true;
                }
                // (Not in the cycle after a BAR0 write either: the state read may predate it.)
                if self.a_stale.q.val() & !self.s_qpw_en.val() {
                    self.state.d.next = CplState::Idle;
                } else if !self.s_qpw_en.val() & !self.qpw_d.q.val() & self.ghost.val() {
                    self.n_ghost.d.next = self.n_ghost.q.val() + bits::<32>(1);
                    self.state.d.next = CplState::Idle;
                } else if !self.s_qpw_en.val()
                    & !self.qpw_d.q.val()
                    & self.a_read.val()
                    & (self.a_ep.val() != self.q_epoch.val())
                {
                    // A READ's landing, or a payload read's failure, of the QP's last life
                    // (reported after its reset): nothing of its new life.
                    self.state.d.next = CplState::Idle;
                } else if !self.s_qpw_en.val() & !self.qpw_d.q.val() {
                    if (self.a_syn.val().get_bits::<3>(5) != bits::<3>(0)) & !self.a_gap.val() {
                        self.n_naks.d.next = self.n_naks.q.val() + bits::<32>(1);
                    }
                    if self.a_is_seq.val() & !self.a_gap.val() {
                        self.n_seq.d.next = self.n_seq.q.val() + bits::<32>(1);
                    }
                    if self.a_is_rnr.val() {
                        self.n_rnr.d.next = self.n_rnr.q.val() + bits::<32>(1);
                    }
                    // The QP's timer, while it has requests out: off when the answer fails
                    // the QP; an RNR wait for an RNR NAK; a retry at once for a sequence NAK;
                    // started again on progress.
                    self.tmr.s_set_qpn.next = self.a_qpn.val();
                    if self.l_ne.val() & (self.err.val() == bits::<8>(0)) {
                        if self.new_err.val() != bits::<8>(0) {
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_off.val();
                            if self.a_is_rnr.val() {
                                self.n_rexc.d.next = self.n_rexc.q.val() + bits::<32>(1);
                            }
                        } else if self.a_is_rnr.val() {
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_rnr.val();
                            self.tmr.s_set_code.next = self.a_syn.val().get_bits::<5>(0);
                        } else if self.a_is_seq.val()
                            & (self.a_prog.val() | !self.rnr_wait.val())
                            & (!self.a_gap.val() | self.gap_go.val())
                        {
                            // (Not in an RNR wait at the NAKed PSN: the packets behind the
                            // RNR NAKed one meet a sequence error at the peer too.)
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_now.val();
                        } else if self.a_prog.val() {
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_ack.val();
                        }
                    }
                    self.qw_addr.next = self.a_qpn.val();
                    self.qw_data.next = self.qst_w.val();
                    self.qw_en.next = true;
                    // With the QP's first error: where a payload read failed it, if that is
                    // the error.
                    if self.err.val() == bits::<8>(0) {
                        self.lerr.write_address.next = self.a_qpn.val();
                        self.lerr.write_data.next =
                            bit_cast::<LERR_W, LERR_PSN_W>(self.a_psn.val())
                                | (bits::<LERR_W>(1) << self.lerr_on.val());
                        self.lerr.write_enable.next = true;
                        if !self.a_pf.q.val() {
                            self.lerr.write_data.next = bits::<LERR_W>(0);
                        }
                    }
                    // A fatal NAK fails the QP: the requester stops sending for it.
                    self.qerr_v.d.next =
                        (self.err.val() == bits::<8>(0)) & (self.new_err.val() != bits::<8>(0));
                    self.qerr_q.d.next = self.a_qpn.val();
                    // The QP's head may retire now.
                    self.kq.d.next = self.a_qpn.val();
                    self.state.d.next = CplState::Idle;
                    if self.l_ne.val() {
                        self.state.d.next = CplState::Kick;
                    }
                }
            }
            CplState::Kick => {
                if !self.s_qpw_en.val() & self.rdy_q.s_tready.val() {
                    self.state.d.next = CplState::Idle;
                }
            }
            CplState::Append => {
                // The request to the pool, at the tail of its QP's list.
                self.sent_q.m_tready.next = true;
                if self.fresh.q.val() != self.pool_n.val() {
                    self.fresh.d.next = self.fresh.q.val() + bits::<10>(1);
                }
                self.lw_addr.next = self.n_qpn.val();
                self.lw_en.next = true;
                self.lw_data.next = (bit_cast::<LST_W, RC_W>(self.l_ret.val()) << 19)
                    | bits::<LST_W>(0x40000)
                    | (bit_cast::<LST_W, PA>(self.alloc.val()) << 9)
                    | bit_cast::<LST_W, PA>(self.l_head.val());
                self.state.d.next = CplState::Idle;
                if !self.l_ne.val() {
                    // A new head: look at it.
                    self.lw_data.next = (bit_cast::<LST_W, RC_W>(self.l_ret.val()) << 19)
                        | bits::<LST_W>(0x40000)
                        | (bit_cast::<LST_W, PA>(self.alloc.val()) << 9)
                        | bit_cast::<LST_W, PA>(self.alloc.val());
                    self.kq.d.next = self.n_qpn.val();
                    self.state.d.next = CplState::Kick;
                    // Requests out: the QP's ACK timer runs.
                    self.tmr.s_set_en.next = true;
                    self.tmr.s_set_qpn.next = self.n_qpn.val();
                    self.tmr.s_set_mode.next = self.md_ack.val();
                }
            }
            CplState::HeadA => {
                self.state.d.next = CplState::Idle;
                if self.l_ne.val() {
                    self.cur_head.d.next = self.l_head.val();
                    self.cur_tail.d.next = self.l_tail.val();
                    self.state.d.next = CplState::HeadB;
                }
            }
            CplState::HeadB => {
                self.cur.d.next = self.pool.read_data.val();
                self.cur_next.d.next = self.nxt.read_data.val();
                self.state.d.next = CplState::Sent;
            }
            CplState::Sent => {
                // (Not while BAR0 writes the QP table, nor in the cycle after: the state read
                // may predate the write.)
                if !self.s_qpw_en.val() & !self.qpw_d.q.val() & self.free_q.s_tready.val() {
                    // A request other than a READ retiring done: `rd_una` follows it (no READ
                    // before it is outstanding), so it never falls 2^23 PSNs behind.
                    if self.rd_pass.val() {
                        self.qw_addr.next = self.s_qpn.val().get_bits::<QA>(0);
                        self.qw_data.next = self.qst_pass.val();
                        self.qw_en.next = true;
                    }
                    if self.stale.val() {
                        self.retire.next = true;
                    } else if (self.s_status.val() == bits::<8>(0))
                        & !self.acked.val()
                        & (self.q_err.val() == bits::<8>(0))
                    {
                        // Not yet: an ACK, a landing or a BAR0 write for the QP brings it
                        // back. A READ's or an atomic's lost response: a retry at once.
                        self.state.d.next = CplState::Idle;
                        if self.rd_lost.val() {
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_now.val();
                        }
                    } else if !self.want_cqe.val() {
                        self.retire.next = true;
                    } else if self.s_cqn.val().get_bits::<8>(8) != bits::<8>(0) {
                        self.n_bad_cq.d.next = self.n_bad_cq.q.val() + bits::<32>(1);
                        self.retire.next = true;
                    } else if !self.wr_valid.q.val() & !self.s_cqw_en.val() {
                        self.retire.next = true;
                        self.to_cqe.next = true;
                        self.wr_addr.d.next =
                            self.cq_base.val() + (bit_cast::<64, 32>(self.slot.val()) << 5);
                        self.wr_valid.d.next = true;
                        self.cqe.d.next = self.cqe_img.val();
                        self.beats.d.next = bits::<4>(0);
                        self.cq_ram.write_address.next = self.s_cqn.val().get_bits::<QA>(0);
                        self.cq_ram.write_data.next = (self.cq_ram.read_data.val()
                            & self.pi_clear.val())
                            | (bit_cast::<CQS_W, 32>(self.pi_next.val()) << 96);
                        self.cq_ram.write_enable.next = true;
                        // A failed request flushes the QP's later ones.
                        if ((self.s_status.val() == bits::<8>(0))
                            & !self.acked.val()
                            & !self.lp_early.val())
                            | (self.err_real.val() & (self.s_status.val() == self.wc_flush.val()))
                        {
                            self.qw_addr.next = self.s_qpn.val().get_bits::<QA>(0);
                            self.qw_data.next = (bit_cast::<QS_W, 24>(self.rd_res.val()) << 71)
                                | (bit_cast::<QS_W, CNT_W>(self.cnt.val()) << 64)
                                | (bit_cast::<QS_W, 24>(self.rd_una.val()) << 40)
                                | (bit_cast::<QS_W, 8>(self.q_epoch.val()) << 32)
                                | (bit_cast::<QS_W, 8>(self.wc_flush.val()) << 24)
                                | bit_cast::<QS_W, 24>(self.una.val());
                            self.qw_en.next = true;
                        }
                        self.n_cqes.d.next = self.n_cqes.q.val() + bits::<32>(1);
                    }
                    if self.retire.val() {
                        // Off the QP's list, the entry given back; the QP's next request is
                        // looked at after this one's CQE.
                        self.lw_en.next = true;
                        self.lw_data.next = bit_cast::<LST_W, RC_W>(self.l_ret1.val()) << 19;
                        if self.more_now.val() {
                            self.lw_data.next = (bit_cast::<LST_W, RC_W>(self.l_ret1.val()) << 19)
                                | bits::<LST_W>(0x40000)
                                | (bit_cast::<LST_W, PA>(self.cur_tail.q.val()) << 9)
                                | bit_cast::<LST_W, PA>(self.cur_next.q.val());
                        }
                        self.ret_q.d.next = self.cur_q.q.val();
                        self.ret_n.d.next = self.l_ret1.val();
                        self.ret_s.d.next = self.s_shared.val();
                        self.more.d.next = self.more_now.val();
                        self.kq.d.next = self.cur_q.q.val();
                        // Nothing out any more: the QP's timer stops.
                        if !self.more_now.val() {
                            self.tmr.s_set_en.next = true;
                            self.tmr.s_set_mode.next = self.md_off.val();
                        }
                        if self.to_cqe.val() {
                            self.state.d.next = CplState::Cqe;
                        } else if self.more_now.val() {
                            self.state.d.next = CplState::Kick;
                        } else {
                            self.state.d.next = CplState::Idle;
                        }
                    }
                }
            }
            CplState::TmoA => {
                // A timer fired (it is off now): the QP's list and state are read.
                self.state.d.next = CplState::Idle;
                if self.l_ne.val() {
                    self.cur_head.d.next = self.l_head.val();
                    self.cur_tail.d.next = self.l_tail.val();
                    self.state.d.next = CplState::TmoB;
                }
            }
            CplState::TmoB => {
                self.cur.d.next = self.pool.read_data.val();
                self.cur_next.d.next = self.nxt.read_data.val();
                self.state.d.next = CplState::TmoC;
            }
            CplState::TmoC => {
                // The head request decides (not while BAR0 writes the QP table, nor in the
                // cycle after).
                if !self.s_qpw_en.val() & !self.qpw_d.q.val() {
                    self.state.d.next = CplState::Idle;
                    self.kq.d.next = self.cur_q.q.val();
                    self.tmr.s_set_en.next = true;
                    if self.q_err.val() != bits::<8>(0) {
                        // Failed already: the head retires with the error, the rest flush.
                        self.tmr.s_set_mode.next = self.md_off.val();
                        self.state.d.next = CplState::Kick;
                    } else if self.stale.val() | self.acked.val() {
                        // Done, or of the QP's last life: it retires; the timer goes on. A
                        // retry at once or an RNR wait over is for the next head: at once.
                        if self.t_mode.q.val() != self.md_ack.val() {
                            self.tmr.s_set_mode.next = self.md_now.val();
                        }
                        self.state.d.next = CplState::Kick;
                    } else if self.rew_v.q.val() {
                        // The requester has not taken the last rewind: again at the next scan.
                        self.tmr.s_set_mode.next = self.md_now.val();
                    } else if (self.t_mode.q.val() == self.md_ack.val())
                        & self.s_rpk_data.val().get_bit(33)
                    {
                        // READ responses of the QP still come: not a timeout (a head READ's
                        // are coming, or the peer holds the head's ACK until the READ
                        // responses before it have gone); the timer again, the responses
                        // counted from now.
                        self.m_rpk_clr.next = true;
                    } else if !self.rnr_exp.val()
                        & (self.retries.val() >= self.p_retry.val())
                        & !self.rx_prog.val()
                    {
                        // `retry_cnt` used up: the QP fails, the head with RETRY_EXC_ERR.
                        self.tmr.s_set_mode.next = self.md_off.val();
                        self.qw_addr.next = self.cur_q.q.val();
                        self.qw_data.next = self.qst_keep.val()
                            | (bit_cast::<QS_W, CNT_W>(self.cnt.val()) << 64)
                            | (bit_cast::<QS_W, 8>(self.wc_rexc.val()) << 24);
                        self.qw_en.next = true;
                        self.qerr_v.d.next = true;
                        self.qerr_q.d.next = self.cur_q.q.val();
                        self.n_rexc.d.next = self.n_rexc.q.val() + bits::<32>(1);
                        if self.t_mode.q.val() == self.md_ack.val() {
                            self.n_tmo.d.next = self.n_tmo.q.val() + bits::<32>(1);
                        }
                        self.state.d.next = CplState::Kick;
                    } else {
                        // Go back N: the requester sends again from the first PSN not
                        // acknowledged, in the head request (responses counted from now).
                        self.m_rpk_clr.next = true;
                        self.rew_v.d.next = true;
                        self.rew_q.d.next = self.cur_q.q.val();
                        self.rew_ci.d.next = self.s_sqi.val();
                        self.rew_psn.d.next = self.rew_at.val();
                        self.rew_pkts.d.next = self.r_off.val();
                        // A retry counts, an RNR wait ends; the point it goes on from is kept.
                        self.qw_addr.next = self.cur_q.q.val();
                        self.qw_data.next =
                            self.qst_rew.val() | (bit_cast::<QS_W, CNT_W>(self.cnt0.val()) << 64);
                        if !self.rnr_exp.val() {
                            self.qw_data.next = self.qst_rew.val()
                                | (bit_cast::<QS_W, CNT_W>(self.cnt1.val()) << 64);
                        }
                        if self.rx_prog.val() {
                            // A READ that landed more since the last retry: progress, this
                            // retry the first.
                            self.qw_data.next = self.qst_rew.val()
                                | (bit_cast::<QS_W, CNT_W>(bits::<CNT_W>(1)) << 64);
                        }
                        self.qw_en.next = true;
                        if self.t_mode.q.val() == self.md_ack.val() {
                            self.n_tmo.d.next = self.n_tmo.q.val() + bits::<32>(1);
                        }
                    }
                }
            }
            CplState::Rcv => {
                // A receive completion: a CQE, to the QP's receive CQ; none for one made
                // before the host last reset the QP (its epoch earlier than the QP's: the
                // host counts the receive queue from the reset). The QP's state is read
                // again after a BAR0 write of the QP table.
                if self.v_cqn.val().get_bits::<8>(8) != bits::<8>(0) {
                    self.n_bad_cq.d.next = self.n_bad_cq.q.val() + bits::<32>(1);
                    self.state.d.next = CplState::Idle;
                } else if !self.s_qpw_en.val()
                    & !self.qpw_d.q.val()
                    & (self.rcv_ep.val() != self.q_epoch.val())
                {
                    self.state.d.next = CplState::Idle;
                } else if !self.wr_valid.q.val()
                    & !self.s_cqw_en.val()
                    & !self.s_qpw_en.val()
                    & !self.qpw_d.q.val()
                {
                    self.wr_addr.d.next =
                        self.cq_base.val() + (bit_cast::<64, 32>(self.slot.val()) << 5);
                    self.wr_valid.d.next = true;
                    self.cqe.d.next = self.rcv_img.val();
                    self.beats.d.next = bits::<4>(0);
                    self.cq_ram.write_address.next = self.v_cqn.val().get_bits::<QA>(0);
                    self.cq_ram.write_data.next = (self.cq_ram.read_data.val()
                        & self.pi_clear.val())
                        | (bit_cast::<CQS_W, 32>(self.pi_next.val()) << 96);
                    self.cq_ram.write_enable.next = true;
                    self.n_cqes.d.next = self.n_cqes.q.val() + bits::<32>(1);
                    self.state.d.next = CplState::Cqe;
                }
            }
            CplState::Cqe => {
                if self.wd_free.val() {
                    self.wd_valid.d.next = true;
                    self.wd_data.d.next = self.cqe.q.val().get_bits::<DW>(0);
                    self.cqe.d.next = self.cqe.q.val() >> self.dw_shift.val();
                    self.beats.d.next = self.beats_next.val();
                    self.wd_last.d.next = false;
                    if self.beats_next.val() == self.n_beats.val() {
                        self.wd_last.d.next = true;
                        self.state.d.next = CplState::Idle;
                        if self.more.q.val() {
                            self.state.d.next = CplState::Kick;
                        }
                    }
                }
            }
        }
        // A retired entry goes back to the free list, and a pulse to the requester's count.
        self.free_q.s_tdata.next = self.cur_head.q.val();
        self.free_q.s_tvalid.next = self.retire.val();
        self.lst.write_address.next = self.lw_addr.val();
        self.lst.write_data.next = self.lw_data.val();
        self.lst.write_enable.next = self.lw_en.val();
        self.retire_v.d.next = self.retire.val();
        self.m_ret_valid.next = self.retire_v.q.val();
        self.m_ret_qpn.next = self.ret_q.q.val();
        self.m_ret_count.next = self.ret_n.q.val();
        self.m_ret_shared.next = self.ret_s.q.val();
        // The per-QP state and its copy for QUERY take the same writes.
        self.qst_ram.write_address.next = self.qw_addr.val();
        self.qst_ram.write_data.next = self.qw_data.val();
        self.qst_ram.write_enable.next = self.qw_en.val();
        self.qst_peek.write_address.next = self.qw_addr.val();
        self.qw_lo.next = self.qw_data.val().get_bits::<QST_W>(0);
        self.qst_peek.write_data.next = self.qw_lo.val();
        self.qst_peek.write_enable.next = self.qw_en.val();
        self.qst_peek.read_address.next = self.s_peek_index.val();
        self.m_peek_cpl.next = self.qst_peek.read_data.val();
        self.una_v.d.next = self.qw_en.val();
        self.una_q.d.next = self.qw_addr.val();
        self.una_p.d.next = self.qw_data.val().get_bits::<24>(0);
        self.m_una_en.next = self.una_v.q.val();
        self.m_una_qpn.next = self.una_q.q.val();
        self.m_una_psn.next = self.una_p.q.val();
        // A rewind not yet taken whose QP the host resets (`init_sq`) is of its last life:
        // dropped, so it never sets the send state of the next (the requester takes none in
        // the cycle of a BAR0 write; one set now is for `cur_q`).
        self.rew_gone.next = self.s_qpw_en.val()
            & self.s_qpw_data.val().get_bit(self.q_init.val().index())
            & ((self.rew_v.q.val() & (self.s_qpw_index.val() == self.rew_q.q.val()))
                | (!self.rew_v.q.val() & (self.s_qpw_index.val() == self.cur_q.q.val())));
        if self.rew_gone.val() {
            self.rew_v.d.next = false;
        }
        if self.rst.val() {
            self.una_v.d.next = false;
            self.state.d.next = CplState::Init;
            self.swp.d.next = bits::<9>(0);
            self.fresh.d.next = bits::<10>(0);
            self.sched.d.next = bits::<256>(0);
            self.qerr_v.d.next = false;
            self.retire_v.d.next = false;
            self.herr.d.next = bits::<256>(0);
            self.wr_valid.d.next = false;
            self.wd_valid.d.next = false;
            self.n_naks.d.next = bits::<32>(0);
            self.n_bad_cq.d.next = bits::<32>(0);
            self.n_cqes.d.next = bits::<32>(0);
            self.rew_v.d.next = false;
            self.n_tmo.d.next = bits::<32>(0);
            self.n_seq.d.next = bits::<32>(0);
            self.n_rnr.d.next = bits::<32>(0);
            self.n_rexc.d.next = bits::<32>(0);
            self.n_ghost.d.next = bits::<32>(0);
        }
    }
}
