//! `Responder`: the RC receive path from a parsed packet to host memory. Each packet the RX
//! parser accepted (`RX_META` record + payload) is checked against its QP and, for an RDMA
//! WRITE, against the memory region its RETH names; a SEND (and a WRITE with immediate)
//! takes the QP's next receive WQE from the receive queues. A good packet's payload goes to
//! the DMA write engine, cut across the receive WQE's scatter list for a SEND; the expected
//! PSN moves on, and the last packet of a request that asks for one is acknowledged (at most
//! one ACK per message, coalesced further while the TX path is busy). A message that consumed
//! a receive WQE completes it (a `RECV_DONE` record to the completer). ACKs and NAKs received
//! for this NIC's own requests are handed to the completer.
//!
//! RDMA READ (docs/ARCHITECTURE.md, "RDMA READ"): a READ REQUEST checked like a WRITE's first
//! packet (its rkey asking REMOTE_READ) becomes a `READ_JOB` for the requester (`m_rj_*`),
//! with the rkey and BAR0's count of MR table writes (`s_mr_gen`) as it was when the rkey's
//! entry was read (the requester checks the region again if the MR table was written since),
//! which sends the responses; until the requester says the job's last record has gone
//! (`s_rdone_*`), the QP's ACKs wait, so none overtakes a response. A duplicate's job is
//! announced as it goes into the pool (`m_dup_*`: its QP and PSN), so the requester cuts the
//! QP's stale jobs ahead of it, those still in the pool too. READ RESPONSE packets for
//! this NIC's own READs land in the READ WQE's SGEs: a FIRST/ONLY must carry the PSN of the
//! QP's next READ slot (`s_rslot_*`, written by the requester, whose count must be the QP's
//! landed count: a duplicate of a response `MAX_RD_ATOMIC` READs back finds no slot), the WQE is fetched
//! again by `RecvQueue` (`m_rq_req_sq`, `m_rq_req_idx`) and the bytes cut across its SGEs as
//! a SEND's;
//! at the LAST/ONLY, after its writes, an `RX_ACK` with `read` set goes to the completer
//! (`m_rland_*`) and the QP's landed count to the requester (`m_rl_*`). A READ whose
//! responses were lost goes on from the first missing one (IBA 9.7.4.1.4): the requester asks
//! for the rest, and a FIRST (ONLY) at the held READ's next PSN goes on as a MIDDLE (LAST).
//! A READ's local SGEs are checked again before any response lands after an MR table write
//! (its WQE fetched again, the cursor's SGEs kept): a region deregistered mid-READ takes
//! none of the rest, and the READ fails with `RecvQueue`'s status (LOC_PROT_ERR), as rxe
//! checks the MR of each response it copies.
//! A copy of each QP's READ cursor (next PSN, epoch, held) and a bit per QP set by any READ
//! response are read by the completer (`s_rpk_qpn` in, `m_rpk_data` out, `s_rpk_clr` clears
//! the bit). A response past the held READ's next PSN is dropped and counted in the cursor;
//! the third such tells the completer (`RX_ACK` with `gap`, once until the expected one
//! lands). Counters `reads`
//! (READ requests accepted), `bad_resp` (READ responses dropped: a PSN or opcode no READ
//! expects, a QP not in RTS; or ending their READ in error), `jobs_full` (READs and atomics
//! dropped undone for want of a job: the QP holds `JOB_SHARE` jobs its responses have not all
//! left, or the pool of `2^JOB_POOL_A` jobs has been full, and the requester handing on no
//! packet, `s_req_sent` low, for `JOB_WAIT` cycles running; every one after it too until the
//! pool has room; the peer sends them again). The pool holds every share on 16 QPs, so the
//! receive path does not wait for a job there: waiting could close a loop through PFC between
//! two NICs reading from each other.
//!
//! Atomics (docs/ARCHITECTURE.md, "Atomics"): a CMP_SWAP or FETCH_ADD checked like a READ
//! request (its rkey asking REMOTE_ATOMIC, 8 bytes; a misaligned address is NAK invalid
//! request) is done here, one at a time for the whole NIC: once every earlier write is ordered
//! ahead (`wr_ordered`), `RecvQueue` reads the 8 bytes (`m_rq_req_at`, `m_rq_req_addr`,
//! `s_rq_ans_data`), the new value goes back through the scatter in place of the packet's
//! empty payload, and once that write is ordered too the original value goes to the requester
//! as a `READ_JOB` with `atomic` set (its ATOMIC ACKNOWLEDGE). An ATOMIC ACKNOWLEDGE for this
//! NIC's own atomic lands like a one-packet READ response of 8 bytes, its AtomicAckETH's
//! value in place of the payload; one whose record says it carries a payload too (the parser
//! drops such a frame; a record from elsewhere might not) is a bad response, drained.
//! Counter `atomics` (atomics done). A duplicate atomic is answered from a replay cache (the
//! QP's last `MAX_RD_ATOMIC` originals, searched by PSN in `AtDup`), never done twice; one not
//! found there is dropped.
//!
//! A fatal NAK sent (invalid request, remote access or operational error) moves the QP to
//! ERR (IBA 9.9.3): requests for it are dropped (`bad_qp`) until an `init_rq` write, the
//! other engines are told (`m_qerr_{valid,qpn}`, a pulse, to `QpFail`): the requester stops
//! the QP and the completer flushes its outstanding requests; QUERY reads it ERR
//! (`m_peek_rq` bit 48), and its receive WQEs flush. A QP another engine failed (`s_failed`)
//! is the same here: its requests and READ responses are dropped, and its receive WQEs flush
//! when `QpFail` hands it over (`s_fail_{valid,ready,qpn}`). A READ response whose payload read
//! failed (the requester's `m_rfail`, in `s_rfail_{valid,ready,qpn,psn}`; its frame never left)
//! is taken in Idle after the flushes, taking turns with packets as they do: unless its QP is failed or in ERR
//! already, or reset since the read (`s_rfail_epoch`, the QP's epoch then), it gets a NAK remote operational error at its PSN, a fatal NAK as above (the
//! reader's READ fails REM_OP_ERR, not after its retries). Flushes wait while packets come
//! only until the next packet: one taken while a flush waits gives the flush the next turn,
//! so a QP in ERR flushes whatever the other QPs receive.
//!
//! Receive WQEs of a QP in ERR (the host's table write says so, or a fatal NAK sent) complete
//! WR_FLUSH_ERR: when the QP is moved to ERR and at each receive doorbell (`s_rdb_en`, `s_rdb_qpn`) while it stays
//! there, the QP joins a queue (each QP once); between packets the responder takes it and
//! completes the WQE a SEND was landing in (if any), then asks `RecvQueue` for the QP's next
//! WQE until none is left, a `RECV_DONE` with WR_FLUSH_ERR each. Counter `flushed`.
//!
//! Ports:
//! - `s_meta_*`, `s_pay_*`: one `RX_META` record and one payload packet per packet (`RxFrame`).
//! - `s_qpw_{en,index,data}`, `s_mrw_*`: BAR0's QP and MR table write-throughs; this block
//!   keeps its own copy of the QP fields it uses and of the MR table; `s_mr_gen`, BAR0's
//!   count of MR table writes. A QP write sets the
//!   QP's `epsn` and `msn` and ends its message in progress (and gives back a receive WQE it
//!   held) only with `init_rq`; any other (RTR -> RTS, RTS -> RTS, -> ERR) leaves the receive
//!   state running.
//! - `s_peek_index` in, `m_peek_rq` out: a QP's `epsn` (bits 0..24) and `msn` (24..48), for
//!   BAR0's QUERY (a copy of their RAM with the same writes, read at BAR0's command index),
//!   and bit 48: a fatal NAK this block sent failed the QP.
//! - `local_mac`, `local_ipv4`: the port's addresses, for the ACKs' source fields.
//! - `m_wr_{addr,len,tvalid,tready}`, `m_wd_{tdata,tlast,tvalid,tready}`: write commands and
//!   their bytes, to `DmaWrite`, one packet of bytes per command (a zero-length payload writes
//!   nothing). The bytes come out of a `Scatter`, which cuts each packet into its pieces.
//! - `m_rq_req_{valid,ready,qpn}`, `s_rq_ans_*`: a request for a QP's next receive WQE and
//!   `RecvQueue`'s answer (a WQE with its checked SGEs, none posted, or one consumed in error).
//! - `m_rcv_*`: `RECV_DONE` records, to the completer. `wr_idle` in: the DMA write engine has
//!   nothing in hand; a record leaves only when that holds and no write command waits, so the
//!   completion's CQE (written by the completer's engine) never overtakes the message's data.
//! - `m_ack_*`: `TX_META` records of ACKs and NAKs to send (no payload), to the TX arbiter. At
//!   most one per QP waits: a newer one for the same QP replaces it (ACKs are cumulative), so
//!   a TX path busy with long packets never stalls the receive path; but an RNR or fatal NAK
//!   waiting is replaced by none weaker, and each record goes once.
//! - `m_rack_*`: one `RX_ACK` record per ACK or NAK received, to the completer.
//! - `s_hold` in, `m_held` out: a deregistration's fence (BAR0's `m_fence_req`): no packet is
//!   taken while `s_hold`; `m_held` once the responder is between packets with no write
//!   command left (the NIC adds that the DMA write engine and the request muxes are empty).
//! - `tx_used`, `tx_cap` in, `m_rsv` out: credits, as the requester's. An ACK goes out only
//!   when its frame fits its priority's transmit queue, and reserves its beats there; when it
//!   does not fit, its QP goes to the back of the queue of QPs owed one, so ACKs of other
//!   priorities pass it.
//! - counters of packets dropped, by the first reason that applies: `bad_qp` (QP number over
//!   255, QP not in RTR or RTS or with a bad path MTU, or the source IP is not the QP's peer:
//!   dropped silently, IBA 9.6.1; a request for a QP a fatal NAK failed), `bad_pkey` (the BTH P_Key does not match the port's one
//!   P_Key, the default 0xFFFF: its low 15 bits are not all ones; dropped silently, IBA
//!   9.6.1.1), `unsupported` (an opcode this transport does not implement: another
//!   transport's (UD) is dropped; an RC one (SEND with Invalidate) at the expected PSN gets
//!   NAK invalid request, before or after it the PSN rules below),
//!   `dup` (PSN before the expected one: a retransmission, nothing written, ACKed again; a
//!   READ request is served again, as a new READ job at its own PSNs; an atomic is answered
//!   with its saved original; both jobs marked `dup`, so the requester cuts the QP's stale
//!   READ streams short),
//!   `seq_err` (PSN after the expected one: a packet was lost; NAK PSN sequence error, once
//!   until a request at the expected PSN arrives, a READ or an atomic too; `seq_naks` counts
//!   those NAKs), `bad_req` (FIRST/ONLY inside a message, MIDDLE/LAST
//!   outside one or of the other kind (SEND vs WRITE), a payload length the opcode does not
//!   allow (FIRST and MIDDLE exactly one PMTU, ONLY and LAST at most one, LAST one byte at
//!   least), a RETH length over
//!   2^31, or a SEND packet longer than the receive WQE's room left: NAK invalid request; the
//!   last also completes the receive WQE with LOC_LEN_ERR), `bad_rkey` (the RETH's key does
//!   not name a region of the QP's PD with remote write access, or the range is not inside
//!   it; a WRITE MIDDLE or LAST whose region no longer carries its FIRST's key, deregistered
//!   or registered anew since: NAK remote access error), `rnr` (a message that needs a
//!   receive WQE found none posted: RNR NAK with the QP's `min_rnr_timer` code, nothing
//!   written, IBA 9.7.5.2.8).
//!   A receive WQE `RecvQueue` consumed in error (its keys, its SGE count, its fetch) is
//!   completed with that status and the packet NAKed remote operational error (counted
//!   there, `bad_wqe`). `sc_bad_len`: the scatter's contract breaks (none expected).
//!
//! ```text
//!  s_meta --> [Idle: take record; read QP copy, cursors, MR at the RETH key]
//!         --> [ReKey: a WRITE MIDDLE/LAST: MR at the cursor's key]
//!         --> [Check: QP, opcode, PSN, message order, length, key, range -> one decision]
//!         --> [Wait: receive WQE from RecvQueue]   (SEND FIRST/ONLY, WRITE LAST/ONLY IMM)
//!         --> [Room: a SEND packet fits the WQE's room left?]
//!         --> [Split: one DMA write command and one scatter piece per SGE piece, a cycle each]
//!         --> [Pay: payload -> Scatter -> m_wd] or [Drain: payload dropped]
//!         --> [Resp: ACK/NAK record for the QP, received ACK -> m_rack, receive completion
//!              -> m_rcv, write back epsn/msn/cursors]
//!  ACK records: per-QP RAM + queue of QPs owed one (each QP once) --> sender --> m_ack
//! ```
//!
//! The write cursor (next address and bytes left of the message in progress) is per QP, so
//! a WRITE spanning many packets writes exactly the range its first packet's RETH named and
//! was checked for; MIDDLE packets must be one PMTU and leave bytes for a LAST, a LAST must
//! carry exactly the rest. The receive cursor (a RAM per QP) holds the receive WQE a SEND is
//! landing in: its SGEs not yet filled (the first advanced past the bytes written), its room
//! left, the bytes received, `wr_id` and CQ. Nothing is written for a packet that is not
//! accepted whole, and `MacRx` has already dropped every frame with a bad FCS or ICRC.
//!
//! Throughput: a WRITE packet takes its payload beats plus five cycles, a SEND packet one
//! more per SGE piece, faster than the wire (a packet brings at least 98 bytes of headers,
//! pad and gap); a message that takes a receive WQE waits once for `RecvQueue` (its fetch).
//!
//! The QP copy: `epsn` and `msn` live in their own RAM, written by `init_rq` writes and by
//! this block (BAR0's QUERY reads them from its copy). An `init_rq` write to the QP of the
//! packet in flight wins: its write-back is skipped, and it makes no ACK record; it also
//! clears the QP's cursors and voids the QP's ACK or NAK record not yet sent (`ack_void`:
//! dropped when its turn comes), so a reset QP sends nothing of its last life.

use crate::host::{field_at, k};
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::prelude::*;
use crate::rc::iface::{JOB_W, QA, RDC_W, RPK_W, SLOT_A, SLOT_W};
use crate::rc::recv_queue::{ANS_NONE, ANS_SGE_W, ANS_W};
use crate::stream::{Fifo, Scatter};
use ferroce_spec::headers::{
    AETH, AETH_ACK, AETH_NAK_INV_REQ, AETH_NAK_PSN_SEQ, AETH_NAK_REM_ACCESS, AETH_NAK_REM_OP,
    AETH_RNR_NAK, ATOMIC_ACK_ETH, ATOMIC_ETH,
};
use ferroce_spec::layout::Layout;
use ferroce_spec::meta::{
    beats_of, tx_frame_len, ACK_OWED, READ_JOB, RECV_DONE, RX_ACK, RX_META, TX_META, TX_PKEY,
    TX_TTL,
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
    ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE, MAX_RD_ATOMIC, MAX_SGE, MR_CTX,
    QP_CTX, QP_STATE_ERR, QP_STATE_RTR, QP_STATE_RTS, WC_LOC_LEN_ERR, WC_RECV,
    WC_RECV_RDMA_WITH_IMM, WC_REM_INV_REQ_ERR, WC_WITH_IMM, WC_WR_FLUSH_ERR,
};

/// The QP context width, as BAR0 stores it (the whole QP context this NIC keeps: its RNR NAK
/// timer code is above bit 512).
pub const QP_W: usize = crate::host::bar0::QP_W;
pub const MR_W: usize = 256;
/// Cycles a READ or an atomic waits for room in the READ job pool before it is dropped
/// (420 us at 156.25 MHz: far longer than the requester takes to start a job unless its
/// transmit is paused).
const JOB_WAIT: u64 = 1 << 16;
/// The READ job pool: `2^JOB_POOL_A` jobs (512), one block-RAM queue in front of the
/// requester, room for every QP's share (`JOB_SHARE`) on 16 QPs, or for the `MAX_RD_ATOMIC`
/// READs a peer may keep outstanding on each of 64.
pub const JOB_POOL_A: usize = 9;
const JOB_POOL_P: usize = JOB_POOL_A + 1;
/// Jobs one QP may hold at once (accepted, their last response not yet gone): the most its
/// sequence numbers (`RDC_W` bits) tell apart. A compliant peer keeps `MAX_RD_ATOMIC` READs
/// outstanding; the rest of the share is for duplicates, a retry asking again while the
/// stale jobs are still queued.
const JOB_SHARE: u64 = (1 << RDC_W) - 1;
/// `RX_META` records, and the ACK records this block sends (every `TX_META` field an ACK sets
/// lies below bit 512; `ext2` stays zero).
const META_W: usize = 512;
/// An owed ACK as the per-QP table keeps it (`ACK_OWED`).
const AOW_W: usize = ACK_OWED.len * 8;
/// `TX_META` records as they leave (`m_ack`).
const TXM_W: usize = TX_META.len * 8;
const RACK_W: usize = RX_ACK.len * 8;
/// `RECV_DONE` records (`m_rcv`).
const RCV_W: usize = RECV_DONE.len * 8;
/// This block's copy of the host's QP fields: state 0/4, pmtu 4/4, pdn 8/16, remote_qpn 24/24,
/// remote_mac 48/48, remote_ip 96/32, the 802.1Q group (vlan, pcp, vid) 128/16, epoch 144/8,
/// `min_rnr_timer` 152/5, `qp_access` 157/8 (`epsn` and `msn` live in `rq_ram`).
const RCTX_W: usize = 165;
/// The message cursor: next address 0/64, bytes left 64/32 (a WRITE's), in a message 96,
/// NAK sent 97, the message is a SEND 98, the WRITE's RETH length 99/32, the WRITE's rkey
/// 131/16 (an rkey past 16 bits names no region: refused at the FIRST).
const CUR_W: usize = 147;
/// The receive cursor, the receive WQE a QP's SEND is landing in: its SGEs not yet filled
/// 0/384 (as `RecvQueue` answers them, the first one advanced past the bytes written), room
/// left 384/32, bytes received 416/32, `wr_id` 448/64, receive CQ 512/16, held 528.
const RCUR_W: usize = 529;
/// The READ cursor (the receive cursor RAM's upper half, one per QP as requester): the READ
/// response landing in the WQE's SGEs, as above (its fetch answered by `RecvQueue` from the
/// send queue), with the next response PSN 448/24, the QP's count of READs landed (mod 32)
/// 472/5, the QP's epoch when the READ began 480/8 and the MR generation of its check
/// 490/32 (`RL_GEN`) in place of `wr_id` and the CQ; held 528 = a
/// response in progress.
const RL_EXP: usize = 448;
const RL_EPOCH: usize = 480;
/// Out-of-sequence responses of the READ in progress at its expected PSN (2 bits, at 3 the
/// requester is told: `RX_ACK.gap`), in the READ cursor.
const RL_GAPS: usize = 488;
/// The MR table's generation when the READ's local SGEs were last checked (`GEN_W` bits), in
/// the READ cursor: a response of a READ checked before a later MR table write has the READ's
/// WQE checked again first (a region deregistered since takes none of it).
const RL_GEN: usize = 490;
const GEN_W: usize = 32;
/// Receive WQE SGE counts, 0 to `MAX_SGE` (a kernel loop bound: rust-hdl emits `a..=b` as
/// `a..b`).
const SGE_N: usize = MAX_SGE + 1;
/// DMA write commands: address 0/64, length 64/13.
const CMD_W: usize = 77;
/// The MR fields: every MR_CTX field lies below.
const MRS_W: usize = 184;
/// The atomic replay cache: per QP the results of its last `MAX_RD_ATOMIC` atomics (a
/// requester has no more READs and atomics outstanding, so a duplicate's original is one of
/// them), each entry the original value 0/64, the PSN 64/24, the QP's epoch 88/8 and valid 96.
const AC_W: usize = 97;
/// The index of a QP's next entry (its atomics done, mod `MAX_RD_ATOMIC`).
const AX: usize = SLOT_A - QA;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum RespState {
    Idle,
    /// A WRITE MIDDLE or LAST: the region its cursor's rkey names is read again.
    ReKey,
    Check,
    Wait,
    Room,
    Split,
    Pay,
    Drain,
    Resp,
    RSlot,
    RdAcc,
    AtOrd,
    AtWr,
    AtEnd,
    AtDup,
    FlRd,
    FlHeld,
    FlHeldOut,
    FlReq,
    FlWait,
    FlOut,
    /// A READ response's payload read failed: the QP's entries are read.
    RfRd,
    /// ... and its NAK remote operational error made.
    RfNak,
}

fn at(l: &Layout, name: &str) -> Constant<Bits<9>> {
    field_at(l, name)
}

fn at_plus(l: &Layout, name: &str, plus: u64) -> Constant<Bits<9>> {
    let f = l.field(name);
    k(l.lsb(&f) as u64 + plus)
}

/// Where a field of an extended header lies in `RX_META`, whose bits 511..256 read as one
/// big-endian value are the extended headers in wire order: the header starts `before` bytes
/// in (after the headers ahead of it).
fn ext_at(before: usize, l: &Layout, name: &str) -> Constant<Bits<9>> {
    let f = l.field(name);
    k((512 - 8 * before - f.bit - f.width) as u64)
}

