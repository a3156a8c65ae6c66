//! `Requester`: the RC send path from doorbell to packets. Doorbells name a QP with work; a
//! scheduler visits QPs round robin, one work request per visit; the WQE is fetched from the
//! send queue ring by DMA (128 bytes: the header and up to four SGEs), and an RDMA WRITE or a
//! SEND, with or without immediate, of its SGEs' bytes in order is cut at the path MTU into
//! FIRST / MIDDLE / LAST or ONLY packets (a WRITE's RETH on the first, the ImmDt on the last,
//! AckReq on the last and on every 64th PSN (`spec::headers::ACKREQ_PSN_MASK`), SE on the last when the WQE asks, one PSN each), each a `TX_META` record
//! and one DMA read per SGE piece of its payload, joined again by a `Gather`. The payload
//! reads are issued ahead of the wire, as far as the DMA read engine's tags and a 16-record
//! queue allow, so the read latency is hidden.
//! Every work request, sent or refused, leaves one `SENT` record for the completer, in Done
//! (so the completer's ACK timer covers a message from its last packet, whatever this NIC's
//! own scheduling held it back before), or earlier if its window stops it; `rec_ci` in the
//! send state (the first WQE without a record) keeps a WQE fetched again, after a yield or in
//! a retry, from sending a second.
//!
//! Window: a QP sends a request packet only while fewer than `MAX_UNACKED_PSNS` of its PSNs
//! past `una` (the completer's oldest unacknowledged PSN, copied per QP from `s_una_*`) are
//! out: Check passes over a QP a window ahead (queued again, no WQE fetch), and one that
//! reaches the window's end mid-message yields (`win_stops`), its `SENT` record handed over
//! then so the completer times the message (the peer holds it, not this NIC).
//!
//! RDMA READ: a READ WQE (its SGEs checked for local write) is one READ REQUEST packet (RETH,
//! no payload) taking a PSN per response packet; when done, its send-queue index and first
//! PSN go to the responder as the QP's next READ slot (`m_rslot_*`). A READ rewound to
//! `sq_pkts` responses past its start (they landed) asks for the rest: the request at its
//! first PSN plus `sq_pkts`, its RETH's address and length past those bytes. A QP with
//! `MAX_RD_ATOMIC` READs not yet landed (`s_rl_*`: the responder's count) waits. READ jobs
//! from the responder (`s_rj_*`, `spec::meta::READ_JOB`: a READ request it accepted) are
//! served in turn with the QPs: READ RESPONSE FIRST/MIDDLE/LAST/ONLY packets cut at the PMTU
//! from host memory, AETH on the first and last, through the same record queue, DMA reads,
//! `Gather` and credits; `m_rdone_*` says when a job's last record has left. A job yields
//! between packets, as a QP does, when it has sent `QUANTUM` or has had no credit for
//! `CREDIT_WAIT` cycles while a QP or a rewind waits: `JobPark` holds it, and it is taken
//! back before any new job (so one job at most is begun, and each QP's responses stay in
//! order). A job marked
//! `dup` (a request the responder had taken before) makes the QP's jobs ahead of it stale:
//! the one being sent (or parked) ends at its next packet unless the duplicate asks for a
//! later PSN or for the same READ whole, those queued send one packet each (counter `cuts`).
//! See docs/ARCHITECTURE.md, "RDMA READ".
//!
//! Ports:
//! - `s_db_{qpn,pi,tvalid,tready}`: doorbells from BAR0 (QP number, SQ producer index).
//! - `s_qpw_{en,index,data}`: the QP table's write-through (`Bar0::m_qpw_*`); this block keeps
//!   its own copy of every QP context, equal to the table.
//! - `s_mrw_{en,index,data}`: the MR table's write-through (`Bar0::m_mrw_*`), for the key check;
//!   `s_mr_gen`: BAR0's count of those writes (`Bar0::m_mr_gen`).
//! - `s_failed`: a bit per QP any engine failed (`QpFail`); `m_fail_{valid,qpn,local}`: this
//!   block's reports, a pulse when a local error (a WQE refused, its fetch failed; `local`)
//!   or a READ response refused on its second check fails a QP.
//! - `m_pfail_{valid,ready,qpn,psn}`: a request packet whose payload read failed (its frame
//!   marked bad and dropped by the MAC's queues), the first of its QP since its last reset: to
//!   the completer, which fails the QP and gives the work request holding the PSN
//!   GENERAL_ERR. `m_rfail_{valid,ready,qpn,psn}`: the same for a READ response, to the
//!   responder, which NAKs the PSN remote operational error and fails the QP. Either way the
//!   QP is poisoned here at once: its later packets still being read are marked bad too, and
//!   it yields at its next packet boundary. A read issued before its QP's reset (each read
//!   carries the QP's epoch) fails nothing when it comes back: its packet is dropped.
//! - `m_quiet`: a deregistration's fence (with the responder's `m_held`): no work in hand is
//!   under a check from before the last MR table write, and every payload read issued before
//!   it (or after it, to finish a packet begun) has had its bytes back. Counter
//!   `rsp_refused`: READ response jobs refused on their second check.
//! - `m_snd_{en,qpn,psn,epoch}`: every new request packet (not one sent again in a retry):
//!   the PSN after it and the QP's epoch, so the completer drops answers to PSNs never sent.
//! - `local_mac`, `local_ipv4`: the port's addresses, for the packets' source fields.
//! - `m_rd_{addr,len,tvalid,tready}` / `s_rd_*`: commands to and bytes from `DmaRead`
//!   (in command order, `tuser` on a last beat = the read failed).
//! - `m_meta_*`, `m_pay_*`: one `TX_META` record and one payload packet per packet, to `TxFrame`
//!   (`m_pay_tuser` on its last beat: a read of its bytes failed, the frame must not go out).
//! - `m_sent_*`: one `spec::meta::SENT` record per work request, in send order.
//! - `s_rj_*` (READ jobs in), `s_dup_{valid,qpn,psn}` (a duplicate's job went into the
//!   responder's pool: the QP's jobs ahead of it are stale), `m_rdone_{valid,qpn,seq}` (a job's last record gone, its
//!   sequence number), `m_rslot_{en,addr,data}` (READ slots, `READ_SLOT`), `s_rl_*` (a READ
//!   landed: the QP's new count); counter `reads` (READ requests sent).
//! - `s_una_{en,qpn,psn}`: the completer's QP state writes, for the window; counter
//!   `win_stops` (a QP stopped mid-message at its window).
//! - `s_ret_{valid,qpn,count,shared}`: the completer took a `SENT` record off its pool (the
//!   QP's count of records retired, and whether the record held a shared entry). Each QP
//!   has its share of the pool: the entry reserved for it when it has no record out, and up to
//!   `SENT_PER_QP` in all while the pool's shared half has room. A WQE is started only with
//!   room in its QP's share for its record (`pool_waits` counts the QPs passed over for want of
//!   it), so Done never waits long, READ jobs are always served, and a QP whose peer never
//!   answers holds only its share: every other QP can always hand over a work request.
//! - `tx_used` in (`TxQueues::used`), `tx_cap` in (the beats of each transmit queue this block
//!   may fill), `m_rsv` out (`TxQueues::rsv_a`): credits, below.
//! - counters `yields` (a QP set aside mid-message for want of credit), `bad_db` (doorbell for
//!   a QP number the NIC does not have), `bad_qp` (a QP in RTS with a path MTU that is not
//!   256..4096), `bad_wqe` (a WQE opcode other than RDMA WRITE, SEND and their immediate
//!   variants and RDMA READ, or more than `MAX_SGE` SGEs: refused,
//!   `SENT` with status LOC_QP_OP_ERR, no packet; SGEs adding up to more than 2^31 bytes: the
//!   same with LOC_LEN_ERR), `dma_err` (a WQE fetch
//!   that failed: `SENT` with GENERAL_ERR; or a payload read that failed: the packet is
//!   marked bad (`m_pay_tuser`) and the MAC's queues drop it before the wire), `prot_err` (an
//!   SGE's buffer is not inside a
//!   region its lkey names in the QP's PD: refused, `SENT` with LOC_PROT_ERR, no packet and no
//!   payload read).
//!
//! ```text
//!  s_db --> pi RAM, ready FIFO (a QP is queued at most once: bitmap)
//!  ready FIFO --> [Idle: pop] -> [Look: context + pi] -> [Check: RTS? work?] -> WQE fetch
//!    -> [Fetch: 128 bytes from s_rd] -> [Prot: each SGE's lkey, PD and range through
//!       KeyCheck, one per cycle; their lengths added up] -> [Seek: the SGE and offset to start]
//!    -> [Seg: a packet: record -> meta FIFO and its first piece's read -> m_rd; one more
//!       read per cycle for each further SGE piece of the packet (Seek between SGEs)]
//!    -> [Done: SENT record (unless the window's stop sent it), write back sq_psn/sq_ci,
//!       requeue]
//!  s_rd --> payload (while payload reads are outstanding) -> Gather (join bits in read
//!       order) -> m_pay
//!       \-> WQE capture (otherwise)
//! ```
//!
//! Credits: a packet goes out only when its frame's beats (`spec::meta::tx_frame_len`) fit in
//! its priority's transmit queue beside what is reserved there (`tx_used` plus this block's
//! own reservation of the cycle before, not yet counted), and reserves them (`m_rsv`). A QP
//! whose priority is full (paused, or the wire busy) waits in Seg while no other QP waits;
//! when one does, the QP yields: its `sq_psn` and `sq_pkts` (packets of the WQE sent) are
//! written back and it goes to the back of the queue, and its next visit fetches the WQE
//! again and goes on from that packet (MIDDLE or LAST). A QP whose priority has no room for a
//! full packet when it is visited and others wait is passed over without a fetch. So one
//! paused priority never stops the QPs of the others. Credit goes by turn, not by race: a
//! READ job's visit, and the QP visit right after one, waits up to `CREDIT_WAIT` cycles for
//! room before it yields (the job, back in three cycles where a QP fetches its WQE first,
//! would otherwise win every packet's room a draining queue frees). A QP that has sent
//! `QUANTUM` (16 KiB) in one visit while other QPs or READ jobs wait yields the same way, so
//! no message holds the others for long; a QP in ERR flushes up to `FLUSH_RUN` WQEs in one
//! visit.
//!
//! Retries (`s_rew_{valid,ready,qpn,ci,psn,pkts}` from the completer, taken in Idle before
//! anything else; a QP in Seg yields between packets while one waits): the QP's send state
//! goes back to the named WQE, PSN and packets sent of it, and the QP is queued. The first
//! rewind of a retry keeps where sending had got to (`hi_ram`: `hi_ci`, `hi_psn`); the WQEs
//! before `hi_ci` are sent again without a `SENT` record, READ slot or READ count (the
//! completer and the responder hold theirs), and packets before `hi_psn` count in
//! `retrans`.
//!
//! A failed QP (any engine's error, `s_failed`, until a reset) or one the host moved to ERR
//! sends nothing more: each of its queued WQEs is fetched (for its `wr_id`) and handed to the
//! completer as a `SENT` with WR_FLUSH_ERR, without a packet, a key check or a payload read.
//! A WQE this block refuses (LOC_QP_OP_ERR, LOC_LEN_ERR, LOC_PROT_ERR, GENERAL_ERR) fails
//! its QP (IBA 10.7.3.1, as rxe): its `SENT` carries the status, and the WQEs behind it
//! flush.
//!
//! Protection: the NIC, not only the driver, checks every SGE of every WQE (`KeyCheck`:
//! the lkey names a registered region of the QP's PD and the range is inside it) before it
//! reads a byte of it, also when a QP resumes a WQE after yielding. A WQE written into the ring
//! behind the driver's back with a forged key completes with LOC_PROT_ERR and causes no DMA
//! beyond its own fetch. An MR table write (BAR0 counts them, `s_mr_gen`, the count the responder stamps jobs with)
//! marks the work in hand (`mr_new`): a WQE yields at its next packet and is fetched and
//! checked again on its next visit; a READ response job (or one taken whose `gen` is behind)
//! has its rkey checked again over the bytes still to send (`ReChk`), and refused sends a NAK
//! remote access error at the next response's PSN in place of the packet, ends, and fails
//! the QP. A job of a QP failed or in ERR sends nothing (`Drop`: its end still goes to the
//! responder, after the records before it).
//!
//! Data from the DMA engine comes in command order, and a WQE fetch is issued only after the
//! previous WQE's payload reads, so the router needs no tags: the bytes are payload while
//! payload reads are outstanding, WQE bytes otherwise.
//!
//! The context copy: the host's fields in `ctx_ram`, the send state (`sq_psn`, `sq_ci`,
//! `sq_pkts`, and `rec_ci`, set to `sq_ci` by the host's writes) in `sq_ram`, which only `init_sq` writes (RTR -> RTS, RESET) and this block
//! write; any other context write (RTS -> RTS, -> ERR) leaves the send state running. A context
//! write to the QP being served marks it dirty: the QP is queued again so the next visit
//! reads the new context; a write that takes it out of RTR and RTS (`herr`) also stops the
//! message in flight at its next packet (rxe checks the state at every packet), and a READ
//! response job carries the epoch its request was accepted in, so one the QP's reset
//! overtook (waiting in the queue or the park) sends nothing; after an
//! `init_sq` write the host's values win (no write-back); it also sets the QP's producer index to the host's `sq_ci`, so
//! a reset QP still in the ready queue finds no work rather than its last life's ring.
//! BAR0's QUERY reads the send state from a copy of `sq_ram`
//! (`s_peek_index` in, `m_peek_sq` out: `sq_psn` 0..24, `sq_ci` 24..40, `sq_pkts` 40..64).

use crate::host::{field_at, k};
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::prelude::*;
use crate::rc::iface::{JOB_W, POOL, QA, RC_W, RDC_W, SLOT_A, SLOT_IX, SLOT_W};
use crate::rc::{JobPark, KeyCheck};
use crate::stream::{Fifo, Gather};
use ferroce_spec::headers::IMMDT;
use ferroce_spec::headers::{
    ACKREQ_PSN_MASK, AETH, AETH_ACK, AETH_NAK_REM_ACCESS, ATOMIC_ACK_ETH, ATOMIC_ETH, ICRC_LEN,
    MAX_PSNS_BEHIND, MAX_UNACKED_PSNS, RETH, VLAN_TAG_LEN,
};
use ferroce_spec::layout::Layout;
use ferroce_spec::meta::{
    beats_of, src_port, tx_frame_len, READ_JOB, READ_SLOT, SENT, SENT_PER_QP, SENT_POOL,
    SENT_RESERVED, TX_BASE_HDR_LEN, TX_META, TX_PKEY, TX_TTL,
};
use ferroce_spec::opcodes::{
    RC_ACKNOWLEDGE, RC_ATOMIC_ACKNOWLEDGE, RC_CMP_SWAP, RC_FETCH_ADD, RC_RDMA_READ_REQUEST,
    RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_LAST, RC_RDMA_READ_RESPONSE_MIDDLE,
    RC_RDMA_READ_RESPONSE_ONLY, RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST,
    RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_ONLY,
    RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_SEND_FIRST, RC_SEND_LAST, RC_SEND_LAST_WITH_IMMEDIATE,
    RC_SEND_MIDDLE, RC_SEND_ONLY, RC_SEND_ONLY_WITH_IMMEDIATE,
};
use ferroce_spec::queues::{
    ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, MAX_MSG_LEN, MAX_RD_ATOMIC, MAX_SGE, QP_CTX,
    QP_STATE_ERR, QP_STATE_RTR, QP_STATE_RTS, SGE, SGE_LEN, WC_GENERAL_ERR, WC_LOC_LEN_ERR,
    WC_LOC_PROT_ERR, WC_LOC_QP_OP_ERR, WC_WR_FLUSH_ERR, WQE, WQE_FLAG_FENCE, WQE_FLAG_SOLICITED,
    WQE_LEN, WQE_SGE_AT, WR_ATOMIC_CMP_AND_SWP, WR_ATOMIC_FETCH_AND_ADD, WR_RDMA_READ,
    WR_RDMA_WRITE, WR_RDMA_WRITE_WITH_IMM, WR_SEND, WR_SEND_WITH_IMM,
};

/// QP context bits, as BAR0 stores them.
pub const CTX_W: usize = 512;
const META_W: usize = TX_META.len * 8;
const SENT_W: usize = SENT.len * 8;
/// Payload reads outstanding at most (beyond the DMA engine's own limit, a bound on the router's
/// counter).
const MAX_PAY_OUT: u64 = 32;
/// The completer's pool of `SENT` records, shared out (`spec::meta::SENT_POOL`): a record per
/// QP always (the QP's reserved entry, when it has none out), more from the shared part while
/// the QP holds fewer than `SENT_PER_QP` and the shared part has room.
const SHARED_CAP: u64 = (SENT_POOL - SENT_RESERVED) as u64;
const _: () = assert!(POOL == SENT_POOL && SENT_RESERVED == 1 << QA);
/// Payload bytes a QP sends in one visit while other QPs wait: past them it yields between
/// packets (its WQE fetched again at its next visit), so a long message holds the others
/// for at most this long (13 us at 10 Gb/s) and a QP moved to ERR flushes soon whatever
/// they send.
const QUANTUM: u64 = 16 * 1024;
/// Cycles a visit that is a READ response job's, or the QP's visit right after one, waits
/// for credit before it yields to others that wait: two 4 KiB frames' time on the wire, so a
/// full queue has drained room for its packet by then unless its priority is paused. (Were
/// both to yield at once, the job, which comes back in three cycles where a QP fetches its
/// WQE first, would win every race for the credit a draining queue frees.)
const CREDIT_WAIT: u64 = 1024;
/// WQEs a QP in ERR flushes in one visit, one after the other, before it yields.
const FLUSH_RUN: u64 = 16;
/// A record in the record queue past the `TX_META` fields: bit `MARK_BIT` marks the last
/// packet of a READ response, its QP at `MARK_QPN` (masked off at `m_meta`).
const MARK_BIT: usize = 639;
const MARK_QPN: usize = 616;
const MARK_SEQ: usize = 624;
/// Per QP, a retry in progress (`hi_ram`): replaying 0, and where the requester was when the
/// first rewind came, `hi_ci` 1/16 and `hi_psn` 17/24.
const HI_W: usize = 41;
/// The payload read queue's record (`jq`), one per read in read order: whether the packet
/// goes on in the next read (bit 0), the packet's QP, PSN, whether it is a READ response's
/// (its QP is this NIC's responder side), and its QP's epoch when the read was issued.
const JQ_W: usize = 1 + QA + 24 + 1 + 8;
/// A packet whose payload read failed (`pf_q`): QP, PSN, READ response (to `m_rfail`, else to
/// `m_pfail`), the QP's epoch.
const PF_W: usize = QA + 24 + 1 + 8;
/// Per QP, the send state (`sq_ram`): `sq_psn` 0/24, `sq_ci` 24/16, `sq_pkts` 40/24 (as
/// QUERY reads them), and `rec_ci` 64/16, the first WQE without a `SENT` record.
const SQ_W: usize = 80;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum ReqState {
    Idle,
    Look,
    Check,
    Fetch,
    Prot,
    Seek,
    Seg,
    Park,
    Done,
    RJob,
    Rew,
    ReChk,
    Drop,
}

/// Bit position of a field in a 512-bit record (context, WQE header, TX_META) or the SENT
/// record.
fn at(l: &Layout, name: &str) -> Constant<Bits<9>> {
    field_at(l, name)
}

/// Bit position of a `TX_META` field that may lie past bit 511.
fn meta_at10(name: &str) -> Constant<Bits<10>> {
    field_at(&TX_META, name)
}

/// Bits of a WQE.
const WQE_W: usize = WQE_LEN * 8;

/// Bit position of a WQE header field in the WQE.
fn wqe_at(name: &str) -> Constant<Bits<10>> {
    field_at(&WQE, name)
}

/// Bit position of field `name` of SGE `i` in the WQE.
fn sge_at(i: usize, name: &str) -> Constant<Bits<10>> {
    let f = SGE.find(name).expect("an SGE field");
    k(((WQE_SGE_AT + i * SGE_LEN) * 8 + f.bit) as u64)
}