#[derive(LogicBlock)]
pub struct Responder<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_meta_tdata: Signal<In, Bits<META_W>>,
    pub s_meta_tvalid: Signal<In, Bit>,
    pub s_meta_tready: Signal<Out, Bit>,
    pub s_pay_tdata: Signal<In, Bits<DW>>,
    pub s_pay_tkeep: Signal<In, Bits<KW>>,
    pub s_pay_tlast: Signal<In, Bit>,
    pub s_pay_tvalid: Signal<In, Bit>,
    pub s_pay_tready: Signal<Out, Bit>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<QP_W>>,
    pub s_peek_index: Signal<In, Bits<QA>>,
    pub m_peek_rq: Signal<Out, Bits<49>>,
    pub s_rpk_qpn: Signal<In, Bits<QA>>,
    pub m_rpk_data: Signal<Out, Bits<RPK_W>>,
    rx_ram: RAM<Bits<RPK_W>, QA>,
    rs_resume: Signal<Local, Bit>,
    pub s_rpk_clr: Signal<In, Bit>,
    seen: DFF<Bits<256>>,
    seen_rd: DFF<Bit>,
    seen_keep: Signal<Local, Bits<256>>,
    seen_clr: Signal<Local, Bits<256>>,
    seen_ini: Signal<Local, Bits<256>>,
    rs_gaps: Signal<Local, Bits<2>>,
    rs_gaps1: Signal<Local, Bits<2>>,
    /// The READ in progress was checked at the MR table's current generation.
    rs_gen_ok: Signal<Local, Bit>,
    /// The generation a check now sees, and whether the READ's WQE is fetched to check it
    /// again (not to start it).
    /// `s_mr_gen` when the rkey's entry was read for the packet being decided (its last Idle
    /// cycle): a READ job carries it, so the requester checks the region again if behind.
    job_gen: DFF<Bits<GEN_W>>,
    chk_gen: DFF<Bits<GEN_W>>,
    rechk: DFF<Bit>,
    gen_mask: Constant<Bits<RCUR_W>>,
    gen_at: Constant<Bits<10>>,
    /// `chk_gen` in its place in the READ cursor.
    chk_field: Signal<Local, Bits<RCUR_W>>,
    rs_after: Signal<Local, Bit>,
    rs_gapd: Signal<Local, Bits<24>>,
    rk_gap: DFF<Bit>,
    a_gap: Constant<Bits<7>>,
    pub s_mrw_en: Signal<In, Bit>,
    pub s_mrw_index: Signal<In, Bits<QA>>,
    pub s_mrw_data: Signal<In, Bits<MR_W>>,
    /// BAR0's count of MR table writes (`Bar0::m_mr_gen`: it moves the cycle after each
    /// write, when the write is in this block's copy of the table).
    pub s_mr_gen: Signal<In, Bits<GEN_W>>,
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ipv4: Signal<In, Bits<32>>,
    pub m_wr_addr: Signal<Out, Bits<64>>,
    pub m_wr_len: Signal<Out, Bits<13>>,
    pub m_wr_tvalid: Signal<Out, Bit>,
    pub m_wr_tready: Signal<In, Bit>,
    pub m_wd_tdata: Signal<Out, Bits<DW>>,
    pub m_wd_tlast: Signal<Out, Bit>,
    pub m_wd_tvalid: Signal<Out, Bit>,
    pub m_wd_tready: Signal<In, Bit>,
    pub m_ack_tdata: Signal<Out, Bits<TXM_W>>,
    pub m_ack_tvalid: Signal<Out, Bit>,
    pub m_ack_tready: Signal<In, Bit>,
    pub m_rack_tdata: Signal<Out, Bits<RACK_W>>,
    pub m_rack_tvalid: Signal<Out, Bit>,
    pub m_rack_tready: Signal<In, Bit>,
    pub m_rq_req_valid: Signal<Out, Bit>,
    pub m_rq_req_ready: Signal<In, Bit>,
    pub m_rq_req_qpn: Signal<Out, Bits<QA>>,
    pub s_rq_ans_valid: Signal<In, Bit>,
    pub s_rq_ans_ready: Signal<Out, Bit>,
    pub s_rq_ans_status: Signal<In, Bits<8>>,
    pub s_rq_ans_wrid: Signal<In, Bits<64>>,
    pub s_rq_ans_nsge: Signal<In, Bits<3>>,
    pub s_rq_ans_sges: Signal<In, Bits<ANS_W>>,
    pub s_rq_ans_len: Signal<In, Bits<32>>,
    pub s_rq_ans_cqn: Signal<In, Bits<16>>,
    pub m_rcv_tdata: Signal<Out, Bits<RCV_W>>,
    pub m_rcv_tvalid: Signal<Out, Bit>,
    pub m_rcv_tready: Signal<In, Bit>,
    pub wr_idle: Signal<In, Bit>,
    pub bad_qp: Signal<Out, Bits<32>>,
    pub unsupported: Signal<Out, Bits<32>>,
    pub dup: Signal<Out, Bits<32>>,
    pub seq_err: Signal<Out, Bits<32>>,
    /// Gaps NAKed (NAK PSN sequence error decided, once per gap).
    pub seq_naks: Signal<Out, Bits<32>>,
    pub bad_req: Signal<Out, Bits<32>>,
    pub bad_rkey: Signal<Out, Bits<32>>,
    pub bad_pkey: Signal<Out, Bits<32>>,
    pub rnr: Signal<Out, Bits<32>>,
    pub sc_bad_len: Signal<Out, Bits<32>>,
    pub tx_used: Signal<In, Bits<USED_W>>,
    pub tx_cap: Signal<In, Bits<16>>,
    pub m_rsv: Signal<Out, Bits<RSV_W>>,
    pub m_rj_tdata: Signal<Out, Bits<JOB_W>>,
    pub m_rj_tvalid: Signal<Out, Bit>,
    pub m_rj_tready: Signal<In, Bit>,
    /// A duplicate's job (`dup`) went into the pool, the cycle after: its QP and PSN. The
    /// requester cuts the QP's jobs ahead of it (in the pool, in its own queue, in hand)
    /// short from then on.
    pub m_dup_valid: Signal<Out, Bit>,
    pub m_dup_qpn: Signal<Out, Bits<24>>,
    pub m_dup_psn: Signal<Out, Bits<24>>,
    dup_v: DFF<Bit>,
    dup_q: DFF<Bits<24>>,
    dup_p: DFF<Bits<24>>,
    pub s_rdone_valid: Signal<In, Bit>,
    pub s_rdone_qpn: Signal<In, Bits<QA>>,
    pub s_rdone_seq: Signal<In, Bits<RDC_W>>,
    pub s_rslot_en: Signal<In, Bit>,
    pub s_rslot_addr: Signal<In, Bits<SLOT_A>>,
    pub s_rslot_data: Signal<In, Bits<SLOT_W>>,
    pub m_rq_req_sq: Signal<Out, Bit>,
    pub m_rq_req_idx: Signal<Out, Bits<16>>,
    pub m_rland_tdata: Signal<Out, Bits<RACK_W>>,
    pub m_rland_tvalid: Signal<Out, Bit>,
    pub m_rland_tready: Signal<In, Bit>,
    pub m_rl_valid: Signal<Out, Bit>,
    pub m_rl_qpn: Signal<Out, Bits<QA>>,
    pub m_rl_cnt: Signal<Out, Bits<RDC_W>>,
    /// A READ's landing counted, as its record is made (`m_rl` tells it once its bytes are
    /// written): the requester's count for a reset of the QP, which the record may outlive.
    pub m_rlc_valid: Signal<Out, Bit>,
    pub m_rlc_qpn: Signal<Out, Bits<QA>>,
    pub m_rlc_cnt: Signal<Out, Bits<RDC_W>>,
    rlc_v: DFF<Bit>,
    rlc_q: DFF<Bits<QA>>,
    rlc_c: DFF<Bits<RDC_W>>,
    pub reads: Signal<Out, Bits<32>>,
    pub jobs_full: Signal<Out, Bits<32>>,
    pub s_req_sent: Signal<In, Bit>,
    pub bad_resp: Signal<Out, Bits<32>>,
    pub m_rq_req_at: Signal<Out, Bit>,
    pub m_rq_req_addr: Signal<Out, Bits<64>>,
    pub s_rq_ans_data: Signal<In, Bits<64>>,
    pub wr_ordered: Signal<In, Bit>,
    pub s_hold: Signal<In, Bit>,
    pub m_held: Signal<Out, Bit>,
    held: DFF<Bit>,
    pub atomics: Signal<Out, Bits<32>>,
    pub s_rdb_en: Signal<In, Bit>,
    pub s_rdb_qpn: Signal<In, Bits<24>>,
    pub flushed: Signal<Out, Bits<32>>,
    pub m_qerr_valid: Signal<Out, Bit>,
    pub m_qerr_qpn: Signal<Out, Bits<QA>>,
    /// QPs failed (`QpFail::failed`), and those another engine failed, to flush.
    pub s_failed: Signal<In, Bits<256>>,
    pub s_fail_valid: Signal<In, Bit>,
    pub s_fail_ready: Signal<Out, Bit>,
    pub s_fail_qpn: Signal<In, Bits<QA>>,
    fl_turn: DFF<Bit>,
    fl_take: Signal<Local, Bit>,
    ff_take: Signal<Local, Bit>,
    ff_still: Signal<Local, Bit>,
    /// A READ response whose payload read failed (the requester's `m_rfail`): its QP and PSN.
    pub s_rfail_valid: Signal<In, Bit>,
    pub s_rfail_ready: Signal<Out, Bit>,
    pub s_rfail_qpn: Signal<In, Bits<QA>>,
    pub s_rfail_psn: Signal<In, Bits<24>>,
    pub s_rfail_epoch: Signal<In, Bits<8>>,
    rf_take: Signal<Local, Bit>,
    /// The epoch of the failed READ response taken.
    rf_ep: DFF<Bits<8>>,
    /// The failed response's QP is not failed or in ERR already: it gets its NAK.
    rf_live: Signal<Local, Bit>,
    // QPs a fatal NAK this block sent has failed (until an init_rq write), and its word to
    // the requester; the QUERY copy's bit.
    rfail: DFF<Bits<256>>,
    qe_v: DFF<Bit>,
    qe_q: DFF<Bits<QA>>,
    pk_fail: DFF<Bits<1>>,
    rf_hit: Signal<Local, Bit>,
    f_q8: Signal<Local, Bits<QA>>,
    /// The opcode is one this transport does (a request of a kind it takes), an RC one.
    op_done: Signal<Local, Bit>,
    op_rc: Signal<Local, Bit>,
    pk_q8: Signal<Local, Bits<QA>>,
    fatal: Signal<Local, Bit>,
    fatal_st: Signal<Local, Bits<8>>,
    // Receive WQEs of QPs in ERR: the QPs in ERR, those to flush (a queue, each once).
    qerr: DFF<Bits<256>>,
    fl_pend: DFF<Bits<256>>,
    fl_q: Fifo<QA, QA, 9>,
    n_flushed: DFF<Bits<32>>,
    qpw_err: Signal<Local, Bit>,
    fl_head: Signal<Local, Bits<256>>,
    fl_after: Signal<Local, Bits<256>>,
    fl_in: Signal<Local, Bit>,
    fl_in_q: Signal<Local, Bits<QA>>,
    fl_cur: Signal<Local, Bits<256>>,
    st_err: Constant<Bits<4>>,
    wc_flush: Constant<Bits<8>>,
    wc_inv: Constant<Bits<8>>,
    // Atomics: the read request, the original and the new value, the count done.
    req_at: DFF<Bit>,
    req_addr: DFF<Bits<64>>,
    at_orig: DFF<Bits<64>>,
    at_new: DFF<Bits<64>>,
    inj: DFF<Bits<1>>,
    inj_val: DFF<Bits<64>>,
    n_atomics: DFF<Bits<32>>,
    is_atomic: Signal<Local, Bit>,
    is_aack: Signal<Local, Bit>,
    rs_start: Signal<Local, Bit>,
    k_len: Signal<Local, Bits<32>>,
    f_swap: Signal<Local, Bits<64>>,
    f_cmp: Signal<Local, Bits<64>>,
    f_orig: Signal<Local, Bits<64>>,
    at_calc: Signal<Local, Bits<64>>,
    sl_at: Signal<Local, Bit>,
    sl_cnt: Signal<Local, Bits<RDC_W>>,
    j_len_v: Signal<Local, Bits<32>>,
    j_va_v: Signal<Local, Bits<64>>,
    j_at: Signal<Local, Bits<1>>,
    op_cswap: Constant<Bits<8>>,
    op_fadd: Constant<Bits<8>>,
    op_aack: Constant<Bits<8>>,
    acc_ra: Constant<Bits<8>>,
    x_swap: Constant<Bits<9>>,
    x_cmp: Constant<Bits<9>>,
    x_orig: Constant<Bits<9>>,
    j_atomic: Constant<Bits<8>>,
    j_dup_at: Constant<Bits<8>>,
    job_dup: DFF<Bits<1>>,
    // The atomic replay cache (`AC_W`): a duplicate atomic is answered from it, never done
    // again. Searched an entry a cycle (`ac_i`), the compare registered (`ac_hit`, `ac_val`).
    ac_ram: RAM<Bits<AC_W>, SLOT_A>,
    ax_ram: RAM<Bits<AX>, QA>,
    ac_i: DFF<Bits<5>>,
    ac_hit: DFF<Bit>,
    ac_val: DFF<Bits<64>>,
    ac_tag: Signal<Local, Bits<33>>,
    ac_sh: Constant<Bits<8>>,
    ac_end: Constant<Bits<5>>,
    // RDMA READ: requests served (jobs out; per QP the count accepted, twice, and the count
    // sent), responses landed (slots in, records out).
    rj_q: Fifo<JOB_W, JOB_POOL_A, JOB_POOL_P>,
    rda_cur: RAM<Bits<RDC_W>, QA>,
    rda_ack: RAM<Bits<RDC_W>, QA>,
    rdf_ram: RAM<Bits<RDC_W>, QA>,
    // The count sent again, read at the packet's QP: its share of the job pool.
    rdf_own: RAM<Bits<RDC_W>, QA>,
    sh_full: DFF<Bit>,
    job_share: Constant<Bits<RDC_W>>,
    rslot: RAM<Bits<SLOT_W>, SLOT_A>,
    rl_q: Fifo<RACK_W, 2, 3>,
    npk: DFF<Bits<24>>,
    req_sq: DFF<Bit>,
    req_idx: DFF<Bits<16>>,
    do_job: DFF<Bit>,
    do_rl: DFF<Bit>,
    rl_st: DFF<Bits<8>>,
    rl_v: DFF<Bit>,
    rl_qn: DFF<Bits<QA>>,
    rl_c: DFF<Bits<RDC_W>>,
    n_reads: DFF<Bits<32>>,
    // A READ or atomic dropped for want of a job: its QP's share used, or the pool full
    // (`JOB_WAIT`).
    jw: DFF<Bits<17>>,
    jdrop: DFF<Bit>,
    n_jobs_full: DFF<Bits<32>>,
    jd_now: Signal<Local, Bit>,
    job_wait: Constant<Bits<17>>,
    n_bad_resp: DFF<Bits<32>>,
    is_rdreq: Signal<Local, Bit>,
    is_resp: Signal<Local, Bit>,
    rs_first: Signal<Local, Bit>,
    rs_middle: Signal<Local, Bit>,
    rs_ends: Signal<Local, Bit>,
    in_op: Signal<Local, Bits<8>>,
    in_resp: Signal<Local, Bit>,
    rd_sum: Signal<Local, Bits<28>>,
    f_psn1: Signal<Local, Bits<24>>,
    rs_exp: Signal<Local, Bits<24>>,
    rs_cnt: Signal<Local, Bits<RDC_W>>,
    rs_cnt1: Signal<Local, Bits<RDC_W>>,
    sl_idx: Signal<Local, Bits<16>>,
    sl_psn: Signal<Local, Bits<24>>,
    rl_fields: Signal<Local, Bits<RCUR_W>>,
    rl_rec: Signal<Local, Bits<RACK_W>>,
    job_rec: Signal<Local, Bits<JOB_W>>,
    rd_clear: Signal<Local, Bit>,
    a_go: Signal<Local, Bit>,
    acc_need: Signal<Local, Bits<8>>,
    rl_go: Signal<Local, Bit>,
    rda_next: Signal<Local, Bits<RDC_W>>,
    rl_mask: Constant<Bits<RCUR_W>>,
    acc_rr: Constant<Bits<8>>,
    op_rreq: Constant<Bits<8>>,
    op_rfirst: Constant<Bits<8>>,
    op_rmiddle: Constant<Bits<8>>,
    op_rlast: Constant<Bits<8>>,
    op_ronly: Constant<Bits<8>>,
    a_read: Constant<Bits<7>>,
    a_status: Constant<Bits<7>>,
    a_landed: Constant<Bits<7>>,
    a_ep: Constant<Bits<7>>,
    j_qpn: Constant<Bits<8>>,
    j_psn: Constant<Bits<8>>,
    j_msn: Constant<Bits<8>>,
    j_len: Constant<Bits<8>>,
    j_va: Constant<Bits<8>>,
    j_seq: Constant<Bits<8>>,
    j_rkey: Constant<Bits<8>>,
    j_gen: Constant<Bits<8>>,
    j_epoch: Constant<Bits<8>>,
    rctx_ram: RAM<Bits<RCTX_W>, QA>,
    cur_ram: RAM<Bits<CUR_W>, QA>,
    mr_ram: RAM<Bits<MRS_W>, QA>,
    rcur_ram: RAM<Bits<RCUR_W>, 9>,
    sc: Scatter<DW, KW>,
    cmdq: Fifo<CMD_W, 3, 4>,
    rcv_q: Fifo<RCV_W, 2, 3>,
    ack_info: RAM<Bits<AOW_W>, QA>,
    ack_qps: Fifo<QA, QA, 9>,
    ack_out: Fifo<META_W, 1, 2>,
    ack_pend: DFF<Bits<256>>,
    /// Per QP: its record in `ack_info` is an RNR or fatal NAK not yet sent, which nothing
    /// weaker replaces.
    ack_strong: DFF<Bits<256>>,
    /// Per QP: its record in `ack_info` is of a life the host has ended since (an init_rq
    /// write): it is dropped when its turn comes, not sent. A record written later clears it.
    ack_void: DFF<Bits<256>>,
    /// The record of the QP being sent was written in the last cycle (or at its pop): it is
    /// read again before it goes.
    snd_stale: DFF<Bit>,
    /// The record the sender holds is void (`ack_void`, or the QP reset since its pop).
    snd_void: DFF<Bit>,
    snd_busy: DFF<Bit>,
    snd_q: DFF<Bits<QA>>,
    rsv: DFF<Bits<RSV_W>>,
    rack_q: Fifo<RACK_W, 2, 3>,
    state: DFF<RespState>,
    m: DFF<Bits<META_W>>,
    dirty: DFF<Bit>,
    // The decision.
    do_ack: DFF<Bit>,
    do_rack: DFF<Bit>,
    ack_syn: DFF<Bits<8>>,
    ack_psn: DFF<Bits<24>>,
    ack_msn: DFF<Bits<24>>,
    wb_ctx: DFF<Bit>,
    wb_cur: DFF<Bit>,
    new_epsn: DFF<Bits<24>>,
    new_msn: DFF<Bits<24>>,
    new_cur: DFF<Bits<CUR_W>>,
    // The receive path: the WQE request, the receive cursor, the pieces still to cut.
    req_v: DFF<Bit>,
    req_qpn: DFF<Bits<QA>>,
    rcv: DFF<Bits<RCUR_W>>,
    wb_rcur: DFF<Bit>,
    do_rcv: DFF<Bit>,
    rcv_st: DFF<Bits<8>>,
    sl: DFF<Bits<ANS_W>>,
    srem: DFF<Bits<16>>,
    n_rnr: DFF<Bits<32>>,
    n_bad_qp: DFF<Bits<32>>,
    n_unsupported: DFF<Bits<32>>,
    n_dup: DFF<Bits<32>>,
    n_seq_err: DFF<Bits<32>>,
    n_seq_nak: DFF<Bits<32>>,
    n_bad_req: DFF<Bits<32>>,
    n_bad_rkey: DFF<Bits<32>>,
    n_bad_pkey: DFF<Bits<32>>,
    pkey_ok: DFF<Bit>,
    // Locals: the record.
    f_op: Signal<Local, Bits<8>>,
    f_psn: Signal<Local, Bits<24>>,
    f_qpn: Signal<Local, Bits<24>>,
    f_len: Signal<Local, Bits<13>>,
    /// An ATOMIC ACKNOWLEDGE with a payload after its AtomicAckETH (malformed: dropped).
    aack_pay: Signal<Local, Bit>,
    f_len32: Signal<Local, Bits<32>>,
    f_ackreq: Signal<Local, Bits<1>>,
    f_srcip: Signal<Local, Bits<32>>,
    f_va: Signal<Local, Bits<64>>,
    f_rkey: Signal<Local, Bits<32>>,
    f_dlen: Signal<Local, Bits<32>>,
    f_syn: Signal<Local, Bits<8>>,
    f_amsn: Signal<Local, Bits<24>>,
    f_imm: Signal<Local, Bits<32>>,
    // The QP copy, cursor and region.
    rctx_w: Signal<Local, Bits<RCTX_W>>,
    r_state: Signal<Local, Bits<4>>,
    r_pmtu: Signal<Local, Bits<4>>,
    r_pdn: Signal<Local, Bits<16>>,
    r_rqpn: Signal<Local, Bits<24>>,
    r_epsn: Signal<Local, Bits<24>>,
    r_msn: Signal<Local, Bits<24>>,
    r_mac: Signal<Local, Bits<48>>,
    r_ip: Signal<Local, Bits<32>>,
    r_vgrp: Signal<Local, Bits<16>>,
    c_va: Signal<Local, Bits<64>>,
    c_rem: Signal<Local, Bits<32>>,
    c_in: Signal<Local, Bits<1>>,
    c_nak: Signal<Local, Bits<1>>,
    c_send: Signal<Local, Bits<1>>,
    c_tot: Signal<Local, Bits<32>>,
    c_rkey: Signal<Local, Bits<16>>,
    /// The packet in `s_meta` is a WRITE MIDDLE or LAST; the one in Check is.
    in_wcont: Signal<Local, Bit>,
    w_cont: Signal<Local, Bit>,
    /// A WRITE MIDDLE's or LAST's region still the one its FIRST was checked against.
    cont_key_ok: Signal<Local, Bit>,
    rkey_next: Signal<Local, Bits<16>>,
    tot_next: Signal<Local, Bits<32>>,
    send_b: Signal<Local, Bits<1>>,
    rc_sges: Signal<Local, Bits<ANS_W>>,
    rc_room: Signal<Local, Bits<32>>,
    rc_got: Signal<Local, Bits<32>>,
    rc_wrid: Signal<Local, Bits<64>>,
    rc_cqn: Signal<Local, Bits<16>>,
    rc_held: Signal<Local, Bit>,
    is_send: Signal<Local, Bit>,
    is_imm: Signal<Local, Bit>,
    needs_wqe: Signal<Local, Bit>,
    ans_rcur: Signal<Local, Bits<RCUR_W>>,
    ans_sges: Signal<Local, Bits<ANS_W>>,
    s0_a: Signal<Local, Bits<64>>,
    s0_l: Signal<Local, Bits<32>>,
    srem32: Signal<Local, Bits<32>>,
    l_ge: Signal<Local, Bit>,
    l_le: Signal<Local, Bit>,
    piece: Signal<Local, Bits<16>>,
    cut: Signal<Local, Bit>,
    piece64: Signal<Local, Bits<64>>,
    piece32: Signal<Local, Bits<32>>,
    s0_a_next: Signal<Local, Bits<64>>,
    s0_l_next: Signal<Local, Bits<32>>,
    room_next: Signal<Local, Bits<32>>,
    got_next: Signal<Local, Bits<32>>,
    rcur_next: Signal<Local, Bits<RCUR_W>>,
    rcv_rec: Signal<Local, Bits<RCV_W>>,
    rcv_op: Signal<Local, Bits<8>>,
    rcv_flags: Signal<Local, Bits<8>>,
    rcv_len: Signal<Local, Bits<32>>,
    rcv_imm: Signal<Local, Bits<32>>,
    rcv_go: Signal<Local, Bit>,
    cur_clear: Signal<Local, Bits<CUR_W>>,
    mr_va: Signal<Local, Bits<64>>,
    mr_len: Signal<Local, Bits<64>>,
    mr_key: Signal<Local, Bits<32>>,
    mr_pdn: Signal<Local, Bits<16>>,
    mr_acc: Signal<Local, Bits<8>>,
    // The checks.
    pmtu: Signal<Local, Bits<32>>,
    pmtu_ok: Signal<Local, Bit>,
    qp_ok: Signal<Local, Bit>,
    is_first: Signal<Local, Bit>,
    is_middle: Signal<Local, Bit>,
    is_last: Signal<Local, Bit>,
    is_only: Signal<Local, Bit>,
    starts: Signal<Local, Bit>,
    ends: Signal<Local, Bit>,
    diff: Signal<Local, Bits<24>>,
    seq_ok: Signal<Local, Bit>,
    len_ok: Signal<Local, Bit>,
    va_end: Signal<Local, Bits<64>>,
    mr_end: Signal<Local, Bits<64>>,
    key_ok: Signal<Local, Bit>,
    addr: Signal<Local, Bits<64>>,
    va_next: Signal<Local, Bits<64>>,
    rem_next: Signal<Local, Bits<32>>,
    in_next: Signal<Local, Bits<1>>,
    msn_next: Signal<Local, Bits<24>>,
    // Responses and write-backs.
    aeth: Signal<Local, Bits<32>>,
    ack_rec: Signal<Local, Bits<AOW_W>>,
    /// The owed record read for the sender, and the UDP source port of its QP.
    aw: Signal<Local, Bits<AOW_W>>,
    a_port: Signal<Local, Bits<16>>,
    rack: Signal<Local, Bits<RACK_W>>,
    resp_go: Signal<Local, Bit>,
    snd_pop: Signal<Local, Bit>,
    pend_after: Signal<Local, Bits<256>>,
    head_bit: Signal<Local, Bits<256>>,
    q_bit: Signal<Local, Bits<256>>,
    rq_ram: RAM<Bits<48>, QA>,
    rq_peek: RAM<Bits<48>, QA>,
    rw_addr: Signal<Local, Bits<QA>>,
    rw_data: Signal<Local, Bits<48>>,
    rw_en: Signal<Local, Bit>,
    qpw_init: Signal<Local, Bit>,
    a_vgrp: Signal<Local, Bits<16>>,
    a_prio: Signal<Local, Bits<3>>,
    a_tag: Signal<Local, Bits<4>>,
    a_beats: Signal<Local, Bits<16>>,
    a_u: Signal<Local, Bits<16>>,
    a_fits: Signal<Local, Bit>,
    resp_push: Signal<Local, Bit>,
    snd_bit: Signal<Local, Bits<256>>,
    resp_wq: Signal<Local, Bit>,
    strong_keep: Signal<Local, Bits<256>>,
    rq_init: Signal<Local, Bit>,
    init_bit: Signal<Local, Bits<256>>,
    void_keep: Signal<Local, Bits<256>>,
    snd_done: Signal<Local, Bit>,
    new_strong: Signal<Local, Bit>,
    ack_wr: Signal<Local, Bit>,
    absorb: Signal<Local, Bit>,
    // Constants.
    x_op: Constant<Bits<9>>,
    x_psn: Constant<Bits<9>>,
    x_qpn: Constant<Bits<9>>,
    x_len: Constant<Bits<9>>,
    x_ackreq: Constant<Bits<9>>,
    x_srcip: Constant<Bits<9>>,
    x_pkey: Constant<Bits<9>>,
    x_va: Constant<Bits<9>>,
    x_rkey: Constant<Bits<9>>,
    x_rkey_idx: Constant<Bits<9>>,
    x_dlen: Constant<Bits<9>>,
    x_syn: Constant<Bits<9>>,
    x_amsn: Constant<Bits<9>>,
    x_imm: Constant<Bits<9>>,
    x_imm2: Constant<Bits<9>>,
    q_state: Constant<Bits<10>>,
    q_pmtu: Constant<Bits<10>>,
    q_pdn: Constant<Bits<10>>,
    q_rqpn: Constant<Bits<10>>,
    q_epsn: Constant<Bits<10>>,
    q_msn: Constant<Bits<10>>,
    q_mac: Constant<Bits<10>>,
    q_vlan: Constant<Bits<10>>,
    q_rnrt: Constant<Bits<10>>,
    q_acc: Constant<Bits<10>>,
    r_qacc: Signal<Local, Bits<8>>,
    q_epoch: Constant<Bits<10>>,
    r_epoch: Signal<Local, Bits<8>>,
    r_rnrt: Signal<Local, Bits<5>>,
    rs_epoch: Signal<Local, Bits<8>>,
    sl_epoch: Signal<Local, Bits<8>>,
    q_ip: Constant<Bits<10>>,
    mr_x_va: Constant<Bits<8>>,
    mr_x_len: Constant<Bits<8>>,
    mr_x_key: Constant<Bits<8>>,
    mr_x_pdn: Constant<Bits<8>>,
    mr_x_acc: Constant<Bits<8>>,
    t_dst_mac: Constant<Bits<9>>,
    t_src_mac: Constant<Bits<9>>,
    t_vlan: Constant<Bits<9>>,
    t_src_ip: Constant<Bits<9>>,
    t_dst_ip: Constant<Bits<9>>,
    t_src_port: Constant<Bits<9>>,
    t_ttl: Constant<Bits<9>>,
    t_opcode: Constant<Bits<9>>,
    t_pkey: Constant<Bits<9>>,
    t_dest_qp: Constant<Bits<9>>,
    t_psn: Constant<Bits<9>>,
    t_aeth: Constant<Bits<9>>,
    o_dst_mac: Constant<Bits<8>>,
    o_dst_ip: Constant<Bits<8>>,
    o_dest_qp: Constant<Bits<8>>,
    o_psn: Constant<Bits<8>>,
    o_aeth: Constant<Bits<8>>,
    o_vlan: Constant<Bits<8>>,
    a_qpn: Constant<Bits<7>>,
    a_syn: Constant<Bits<7>>,
    a_psn: Constant<Bits<7>>,
    a_msn: Constant<Bits<7>>,
    op_first: Constant<Bits<8>>,
    op_middle: Constant<Bits<8>>,
    op_last: Constant<Bits<8>>,
    op_only: Constant<Bits<8>>,
    op_ack: Constant<Bits<8>>,
    op_sfirst: Constant<Bits<8>>,
    op_smiddle: Constant<Bits<8>>,
    op_slast: Constant<Bits<8>>,
    op_slast_imm: Constant<Bits<8>>,
    op_sonly: Constant<Bits<8>>,
    op_sonly_imm: Constant<Bits<8>>,
    op_wlast_imm: Constant<Bits<8>>,
    op_wonly_imm: Constant<Bits<8>>,
    syn_rnr: Constant<Bits<8>>,
    syn_op: Constant<Bits<8>>,
    st_none: Constant<Bits<8>>,
    wc_len: Constant<Bits<8>>,
    wc_recv: Constant<Bits<8>>,
    wc_recv_imm: Constant<Bits<8>>,
    wc_imm: Constant<Bits<8>>,
    v_qpn: Constant<Bits<8>>,
    v_status: Constant<Bits<8>>,
    v_op: Constant<Bits<8>>,
    v_flags: Constant<Bits<8>>,
    v_cqn: Constant<Bits<8>>,
    v_wrid: Constant<Bits<8>>,
    v_len: Constant<Bits<8>>,
    v_imm: Constant<Bits<8>>,
    v_src: Constant<Bits<8>>,
    v_ep: Constant<Bits<8>>,
    sge_keep: Vec<Constant<Bits<ANS_W>>>,
    nsge_c: Vec<Constant<Bits<3>>>,
    st_rtr: Constant<Bits<4>>,
    st_rts: Constant<Bits<4>>,
    acc_rw: Constant<Bits<8>>,
    syn_ack: Constant<Bits<8>>,
    syn_seq: Constant<Bits<8>>,
    syn_inv: Constant<Bits<8>>,
    syn_acc: Constant<Bits<8>>,
    ttl: Constant<Bits<8>>,
    pkey: Constant<Bits<16>>,
    max_dlen: Constant<Bits<32>>,
    port_base: Constant<Bits<16>>,
    q_init: Constant<Bits<10>>,
    q_init_sq: Constant<Bits<10>>,
    q_sq_psn: Constant<Bits<10>>,
    /// A READ response's write of the completer's copy of its QP's READ cursor.
    rx_w: Signal<Local, Bits<RPK_W>>,
    nak_bit: Constant<Bits<CUR_W>>,
    held_bit: Constant<Bits<RCUR_W>>,
    one256: Constant<Bits<256>>,
    ack_beats: Constant<Bits<16>>,
    ack_beats_t: Constant<Bits<16>>,
    sh_rsv: Constant<Bits<8>>,
    pc: Vec<Constant<Bits<3>>>,
    at16: Vec<Constant<Bits<7>>>,
}