#[derive(LogicBlock)]
pub struct Requester<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_db_qpn: Signal<In, Bits<24>>,
    pub s_db_pi: Signal<In, Bits<16>>,
    pub s_db_tvalid: Signal<In, Bit>,
    pub s_db_tready: Signal<Out, Bit>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<CTX_W>>,
    pub s_peek_index: Signal<In, Bits<QA>>,
    pub m_peek_sq: Signal<Out, Bits<64>>,
    /// QPs failed (`QpFail::failed`): a bit per QP.
    pub s_failed: Signal<In, Bits<256>>,
    /// A local error failed the QP (a WQE refused, a fetch that failed): a pulse, to `QpFail`.
    pub m_fail_valid: Signal<Out, Bit>,
    pub m_fail_qpn: Signal<Out, Bits<QA>>,
    /// With `m_fail_valid`: a local error (not a READ response refused).
    pub m_fail_local: Signal<Out, Bit>,
    /// A request packet whose payload read failed (its frame dropped before the wire): the
    /// first of its QP since the QP's last reset, to the completer, which fails the QP.
    pub m_pfail_valid: Signal<Out, Bit>,
    pub m_pfail_ready: Signal<In, Bit>,
    pub m_pfail_qpn: Signal<Out, Bits<QA>>,
    pub m_pfail_psn: Signal<Out, Bits<24>>,
    /// The QP's epoch when the read was issued: the record of a QP reset since it was made
    /// (waiting in `pf_q`, or at its consumer) fails nothing.
    pub m_pfail_epoch: Signal<Out, Bits<8>>,
    /// The same for a READ response packet, to the responder, which NAKs it.
    pub m_rfail_valid: Signal<Out, Bit>,
    pub m_rfail_ready: Signal<In, Bit>,
    pub m_rfail_qpn: Signal<Out, Bits<QA>>,
    pub m_rfail_psn: Signal<Out, Bits<24>>,
    pub m_rfail_epoch: Signal<Out, Bits<8>>,
    /// No payload read issued under a check older than the last MR table write is in flight,
    /// and none will be: a deregistration's fence.
    pub m_quiet: Signal<Out, Bit>,
    /// Counter: READ response jobs refused on a second check of their region (NAK sent).
    pub rsp_refused: Signal<Out, Bits<32>>,
    fail_v: DFF<Bit>,
    fail_q: DFF<Bits<QA>>,
    fail_loc: DFF<Bit>,
    /// An MR table write since the work in hand was checked (`mr_new`); payload reads issued
    /// before or under such a write and not yet back.
    mr_new: DFF<Bit>,
    stale_out: DFF<Bits<8>>,
    /// The job's region failed its second check: its next packet is a NAK remote access error.
    nak: DFF<Bit>,
    n_refused: DFF<Bits<32>>,
    quiet: DFF<Bit>,
    st_nx: Signal<Local, Bits<8>>,
    j_rkey: Signal<Local, Bits<32>>,
    j_gen: Signal<Local, Bits<32>>,
    j_epoch: Signal<Local, Bits<8>>,
    j_gone: Signal<Local, Bit>,
    x_j_rkey: Constant<Bits<8>>,
    x_j_gen: Constant<Bits<8>>,
    x_j_epoch: Constant<Bits<8>>,
    acc_rr: Constant<Bits<8>>,
    op_ack: Constant<Bits<8>>,
    syn_nak_ra: Constant<Bits<8>>,
    loc_err: Signal<Local, Bit>,
    /// Every new request packet (not a retransmission): its QP, the PSN after it and the
    /// QP's epoch, so the completer knows what was sent (an ACK past it is a ghost).
    pub m_snd_en: Signal<Out, Bit>,
    pub m_snd_qpn: Signal<Out, Bits<QA>>,
    pub m_snd_psn: Signal<Out, Bits<24>>,
    pub m_snd_epoch: Signal<Out, Bits<8>>,
    snd_v: DFF<Bit>,
    snd_q: DFF<Bits<QA>>,
    snd_p: DFF<Bits<24>>,
    snd_e: DFF<Bits<8>>,
    pub s_mrw_en: Signal<In, Bit>,
    pub s_mrw_index: Signal<In, Bits<QA>>,
    pub s_mrw_data: Signal<In, Bits<{ crate::rc::key_check::MR_W }>>,
    /// BAR0's count of MR table writes (`Bar0::m_mr_gen`), the count a READ job's `gen`
    /// was stamped from.
    pub s_mr_gen: Signal<In, Bits<32>>,
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ipv4: Signal<In, Bits<32>>,
    pub m_rd_addr: Signal<Out, Bits<64>>,
    pub m_rd_len: Signal<Out, Bits<13>>,
    pub m_rd_tvalid: Signal<Out, Bit>,
    pub m_rd_tready: Signal<In, Bit>,
    pub s_rd_tdata: Signal<In, Bits<DW>>,
    pub s_rd_tkeep: Signal<In, Bits<KW>>,
    pub s_rd_tlast: Signal<In, Bit>,
    pub s_rd_tuser: Signal<In, Bit>,
    pub s_rd_tvalid: Signal<In, Bit>,
    pub s_rd_tready: Signal<Out, Bit>,
    pub m_meta_tdata: Signal<Out, Bits<META_W>>,
    pub m_meta_tvalid: Signal<Out, Bit>,
    pub m_meta_tready: Signal<In, Bit>,
    pub m_pay_tdata: Signal<Out, Bits<DW>>,
    pub m_pay_tkeep: Signal<Out, Bits<KW>>,
    pub m_pay_tlast: Signal<Out, Bit>,
    pub m_pay_tuser: Signal<Out, Bit>,
    pub m_pay_tvalid: Signal<Out, Bit>,
    pub m_pay_tready: Signal<In, Bit>,
    pub m_sent_tdata: Signal<Out, Bits<SENT_W>>,
    pub m_sent_tvalid: Signal<Out, Bit>,
    pub m_sent_tready: Signal<In, Bit>,
    pub bad_db: Signal<Out, Bits<32>>,
    pub bad_qp: Signal<Out, Bits<32>>,
    pub bad_wqe: Signal<Out, Bits<32>>,
    pub dma_err: Signal<Out, Bits<32>>,
    pub prot_err: Signal<Out, Bits<32>>,
    pub tx_used: Signal<In, Bits<USED_W>>,
    pub tx_cap: Signal<In, Bits<16>>,
    pub m_rsv: Signal<Out, Bits<RSV_W>>,
    pub yields: Signal<Out, Bits<32>>,
    pub s_rj_tdata: Signal<In, Bits<JOB_W>>,
    pub s_rj_tvalid: Signal<In, Bit>,
    pub s_rj_tready: Signal<Out, Bit>,
    /// A duplicate's job went into the responder's pool (`Responder::m_dup_*`).
    pub s_dup_valid: Signal<In, Bit>,
    pub s_dup_qpn: Signal<In, Bits<24>>,
    pub s_dup_psn: Signal<In, Bits<24>>,
    pub m_rdone_valid: Signal<Out, Bit>,
    pub m_rdone_qpn: Signal<Out, Bits<QA>>,
    pub m_rdone_seq: Signal<Out, Bits<RDC_W>>,
    pub m_rslot_en: Signal<Out, Bit>,
    pub m_rslot_addr: Signal<Out, Bits<SLOT_A>>,
    pub m_rslot_data: Signal<Out, Bits<SLOT_W>>,
    pub s_rl_valid: Signal<In, Bit>,
    pub s_rl_qpn: Signal<In, Bits<QA>>,
    pub s_rl_cnt: Signal<In, Bits<RDC_W>>,
    /// The same count as the responder makes the landing's record (`s_rl` follows once its
    /// bytes are written): the landed count a reset of the QP starts the issued count from,
    /// so a landing the reset overtook is counted on both sides.
    pub s_rlc_valid: Signal<In, Bit>,
    pub s_rlc_qpn: Signal<In, Bits<QA>>,
    pub s_rlc_cnt: Signal<In, Bits<RDC_W>>,
    pub s_ret_valid: Signal<In, Bit>,
    pub s_ret_qpn: Signal<In, Bits<QA>>,
    pub s_ret_count: Signal<In, Bits<RC_W>>,
    pub s_ret_shared: Signal<In, Bit>,
    pub s_rew_valid: Signal<In, Bit>,
    pub s_rew_ready: Signal<Out, Bit>,
    pub s_rew_qpn: Signal<In, Bits<QA>>,
    pub s_rew_ci: Signal<In, Bits<16>>,
    pub s_rew_psn: Signal<In, Bits<24>>,
    pub s_rew_pkts: Signal<In, Bits<24>>,
    pub retrans: Signal<Out, Bits<32>>,
    /// READ response jobs cut short (stale: the peer asked again from an earlier PSN).
    pub cuts: Signal<Out, Bits<32>>,
    /// The completer's QP state writes: the QP's oldest unacknowledged PSN (`una`).
    pub s_una_en: Signal<In, Bit>,
    pub s_una_qpn: Signal<In, Bits<QA>>,
    pub s_una_psn: Signal<In, Bits<24>>,
    /// Times a QP stopped mid-message at its window (`MAX_UNACKED_PSNS` past `una`).
    pub win_stops: Signal<Out, Bits<32>>,
    una_ram: RAM<Bits<24>, QA>,
    ue_v: DFF<Bit>,
    ue_q: DFF<Bits<QA>>,
    ue_p: DFF<Bits<24>>,
    una_r: DFF<Bits<24>>,
    win: DFF<Bit>,
    d_una: Signal<Local, Bits<24>>,
    open0: Signal<Local, Bit>,
    behind: Signal<Local, Bit>,
    open1: Signal<Local, Bit>,
    win_lim: Constant<Bits<24>>,
    win_lim1: Constant<Bits<24>>,
    behind_lim: Constant<Bits<24>>,
    pk_go: Signal<Local, Bit>,
    n_win: DFF<Bits<32>>,
    /// The QP in Park was set aside for want of credit (counted in `yields`), not by the
    /// window or a rewind.
    park_cr: DFF<Bit>,
    rec_ci: DFF<Bits<16>>,
    rec_need: Signal<Local, Bit>,
    rec_next: Signal<Local, Bits<16>>,
    sent_free: Signal<Local, Bit>,
    sent_img: Signal<Local, Bits<SENT_W>>,
    x_j_dup: Constant<Bits<8>>,
    j_dup: Signal<Local, Bit>,
    in_dup: Signal<Local, Bit>,
    in_q: Signal<Local, Bits<QA>>,
    in_bit: Signal<Local, Bits<256>>,
    in_psn: Signal<Local, Bits<24>>,
    p_now: Signal<Local, Bits<24>>,
    p_gap: Signal<Local, Bits<24>>,
    cq_hit: Signal<Local, Bit>,
    cq_clr: Signal<Local, Bits<256>>,
    cutq: DFF<Bits<256>>,
    cut: DFF<Bit>,
    end_now: Signal<Local, Bit>,
    n_cuts: DFF<Bits<32>>,
    take_rew: Signal<Local, Bit>,
    hi_ram: RAM<Bits<HI_W>, QA>,
    hw_addr: Signal<Local, Bits<QA>>,
    hw_data: Signal<Local, Bits<HI_W>>,
    hw_en: Signal<Local, Bit>,
    rp: DFF<Bit>,
    hi_ci: DFF<Bits<16>>,
    hi_psn: DFF<Bits<24>>,
    rw_ci: DFF<Bits<16>>,
    rw_psn: DFF<Bits<24>>,
    rw_pkts: DFF<Bits<24>>,
    sup: Signal<Local, Bit>,
    retx: Signal<Local, Bits<24>>,
    n_retx: DFF<Bits<32>>,
    s_sq_index: Constant<Bits<9>>,
    sent_push: Signal<Local, Bit>,
    // The pool share: per QP the records handed over and retired (mod 2^`RC_W`, their
    // difference what the QP holds), the shared entries in use, the QP's counts in hand.
    iss_ram: RAM<Bits<RC_W>, QA>,
    ret_ram: RAM<Bits<RC_W>, QA>,
    iss: DFF<Bits<RC_W>>,
    ret_n: DFF<Bits<RC_W>>,
    sh_used: DFF<Bits<10>>,
    rt_v: DFF<Bit>,
    rt_q: DFF<Bits<QA>>,
    rt_n: DFF<Bits<RC_W>>,
    swp: DFF<Bits<9>>,
    held: Signal<Local, Bits<RC_W>>,
    shared: Signal<Local, Bit>,
    shared1: Signal<Local, Bits<1>>,
    pool_wait: Signal<Local, Bit>,
    n_pwait: DFF<Bits<32>>,
    per_qp: Constant<Bits<RC_W>>,
    sh_cap: Constant<Bits<10>>,
    x_shared: Constant<Bits<9>>,
    /// Times a QP waited for its share of the completer's pool (its own `SENT_PER_QP`
    /// records out, or the shared part full).
    pub pool_waits: Signal<Out, Bits<32>>,
    // The visit: payload bytes sent, WQEs flushed.
    vis_b: DFF<Bits<32>>,
    vis_f: DFF<Bits<5>>,
    quantum: Constant<Bits<32>>,
    flush_run: Constant<Bits<5>>,
    over: Signal<Local, Bit>,
    fl_more: Signal<Local, Bit>,
    pub reads: Signal<Out, Bits<32>>,
    // READ responses: jobs, the one in hand, the READ counts and slots.
    rj_q: Fifo<JOB_W, 4, 5>,
    rsp: DFF<Bit>,
    job: DFF<Bits<JOB_W>>,
    // The READ job set aside between packets, and whether the one in hand was taken from it.
    park: JobPark,
    rsm: DFF<Bit>,
    rsp_yield: Signal<Local, Bit>,
    pick: DFF<Bit>,
    take_job: Signal<Local, Bit>,
    rdi_ram: RAM<Bits<RDC_W>, QA>,
    rdl_ram: RAM<Bits<RDC_W>, QA>,
    rdl_init: RAM<Bits<RDC_W>, QA>,
    rdi: DFF<Bits<RDC_W>>,
    rdl: DFF<Bits<RDC_W>>,
    // FENCE: a QP whose fenced WQE waits for its READs and atomics to land (passed over in
    // Check without a fetch meanwhile), the bit read in Look.
    fence_ram: RAM<Bit, QA>,
    fenced: DFF<Bit>,
    fence_hold: Signal<Local, Bit>,
    fl_fence: Constant<Bits<8>>,
    init_pend: DFF<Bit>,
    init_q: DFF<Bits<QA>>,
    npk: DFF<Bits<24>>,
    npk_rest: Signal<Local, Bits<24>>,
    rd_sum: Signal<Local, Bits<28>>,
    rd_full: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    is_atomic: Signal<Local, Bit>,
    is_rda: Signal<Local, Bit>,
    at_bit: Signal<Local, Bits<1>>,
    j_at: Signal<Local, Bit>,
    w_cmp: Signal<Local, Bits<64>>,
    w_swap: Signal<Local, Bits<64>>,
    at_sa: Signal<Local, Bits<64>>,
    at_cmp: Signal<Local, Bits<64>>,
    w_x_cmp: Constant<Bits<10>>,
    w_x_swap: Constant<Bits<10>>,
    x_j_at: Constant<Bits<8>>,
    wr_cs: Constant<Bits<8>>,
    op_cswap: Constant<Bits<8>>,
    op_fadd: Constant<Bits<8>>,
    op_aack: Constant<Bits<8>>,
    ateth_len: Constant<Bits<16>>,
    aack_len: Constant<Bits<16>>,
    at_len: Constant<Bits<40>>,
    rslot_en: DFF<Bit>,
    rslot_addr: DFF<Bits<SLOT_A>>,
    rslot_data: DFF<Bits<SLOT_W>>,
    rdone_v: DFF<Bit>,
    rdone_q: DFF<Bits<QA>>,
    rdone_s: DFF<Bits<RDC_W>>,
    j_seq: Signal<Local, Bits<RDC_W>>,
    x_j_seq: Constant<Bits<8>>,
    mark_seq: Constant<Bits<10>>,
    n_reads: DFF<Bits<32>>,
    rl_pv: DFF<Bit>,
    rl_pq: DFF<Bits<QA>>,
    rl_pc: DFF<Bits<RDC_W>>,
    j_psn: Signal<Local, Bits<24>>,
    j_msn: Signal<Local, Bits<24>>,
    j_len: Signal<Local, Bits<32>>,
    j_va: Signal<Local, Bits<64>>,
    r_aeth: Signal<Local, Bits<32>>,
    mark: Signal<Local, Bits<META_W>>,
    meta_mask: Constant<Bits<META_W>>,
    mark_one: Constant<Bits<META_W>>,
    mark_at: Constant<Bits<10>>,
    mark_bit: Constant<Bits<10>>,
    x_j_qpn: Constant<Bits<8>>,
    x_j_psn: Constant<Bits<8>>,
    x_j_msn: Constant<Bits<8>>,
    x_j_len: Constant<Bits<8>>,
    x_j_va: Constant<Bits<8>>,
    wr_read: Constant<Bits<8>>,
    op_rreq: Constant<Bits<8>>,
    op_rfirst: Constant<Bits<8>>,
    op_rmiddle: Constant<Bits<8>>,
    op_rlast: Constant<Bits<8>>,
    op_ronly: Constant<Bits<8>>,
    syn_ack: Constant<Bits<8>>,
    aeth_len: Constant<Bits<16>>,
    acc_lw: Constant<Bits<8>>,
    rd_max: Constant<Bits<RDC_W>>,
    slot_sh: Constant<Bits<8>>,
    rd_lim: Signal<Local, Bits<RDC_W>>,
    x_mrd: Constant<Bits<9>>,
    // Doorbells and the scheduler.
    ctx_ram: RAM<Bits<CTX_W>, QA>,
    sq_ram: RAM<Bits<SQ_W>, QA>,
    sq_peek: RAM<Bits<64>, QA>,
    dirty_sq: DFF<Bit>,
    flushing: DFF<Bit>,
    flush: Signal<Local, Bit>,
    f_shift: Signal<Local, Bits<256>>,
    pkts0: DFF<Bits<24>>,
    sw_addr: Signal<Local, Bits<QA>>,
    sw_data: Signal<Local, Bits<SQ_W>>,
    sw_en: Signal<Local, Bit>,
    qpw_init: Signal<Local, Bit>,
    qpw_stop: Signal<Local, Bit>,
    tj_q: Signal<Local, Bits<QA>>,
    pi_ram: RAM<Bits<16>, QA>,
    ready: Fifo<QA, QA, 9>,
    queued: DFF<Bits<256>>,
    state: DFF<ReqState>,
    qpn: DFF<Bits<QA>>,
    dirty: DFF<Bit>,
    /// The host moved the QP in hand out of RTR and RTS since it was taken: it stops
    /// between two packets.
    herr: DFF<Bit>,
    ctx: DFF<Bits<CTX_W>>,
    pi: DFF<Bits<16>>,
    ci: DFF<Bits<16>>,
    psn: DFF<Bits<24>>,
    // The work request.
    wqe: DFF<Bits<WQE_W>>,
    wqe_have: DFF<Bit>,
    wqe_fail: DFF<Bit>,
    rem: DFF<Bits<32>>,
    laddr: DFF<Bits<64>>,
    first: DFF<Bit>,
    // The scatter/gather list: key checks asked and answered, the message length, the SGE
    // being read (`si`, at `laddr` with `s_rem` bytes left), the packet's bytes still to read.
    kq: DFF<Bits<3>>,
    ka: DFF<Bits<3>>,
    kbad: DFF<Bit>,
    tot: DFF<Bits<40>>,
    r_va: DFF<Bits<64>>,
    r_len: DFF<Bits<32>>,
    si: DFF<Bits<3>>,
    soff: DFF<Bits<32>>,
    s_rem: DFF<Bits<32>>,
    pk_rem: DFF<Bits<13>>,
    lastpk: DFF<Bit>,
    pmtu_r: DFF<Bits<32>>,
    first_psn: DFF<Bits<24>>,
    status: DFF<Bits<8>>,
    // Outputs and the router.
    rd_addr: DFF<Bits<64>>,
    rd_len: DFF<Bits<13>>,
    rd_valid: DFF<Bit>,
    pay_out: DFF<Bits<8>>,
    meta_q: Fifo<META_W, 4, 5>,
    gat: Gather<DW, KW>,
    jq: Fifo<JQ_W, 6, 7>,
    /// The read whose bytes come in (`jq`'s head, taken into a register so that its QP's
    /// epoch is looked up in `ep_ram` as it is taken).
    hd: DFF<Bits<JQ_W>>,
    hd_v: DFF<Bit>,
    hd_take: Signal<Local, Bit>,
    /// Per QP, the epoch as the host last wrote it; `ep_new`, the epoch in this cycle's write.
    ep_ram: RAM<Bits<8>, QA>,
    ep_new: Signal<Local, Bits<8>>,
    /// `hd` was taken in the last cycle (`ep_ram` answers for it now); a table write to its
    /// QP since (`ep_w_v`, the epoch written `ep_w`); its QP's epoch now (`ep_now`, kept in
    /// `ep_hold`).
    hd_fresh: DFF<Bit>,
    ep_w_v: DFF<Bit>,
    ep_w: DFF<Bits<8>>,
    ep_hold: DFF<Bits<8>>,
    ep_now: Signal<Local, Bits<8>>,
    ep_hit: Signal<Local, Bit>,
    /// The read is of its QP's present life: a read issued before the host reset the QP
    /// (its epoch is an earlier one) is dropped with its packet, and fails nothing.
    pj_live: Signal<Local, Bit>,
    /// The packet at the head of `jq`: its QP, PSN, READ response bit, join bit.
    pj_q: Signal<Local, Bits<QA>>,
    pj_psn: Signal<Local, Bits<24>>,
    pj_rsp: Signal<Local, Bit>,
    pj_join: Signal<Local, Bit>,
    /// The `jq` records of a read: a packet's first, and a further piece of it (whose PSN is
    /// one behind `psn`, which moved on with the first).
    jq_base: Signal<Local, Bits<JQ_W>>,
    psn_m1: Signal<Local, Bits<24>>,
    jq_w0: Signal<Local, Bits<JQ_W>>,
    jq_w1: Signal<Local, Bits<JQ_W>>,
    /// A piece of the packet whose reads are coming in failed.
    pk_bad: DFF<Bit>,
    /// The packet's last read is in and one of its reads failed.
    pk_fail: Signal<Local, Bit>,
    /// QPs a failed payload read failed (until their reset): nothing more of theirs goes to
    /// the wire, and the packets of theirs still being read are dropped too.
    poison: DFF<Bits<256>>,
    pz_hit: Signal<Local, Bit>,
    pz_set: Signal<Local, Bits<256>>,
    pf_w: Signal<Local, Bits<PF_W>>,
    pz_clr: Signal<Local, Bits<256>>,
    pf_q: Fifo<PF_W, 4, 5>,
    jq_qpn_at: Constant<Bits<6>>,
    jq_psn_at: Constant<Bits<6>>,
    jq_rsp_at: Constant<Bits<6>>,
    jq_ep_at: Constant<Bits<6>>,
    pf_psn_at: Constant<Bits<6>>,
    pf_to_rsp: Signal<Local, Bit>,
    pf_rsp_at: Constant<Bits<6>>,
    pf_ep_at: Constant<Bits<6>>,
    sent: DFF<Bits<SENT_W>>,
    sent_valid: DFF<Bit>,
    n_bad_db: DFF<Bits<32>>,
    n_bad_qp: DFF<Bits<32>>,
    n_bad_wqe: DFF<Bits<32>>,
    n_dma_err: DFF<Bits<32>>,
    n_prot_err: DFF<Bits<32>>,
    keys: KeyCheck,
    n_yield: DFF<Bits<32>>,
    rsv: DFF<Bits<RSV_W>>,
    // Locals.
    db_take: Signal<Local, Bit>,
    db_ok: Signal<Local, Bit>,
    db_push: Signal<Local, Bit>,
    requeue: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    q_after_pop: Signal<Local, Bits<256>>,
    q_next: Signal<Local, Bits<256>>,
    head_bit: Signal<Local, Bits<256>>,
    db_bit: Signal<Local, Bits<256>>,
    cur_bit: Signal<Local, Bits<256>>,
    c_state: Signal<Local, Bits<4>>,
    c_wstate: Signal<Local, Bits<4>>,
    c_pmtu: Signal<Local, Bits<4>>,
    c_log: Signal<Local, Bits<5>>,
    c_rqpn: Signal<Local, Bits<24>>,
    c_mac: Signal<Local, Bits<48>>,
    c_ip: Signal<Local, Bits<32>>,
    c_vgrp: Signal<Local, Bits<16>>,
    c_base: Signal<Local, Bits<64>>,
    c_cqn: Signal<Local, Bits<16>>,
    c_pdn: Signal<Local, Bits<16>>,
    c_epoch: Signal<Local, Bits<8>>,
    ring_mask: Signal<Local, Bits<32>>,
    slot: Signal<Local, Bits<32>>,
    wqe_addr: Signal<Local, Bits<64>>,
    pmtu_bytes: Signal<Local, Bits<32>>,
    pmtu_ok: Signal<Local, Bit>,
    w_opcode: Signal<Local, Bits<8>>,
    w_flags: Signal<Local, Bits<8>>,
    w_nsge: Signal<Local, Bits<8>>,
    w_wrid: Signal<Local, Bits<64>>,
    w_imm: Signal<Local, Bits<32>>,
    is_send: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    imm_here: Signal<Local, Bit>,
    se: Signal<Local, Bits<1>>,
    ext_v: Signal<Local, Bits<128>>,
    ext2_v: Signal<Local, Bits<96>>,
    q_addr: Signal<Local, Bits<64>>,
    q_len: Signal<Local, Bits<32>>,
    q_lkey: Signal<Local, Bits<32>>,
    g_idx: Signal<Local, Bits<3>>,
    g_addr: Signal<Local, Bits<64>>,
    g_len: Signal<Local, Bits<32>>,
    k_more: Signal<Local, Bit>,
    pk_eff: Signal<Local, Bits<13>>,
    piece: Signal<Local, Bits<13>>,
    pk_left: Signal<Local, Bits<13>>,
    next_sge: Signal<Local, Bit>,
    issue_piece: Signal<Local, Bit>,
    w_rkey: Signal<Local, Bits<32>>,
    w_raddr: Signal<Local, Bits<64>>,
    last: Signal<Local, Bit>,
    ack: Signal<Local, Bits<1>>,
    plen: Signal<Local, Bits<13>>,
    opcode: Signal<Local, Bits<8>>,
    reth: Signal<Local, Bits<128>>,
    meta: Signal<Local, Bits<META_W>>,
    port: Signal<Local, Bits<16>>,
    rd_free: Signal<Local, Bit>,
    can_issue: Signal<Local, Bit>,
    issue_pay: Signal<Local, Bit>,
    route_pay: Signal<Local, Bit>,
    pay_done: Signal<Local, Bit>,
    ci_next: Signal<Local, Bits<16>>,
    last_psn: Signal<Local, Bits<24>>,
    wb: Signal<Local, Bits<SQ_W>>,
    wb_park: Signal<Local, Bits<SQ_W>>,
    c_pkts: Signal<Local, Bits<24>>,
    off40: Signal<Local, Bits<40>>,
    off: Signal<Local, Bits<32>>,
    off_ok: Signal<Local, Bit>,
    pmtu_log: Signal<Local, Bits<8>>,
    prio: Signal<Local, Bits<3>>,
    u: Signal<Local, Bits<16>>,
    f_plen: Signal<Local, Bits<16>>,
    f_first: Signal<Local, Bit>,
    f_bytes: Signal<Local, Bits<16>>,
    f_beats: Signal<Local, Bits<16>>,
    fits: Signal<Local, Bit>,
    // Turns: whose visit follows a READ job's (or is one) waits for credit a while.
    patient: DFF<Bit>,
    after_job: DFF<Bit>,
    vis_t: DFF<Bits<11>>,
    wait_ok: Signal<Local, Bit>,
    credit_wait: Constant<Bits<11>>,
    rsv_tag: Signal<Local, Bits<4>>,
    pkts_now: Signal<Local, Bits<24>>,
    // Constants.
    rts: Constant<Bits<4>>,
    rtr: Constant<Bits<4>>,
    wr_write_imm: Constant<Bits<8>>,
    wr_send: Constant<Bits<8>>,
    wr_send_imm: Constant<Bits<8>>,
    wr_max: Constant<Bits<8>>,
    send_delta: Constant<Bits<8>>,
    fl_solicited: Constant<Bits<8>>,
    imm_len: Constant<Bits<16>>,
    w_x_imm: Constant<Bits<10>>,
    m_se: Constant<Bits<9>>,
    m_ext2: Constant<Bits<10>>,
    max_len: Constant<Bits<40>>,
    max_sge: Constant<Bits<8>>,
    st_len: Constant<Bits<8>>,
    sg_x_addr: Vec<Constant<Bits<10>>>,
    sg_x_len: Vec<Constant<Bits<10>>>,
    sg_x_lkey: Vec<Constant<Bits<10>>>,
    ix: Vec<Constant<Bits<3>>>,
    one256: Constant<Bits<256>>,
    dw_step: Constant<Bits<11>>,
    wqe_top: Constant<Bits<11>>,
    max_pay_out: Constant<Bits<8>>,
    wqe_len: Constant<Bits<13>>,
    wqe_sh: Constant<Bits<8>>,
    op_first: Constant<Bits<8>>,
    op_middle: Constant<Bits<8>>,
    op_last: Constant<Bits<8>>,
    op_only: Constant<Bits<8>>,
    st_ok: Constant<Bits<8>>,
    st_bad_wqe: Constant<Bits<8>>,
    st_dma: Constant<Bits<8>>,
    st_prot: Constant<Bits<8>>,
    st_flush: Constant<Bits<8>>,
    qp_err: Constant<Bits<4>>,
    ttl: Constant<Bits<8>>,
    pkey: Constant<Bits<16>>,
    port_base: Constant<Bits<16>>,
    x_init: Constant<Bits<9>>,
    hdr_fixed: Constant<Bits<16>>,
    reth_len: Constant<Bits<16>>,
    tag_len: Constant<Bits<16>>,
    kw_m1: Constant<Bits<16>>,
    kw_sh: Constant<Bits<8>>,
    sh_rsv: Constant<Bits<8>>,
    pc: Vec<Constant<Bits<3>>>,
    at16: Vec<Constant<Bits<7>>>,
    x_pkts: Constant<Bits<9>>,
    x_state: Constant<Bits<9>>,
    x_pmtu: Constant<Bits<9>>,
    x_log: Constant<Bits<9>>,
    x_rqpn: Constant<Bits<9>>,
    x_cqn: Constant<Bits<9>>,
    x_pdn: Constant<Bits<9>>,
    x_epoch: Constant<Bits<9>>,
    x_psn: Constant<Bits<9>>,
    x_ci: Constant<Bits<9>>,
    x_mac: Constant<Bits<9>>,
    x_ip: Constant<Bits<9>>,
    x_vlan: Constant<Bits<9>>,
    x_base: Constant<Bits<9>>,
    w_x_opcode: Constant<Bits<10>>,
    w_x_flags: Constant<Bits<10>>,
    w_x_nsge: Constant<Bits<10>>,
    w_x_wrid: Constant<Bits<10>>,
    w_x_rkey: Constant<Bits<10>>,
    w_x_raddr: Constant<Bits<10>>,
    m_dst_mac: Constant<Bits<9>>,
    m_src_mac: Constant<Bits<9>>,
    m_src_ip: Constant<Bits<9>>,
    m_vlan: Constant<Bits<9>>,
    m_dst_ip: Constant<Bits<9>>,
    m_src_port: Constant<Bits<9>>,
    m_ttl: Constant<Bits<9>>,
    m_opcode: Constant<Bits<9>>,
    m_ack_req: Constant<Bits<9>>,
    ackreq_mask: Constant<Bits<24>>,
    m_pkey: Constant<Bits<9>>,
    m_dest_qp: Constant<Bits<9>>,
    m_psn: Constant<Bits<9>>,
    m_pay_len: Constant<Bits<9>>,
    m_ext: Constant<Bits<9>>,
    s_qpn: Constant<Bits<9>>,
    s_status: Constant<Bits<9>>,
    s_flags: Constant<Bits<9>>,
    s_wr_opcode: Constant<Bits<9>>,
    s_cqn: Constant<Bits<9>>,
    s_wr_id: Constant<Bits<9>>,
    s_byte_len: Constant<Bits<9>>,
    s_first_psn: Constant<Bits<9>>,
    s_last_psn: Constant<Bits<9>>,
    s_epoch: Constant<Bits<9>>,
}

impl<const DW: usize, const KW: usize> Requester<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(
            DW <= WQE_W && WQE_W.is_multiple_of(DW),
            "a WQE is a whole number of beats"
        );
        assert_eq!(WQE_LEN * 8, WQE_W);
        assert_eq!(WQE_W, 1 << 10, "WQE bit positions are 10 bits");
        assert!(
            WQE_LEN.is_power_of_two(),
            "ring slots are shifted, not multiplied"
        );
        const { assert!(MAX_SGE < 8, "SGE indices are 3 bits") };
        // The window: a power of two, several AckReq intervals wide, far below 2^23.
        const {
            assert!(
                MAX_UNACKED_PSNS.is_power_of_two()
                    && MAX_UNACKED_PSNS >= 4 * (ACKREQ_PSN_MASK + 1)
                    && MAX_UNACKED_PSNS < 1 << 22
            )
        };
        // The opcode is computed: the WRITE opcodes' codes, less `send_delta` for a SEND, plus
        // one for the immediate variant of a LAST or ONLY (IBA table 38, checked here); the
        // work request opcodes the block sends are 0 ..= `wr_max`.
        let d = RC_RDMA_WRITE_FIRST - RC_SEND_FIRST;
        assert_eq!(RC_RDMA_WRITE_MIDDLE - RC_SEND_MIDDLE, d);
        assert_eq!(RC_RDMA_WRITE_LAST - RC_SEND_LAST, d);
        assert_eq!(RC_RDMA_WRITE_ONLY - RC_SEND_ONLY, d);
        assert_eq!(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, RC_RDMA_WRITE_LAST + 1);
        assert_eq!(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_RDMA_WRITE_ONLY + 1);
        assert_eq!(RC_SEND_LAST_WITH_IMMEDIATE, RC_SEND_LAST + 1);
        assert_eq!(RC_SEND_ONLY_WITH_IMMEDIATE, RC_SEND_ONLY + 1);
        let mut wr = [
            WR_RDMA_WRITE,
            WR_RDMA_WRITE_WITH_IMM,
            WR_SEND,
            WR_SEND_WITH_IMM,
        ];
        wr.sort_unstable();
        assert_eq!(wr, [0, 1, 2, 3]);
        assert_eq!(TX_META.field("ext2").width, 96);
        const { assert!(MARK_SEQ >= MARK_QPN + QA && MARK_SEQ + RDC_W <= MARK_BIT) };
        assert!(MARK_QPN >= TX_META.lsb(&TX_META.field("ext2")) + 96 && MARK_BIT < META_W);
        assert_eq!(READ_SLOT.field("sq_index").bit, 0);
        assert_eq!(READ_SLOT.field("first_psn").bit, 16);
        assert_eq!(READ_SLOT.field("epoch").bit, 40);
        assert_eq!(READ_SLOT.field("atomic").bit, 48);
        assert_eq!(READ_SLOT.field("count").bit, 49);
        assert_eq!(READ_SLOT.field("count").width, RDC_W);
        assert_eq!(SLOT_W, 49 + RDC_W);
        assert_eq!(MAX_RD_ATOMIC, 1 << (SLOT_A - QA));
        const { assert!(2 * MAX_RD_ATOMIC <= 1 << RDC_W) };
        const { assert!(WR_RDMA_READ == WR_SEND_WITH_IMM + 1) };
        const { assert!(WR_ATOMIC_CMP_AND_SWP == WR_RDMA_READ + 1) };
        const { assert!(WR_ATOMIC_FETCH_AND_ADD == WR_ATOMIC_CMP_AND_SWP + 1) };
        // The frame-length sum the block computes is `tx_frame_len`'s (checked here).
        for tagged in [false, true] {
            for ext in [0, IMMDT.len, RETH.len, RETH.len + IMMDT.len] {
                for len in [0, 1, 255, 256, 4095, 4096] {
                    let pad = (4 - len % 4) % 4;
                    let tag = if tagged { VLAN_TAG_LEN } else { 0 };
                    assert_eq!(
                        tx_frame_len(tagged, ext, len),
                        TX_BASE_HDR_LEN + ICRC_LEN + tag + ext + len + pad
                    );
                    assert!(beats_of(tx_frame_len(tagged, ext, len), KW) < 1 << 15);
                }
            }
        }
        // The port is 0xC000 | (qpn << 6 ^ qpn): the block computes the XOR, the spec says what
        // it must equal (checked here for every QP).
        for q in 0..256u32 {
            assert_eq!(src_port(q), 0xC000 | (((q as u16) << 6) ^ q as u16));
        }
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_db_qpn: Default::default(),
            s_db_pi: Default::default(),
            s_db_tvalid: Default::default(),
            s_db_tready: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            s_peek_index: Default::default(),
            m_peek_sq: Default::default(),
            s_failed: Default::default(),
            m_fail_valid: Default::default(),
            m_fail_qpn: Default::default(),
            m_fail_local: Default::default(),
            m_pfail_valid: Default::default(),
            m_pfail_ready: Default::default(),
            m_pfail_qpn: Default::default(),
            m_pfail_psn: Default::default(),
            m_pfail_epoch: Default::default(),
            m_rfail_valid: Default::default(),
            m_rfail_ready: Default::default(),
            m_rfail_qpn: Default::default(),
            m_rfail_psn: Default::default(),
            m_rfail_epoch: Default::default(),
            m_quiet: Default::default(),
            rsp_refused: Default::default(),
            fail_v: Default::default(),
            fail_q: Default::default(),
            fail_loc: Default::default(),
            s_mr_gen: Default::default(),
            mr_new: Default::default(),
            stale_out: Default::default(),
            nak: Default::default(),
            n_refused: Default::default(),
            quiet: Default::default(),
            st_nx: Default::default(),
            j_rkey: Default::default(),
            j_gen: Default::default(),
            j_epoch: Default::default(),
            j_gone: Default::default(),
            x_j_rkey: field_at(&READ_JOB, "rkey"),
            x_j_gen: field_at(&READ_JOB, "gen"),
            x_j_epoch: field_at(&READ_JOB, "epoch"),
            acc_rr: k(ACCESS_REMOTE_READ.into()),
            op_ack: k(RC_ACKNOWLEDGE.into()),
            syn_nak_ra: k(AETH_NAK_REM_ACCESS.into()),
            loc_err: Default::default(),
            m_snd_en: Default::default(),
            m_snd_qpn: Default::default(),
            m_snd_psn: Default::default(),
            m_snd_epoch: Default::default(),
            snd_v: Default::default(),
            snd_q: Default::default(),
            snd_p: Default::default(),
            snd_e: Default::default(),
            s_mrw_en: Default::default(),
            s_mrw_index: Default::default(),
            s_mrw_data: Default::default(),
            local_mac: Default::default(),
            local_ipv4: Default::default(),
            m_rd_addr: Default::default(),
            m_rd_len: Default::default(),
            m_rd_tvalid: Default::default(),
            m_rd_tready: Default::default(),
            s_rd_tdata: Default::default(),
            s_rd_tkeep: Default::default(),
            s_rd_tlast: Default::default(),
            s_rd_tuser: Default::default(),
            s_rd_tvalid: Default::default(),
            s_rd_tready: Default::default(),
            m_meta_tdata: Default::default(),
            m_meta_tvalid: Default::default(),
            m_meta_tready: Default::default(),
            m_pay_tdata: Default::default(),
            m_pay_tkeep: Default::default(),
            m_pay_tlast: Default::default(),
            m_pay_tuser: Default::default(),
            m_pay_tvalid: Default::default(),
            m_pay_tready: Default::default(),
            m_sent_tdata: Default::default(),
            m_sent_tvalid: Default::default(),
            m_sent_tready: Default::default(),
            bad_db: Default::default(),
            bad_qp: Default::default(),
            bad_wqe: Default::default(),
            dma_err: Default::default(),
            prot_err: Default::default(),
            tx_used: Default::default(),
            tx_cap: Default::default(),
            m_rsv: Default::default(),
            yields: Default::default(),
            s_rj_tdata: Default::default(),
            s_rj_tvalid: Default::default(),
            s_dup_valid: Default::default(),
            s_dup_qpn: Default::default(),
            s_dup_psn: Default::default(),
            s_rj_tready: Default::default(),
            m_rdone_valid: Default::default(),
            m_rdone_qpn: Default::default(),
            m_rdone_seq: Default::default(),
            m_rslot_en: Default::default(),
            m_rslot_addr: Default::default(),
            m_rslot_data: Default::default(),
            s_rl_valid: Default::default(),
            s_rl_qpn: Default::default(),
            s_rl_cnt: Default::default(),
            s_rlc_valid: Default::default(),
            s_rlc_qpn: Default::default(),
            s_rlc_cnt: Default::default(),
            s_ret_valid: Default::default(),
            s_ret_qpn: Default::default(),
            s_ret_count: Default::default(),
            s_ret_shared: Default::default(),
            s_rew_valid: Default::default(),
            s_rew_ready: Default::default(),
            s_rew_qpn: Default::default(),
            s_rew_ci: Default::default(),
            s_rew_psn: Default::default(),
            s_rew_pkts: Default::default(),
            retrans: Default::default(),
            cuts: Default::default(),
            s_una_en: Default::default(),
            s_una_qpn: Default::default(),
            s_una_psn: Default::default(),
            win_stops: Default::default(),
            una_ram: RAM::default(),
            ue_v: Default::default(),
            ue_q: Default::default(),
            ue_p: Default::default(),
            una_r: Default::default(),
            win: Default::default(),
            d_una: Default::default(),
            open0: Default::default(),
            behind: Default::default(),
            open1: Default::default(),
            win_lim: k(MAX_UNACKED_PSNS.into()),
            win_lim1: k((MAX_UNACKED_PSNS - 1).into()),
            behind_lim: k(((1u32 << 24) - MAX_PSNS_BEHIND).into()),
            pk_go: Default::default(),
            n_win: Default::default(),
            park_cr: Default::default(),
            rec_ci: Default::default(),
            rec_need: Default::default(),
            rec_next: Default::default(),
            sent_free: Default::default(),
            sent_img: Default::default(),
            x_j_dup: field_at(&READ_JOB, "dup"),
            j_dup: Default::default(),
            in_dup: Default::default(),
            in_q: Default::default(),
            in_bit: Default::default(),
            in_psn: Default::default(),
            p_now: Default::default(),
            p_gap: Default::default(),
            cq_hit: Default::default(),
            cq_clr: Default::default(),
            cutq: Default::default(),
            cut: Default::default(),
            end_now: Default::default(),
            n_cuts: Default::default(),
            take_rew: Default::default(),
            hi_ram: RAM::default(),
            hw_addr: Default::default(),
            hw_data: Default::default(),
            hw_en: Default::default(),
            rp: Default::default(),
            hi_ci: Default::default(),
            hi_psn: Default::default(),
            rw_ci: Default::default(),
            rw_psn: Default::default(),
            rw_pkts: Default::default(),
            sup: Default::default(),
            retx: Default::default(),
            n_retx: Default::default(),
            s_sq_index: at(&SENT, "sq_index"),
            iss_ram: RAM::default(),
            ret_ram: RAM::default(),
            iss: Default::default(),
            ret_n: Default::default(),
            sh_used: Default::default(),
            rt_v: Default::default(),
            rt_q: Default::default(),
            rt_n: Default::default(),
            swp: Default::default(),
            held: Default::default(),
            shared: Default::default(),
            shared1: Default::default(),
            pool_wait: Default::default(),
            n_pwait: Default::default(),
            per_qp: k(SENT_PER_QP as u64),
            sh_cap: k(SHARED_CAP),
            x_shared: at(&SENT, "shared"),
            pool_waits: Default::default(),
            vis_b: Default::default(),
            vis_f: Default::default(),
            quantum: k(QUANTUM),
            flush_run: k(FLUSH_RUN),
            over: Default::default(),
            fl_more: Default::default(),
            sent_push: Default::default(),
            reads: Default::default(),
            rj_q: Fifo::new(),
            park: JobPark::new(),
            rsm: Default::default(),
            rsp_yield: Default::default(),
            rsp: Default::default(),
            job: Default::default(),
            pick: Default::default(),
            take_job: Default::default(),
            rdi_ram: RAM::default(),
            rdl_ram: RAM::default(),
            rdl_init: RAM::default(),
            rdi: Default::default(),
            rdl: Default::default(),
            fence_ram: RAM::default(),
            fenced: Default::default(),
            fence_hold: Default::default(),
            fl_fence: k(WQE_FLAG_FENCE.into()),
            init_pend: Default::default(),
            init_q: Default::default(),
            npk: Default::default(),
            npk_rest: Default::default(),
            rd_sum: Default::default(),
            rd_full: Default::default(),
            is_read: Default::default(),
            is_atomic: Default::default(),
            is_rda: Default::default(),
            at_bit: Default::default(),
            j_at: Default::default(),
            w_cmp: Default::default(),
            w_swap: Default::default(),
            at_sa: Default::default(),
            at_cmp: Default::default(),
            w_x_cmp: wqe_at("compare_add"),
            w_x_swap: wqe_at("swap"),
            x_j_at: field_at(&READ_JOB, "atomic"),
            wr_cs: k(WR_ATOMIC_CMP_AND_SWP.into()),
            op_cswap: k(RC_CMP_SWAP.into()),
            op_fadd: k(RC_FETCH_ADD.into()),
            op_aack: k(RC_ATOMIC_ACKNOWLEDGE.into()),
            ateth_len: k(ATOMIC_ETH.len as u64),
            aack_len: k((AETH.len + ATOMIC_ACK_ETH.len) as u64),
            at_len: k(8),
            rslot_en: Default::default(),
            rslot_addr: Default::default(),
            rslot_data: Default::default(),
            rdone_v: Default::default(),
            rdone_q: Default::default(),
            rdone_s: Default::default(),
            j_seq: Default::default(),
            x_j_seq: field_at(&READ_JOB, "seq"),
            mark_seq: k(MARK_SEQ as u64),
            n_reads: Default::default(),
            rl_pv: Default::default(),
            rl_pq: Default::default(),
            rl_pc: Default::default(),
            j_psn: Default::default(),
            j_msn: Default::default(),
            j_len: Default::default(),
            j_va: Default::default(),
            r_aeth: Default::default(),
            mark: Default::default(),
            meta_mask: Constant::new(crate::util::bits_from_bools(&{
                let mut b = vec![false; META_W];
                b[..MARK_QPN].fill(true);
                b
            })),
            mark_one: Constant::new(crate::util::bits_from_bools(&{
                let mut b = vec![false; META_W];
                b[MARK_BIT] = true;
                b
            })),
            mark_at: k(MARK_QPN as u64),
            mark_bit: k(MARK_BIT as u64),
            x_j_qpn: field_at(&READ_JOB, "qpn"),
            x_j_psn: field_at(&READ_JOB, "psn"),
            x_j_msn: field_at(&READ_JOB, "msn"),
            x_j_len: field_at(&READ_JOB, "len"),
            x_j_va: field_at(&READ_JOB, "va"),
            wr_read: k(WR_RDMA_READ.into()),
            op_rreq: k(RC_RDMA_READ_REQUEST.into()),
            op_rfirst: k(RC_RDMA_READ_RESPONSE_FIRST.into()),
            op_rmiddle: k(RC_RDMA_READ_RESPONSE_MIDDLE.into()),
            op_rlast: k(RC_RDMA_READ_RESPONSE_LAST.into()),
            op_ronly: k(RC_RDMA_READ_RESPONSE_ONLY.into()),
            syn_ack: k(AETH_ACK.into()),
            aeth_len: k(AETH.len as u64),
            acc_lw: k(ACCESS_LOCAL_WRITE.into()),
            rd_max: k(MAX_RD_ATOMIC as u64),
            slot_sh: k(SLOT_IX as u64),
            rd_lim: Default::default(),
            x_mrd: at(&QP_CTX, "max_rd_atomic"),
            ctx_ram: RAM::default(),
            sq_ram: RAM::default(),
            sq_peek: RAM::default(),
            dirty_sq: Default::default(),
            flushing: Default::default(),
            flush: Default::default(),
            f_shift: Default::default(),
            pkts0: Default::default(),
            sw_addr: Default::default(),
            sw_data: Default::default(),
            sw_en: Default::default(),
            qpw_init: Default::default(),
            qpw_stop: Default::default(),
            tj_q: Default::default(),
            pi_ram: RAM::default(),
            ready: Fifo::new(),
            queued: Default::default(),
            state: DFF::default(),
            qpn: Default::default(),
            dirty: Default::default(),
            herr: Default::default(),
            ctx: Default::default(),
            pi: Default::default(),
            ci: Default::default(),
            psn: Default::default(),
            wqe: Default::default(),
            wqe_have: Default::default(),
            wqe_fail: Default::default(),
            rem: Default::default(),
            laddr: Default::default(),
            first: Default::default(),
            kq: Default::default(),
            ka: Default::default(),
            kbad: Default::default(),
            tot: Default::default(),
            r_va: Default::default(),
            r_len: Default::default(),
            si: Default::default(),
            soff: Default::default(),
            s_rem: Default::default(),
            pk_rem: Default::default(),
            lastpk: Default::default(),
            pmtu_r: Default::default(),
            first_psn: Default::default(),
            status: Default::default(),
            rd_addr: Default::default(),
            rd_len: Default::default(),
            rd_valid: Default::default(),
            pay_out: Default::default(),
            meta_q: Fifo::new(),
            gat: Gather::new(),
            jq: Fifo::new(),
            hd: Default::default(),
            hd_v: Default::default(),
            hd_take: Default::default(),
            ep_ram: RAM::default(),
            ep_new: Default::default(),
            hd_fresh: Default::default(),
            ep_w_v: Default::default(),
            ep_w: Default::default(),
            ep_hold: Default::default(),
            ep_now: Default::default(),
            ep_hit: Default::default(),
            pj_live: Default::default(),
            pj_q: Default::default(),
            pj_psn: Default::default(),
            pj_rsp: Default::default(),
            pj_join: Default::default(),
            jq_base: Default::default(),
            psn_m1: Default::default(),
            jq_w0: Default::default(),
            jq_w1: Default::default(),
            pk_bad: Default::default(),
            pk_fail: Default::default(),
            poison: Default::default(),
            pz_hit: Default::default(),
            pz_set: Default::default(),
            pf_w: Default::default(),
            pf_to_rsp: Default::default(),
            pz_clr: Default::default(),
            pf_q: Fifo::new(),
            jq_qpn_at: k(1),
            jq_psn_at: k(1 + QA as u64),
            jq_rsp_at: k(1 + QA as u64 + 24),
            jq_ep_at: k(1 + QA as u64 + 24 + 1),
            pf_psn_at: k(QA as u64),
            pf_rsp_at: k(QA as u64 + 24),
            pf_ep_at: k(QA as u64 + 24 + 1),
            sent: Default::default(),
            sent_valid: Default::default(),
            n_bad_db: Default::default(),
            n_bad_qp: Default::default(),
            n_bad_wqe: Default::default(),
            n_dma_err: Default::default(),
            n_prot_err: Default::default(),
            keys: KeyCheck::new(),
            n_yield: Default::default(),
            rsv: Default::default(),
            db_take: Default::default(),
            db_ok: Default::default(),
            db_push: Default::default(),
            requeue: Default::default(),
            pop: Default::default(),
            q_after_pop: Default::default(),
            q_next: Default::default(),
            head_bit: Default::default(),
            db_bit: Default::default(),
            cur_bit: Default::default(),
            c_state: Default::default(),
            c_wstate: Default::default(),
            c_pmtu: Default::default(),
            c_log: Default::default(),
            c_rqpn: Default::default(),
            c_mac: Default::default(),
            c_ip: Default::default(),
            c_vgrp: Default::default(),
            c_base: Default::default(),
            c_cqn: Default::default(),
            c_pdn: Default::default(),
            c_epoch: Default::default(),
            ring_mask: Default::default(),
            slot: Default::default(),
            wqe_addr: Default::default(),
            pmtu_bytes: Default::default(),
            pmtu_ok: Default::default(),
            w_opcode: Default::default(),
            w_flags: Default::default(),
            w_nsge: Default::default(),
            w_wrid: Default::default(),
            w_imm: Default::default(),
            is_send: Default::default(),
            has_imm: Default::default(),
            imm_here: Default::default(),
            se: Default::default(),
            ext_v: Default::default(),
            ext2_v: Default::default(),
            q_addr: Default::default(),
            q_len: Default::default(),
            q_lkey: Default::default(),
            g_idx: Default::default(),
            g_addr: Default::default(),
            g_len: Default::default(),
            k_more: Default::default(),
            pk_eff: Default::default(),
            piece: Default::default(),
            pk_left: Default::default(),
            next_sge: Default::default(),
            issue_piece: Default::default(),
            w_rkey: Default::default(),
            w_raddr: Default::default(),
            last: Default::default(),
            ack: Default::default(),
            plen: Default::default(),
            opcode: Default::default(),
            reth: Default::default(),
            meta: Default::default(),
            port: Default::default(),
            rd_free: Default::default(),
            can_issue: Default::default(),
            issue_pay: Default::default(),
            route_pay: Default::default(),
            pay_done: Default::default(),
            ci_next: Default::default(),
            last_psn: Default::default(),
            wb: Default::default(),
            wb_park: Default::default(),
            c_pkts: Default::default(),
            off40: Default::default(),
            off: Default::default(),
            off_ok: Default::default(),
            pmtu_log: Default::default(),
            prio: Default::default(),
            u: Default::default(),
            f_plen: Default::default(),
            f_first: Default::default(),
            f_bytes: Default::default(),
            f_beats: Default::default(),
            fits: Default::default(),
            patient: Default::default(),
            after_job: Default::default(),
            vis_t: Default::default(),
            wait_ok: Default::default(),
            credit_wait: k(CREDIT_WAIT),
            rsv_tag: Default::default(),
            pkts_now: Default::default(),
            rts: k(QP_STATE_RTS.into()),
            rtr: k(QP_STATE_RTR.into()),
            wr_write_imm: k(WR_RDMA_WRITE_WITH_IMM.into()),
            wr_send: k(WR_SEND.into()),
            wr_send_imm: k(WR_SEND_WITH_IMM.into()),
            wr_max: k(WR_ATOMIC_FETCH_AND_ADD.into()),
            send_delta: k((RC_RDMA_WRITE_FIRST - RC_SEND_FIRST).into()),
            fl_solicited: k(WQE_FLAG_SOLICITED.into()),
            imm_len: k(IMMDT.len as u64),
            w_x_imm: wqe_at("imm_data"),
            m_se: at(&TX_META, "se"),
            m_ext2: meta_at10("ext2"),
            max_len: k(MAX_MSG_LEN.into()),
            max_sge: k(MAX_SGE as u64),
            st_len: k(WC_LOC_LEN_ERR.into()),
            sg_x_addr: (0..MAX_SGE).map(|i| sge_at(i, "addr")).collect(),
            sg_x_len: (0..MAX_SGE).map(|i| sge_at(i, "length")).collect(),
            sg_x_lkey: (0..MAX_SGE).map(|i| sge_at(i, "lkey")).collect(),
            ix: (0..MAX_SGE as u64).map(k).collect(),
            one256: k(1),
            dw_step: k(DW as u64),
            wqe_top: k((WQE_W - DW) as u64),
            max_pay_out: k(MAX_PAY_OUT),
            wqe_len: k(WQE_LEN as u64),
            wqe_sh: k(WQE_LEN.trailing_zeros().into()),
            op_first: k(RC_RDMA_WRITE_FIRST.into()),
            op_middle: k(RC_RDMA_WRITE_MIDDLE.into()),
            op_last: k(RC_RDMA_WRITE_LAST.into()),
            op_only: k(RC_RDMA_WRITE_ONLY.into()),
            st_ok: k(0),
            st_bad_wqe: k(WC_LOC_QP_OP_ERR.into()),
            st_dma: k(WC_GENERAL_ERR.into()),
            st_prot: k(WC_LOC_PROT_ERR.into()),
            st_flush: k(WC_WR_FLUSH_ERR.into()),
            qp_err: k(QP_STATE_ERR.into()),
            ttl: k(TX_TTL.into()),
            pkey: k(TX_PKEY.into()),
            port_base: k(0xC000),
            x_init: at(&QP_CTX, "init_sq"),
            hdr_fixed: k((TX_BASE_HDR_LEN + ICRC_LEN) as u64),
            reth_len: k(RETH.len as u64),
            tag_len: k(VLAN_TAG_LEN as u64),
            kw_m1: k((KW - 1) as u64),
            kw_sh: k(KW.trailing_zeros().into()),
            sh_rsv: k(16),
            pc: (0..8).map(k).collect(),
            at16: (0..8u64).map(|p| k(16 * p)).collect(),
            x_pkts: at(&QP_CTX, "sq_pkts"),
            x_state: at(&QP_CTX, "state"),
            x_pmtu: at(&QP_CTX, "pmtu"),
            x_log: at(&QP_CTX, "sq_log_size"),
            x_rqpn: at(&QP_CTX, "remote_qpn"),
            x_cqn: at(&QP_CTX, "sq_cqn"),
            x_pdn: at(&QP_CTX, "pdn"),
            x_epoch: at(&QP_CTX, "epoch"),
            x_psn: at(&QP_CTX, "sq_psn"),
            x_ci: at(&QP_CTX, "sq_ci"),
            x_mac: at(&QP_CTX, "remote_mac"),
            x_ip: at(&QP_CTX, "remote_ip"),
            x_vlan: at(&QP_CTX, "vlan"),
            x_base: at(&QP_CTX, "sq_base"),
            w_x_opcode: wqe_at("opcode"),
            w_x_flags: wqe_at("flags"),
            w_x_nsge: wqe_at("num_sge"),
            w_x_wrid: wqe_at("wr_id"),
            w_x_rkey: wqe_at("rkey"),
            w_x_raddr: wqe_at("remote_addr"),
            m_dst_mac: at(&TX_META, "dst_mac"),
            m_src_mac: at(&TX_META, "src_mac"),
            m_src_ip: at(&TX_META, "src_ip"),
            m_vlan: at(&TX_META, "vlan"),
            m_dst_ip: at(&TX_META, "dst_ip"),
            m_src_port: at(&TX_META, "src_port"),
            m_ttl: at(&TX_META, "ttl"),
            m_opcode: at(&TX_META, "opcode"),
            m_ack_req: at(&TX_META, "ack_req"),
            ackreq_mask: k(ACKREQ_PSN_MASK.into()),
            m_pkey: at(&TX_META, "pkey"),
            m_dest_qp: at(&TX_META, "dest_qp"),
            m_psn: at(&TX_META, "psn"),
            m_pay_len: at(&TX_META, "pay_len"),
            m_ext: at(&TX_META, "ext"),
            s_qpn: at(&SENT, "qpn"),
            s_status: at(&SENT, "status"),
            s_flags: at(&SENT, "flags"),
            s_wr_opcode: at(&SENT, "wr_opcode"),
            s_cqn: at(&SENT, "cqn"),
            s_wr_id: at(&SENT, "wr_id"),
            s_byte_len: at(&SENT, "byte_len"),
            s_first_psn: at(&SENT, "first_psn"),
            s_last_psn: at(&SENT, "last_psn"),
            s_epoch: at(&SENT, "epoch"),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Requester<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Requester<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, queued, state, qpn, dirty, dirty_sq, fail_v, fail_q, snd_v, snd_q, snd_p,
            snd_e, flushing, pkts0, ctx, pi, ci, psn, wqe, wqe_have, wqe_fail, rem, laddr, first,
            kq, ka, kbad, tot, r_va, r_len, si, soff, s_rem, pk_rem, lastpk, pmtu_r, first_psn,
            status, rd_addr, rd_len, rd_valid, pay_out, sent, sent_valid, n_bad_db, n_bad_qp,
            n_bad_wqe, n_dma_err, n_prot_err, n_yield, rsv, rsp, job, pick, rdi, rdl, fenced,
            init_pend, init_q, npk, rslot_en, rslot_addr, rslot_data, rdone_v, rdone_q, rdone_s,
            n_reads, rl_pv, rl_pq, rl_pc, vis_b, vis_f, iss, ret_n, sh_used, rt_v, rt_q, rt_n, swp,
            n_pwait, rp, hi_ci, hi_psn, rw_ci, rw_psn, rw_pkts, n_retx, cutq, cut, n_cuts, ue_v,
            ue_q, ue_p, una_r, win, n_win, rec_ci, park_cr, fail_loc, mr_new, stale_out, nak,
            n_refused, quiet, rsm, patient, after_job, vis_t, pk_bad, poison, herr, hd, hd_v,
            hd_fresh, ep_w_v, ep_w, ep_hold
        );
        self.ep_ram.read_clock.next = self.clk.val();
        self.ep_ram.write_clock.next = self.clk.val();
        self.una_ram.read_clock.next = self.clk.val();
        self.una_ram.write_clock.next = self.clk.val();
        self.win_stops.next = self.n_win.q.val();
        self.hi_ram.read_clock.next = self.clk.val();
        self.hi_ram.write_clock.next = self.clk.val();
        self.retrans.next = self.n_retx.q.val();
        // A local error's report: a pulse, the cycle after Done.
        self.m_fail_valid.next = self.fail_v.q.val();
        self.m_fail_qpn.next = self.fail_q.q.val();
        self.m_fail_local.next = self.fail_loc.q.val();
        self.fail_v.d.next = false;
        self.rsp_refused.next = self.n_refused.q.val();
        self.m_snd_en.next = self.snd_v.q.val();
        self.m_snd_qpn.next = self.snd_q.q.val();
        self.m_snd_psn.next = self.snd_p.q.val();
        self.m_snd_epoch.next = self.snd_e.q.val();
        self.snd_v.d.next = false;
        self.cuts.next = self.n_cuts.q.val();
        self.rj_q.clk.next = self.clk.val();
        self.rj_q.rst.next = self.rst.val();
        self.park.clk.next = self.clk.val();
        self.park.rst.next = self.rst.val();
        self.park.s_park.next = false;
        self.park.s_job.next = self.job.q.val();
        self.park.s_psn.next = self.psn.q.val();
        self.park.s_rem.next = self.rem.q.val();
        self.park.s_va.next = self.laddr.q.val();
        self.park.s_first.next = self.first.q.val();
        self.park.s_cut.next = self.cut.q.val();
        self.rdi_ram.read_clock.next = self.clk.val();
        self.fence_ram.read_clock.next = self.clk.val();
        self.fence_ram.write_clock.next = self.clk.val();
        self.rdi_ram.write_clock.next = self.clk.val();
        self.rdl_ram.read_clock.next = self.clk.val();
        self.rdl_ram.write_clock.next = self.clk.val();
        self.rdl_init.read_clock.next = self.clk.val();
        self.rdl_init.write_clock.next = self.clk.val();
        self.ctx_ram.read_clock.next = self.clk.val();
        self.sq_ram.read_clock.next = self.clk.val();
        self.sq_ram.write_clock.next = self.clk.val();
        self.sq_peek.read_clock.next = self.clk.val();
        self.sq_peek.write_clock.next = self.clk.val();
        self.ctx_ram.write_clock.next = self.clk.val();
        self.pi_ram.read_clock.next = self.clk.val();
        self.iss_ram.read_clock.next = self.clk.val();
        self.iss_ram.write_clock.next = self.clk.val();
        self.ret_ram.read_clock.next = self.clk.val();
        self.ret_ram.write_clock.next = self.clk.val();
        self.pi_ram.write_clock.next = self.clk.val();
        self.ready.clk.next = self.clk.val();
        self.ready.rst.next = self.rst.val();
        self.meta_q.clk.next = self.clk.val();
        self.meta_q.rst.next = self.rst.val();
        self.gat.clk.next = self.clk.val();
        self.gat.rst.next = self.rst.val();
        self.jq.clk.next = self.clk.val();
        self.jq.rst.next = self.rst.val();
        self.pf_q.clk.next = self.clk.val();
        self.pf_q.rst.next = self.rst.val();
        self.keys.clk.next = self.clk.val();
        self.keys.rst.next = self.rst.val();
        self.keys.s_mrw_en.next = self.s_mrw_en.val();
        self.keys.s_mrw_index.next = self.s_mrw_index.val();
        self.keys.s_mrw_data.next = self.s_mrw_data.val();

        // Outputs.
        self.m_rd_addr.next = self.rd_addr.q.val();
        self.m_rd_len.next = self.rd_len.q.val();
        self.m_rd_tvalid.next = self.rd_valid.q.val();
        self.m_meta_tdata.next = self.meta_q.m_tdata.val() & self.meta_mask.val();
        // A READ response's last record leaving: the responder may send the QP's ACKs again.
        self.rdone_v.d.next = self.meta_q.m_tvalid.val()
            & self.m_meta_tready.val()
            & self
                .meta_q
                .m_tdata
                .val()
                .get_bit(self.mark_bit.val().index());
        self.rdone_q.d.next = self
            .meta_q
            .m_tdata
            .val()
            .get_bits::<QA>(self.mark_at.val().index());
        self.m_rdone_valid.next = self.rdone_v.q.val();
        self.m_rdone_qpn.next = self.rdone_q.q.val();
        self.rdone_s.d.next = self
            .meta_q
            .m_tdata
            .val()
            .get_bits::<RDC_W>(self.mark_seq.val().index());
        self.m_rdone_seq.next = self.rdone_s.q.val();
        self.m_rslot_en.next = self.rslot_en.q.val();
        self.m_rslot_addr.next = self.rslot_addr.q.val();
        self.m_rslot_data.next = self.rslot_data.q.val();
        self.rslot_en.d.next = false;
        self.reads.next = self.n_reads.q.val();
        // READ jobs wait in their queue; the one in hand is `job`.
        self.rj_q.s_tdata.next = self.s_rj_tdata.val();
        self.rj_q.s_tvalid.next = self.s_rj_tvalid.val();
        self.s_rj_tready.next = self.rj_q.s_tready.val();
        self.j_psn.next = self.job.q.val().get_bits::<24>(self.x_j_psn.val().index());
        self.j_rkey.next = self.job.q.val().get_bits::<32>(self.x_j_rkey.val().index());
        self.j_gen.next = self.job.q.val().get_bits::<32>(self.x_j_gen.val().index());
        self.j_epoch.next = self.job.q.val().get_bits::<8>(self.x_j_epoch.val().index());
        self.j_msn.next = self.job.q.val().get_bits::<24>(self.x_j_msn.val().index());
        self.j_len.next = self.job.q.val().get_bits::<32>(self.x_j_len.val().index());
        self.j_va.next = self.job.q.val().get_bits::<64>(self.x_j_va.val().index());
        self.j_at.next = self.job.q.val().get_bit(self.x_j_at.val().index());
        self.j_seq.next = self
            .job
            .q
            .val()
            .get_bits::<RDC_W>(self.x_j_seq.val().index());
        // READ counts: issued (this block's, from the landed count at an init_sq write) and
        // landed (the responder's events).
        self.rdl_ram.write_address.next = self.s_rl_qpn.val();
        self.rdl_ram.write_data.next = self.s_rl_cnt.val();
        self.rdl_ram.write_enable.next = self.s_rl_valid.val();
        self.rdl_init.write_address.next = self.s_rlc_qpn.val();
        self.rdl_init.write_data.next = self.s_rlc_cnt.val();
        self.rdl_init.write_enable.next = self.s_rlc_valid.val();
        self.rdl_init.read_address.next = self.s_qpw_index.val();
        self.rdi_ram.write_address.next = self.init_q.q.val();
        self.rl_pv.d.next = self.s_rlc_valid.val();
        self.rl_pq.d.next = self.s_rlc_qpn.val();
        self.rl_pc.d.next = self.s_rlc_cnt.val();
        self.rdi_ram.write_data.next = self.rdl_init.read_data.val();
        if self.rl_pv.q.val() & (self.rl_pq.q.val() == self.init_q.q.val()) {
            self.rdi_ram.write_data.next = self.rl_pc.q.val();
        }
        if self.s_rlc_valid.val() & (self.s_rlc_qpn.val() == self.init_q.q.val()) {
            self.rdi_ram.write_data.next = self.s_rlc_cnt.val();
        }
        self.rdi_ram.write_enable.next = self.init_pend.q.val();
        // The QP's own limit (`max_rd_atomic`: the peer's responder resources), 0 as 16.
        self.rd_lim.next = self.ctx.q.val().get_bits::<RDC_W>(self.x_mrd.val().index());
        if (self.rd_lim.val() == bits::<RDC_W>(0)) | (self.rd_lim.val() > self.rd_max.val()) {
            self.rd_lim.next = self.rd_max.val();
        }
        self.rd_full.next = (self.rdi.q.val() - self.rdl.q.val()) >= self.rd_lim.val();
        // Room in the completer's pool of sent requests: Done never waits for it (a wait
        // there would stop the READ jobs, and with them the receive path that retires
        // requests).
        self.m_meta_tvalid.next = self.meta_q.m_tvalid.val();
        self.meta_q.m_tready.next = self.m_meta_tready.val();
        self.m_pay_tdata.next = self.gat.m_tdata.val();
        self.m_pay_tkeep.next = self.gat.m_tkeep.val();
        self.m_pay_tlast.next = self.gat.m_tlast.val();
        self.m_pay_tuser.next = self.gat.m_tuser.val();
        self.m_pay_tvalid.next = self.gat.m_tvalid.val();
        self.gat.m_tready.next = self.m_pay_tready.val();
        self.m_sent_tdata.next = self.sent.q.val();
        self.m_sent_tvalid.next = self.sent_valid.q.val();
        self.bad_db.next = self.n_bad_db.q.val();
        self.bad_qp.next = self.n_bad_qp.q.val();
        self.bad_wqe.next = self.n_bad_wqe.q.val();
        self.dma_err.next = self.n_dma_err.q.val();
        self.prot_err.next = self.n_prot_err.q.val();
        self.yields.next = self.n_yield.q.val();
        self.m_rsv.next = self.rsv.q.val();
        self.rsv.d.next = bits::<RSV_W>(0);
        if self.m_sent_tready.val() {
            self.sent_valid.d.next = false;
        }
        if self.m_rd_tready.val() {
            self.rd_valid.d.next = false;
        }

        // The context of the QP being served, and what follows from it.
        self.c_state.next = self.ctx.q.val().get_bits::<4>(self.x_state.val().index());
        self.c_pmtu.next = self.ctx.q.val().get_bits::<4>(self.x_pmtu.val().index());
        self.c_log.next = self.ctx.q.val().get_bits::<5>(self.x_log.val().index());
        self.c_rqpn.next = self.ctx.q.val().get_bits::<24>(self.x_rqpn.val().index());
        self.c_cqn.next = self.ctx.q.val().get_bits::<16>(self.x_cqn.val().index());
        self.c_pdn.next = self.ctx.q.val().get_bits::<16>(self.x_pdn.val().index());
        self.c_epoch.next = self.ctx.q.val().get_bits::<8>(self.x_epoch.val().index());
        self.c_mac.next = self.ctx.q.val().get_bits::<48>(self.x_mac.val().index());
        self.c_ip.next = self.ctx.q.val().get_bits::<32>(self.x_ip.val().index());
        // The 802.1Q group (vlan, pcp, vid) as one value: the same layout in both records.
        self.c_vgrp.next = self.ctx.q.val().get_bits::<16>(self.x_vlan.val().index());
        self.c_base.next = self.ctx.q.val().get_bits::<64>(self.x_base.val().index());
        self.ring_mask.next = (bits::<32>(1) << self.c_log.val()) - bits::<32>(1);
        self.slot.next = bit_cast::<32, 16>(self.ci.q.val()) & self.ring_mask.val();
        self.wqe_addr.next =
            self.c_base.val() + (bit_cast::<64, 32>(self.slot.val()) << self.wqe_sh.val());
        self.pmtu_ok.next = true;
        self.pmtu_bytes.next = bits::<32>(4096);
        if self.c_pmtu.val() == bits::<4>(1) {
            self.pmtu_bytes.next = bits::<32>(256);
        } else if self.c_pmtu.val() == bits::<4>(2) {
            self.pmtu_bytes.next = bits::<32>(512);
        } else if self.c_pmtu.val() == bits::<4>(3) {
            self.pmtu_bytes.next = bits::<32>(1024);
        } else if self.c_pmtu.val() == bits::<4>(4) {
            self.pmtu_bytes.next = bits::<32>(2048);
        } else if self.c_pmtu.val() != bits::<4>(5) {
            self.pmtu_ok.next = false;
        }
        // Registered for the segmenter (the context is loaded in Look, so from Fetch on).
        self.pmtu_r.d.next = self.pmtu_bytes.val();

        // The work request.
        self.w_opcode.next = self
            .wqe
            .q
            .val()
            .get_bits::<8>(self.w_x_opcode.val().index());
        self.w_flags.next = self.wqe.q.val().get_bits::<8>(self.w_x_flags.val().index());
        self.w_nsge.next = self.wqe.q.val().get_bits::<8>(self.w_x_nsge.val().index());
        self.w_wrid.next = self.wqe.q.val().get_bits::<64>(self.w_x_wrid.val().index());
        self.w_rkey.next = self.wqe.q.val().get_bits::<32>(self.w_x_rkey.val().index());
        self.w_imm.next = self.wqe.q.val().get_bits::<32>(self.w_x_imm.val().index());
        self.is_send.next = (self.w_opcode.val() == self.wr_send.val())
            | (self.w_opcode.val() == self.wr_send_imm.val());
        self.has_imm.next = (self.w_opcode.val() == self.wr_write_imm.val())
            | (self.w_opcode.val() == self.wr_send_imm.val());
        self.is_read.next = self.w_opcode.val() == self.wr_read.val();
        self.is_atomic.next = self.w_opcode.val() > self.wr_read.val();
        // READs and atomics: no payload, a response that lands in the SGEs, a READ slot.
        self.is_rda.next = self.is_read.val() | self.is_atomic.val();
        self.at_bit.next = bits::<1>(0);
        if self.is_atomic.val() {
            self.at_bit.next = bits::<1>(1);
        }
        // An atomic's AtomicETH data: swap or add, and compare (IBA 9.3.6).
        self.w_cmp.next = self.wqe.q.val().get_bits::<64>(self.w_x_cmp.val().index());
        self.w_swap.next = self.wqe.q.val().get_bits::<64>(self.w_x_swap.val().index());
        self.at_sa.next = self.w_cmp.val();
        self.at_cmp.next = bits::<64>(0);
        if self.w_opcode.val() == self.wr_cs.val() {
            self.at_sa.next = self.w_swap.val();
            self.at_cmp.next = self.w_cmp.val();
        }
        // SGE `kq` for the key check, SGE `g_idx` for the segmenter.
        self.q_addr.next = bits::<64>(0);
        self.q_len.next = bits::<32>(0);
        self.q_lkey.next = bits::<32>(0);
        self.g_addr.next = bits::<64>(0);
        self.g_len.next = bits::<32>(0);
        self.g_idx.next = self.si.q.val();
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
            if self.g_idx.val() == self.ix[i].val() {
                self.g_addr.next = self
                    .wqe
                    .q
                    .val()
                    .get_bits::<64>(self.sg_x_addr[i].val().index());
                self.g_len.next = self
                    .wqe
                    .q
                    .val()
                    .get_bits::<32>(self.sg_x_len[i].val().index());
            }
        }
        // The key check's request: SGE `kq` of the WQE, read access (no right needed).
        self.keys.s_valid.next = false;
        self.keys.s_key.next = self.q_lkey.val();
        self.keys.s_pdn.next = self.c_pdn.val();
        self.keys.s_addr.next = self.q_addr.val();
        self.keys.s_len.next = self.q_len.val();
        // A READ or an atomic writes its SGEs: they need local write access.
        self.keys.s_need.next = bits::<8>(0);
        if self.is_rda.val() {
            self.keys.s_need.next = self.acc_lw.val();
        }
        // A READ response job's second check: its rkey over the bytes still to send.
        if self.state.q.val() == ReqState::ReChk {
            self.keys.s_key.next = self.j_rkey.val();
            self.keys.s_addr.next = self.laddr.q.val();
            self.keys.s_len.next = self.rem.q.val();
            self.keys.s_need.next = self.acc_rr.val();
        }
        self.k_more.next = bit_cast::<8, 3>(self.kq.q.val()) < self.w_nsge.val();
        self.w_raddr.next = self
            .wqe
            .q
            .val()
            .get_bits::<64>(self.w_x_raddr.val().index());

        // The next packet of the work request.
        self.last.next = self.rem.q.val() <= self.pmtu_r.q.val();
        // A job's packet that ends it: its last, or the next of a cut job.
        self.end_now.next = self.last.val() | (self.rsp.q.val() & self.cut.q.val());
        self.plen.next = self.pmtu_r.q.val().get_bits::<13>(0);
        if self.last.val() {
            self.plen.next = self.rem.q.val().get_bits::<13>(0);
        }
        // AckReq on the last packet and on every 64th PSN (`ACKREQ_PSN_MASK`).
        self.ack.next = bits::<1>(0);
        if (self.last.val()
            | ((self.psn.q.val() & self.ackreq_mask.val()) == self.ackreq_mask.val()))
            & !self.is_rda.val()
            & !self.rsp.q.val()
        {
            self.ack.next = bits::<1>(1);
        }
        // The WRITE opcode of the packet's place in the message; a SEND's is `send_delta`
        // lower, an immediate variant one higher.
        self.imm_here.next = self.has_imm.val() & self.last.val();
        self.opcode.next = self.op_middle.val();
        if self.first.q.val() & self.last.val() {
            self.opcode.next = self.op_only.val();
        } else if self.first.q.val() {
            self.opcode.next = self.op_first.val();
        } else if self.last.val() {
            self.opcode.next = self.op_last.val();
        }
        if self.imm_here.val() {
            self.opcode.next = self.opcode.val() + bits::<8>(1);
        }
        if self.is_send.val() {
            self.opcode.next = self.opcode.val() - self.send_delta.val();
        }
        if self.is_read.val() {
            self.opcode.next = self.op_rreq.val();
        }
        if self.is_atomic.val() {
            self.opcode.next = self.op_fadd.val();
            if self.w_opcode.val() == self.wr_cs.val() {
                self.opcode.next = self.op_cswap.val();
            }
        }
        // A READ response's packets.
        if self.rsp.q.val() {
            self.opcode.next = self.op_rmiddle.val();
            if self.first.q.val() & self.last.val() {
                self.opcode.next = self.op_ronly.val();
            } else if self.first.q.val() {
                self.opcode.next = self.op_rfirst.val();
            } else if self.last.val() {
                self.opcode.next = self.op_rlast.val();
            }
            if self.j_at.val() {
                self.opcode.next = self.op_aack.val();
            }
            if self.nak.q.val() {
                self.opcode.next = self.op_ack.val();
            }
        }
        // Solicited event: on the last packet of a SEND or a WRITE with immediate that asks.
        self.se.next = bits::<1>(0);
        if ((self.w_flags.val() & self.fl_solicited.val()) != bits::<8>(0))
            & self.last.val()
            & (self.is_send.val() | self.has_imm.val())
            & !self.rsp.q.val()
        {
            self.se.next = bits::<1>(1);
        }
        // Where a WQE resumes: after `sq_pkts` whole PMTU packets (a yield leaves it there;
        // anything else the host wrote that points at or past the end is refused).
        self.c_pkts.next = self.pkts0.q.val();
        self.pmtu_log.next = bit_cast::<8, 4>(self.c_pmtu.val()) + bits::<8>(7);
        self.off40.next = bit_cast::<40, 24>(self.c_pkts.val()) << self.pmtu_log.val();
        self.off.next = self.off40.val().get_bits::<32>(0);
        self.off_ok.next =
            (self.c_pkts.val() == bits::<24>(0)) | (self.off40.val() < self.tot.q.val());
        // The next piece of the packet: at its start (`pk_rem` 0) the whole packet, else what
        // is left of it, as far as the SGE reaches.
        self.pk_eff.next = self.pk_rem.q.val();
        if self.pk_rem.q.val() == bits::<13>(0) {
            self.pk_eff.next = self.plen.val();
        }
        self.piece.next = self.pk_eff.val();
        if self.s_rem.q.val() < bit_cast::<32, 13>(self.pk_eff.val()) {
            self.piece.next = self.s_rem.q.val().get_bits::<13>(0);
        }
        self.pk_left.next = self.pk_eff.val() - self.piece.val();
        // The SGE is used up and bytes of the packet are still to read: on to the next SGE.
        self.next_sge.next = (self.s_rem.q.val() == bits::<32>(0))
            & (self.pk_eff.val() != bits::<13>(0))
            & (bit_cast::<8, 3>(self.si.q.val()) < self.w_nsge.val());

        // Credits: the beats of the next packet's frame (in Check, of a full first packet)
        // against its priority's queue.
        self.prio.next = bits::<3>(0);
        if (self.c_vgrp.val() & bits::<16>(1)) != bits::<16>(0) {
            self.prio.next = self.c_vgrp.val().get_bits::<3>(1);
        }
        self.rsv_tag.next = bit_cast::<4, 3>(self.prio.val()) | bits::<4>(8);
        self.u.next = bits::<16>(0);
        for p in 0..8 {
            if self.prio.val() == self.pc[p].val() {
                self.u.next = self
                    .tx_used
                    .val()
                    .get_bits::<16>(self.at16[p].val().index());
            }
        }
        if self.rsv.q.val().get_bits::<4>(16) == self.rsv_tag.val() {
            self.u.next = self.u.val() + self.rsv.q.val().get_bits::<16>(0);
        }
        self.f_plen.next = bit_cast::<16, 13>(self.plen.val());
        self.f_first.next = self.first.q.val();
        if self.state.q.val() == ReqState::Check {
            self.f_plen.next = self.pmtu_bytes.val().get_bits::<16>(0);
            self.f_first.next = true;
        }
        self.f_bytes.next = self.hdr_fixed.val()
            + self.f_plen.val()
            + ((bits::<16>(0) - self.f_plen.val()) & bits::<16>(3));
        // Extended headers: a RETH on a WRITE's first packet, an ImmDt on the last packet of
        // a request with immediate (in Check, before the WQE is fetched: both, at most).
        if self.state.q.val() == ReqState::Check {
            self.f_bytes.next = self.f_bytes.val() + self.reth_len.val() + self.imm_len.val();
        } else if self.rsp.q.val() {
            // A READ response: an AETH on its first and last packets; an ATOMIC
            // ACKNOWLEDGE: AETH and AtomicAckETH.
            if self.j_at.val() {
                self.f_bytes.next = self.f_bytes.val() + self.aack_len.val();
            } else if self.f_first.val() | self.last.val() {
                self.f_bytes.next = self.f_bytes.val() + self.aeth_len.val();
            }
        } else if self.is_atomic.val() {
            self.f_bytes.next = self.f_bytes.val() + self.ateth_len.val();
        } else {
            if self.f_first.val() & !self.is_send.val() {
                self.f_bytes.next = self.f_bytes.val() + self.reth_len.val();
            }
            if self.imm_here.val() {
                self.f_bytes.next = self.f_bytes.val() + self.imm_len.val();
            }
        }
        if (self.c_vgrp.val() & bits::<16>(1)) != bits::<16>(0) {
            self.f_bytes.next = self.f_bytes.val() + self.tag_len.val();
        }
        self.f_beats.next = (self.f_bytes.val() + self.kw_m1.val()) >> self.kw_sh.val();
        self.fits.next = (self.u.val() + self.f_beats.val()) <= self.tx_cap.val();
        // A visit that is a READ job's, or follows one, waits for credit up to `CREDIT_WAIT`
        // cycles before it yields to others that wait (below).
        self.wait_ok.next = self.patient.q.val() & (self.vis_t.q.val() < self.credit_wait.val());

        // (A READ resumed after `sq_pkts` responses asks for the rest: its address and length
        // past them, set in Prot.)
        self.reth.next = (bit_cast::<128, 64>(self.r_va.q.val()) << 64)
            | (bit_cast::<128, 32>(self.w_rkey.val()) << 32)
            | bit_cast::<128, 32>(self.r_len.q.val());
        // `ext`: the RETH of a WRITE's first packet, else the ImmDt of a last packet with
        // immediate (its first bytes); `ext2`: the ImmDt after a RETH (WRITE ONLY with IMM).
        self.ext_v.next = bits::<128>(0);
        self.ext2_v.next = bits::<96>(0);
        self.r_aeth.next =
            (bit_cast::<32, 8>(self.syn_ack.val()) << 24) | bit_cast::<32, 24>(self.j_msn.val());
        if self.nak.q.val() {
            self.r_aeth.next = (bit_cast::<32, 8>(self.syn_nak_ra.val()) << 24)
                | bit_cast::<32, 24>(self.j_msn.val());
        }
        if self.rsp.q.val() {
            if self.j_at.val() {
                // AETH, then the original data (the job's `va`).
                self.ext_v.next = (bit_cast::<128, 32>(self.r_aeth.val()) << 96)
                    | (bit_cast::<128, 64>(self.j_va.val()) << 32);
            } else if self.first.q.val() | self.last.val() {
                self.ext_v.next = bit_cast::<128, 32>(self.r_aeth.val()) << 96;
            }
        } else if self.is_atomic.val() {
            // AtomicETH: VA, R_Key, swap/add data (its high half here), compare data.
            self.ext_v.next = (bit_cast::<128, 64>(self.w_raddr.val()) << 64)
                | (bit_cast::<128, 32>(self.w_rkey.val()) << 32)
                | bit_cast::<128, 32>(self.at_sa.val().get_bits::<32>(32));
            self.ext2_v.next = (bit_cast::<96, 32>(self.at_sa.val().get_bits::<32>(0)) << 64)
                | bit_cast::<96, 64>(self.at_cmp.val());
        } else if self.first.q.val() & !self.is_send.val() {
            self.ext_v.next = self.reth.val();
            if self.imm_here.val() {
                self.ext2_v.next = bit_cast::<96, 32>(self.w_imm.val()) << 64;
            }
        } else if self.imm_here.val() {
            self.ext_v.next = bit_cast::<128, 32>(self.w_imm.val()) << 96;
        }
        self.port.next = self.port_base.val()
            | ((bit_cast::<16, QA>(self.qpn.q.val()) << 6) ^ bit_cast::<16, QA>(self.qpn.q.val()));
        self.meta.next = (bit_cast::<META_W, 48>(self.c_mac.val()) << self.m_dst_mac.val())
            | (bit_cast::<META_W, 48>(self.local_mac.val()) << self.m_src_mac.val())
            | (bit_cast::<META_W, 32>(self.local_ipv4.val()) << self.m_src_ip.val())
            | (bit_cast::<META_W, 32>(self.c_ip.val()) << self.m_dst_ip.val())
            | (bit_cast::<META_W, 16>(self.port.val()) << self.m_src_port.val())
            | (bit_cast::<META_W, 8>(self.ttl.val()) << self.m_ttl.val())
            | (bit_cast::<META_W, 8>(self.opcode.val()) << self.m_opcode.val())
            | (bit_cast::<META_W, 1>(self.ack.val()) << self.m_ack_req.val())
            | (bit_cast::<META_W, 16>(self.pkey.val()) << self.m_pkey.val())
            | (bit_cast::<META_W, 24>(self.c_rqpn.val()) << self.m_dest_qp.val())
            | (bit_cast::<META_W, 24>(self.psn.q.val()) << self.m_psn.val())
            | (bit_cast::<META_W, 13>(self.plen.val()) << self.m_pay_len.val())
            | (bit_cast::<META_W, 1>(self.se.val()) << self.m_se.val())
            | (bit_cast::<META_W, 128>(self.ext_v.val()) << self.m_ext.val())
            | (bit_cast::<META_W, 96>(self.ext2_v.val()) << self.m_ext2.val())
            | (bit_cast::<META_W, 16>(self.c_vgrp.val()) << self.m_vlan.val());
        // The last packet of a READ response is marked, with its QP (masked off at m_meta).
        self.mark.next = bits::<META_W>(0);
        if self.rsp.q.val() & self.end_now.val() {
            self.mark.next = self.mark_one.val()
                | (bit_cast::<META_W, QA>(self.qpn.q.val()) << self.mark_at.val())
                | (bit_cast::<META_W, RDC_W>(self.j_seq.val()) << self.mark_seq.val());
        }
        self.meta_q.s_tdata.next = self.meta.val() | self.mark.val();
        // A READ request asks for one response packet per PMTU of its length (one at least).
        // (In 256-byte units first: ceil(ceil(len / 256) / (PMTU / 256)).)
        self.rd_sum.next = self.tot.q.val().get_bits::<28>(8)
            + bit_cast::<28, 6>(self.pmtu_r.q.val().get_bits::<6>(8))
            - bits::<28>(1);
        if self.tot.q.val().get_bits::<8>(0) != bits::<8>(0) {
            self.rd_sum.next = self.tot.q.val().get_bits::<28>(8)
                + bit_cast::<28, 6>(self.pmtu_r.q.val().get_bits::<6>(8));
        }
        self.npk.d.next = self.rd_sum.val().get_bits::<24>(4);
        if self.c_pmtu.val() == bits::<4>(1) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(0);
        } else if self.c_pmtu.val() == bits::<4>(2) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(1);
        } else if self.c_pmtu.val() == bits::<4>(3) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(2);
        } else if self.c_pmtu.val() == bits::<4>(4) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(3);
        }
        if self.tot.q.val() == bits::<40>(0) {
            self.npk.d.next = bits::<24>(1);
        }
        // (A resumed READ: the responses after the `sq_pkts` landed.)
        self.npk_rest.next = self.npk.q.val() - self.c_pkts.val();
        self.meta_q.s_tvalid.next = false;

        // Command register free this cycle; a packet needs it and a place in the record queue.
        self.rd_free.next = !self.rd_valid.q.val() | self.m_rd_tready.val();
        self.issue_piece.next = self.rd_free.val()
            & self.jq.s_tready.val()
            & (self.pay_out.q.val() < self.max_pay_out.val());
        self.can_issue.next = self.issue_piece.val() & self.meta_q.s_tready.val();
        self.issue_pay.next = false;
        // Each payload read's record, in read order: its join bit (the packet goes on in the
        // next read) and its packet's QP and PSN.
        self.jq_base.next = (bit_cast::<JQ_W, QA>(self.qpn.q.val()) << self.jq_qpn_at.val())
            | (bit_cast::<JQ_W, 8>(self.c_epoch.val()) << self.jq_ep_at.val());
        if self.rsp.q.val() {
            self.jq_base.next = self.jq_base.val() | (bits::<JQ_W>(1) << self.jq_rsp_at.val());
        }
        if self.pk_left.val() != bits::<13>(0) {
            self.jq_base.next = self.jq_base.val() | bits::<JQ_W>(1);
        }
        self.psn_m1.next = self.psn.q.val() - bits::<24>(1);
        self.jq_w0.next =
            self.jq_base.val() | (bit_cast::<JQ_W, 24>(self.psn.q.val()) << self.jq_psn_at.val());
        self.jq_w1.next =
            self.jq_base.val() | (bit_cast::<JQ_W, 24>(self.psn_m1.val()) << self.jq_psn_at.val());
        self.jq.s_tdata.next = self.jq_w1.val();
        self.jq.s_tvalid.next = false;

        // Router: bytes are payload while payload reads are outstanding, else the WQE.
        // Payload pieces go through the gather block, which joins each packet's pieces.
        self.route_pay.next = self.pay_out.q.val() != bits::<8>(0);
        self.gat.s_tdata.next = self.s_rd_tdata.val();
        self.gat.s_tkeep.next = self.s_rd_tkeep.val();
        self.gat.s_tlast.next = self.s_rd_tlast.val();
        self.pj_join.next = self.hd.q.val().get_bit(0);
        self.pj_q.next = self.hd.q.val().get_bits::<QA>(self.jq_qpn_at.val().index());
        self.pj_psn.next = self.hd.q.val().get_bits::<24>(self.jq_psn_at.val().index());
        self.pj_rsp.next = self.hd.q.val().get_bit(self.jq_rsp_at.val().index());
        // The head's QP's epoch now: as `ep_ram` answers in the cycle after the head was
        // taken, as written since (a write in the cycle it was taken is not in the answer).
        self.ep_new.next = self
            .s_qpw_data
            .val()
            .get_bits::<8>(self.x_epoch.val().index());
        self.ep_ram.write_address.next = self.s_qpw_index.val();
        self.ep_ram.write_data.next = self.ep_new.val();
        self.ep_ram.write_enable.next = self.s_qpw_en.val();
        self.ep_ram.read_address.next = self
            .jq
            .m_tdata
            .val()
            .get_bits::<QA>(self.jq_qpn_at.val().index());
        self.ep_now.next = self.ep_hold.q.val();
        if self.hd_fresh.q.val() {
            self.ep_now.next = self.ep_ram.read_data.val();
        }
        if self.ep_w_v.q.val() {
            self.ep_now.next = self.ep_w.q.val();
        }
        self.ep_hold.d.next = self.ep_now.val();
        self.pj_live.next =
            self.hd.q.val().get_bits::<8>(self.jq_ep_at.val().index()) == self.ep_now.val();
        // A read of a QP failed by a payload read before: its bytes are bad too (its packet
        // follows the failed one, so it must not reach the wire either).
        self.pz_hit.next =
            (self.poison.q.val() & (self.one256.val() << self.pj_q.val())) != bits::<256>(0);
        self.gat.s_tjoin.next = self.pj_join.val();
        self.gat.s_tuser.next = self.s_rd_tuser.val() | self.pz_hit.val() | !self.pj_live.val();
        self.gat.s_tvalid.next = self.s_rd_tvalid.val()
            & self.route_pay.val()
            & self.hd_v.q.val()
            & self.pf_q.s_tready.val();
        self.s_rd_tready.next =
            (self.gat.s_tready.val() & self.hd_v.q.val() & self.pf_q.s_tready.val())
                | !self.route_pay.val();
        self.pay_done.next = self.s_rd_tvalid.val()
            & self.route_pay.val()
            & self.gat.s_tready.val()
            & self.hd_v.q.val()
            & self.pf_q.s_tready.val()
            & self.s_rd_tlast.val();
        // The head is taken when there is none or the one there is done.
        self.hd_take.next = self.jq.m_tvalid.val() & (!self.hd_v.q.val() | self.pay_done.val());
        self.jq.m_tready.next = self.hd_take.val();
        self.hd_fresh.d.next = self.hd_take.val();
        self.ep_hit.next = self.s_qpw_en.val() & (self.s_qpw_index.val() == self.pj_q.val());
        self.ep_w_v.d.next = self.ep_w_v.q.val() | self.ep_hit.val();
        if self.hd_take.val() {
            self.hd.d.next = self.jq.m_tdata.val();
            self.hd_v.d.next = true;
            self.ep_hit.next =
                self.s_qpw_en.val() & (self.s_qpw_index.val() == self.ep_ram.read_address.val());
            self.ep_w_v.d.next = self.ep_hit.val();
        } else if self.pay_done.val() {
            self.hd_v.d.next = false;
        }
        if self.ep_hit.val() {
            self.ep_w.d.next = self.ep_new.val();
        }
        if self.pay_done.val() & self.s_rd_tuser.val() {
            self.n_dma_err.d.next = self.n_dma_err.q.val() + bits::<32>(1);
        }
        // A packet whose read failed: the first of its QP goes to the completer, which fails
        // the QP (its work request with GENERAL_ERR); the QP is poisoned at once.
        if self.pay_done.val() {
            self.pk_bad.d.next = (self.pk_bad.q.val() | self.s_rd_tuser.val()) & self.pj_join.val();
        }
        self.pk_fail.next = self.pay_done.val()
            & !self.pj_join.val()
            & (self.pk_bad.q.val() | self.s_rd_tuser.val())
            & !self.pz_hit.val()
            & self.pj_live.val();
        self.pf_w.next = bit_cast::<PF_W, QA>(self.pj_q.val())
            | (bit_cast::<PF_W, 24>(self.pj_psn.val()) << self.pf_psn_at.val())
            | (bit_cast::<PF_W, 8>(self.hd.q.val().get_bits::<8>(self.jq_ep_at.val().index()))
                << self.pf_ep_at.val());
        if self.pj_rsp.val() {
            self.pf_w.next = self.pf_w.val() | (bits::<PF_W>(1) << self.pf_rsp_at.val());
        }
        self.pf_q.s_tdata.next = self.pf_w.val();
        self.pf_q.s_tvalid.next = self.pk_fail.val();
        // (Each output from the queue's own outputs: no value shared with the ready path, so
        // Verilator orders the handshakes apart.)
        self.m_pfail_valid.next = self.pf_q.m_tvalid.val()
            & !self
                .pf_q
                .m_tdata
                .val()
                .get_bit(self.pf_rsp_at.val().index());
        self.m_rfail_valid.next = self.pf_q.m_tvalid.val()
            & self
                .pf_q
                .m_tdata
                .val()
                .get_bit(self.pf_rsp_at.val().index());
        self.m_pfail_qpn.next = self.pf_q.m_tdata.val().get_bits::<QA>(0);
        self.m_pfail_psn.next = self
            .pf_q
            .m_tdata
            .val()
            .get_bits::<24>(self.pf_psn_at.val().index());
        self.m_rfail_qpn.next = self.pf_q.m_tdata.val().get_bits::<QA>(0);
        self.m_rfail_psn.next = self
            .pf_q
            .m_tdata
            .val()
            .get_bits::<24>(self.pf_psn_at.val().index());
        self.m_pfail_epoch.next = self
            .pf_q
            .m_tdata
            .val()
            .get_bits::<8>(self.pf_ep_at.val().index());
        self.m_rfail_epoch.next = self
            .pf_q
            .m_tdata
            .val()
            .get_bits::<8>(self.pf_ep_at.val().index());
        self.pf_to_rsp.next = self
            .pf_q
            .m_tdata
            .val()
            .get_bit(self.pf_rsp_at.val().index());
        self.pf_q.m_tready.next = (self.m_pfail_ready.val() & !self.pf_to_rsp.val())
            | (self.m_rfail_ready.val() & self.pf_to_rsp.val());
        // WQE beats shift in from the top (constant shifts: wiring, no barrel shifter); after
        // the WQE's `WQE_W / DW` beats its first byte is at the bottom.
        if self.s_rd_tvalid.val() & !self.route_pay.val() {
            self.wqe.d.next = (self.wqe.q.val() >> self.dw_step.val())
                | (bit_cast::<WQE_W, DW>(self.s_rd_tdata.val()) << self.wqe_top.val());
            if self.s_rd_tlast.val() {
                self.wqe_have.d.next = true;
                self.wqe_fail.d.next = self.s_rd_tuser.val();
            }
        }

        // Doorbells: pi into its RAM, the QP into the ready queue unless it is there.
        // READ jobs and QPs with work take turns when both wait.
        // A rewind from the completer comes first.
        self.take_rew.next =
            (self.state.q.val() == ReqState::Idle) & self.s_rew_valid.val() & !self.s_qpw_en.val();
        self.s_rew_ready.next = self.take_rew.val();
        // A parked job is taken before any new one (the QP's responses stay in order).
        self.take_job.next = (self.state.q.val() == ReqState::Idle)
            & !self.take_rew.val()
            & (self.rj_q.m_tvalid.val() | self.park.m_valid.val())
            & (self.pick.q.val() | !self.ready.m_tvalid.val());
        self.rj_q.m_tready.next = self.take_job.val() & !self.park.m_valid.val();
        self.park.s_take.next = self.take_job.val() & self.park.m_valid.val();
        self.pop.next = (self.state.q.val() == ReqState::Idle)
            & !self.take_rew.val()
            & self.ready.m_tvalid.val()
            & !self.take_job.val();
        self.ready.m_tready.next = self.pop.val();
        self.head_bit.next = self.one256.val() << self.ready.m_tdata.val();
        self.db_bit.next = self.one256.val() << self.s_db_qpn.val().get_bits::<QA>(0);
        self.cur_bit.next = self.one256.val() << self.qpn.q.val();
        self.j_dup.next = self.job.q.val().get_bit(self.x_j_dup.val().index());
        // Stale READ streams are cut short: a job for a request the responder had taken
        // before (`dup`: a READ asked again, an atomic replayed) says the peer went back to
        // its PSN. The QP's jobs queued ahead of it (in the responder's pool or in `rj_q`:
        // the responder says so as it puts the duplicate's job in its pool, `s_dup_*`, at
        // least two cycles before the job can leave the pool) are stale: each is marked in
        // `cutq` and sends one packet only. The job in hand is stale when the duplicate's PSN is not
        // after the response it sends next (a later READ of the same retry leaves it alone)
        // and is not its own first (the same READ asked again whole: going on serves it as
        // well): it ends at its next packet. A cut job's packet keeps its opcode (a MIDDLE
        // stays a MIDDLE, so the peer never takes it for a READ's end) and carries the job's
        // mark, so `m_rdone` still says when it has gone.
        self.in_dup.next = self.s_dup_valid.val();
        self.park.s_dup_valid.next = self.in_dup.val();
        self.park.s_dup_qpn.next = self.s_dup_qpn.val();
        self.in_q.next = self.s_dup_qpn.val().get_bits::<QA>(0);
        self.in_bit.next = self.one256.val() << self.in_q.val();
        self.in_psn.next = self.s_dup_psn.val();
        self.park.s_dup_psn.next = self.in_psn.val();
        self.p_now.next = self.j_psn.val();
        if self.rsp.q.val() & self.rsm.q.val() {
            self.p_now.next = self.park.m_psn.val();
        }
        if (self.state.q.val() == ReqState::Seg) | (self.state.q.val() == ReqState::ReChk) {
            self.p_now.next = self.psn.q.val();
        }
        self.p_gap.next = self.p_now.val() - self.in_psn.val();
        self.cq_hit.next = (self.cutq.q.val() & self.cur_bit.val()) != bits::<256>(0);
        self.cq_clr.next = bits::<256>(0);
        if (self.state.q.val() == ReqState::Look)
            & self.rsp.q.val()
            & self.j_dup.val()
            & !self.rsm.q.val()
        {
            self.cq_clr.next = self.cur_bit.val();
        }
        self.cutq.d.next = self.cutq.q.val() & !self.cq_clr.val();
        if self.in_dup.val() {
            self.cutq.d.next = (self.cutq.q.val() & !self.cq_clr.val()) | self.in_bit.val();
        }
        if (self.state.q.val() == ReqState::Look) & self.rsp.q.val() {
            // (A job taken back from the park: `JobPark` kept its cut up to the take.)
            self.cut.d.next = self.cq_hit.val() & !self.j_dup.val();
            if self.rsm.q.val() {
                self.cut.d.next = self.park.m_cut.val();
            }
        }
        if self.in_dup.val()
            & self.rsp.q.val()
            & (self.in_q.val() == self.qpn.q.val())
            & ((self.state.q.val() == ReqState::Look)
                | (self.state.q.val() == ReqState::RJob)
                | (self.state.q.val() == ReqState::Seg)
                | (self.state.q.val() == ReqState::ReChk))
            & (self.p_gap.val() < bits::<24>(0x80_0000))
            & (self.in_psn.val() != self.j_psn.val())
        {
            self.cut.d.next = true;
        }
        self.q_after_pop.next = self.queued.q.val();
        if self.pop.val() {
            self.q_after_pop.next = self.queued.q.val() & !self.head_bit.val();
        }
        // `s_db_tready` and the take condition repeat one expression on purpose: a shared
        // local would join `s_db_tvalid` to `s_db_tready` in Verilator's view of this always
        // block (UNOPTFLAT through the parent), as in `Fifo`.
        self.s_db_tready.next = (self.state.q.val() != ReqState::Check)
            & (self.state.q.val() != ReqState::Park)
            & (self.state.q.val() != ReqState::Done)
            & (self.state.q.val() != ReqState::Rew)
            & self.ready.s_tready.val();
        self.db_take.next = self.s_db_tvalid.val()
            & (self.state.q.val() != ReqState::Check)
            & (self.state.q.val() != ReqState::Park)
            & (self.state.q.val() != ReqState::Done)
            & (self.state.q.val() != ReqState::Rew)
            & self.ready.s_tready.val();
        self.db_ok.next =
            self.db_take.val() & (self.s_db_qpn.val().get_bits::<16>(8) == bits::<16>(0));
        if self.db_take.val() & (self.s_db_qpn.val().get_bits::<16>(8) != bits::<16>(0)) {
            self.n_bad_db.d.next = self.n_bad_db.q.val() + bits::<32>(1);
        }
        self.db_push.next =
            self.db_ok.val() & ((self.q_after_pop.val() & self.db_bit.val()) == bits::<256>(0));
        self.pi_ram.write_address.next = self.s_db_qpn.val().get_bits::<QA>(0);
        self.pi_ram.write_data.next = self.s_db_pi.val();
        self.pi_ram.write_enable.next = self.db_ok.val();
        // A reset (an `init_sq` write) sets the producer index to the host's `sq_ci`: a QP
        // still in the ready queue then finds no work, never its last life's ring. (BAR0 takes
        // one request at a time and none while a doorbell waits, so a table write and a
        // doorbell never meet here.)
        if self.s_qpw_en.val()
            & (self
                .s_qpw_data
                .val()
                .get_bits::<1>(self.x_init.val().index())
                == bits::<1>(1))
        {
            self.pi_ram.write_address.next = self.s_qpw_index.val();
            self.pi_ram.write_data.next = self
                .s_qpw_data
                .val()
                .get_bits::<16>(self.x_ci.val().index());
            self.pi_ram.write_enable.next = true;
        }
        self.pi_ram.read_address.next = self.ready.m_tdata.val();
        self.ctx_ram.read_address.next = self.ready.m_tdata.val();
        self.sq_ram.read_address.next = self.ready.m_tdata.val();
        self.rdi_ram.read_address.next = self.ready.m_tdata.val();
        self.fence_ram.read_address.next = self.ready.m_tdata.val();
        self.rdl_ram.read_address.next = self.ready.m_tdata.val();
        self.iss_ram.read_address.next = self.ready.m_tdata.val();
        self.ret_ram.read_address.next = self.ready.m_tdata.val();
        self.hi_ram.read_address.next = self.ready.m_tdata.val();
        if self.take_rew.val() {
            self.sq_ram.read_address.next = self.s_rew_qpn.val();
            self.hi_ram.read_address.next = self.s_rew_qpn.val();
        }
        if self.state.q.val() == ReqState::Rew {
            self.sq_ram.read_address.next = self.qpn.q.val();
            self.hi_ram.read_address.next = self.qpn.q.val();
        }
        if self.take_job.val() {
            self.ctx_ram.read_address.next = self
                .rj_q
                .m_tdata
                .val()
                .get_bits::<QA>(self.x_j_qpn.val().index());
            if self.park.m_valid.val() {
                self.ctx_ram.read_address.next = self
                    .park
                    .m_job
                    .val()
                    .get_bits::<QA>(self.x_j_qpn.val().index());
            }
        }
        self.requeue.next = false;
        self.sent_push.next = false;
        self.q_next.next = self.q_after_pop.val();
        if self.db_push.val() {
            self.q_next.next = self.q_after_pop.val() | self.db_bit.val();
        }
        self.ready.s_tdata.next = self.s_db_qpn.val().get_bits::<QA>(0);
        self.ready.s_tvalid.next = self.db_push.val();

        // The context copy: the table's writes, else this block's write-back.
        self.ctx_ram.write_address.next = self.s_qpw_index.val();
        self.ctx_ram.write_data.next = self.s_qpw_data.val();
        self.ctx_ram.write_enable.next = self.s_qpw_en.val();
        self.qpw_init.next = self
            .s_qpw_data
            .val()
            .get_bits::<1>(self.x_init.val().index())
            == bits::<1>(1);
        // A table write that takes the QP out of RTR and RTS (to ERR, RESET or INIT).
        self.c_wstate.next = self
            .s_qpw_data
            .val()
            .get_bits::<4>(self.x_state.val().index());
        self.qpw_stop.next = self.s_qpw_en.val()
            & (self.c_wstate.val() != self.rtr.val())
            & (self.c_wstate.val() != self.rts.val());
        self.sw_addr.next = self.s_qpw_index.val();
        // (The host's `sq_ci` is also the first WQE without a `SENT` record.)
        self.sw_data.next = bit_cast::<SQ_W, 24>(
            self.s_qpw_data
                .val()
                .get_bits::<24>(self.x_psn.val().index()),
        ) | (bit_cast::<SQ_W, 16>(
            self.s_qpw_data
                .val()
                .get_bits::<16>(self.x_ci.val().index()),
        ) << 24)
            | (bit_cast::<SQ_W, 24>(
                self.s_qpw_data
                    .val()
                    .get_bits::<24>(self.x_pkts.val().index()),
            ) << 40)
            | (bit_cast::<SQ_W, 16>(
                self.s_qpw_data
                    .val()
                    .get_bits::<16>(self.x_ci.val().index()),
            ) << 64);
        self.sw_en.next = self.s_qpw_en.val() & self.qpw_init.val();
        // A retry in progress ends with an init_sq write (or when the replay catches up).
        self.hw_addr.next = self.s_qpw_index.val();
        self.hw_data.next = bits::<HI_W>(0);
        self.hw_en.next = self.s_qpw_en.val() & self.qpw_init.val();
        // An init_sq write: the QP's issued READ count becomes its landed count the cycle
        // after (a READ landing in between counts).
        self.init_pend.d.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.init_q.d.next = self.s_qpw_index.val();
        // Failed QPs (any engine's error, `QpFail`) and QPs the host moved to ERR flush; so
        // does a READ response job of an earlier epoch (its QP reset since it was accepted).
        self.f_shift.next = self.one256.val() << self.qpn.q.val();
        self.loc_err.next = (self.status.q.val() != self.st_ok.val())
            & (self.status.q.val() != self.st_flush.val());
        // The host took the QP in hand out of RTR and RTS (`herr`), or reset it since the
        // READ response job's request was accepted, or does now (`j_gone`).
        self.j_gone.next = (self.rsp.q.val() & (self.j_epoch.val() != self.c_epoch.val()))
            | self.herr.q.val()
            | (self.qpw_stop.val() & (self.s_qpw_index.val() == self.qpn.q.val()));
        self.flush.next = (((self.s_failed.val() | self.poison.q.val()) & self.f_shift.val())
            != bits::<256>(0))
            | (self.c_state.val() == self.qp_err.val())
            | self.j_gone.val();
        // Poisoned by a failed payload read; a reset (`init_sq`) clears it.
        self.pz_set.next = bits::<256>(0);
        if self.pk_fail.val() {
            self.pz_set.next = self.one256.val() << self.pj_q.val();
        }
        self.pz_clr.next = bits::<256>(0);
        if self.s_qpw_en.val() & self.qpw_init.val() {
            self.pz_clr.next = self.one256.val() << self.s_qpw_index.val();
        }
        self.poison.d.next = (self.poison.q.val() | self.pz_set.val()) & !self.pz_clr.val();
        if self.rst.val() {
            self.poison.d.next = bits::<256>(0);
            self.hd_v.d.next = false;
        }
        if self.s_qpw_en.val() & (self.s_qpw_index.val() == self.qpn.q.val()) {
            self.dirty.d.next = true;
            // rxe checks the QP's state at every packet: a message in flight stops at its
            // next packet, not at its end (its next visit flushes it, or ends a READ
            // response job).
            if self.qpw_stop.val() {
                self.herr.d.next = true;
            }
            if self.qpw_init.val() {
                self.dirty_sq.d.next = true;
            }
        }

        // The scheduler and segmenter.
        self.ci_next.next = self.ci.q.val() + bits::<16>(1);
        // A flush goes on in the same visit: the QP still in ERR, more WQEs, no host write
        // since the visit began, the run not over.
        self.fl_more.next = self.flushing.q.val()
            & self.flush.val()
            & !self.dirty.q.val()
            & !self.dirty_sq.q.val()
            & (self.ci_next.val() != self.pi.q.val())
            & (self.vis_f.q.val() != self.flush_run.val());
        // The visit's quantum: sent, with other QPs waiting.
        self.over.next = (self.vis_b.q.val() >= self.quantum.val())
            & (self.ready.m_tvalid.val() | self.rj_q.m_tvalid.val() | self.park.m_valid.val());
        // A READ response job yields for a QP or a rewind (a parked job would only come back),
        // never once cut or NAKed (its next packet ends it).
        self.rsp_yield.next = self.rsp.q.val()
            & !self.cut.q.val()
            & !self.nak.q.val()
            & !self.j_at.val()
            & (self.ready.m_tvalid.val() | self.s_rew_valid.val())
            & ((self.vis_b.q.val() >= self.quantum.val())
                | (!self.fits.val() & !self.wait_ok.val()));
        // A work request of a retry whose `SENT` record the completer holds already.
        self.sup.next = self.rp.q.val() & (self.ci.q.val() != self.hi_ci.q.val());
        // FENCE (IBA 10.8.3.3): a fenced WQE not yet started waits while READs or atomics
        // the QP issued before it have not landed (a WQE sent again in a retry has had its
        // fence).
        self.fence_hold.next = ((self.w_flags.val() & self.fl_fence.val()) != bits::<8>(0))
            & (self.c_pkts.val() == bits::<24>(0))
            & (self.rdi.q.val() != self.rdl.q.val())
            & !self.sup.val();
        self.fence_ram.write_address.next = self.qpn.q.val();
        self.fence_ram.write_data.next = self.fence_hold.val();
        self.fence_ram.write_enable.next = false;
        // A packet before the point sending had reached: a retransmission.
        self.retx.next = self.psn.q.val() - self.hi_psn.q.val();
        // `SENT` records: one per work request, in Done (the ACK timer covers a message from
        // its last packet), or earlier when the window stops it (in Seg: its last PSN from its
        // packet count).
        self.rec_need.next = self.ci.q.val() == self.rec_ci.q.val();
        // The pool share: what the served QP holds; a work request that needs a record
        // waits while its QP holds its `SENT_PER_QP`, or, holding one already (its reserved
        // entry), while the shared part is full. So every QP can always hand over one.
        self.held.next = self.iss.q.val() - self.ret_n.q.val();
        self.shared.next = self.held.val() != bits::<RC_W>(0);
        self.shared1.next = bits::<1>(0);
        if self.shared.val() {
            self.shared1.next = bits::<1>(1);
        }
        self.pool_wait.next = self.rec_need.val()
            & ((self.held.val() >= self.per_qp.val())
                | (self.shared.val() & (self.sh_used.q.val() >= self.sh_cap.val())));
        self.pool_waits.next = self.n_pwait.q.val();
        self.sent_free.next = !self.sent_valid.q.val() | self.m_sent_tready.val();
        self.last_psn.next = self.psn.q.val() - bits::<24>(1);
        if self.state.q.val() == ReqState::Seg {
            self.last_psn.next = self.first_psn.q.val() + self.npk.q.val() - bits::<24>(1);
        }
        self.sent_img.next = (bit_cast::<SENT_W, QA>(self.qpn.q.val()) << self.s_qpn.val())
            | (bit_cast::<SENT_W, 8>(self.status.q.val()) << self.s_status.val())
            | (bit_cast::<SENT_W, 8>(self.w_flags.val()) << self.s_flags.val())
            | (bit_cast::<SENT_W, 8>(self.w_opcode.val()) << self.s_wr_opcode.val())
            | (bit_cast::<SENT_W, 16>(self.c_cqn.val()) << self.s_cqn.val())
            | (bit_cast::<SENT_W, 64>(self.w_wrid.val()) << self.s_wr_id.val())
            | (bit_cast::<SENT_W, 32>(self.tot.q.val().get_bits::<32>(0)) << self.s_byte_len.val())
            | (bit_cast::<SENT_W, 24>(self.first_psn.q.val()) << self.s_first_psn.val())
            | (bit_cast::<SENT_W, 24>(self.last_psn.val()) << self.s_last_psn.val())
            | (bit_cast::<SENT_W, 8>(self.c_epoch.val()) << self.s_epoch.val())
            | (bit_cast::<SENT_W, 16>(self.ci.q.val()) << self.s_sq_index.val())
            | (bit_cast::<SENT_W, 1>(self.shared1.val()) << self.x_shared.val());
        self.rec_next.next = self.rec_ci.q.val();
        if self.rec_need.val() {
            self.rec_next.next = self.ci_next.val();
        }
        self.wb.next = bit_cast::<SQ_W, 24>(self.psn.q.val())
            | (bit_cast::<SQ_W, 16>(self.ci_next.val()) << 24)
            | (bit_cast::<SQ_W, 16>(self.rec_next.val()) << 64);
        self.pkts_now.next = self.psn.q.val() - self.first_psn.q.val();
        self.wb_park.next = bit_cast::<SQ_W, 24>(self.psn.q.val())
            | (bit_cast::<SQ_W, 16>(self.ci.q.val()) << 24)
            | (bit_cast::<SQ_W, 24>(self.pkts_now.val()) << 40)
            | (bit_cast::<SQ_W, 16>(self.rec_ci.q.val()) << 64);
        // The window: the completer's `una` per QP (a copy of its state writes, one caught
        // in the register `ue` while the RAM is read), the served QP's in `una_r` (loaded in
        // Look, then followed). A packet may go at `psn` while `psn - una` is below the
        // window (or behind it by at most `MAX_PSNS_BEHIND`: a retry behind `una`; further
        // is ahead, so the PSN after a READ of 2^23 PSNs is not open); `win` says so for the next cycle, from
        // the PSN after this cycle's packet if one goes (`open1`), else this one (`open0`).
        self.una_ram.write_address.next = self.s_una_qpn.val();
        self.una_ram.write_data.next = self.s_una_psn.val();
        self.una_ram.write_enable.next = self.s_una_en.val();
        self.una_ram.read_address.next = self.ready.m_tdata.val();
        self.ue_v.d.next = self.s_una_en.val();
        self.ue_q.d.next = self.s_una_qpn.val();
        self.ue_p.d.next = self.s_una_psn.val();
        self.d_una.next = self.psn.q.val() - self.una_r.q.val();
        self.behind.next = self.d_una.val() >= self.behind_lim.val();
        self.open0.next = (self.d_una.val() < self.win_lim.val()) | self.behind.val();
        self.open1.next = (self.d_una.val() < self.win_lim1.val()) | self.behind.val();
        self.pk_go.next = false;
        if self.vis_t.q.val() != self.credit_wait.val() {
            self.vis_t.d.next = self.vis_t.q.val() + bits::<11>(1);
        }
        // An MR table write since the work in hand was checked marks it (`mr_new`: the next
        // packet checks again first).
        self.mr_new.d.next = self.mr_new.q.val() | self.s_mrw_en.val();
        // The QP of the job Idle would take: a parked one first.
        self.tj_q.next = self
            .rj_q
            .m_tdata
            .val()
            .get_bits::<QA>(self.x_j_qpn.val().index());
        if self.park.m_valid.val() {
            self.tj_q.next = self
                .park
                .m_job
                .val()
                .get_bits::<QA>(self.x_j_qpn.val().index());
        }
        match self.state.q.val() {
            ReqState::Idle => {
                self.rsp.d.next = false;
                self.cut.d.next = false;
                self.nak.d.next = false;
                self.herr.d.next = false;
                if self.take_rew.val() {
                    self.qpn.d.next = self.s_rew_qpn.val();
                    self.rw_ci.d.next = self.s_rew_ci.val();
                    self.rw_psn.d.next = self.s_rew_psn.val();
                    self.rw_pkts.d.next = self.s_rew_pkts.val();
                    self.dirty_sq.d.next = false;
                    self.state.d.next = ReqState::Rew;
                } else if self.take_job.val() {
                    self.patient.d.next = true;
                    self.after_job.d.next = true;
                    self.job.d.next = self.rj_q.m_tdata.val();
                    self.qpn.d.next = self.tj_q.val();
                    self.herr.d.next =
                        self.qpw_stop.val() & (self.s_qpw_index.val() == self.tj_q.val());
                    self.rsm.d.next = self.park.m_valid.val();
                    if self.park.m_valid.val() {
                        self.job.d.next = self.park.m_job.val();
                    }
                    self.rsp.d.next = true;
                    self.pick.d.next = false;
                    self.state.d.next = ReqState::Look;
                } else if self.pop.val() {
                    self.patient.d.next = self.after_job.q.val();
                    self.after_job.d.next = false;
                    self.pick.d.next = true;
                    self.qpn.d.next = self.ready.m_tdata.val();
                    self.dirty.d.next =
                        self.s_qpw_en.val() & (self.s_qpw_index.val() == self.ready.m_tdata.val());
                    self.herr.d.next =
                        self.qpw_stop.val() & (self.s_qpw_index.val() == self.ready.m_tdata.val());
                    self.dirty_sq.d.next = self.s_qpw_en.val()
                        & self.qpw_init.val()
                        & (self.s_qpw_index.val() == self.ready.m_tdata.val());
                    self.state.d.next = ReqState::Look;
                }
            }
            ReqState::Look => {
                self.vis_t.d.next = bits::<11>(0);
                self.ctx.d.next = self.ctx_ram.read_data.val();
                self.pi.d.next = self.pi_ram.read_data.val();
                self.psn.d.next = self.sq_ram.read_data.val().get_bits::<24>(0);
                self.ci.d.next = self.sq_ram.read_data.val().get_bits::<16>(24);
                self.pkts0.d.next = self.sq_ram.read_data.val().get_bits::<24>(40);
                self.rdi.d.next = self.rdi_ram.read_data.val();
                self.rdl.d.next = self.rdl_ram.read_data.val();
                self.fenced.d.next = self.fence_ram.read_data.val();
                self.rp.d.next = self.hi_ram.read_data.val().get_bit(0);
                self.hi_ci.d.next = self.hi_ram.read_data.val().get_bits::<16>(1);
                self.hi_psn.d.next = self.hi_ram.read_data.val().get_bits::<24>(17);
                self.rec_ci.d.next = self.sq_ram.read_data.val().get_bits::<16>(64);
                self.una_r.d.next = self.una_ram.read_data.val();
                self.vis_b.d.next = bits::<32>(0);
                self.vis_f.d.next = bits::<5>(0);
                if self.ue_v.q.val() & (self.ue_q.q.val() == self.qpn.q.val()) {
                    self.una_r.d.next = self.ue_p.q.val();
                }
                self.state.d.next = ReqState::Check;
                if self.rsp.q.val() {
                    self.state.d.next = ReqState::RJob;
                }
            }
            ReqState::RJob => {
                // A READ response: its bytes at `va`, one piece per packet, PSNs from the
                // request's (the context is in `ctx` now; the PMTU a cycle later, in Seg).
                // Its region is checked again first if the MR table was written since the
                // responder read the rkey's entry (an atomic reads nothing here).
                self.mr_new.d.next = ((self.j_gen.val() != self.s_mr_gen.val()) & !self.j_at.val())
                    | self.s_mrw_en.val();
                self.psn.d.next = self.j_psn.val();
                self.first.d.next = true;
                self.rem.d.next = self.j_len.val();
                self.laddr.d.next = self.j_va.val();
                self.s_rem.d.next = self.j_len.val();
                self.pk_rem.d.next = bits::<13>(0);
                self.si.d.next = bits::<3>(0);
                if self.rsm.q.val() {
                    // Taken back from the park: where it had got to.
                    self.psn.d.next = self.park.m_psn.val();
                    self.first.d.next = self.park.m_first.val();
                    self.rem.d.next = self.park.m_rem.val();
                    self.laddr.d.next = self.park.m_va.val();
                    self.s_rem.d.next = self.park.m_rem.val();
                }
                self.state.d.next = ReqState::Seg;
                if self.flush.val() {
                    // The QP failed (a NAK this block or the responder sent, any engine's
                    // error), was moved to ERR, or was reset (its epoch moved on: the job
                    // waited in the queue or the park meanwhile) since the request was taken:
                    // nothing more of it goes to the wire.
                    self.state.d.next = ReqState::Drop;
                }
            }
            ReqState::Drop => {
                // A job dropped: the responder hears it has ended as if its last record had
                // gone, once the records before it have (they tell it in order).
                if !self.meta_q.m_tvalid.val() {
                    self.rdone_v.d.next = true;
                    self.rdone_q.d.next = self.qpn.q.val();
                    self.rdone_s.d.next = self.j_seq.val();
                    self.state.d.next = ReqState::Idle;
                }
            }
            ReqState::Check => {
                if self.dirty.q.val() {
                    self.requeue.next = true;
                    self.state.d.next = ReqState::Idle;
                } else if ((self.c_state.val() != self.rts.val()) & !self.flush.val())
                    | (self.ci.q.val() == self.pi.q.val())
                {
                    self.state.d.next = ReqState::Idle;
                } else if !self.pmtu_ok.val() & !self.flush.val() {
                    self.n_bad_qp.d.next = self.n_bad_qp.q.val() + bits::<32>(1);
                    self.state.d.next = ReqState::Idle;
                } else if ((self.rd_full.val()
                    | (self.fenced.q.val() & (self.rdi.q.val() != self.rdl.q.val())))
                    & !self.flush.val()
                    & !self.sup.val())
                    | self.pool_wait.val()
                    | (!self.open0.val() & !self.flush.val())
                {
                    // `MAX_RD_ATOMIC` READs in flight: the QP waits for one to land; its
                    // share of the completer's pool used: it waits for a request of its own
                    // to retire (unless its record is there already); its window full: the
                    // QP waits for ACKs.
                    if self.pool_wait.val() {
                        self.n_pwait.d.next = self.n_pwait.q.val() + bits::<32>(1);
                    }
                    self.requeue.next = true;
                    self.state.d.next = ReqState::Idle;
                } else if !self.fits.val()
                    & !self.flush.val()
                    & self.ready.m_tvalid.val()
                    & !self.wait_ok.val()
                {
                    // No room for a packet of this QP's priority, and others wait.
                    self.requeue.next = true;
                    self.state.d.next = ReqState::Idle;
                } else if self.rd_free.val() {
                    self.rd_addr.d.next = self.wqe_addr.val();
                    self.rd_len.d.next = self.wqe_len.val();
                    self.rd_valid.d.next = true;
                    self.wqe.d.next = bits::<WQE_W>(0);
                    self.wqe_have.d.next = false;
                    self.flushing.d.next = self.flush.val();
                    self.state.d.next = ReqState::Fetch;
                }
            }
            ReqState::Fetch => {
                if self.wqe_have.q.val() {
                    // (A READ request always has its RETH, also when it resumes.)
                    self.first.d.next = (self.c_pkts.val() == bits::<24>(0)) | self.is_read.val();
                    self.first_psn.d.next = self.psn.q.val() - self.c_pkts.val();
                    self.status.d.next = self.st_ok.val();
                    self.kq.d.next = bits::<3>(0);
                    self.ka.d.next = bits::<3>(0);
                    self.kbad.d.next = false;
                    self.tot.d.next = bits::<40>(0);
                    self.state.d.next = ReqState::Prot;
                    if self.flushing.q.val() {
                        self.status.d.next = self.st_flush.val();
                        self.state.d.next = ReqState::Done;
                    } else if self.wqe_fail.q.val() {
                        self.status.d.next = self.st_dma.val();
                        self.n_dma_err.d.next = self.n_dma_err.q.val() + bits::<32>(1);
                        self.state.d.next = ReqState::Done;
                    } else if (self.w_opcode.val() > self.wr_max.val())
                        | (self.w_nsge.val() > self.max_sge.val())
                    {
                        self.status.d.next = self.st_bad_wqe.val();
                        self.n_bad_wqe.d.next = self.n_bad_wqe.q.val() + bits::<32>(1);
                        self.state.d.next = ReqState::Done;
                    } else if self.fence_hold.val() {
                        // Fenced: fetched again once the READs and atomics have landed.
                        self.requeue.next = true;
                        self.state.d.next = ReqState::Idle;
                    }
                    // (The QP's fence bit: set while its WQE waits, clear once it goes.)
                    self.fence_ram.write_enable.next = !self.flushing.q.val();
                }
            }
            ReqState::Prot => {
                // One key check per SGE, one per cycle, adding up the message length; then
                // the answers (in order, `key_check::LATENCY` cycles later). The checks see
                // every MR table write from before the first.
                if self.kq.q.val() == bits::<3>(0) {
                    self.mr_new.d.next = self.s_mrw_en.val();
                }
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
                    self.rem.d.next = self.tot.q.val().get_bits::<32>(0) - self.off.val();
                    self.r_va.d.next = self.w_raddr.val() + bit_cast::<64, 32>(self.off.val());
                    self.r_len.d.next = self.tot.q.val().get_bits::<32>(0) - self.off.val();
                    if self.is_rda.val() {
                        // A READ request or an atomic carries no payload: one packet.
                        self.rem.d.next = bits::<32>(0);
                    }
                    self.si.d.next = bits::<3>(0);
                    self.soff.d.next = self.off.val();
                    self.state.d.next = ReqState::Seek;
                    if self.kbad.q.val() {
                        self.status.d.next = self.st_prot.val();
                        self.n_prot_err.d.next = self.n_prot_err.q.val() + bits::<32>(1);
                        self.state.d.next = ReqState::Done;
                    } else if (self.tot.q.val() > self.max_len.val())
                        | (self.is_atomic.val() & (self.tot.q.val() != self.at_len.val()))
                    {
                        self.status.d.next = self.st_len.val();
                        self.n_bad_wqe.d.next = self.n_bad_wqe.q.val() + bits::<32>(1);
                        self.state.d.next = ReqState::Done;
                    } else if !self.off_ok.val()
                        | (self.is_atomic.val() & (self.c_pkts.val() != bits::<24>(0)))
                    {
                        self.status.d.next = self.st_bad_wqe.val();
                        self.n_bad_wqe.d.next = self.n_bad_wqe.q.val() + bits::<32>(1);
                        self.state.d.next = ReqState::Done;
                    }
                }
            }
            ReqState::Seek => {
                // Find SGE `si` and the offset in it where the message goes on (`soff` bytes
                // past SGE `si`'s start), passing over used-up and empty SGEs.
                if (bit_cast::<8, 3>(self.si.q.val()) < self.w_nsge.val())
                    & (self.soff.q.val() >= self.g_len.val())
                {
                    self.soff.d.next = self.soff.q.val() - self.g_len.val();
                    self.si.d.next = self.si.q.val() + bits::<3>(1);
                } else {
                    self.laddr.d.next = self.g_addr.val() + bit_cast::<64, 32>(self.soff.q.val());
                    self.s_rem.d.next = self.g_len.val() - self.soff.q.val();
                    if bit_cast::<8, 3>(self.si.q.val()) >= self.w_nsge.val() {
                        self.s_rem.d.next = bits::<32>(0);
                    }
                    self.state.d.next = ReqState::Seg;
                }
            }
            ReqState::Seg => {
                if self.next_sge.val() {
                    self.si.d.next = self.si.q.val() + bits::<3>(1);
                    self.soff.d.next = bits::<32>(0);
                    self.state.d.next = ReqState::Seek;
                } else if self.pk_rem.q.val() != bits::<13>(0) {
                    // The packet's next piece.
                    if self.issue_piece.val() {
                        self.issue_pay.next = true;
                        self.jq.s_tvalid.next = true;
                        self.rd_addr.d.next = self.laddr.q.val();
                        self.rd_len.d.next = self.piece.val();
                        self.rd_valid.d.next = true;
                        self.laddr.d.next =
                            self.laddr.q.val() + bit_cast::<64, 13>(self.piece.val());
                        self.s_rem.d.next =
                            self.s_rem.q.val() - bit_cast::<32, 13>(self.piece.val());
                        self.pk_rem.d.next = self.pk_left.val();
                        if self.lastpk.q.val() & (self.pk_left.val() == bits::<13>(0)) {
                            self.state.d.next = ReqState::Done;
                        }
                    }
                } else if self.flush.val() & !self.rsp.q.val() {
                    // The QP failed (a payload read of its own failed, any engine's error) or
                    // was moved to ERR mid-message: it yields between packets, so nothing
                    // more of it goes to the wire, and its next visit flushes.
                    self.park_cr.d.next = false;
                    self.state.d.next = ReqState::Park;
                } else if self.flush.val() & (!self.nak.q.val() | self.j_gone.val()) {
                    // The same for a READ response job: it ends here (unless its NAK, which
                    // failed the QP, is still to go: not when the host has since reset the
                    // QP or taken it out of RTS, which sends nothing more of its old life).
                    self.state.d.next = ReqState::Drop;
                } else if self.s_rew_valid.val() & !self.rsp.q.val() & !self.first.q.val() {
                    // A rewind waits: the QP yields between packets so that Idle takes it
                    // now, not after the rest of a long message the peer would drop.
                    self.park_cr.d.next = false;
                    self.state.d.next = ReqState::Park;
                } else if !self.win.q.val() & !self.rsp.q.val() {
                    // The window is full: the QP yields (READ jobs and rewinds go on in Idle)
                    // and comes back as ACKs open the window. Its message's `SENT` record
                    // goes now, so the completer times it: the peer, not this NIC, holds it.
                    if !self.rec_need.val() | self.sent_free.val() {
                        if self.rec_need.val() {
                            self.sent.d.next = self.sent_img.val();
                            self.sent_valid.d.next = true;
                            self.sent_push.next = true;
                            self.rec_ci.d.next = self.ci_next.val();
                        }
                        self.n_win.d.next = self.n_win.q.val() + bits::<32>(1);
                        self.park_cr.d.next = false;
                        self.state.d.next = ReqState::Park;
                    }
                } else if self.over.val() & !self.rsp.q.val() {
                    // Its quantum sent while other QPs wait: it yields between packets.
                    self.park_cr.d.next = false;
                    self.state.d.next = ReqState::Park;
                } else if self.mr_new.q.val() & !self.rsp.q.val() {
                    // The MR table written since the WQE's SGEs were checked: it yields, and
                    // its next visit fetches and checks it again before another byte.
                    self.park_cr.d.next = false;
                    self.state.d.next = ReqState::Park;
                } else if self.mr_new.q.val() & !self.nak.q.val() & !self.j_at.val() {
                    // The same for a READ response job: its region checked again here (an
                    // ATOMIC ACKNOWLEDGE reads no memory: its `va` is the original data).
                    self.kq.d.next = bits::<3>(0);
                    self.state.d.next = ReqState::ReChk;
                } else if self.rsp_yield.val() {
                    // A READ response yields between packets, as a QP does: its quantum sent,
                    // or no credit for its next packet, while a QP or a rewind waits. It is
                    // parked, and taken back before any new job.
                    self.park.s_park.next = true;
                    if !self.fits.val() {
                        self.n_yield.d.next = self.n_yield.q.val() + bits::<32>(1);
                    }
                    self.state.d.next = ReqState::Idle;
                } else if self.can_issue.val() & self.fits.val() {
                    // A packet: its record, its credits and its first piece.
                    self.vis_b.d.next = self.vis_b.q.val() + bit_cast::<32, 13>(self.plen.val());
                    self.pk_go.next = true;
                    self.issue_pay.next = true;
                    self.jq.s_tvalid.next = true;
                    self.jq.s_tdata.next = self.jq_w0.val();
                    self.rsv.d.next = bit_cast::<RSV_W, 16>(self.f_beats.val())
                        | (bit_cast::<RSV_W, 4>(self.rsv_tag.val()) << self.sh_rsv.val());
                    self.meta_q.s_tvalid.next = true;
                    self.rd_addr.d.next = self.laddr.q.val();
                    self.rd_len.d.next = self.piece.val();
                    self.rd_valid.d.next = true;
                    self.rem.d.next = self.rem.q.val() - bit_cast::<32, 13>(self.plen.val());
                    self.laddr.d.next = self.laddr.q.val() + bit_cast::<64, 13>(self.piece.val());
                    self.s_rem.d.next = self.s_rem.q.val() - bit_cast::<32, 13>(self.piece.val());
                    self.pk_rem.d.next = self.pk_left.val();
                    self.lastpk.d.next = self.end_now.val();
                    if self.rsp.q.val() & self.cut.q.val() & !self.last.val() {
                        self.n_cuts.d.next = self.n_cuts.q.val() + bits::<32>(1);
                    }
                    if self.rp.q.val()
                        & !self.rsp.q.val()
                        & (self.retx.val() >= bits::<24>(0x80_0000))
                    {
                        self.n_retx.d.next = self.n_retx.q.val() + bits::<32>(1);
                    }
                    self.psn.d.next = self.psn.q.val() + bits::<24>(1);
                    self.snd_p.d.next = self.psn.q.val() + bits::<24>(1);
                    if self.is_read.val() & !self.rsp.q.val() {
                        self.psn.d.next = self.psn.q.val() + self.npk_rest.val();
                        self.snd_p.d.next = self.psn.q.val() + self.npk_rest.val();
                    }
                    // A request packet past where sending had got to (not a retransmission).
                    self.snd_v.d.next = !self.rsp.q.val()
                        & !(self.rp.q.val() & (self.retx.val() >= bits::<24>(0x80_0000)));
                    self.snd_q.d.next = self.qpn.q.val();
                    self.snd_e.d.next = self.c_epoch.val();
                    self.first.d.next = false;
                    if self.end_now.val() & (self.pk_left.val() == bits::<13>(0)) {
                        self.state.d.next = ReqState::Done;
                    }
                } else if !self.fits.val()
                    & ((self.ready.m_tvalid.val() & !self.wait_ok.val()) | self.dirty.q.val())
                    & !self.rsp.q.val()
                {
                    self.park_cr.d.next = true;
                    self.state.d.next = ReqState::Park;
                }
            }
            ReqState::ReChk => {
                // A READ response job's region checked again (rxe's `rxe_recheck_mr`): its
                // rkey over the bytes still to send. Refused (deregistered, or registered
                // anew): its next packet is a NAK remote access error at the next response's
                // PSN, the job ends there and the QP fails.
                if self.kq.q.val() == bits::<3>(0) {
                    self.keys.s_valid.next = true;
                    self.kq.d.next = bits::<3>(1);
                    self.mr_new.d.next = self.s_mrw_en.val();
                }
                if self.keys.m_valid.val() {
                    self.state.d.next = ReqState::Seg;
                    if !self.keys.m_ok.val() {
                        self.nak.d.next = true;
                        self.rem.d.next = bits::<32>(0);
                        self.s_rem.d.next = bits::<32>(0);
                        self.n_refused.d.next = self.n_refused.q.val() + bits::<32>(1);
                        // (Not for a QP the host reset or stopped since: `QpFail` would fail
                        // its next life.)
                        self.fail_v.d.next = !self.j_gone.val();
                        self.fail_loc.d.next = false;
                        self.fail_q.d.next = self.qpn.q.val();
                    }
                }
            }
            ReqState::Park => {
                // Yield: the packets sent so far are the resume point (a host write since
                // the visit wins, as in Done).
                if !self.s_qpw_en.val() {
                    if !self.dirty_sq.q.val() {
                        self.sw_addr.next = self.qpn.q.val();
                        self.sw_data.next = self.wb_park.val();
                        self.sw_en.next = true;
                    }
                    if self.park_cr.q.val() {
                        self.n_yield.d.next = self.n_yield.q.val() + bits::<32>(1);
                    }
                    self.requeue.next = true;
                    self.state.d.next = ReqState::Idle;
                }
            }
            ReqState::Rew => {
                // Go back N: the QP's send state to the completer's point; the first rewind
                // of a retry remembers where sending had got to, so work requests before it
                // are sent again without a second `SENT` record or READ slot.
                if !self.s_qpw_en.val() {
                    if !self.dirty_sq.q.val() {
                        self.sw_addr.next = self.qpn.q.val();
                        self.sw_data.next = bit_cast::<SQ_W, 24>(self.rw_psn.q.val())
                            | (bit_cast::<SQ_W, 16>(self.rw_ci.q.val()) << 24)
                            | (bit_cast::<SQ_W, 24>(self.rw_pkts.q.val()) << 40)
                            | (bit_cast::<SQ_W, 16>(
                                self.sq_ram.read_data.val().get_bits::<16>(64),
                            ) << 64);
                        self.sw_en.next = true;
                        if !self.hi_ram.read_data.val().get_bit(0) {
                            self.hw_addr.next = self.qpn.q.val();
                            self.hw_data.next = bits::<HI_W>(1)
                                | (bit_cast::<HI_W, 16>(
                                    self.sq_ram.read_data.val().get_bits::<16>(24),
                                ) << 1)
                                | (bit_cast::<HI_W, 24>(
                                    self.sq_ram.read_data.val().get_bits::<24>(0),
                                ) << 17);
                            self.hw_en.next = true;
                        }
                        self.requeue.next = true;
                    }
                    self.state.d.next = ReqState::Idle;
                }
            }
            ReqState::Done => {
                if self.rsp.q.val() {
                    // A READ response sent (its last record is marked).
                    self.state.d.next = ReqState::Idle;
                } else if (!self.sent_valid.q.val() | self.m_sent_tready.val())
                    & !self.s_qpw_en.val()
                    & !self.init_pend.q.val()
                {
                    // A READ or an atomic sent takes the QP's next slot until its response
                    // lands (not one of a QP the host has reset since its visit began: the
                    // reset set the issued count from the landed one, and the slot is of the
                    // QP's last life).
                    if self.is_rda.val()
                        & (self.status.q.val() == self.st_ok.val())
                        & !self.flushing.q.val()
                        & !self.sup.val()
                        & !self.dirty_sq.q.val()
                    {
                        self.rslot_en.d.next = true;
                        self.rslot_addr.d.next = (bit_cast::<SLOT_A, QA>(self.qpn.q.val())
                            << self.slot_sh.val())
                            | bit_cast::<SLOT_A, SLOT_IX>(self.rdi.q.val().get_bits::<SLOT_IX>(0));
                        self.rslot_data.d.next = bit_cast::<SLOT_W, 16>(self.ci.q.val())
                            | (bit_cast::<SLOT_W, 24>(self.first_psn.q.val()) << 16)
                            | (bit_cast::<SLOT_W, 8>(self.c_epoch.val()) << 40)
                            | (bit_cast::<SLOT_W, 1>(self.at_bit.val()) << 48)
                            | (bit_cast::<SLOT_W, RDC_W>(self.rdi.q.val()) << 49);
                        self.rdi_ram.write_address.next = self.qpn.q.val();
                        self.rdi_ram.write_data.next = self.rdi.q.val() + bits::<RDC_W>(1);
                        self.rdi_ram.write_enable.next = true;
                        if self.is_read.val() {
                            self.n_reads.d.next = self.n_reads.q.val() + bits::<32>(1);
                        }
                    }
                    // A local error (the WQE refused, its fetch failed) fails the QP (IBA
                    // 10.7.3.1, as rxe): every later WQE flushes, and the other engines learn
                    // it through `QpFail`. (Not when the host has reset or stopped the QP
                    // since its visit began: the error is of the QP's last life.)
                    self.fail_v.d.next =
                        self.loc_err.val() & !self.j_gone.val() & !self.dirty_sq.q.val();
                    self.fail_loc.d.next = true;
                    self.fail_q.d.next = self.qpn.q.val();
                    // The work request's record, unless it has one already (its window
                    // stopped it, or it is sent again in a retry).
                    self.sent_valid.d.next = self.rec_need.val();
                    self.sent_push.next = self.rec_need.val();
                    self.sent.d.next = self.sent_img.val();
                    self.rec_ci.d.next = self.rec_next.val();
                    if self.rp.q.val() & (self.ci.q.val() == self.hi_ci.q.val()) {
                        // The replay has caught up: this one is new.
                        self.hw_addr.next = self.qpn.q.val();
                        self.hw_data.next = bits::<HI_W>(0);
                        self.hw_en.next = true;
                        self.rp.d.next = false;
                    }
                    self.ci.d.next = self.ci_next.val();
                    if !self.dirty_sq.q.val() {
                        self.sw_addr.next = self.qpn.q.val();
                        self.sw_data.next = self.wb.val();
                        self.sw_en.next = true;
                    }
                    self.requeue.next =
                        self.dirty.q.val() | (self.ci_next.val() != self.pi.q.val());
                    self.state.d.next = ReqState::Idle;
                    // A QP in ERR flushes its next WQE at once (up to `FLUSH_RUN` a visit):
                    // its flush does not wait a round per WQE behind the QPs that send.
                    if self.fl_more.val() {
                        self.vis_f.d.next = self.vis_f.q.val() + bits::<5>(1);
                        self.requeue.next = false;
                        self.state.d.next = ReqState::Check;
                    }
                }
            }
        }
        // The served QP's `una` as the completer moves it; the window for the next cycle.
        if self.s_una_en.val() & (self.s_una_qpn.val() == self.qpn.q.val()) {
            self.una_r.d.next = self.s_una_psn.val();
        }
        self.win.d.next = self.open0.val();
        if self.pk_go.val() {
            self.win.d.next = self.open1.val();
        }
        // A requeue has the ready queue's write port (doorbells wait in Check and Done); the
        // QP is not in the queue (popped, and a doorbell since then would have queued it).
        if self.requeue.val() & ((self.q_after_pop.val() & self.cur_bit.val()) == bits::<256>(0)) {
            self.ready.s_tdata.next = self.qpn.q.val();
            self.ready.s_tvalid.next = true;
            self.q_next.next = self.q_after_pop.val() | self.cur_bit.val();
        }
        self.queued.d.next = self.q_next.val();
        // The pool share: a record handed over counts for its QP (and takes a shared entry
        // if the QP held one already); the completer's retires count back, each QP's
        // retired count copied as it comes (the served QP's followed, one caught in `rt`
        // while the RAM is read in Look).
        self.iss_ram.write_address.next = self.qpn.q.val();
        self.iss_ram.write_data.next = self.iss.q.val() + bits::<RC_W>(1);
        self.iss_ram.write_enable.next = self.sent_push.val();
        if self.sent_push.val() {
            self.iss.d.next = self.iss.q.val() + bits::<RC_W>(1);
        }
        self.ret_ram.write_address.next = self.s_ret_qpn.val();
        self.ret_ram.write_data.next = self.s_ret_count.val();
        self.ret_ram.write_enable.next = self.s_ret_valid.val();
        self.rt_v.d.next = self.s_ret_valid.val();
        self.rt_q.d.next = self.s_ret_qpn.val();
        self.rt_n.d.next = self.s_ret_count.val();
        if self.state.q.val() == ReqState::Look {
            self.iss.d.next = self.iss_ram.read_data.val();
            self.ret_n.d.next = self.ret_ram.read_data.val();
            if self.rt_v.q.val() & (self.rt_q.q.val() == self.qpn.q.val()) {
                self.ret_n.d.next = self.rt_n.q.val();
            }
        }
        if self.s_ret_valid.val() & (self.s_ret_qpn.val() == self.qpn.q.val()) {
            self.ret_n.d.next = self.s_ret_count.val();
        }
        if (self.sent_push.val() & self.shared.val())
            & !(self.s_ret_valid.val() & self.s_ret_shared.val())
        {
            self.sh_used.d.next = self.sh_used.q.val() + bits::<10>(1);
        } else if !(self.sent_push.val() & self.shared.val())
            & (self.s_ret_valid.val() & self.s_ret_shared.val())
        {
            self.sh_used.d.next = self.sh_used.q.val() - bits::<10>(1);
        }
        // After reset, both count RAMs cleared, one QP a cycle (nothing is handed over or
        // retired before the QP table has been written: BAR0 and the completer clear theirs
        // for as long).
        if !self.swp.q.val().get_bit(8) {
            self.iss_ram.write_address.next = self.swp.q.val().get_bits::<QA>(0);
            self.iss_ram.write_data.next = bits::<RC_W>(0);
            self.iss_ram.write_enable.next = true;
            self.ret_ram.write_address.next = self.swp.q.val().get_bits::<QA>(0);
            self.ret_ram.write_data.next = bits::<RC_W>(0);
            self.ret_ram.write_enable.next = true;
            self.swp.d.next = self.swp.q.val() + bits::<9>(1);
        }
        // Payload reads loaded into the command register minus those whose bytes have passed.
        if self.issue_pay.val() & !self.pay_done.val() {
            self.pay_out.d.next = self.pay_out.q.val() + bits::<8>(1);
        } else if !self.issue_pay.val() & self.pay_done.val() {
            self.pay_out.d.next = self.pay_out.q.val() - bits::<8>(1);
        }
        // Of those, the ones issued before an MR table write, or after it under the old
        // check (the rest of a packet begun): the oldest, so the first to pass. A
        // deregistration's fence waits for them (`m_quiet`), and for the work in hand to
        // stop (yield) or be checked again (a READ response job) before its next packet.
        self.st_nx.next = self.stale_out.q.val();
        if self.issue_pay.val() & self.mr_new.q.val() {
            self.st_nx.next = self.stale_out.q.val() + bits::<8>(1);
        }
        self.stale_out.d.next = self.st_nx.val();
        if self.pay_done.val() & (self.stale_out.q.val() != bits::<8>(0)) {
            self.stale_out.d.next = self.st_nx.val() - bits::<8>(1);
        }
        if self.s_mrw_en.val() {
            self.stale_out.d.next = self.pay_out.d.val();
        }
        // (A register: a write this cycle makes the next cycle not quiet; BAR0 asks from the
        // cycle after its write on.)
        self.m_quiet.next = self.quiet.q.val();
        self.quiet.d.next = !self.s_mrw_en.val()
            & (self.stale_out.q.val() == bits::<8>(0))
            & !(self.mr_new.q.val()
                & !(self.rsp.q.val() & self.j_at.val())
                & ((self.state.q.val() == ReqState::Prot)
                    | (self.state.q.val() == ReqState::Seek)
                    | (self.state.q.val() == ReqState::Seg)
                    | (self.state.q.val() == ReqState::ReChk)));
        // The send state and its copy for QUERY take the same writes.
        self.sq_ram.write_address.next = self.sw_addr.val();
        self.sq_ram.write_data.next = self.sw_data.val();
        self.sq_ram.write_enable.next = self.sw_en.val();
        self.sq_peek.write_address.next = self.sw_addr.val();
        self.sq_peek.write_data.next = self.sw_data.val().get_bits::<64>(0);
        self.sq_peek.write_enable.next = self.sw_en.val();
        self.sq_peek.read_address.next = self.s_peek_index.val();
        self.hi_ram.write_address.next = self.hw_addr.val();
        self.hi_ram.write_data.next = self.hw_data.val();
        self.hi_ram.write_enable.next = self.hw_en.val();
        self.m_peek_sq.next = self.sq_peek.read_data.val();
        if self.rst.val() {
            self.state.d.next = ReqState::Idle;
            self.queued.d.next = bits::<256>(0);
            self.rd_valid.d.next = false;
            self.sent_valid.d.next = false;
            self.pay_out.d.next = bits::<8>(0);
            self.wqe_have.d.next = false;
            self.n_bad_db.d.next = bits::<32>(0);
            self.n_bad_qp.d.next = bits::<32>(0);
            self.n_bad_wqe.d.next = bits::<32>(0);
            self.n_dma_err.d.next = bits::<32>(0);
            self.n_prot_err.d.next = bits::<32>(0);
            self.fail_v.d.next = false;
            self.snd_v.d.next = false;
            self.n_yield.d.next = bits::<32>(0);
            self.mr_new.d.next = false;
            self.stale_out.d.next = bits::<8>(0);
            self.nak.d.next = false;
            self.n_refused.d.next = bits::<32>(0);
            self.rsv.d.next = bits::<RSV_W>(0);
            self.rsp.d.next = false;
            self.rslot_en.d.next = false;
            self.rdone_v.d.next = false;
            self.init_pend.d.next = false;
            self.rl_pv.d.next = false;
            self.n_reads.d.next = bits::<32>(0);
            self.sh_used.d.next = bits::<10>(0);
            self.swp.d.next = bits::<9>(0);
            self.rt_v.d.next = false;
            self.n_pwait.d.next = bits::<32>(0);
            self.n_retx.d.next = bits::<32>(0);
            self.rp.d.next = false;
            self.cutq.d.next = bits::<256>(0);
            self.cut.d.next = false;
            self.rsm.d.next = false;
            self.patient.d.next = false;
            self.after_job.d.next = false;
            self.n_cuts.d.next = bits::<32>(0);
            self.n_win.d.next = bits::<32>(0);
            self.ue_v.d.next = false;
        }
    }
}