impl<const DW: usize, const KW: usize> Responder<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert_eq!(RX_META.len * 8, META_W);
        assert!(TX_META
            .fields
            .iter()
            .all(|f| f.name == "ext2" || f.bit + f.width <= META_W));
        // The RETH (va, rkey, dma_len) and the AETH (syndrome, msn) sit at the top of `ext`.
        let ext = RX_META.field("ext");
        assert_eq!((ext.bit, ext.width), (384, 128));
        assert!(MR_CTX.fields.iter().all(|f| f.bit + f.width <= MRS_W));
        let mut nak = vec![false; CUR_W];
        nak[97] = true;
        Self {
            m_rj_tdata: Default::default(),
            m_rj_tvalid: Default::default(),
            m_dup_valid: Default::default(),
            m_dup_qpn: Default::default(),
            m_dup_psn: Default::default(),
            dup_v: Default::default(),
            dup_q: Default::default(),
            dup_p: Default::default(),
            m_rj_tready: Default::default(),
            s_rdone_valid: Default::default(),
            s_rdone_qpn: Default::default(),
            s_rdone_seq: Default::default(),
            s_rslot_en: Default::default(),
            s_rslot_addr: Default::default(),
            s_rslot_data: Default::default(),
            m_rq_req_sq: Default::default(),
            m_rq_req_idx: Default::default(),
            m_rland_tdata: Default::default(),
            m_rland_tvalid: Default::default(),
            m_rland_tready: Default::default(),
            m_rl_valid: Default::default(),
            m_rl_qpn: Default::default(),
            m_rl_cnt: Default::default(),
            m_rlc_valid: Default::default(),
            m_rlc_qpn: Default::default(),
            m_rlc_cnt: Default::default(),
            rlc_v: Default::default(),
            rlc_q: Default::default(),
            rlc_c: Default::default(),
            reads: Default::default(),
            jobs_full: Default::default(),
            s_req_sent: Default::default(),
            bad_resp: Default::default(),
            rj_q: Fifo::new(),
            rda_cur: RAM::default(),
            rda_ack: RAM::default(),
            rdf_ram: RAM::default(),
            rdf_own: RAM::default(),
            sh_full: Default::default(),
            job_share: k(JOB_SHARE),
            rslot: RAM::default(),
            s_rpk_qpn: Default::default(),
            m_rpk_data: Default::default(),
            rx_ram: RAM::default(),
            rs_resume: Default::default(),
            s_rpk_clr: Default::default(),
            seen: Default::default(),
            seen_rd: Default::default(),
            seen_keep: Default::default(),
            seen_clr: Default::default(),
            seen_ini: Default::default(),
            rs_gaps: Default::default(),
            rs_gaps1: Default::default(),
            rs_gen_ok: Default::default(),
            s_mr_gen: Default::default(),
            job_gen: Default::default(),
            chk_gen: Default::default(),
            rechk: Default::default(),
            gen_at: k(RL_GEN as u64),
            chk_field: Default::default(),
            gen_mask: Constant::new(crate::util::bits_from_bools(&{
                let mut b = vec![false; RCUR_W];
                b[RL_GEN..RL_GEN + GEN_W].fill(true);
                b
            })),
            rs_after: Default::default(),
            rs_gapd: Default::default(),
            rk_gap: Default::default(),
            a_gap: field_at(&RX_ACK, "gap"),
            rl_q: Fifo::new(),
            npk: Default::default(),
            req_sq: Default::default(),
            req_idx: Default::default(),
            do_job: Default::default(),
            do_rl: Default::default(),
            rl_st: Default::default(),
            rl_v: Default::default(),
            rl_qn: Default::default(),
            rl_c: Default::default(),
            n_reads: Default::default(),
            jw: Default::default(),
            jdrop: Default::default(),
            n_jobs_full: Default::default(),
            jd_now: Default::default(),
            job_wait: k(JOB_WAIT),
            n_bad_resp: Default::default(),
            is_rdreq: Default::default(),
            is_resp: Default::default(),
            rs_first: Default::default(),
            rs_middle: Default::default(),
            rs_ends: Default::default(),
            in_op: Default::default(),
            in_resp: Default::default(),
            rd_sum: Default::default(),
            f_psn1: Default::default(),
            rs_exp: Default::default(),
            rs_cnt: Default::default(),
            rs_cnt1: Default::default(),
            sl_idx: Default::default(),
            sl_psn: Default::default(),
            rl_fields: Default::default(),
            rl_rec: Default::default(),
            job_rec: Default::default(),
            rd_clear: Default::default(),
            a_go: Default::default(),
            acc_need: Default::default(),
            rl_go: Default::default(),
            rda_next: Default::default(),
            rl_mask: Constant::new(crate::util::bits_from_bools(&{
                let mut b = vec![false; RCUR_W];
                b[RL_EXP..RL_EPOCH + 8].fill(true);
                b[RL_GAPS..RL_GAPS + 2].fill(true);
                b[RL_GEN..RL_GEN + GEN_W].fill(true);
                b[RCUR_W - 1] = true;
                b
            })),
            acc_rr: k(ACCESS_REMOTE_READ.into()),
            m_rq_req_at: Default::default(),
            m_rq_req_addr: Default::default(),
            s_rq_ans_data: Default::default(),
            wr_ordered: Default::default(),
            s_hold: Default::default(),
            m_held: Default::default(),
            held: Default::default(),
            atomics: Default::default(),
            s_rdb_en: Default::default(),
            s_rdb_qpn: Default::default(),
            flushed: Default::default(),
            m_qerr_valid: Default::default(),
            m_qerr_qpn: Default::default(),
            rfail: Default::default(),
            qe_v: Default::default(),
            qe_q: Default::default(),
            pk_fail: Default::default(),
            rf_hit: Default::default(),
            f_q8: Default::default(),
            op_done: Default::default(),
            op_rc: Default::default(),
            s_failed: Default::default(),
            s_fail_valid: Default::default(),
            s_fail_ready: Default::default(),
            s_fail_qpn: Default::default(),
            fl_turn: Default::default(),
            fl_take: Default::default(),
            ff_take: Default::default(),
            ff_still: Default::default(),
            s_rfail_valid: Default::default(),
            s_rfail_ready: Default::default(),
            s_rfail_qpn: Default::default(),
            s_rfail_psn: Default::default(),
            s_rfail_epoch: Default::default(),
            rf_ep: Default::default(),
            rf_take: Default::default(),
            rf_live: Default::default(),
            pk_q8: Default::default(),
            fatal: Default::default(),
            fatal_st: Default::default(),
            qerr: Default::default(),
            fl_pend: Default::default(),
            fl_q: Fifo::new(),
            n_flushed: Default::default(),
            qpw_err: Default::default(),
            fl_head: Default::default(),
            fl_after: Default::default(),
            fl_in: Default::default(),
            fl_in_q: Default::default(),
            fl_cur: Default::default(),
            st_err: k(QP_STATE_ERR.into()),
            wc_flush: k(WC_WR_FLUSH_ERR.into()),
            wc_inv: k(WC_REM_INV_REQ_ERR.into()),
            req_at: Default::default(),
            req_addr: Default::default(),
            at_orig: Default::default(),
            at_new: Default::default(),
            ac_ram: RAM::default(),
            ax_ram: RAM::default(),
            ac_i: Default::default(),
            ac_hit: Default::default(),
            ac_val: Default::default(),
            ac_tag: Default::default(),
            ac_sh: k(AX as u64),
            // The last entry's compare is registered two cycles after its search began.
            ac_end: k(MAX_RD_ATOMIC as u64 + 1),
            inj: Default::default(),
            inj_val: Default::default(),
            n_atomics: Default::default(),
            is_atomic: Default::default(),
            is_aack: Default::default(),
            rs_start: Default::default(),
            k_len: Default::default(),
            f_swap: Default::default(),
            f_cmp: Default::default(),
            f_orig: Default::default(),
            at_calc: Default::default(),
            sl_at: Default::default(),
            sl_cnt: Default::default(),
            j_len_v: Default::default(),
            j_va_v: Default::default(),
            j_at: Default::default(),
            op_cswap: k(RC_CMP_SWAP.into()),
            op_fadd: k(RC_FETCH_ADD.into()),
            op_aack: k(RC_ATOMIC_ACKNOWLEDGE.into()),
            acc_ra: k(ACCESS_REMOTE_ATOMIC.into()),
            x_swap: ext_at(0, &ATOMIC_ETH, "swap_add"),
            x_cmp: ext_at(0, &ATOMIC_ETH, "compare"),
            x_orig: ext_at(AETH.len, &ATOMIC_ACK_ETH, "orig"),
            j_atomic: field_at(&READ_JOB, "atomic"),
            j_dup_at: field_at(&READ_JOB, "dup"),
            job_dup: Default::default(),
            op_rreq: k(RC_RDMA_READ_REQUEST.into()),
            op_rfirst: k(RC_RDMA_READ_RESPONSE_FIRST.into()),
            op_rmiddle: k(RC_RDMA_READ_RESPONSE_MIDDLE.into()),
            op_rlast: k(RC_RDMA_READ_RESPONSE_LAST.into()),
            op_ronly: k(RC_RDMA_READ_RESPONSE_ONLY.into()),
            a_read: field_at(&RX_ACK, "read"),
            a_status: field_at(&RX_ACK, "status"),
            a_landed: field_at(&RX_ACK, "landed"),
            a_ep: field_at(&RX_ACK, "epoch"),
            j_qpn: field_at(&READ_JOB, "qpn"),
            j_psn: field_at(&READ_JOB, "psn"),
            j_msn: field_at(&READ_JOB, "msn"),
            j_len: field_at(&READ_JOB, "len"),
            j_va: field_at(&READ_JOB, "va"),
            j_seq: field_at(&READ_JOB, "seq"),
            j_rkey: field_at(&READ_JOB, "rkey"),
            j_gen: field_at(&READ_JOB, "gen"),
            j_epoch: field_at(&READ_JOB, "epoch"),
            clk: Default::default(),
            rst: Default::default(),
            s_meta_tdata: Default::default(),
            s_meta_tvalid: Default::default(),
            s_meta_tready: Default::default(),
            s_pay_tdata: Default::default(),
            s_pay_tkeep: Default::default(),
            s_pay_tlast: Default::default(),
            s_pay_tvalid: Default::default(),
            s_pay_tready: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            s_peek_index: Default::default(),
            m_peek_rq: Default::default(),
            s_mrw_en: Default::default(),
            s_mrw_index: Default::default(),
            s_mrw_data: Default::default(),
            local_mac: Default::default(),
            local_ipv4: Default::default(),
            m_wr_addr: Default::default(),
            m_wr_len: Default::default(),
            m_wr_tvalid: Default::default(),
            m_wr_tready: Default::default(),
            m_wd_tdata: Default::default(),
            m_wd_tlast: Default::default(),
            m_wd_tvalid: Default::default(),
            m_wd_tready: Default::default(),
            m_ack_tdata: Default::default(),
            m_ack_tvalid: Default::default(),
            m_ack_tready: Default::default(),
            m_rack_tdata: Default::default(),
            m_rack_tvalid: Default::default(),
            m_rack_tready: Default::default(),
            m_rq_req_valid: Default::default(),
            m_rq_req_ready: Default::default(),
            m_rq_req_qpn: Default::default(),
            s_rq_ans_valid: Default::default(),
            s_rq_ans_ready: Default::default(),
            s_rq_ans_status: Default::default(),
            s_rq_ans_wrid: Default::default(),
            s_rq_ans_nsge: Default::default(),
            s_rq_ans_sges: Default::default(),
            s_rq_ans_len: Default::default(),
            s_rq_ans_cqn: Default::default(),
            m_rcv_tdata: Default::default(),
            m_rcv_tvalid: Default::default(),
            m_rcv_tready: Default::default(),
            wr_idle: Default::default(),
            bad_qp: Default::default(),
            unsupported: Default::default(),
            dup: Default::default(),
            seq_err: Default::default(),
            seq_naks: Default::default(),
            bad_req: Default::default(),
            bad_rkey: Default::default(),
            bad_pkey: Default::default(),
            rnr: Default::default(),
            sc_bad_len: Default::default(),
            tx_used: Default::default(),
            tx_cap: Default::default(),
            m_rsv: Default::default(),
            rctx_ram: RAM::default(),
            cur_ram: RAM::default(),
            mr_ram: RAM::default(),
            rcur_ram: RAM::default(),
            sc: Scatter::new(),
            cmdq: Fifo::new(),
            rcv_q: Fifo::new(),
            ack_info: RAM::default(),
            ack_qps: Fifo::new(),
            ack_out: Fifo::new(),
            ack_pend: Default::default(),
            ack_strong: Default::default(),
            ack_void: Default::default(),
            snd_stale: Default::default(),
            snd_void: Default::default(),
            snd_busy: Default::default(),
            snd_q: Default::default(),
            rsv: Default::default(),
            rack_q: Fifo::new(),
            state: DFF::default(),
            m: Default::default(),
            dirty: Default::default(),
            do_ack: Default::default(),
            do_rack: Default::default(),
            ack_syn: Default::default(),
            ack_psn: Default::default(),
            ack_msn: Default::default(),
            wb_ctx: Default::default(),
            wb_cur: Default::default(),
            new_epsn: Default::default(),
            new_msn: Default::default(),
            new_cur: Default::default(),
            req_v: Default::default(),
            req_qpn: Default::default(),
            rcv: Default::default(),
            wb_rcur: Default::default(),
            do_rcv: Default::default(),
            rcv_st: Default::default(),
            sl: Default::default(),
            srem: Default::default(),
            n_rnr: Default::default(),
            n_bad_qp: Default::default(),
            n_unsupported: Default::default(),
            n_dup: Default::default(),
            n_seq_err: Default::default(),
            n_seq_nak: Default::default(),
            n_bad_req: Default::default(),
            n_bad_rkey: Default::default(),
            n_bad_pkey: Default::default(),
            pkey_ok: Default::default(),
            f_op: Default::default(),
            f_psn: Default::default(),
            f_qpn: Default::default(),
            f_len: Default::default(),
            aack_pay: Default::default(),
            f_len32: Default::default(),
            f_ackreq: Default::default(),
            f_srcip: Default::default(),
            f_va: Default::default(),
            f_rkey: Default::default(),
            f_dlen: Default::default(),
            f_syn: Default::default(),
            f_amsn: Default::default(),
            f_imm: Default::default(),
            rctx_w: Default::default(),
            r_state: Default::default(),
            r_pmtu: Default::default(),
            r_pdn: Default::default(),
            r_rqpn: Default::default(),
            r_epsn: Default::default(),
            r_msn: Default::default(),
            r_mac: Default::default(),
            r_ip: Default::default(),
            r_vgrp: Default::default(),
            c_va: Default::default(),
            c_rem: Default::default(),
            c_in: Default::default(),
            c_nak: Default::default(),
            c_send: Default::default(),
            c_tot: Default::default(),
            c_rkey: Default::default(),
            in_wcont: Default::default(),
            w_cont: Default::default(),
            cont_key_ok: Default::default(),
            rkey_next: Default::default(),
            tot_next: Default::default(),
            send_b: Default::default(),
            rc_sges: Default::default(),
            rc_room: Default::default(),
            rc_got: Default::default(),
            rc_wrid: Default::default(),
            rc_cqn: Default::default(),
            rc_held: Default::default(),
            is_send: Default::default(),
            is_imm: Default::default(),
            needs_wqe: Default::default(),
            ans_rcur: Default::default(),
            ans_sges: Default::default(),
            s0_a: Default::default(),
            s0_l: Default::default(),
            srem32: Default::default(),
            l_ge: Default::default(),
            l_le: Default::default(),
            piece: Default::default(),
            cut: Default::default(),
            piece64: Default::default(),
            piece32: Default::default(),
            s0_a_next: Default::default(),
            s0_l_next: Default::default(),
            room_next: Default::default(),
            got_next: Default::default(),
            rcur_next: Default::default(),
            rcv_rec: Default::default(),
            rcv_op: Default::default(),
            rcv_flags: Default::default(),
            rcv_len: Default::default(),
            rcv_imm: Default::default(),
            rcv_go: Default::default(),
            cur_clear: Default::default(),
            mr_va: Default::default(),
            mr_len: Default::default(),
            mr_key: Default::default(),
            mr_pdn: Default::default(),
            mr_acc: Default::default(),
            pmtu: Default::default(),
            pmtu_ok: Default::default(),
            qp_ok: Default::default(),
            is_first: Default::default(),
            is_middle: Default::default(),
            is_last: Default::default(),
            is_only: Default::default(),
            starts: Default::default(),
            ends: Default::default(),
            diff: Default::default(),
            seq_ok: Default::default(),
            len_ok: Default::default(),
            va_end: Default::default(),
            mr_end: Default::default(),
            key_ok: Default::default(),
            addr: Default::default(),
            va_next: Default::default(),
            rem_next: Default::default(),
            in_next: Default::default(),
            msn_next: Default::default(),
            aeth: Default::default(),
            ack_rec: Default::default(),
            aw: Default::default(),
            a_port: Default::default(),
            rack: Default::default(),
            resp_go: Default::default(),
            snd_pop: Default::default(),
            pend_after: Default::default(),
            head_bit: Default::default(),
            q_bit: Default::default(),
            rq_ram: RAM::default(),
            rq_peek: RAM::default(),
            rw_addr: Default::default(),
            rw_data: Default::default(),
            rw_en: Default::default(),
            qpw_init: Default::default(),
            a_vgrp: Default::default(),
            a_prio: Default::default(),
            a_tag: Default::default(),
            a_beats: Default::default(),
            a_u: Default::default(),
            a_fits: Default::default(),
            resp_push: Default::default(),
            snd_bit: Default::default(),
            resp_wq: Default::default(),
            strong_keep: Default::default(),
            rq_init: Default::default(),
            init_bit: Default::default(),
            void_keep: Default::default(),
            snd_done: Default::default(),
            new_strong: Default::default(),
            ack_wr: Default::default(),
            absorb: Default::default(),
            x_op: at(&RX_META, "opcode"),
            x_psn: at(&RX_META, "psn"),
            x_qpn: at(&RX_META, "dest_qp"),
            x_len: at(&RX_META, "pay_len"),
            x_ackreq: at(&RX_META, "ack_req"),
            x_srcip: at(&RX_META, "src_ip"),
            x_pkey: at(&RX_META, "pkey"),
            x_va: at_plus(&RX_META, "ext", 64),
            x_rkey: at_plus(&RX_META, "ext", 32),
            x_rkey_idx: at_plus(&RX_META, "ext", 40),
            x_dlen: at_plus(&RX_META, "ext", 0),
            x_syn: at_plus(&RX_META, "ext", 120),
            x_amsn: at_plus(&RX_META, "ext", 96),
            x_imm: at_plus(&RX_META, "ext", 96),
            x_imm2: at_plus(&RX_META, "ext2", 96),
            q_state: field_at(&QP_CTX, "state"),
            q_pmtu: field_at(&QP_CTX, "pmtu"),
            q_pdn: field_at(&QP_CTX, "pdn"),
            q_rqpn: field_at(&QP_CTX, "remote_qpn"),
            q_epsn: field_at(&QP_CTX, "epsn"),
            q_msn: field_at(&QP_CTX, "msn"),
            q_mac: field_at(&QP_CTX, "remote_mac"),
            q_vlan: field_at(&QP_CTX, "vlan"),
            q_rnrt: field_at(&QP_CTX, "min_rnr_timer"),
            q_acc: field_at(&QP_CTX, "qp_access"),
            r_qacc: Default::default(),
            q_epoch: field_at(&QP_CTX, "epoch"),
            r_epoch: Default::default(),
            r_rnrt: Default::default(),
            rs_epoch: Default::default(),
            sl_epoch: Default::default(),
            q_ip: field_at(&QP_CTX, "remote_ip"),
            mr_x_va: field_at(&MR_CTX, "va"),
            mr_x_len: field_at(&MR_CTX, "len"),
            mr_x_key: field_at(&MR_CTX, "key"),
            mr_x_pdn: field_at(&MR_CTX, "pdn"),
            mr_x_acc: field_at(&MR_CTX, "access"),
            t_dst_mac: at(&TX_META, "dst_mac"),
            t_src_mac: at(&TX_META, "src_mac"),
            t_vlan: at(&TX_META, "vlan"),
            t_src_ip: at(&TX_META, "src_ip"),
            t_dst_ip: at(&TX_META, "dst_ip"),
            t_src_port: at(&TX_META, "src_port"),
            t_ttl: at(&TX_META, "ttl"),
            t_opcode: at(&TX_META, "opcode"),
            t_pkey: at(&TX_META, "pkey"),
            t_dest_qp: at(&TX_META, "dest_qp"),
            t_psn: at(&TX_META, "psn"),
            t_aeth: at_plus(&TX_META, "ext", 96),
            o_dst_mac: field_at(&ACK_OWED, "dst_mac"),
            o_dst_ip: field_at(&ACK_OWED, "dst_ip"),
            o_dest_qp: field_at(&ACK_OWED, "dest_qp"),
            o_psn: field_at(&ACK_OWED, "psn"),
            o_aeth: field_at(&ACK_OWED, "aeth"),
            o_vlan: field_at(&ACK_OWED, "vlan"),
            a_qpn: field_at(&RX_ACK, "qpn"),
            a_syn: field_at(&RX_ACK, "syndrome"),
            a_psn: field_at(&RX_ACK, "psn"),
            a_msn: field_at(&RX_ACK, "msn"),
            op_first: k(RC_RDMA_WRITE_FIRST.into()),
            op_middle: k(RC_RDMA_WRITE_MIDDLE.into()),
            op_last: k(RC_RDMA_WRITE_LAST.into()),
            op_only: k(RC_RDMA_WRITE_ONLY.into()),
            op_ack: k(RC_ACKNOWLEDGE.into()),
            op_sfirst: k(RC_SEND_FIRST.into()),
            op_smiddle: k(RC_SEND_MIDDLE.into()),
            op_slast: k(RC_SEND_LAST.into()),
            op_slast_imm: k(RC_SEND_LAST_WITH_IMMEDIATE.into()),
            op_sonly: k(RC_SEND_ONLY.into()),
            op_sonly_imm: k(RC_SEND_ONLY_WITH_IMMEDIATE.into()),
            op_wlast_imm: k(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE.into()),
            op_wonly_imm: k(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.into()),
            syn_rnr: k(AETH_RNR_NAK.into()),
            syn_op: k(AETH_NAK_REM_OP.into()),
            st_none: k(ANS_NONE.into()),
            wc_len: k(WC_LOC_LEN_ERR.into()),
            wc_recv: k(WC_RECV.into()),
            wc_recv_imm: k(WC_RECV_RDMA_WITH_IMM.into()),
            wc_imm: k(WC_WITH_IMM.into()),
            v_qpn: field_at(&RECV_DONE, "qpn"),
            v_status: field_at(&RECV_DONE, "status"),
            v_op: field_at(&RECV_DONE, "opcode"),
            v_flags: field_at(&RECV_DONE, "wc_flags"),
            v_cqn: field_at(&RECV_DONE, "cqn"),
            v_wrid: field_at(&RECV_DONE, "wr_id"),
            v_len: field_at(&RECV_DONE, "byte_len"),
            v_imm: field_at(&RECV_DONE, "imm_data"),
            v_src: field_at(&RECV_DONE, "src_qp"),
            v_ep: field_at(&RECV_DONE, "epoch"),
            sge_keep: (0..=MAX_SGE)
                .map(|n| {
                    let mut b = vec![false; ANS_W];
                    b[..n * ANS_SGE_W].fill(true);
                    Constant::new(crate::util::bits_from_bools(&b))
                })
                .collect(),
            nsge_c: (0..=MAX_SGE as u64).map(k).collect(),
            st_rtr: k(QP_STATE_RTR.into()),
            st_rts: k(QP_STATE_RTS.into()),
            acc_rw: k(ACCESS_REMOTE_WRITE.into()),
            syn_ack: k(AETH_ACK.into()),
            syn_seq: k(AETH_NAK_PSN_SEQ.into()),
            syn_inv: k(AETH_NAK_INV_REQ.into()),
            syn_acc: k(AETH_NAK_REM_ACCESS.into()),
            ttl: k(TX_TTL.into()),
            pkey: k(TX_PKEY.into()),
            max_dlen: k(1 << 31),
            port_base: k(0xC000),
            q_init: field_at(&QP_CTX, "init_rq"),
            q_init_sq: field_at(&QP_CTX, "init_sq"),
            q_sq_psn: field_at(&QP_CTX, "sq_psn"),
            rx_w: Default::default(),
            nak_bit: Constant::new(crate::util::bits_from_bools(&nak)),
            held_bit: Constant::new(crate::util::bits_from_bools(&{
                let mut b = vec![false; RCUR_W];
                b[RCUR_W - 1] = true;
                b
            })),
            one256: k(1),
            ack_beats: k(beats_of(tx_frame_len(false, AETH.len, 0), KW) as u64),
            ack_beats_t: k(beats_of(tx_frame_len(true, AETH.len, 0), KW) as u64),
            sh_rsv: k(16),
            pc: (0..8).map(k).collect(),
            at16: (0..8u64).map(|p| k(16 * p)).collect(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Responder<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Responder<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clk,
            seen,
            seen_rd,
            rk_gap,
            job_dup,
            state,
            m,
            dirty,
            do_ack,
            held,
            ack_pend,
            ack_strong,
            ack_void,
            rf_ep,
            rlc_v,
            rlc_q,
            rlc_c,
            snd_stale,
            snd_void,
            snd_busy,
            snd_q,
            rsv,
            do_rack,
            ack_syn,
            ack_psn,
            ack_msn,
            wb_ctx,
            wb_cur,
            new_epsn,
            new_msn,
            new_cur,
            req_v,
            req_qpn,
            rcv,
            wb_rcur,
            job_gen,
            chk_gen,
            rechk,
            do_rcv,
            rcv_st,
            sl,
            srem,
            n_rnr,
            n_bad_qp,
            n_unsupported,
            n_dup,
            n_seq_err,
            n_seq_nak,
            n_bad_req,
            n_bad_rkey,
            n_bad_pkey,
            pkey_ok,
            npk,
            req_sq,
            req_idx,
            do_job,
            do_rl,
            rl_st,
            rl_v,
            rl_qn,
            rl_c,
            n_reads,
            jw,
            jdrop,
            n_jobs_full,
            n_bad_resp,
            req_at,
            req_addr,
            at_orig,
            at_new,
            ac_i,
            ac_hit,
            ac_val,
            inj,
            inj_val,
            n_atomics,
            qerr,
            fl_pend,
            n_flushed,
            rfail,
            qe_v,
            qe_q,
            pk_fail,
            fl_turn,
            sh_full,
            dup_v,
            dup_q,
            dup_p
        );
        self.fl_q.clk.next = self.clk.val();
        self.fl_q.rst.next = self.rst.val();
        self.rj_q.clk.next = self.clk.val();
        self.rj_q.rst.next = self.rst.val();
        self.rl_q.clk.next = self.clk.val();
        self.rl_q.rst.next = self.rst.val();
        self.rda_cur.read_clock.next = self.clk.val();
        self.rda_cur.write_clock.next = self.clk.val();
        self.ac_ram.read_clock.next = self.clk.val();
        self.ac_ram.write_clock.next = self.clk.val();
        self.ax_ram.read_clock.next = self.clk.val();
        self.ax_ram.write_clock.next = self.clk.val();
        self.rda_ack.read_clock.next = self.clk.val();
        self.rda_ack.write_clock.next = self.clk.val();
        self.rdf_ram.read_clock.next = self.clk.val();
        self.rdf_ram.write_clock.next = self.clk.val();
        self.rdf_own.read_clock.next = self.clk.val();
        self.rdf_own.write_clock.next = self.clk.val();
        self.rslot.read_clock.next = self.clk.val();
        self.rslot.write_clock.next = self.clk.val();
        // READ jobs out; READ landings out once every write before them has left (as
        // receive completions), each also told to the requester (its READ count).
        self.m_rj_tdata.next = self.rj_q.m_tdata.val();
        self.m_rj_tvalid.next = self.rj_q.m_tvalid.val();
        self.m_dup_valid.next = self.dup_v.q.val();
        self.m_dup_qpn.next = self.dup_q.q.val();
        self.m_dup_psn.next = self.dup_p.q.val();
        self.dup_v.d.next = false;
        self.rj_q.m_tready.next = self.m_rj_tready.val();
        self.m_rq_req_sq.next = self.req_sq.q.val();
        self.m_rq_req_idx.next = self.req_idx.q.val();
        self.rl_go.next = !self.cmdq.m_tvalid.val() & self.wr_idle.val();
        self.m_rland_tdata.next = self.rl_q.m_tdata.val();
        self.m_rland_tvalid.next = self.rl_q.m_tvalid.val() & self.rl_go.val();
        self.rl_q.m_tready.next = self.m_rland_tready.val() & self.rl_go.val();
        self.rl_v.d.next = self.rl_q.m_tvalid.val() & self.m_rland_tready.val() & self.rl_go.val();
        self.rl_qn.d.next = self
            .rl_q
            .m_tdata
            .val()
            .get_bits::<QA>(self.a_qpn.val().index());
        self.rl_c.d.next = self
            .rl_q
            .m_tdata
            .val()
            .get_bits::<RDC_W>(self.a_landed.val().index());
        self.m_rl_valid.next = self.rl_v.q.val();
        self.m_rl_qpn.next = self.rl_qn.q.val();
        self.m_rl_cnt.next = self.rl_c.q.val();
        self.m_rlc_valid.next = self.rlc_v.q.val();
        self.m_rlc_qpn.next = self.rlc_q.q.val();
        self.m_rlc_cnt.next = self.rlc_c.q.val();
        self.rlc_v.d.next = false;
        self.reads.next = self.n_reads.q.val();
        self.jobs_full.next = self.n_jobs_full.q.val();
        self.atomics.next = self.n_atomics.q.val();
        self.flushed.next = self.n_flushed.q.val();
        self.m_rq_req_at.next = self.req_at.q.val();
        self.m_rq_req_addr.next = self.req_addr.q.val();
        self.bad_resp.next = self.n_bad_resp.q.val();
        // The requester's READ slots; the READ counts (the sent count from its events).
        self.rslot.write_address.next = self.s_rslot_addr.val();
        self.rslot.write_data.next = self.s_rslot_data.val();
        self.rslot.write_enable.next = self.s_rslot_en.val();
        self.rdf_ram.write_address.next = self.s_rdone_qpn.val();
        self.rdf_ram.write_data.next = self.s_rdone_seq.val();
        self.rdf_ram.write_enable.next = self.s_rdone_valid.val();
        self.rdf_own.write_address.next = self.s_rdone_qpn.val();
        self.rdf_own.write_data.next = self.s_rdone_seq.val();
        self.rdf_own.write_enable.next = self.s_rdone_valid.val();

        self.rctx_ram.read_clock.next = self.clk.val();
        self.rq_ram.read_clock.next = self.clk.val();
        self.rq_ram.write_clock.next = self.clk.val();
        self.rq_peek.read_clock.next = self.clk.val();
        self.rq_peek.write_clock.next = self.clk.val();
        self.rctx_ram.write_clock.next = self.clk.val();
        self.cur_ram.read_clock.next = self.clk.val();
        self.cur_ram.write_clock.next = self.clk.val();
        self.mr_ram.read_clock.next = self.clk.val();
        self.mr_ram.write_clock.next = self.clk.val();
        self.rcur_ram.read_clock.next = self.clk.val();
        self.rcur_ram.write_clock.next = self.clk.val();
        self.sc.clk.next = self.clk.val();
        self.sc.rst.next = self.rst.val();
        self.cmdq.clk.next = self.clk.val();
        self.cmdq.rst.next = self.rst.val();
        self.rcv_q.clk.next = self.clk.val();
        self.rcv_q.rst.next = self.rst.val();
        self.ack_info.read_clock.next = self.clk.val();
        self.ack_info.write_clock.next = self.clk.val();
        self.ack_qps.clk.next = self.clk.val();
        self.ack_qps.rst.next = self.rst.val();
        self.ack_out.clk.next = self.clk.val();
        self.ack_out.rst.next = self.rst.val();
        self.rack_q.clk.next = self.clk.val();
        self.rack_q.rst.next = self.rst.val();

        // Outputs.
        self.m_wr_addr.next = self.cmdq.m_tdata.val().get_bits::<64>(0);
        self.m_wr_len.next = self.cmdq.m_tdata.val().get_bits::<13>(64);
        self.m_wr_tvalid.next = self.cmdq.m_tvalid.val();
        self.cmdq.m_tready.next = self.m_wr_tready.val();
        // The WQE request, and the receive completions: each leaves once every write before
        // it has left the DMA write engine (no command queued, the engine idle), so the host
        // never sees a completion before its data.
        self.m_rq_req_valid.next = self.req_v.q.val();
        // From its own register: the receive queues answer combinationally from their
        // request inputs, so a QP number computed in this kernel would close a loop.
        self.m_rq_req_qpn.next = self.req_qpn.q.val();
        if self.m_rq_req_ready.val() {
            self.req_v.d.next = false;
        }
        self.s_rq_ans_ready.next =
            (self.state.q.val() == RespState::Wait) | (self.state.q.val() == RespState::FlWait);
        self.rcv_go.next = !self.cmdq.m_tvalid.val() & self.wr_idle.val();
        self.m_rcv_tdata.next = self.rcv_q.m_tdata.val();
        self.m_rcv_tvalid.next = self.rcv_q.m_tvalid.val() & self.rcv_go.val();
        self.rcv_q.m_tready.next = self.m_rcv_tready.val() & self.rcv_go.val();
        self.rnr.next = self.n_rnr.q.val();
        self.sc_bad_len.next = self.sc.bad_len.val();
        self.m_ack_tdata.next = bit_cast::<TXM_W, META_W>(self.ack_out.m_tdata.val());
        self.m_ack_tvalid.next = self.ack_out.m_tvalid.val();
        self.ack_out.m_tready.next = self.m_ack_tready.val();
        self.m_rack_tdata.next = self.rack_q.m_tdata.val();
        self.m_rack_tvalid.next = self.rack_q.m_tvalid.val();
        self.rack_q.m_tready.next = self.m_rack_tready.val();
        self.bad_qp.next = self.n_bad_qp.q.val();
        self.unsupported.next = self.n_unsupported.q.val();
        self.dup.next = self.n_dup.q.val();
        self.seq_err.next = self.n_seq_err.q.val();
        self.seq_naks.next = self.n_seq_nak.q.val();
        self.bad_req.next = self.n_bad_req.q.val();
        self.bad_rkey.next = self.n_bad_rkey.q.val();
        self.bad_pkey.next = self.n_bad_pkey.q.val();
        // Payload: through the `Scatter` (one packet per write command) to the DMA write
        // engine in Pay, dropped in Drain.
        self.sc.s_tdata.next = (self.s_pay_tdata.val()
            & !(bits::<DW>(0) - bit_cast::<DW, 1>(self.inj.q.val())))
            | bit_cast::<DW, 64>(self.inj_val.q.val());
        self.sc.s_tkeep.next = (self.s_pay_tkeep.val()
            & !(bits::<KW>(0) - bit_cast::<KW, 1>(self.inj.q.val())))
            | (bits::<KW>(0xFF) & (bits::<KW>(0) - bit_cast::<KW, 1>(self.inj.q.val())));
        self.sc.s_tlast.next = self.s_pay_tlast.val() | (self.inj.q.val() == bits::<1>(1));
        self.sc.s_tvalid.next = self.s_pay_tvalid.val() & (self.state.q.val() == RespState::Pay);
        self.m_wd_tdata.next = self.sc.m_tdata.val();
        self.m_wd_tlast.next = self.sc.m_tlast.val();
        self.m_wd_tvalid.next = self.sc.m_tvalid.val();
        self.sc.m_tready.next = self.m_wd_tready.val();
        self.s_pay_tready.next = ((self.state.q.val() == RespState::Pay) & self.sc.s_tready.val())
            | (self.state.q.val() == RespState::Drain);
        // Packets first, but a flush waiting when a packet is taken goes next (`fl_turn`), so
        // a QP in ERR flushes whatever other QPs receive.
        self.s_meta_tready.next =
            (self.state.q.val() == RespState::Idle) & !self.fl_turn.q.val() & !self.s_hold.val();
        // A deregistration's fence: no packet is taken while `s_hold`; `m_held` once every
        // packet taken before has its writes out of the write command queue.
        self.held.d.next =
            self.s_hold.val() & (self.state.q.val() == RespState::Idle) & !self.cmdq.m_tvalid.val();
        self.m_held.next = self.held.q.val();

        // The record.
        self.f_op.next = self.m.q.val().get_bits::<8>(self.x_op.val().index());
        // An RDMA READ request (and its responses, as requester).
        self.is_rdreq.next = self.f_op.val() == self.op_rreq.val();
        self.rs_first.next = self.f_op.val() == self.op_rfirst.val();
        self.rs_middle.next = self.f_op.val() == self.op_rmiddle.val();
        self.rs_ends.next =
            (self.f_op.val() == self.op_rlast.val()) | (self.f_op.val() == self.op_ronly.val());
        // Atomics (and their acknowledgement, as requester: a one-packet response).
        self.is_atomic.next =
            (self.f_op.val() == self.op_cswap.val()) | (self.f_op.val() == self.op_fadd.val());
        self.is_aack.next = self.f_op.val() == self.op_aack.val();
        if self.is_aack.val() {
            self.rs_ends.next = true;
        }
        self.rs_start.next =
            self.rs_first.val() | (self.f_op.val() == self.op_ronly.val()) | self.is_aack.val();
        self.is_resp.next = self.rs_first.val() | self.rs_middle.val() | self.rs_ends.val();
        self.f_psn.next = self.m.q.val().get_bits::<24>(self.x_psn.val().index());
        self.f_qpn.next = self.m.q.val().get_bits::<24>(self.x_qpn.val().index());
        self.f_q8.next = self.f_qpn.val().get_bits::<QA>(0);
        self.op_rc.next = self.f_op.val().get_bits::<3>(5) == bits::<3>(0);
        self.rf_hit.next = self.rfail.q.val().get_bit(self.f_q8.val().index())
            | self.s_failed.val().get_bit(self.f_q8.val().index());
        self.f_len.next = self.m.q.val().get_bits::<13>(self.x_len.val().index());
        // An ATOMIC ACKNOWLEDGE lands its 8 bytes of original data as a READ response would.
        self.aack_pay.next = false;
        if self.is_aack.val() {
            // (The record's own field: `f_len` is reassigned just below.)
            self.aack_pay.next =
                self.m.q.val().get_bits::<13>(self.x_len.val().index()) != bits::<13>(0);
            self.f_len.next = bits::<13>(8);
        }
        self.f_len32.next = bit_cast::<32, 13>(self.f_len.val());
        self.f_ackreq.next = self.m.q.val().get_bits::<1>(self.x_ackreq.val().index());
        self.f_srcip.next = self.m.q.val().get_bits::<32>(self.x_srcip.val().index());
        self.f_va.next = self.m.q.val().get_bits::<64>(self.x_va.val().index());
        self.f_rkey.next = self.m.q.val().get_bits::<32>(self.x_rkey.val().index());
        self.f_dlen.next = self.m.q.val().get_bits::<32>(self.x_dlen.val().index());
        self.f_syn.next = self.m.q.val().get_bits::<8>(self.x_syn.val().index());
        self.f_amsn.next = self.m.q.val().get_bits::<24>(self.x_amsn.val().index());
        self.f_swap.next = self.m.q.val().get_bits::<64>(self.x_swap.val().index());
        self.f_cmp.next = self.m.q.val().get_bits::<64>(self.x_cmp.val().index());
        self.f_orig.next = self.m.q.val().get_bits::<64>(self.x_orig.val().index());
        // The atomic's new value, from the original registered in Wait.
        self.at_calc.next = self.at_orig.q.val() + self.f_swap.val();
        if self.f_op.val() == self.op_cswap.val() {
            self.at_calc.next = self.at_orig.q.val();
            if self.at_orig.q.val() == self.f_cmp.val() {
                self.at_calc.next = self.f_swap.val();
            }
        }
        // An atomic's 8 bytes take the place of its packet's (empty) payload: the new value
        // (as responder) or the original one of an ATOMIC ACKNOWLEDGE (as requester), as host
        // memory holds a 64-bit value (little-endian). Registered (the record is held from
        // Check, the new value from AtWr, two cycles before Pay), so the scatter's inputs are
        // one expression each of registers and inputs.
        self.inj.d.next = bits::<1>(0);
        self.inj_val.d.next = bits::<64>(0);
        if self.is_atomic.val() {
            self.inj.d.next = bits::<1>(1);
            self.inj_val.d.next = self.at_new.q.val();
        } else if self.is_aack.val() {
            self.inj.d.next = bits::<1>(1);
            self.inj_val.d.next = self.f_orig.val();
        }
        // The ImmDt: the first extended header, or after the RETH of a WRITE ONLY.
        self.f_imm.next = self.m.q.val().get_bits::<32>(self.x_imm.val().index());
        if self.f_op.val() == self.op_wonly_imm.val() {
            self.f_imm.next = self.m.q.val().get_bits::<32>(self.x_imm2.val().index());
        }

        // The copies: the tables' writes (a QP write also clears the QP's cursor), else this
        // block's write-backs in Resp. Read addresses: the incoming record in Idle, then held.
        self.rctx_w.next = bit_cast::<RCTX_W, 4>(
            self.s_qpw_data
                .val()
                .get_bits::<4>(self.q_state.val().index()),
        ) | (bit_cast::<RCTX_W, 4>(
            self.s_qpw_data
                .val()
                .get_bits::<4>(self.q_pmtu.val().index()),
        ) << 4)
            | (bit_cast::<RCTX_W, 16>(
                self.s_qpw_data
                    .val()
                    .get_bits::<16>(self.q_pdn.val().index()),
            ) << 8)
            | (bit_cast::<RCTX_W, 24>(
                self.s_qpw_data
                    .val()
                    .get_bits::<24>(self.q_rqpn.val().index()),
            ) << 24)
            | (bit_cast::<RCTX_W, 48>(
                self.s_qpw_data
                    .val()
                    .get_bits::<48>(self.q_mac.val().index()),
            ) << 48)
            | (bit_cast::<RCTX_W, 32>(
                self.s_qpw_data
                    .val()
                    .get_bits::<32>(self.q_ip.val().index()),
            ) << 96)
            | (bit_cast::<RCTX_W, 16>(
                self.s_qpw_data
                    .val()
                    .get_bits::<16>(self.q_vlan.val().index()),
            ) << 128)
            | (bit_cast::<RCTX_W, 8>(
                self.s_qpw_data
                    .val()
                    .get_bits::<8>(self.q_epoch.val().index()),
            ) << 144)
            | (bit_cast::<RCTX_W, 5>(
                self.s_qpw_data
                    .val()
                    .get_bits::<5>(self.q_rnrt.val().index()),
            ) << 152)
            | (bit_cast::<RCTX_W, 8>(
                self.s_qpw_data
                    .val()
                    .get_bits::<8>(self.q_acc.val().index()),
            ) << 157);
        self.rctx_ram.write_address.next = self.s_qpw_index.val();
        self.rctx_ram.write_data.next = self.rctx_w.val();
        self.rctx_ram.write_enable.next = self.s_qpw_en.val();
        self.cur_ram.write_address.next = self.s_qpw_index.val();
        self.cur_ram.write_data.next = bits::<CUR_W>(0);
        self.rcur_ram.write_address.next = bit_cast::<9, QA>(self.s_qpw_index.val());
        self.rcur_ram.write_data.next = bits::<RCUR_W>(0);
        self.qpw_init.next = self
            .s_qpw_data
            .val()
            .get_bits::<1>(self.q_init.val().index())
            == bits::<1>(1);
        self.cur_ram.write_enable.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.rcur_ram.write_enable.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.rw_addr.next = self.s_qpw_index.val();
        self.rw_data.next = bit_cast::<48, 24>(
            self.s_qpw_data
                .val()
                .get_bits::<24>(self.q_epsn.val().index()),
        ) | (bit_cast::<48, 24>(
            self.s_qpw_data
                .val()
                .get_bits::<24>(self.q_msn.val().index()),
        ) << 24);
        self.rw_en.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.mr_ram.write_address.next = self.s_mrw_index.val();
        self.mr_ram.write_data.next = self.s_mrw_data.val().get_bits::<MRS_W>(0);
        self.mr_ram.write_enable.next = self.s_mrw_en.val();
        // (A write in that cycle is not in the entry read, nor in the count.)
        if self.state.q.val() == RespState::Idle {
            self.job_gen.d.next = self.s_mr_gen.val();
        }
        self.rctx_ram.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.rq_ram.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.cur_ram.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        // The receive cursors of a QP at 0..256, its READ cursors at 256..512.
        self.rcur_ram.read_address.next = bit_cast::<9, QA>(self.f_qpn.val().get_bits::<QA>(0));
        if self.is_resp.val() {
            self.rcur_ram.read_address.next =
                bit_cast::<9, QA>(self.f_qpn.val().get_bits::<QA>(0)) | bits::<9>(256);
        }
        self.rda_cur.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.rdf_own.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.ax_ram.read_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.in_op.next = self
            .s_meta_tdata
            .val()
            .get_bits::<8>(self.x_op.val().index());
        self.in_resp.next = ((self.in_op.val() >= self.op_rfirst.val())
            & (self.in_op.val() <= self.op_ronly.val()))
            | (self.in_op.val() == self.op_aack.val());
        self.in_wcont.next = (self.in_op.val() == self.op_middle.val())
            | (self.in_op.val() == self.op_last.val())
            | (self.in_op.val() == self.op_wlast_imm.val());
        self.mr_ram.read_address.next =
            self.m.q.val().get_bits::<QA>(self.x_rkey_idx.val().index());
        if self.state.q.val() == RespState::Idle {
            self.rctx_ram.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.rq_ram.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.cur_ram.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.rcur_ram.read_address.next = bit_cast::<9, QA>(
                self.s_meta_tdata
                    .val()
                    .get_bits::<QA>(self.x_qpn.val().index()),
            );
            if self.in_resp.val() {
                self.rcur_ram.read_address.next = bit_cast::<9, QA>(
                    self.s_meta_tdata
                        .val()
                        .get_bits::<QA>(self.x_qpn.val().index()),
                ) | bits::<9>(256);
            }
            self.rda_cur.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.rdf_own.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.ax_ram.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_qpn.val().index());
            self.mr_ram.read_address.next = self
                .s_meta_tdata
                .val()
                .get_bits::<QA>(self.x_rkey_idx.val().index());
        }
        if self.s_qpw_en.val()
            & self.qpw_init.val()
            & (self.s_qpw_index.val() == self.f_qpn.val().get_bits::<QA>(0))
        {
            self.dirty.d.next = true;
        }

        self.r_state.next = self.rctx_ram.read_data.val().get_bits::<4>(0);
        self.r_pmtu.next = self.rctx_ram.read_data.val().get_bits::<4>(4);
        self.r_pdn.next = self.rctx_ram.read_data.val().get_bits::<16>(8);
        self.r_rqpn.next = self.rctx_ram.read_data.val().get_bits::<24>(24);
        self.r_epsn.next = self.rq_ram.read_data.val().get_bits::<24>(0);
        self.r_msn.next = self.rq_ram.read_data.val().get_bits::<24>(24);
        self.r_mac.next = self.rctx_ram.read_data.val().get_bits::<48>(48);
        self.r_ip.next = self.rctx_ram.read_data.val().get_bits::<32>(96);
        // The 802.1Q group (vlan, pcp, vid): ACKs go out on the QP's priority.
        self.r_vgrp.next = self.rctx_ram.read_data.val().get_bits::<16>(128);
        // The QP's incarnation: a READ's slot and cursor must be of this one (a response
        // from before a RESET lands nowhere).
        self.r_epoch.next = self.rctx_ram.read_data.val().get_bits::<8>(144);
        self.r_qacc.next = self.rctx_ram.read_data.val().get_bits::<8>(157);
        self.r_rnrt.next = self.rctx_ram.read_data.val().get_bits::<5>(152);
        // The replay cache: an atomic done writes its entry (in AtWr, its original value
        // registered in Wait) at the QP's next index; a duplicate's search reads entry
        // `ac_i` of its QP and compares the tag the cycle after.
        self.ac_ram.write_address.next = (bit_cast::<SLOT_A, QA>(self.f_q8.val())
            << self.ac_sh.val())
            | bit_cast::<SLOT_A, AX>(self.ax_ram.read_data.val());
        self.ac_ram.write_data.next = bit_cast::<AC_W, 64>(self.at_orig.q.val())
            | (bit_cast::<AC_W, 24>(self.f_psn.val()) << 64)
            | (bit_cast::<AC_W, 8>(self.r_epoch.val()) << 88)
            | (bit_cast::<AC_W, 1>(bits::<1>(1)) << 96);
        self.ac_ram.write_enable.next = false;
        self.ax_ram.write_address.next = self.f_q8.val();
        self.ax_ram.write_data.next = self.ax_ram.read_data.val() + bits::<AX>(1);
        self.ax_ram.write_enable.next = false;
        self.ac_ram.read_address.next = (bit_cast::<SLOT_A, QA>(self.f_q8.val())
            << self.ac_sh.val())
            | bit_cast::<SLOT_A, AX>(self.ac_i.q.val().get_bits::<AX>(0));
        self.ac_tag.next = bit_cast::<33, 24>(self.f_psn.val())
            | (bit_cast::<33, 8>(self.r_epoch.val()) << 24)
            | (bit_cast::<33, 1>(bits::<1>(1)) << 32);
        self.ac_hit.d.next = (self.ac_ram.read_data.val().get_bits::<33>(64) == self.ac_tag.val())
            & (self.ac_i.q.val() != bits::<5>(0))
            & (self.state.q.val() == RespState::AtDup);
        self.ac_val.d.next = self.ac_ram.read_data.val().get_bits::<64>(0);
        self.c_va.next = self.cur_ram.read_data.val().get_bits::<64>(0);
        self.c_rem.next = self.cur_ram.read_data.val().get_bits::<32>(64);
        self.c_in.next = self.cur_ram.read_data.val().get_bits::<1>(96);
        self.c_nak.next = self.cur_ram.read_data.val().get_bits::<1>(97);
        self.c_send.next = self.cur_ram.read_data.val().get_bits::<1>(98);
        self.c_tot.next = self.cur_ram.read_data.val().get_bits::<32>(99);
        self.c_rkey.next = self.cur_ram.read_data.val().get_bits::<16>(131);
        // The receive cursor: read in Check into `rcv`, worked on there after.
        self.rc_sges.next = self.rcv.q.val().get_bits::<ANS_W>(0);
        self.rc_room.next = self.rcv.q.val().get_bits::<32>(384);
        self.rc_got.next = self.rcv.q.val().get_bits::<32>(416);
        self.rc_wrid.next = self.rcv.q.val().get_bits::<64>(448);
        self.rc_cqn.next = self.rcv.q.val().get_bits::<16>(512);
        self.rc_held.next = self.rcur_ram.read_data.val().get_bit(528);
        self.mr_va.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<64>(self.mr_x_va.val().index());
        self.mr_len.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<64>(self.mr_x_len.val().index());
        self.mr_key.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<32>(self.mr_x_key.val().index());
        self.mr_pdn.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<16>(self.mr_x_pdn.val().index());
        self.mr_acc.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<8>(self.mr_x_acc.val().index());

        // The checks.
        self.pmtu_ok.next = true;
        self.pmtu.next = bits::<32>(4096);
        if self.r_pmtu.val() == bits::<4>(1) {
            self.pmtu.next = bits::<32>(256);
        } else if self.r_pmtu.val() == bits::<4>(2) {
            self.pmtu.next = bits::<32>(512);
        } else if self.r_pmtu.val() == bits::<4>(3) {
            self.pmtu.next = bits::<32>(1024);
        } else if self.r_pmtu.val() == bits::<4>(4) {
            self.pmtu.next = bits::<32>(2048);
        } else if self.r_pmtu.val() != bits::<4>(5) {
            self.pmtu_ok.next = false;
        }
        self.qp_ok.next = (self.f_qpn.val().get_bits::<16>(8) == bits::<16>(0))
            & ((self.r_state.val() == self.st_rtr.val())
                | (self.r_state.val() == self.st_rts.val()))
            & self.pmtu_ok.val()
            & (self.f_srcip.val() == self.r_ip.val());
        // The opcode: its place in a message, SEND or WRITE, with an ImmDt or not.
        self.is_send.next = (self.f_op.val() == self.op_sfirst.val())
            | (self.f_op.val() == self.op_smiddle.val())
            | (self.f_op.val() == self.op_slast.val())
            | (self.f_op.val() == self.op_slast_imm.val())
            | (self.f_op.val() == self.op_sonly.val())
            | (self.f_op.val() == self.op_sonly_imm.val());
        self.is_imm.next = (self.f_op.val() == self.op_slast_imm.val())
            | (self.f_op.val() == self.op_sonly_imm.val())
            | (self.f_op.val() == self.op_wlast_imm.val())
            | (self.f_op.val() == self.op_wonly_imm.val());
        self.is_first.next =
            (self.f_op.val() == self.op_first.val()) | (self.f_op.val() == self.op_sfirst.val());
        self.is_middle.next =
            (self.f_op.val() == self.op_middle.val()) | (self.f_op.val() == self.op_smiddle.val());
        self.is_last.next = (self.f_op.val() == self.op_last.val())
            | (self.f_op.val() == self.op_wlast_imm.val())
            | (self.f_op.val() == self.op_slast.val())
            | (self.f_op.val() == self.op_slast_imm.val());
        self.is_only.next = (self.f_op.val() == self.op_only.val())
            | (self.f_op.val() == self.op_wonly_imm.val())
            | (self.f_op.val() == self.op_sonly.val())
            | (self.f_op.val() == self.op_sonly_imm.val());
        self.starts.next = self.is_first.val() | self.is_only.val();
        self.ends.next = self.is_last.val() | self.is_only.val();
        self.op_done.next = self.starts.val()
            | self.is_middle.val()
            | self.is_last.val()
            | self.is_rdreq.val()
            | self.is_atomic.val();
        // A message that consumes a receive WQE takes one at its first packet (a SEND) or
        // at its last (a WRITE with immediate).
        self.needs_wqe.next = (self.is_send.val() & self.starts.val())
            | (!self.is_send.val() & self.ends.val() & self.is_imm.val());
        self.diff.next = self.f_psn.val() - self.r_epsn.val();
        self.seq_ok.next = ((self.starts.val() | self.is_rdreq.val() | self.is_atomic.val())
            & (self.c_in.val() == bits::<1>(0)))
            | ((self.is_middle.val() | self.is_last.val())
                & (self.c_in.val() == bits::<1>(1))
                & ((self.c_send.val() == bits::<1>(1)) == self.is_send.val()));
        // Lengths: FIRST and MIDDLE one PMTU, ONLY and LAST at most one; a WRITE's as its
        // RETH says (a SEND's total is only known at its end: the receive buffer's room is
        // checked packet by packet).
        self.len_ok.next = false;
        if self.is_send.val() {
            if self.is_first.val() | self.is_middle.val() {
                self.len_ok.next = self.f_len32.val() == self.pmtu.val();
            } else if self.is_last.val() {
                // A LAST carries a byte at least (rxe's `check_length`): a message of whole
                // PMTUs ends with a full one.
                self.len_ok.next =
                    (self.f_len32.val() != bits::<32>(0)) & (self.f_len32.val() <= self.pmtu.val());
            } else {
                self.len_ok.next = self.f_len32.val() <= self.pmtu.val();
            }
        } else if self.is_only.val() {
            self.len_ok.next =
                (self.f_len32.val() == self.f_dlen.val()) & (self.f_len32.val() <= self.pmtu.val());
        } else if self.is_first.val() {
            self.len_ok.next = (self.f_len32.val() == self.pmtu.val())
                & (self.f_dlen.val() > self.pmtu.val())
                & (self.f_dlen.val() <= self.max_dlen.val());
        } else if self.is_middle.val() {
            self.len_ok.next =
                (self.f_len32.val() == self.pmtu.val()) & (self.c_rem.val() > self.pmtu.val());
        } else if self.is_last.val() {
            self.len_ok.next =
                (self.f_len32.val() == self.c_rem.val()) & (self.f_len32.val() <= self.pmtu.val());
        }
        if self.is_rdreq.val() {
            // A READ request carries no payload.
            self.len_ok.next =
                (self.f_len32.val() == bits::<32>(0)) & (self.f_dlen.val() <= self.max_dlen.val());
        }
        if self.is_atomic.val() {
            // Nor does an atomic, and its address is 8-byte aligned (IBA 9.4.5: else NAK
            // invalid request).
            self.len_ok.next = (self.f_len32.val() == bits::<32>(0))
                & (self.f_va.val().get_bits::<3>(0) == bits::<3>(0));
        }
        // Its responses: one per PMTU of its length, one at least (registered for RdAcc).
        // (In 256-byte units first: ceil(ceil(len / 256) / (PMTU / 256)).)
        self.rd_sum.next = bit_cast::<28, 24>(self.f_dlen.val().get_bits::<24>(8))
            + bit_cast::<28, 6>(self.pmtu.val().get_bits::<6>(8))
            - bits::<28>(1);
        if self.f_dlen.val().get_bits::<8>(0) != bits::<8>(0) {
            self.rd_sum.next = bit_cast::<28, 24>(self.f_dlen.val().get_bits::<24>(8))
                + bit_cast::<28, 6>(self.pmtu.val().get_bits::<6>(8));
        }
        self.npk.d.next = self.rd_sum.val().get_bits::<24>(4);
        if self.r_pmtu.val() == bits::<4>(1) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(0);
        } else if self.r_pmtu.val() == bits::<4>(2) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(1);
        } else if self.r_pmtu.val() == bits::<4>(3) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(2);
        } else if self.r_pmtu.val() == bits::<4>(4) {
            self.npk.d.next = self.rd_sum.val().get_bits::<24>(3);
        }
        if self.f_dlen.val() == bits::<32>(0) {
            self.npk.d.next = bits::<24>(1);
        }
        self.acc_need.next = self.acc_rw.val();
        if self.is_rdreq.val() {
            self.acc_need.next = self.acc_rr.val();
        }
        // The range the key must cover: the RETH's, or an atomic's 8 bytes.
        self.k_len.next = self.f_dlen.val();
        if self.is_atomic.val() {
            self.acc_need.next = self.acc_ra.val();
            self.k_len.next = bits::<32>(8);
        }
        self.va_end.next = self.f_va.val() + bit_cast::<64, 32>(self.k_len.val());
        self.mr_end.next = self.mr_va.val() + self.mr_len.val();
        // The QP must allow the access too (`qp_access`, rxe's `check_op_valid`), even for
        // zero bytes; then the region, for any bytes.
        self.key_ok.next = self.is_send.val()
            | (((self.r_qacc.val() & self.acc_need.val()) != bits::<8>(0))
                & ((self.k_len.val() == bits::<32>(0))
                    | (((self.mr_acc.val() & self.acc_need.val()) != bits::<8>(0))
                        & (self.mr_key.val() == self.f_rkey.val())
                        & (self.mr_pdn.val() == self.r_pdn.val())
                        & (self.f_va.val() >= self.mr_va.val())
                        & (self.va_end.val() >= self.f_va.val())
                        & (self.va_end.val() <= self.mr_end.val()))));
        // Where this packet's bytes go, and the cursor after it.
        self.addr.next = self.c_va.val();
        self.rem_next.next = self.c_rem.val() - self.f_len32.val();
        if self.starts.val() {
            self.addr.next = self.f_va.val();
            self.rem_next.next = self.f_dlen.val() - self.f_len32.val();
        }
        self.va_next.next = self.addr.val() + bit_cast::<64, 32>(self.f_len32.val());
        self.in_next.next = bits::<1>(0);
        if self.is_first.val() | self.is_middle.val() {
            self.in_next.next = bits::<1>(1);
        }
        self.send_b.next = bits::<1>(0);
        if self.is_send.val() {
            self.send_b.next = bits::<1>(1);
        }
        self.tot_next.next = self.c_tot.val();
        self.rkey_next.next = self.c_rkey.val();
        if self.starts.val() {
            self.tot_next.next = self.f_dlen.val();
            self.rkey_next.next = self.f_rkey.val().get_bits::<16>(0);
        }
        // A WRITE MIDDLE or LAST: its region (read again in `ReKey`) must still be the one
        // its FIRST was checked against: the same key (a new registration at the index has
        // another tag; a deregistered entry has none), REMOTE_WRITE, the QP's PD, and the
        // QP's own right. The range was checked whole at the FIRST.
        self.w_cont.next = (self.is_middle.val() | self.is_last.val()) & !self.is_send.val();
        self.cont_key_ok.next = (self.mr_key.val() == bit_cast::<32, 16>(self.c_rkey.val()))
            & ((self.mr_acc.val() & self.acc_rw.val()) != bits::<8>(0))
            & (self.mr_pdn.val() == self.r_pdn.val())
            & ((self.r_qacc.val() & self.acc_rw.val()) != bits::<8>(0));
        // A message given up (a NAK that ends it): the cursor back to "no message".
        self.cur_clear.next = self.cur_ram.read_data.val() & !(bits::<CUR_W>(0x3) << 96);
        // The receive WQE as `RecvQueue` answered it, SGEs past its count zeroed.
        self.ans_sges.next = self.s_rq_ans_sges.val() & self.sge_keep[0].val();
        for n in 1..SGE_N {
            if self.s_rq_ans_nsge.val() == self.nsge_c[n].val() {
                self.ans_sges.next = self.s_rq_ans_sges.val() & self.sge_keep[n].val();
            }
        }
        self.ans_rcur.next = bit_cast::<RCUR_W, ANS_W>(self.ans_sges.val())
            | (bit_cast::<RCUR_W, 32>(self.s_rq_ans_len.val()) << 384)
            | (bit_cast::<RCUR_W, 64>(self.s_rq_ans_wrid.val()) << 448)
            | (bit_cast::<RCUR_W, 16>(self.s_rq_ans_cqn.val()) << 512)
            | self.held_bit.val();
        // The READs accepted (written back in Resp).
        self.rda_cur.write_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.rda_next.next = self.rda_cur.read_data.val() + bits::<RDC_W>(1);
        self.rda_cur.write_data.next = self.rda_next.val();
        self.rda_cur.write_enable.next = false;
        self.rda_ack.write_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.rda_ack.write_data.next = self.rda_next.val();
        self.rda_ack.write_enable.next = false;
        // The READ cursor: the next response PSN, the READs landed; the QP's slot for its next
        // READ (read in Check from the cursor's count, for RSlot).
        self.rs_exp.next = self.rcv.q.val().get_bits::<24>(448);
        self.rs_cnt.next = self.rcv.q.val().get_bits::<RDC_W>(472);
        self.rs_cnt1.next = self.rs_cnt.val() + bits::<RDC_W>(1);
        self.rslot.read_address.next = (bit_cast::<SLOT_A, QA>(self.f_qpn.val().get_bits::<QA>(0))
            << self.ac_sh.val())
            | bit_cast::<SLOT_A, AX>(self.rcur_ram.read_data.val().get_bits::<AX>(472));
        self.sl_idx.next = self.rslot.read_data.val().get_bits::<16>(0);
        self.sl_psn.next = self.rslot.read_data.val().get_bits::<24>(16);
        self.sl_epoch.next = self.rslot.read_data.val().get_bits::<8>(40);
        self.sl_at.next = self.rslot.read_data.val().get_bit(48);
        self.sl_cnt.next = self.rslot.read_data.val().get_bits::<RDC_W>(49);
        self.rs_epoch.next = self.rcv.q.val().get_bits::<8>(480);
        // A FIRST or ONLY at the next PSN of the READ in progress: the requester asked for
        // the rest of it (the responses after one that was lost).
        self.rs_resume.next = self.rcv.q.val().get_bit(528)
            & (self.f_psn.val() == self.rs_exp.val())
            & (self.rs_epoch.val() == self.r_epoch.val())
            & !self.is_aack.val();
        // A response past the expected one of the READ in progress (one was lost or comes
        // late): counted in the cursor; the third tells the completer (once, until the
        // expected one lands).
        self.rs_gaps.next = self.rcv.q.val().get_bits::<2>(488);
        self.rs_gen_ok.next = self
            .rcv
            .q
            .val()
            .get_bits::<GEN_W>(self.gen_at.val().index())
            == self.s_mr_gen.val();
        self.chk_field.next = bit_cast::<RCUR_W, GEN_W>(self.chk_gen.q.val()) << self.gen_at.val();
        self.rs_gaps1.next = self.rs_gaps.val() + bits::<2>(1);
        self.rs_gapd.next = self.f_psn.val() - self.rs_exp.val();
        self.rs_after.next = self.rcv.q.val().get_bit(528)
            & (self.rs_epoch.val() == self.r_epoch.val())
            & (self.rs_gapd.val() != bits::<24>(0))
            & (self.rs_gapd.val() < bits::<24>(0x80_0000));
        // A copy of each QP's READ cursor (its PSN, epoch and held bit) for the completer,
        // which resumes a READ at its first missing response: the same writes, read at
        // `s_rpk_qpn`.
        self.rx_ram.read_clock.next = self.clk.val();
        self.rx_ram.write_clock.next = self.clk.val();
        self.rx_ram.read_address.next = self.s_rpk_qpn.val();
        self.m_rpk_data.next = self.rx_ram.read_data.val();
        if self.seen_rd.q.val() {
            self.m_rpk_data.next = self.rx_ram.read_data.val() | (bits::<RPK_W>(1) << 33);
        }
        // A QP write with `init_sq` (RESET) starts the copy at the QP's first PSN in its new
        // epoch, nothing held: the completer reads a response as come only when the cursor
        // is past a request (never from what a QP of the same number left). A READ
        // response's write (in `Resp`, which waits out BAR0's writes) takes the port.
        self.rx_ram.write_address.next = self.s_qpw_index.val();
        self.rx_ram.write_data.next = bit_cast::<RPK_W, 24>(
            self.s_qpw_data
                .val()
                .get_bits::<24>(self.q_sq_psn.val().index()),
        ) | (bit_cast::<RPK_W, 8>(
            self.s_qpw_data
                .val()
                .get_bits::<8>(self.q_epoch.val().index()),
        ) << 24);
        self.rx_ram.write_enable.next = self.s_qpw_en.val()
            & (self
                .s_qpw_data
                .val()
                .get_bits::<1>(self.q_init_sq.val().index())
                == bits::<1>(1));
        self.rx_w.next = bit_cast::<RPK_W, 24>(self.rcv.q.val().get_bits::<24>(448))
            | (bit_cast::<RPK_W, 8>(self.rcv.q.val().get_bits::<8>(480)) << 24)
            | (bit_cast::<RPK_W, 1>(self.rcv.q.val().get_bits::<1>(528)) << 32);
        // After this packet: the next PSN, and at the READ's end (or when it fails) one more
        // landed and nothing in progress.
        self.f_psn1.next = self.f_psn.val() + bits::<24>(1);
        // (The generation its SGEs were checked at stays.)
        self.rl_fields.next = (bit_cast::<RCUR_W, 24>(self.f_psn1.val()) << 448)
            | (bit_cast::<RCUR_W, RDC_W>(self.rs_cnt1.val()) << 472)
            | (bit_cast::<RCUR_W, 8>(self.r_epoch.val()) << 480)
            | (self.rcv.q.val() & self.gen_mask.val());
        if !self.rs_ends.val() & (self.state.q.val() == RespState::Split) {
            self.rl_fields.next = (bit_cast::<RCUR_W, 24>(self.f_psn1.val()) << 448)
                | (bit_cast::<RCUR_W, RDC_W>(self.rs_cnt.val()) << 472)
                | (bit_cast::<RCUR_W, 8>(self.r_epoch.val()) << 480)
                | (self.rcv.q.val() & self.gen_mask.val())
                | self.held_bit.val();
        }
        // (Sent in Resp, when `rcv` holds the cursor after the READ: its count is the new one.)
        self.rl_rec.next = (bit_cast::<RACK_W, 24>(self.f_qpn.val()) << self.a_qpn.val())
            | (bit_cast::<RACK_W, 8>(self.f_syn.val()) << self.a_syn.val())
            | (bit_cast::<RACK_W, 24>(self.f_psn.val()) << self.a_psn.val())
            | (bit_cast::<RACK_W, 24>(self.f_amsn.val()) << self.a_msn.val())
            | (bit_cast::<RACK_W, 1>(bits::<1>(1)) << self.a_read.val())
            | (bit_cast::<RACK_W, 8>(self.rl_st.q.val()) << self.a_status.val())
            | (bit_cast::<RACK_W, RDC_W>(self.rs_cnt.val()) << self.a_landed.val())
            | (bit_cast::<RACK_W, 8>(self.r_epoch.val()) << self.a_ep.val());
        self.rl_q.s_tdata.next = self.rl_rec.val();
        self.rl_q.s_tvalid.next = false;
        // (An atomic's job: no bytes to read, its original data in `va`.)
        self.j_len_v.next = self.f_dlen.val();
        self.j_va_v.next = self.f_va.val();
        self.j_at.next = bits::<1>(0);
        if self.is_atomic.val() {
            self.j_at.next = bits::<1>(1);
            self.j_len_v.next = bits::<32>(0);
            self.j_va_v.next = self.at_orig.q.val();
        }
        self.job_rec.next = (bit_cast::<JOB_W, 24>(self.f_qpn.val()) << self.j_qpn.val())
            | (bit_cast::<JOB_W, 24>(self.f_psn.val()) << self.j_psn.val())
            | (bit_cast::<JOB_W, 24>(self.new_msn.q.val()) << self.j_msn.val())
            | (bit_cast::<JOB_W, 32>(self.j_len_v.val()) << self.j_len.val())
            | (bit_cast::<JOB_W, 64>(self.j_va_v.val()) << self.j_va.val())
            | (bit_cast::<JOB_W, 1>(self.j_at.val()) << self.j_atomic.val())
            | (bit_cast::<JOB_W, 1>(self.job_dup.q.val()) << self.j_dup_at.val())
            | (bit_cast::<JOB_W, RDC_W>(self.rda_next.val()) << self.j_seq.val())
            | (bit_cast::<JOB_W, 32>(self.f_rkey.val()) << self.j_rkey.val())
            | (bit_cast::<JOB_W, GEN_W>(self.job_gen.q.val()) << self.j_gen.val())
            | (bit_cast::<JOB_W, 8>(self.r_epoch.val()) << self.j_epoch.val());
        self.rj_q.s_tdata.next = self.job_rec.val();
        self.dup_q.d.next = self.f_qpn.val();
        self.dup_p.d.next = self.f_psn.val();
        self.rj_q.s_tvalid.next = false;
        // Cutting the packet across the scatter list: one piece per cycle, the first SGE's
        // bytes or the packet's rest, whichever is less.
        self.s0_a.next = self.sl.q.val().get_bits::<64>(0);
        self.s0_l.next = self.sl.q.val().get_bits::<32>(64);
        self.srem32.next = bit_cast::<32, 16>(self.srem.q.val());
        self.l_ge.next = self.s0_l.val() >= self.srem32.val();
        self.l_le.next = self.s0_l.val() <= self.srem32.val();
        self.piece.next = self.s0_l.val().get_bits::<16>(0);
        if self.l_ge.val() {
            self.piece.next = self.srem.q.val();
        }
        self.piece64.next = bit_cast::<64, 16>(self.piece.val());
        self.piece32.next = bit_cast::<32, 16>(self.piece.val());
        self.s0_a_next.next = self.s0_a.val() + self.piece64.val();
        self.s0_l_next.next = self.s0_l.val() - self.piece32.val();
        self.room_next.next = self.rc_room.val() - self.f_len32.val();
        self.got_next.next = self.rc_got.val() + self.f_len32.val();
        self.rcur_next.next = bit_cast::<RCUR_W, ANS_W>(self.sl.q.val())
            | (bit_cast::<RCUR_W, 32>(self.room_next.val()) << 384)
            | (bit_cast::<RCUR_W, 32>(self.got_next.val()) << 416)
            | (bit_cast::<RCUR_W, 64>(self.rc_wrid.val()) << 448)
            | (bit_cast::<RCUR_W, 16>(self.rc_cqn.val()) << 512);
        self.cut.next = (self.state.q.val() == RespState::Split)
            & (self.srem.q.val() != bits::<16>(0))
            & (self.s0_l.val() != bits::<32>(0))
            & self.cmdq.s_tready.val()
            & self.sc.s_cmd_tready.val();
        self.cmdq.s_tdata.next = bit_cast::<CMD_W, 64>(self.s0_a.val())
            | (bit_cast::<CMD_W, 13>(self.piece.val().get_bits::<13>(0)) << 64);
        self.cmdq.s_tvalid.next = self.cut.val();
        self.sc.s_cmd_len.next = self.piece.val();
        self.sc.s_cmd_last.next = self.l_ge.val();
        self.sc.s_cmd_tvalid.next = self.cut.val();
        // The receive completion of the packet in hand (Resp).
        self.rcv_op.next = self.wc_recv.val();
        self.rcv_len.next = self.rc_got.val();
        if !self.is_send.val() {
            self.rcv_op.next = self.wc_recv_imm.val();
            self.rcv_len.next = self.c_tot.val();
            if self.is_only.val() {
                self.rcv_len.next = self.f_dlen.val();
            }
        }
        self.rcv_flags.next = bits::<8>(0);
        self.rcv_imm.next = bits::<32>(0);
        if self.is_imm.val() {
            self.rcv_flags.next = self.wc_imm.val();
            self.rcv_imm.next = self.f_imm.val();
        }
        if self.rcv_st.q.val() != bits::<8>(0) {
            self.rcv_len.next = bits::<32>(0);
            self.rcv_flags.next = bits::<8>(0);
            self.rcv_imm.next = bits::<32>(0);
        }
        self.rcv_rec.next = (bit_cast::<RCV_W, 24>(self.f_qpn.val()) << self.v_qpn.val())
            | (bit_cast::<RCV_W, 8>(self.rcv_st.q.val()) << self.v_status.val())
            | (bit_cast::<RCV_W, 8>(self.rcv_op.val()) << self.v_op.val())
            | (bit_cast::<RCV_W, 8>(self.rcv_flags.val()) << self.v_flags.val())
            | (bit_cast::<RCV_W, 16>(self.rc_cqn.val()) << self.v_cqn.val())
            | (bit_cast::<RCV_W, 64>(self.rc_wrid.val()) << self.v_wrid.val())
            | (bit_cast::<RCV_W, 32>(self.rcv_len.val()) << self.v_len.val())
            | (bit_cast::<RCV_W, 32>(self.rcv_imm.val()) << self.v_imm.val())
            | (bit_cast::<RCV_W, 24>(self.r_rqpn.val()) << self.v_src.val())
            | (bit_cast::<RCV_W, 8>(self.r_epoch.val()) << self.v_ep.val());
        self.rcv_q.s_tdata.next = self.rcv_rec.val();
        self.rcv_q.s_tvalid.next = false;
        self.msn_next.next = self.r_msn.val();
        if self.ends.val() {
            self.msn_next.next = self.r_msn.val() + bits::<24>(1);
        }

        // Responses: the ACK/NAK record for the TX path, the received ACK for the completer.
        self.aeth.next = (bit_cast::<32, 8>(self.ack_syn.q.val()) << 24)
            | bit_cast::<32, 24>(self.ack_msn.q.val());
        // What the QP is owed (`ACK_OWED`); the rest of its `TX_META` is added as it leaves.
        self.ack_rec.next = (bit_cast::<AOW_W, 48>(self.r_mac.val()) << self.o_dst_mac.val())
            | (bit_cast::<AOW_W, 32>(self.r_ip.val()) << self.o_dst_ip.val())
            | (bit_cast::<AOW_W, 24>(self.r_rqpn.val()) << self.o_dest_qp.val())
            | (bit_cast::<AOW_W, 24>(self.ack_psn.q.val()) << self.o_psn.val())
            | (bit_cast::<AOW_W, 32>(self.aeth.val()) << self.o_aeth.val())
            | (bit_cast::<AOW_W, 16>(self.r_vgrp.val()) << self.o_vlan.val());
        self.rack.next = (bit_cast::<RACK_W, 24>(self.f_qpn.val()) << self.a_qpn.val())
            | (bit_cast::<RACK_W, 8>(self.f_syn.val()) << self.a_syn.val())
            | (bit_cast::<RACK_W, 24>(self.f_psn.val()) << self.a_psn.val())
            | (bit_cast::<RACK_W, 24>(self.f_amsn.val()) << self.a_msn.val());
        if self.rk_gap.q.val() {
            // A READ's responses went past the one expected (`RX_ACK.gap`): its PSN.
            self.rack.next = (bit_cast::<RACK_W, 24>(self.f_qpn.val()) << self.a_qpn.val())
                | (bit_cast::<RACK_W, 8>(self.syn_seq.val()) << self.a_syn.val())
                | (bit_cast::<RACK_W, 24>(self.rs_exp.val()) << self.a_psn.val())
                | (bit_cast::<RACK_W, 1>(bits::<1>(1)) << self.a_gap.val());
        }
        // ACKs and NAKs owed, one entry per QP: the latest record for a QP replaces the one
        // not yet sent (ACKs are cumulative), so the responder never waits for the TX path.
        // The sender pops a QP, reads its record (one cycle), and puts it out.
        self.snd_pop.next = !self.snd_busy.q.val() & self.ack_qps.m_tvalid.val();
        self.ack_qps.m_tready.next = self.snd_pop.val();
        self.ack_info.read_address.next = self.ack_qps.m_tdata.val();
        if self.snd_busy.q.val() {
            self.ack_info.read_address.next = self.snd_q.q.val();
        }
        self.aw.next = self.ack_info.read_data.val();
        self.a_port.next = self.port_base.val()
            | ((bit_cast::<16, QA>(self.snd_q.q.val()) << 6)
                ^ bit_cast::<16, QA>(self.snd_q.q.val()));
        self.ack_out.s_tdata.next =
            (bit_cast::<META_W, 48>(self.aw.val().get_bits::<48>(self.o_dst_mac.val().index()))
                << self.t_dst_mac.val())
                | (bit_cast::<META_W, 48>(self.local_mac.val()) << self.t_src_mac.val())
                | (bit_cast::<META_W, 32>(self.local_ipv4.val()) << self.t_src_ip.val())
                | (bit_cast::<META_W, 32>(
                    self.aw.val().get_bits::<32>(self.o_dst_ip.val().index()),
                ) << self.t_dst_ip.val())
                | (bit_cast::<META_W, 16>(self.a_port.val()) << self.t_src_port.val())
                | (bit_cast::<META_W, 8>(self.ttl.val()) << self.t_ttl.val())
                | (bit_cast::<META_W, 8>(self.op_ack.val()) << self.t_opcode.val())
                | (bit_cast::<META_W, 16>(self.pkey.val()) << self.t_pkey.val())
                | (bit_cast::<META_W, 24>(
                    self.aw.val().get_bits::<24>(self.o_dest_qp.val().index()),
                ) << self.t_dest_qp.val())
                | (bit_cast::<META_W, 24>(self.aw.val().get_bits::<24>(self.o_psn.val().index()))
                    << self.t_psn.val())
                | (bit_cast::<META_W, 32>(self.aw.val().get_bits::<32>(self.o_aeth.val().index()))
                    << self.t_aeth.val())
                | (bit_cast::<META_W, 16>(self.aw.val().get_bits::<16>(self.o_vlan.val().index()))
                    << self.t_vlan.val());
        // Credits: the record's frame against its priority's queue.
        self.m_rsv.next = self.rsv.q.val();
        self.rsv.d.next = bits::<RSV_W>(0);
        self.a_vgrp.next = self.aw.val().get_bits::<16>(self.o_vlan.val().index());
        self.a_prio.next = bits::<3>(0);
        self.a_beats.next = self.ack_beats.val();
        if (self.a_vgrp.val() & bits::<16>(1)) != bits::<16>(0) {
            self.a_prio.next = self.a_vgrp.val().get_bits::<3>(1);
            self.a_beats.next = self.ack_beats_t.val();
        }
        self.a_tag.next = bit_cast::<4, 3>(self.a_prio.val()) | bits::<4>(8);
        self.a_u.next = bits::<16>(0);
        for p in 0..8 {
            if self.a_prio.val() == self.pc[p].val() {
                self.a_u.next = self
                    .tx_used
                    .val()
                    .get_bits::<16>(self.at16[p].val().index());
            }
        }
        if self.rsv.q.val().get_bits::<4>(16) == self.a_tag.val() {
            self.a_u.next = self.a_u.val() + self.rsv.q.val().get_bits::<16>(0);
        }
        self.a_fits.next = (self.a_u.val() + self.a_beats.val()) <= self.tx_cap.val();
        // An ACK for a QP whose READ responses have not all gone waits for them (IBA 9.7.5.1:
        // responses in PSN order): its QP goes back to the queue, as when its frame does not fit.
        self.rda_ack.read_address.next = self.ack_qps.m_tdata.val();
        self.rdf_ram.read_address.next = self.ack_qps.m_tdata.val();
        if self.snd_busy.q.val() {
            self.rda_ack.read_address.next = self.snd_q.q.val();
            self.rdf_ram.read_address.next = self.snd_q.q.val();
        }
        self.rd_clear.next = self.rda_ack.read_data.val() == self.rdf_ram.read_data.val();
        self.a_go.next = self.a_fits.val() & self.rd_clear.val();
        // Resp's outputs all have room (the QP queue always has: it holds each QP at most
        // once).
        // The READ job pool full, and the requester handing on no packet (`s_req_sent`), for
        // `JOB_WAIT` cycles running (its transmit paused): a READ or atomic that needs a job
        // is dropped as if lost, nothing of it done, and so is every one after it until the
        // queue has room, so that the receive path goes on. (Waiting closes a loop through
        // PFC: this NIC's receive buffer, the peer's transmit, the peer's receive path
        // waiting the same way, this NIC's transmit: both NICs paused for ever.) The peer
        // sends it again (sequence NAK or its timer).
        self.jw.d.next = bits::<17>(0);
        if !self.rj_q.s_tready.val() & !self.s_req_sent.val() {
            self.jw.d.next = self.jw.q.val();
            if self.jw.q.val() != self.job_wait.val() {
                self.jw.d.next = self.jw.q.val() + bits::<17>(1);
            }
        }
        // The packet's QP holds its whole share of the pool (`JOB_SHARE` jobs not yet gone;
        // the count read when the packet was taken, or since: an over-estimate): its READ or
        // atomic is dropped the same way, at once, so one QP never fills the pool.
        self.sh_full.d.next =
            (self.rda_cur.read_data.val() - self.rdf_own.read_data.val()) >= self.job_share.val();
        self.jd_now.next = (self.state.q.val() == RespState::Resp)
            & (self.jdrop.q.val()
                | (self.do_job.q.val() & self.sh_full.q.val())
                | (self.do_job.q.val()
                    & !self.rj_q.s_tready.val()
                    & (self.jw.q.val() == self.job_wait.val())));
        self.resp_go.next = !self.jd_now.val()
            & (!self.do_rack.q.val() | self.rack_q.s_tready.val())
            & (!self.do_job.q.val() | self.rj_q.s_tready.val())
            & (!self.do_rl.q.val() | self.rl_q.s_tready.val())
            & (!self.do_rcv.q.val() | self.rcv_q.s_tready.val())
            & self.ack_qps.s_tready.val()
            & !self.s_qpw_en.val();
        // A record goes as read: not in the cycle after it was written (`snd_stale`), nor in
        // the cycle the responder writes the QP's record anew, so each record is sent once.
        self.resp_wq.next = (self.state.q.val() == RespState::Resp)
            & self.resp_go.val()
            & self.do_ack.q.val()
            & (self.snd_q.q.val() == self.f_qpn.val().get_bits::<QA>(0));
        self.ack_out.s_tvalid.next = self.snd_busy.q.val()
            & self.a_go.val()
            & !self.snd_stale.q.val()
            & !self.snd_void.q.val()
            & !self.resp_wq.val();
        self.snd_done.next = self.ack_out.s_tvalid.val() & self.ack_out.s_tready.val();
        self.snd_bit.next = self.one256.val() << self.snd_q.q.val();
        // The host resetting a QP (an init_rq write) voids its record: a QP in RESET sends
        // nothing, and on its next connection the record's PSN, MSN and peer are not its own.
        // (The responder writes no record in that cycle: `resp_go`.)
        self.rq_init.next = self.s_qpw_en.val() & self.qpw_init.val();
        self.init_bit.next = self.one256.val() << self.s_qpw_index.val();
        self.void_keep.next = self.ack_void.q.val();
        self.strong_keep.next = self.ack_strong.q.val();
        if self.snd_done.val() {
            self.strong_keep.next = self.ack_strong.q.val() & !self.snd_bit.val();
        }
        if self.rq_init.val() {
            self.void_keep.next = self.void_keep.val() | self.init_bit.val();
            self.strong_keep.next = self.strong_keep.val() & !self.init_bit.val();
        }
        self.ack_strong.d.next = self.strong_keep.val();
        self.ack_void.d.next = self.void_keep.val();
        self.snd_stale.d.next = false;
        self.snd_void.d.next = self.snd_void.q.val()
            | (self.rq_init.val() & (self.s_qpw_index.val() == self.snd_q.q.val()));
        if self.snd_pop.val() {
            self.snd_busy.d.next = true;
            self.snd_q.d.next = self.ack_qps.m_tdata.val();
            self.snd_void.d.next = self
                .ack_void
                .q
                .val()
                .get_bit(self.ack_qps.m_tdata.val().index())
                | (self.rq_init.val() & (self.s_qpw_index.val() == self.ack_qps.m_tdata.val()));
        } else if self.snd_done.val() {
            self.snd_busy.d.next = false;
            self.rsv.d.next = bit_cast::<RSV_W, 16>(self.a_beats.val())
                | (bit_cast::<RSV_W, 4>(self.a_tag.val()) << self.sh_rsv.val());
        } else if self.snd_busy.q.val() & self.snd_void.q.val() & !self.resp_wq.val() {
            // A void record goes nowhere: the sender lets its QP go.
            self.snd_busy.d.next = false;
        }
        self.head_bit.next = self.one256.val() << self.ack_qps.m_tdata.val();
        self.q_bit.next = self.one256.val() << self.f_qpn.val().get_bits::<QA>(0);
        // Each QP's READ responses seen (landed or not) since the completer cleared its bit:
        // a READ whose peer is still sending is not timed out. A response sets (in RSlot),
        // the completer clears, and so does a QP write with `init_sq` (the responses were of
        // the QP's last life); a set in the same cycle wins.
        self.seen_clr.next = bits::<256>(0);
        if self.s_rpk_clr.val() {
            self.seen_clr.next = self.one256.val() << self.s_rpk_qpn.val();
        }
        self.seen_ini.next = bits::<256>(0);
        if self.s_qpw_en.val() & self.qpw_init.val() {
            self.seen_ini.next = self.one256.val() << self.s_qpw_index.val();
        }
        self.seen_keep.next = self.seen.q.val() & !(self.seen_clr.val() | self.seen_ini.val());
        self.seen.d.next = self.seen_keep.val();
        self.seen_rd.d.next = self.seen.q.val().get_bit(self.s_rpk_qpn.val().index());
        self.pend_after.next = self.ack_pend.q.val();
        if self.snd_pop.val() {
            self.pend_after.next = self.ack_pend.q.val() & !self.head_bit.val();
        }
        self.ack_pend.d.next = self.pend_after.val();
        self.ack_info.write_address.next = self.f_qpn.val().get_bits::<QA>(0);
        self.ack_info.write_data.next = self.ack_rec.val();
        self.ack_info.write_enable.next = false;
        self.ack_qps.s_tdata.next = self.f_qpn.val().get_bits::<QA>(0);
        self.ack_qps.s_tvalid.next = false;
        self.rack_q.s_tdata.next = self.rack.val();
        self.rack_q.s_tvalid.next = false;
        // Records are ranked (rxe keeps one response per QP, IBA 9.7.5.2.8 and 9.7.5.2.5):
        // an RNR or fatal NAK not yet sent is never replaced by an ACK or a sequence NAK (the
        // packets behind a SEND that found no receive WQE earn one for the same PSN).
        self.new_strong.next = (self.ack_syn.q.val().get_bits::<3>(5) == bits::<3>(1))
            | ((self.ack_syn.q.val().get_bits::<3>(5) == bits::<3>(3))
                & (self.ack_syn.q.val().get_bits::<5>(0) != bits::<5>(0)));
        // (A packet of a QP reset while it was decided, `dirty`, writes none.)
        self.ack_wr.next = self.do_ack.q.val()
            & !self.dirty.q.val()
            & (self.new_strong.val()
                | ((self.ack_strong.q.val() & self.q_bit.val()) == bits::<256>(0)));
        // A record written for the QP the sender holds (or pops now) is the one it sends: the
        // QP is not queued again.
        self.absorb.next = (self.snd_busy.q.val()
            & (self.snd_q.q.val() == self.f_qpn.val().get_bits::<QA>(0)))
            | (self.snd_pop.val()
                & (self.ack_qps.m_tdata.val() == self.f_qpn.val().get_bits::<QA>(0)));
        self.resp_push.next = (self.state.q.val() == RespState::Resp)
            & self.resp_go.val()
            & self.ack_wr.val()
            & !self.absorb.val()
            & ((self.pend_after.val() & self.q_bit.val()) == bits::<256>(0));
        // An ACK that does not fit goes back to the end of the queue (when the responder is
        // not queueing one this cycle; when a newer one for the QP is queued, it is dropped).
        if self.snd_busy.q.val() & !self.snd_void.q.val() & !self.a_go.val() & !self.resp_push.val()
        {
            self.snd_busy.d.next = false;
            if (self.pend_after.val() & self.snd_bit.val()) == bits::<256>(0) {
                self.ack_qps.s_tdata.next = self.snd_q.q.val();
                self.ack_qps.s_tvalid.next = true;
                self.ack_pend.d.next = self.pend_after.val() | self.snd_bit.val();
            }
        }

        // QPs in ERR (the host's table writes say so) and the queue of those whose receive
        // WQEs are to be flushed: a QP enters it when it is moved to ERR and at each receive
        // doorbell while in ERR (BAR0 makes one write per cycle: a table write or a doorbell).
        self.qpw_err.next = self
            .s_qpw_data
            .val()
            .get_bits::<4>(self.q_state.val().index())
            == self.st_err.val();
        self.fl_in_q.next = self.s_rdb_qpn.val().get_bits::<QA>(0);
        if self.s_qpw_en.val() {
            self.fl_in_q.next = self.s_qpw_index.val();
        }
        self.fl_cur.next = self.one256.val() << self.fl_in_q.val();
        self.fl_in.next = (self.s_qpw_en.val() & self.qpw_err.val())
            | (!self.s_qpw_en.val()
                & self.s_rdb_en.val()
                & (self.s_rdb_qpn.val().get_bits::<16>(8) == bits::<16>(0))
                & (((self.qerr.q.val() | self.rfail.q.val()) & self.fl_cur.val())
                    != bits::<256>(0)));
        if self.s_qpw_en.val() & self.qpw_init.val() {
            self.rfail.d.next = self.rfail.q.val() & !self.fl_cur.val();
        }
        self.qe_v.d.next = false;
        self.m_qerr_valid.next = self.qe_v.q.val();
        self.m_qerr_qpn.next = self.qe_q.q.val();
        // A NAK that ends the QP (invalid request, remote access or operational error; not
        // RNR or a sequence error), sent in Resp.
        self.fatal.next = self.do_ack.q.val()
            & (self.ack_syn.q.val().get_bits::<3>(5) == bits::<3>(3))
            & (self.ack_syn.q.val() != self.syn_seq.val());
        // The status of the receive WQE a SEND was landing in when its QP failed: the real
        // error for a NAK invalid request (rxe completes the WQE in use REM_INV_REQ_ERR; the
        // other fatal NAKs are never a SEND's own), WR_FLUSH_ERR otherwise and for the WQEs
        // after it.
        self.fatal_st.next = self.wc_flush.val();
        if self.ack_syn.q.val() == self.syn_inv.val() {
            self.fatal_st.next = self.wc_inv.val();
        }
        if self.s_qpw_en.val() {
            if self.qpw_err.val() {
                self.qerr.d.next = self.qerr.q.val() | self.fl_cur.val();
            } else {
                self.qerr.d.next = self.qerr.q.val() & !self.fl_cur.val();
            }
        }
        // Flushes in Idle: when no packet waits or it is their turn; the host's ERR first,
        // then QPs another engine failed.
        self.fl_take.next = (self.state.q.val() == RespState::Idle)
            & (self.fl_turn.q.val() | !self.s_meta_tvalid.val())
            & self.fl_q.m_tvalid.val();
        self.ff_take.next = (self.state.q.val() == RespState::Idle)
            & (self.fl_turn.q.val() | !self.s_meta_tvalid.val())
            & !self.fl_q.m_tvalid.val()
            & self.s_fail_valid.val();
        self.fl_q.m_tready.next = self.fl_take.val();
        self.s_fail_ready.next = self.ff_take.val();
        self.ff_still.next = self.s_failed.val().get_bit(self.s_fail_qpn.val().index());
        // A failed READ response: after the flushes, as they take turns with packets.
        self.rf_take.next = (self.state.q.val() == RespState::Idle)
            & (self.fl_turn.q.val() | !self.s_meta_tvalid.val())
            & !self.fl_q.m_tvalid.val()
            & !self.s_fail_valid.val()
            & self.s_rfail_valid.val();
        self.s_rfail_ready.next = self.rf_take.val();
        self.rf_live.next = !(self.qerr.q.val().get_bit(self.s_rfail_qpn.val().index())
            | self.rfail.q.val().get_bit(self.s_rfail_qpn.val().index())
            | self.s_failed.val().get_bit(self.s_rfail_qpn.val().index()));
        self.fl_head.next = self.one256.val() << self.fl_q.m_tdata.val();
        self.fl_after.next = self.fl_pend.q.val();
        if self.fl_q.m_tready.val() {
            self.fl_after.next = self.fl_pend.q.val() & !self.fl_head.val();
        }
        self.fl_pend.d.next = self.fl_after.val();
        self.fl_q.s_tdata.next = self.fl_in_q.val();
        self.fl_q.s_tvalid.next = false;
        // (The queue holds each QP at most once: it always has room.)
        if self.fl_in.val()
            & ((self.fl_after.val() & self.fl_cur.val()) == bits::<256>(0))
            & self.fl_q.s_tready.val()
        {
            self.fl_q.s_tvalid.next = true;
            self.fl_pend.d.next = self.fl_after.val() | self.fl_cur.val();
        }

        // A packet's decision starts from nothing to do (Check decides it, RfNak sends its
        // NAK and nothing else).
        if (self.state.q.val() == RespState::Check) | (self.state.q.val() == RespState::RfNak) {
            self.do_ack.d.next = false;
            self.do_rack.d.next = false;
            self.rk_gap.d.next = false;
            self.do_rcv.d.next = false;
            self.rcv_st.d.next = bits::<8>(0);
            self.wb_ctx.d.next = false;
            self.wb_cur.d.next = false;
            self.wb_rcur.d.next = false;
            self.do_job.d.next = false;
            self.job_dup.d.next = bits::<1>(0);
            self.do_rl.d.next = false;
            self.rl_st.d.next = bits::<8>(0);
            self.req_at.d.next = false;
        }
        match self.state.q.val() {
            RespState::Idle => {
                self.fl_turn.d.next = false;
                if self.fl_take.val() {
                    // A QP in ERR to flush: its number as a record's, so the RAMs follow it.
                    self.m.d.next =
                        bit_cast::<META_W, QA>(self.fl_q.m_tdata.val()) << self.x_qpn.val();
                    self.rcv_st.d.next = self.wc_flush.val();
                    self.req_at.d.next = false;
                    self.dirty.d.next = false;
                    self.state.d.next = RespState::FlRd;
                } else if self.ff_take.val() {
                    // A QP another engine failed (and not reset since): the same.
                    if self.ff_still.val() {
                        self.m.d.next =
                            bit_cast::<META_W, QA>(self.s_fail_qpn.val()) << self.x_qpn.val();
                        self.rcv_st.d.next = self.wc_flush.val();
                        self.req_at.d.next = false;
                        // (A reset of the QP in this very cycle: nothing to flush.)
                        self.dirty.d.next = self.s_qpw_en.val()
                            & self.qpw_init.val()
                            & (self.s_qpw_index.val() == self.s_fail_qpn.val());
                        self.state.d.next = RespState::FlRd;
                    }
                } else if self.rf_take.val() {
                    // A READ response of a QP still running failed: its QP and PSN as a
                    // record's, so the RAMs follow it.
                    if self.rf_live.val() {
                        self.m.d.next = (bit_cast::<META_W, QA>(self.s_rfail_qpn.val())
                            << self.x_qpn.val())
                            | (bit_cast::<META_W, 24>(self.s_rfail_psn.val()) << self.x_psn.val());
                        self.dirty.d.next = self.s_qpw_en.val()
                            & self.qpw_init.val()
                            & (self.s_qpw_index.val() == self.s_rfail_qpn.val());
                        self.rf_ep.d.next = self.s_rfail_epoch.val();
                        self.state.d.next = RespState::RfRd;
                    }
                } else if self.s_meta_tvalid.val() & !self.s_hold.val() {
                    self.fl_turn.d.next = self.fl_q.m_tvalid.val()
                        | self.s_fail_valid.val()
                        | self.s_rfail_valid.val();
                    self.m.d.next = self.s_meta_tdata.val();
                    // The port's one P_Key is the default full member 0xFFFF: it matches a
                    // packet key of base 0x7FFF, full or limited (IBA 10.9.3).
                    self.pkey_ok.d.next = self
                        .s_meta_tdata
                        .val()
                        .get_bits::<15>(self.x_pkey.val().index())
                        == bits::<15>(0x7FFF);
                    self.dirty.d.next = self.s_qpw_en.val()
                        & self.qpw_init.val()
                        & (self.s_qpw_index.val()
                            == self
                                .s_meta_tdata
                                .val()
                                .get_bits::<QA>(self.x_qpn.val().index()));
                    self.state.d.next = RespState::Check;
                    if self.in_wcont.val() {
                        self.state.d.next = RespState::ReKey;
                    }
                }
            }
            RespState::ReKey => {
                // The cursor is read: the region its rkey names, read again (a `dereg_mr` or
                // a new registration at the index since the FIRST shows in it).
                self.mr_ram.read_address.next = self.c_rkey.val().get_bits::<QA>(8);
                self.state.d.next = RespState::Check;
            }
            RespState::FlRd => {
                // (The QP's RAM entries are read this cycle.)
                self.state.d.next = RespState::FlHeld;
            }
            RespState::FlHeld => {
                self.rcv.d.next = self.rcur_ram.read_data.val();
                self.state.d.next = RespState::FlHeldOut;
            }
            RespState::FlHeldOut => {
                // A receive WQE a SEND was landing in when the QP went to ERR: completed first
                // (with the SEND's own error, if it failed the QP), given back (unless the
                // host reset the QP meanwhile). The rest flush.
                if self.dirty.q.val() {
                    self.state.d.next = RespState::Idle;
                } else if !self.rcv.q.val().get_bit(528) {
                    self.rcv_st.d.next = self.wc_flush.val();
                    self.state.d.next = RespState::FlReq;
                } else if self.rcv_q.s_tready.val() & !self.s_qpw_en.val() {
                    self.rcv_st.d.next = self.wc_flush.val();
                    self.rcv_q.s_tvalid.next = true;
                    self.n_flushed.d.next = self.n_flushed.q.val() + bits::<32>(1);
                    self.rcur_ram.write_address.next =
                        bit_cast::<9, QA>(self.f_qpn.val().get_bits::<QA>(0));
                    self.rcur_ram.write_data.next = self.rcv.q.val() & !self.held_bit.val();
                    self.rcur_ram.write_enable.next = true;
                    self.state.d.next = RespState::FlReq;
                }
            }
            RespState::FlReq => {
                // The QP's next receive WQE, while it stays in ERR.
                if ((self.qerr.q.val() | self.rfail.q.val() | self.s_failed.val())
                    & self.q_bit.val())
                    == bits::<256>(0)
                {
                    self.state.d.next = RespState::Idle;
                } else if !self.req_v.q.val() {
                    self.req_v.d.next = true;
                    self.req_qpn.d.next = self.f_qpn.val().get_bits::<QA>(0);
                    self.req_sq.d.next = false;
                    self.state.d.next = RespState::FlWait;
                }
            }
            RespState::FlWait => {
                // None left: done. Else (taken, or consumed in error): WR_FLUSH_ERR.
                if self.s_rq_ans_valid.val() & !self.req_v.q.val() {
                    self.rcv.d.next = self.ans_rcur.val();
                    self.state.d.next = RespState::FlOut;
                    if self.s_rq_ans_status.val() == self.st_none.val() {
                        self.state.d.next = RespState::Idle;
                    }
                }
            }
            RespState::FlOut => {
                // (Not for a QP the host has reset since its flush began: the WQE is of its
                // last life, and the host counts its receive queue from the reset.)
                if self.dirty.q.val() {
                    self.state.d.next = RespState::Idle;
                } else if self.rcv_q.s_tready.val() & !self.s_qpw_en.val() {
                    self.rcv_q.s_tvalid.next = true;
                    self.n_flushed.d.next = self.n_flushed.q.val() + bits::<32>(1);
                    self.state.d.next = RespState::FlReq;
                }
            }
            RespState::RfRd => {
                // (The QP's RAM entries are read this cycle.)
                self.state.d.next = RespState::RfNak;
            }
            RespState::RfNak => {
                // NAK remote operational error at the failed response's PSN (IBA 9.7.5.2.4:
                // the responder could not complete the request): the reader's READ fails
                // REM_OP_ERR; sent, it fails the QP here (Resp). Nothing else is done.
                self.do_ack.d.next = true;
                self.ack_syn.d.next = self.syn_op.val();
                self.ack_psn.d.next = self.f_psn.val();
                self.ack_msn.d.next = self.r_msn.val();
                self.state.d.next = RespState::Resp;
                if self.dirty.q.val() | (self.rf_ep.q.val() != self.r_epoch.val()) {
                    // The QP was reset meanwhile, or since the read: its old life's NAK is
                    // not sent.
                    self.do_ack.d.next = false;
                    self.state.d.next = RespState::Idle;
                }
            }
            RespState::Check => {
                self.rcv.d.next = self.rcur_ram.read_data.val();
                self.ack_psn.d.next = self.r_epsn.val();
                self.ack_msn.d.next = self.r_msn.val();
                self.new_epsn.d.next = self.r_epsn.val();
                self.new_msn.d.next = self.r_msn.val();
                self.new_cur.d.next = self.cur_ram.read_data.val();
                self.state.d.next = RespState::Drain;
                if !self.qp_ok.val() {
                    self.n_bad_qp.d.next = self.n_bad_qp.q.val() + bits::<32>(1);
                } else if !self.pkey_ok.q.val() {
                    self.n_bad_pkey.d.next = self.n_bad_pkey.q.val() + bits::<32>(1);
                } else if self.f_op.val() == self.op_ack.val() {
                    self.do_rack.d.next = true;
                } else if self.is_resp.val() {
                    // A READ response for this QP's requester: checked against its slot.
                    self.srem.d.next = bit_cast::<16, 13>(self.f_len.val());
                    self.state.d.next = RespState::RSlot;
                } else if self.rf_hit.val() {
                    // A QP a fatal NAK of ours failed takes no more requests.
                    self.n_bad_qp.d.next = self.n_bad_qp.q.val() + bits::<32>(1);
                } else if !self.op_done.val() & !self.op_rc.val() {
                    // Not an RC opcode (another transport's): dropped, IBA 9.6.1.
                    self.n_unsupported.d.next = self.n_unsupported.q.val() + bits::<32>(1);
                } else if self.diff.val().get_bits::<1>(23) == bits::<1>(1) {
                    // A retransmission of a packet already taken: acknowledge again.
                    self.n_dup.d.next = self.n_dup.q.val() + bits::<32>(1);
                    self.job_dup.d.next = bits::<1>(1);
                    self.do_ack.d.next = !self.is_rdreq.val() & !self.is_atomic.val();
                    self.ack_syn.d.next = self.syn_ack.val();
                    self.ack_psn.d.next = self.r_epsn.val() - bits::<24>(1);
                    // A duplicate READ request (its responses were lost) is served again
                    // from memory at its own PSNs, its rkey and range checked again; the
                    // expected PSN and the MSN stay. A duplicate atomic is answered with
                    // its first result, from the replay cache, and not done again.
                    if self.is_rdreq.val() & self.key_ok.val() & self.len_ok.val() {
                        self.do_job.d.next = true;
                    }
                    if self.is_atomic.val() {
                        self.ac_i.d.next = bits::<5>(0);
                        self.state.d.next = RespState::AtDup;
                    }
                } else if self.diff.val() != bits::<24>(0) {
                    self.n_seq_err.d.next = self.n_seq_err.q.val() + bits::<32>(1);
                    if self.c_nak.val() == bits::<1>(0) {
                        self.n_seq_nak.d.next = self.n_seq_nak.q.val() + bits::<32>(1);
                        self.do_ack.d.next = true;
                        self.ack_syn.d.next = self.syn_seq.val();
                        self.wb_cur.d.next = true;
                        self.new_cur.d.next = self.cur_ram.read_data.val() | self.nak_bit.val();
                    }
                } else if !self.op_done.val() {
                    // An RC opcode this transport does not do (SEND with Invalidate), at the
                    // expected PSN: NAK invalid request (IBA 9.7.5.2.2, Class C; as rxe), so
                    // the requester fails with REM_INV_REQ_ERR rather than retry for ever.
                    self.n_unsupported.d.next = self.n_unsupported.q.val() + bits::<32>(1);
                    self.do_ack.d.next = true;
                    self.ack_syn.d.next = self.syn_inv.val();
                } else if !self.seq_ok.val() | !self.len_ok.val() {
                    self.n_bad_req.d.next = self.n_bad_req.q.val() + bits::<32>(1);
                    self.do_ack.d.next = true;
                    self.ack_syn.d.next = self.syn_inv.val();
                } else if ((self.starts.val() | self.is_rdreq.val() | self.is_atomic.val())
                    & !self.key_ok.val())
                    | (self.w_cont.val() & !self.cont_key_ok.val())
                {
                    // (A WRITE MIDDLE or LAST whose region was deregistered, or registered
                    // anew, since its FIRST: refused as rxe's per-packet `check_rkey`; the
                    // NAK fails the QP, so nothing more of the message lands.)
                    self.n_bad_rkey.d.next = self.n_bad_rkey.q.val() + bits::<32>(1);
                    self.do_ack.d.next = true;
                    self.ack_syn.d.next = self.syn_acc.val();
                } else if self.is_rdreq.val() {
                    // (Any request at the expected PSN ends a gap: the next one gets its NAK,
                    // as rxe clears `sent_psn_nak`.)
                    self.wb_cur.d.next = true;
                    self.new_cur.d.next = self.cur_ram.read_data.val() & !self.nak_bit.val();
                    self.state.d.next = RespState::RdAcc;
                } else if self.is_atomic.val() {
                    self.wb_cur.d.next = true;
                    self.new_cur.d.next = self.cur_ram.read_data.val() & !self.nak_bit.val();
                    self.state.d.next = RespState::AtOrd;
                } else {
                    // Accepted: write the payload, move the PSN, the MSN and the cursor.
                    self.wb_ctx.d.next = true;
                    self.wb_cur.d.next = true;
                    self.new_epsn.d.next = self.r_epsn.val() + bits::<24>(1);
                    self.new_msn.d.next = self.msn_next.val();
                    self.new_cur.d.next = bit_cast::<CUR_W, 64>(self.va_next.val())
                        | (bit_cast::<CUR_W, 32>(self.rem_next.val()) << 64)
                        | (bit_cast::<CUR_W, 1>(self.in_next.val()) << 96)
                        | (bit_cast::<CUR_W, 1>(self.send_b.val()) << 98)
                        | (bit_cast::<CUR_W, 32>(self.tot_next.val()) << 99)
                        | (bit_cast::<CUR_W, 16>(self.rkey_next.val()) << 131);
                    self.do_ack.d.next = self.f_ackreq.val() == bits::<1>(1);
                    self.ack_syn.d.next = self.syn_ack.val();
                    self.ack_psn.d.next = self.f_psn.val();
                    self.ack_msn.d.next = self.msn_next.val();
                    // A message that lands in a receive WQE completes one at its end.
                    self.do_rcv.d.next = self.ends.val() & (self.is_send.val() | self.is_imm.val());
                    // A WRITE's bytes go where the RETH said, as one piece.
                    self.sl.d.next = bit_cast::<ANS_W, 64>(self.addr.val())
                        | (bit_cast::<ANS_W, 32>(self.f_len32.val()) << 64);
                    self.srem.d.next = bit_cast::<16, 13>(self.f_len.val());
                    if self.needs_wqe.val() & !self.rc_held.val() {
                        self.req_v.d.next = true;
                        self.req_sq.d.next = false;
                        self.req_qpn.d.next = self.f_qpn.val().get_bits::<QA>(0);
                        self.state.d.next = RespState::Wait;
                    } else if self.is_send.val() {
                        self.state.d.next = RespState::Room;
                    } else {
                        self.state.d.next = RespState::Split;
                    }
                }
            }
            RespState::RdAcc => {
                // A READ accepted: its PSNs and one message taken, a job for the requester,
                // handed over once every write this block took before it is ahead of it on
                // the way to the host (the requester's reads of the job would overtake them:
                // IBA 9.5, a QP's requests execute in order).
                if !self.cmdq.m_tvalid.val() & self.wr_ordered.val() {
                    self.wb_ctx.d.next = true;
                    self.new_epsn.d.next = self.r_epsn.val() + self.npk.q.val();
                    self.new_msn.d.next = self.r_msn.val() + bits::<24>(1);
                    self.do_job.d.next = true;
                    self.n_reads.d.next = self.n_reads.q.val() + bits::<32>(1);
                    self.state.d.next = RespState::Drain;
                }
            }
            RespState::AtOrd => {
                // An atomic, serialized with everything this block writes: its read goes out
                // once every earlier write is ahead of it on the way to the host.
                // (Only with room for its ATOMIC ACKNOWLEDGE's job, in the pool and in its
                // QP's share: once done, it cannot be dropped. The share full, or the pool
                // for `JOB_WAIT` cycles: dropped, not done. Neither fills behind it: only
                // this block adds jobs.) A QP the host reset since: nothing read or written.
                if self.dirty.q.val() {
                    self.state.d.next = RespState::Drain;
                } else if !self.cmdq.m_tvalid.val()
                    & self.wr_ordered.val()
                    & !self.req_v.q.val()
                    & self.rj_q.s_tready.val()
                    & !self.sh_full.q.val()
                {
                    self.req_v.d.next = true;
                    self.req_qpn.d.next = self.f_qpn.val().get_bits::<QA>(0);
                    self.req_sq.d.next = false;
                    self.req_at.d.next = true;
                    self.req_addr.d.next = self.f_va.val();
                    self.state.d.next = RespState::Wait;
                } else if self.sh_full.q.val()
                    | (!self.rj_q.s_tready.val() & (self.jw.q.val() == self.job_wait.val()))
                {
                    self.jdrop.d.next = true;
                    self.state.d.next = RespState::Drain;
                }
            }
            RespState::AtDup => {
                // A duplicate atomic: its QP's entries, one a cycle; the one with its PSN
                // (of this incarnation) gives the original value its ACKNOWLEDGE carries
                // again. None (older than the window a requester may have outstanding):
                // dropped, as rxe does.
                self.ac_i.d.next = self.ac_i.q.val() + bits::<5>(1);
                if self.ac_hit.q.val() {
                    self.at_orig.d.next = self.ac_val.q.val();
                    self.do_job.d.next = true;
                    self.state.d.next = RespState::Drain;
                } else if self.ac_i.q.val() == self.ac_end.val() {
                    self.state.d.next = RespState::Drain;
                }
            }
            RespState::AtWr => {
                // The new value written where the original was (one piece, through the
                // scatter in Pay); the PSN and the MSN move on; the ATOMIC ACKNOWLEDGE is a
                // job for the requester, in order with the QP's READ responses.
                self.at_new.d.next = self.at_calc.val();
                self.sl.d.next = bit_cast::<ANS_W, 64>(self.f_va.val())
                    | (bit_cast::<ANS_W, 32>(bits::<32>(8)) << 64);
                self.srem.d.next = bits::<16>(8);
                self.wb_ctx.d.next = true;
                self.new_epsn.d.next = self.r_epsn.val() + bits::<24>(1);
                self.new_msn.d.next = self.r_msn.val() + bits::<24>(1);
                self.do_job.d.next = true;
                self.n_atomics.d.next = self.n_atomics.q.val() + bits::<32>(1);
                if !self.dirty.q.val() {
                    self.ac_ram.write_enable.next = true;
                    self.ax_ram.write_enable.next = true;
                }
                self.state.d.next = RespState::Split;
            }
            RespState::AtEnd => {
                // The write ahead of anything after it (a later READ's or atomic's reads).
                if !self.cmdq.m_tvalid.val() & self.wr_ordered.val() {
                    self.state.d.next = RespState::Resp;
                }
            }
            RespState::RSlot => {
                // A READ response: the QP sends (RTS); a FIRST or ONLY must carry the PSN of
                // the QP's next READ (its slot, written for the QP's landed count: not the
                // slot's last use `MAX_RD_ATOMIC` READs back) and has its WQE fetched again for the SGEs;
                // a MIDDLE or LAST goes on from the READ in progress. Anything else is a
                // stray (a duplicate, or after a reset) and is dropped.
                self.state.d.next = RespState::Drain;
                self.seen.d.next = self.seen_keep.val() | self.q_bit.val();
                self.chk_gen.d.next = self.s_mr_gen.val();
                self.rechk.d.next = false;
                // (The READ's WQE, if it is fetched: to start the READ or to check it again.)
                self.req_qpn.d.next = self.f_qpn.val().get_bits::<QA>(0);
                self.req_sq.d.next = true;
                self.req_idx.d.next = self.sl_idx.val();
                if (self.r_state.val() != self.st_rts.val()) | self.rf_hit.val() {
                    // (A failed QP's READs have flushed: nothing lands in their buffers.)
                    self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                } else if self.rs_after.val() & (self.rs_gaps.val() != bits::<2>(3)) {
                    // Past the expected response: dropped, counted in the cursor; the third
                    // asks the completer to have the rest of the READ sent again now.
                    self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                    self.wb_rcur.d.next = true;
                    self.rcv.d.next = (self.rcv.q.val() & !(bits::<RCUR_W>(3) << 488))
                        | (bit_cast::<RCUR_W, 2>(self.rs_gaps1.val()) << 488);
                    if self.rs_gaps.val() == bits::<2>(2) {
                        self.do_rack.d.next = true;
                        self.rk_gap.d.next = true;
                    }
                } else if self.rs_start.val() {
                    if (!self.rs_resume.val()
                        & ((self.f_psn.val() != self.sl_psn.val())
                            | (self.sl_epoch.val() != self.r_epoch.val())
                            | (self.sl_at.val() != self.is_aack.val())
                            | (self.sl_cnt.val() != self.rs_cnt.val())))
                        | (self.rs_first.val() & (self.f_len32.val() != self.pmtu.val()))
                        | (self.f_len32.val() > self.pmtu.val())
                        | self.aack_pay.val()
                    {
                        self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                    } else if self.rs_resume.val() {
                        // The READ resumed at its first missing response (a READ request
                        // for the rest): this FIRST goes on as a MIDDLE, an ONLY as a LAST.
                        self.state.d.next = RespState::Room;
                        if !self.rs_gen_ok.val() {
                            self.rechk.d.next = true;
                            self.req_v.d.next = true;
                            self.state.d.next = RespState::Wait;
                        }
                    } else {
                        self.req_v.d.next = true;
                        self.state.d.next = RespState::Wait;
                    }
                } else if !self.rcv.q.val().get_bit(528)
                    | (self.f_psn.val() != self.rs_exp.val())
                    | (self.rs_epoch.val() != self.r_epoch.val())
                    | (self.rs_middle.val() & (self.f_len32.val() != self.pmtu.val()))
                    | (self.f_len32.val() > self.pmtu.val())
                {
                    self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                } else if !self.rs_gen_ok.val() {
                    // The MR table was written since the READ's SGEs were checked (a
                    // deregistration, perhaps of its buffer): its WQE is checked again first.
                    self.rechk.d.next = true;
                    self.req_v.d.next = true;
                    self.state.d.next = RespState::Wait;
                } else {
                    self.state.d.next = RespState::Room;
                }
            }
            RespState::Wait => {
                // The receive WQE: none posted (RNR NAK, the packet not taken), consumed in
                // error (its completion, NAK remote operational error), or taken. A QP the
                // host reset since the packet was decided: nothing of it lands (nor is
                // written back, `Resp`), its WQE or original value of its last life.
                if self.s_rq_ans_valid.val() & !self.req_v.q.val() & self.dirty.q.val() {
                    self.state.d.next = RespState::Drain;
                } else if self.s_rq_ans_valid.val() & !self.req_v.q.val() & self.is_resp.val() {
                    // A READ's WQE again: its SGEs (the READ cursor's own fields kept), or
                    // the READ fails with the status; checked at the generation RSlot saw.
                    // Checked again mid-READ: the cursor's SGEs (past what landed) stay.
                    self.rcv.d.next = (self.ans_rcur.val() & !self.rl_mask.val())
                        | (self.rcv.q.val() & self.rl_mask.val() & !self.gen_mask.val())
                        | self.chk_field.val();
                    if self.rechk.q.val() {
                        self.rcv.d.next =
                            (self.rcv.q.val() & !self.gen_mask.val()) | self.chk_field.val();
                    }
                    self.state.d.next = RespState::Room;
                    if self.s_rq_ans_status.val() != bits::<8>(0) {
                        self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                        self.do_rl.d.next = true;
                        self.rl_st.d.next = self.s_rq_ans_status.val();
                        self.wb_rcur.d.next = true;
                        self.rcv.d.next =
                            (self.rcv.q.val() & !self.rl_mask.val()) | self.rl_fields.val();
                        self.state.d.next = RespState::Drain;
                    }
                } else if self.s_rq_ans_valid.val() & !self.req_v.q.val() & self.is_atomic.val() {
                    // An atomic's original value; a failed read: NAK remote operational
                    // error, nothing written (the DMA engine counts the failure).
                    self.at_orig.d.next = self.s_rq_ans_data.val();
                    self.state.d.next = RespState::AtWr;
                    if self.s_rq_ans_status.val() != bits::<8>(0) {
                        self.do_ack.d.next = true;
                        self.ack_syn.d.next = self.syn_op.val();
                        self.ack_psn.d.next = self.r_epsn.val();
                        self.ack_msn.d.next = self.r_msn.val();
                        self.state.d.next = RespState::Drain;
                    }
                } else if self.s_rq_ans_valid.val() & !self.req_v.q.val() {
                    self.rcv.d.next = self.ans_rcur.val();
                    if self.s_rq_ans_status.val() == self.st_none.val() {
                        self.n_rnr.d.next = self.n_rnr.q.val() + bits::<32>(1);
                        self.do_ack.d.next = true;
                        self.ack_syn.d.next =
                            self.syn_rnr.val() | bit_cast::<8, 5>(self.r_rnrt.val());
                        self.ack_psn.d.next = self.r_epsn.val();
                        self.ack_msn.d.next = self.r_msn.val();
                        self.wb_ctx.d.next = false;
                        self.wb_cur.d.next = false;
                        self.do_rcv.d.next = false;
                        self.rcv.d.next = self.rcur_ram.read_data.val();
                        self.state.d.next = RespState::Drain;
                    } else if self.s_rq_ans_status.val() != bits::<8>(0) {
                        self.do_ack.d.next = true;
                        self.ack_syn.d.next = self.syn_op.val();
                        self.ack_psn.d.next = self.r_epsn.val();
                        self.ack_msn.d.next = self.r_msn.val();
                        self.wb_ctx.d.next = false;
                        self.wb_cur.d.next = true;
                        self.new_cur.d.next = self.cur_clear.val();
                        self.do_rcv.d.next = true;
                        self.rcv_st.d.next = self.s_rq_ans_status.val();
                        self.state.d.next = RespState::Drain;
                    } else if self.is_send.val() {
                        self.state.d.next = RespState::Room;
                    } else {
                        self.state.d.next = RespState::Split;
                    }
                }
            }
            RespState::Room => {
                // A SEND packet must fit the receive buffer's room left: else NAK invalid
                // request, the WQE completes LOC_LEN_ERR, nothing written.
                self.sl.d.next = self.rc_sges.val();
                if self.is_resp.val() {
                    // A READ response longer than the READ's buffers left: the READ fails.
                    self.state.d.next = RespState::Split;
                    if self.f_len32.val() > self.rc_room.val() {
                        self.n_bad_resp.d.next = self.n_bad_resp.q.val() + bits::<32>(1);
                        self.do_rl.d.next = true;
                        self.rl_st.d.next = self.wc_len.val();
                        self.wb_rcur.d.next = true;
                        self.rcv.d.next =
                            (self.rcv.q.val() & !self.rl_mask.val()) | self.rl_fields.val();
                        self.state.d.next = RespState::Drain;
                    }
                } else if self.f_len32.val() > self.rc_room.val() {
                    self.n_bad_req.d.next = self.n_bad_req.q.val() + bits::<32>(1);
                    self.do_ack.d.next = true;
                    self.ack_syn.d.next = self.syn_inv.val();
                    self.ack_psn.d.next = self.r_epsn.val();
                    self.ack_msn.d.next = self.r_msn.val();
                    self.wb_ctx.d.next = false;
                    self.wb_cur.d.next = true;
                    self.new_cur.d.next = self.cur_clear.val();
                    // The WQE is given back (not held) but its wr_id and CQ stay in `rcv`
                    // for the completion.
                    self.wb_rcur.d.next = true;
                    self.rcv.d.next = self.rcv.q.val() & !self.held_bit.val();
                    self.do_rcv.d.next = true;
                    self.rcv_st.d.next = self.wc_len.val();
                    self.state.d.next = RespState::Drain;
                } else {
                    self.state.d.next = RespState::Split;
                }
            }
            RespState::Split => {
                if self.srem.q.val() == bits::<16>(0) {
                    self.state.d.next = RespState::Pay;
                    if (self.f_len.val() == bits::<13>(0)) & !self.is_atomic.val() {
                        self.state.d.next = RespState::Drain;
                    }
                    // A SEND: the receive cursor moves on past this packet; the message's end
                    // gives the WQE back.
                    if self.is_send.val() {
                        self.wb_rcur.d.next = true;
                        self.rcv.d.next = self.rcur_next.val();
                        if !self.ends.val() {
                            self.rcv.d.next = self.rcur_next.val() | self.held_bit.val();
                        }
                    }
                    // A READ response: the cursor moves on; its last packet lands the READ
                    // (short of the READ's length: LOC_LEN_ERR).
                    if self.is_resp.val() {
                        self.wb_rcur.d.next = true;
                        self.rcv.d.next =
                            (self.rcur_next.val() & !self.rl_mask.val()) | self.rl_fields.val();
                        self.do_rl.d.next = self.rs_ends.val();
                        if self.room_next.val() != bits::<32>(0) {
                            self.rl_st.d.next = self.wc_len.val();
                        }
                    }
                } else if self.s0_l.val() == bits::<32>(0) {
                    // An empty SGE (or one used up): the next one.
                    self.sl.d.next = self.sl.q.val() >> 96;
                } else if self.cut.val() {
                    self.srem.d.next = self.srem.q.val() - self.piece.val();
                    if self.l_le.val() {
                        self.sl.d.next = self.sl.q.val() >> 96;
                    } else {
                        self.sl.d.next = (self.sl.q.val() & !self.sge_keep[1].val())
                            | bit_cast::<ANS_W, 64>(self.s0_a_next.val())
                            | (bit_cast::<ANS_W, 32>(self.s0_l_next.val()) << 64);
                    }
                }
            }
            RespState::Pay => {
                if self.s_pay_tvalid.val() & self.sc.s_tready.val() & self.s_pay_tlast.val() {
                    self.state.d.next = RespState::Resp;
                    if self.is_atomic.val() {
                        self.state.d.next = RespState::AtEnd;
                    }
                }
            }
            RespState::Drain => {
                if self.s_pay_tvalid.val() & self.s_pay_tlast.val() {
                    self.state.d.next = RespState::Resp;
                }
            }
            RespState::Resp => {
                if self.jd_now.val() {
                    // Dropped: nothing written, no job, no ACK.
                    self.jdrop.d.next = false;
                    self.n_jobs_full.d.next = self.n_jobs_full.q.val() + bits::<32>(1);
                    if self.wb_ctx.q.val() & !self.jdrop.q.val() {
                        self.n_reads.d.next = self.n_reads.q.val() - bits::<32>(1);
                    }
                    self.state.d.next = RespState::Idle;
                }
                if self.resp_go.val() {
                    if self.ack_wr.val() {
                        self.ack_info.write_enable.next = true;
                        self.ack_void.d.next = self.void_keep.val() & !self.q_bit.val();
                        if self.absorb.val() {
                            self.snd_void.d.next = false;
                        }
                        if self.new_strong.val() {
                            self.ack_strong.d.next = self.strong_keep.val() | self.q_bit.val();
                        }
                        if self.absorb.val() {
                            self.snd_stale.d.next = true;
                        } else if (self.pend_after.val() & self.q_bit.val()) == bits::<256>(0) {
                            self.ack_qps.s_tvalid.next = true;
                            self.ack_pend.d.next = self.pend_after.val() | self.q_bit.val();
                        }
                    }
                    self.rack_q.s_tvalid.next = self.do_rack.q.val() & !self.dirty.q.val();
                    self.rl_q.s_tvalid.next = self.do_rl.q.val() & !self.dirty.q.val();
                    self.rlc_v.d.next = self.do_rl.q.val() & !self.dirty.q.val();
                    self.rlc_q.d.next = self.f_qpn.val().get_bits::<QA>(0);
                    self.rlc_c.d.next = self.rs_cnt.val();
                    if self.do_job.q.val() & !self.dirty.q.val() {
                        self.rj_q.s_tvalid.next = true;
                        self.dup_v.d.next = self.job_dup.q.val().any();
                        self.rda_cur.write_enable.next = true;
                        self.rda_ack.write_enable.next = true;
                    }
                    if self.wb_ctx.q.val() & !self.dirty.q.val() {
                        self.rw_addr.next = self.f_qpn.val().get_bits::<QA>(0);
                        self.rw_data.next = bit_cast::<48, 24>(self.new_epsn.q.val())
                            | (bit_cast::<48, 24>(self.new_msn.q.val()) << 24);
                        self.rw_en.next = true;
                    }
                    if self.wb_cur.q.val() & !self.dirty.q.val() {
                        self.cur_ram.write_address.next = self.f_qpn.val().get_bits::<QA>(0);
                        self.cur_ram.write_data.next = self.new_cur.q.val();
                        self.cur_ram.write_enable.next = true;
                    }
                    // (Nor the READ cursor of a QP reset meanwhile: a READ response landing
                    // across the reset is of the QP's last life, neither counted nor reported,
                    // so the requester's READ counts, set from the landed count at the reset,
                    // stay whole.)
                    if self.wb_rcur.q.val() & !self.dirty.q.val() {
                        self.rcur_ram.write_address.next =
                            bit_cast::<9, QA>(self.f_qpn.val().get_bits::<QA>(0));
                        if self.is_resp.val() {
                            self.rcur_ram.write_address.next =
                                bit_cast::<9, QA>(self.f_qpn.val().get_bits::<QA>(0))
                                    | bits::<9>(256);
                        }
                        self.rcur_ram.write_data.next = self.rcv.q.val();
                        self.rcur_ram.write_enable.next = true;
                        if self.is_resp.val() {
                            self.rx_ram.write_address.next = self.f_q8.val();
                            self.rx_ram.write_data.next = self.rx_w.val();
                            self.rx_ram.write_enable.next = true;
                        }
                    }
                    self.rcv_q.s_tvalid.next = self.do_rcv.q.val() & !self.dirty.q.val();
                    self.state.d.next = RespState::Idle;
                    // A fatal NAK sent: the QP goes to ERR (IBA 9.9.3: its requester stops, its
                    // receive WQEs flush, from here).
                    if self.fatal.val() & !self.dirty.q.val() {
                        self.rfail.d.next = self.rfail.q.val() | self.q_bit.val();
                        self.qe_v.d.next = true;
                        self.qe_q.d.next = self.f_qpn.val().get_bits::<QA>(0);
                        self.rcv_st.d.next = self.fatal_st.val();
                        self.state.d.next = RespState::FlRd;
                    }
                }
            }
        }
        // The receive state and its copy for QUERY take the same writes.
        self.rq_ram.write_address.next = self.rw_addr.val();
        self.rq_ram.write_data.next = self.rw_data.val();
        self.rq_ram.write_enable.next = self.rw_en.val();
        self.rq_peek.write_address.next = self.rw_addr.val();
        self.rq_peek.write_data.next = self.rw_data.val();
        self.rq_peek.write_enable.next = self.rw_en.val();
        self.rq_peek.read_address.next = self.s_peek_index.val();
        // The QUERY copy, and whether a fatal NAK this block sent failed the QP (it reads ERR).
        self.pk_q8.next = self.s_peek_index.val();
        self.pk_fail.d.next = bits::<1>(0);
        if self.rfail.q.val().get_bit(self.pk_q8.val().index())
            | self.s_failed.val().get_bit(self.pk_q8.val().index())
        {
            self.pk_fail.d.next = bits::<1>(1);
        }
        self.m_peek_rq.next = bit_cast::<49, 48>(self.rq_peek.read_data.val())
            | (bit_cast::<49, 1>(self.pk_fail.q.val()) << 48);
        if self.rst.val() {
            self.state.d.next = RespState::Idle;
            // (The requester counts the same writes from the same reset: READ jobs compare.)
            self.ack_pend.d.next = bits::<256>(0);
            self.ack_strong.d.next = bits::<256>(0);
            self.ack_void.d.next = bits::<256>(0);
            self.snd_void.d.next = false;
            self.snd_busy.d.next = false;
            self.rsv.d.next = bits::<RSV_W>(0);
            self.req_v.d.next = false;
            self.n_rnr.d.next = bits::<32>(0);
            self.n_bad_qp.d.next = bits::<32>(0);
            self.n_unsupported.d.next = bits::<32>(0);
            self.n_dup.d.next = bits::<32>(0);
            self.n_seq_err.d.next = bits::<32>(0);
            self.n_seq_nak.d.next = bits::<32>(0);
            self.n_bad_req.d.next = bits::<32>(0);
            self.n_bad_rkey.d.next = bits::<32>(0);
            self.n_bad_pkey.d.next = bits::<32>(0);
            self.n_reads.d.next = bits::<32>(0);
            self.jdrop.d.next = false;
            self.n_jobs_full.d.next = bits::<32>(0);
            self.n_bad_resp.d.next = bits::<32>(0);
            self.n_atomics.d.next = bits::<32>(0);
            self.n_flushed.d.next = bits::<32>(0);
            self.qerr.d.next = bits::<256>(0);
            self.fl_pend.d.next = bits::<256>(0);
            self.rfail.d.next = bits::<256>(0);
            self.fl_turn.d.next = false;
            self.qe_v.d.next = false;
            self.rl_v.d.next = false;
        }
    }
}
