//! `Nic`: the whole NIC, one PCIe function and one Ethernet port: RDMA WRITE and SEND (with or
//! without immediate) both ways, receive queues included.
//! Wiring only (docs/ARCHITECTURE.md, "NIC top"):
//!
//! ```text
//!  s_req -> Bar0 -> m_cpl
//!            |  doorbells (send, receive), QP/CQ/MR table write-throughs, local MAC/IPv4
//!            v
//!  send:    Requester --rd--\
//!                            RdShare --> DmaRead --\
//!           RecvQueue --rd--/  ^                    \
//!            |  records + payload                    RqMux --> m_rq   (s_rc -> DmaRead)
//!            v                 | receive WQEs       /
//!           TxArb <-- ACK/NAK records        wr_mux (RqMux)
//!            v             |                  /      \
//!           TxFrame --> m_axis               /        \
//!  receive: s_axis --> RxFrame --> Responder --> DmaWrite (payload)
//!                                    | received ACKs, receive completions
//!                                    v
//!           Requester --SENT--> Completer --> DmaWrite (CQEs)
//! ```
//!
//! Ports:
//! - `s_req_*` / `m_cpl_*`: BAR0 requests from the host and their completions.
//! - `m_rq_*` / `s_rc_*`: the NIC's memory requests (reads and posted writes) and the read
//!   completions (`spec::tlp`).
//! - `m_axis_*`: frames to the wire, with FCS; `s_axis_*`: frames from the wire, with FCS (no
//!   `tready`: the wire does not wait).
//! - counters, prefixed by block: `req_` requester, `rd_` DMA read, `tx_` TX path, `rx_` RX
//!   path (MAC receive, then parser), `resp_` responder, `rq_` receive queues, `cpl_`
//!   completer, `wr_bad_len` and `cqe_bad_len` the two DMA write engines (both stay zero:
//!   contracts between blocks).
//! - `req_yields`: QPs the requester set aside mid-message for want of transmit credit;
//!   `mac_tx_used`: per priority, the transmit queue beats reserved and not yet sent (16 bits
//!   each, priority p at 16p; zero when the NIC is idle); `mac_tx_held`: cycles the transmit
//!   queues' input waited for a full queue (stays zero: the credits' promise); `req_cuts`:
//!   READ response streams cut short (stale: the peer asked again from an earlier PSN);
//!   `req_win_stops`: times a QP stopped mid-message with `MAX_UNACKED_PSNS` PSNs out;
//!   `fail_local`: QPs a local error failed (a WQE refused, a fetch that failed: `QpFail`);
//!   `req_rsp_refused`: READ responses refused on a second check of their region, after an
//!   MR table write (a NAK remote access error sent in their place; the QP fails);
//!   `cpl_ghosts`: ACKs and NAKs dropped for a PSN never sent (or a NAK behind `una`);
//!   `req_pool_waits`: times a QP waited for its share of the completer's pool;
//!   `resp_jobs_full`: READs and atomics dropped, undone, for want of a job (their QP held
//!   its whole share of the READ job pool, or the pool stayed full; the peer sends them again).
//! - `mac_*`: the MAC's pause and PFC state and statistics (`mac_paused`, `mac_q_ready`, the
//!   per-priority buses `mac_pfc_rx`, `mac_paused_cycles`, `mac_frames_sent`, `mac_xoff_sent`,
//!   `mac_xon_sent`, and `mac_pause_rx`, `mac_ctrl_bad_*`, `mac_oversize`, `mac_bad_frames`,
//!   `mac_ctrl_sent`);
//!   the host reads the same through BAR0's MAC_STATS block, and the transport's retry
//!   counters (`req_retrans`, `cpl_*`, `resp_dup`, `resp_rnr`) through RC_STATS.
//!
//! Lossless Ethernet: the peer's PFC/PAUSE (MAC receive's `paused`) holds the transmit queues,
//! and the requester and the responder reserve room in a queue before they send into it
//! (credits, `TxQueues`), so a paused priority holds only its own QPs and ACKs (and those of
//! the priority sharing its transmit queue, when the configuration has fewer than eight);
//! the receive buffer's per-priority `xoff` drives PFC generation, configured by BAR0's PFC
//! block (docs/ARCHITECTURE.md, "NIC top").
//!
//! Every block ends in registers with readies from registers, so this is wiring only.

use crate::host::bar0::LIVE_W;
use crate::host::{k, Bar0, Bar0Params, DmaRead, DmaWrite, RdShare, RqMux};
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_queues::USED_W;
use crate::net::{RxFrame, TxArb, TxFrame};
use crate::prelude::*;
use crate::rc::timers::timer_unit_cycles;
use crate::rc::{Completer, QpFail, RecvQueue, Requester, Responder};
use ferroce_spec::headers::{AETH, IMMDT, RETH};
use ferroce_spec::meta::{beats_of, tx_frame_len, TX_MAX_PAYLOAD};
use ferroce_spec::regs;

#[derive(LogicBlock)]
pub struct Nic<
    const DW: usize,
    const KW: usize,
    const BB: usize,
    const IW: usize,
    const SW: usize,
    const AW: usize,
    const RW: usize,
    const QA: usize,
    const RA: usize,
    const RSW: usize,
    const RSK: usize,
> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_req_hdr: Signal<In, Bits<128>>,
    pub s_req_tdata: Signal<In, Bits<DW>>,
    pub s_req_tkeep: Signal<In, Bits<KW>>,
    pub s_req_tlast: Signal<In, Bit>,
    pub s_req_tvalid: Signal<In, Bit>,
    pub s_req_tready: Signal<Out, Bit>,
    pub m_cpl_hdr: Signal<Out, Bits<128>>,
    pub m_cpl_tdata: Signal<Out, Bits<DW>>,
    pub m_cpl_tkeep: Signal<Out, Bits<KW>>,
    pub m_cpl_tlast: Signal<Out, Bit>,
    pub m_cpl_tvalid: Signal<Out, Bit>,
    pub m_cpl_tready: Signal<In, Bit>,
    pub m_rq_hdr: Signal<Out, Bits<128>>,
    pub m_rq_tdata: Signal<Out, Bits<DW>>,
    pub m_rq_tkeep: Signal<Out, Bits<KW>>,
    pub m_rq_tlast: Signal<Out, Bit>,
    pub m_rq_tvalid: Signal<Out, Bit>,
    pub m_rq_tready: Signal<In, Bit>,
    pub s_rc_hdr: Signal<In, Bits<128>>,
    pub s_rc_tdata: Signal<In, Bits<DW>>,
    pub s_rc_tlast: Signal<In, Bit>,
    pub s_rc_tvalid: Signal<In, Bit>,
    pub s_rc_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub req_bad_db: Signal<Out, Bits<32>>,
    pub req_bad_qp: Signal<Out, Bits<32>>,
    pub req_bad_wqe: Signal<Out, Bits<32>>,
    pub req_dma_err: Signal<Out, Bits<32>>,
    pub req_prot_err: Signal<Out, Bits<32>>,
    pub req_yields: Signal<Out, Bits<32>>,
    pub mac_tx_used: Signal<Out, Bits<USED_W>>,
    pub mac_tx_held: Signal<Out, Bits<32>>,
    pub rd_bad_cpl: Signal<Out, Bits<32>>,
    pub rd_timeouts: Signal<Out, Bits<32>>,
    pub tx_bad_len: Signal<Out, Bits<32>>,
    pub tx_bad_opcode: Signal<Out, Bits<32>>,
    pub tx_self_check: Signal<Out, Bits<32>>,
    pub rx_fcs_err: Signal<Out, Bits<32>>,
    pub rx_runt: Signal<Out, Bits<32>>,
    pub rx_code_err: Signal<Out, Bits<32>>,
    pub rx_too_long: Signal<Out, Bits<32>>,
    pub rx_not_roce: Signal<Out, Bits<32>>,
    pub rx_frame_len_err: Signal<Out, Bits<32>>,
    pub rx_icrc_err: Signal<Out, Bits<32>>,
    pub rx_overflow: Signal<Out, Bits<32>>,
    pub rx_self_check: Signal<Out, Bits<32>>,
    pub rx_accepted: Signal<Out, Bits<32>>,
    pub rx_unsupported: Signal<Out, Bits<32>>,
    pub rx_bad_csum: Signal<Out, Bits<32>>,
    pub rx_bad_mac: Signal<Out, Bits<32>>,
    pub rx_bad_ip: Signal<Out, Bits<32>>,
    pub rx_bad_opcode: Signal<Out, Bits<32>>,
    pub rx_bad_len: Signal<Out, Bits<32>>,
    pub rx_truncated: Signal<Out, Bits<32>>,
    pub mac_paused: Signal<Out, Bits<8>>,
    pub mac_q_ready: Signal<Out, Bits<8>>,
    pub mac_oversize: Signal<Out, Bits<32>>,
    pub mac_bad_frames: Signal<Out, Bits<32>>,
    pub mac_ctrl_sent: Signal<Out, Bits<32>>,
    pub mac_frames_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub mac_xoff_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub mac_xon_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub mac_pause_rx: Signal<Out, Bits<32>>,
    pub mac_pfc_rx: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub mac_paused_cycles: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub mac_ctrl_bad_dst: Signal<Out, Bits<32>>,
    pub mac_ctrl_bad_opcode: Signal<Out, Bits<32>>,
    pub mac_ctrl_bad_reserved: Signal<Out, Bits<32>>,
    pub resp_bad_qp: Signal<Out, Bits<32>>,
    pub resp_unsupported: Signal<Out, Bits<32>>,
    pub resp_dup: Signal<Out, Bits<32>>,
    pub resp_seq_err: Signal<Out, Bits<32>>,
    pub resp_bad_req: Signal<Out, Bits<32>>,
    pub resp_bad_rkey: Signal<Out, Bits<32>>,
    pub resp_bad_pkey: Signal<Out, Bits<32>>,
    pub resp_rnr: Signal<Out, Bits<32>>,
    pub resp_sc_bad_len: Signal<Out, Bits<32>>,
    pub rq_bad_wqe: Signal<Out, Bits<32>>,
    pub rq_empty: Signal<Out, Bits<32>>,
    pub req_reads: Signal<Out, Bits<32>>,
    pub resp_reads: Signal<Out, Bits<32>>,
    pub resp_jobs_full: Signal<Out, Bits<32>>,
    pub resp_bad_resp: Signal<Out, Bits<32>>,
    pub resp_atomics: Signal<Out, Bits<32>>,
    pub resp_flushed: Signal<Out, Bits<32>>,
    pub cpl_naks: Signal<Out, Bits<32>>,
    pub cpl_bad_cq: Signal<Out, Bits<32>>,
    pub cpl_cqes: Signal<Out, Bits<32>>,
    pub cpl_timeouts: Signal<Out, Bits<32>>,
    pub cpl_seq_naks: Signal<Out, Bits<32>>,
    pub cpl_rnr_naks: Signal<Out, Bits<32>>,
    pub cpl_retry_exc: Signal<Out, Bits<32>>,
    pub req_retrans: Signal<Out, Bits<32>>,
    pub req_cuts: Signal<Out, Bits<32>>,
    pub req_win_stops: Signal<Out, Bits<32>>,
    pub fail_local: Signal<Out, Bits<32>>,
    pub req_rsp_refused: Signal<Out, Bits<32>>,
    pub cpl_ghosts: Signal<Out, Bits<32>>,
    pub req_pool_waits: Signal<Out, Bits<32>>,
    pub wr_bad_len: Signal<Out, Bits<32>>,
    pub cqe_bad_len: Signal<Out, Bits<32>>,
    bar0: Bar0<DW, KW>,
    live_pfc_rx0: Constant<Bits<16>>,
    live_xoff_tx0: Constant<Bits<16>>,
    live_xon_tx0: Constant<Bits<16>>,
    live_paused0: Constant<Bits<16>>,
    live_frames_tx0: Constant<Bits<16>>,
    live_pause_rx: Constant<Bits<16>>,
    live_ctrl_bad_dst: Constant<Bits<16>>,
    live_ctrl_bad_opcode: Constant<Bits<16>>,
    live_ctrl_bad_reserved: Constant<Bits<16>>,
    live_tx_oversize: Constant<Bits<16>>,
    live_tx_bad_frame: Constant<Bits<16>>,
    live_rx_fcs_err: Constant<Bits<16>>,
    live_rx_runt: Constant<Bits<16>>,
    live_rx_overflow: Constant<Bits<16>>,
    live_rx_code_err: Constant<Bits<16>>,
    live_rx_too_long: Constant<Bits<16>>,
    live_retrans: Constant<Bits<16>>,
    live_timeouts: Constant<Bits<16>>,
    live_seq_nak_rx: Constant<Bits<16>>,
    live_seq_nak_tx: Constant<Bits<16>>,
    live_rnr_nak_rx: Constant<Bits<16>>,
    live_rnr_nak_tx: Constant<Bits<16>>,
    live_dup_rx: Constant<Bits<16>>,
    live_retry_exc: Constant<Bits<16>>,
    live_ghost_rx: Constant<Bits<16>>,
    live_local_fail: Constant<Bits<16>>,
    live_rsp_refused: Constant<Bits<16>>,
    live_jobs_full: Constant<Bits<16>>,
    live_key_refused: Constant<Bits<16>>,
    live_pool_wait: Constant<Bits<16>>,
    cap_req: Constant<Bits<16>>,
    cap_resp: Constant<Bits<16>>,
    req: Requester<DW, KW>,
    rd: DmaRead<DW, KW, BB>,
    rds: RdShare<DW, KW, RSW, RSK>,
    rq: RecvQueue<DW>,
    arb: TxArb<DW, KW>,
    tx: TxFrame<DW, KW, IW, SW, QA, RA>,
    rx: RxFrame<DW, KW, SW, AW, RW>,
    resp: Responder<DW, KW>,
    cpl: Completer<DW>,
    fail: QpFail,
    wr_resp: DmaWrite<DW, KW>,
    wr_cpl: DmaWrite<DW, KW>,
    wr_mux: RqMux<DW, KW>,
    rq_mux: RqMux<DW, KW>,
}

impl<
        const DW: usize,
        const KW: usize,
        const BB: usize,
        const IW: usize,
        const SW: usize,
        const AW: usize,
        const RW: usize,
        const QA: usize,
        const RA: usize,
        const RSW: usize,
        const RSK: usize,
    > Nic<DW, KW, BB, IW, SW, AW, RW, QA, RA, RSW, RSK>
{
    pub fn new(params: Bar0Params) -> Self {
        // Credits: each transmit queue is the responder's (every beat of it) and the
        // requester's less two tagged ACKs. Each sender sees the other's reservations one
        // cycle late; the responder reserves at most every other cycle, so at most one ACK
        // is unseen by the requester and the margin of two keeps the sum within the queue
        // whatever the two decide together (docs/ARCHITECTURE.md, "Credits"). The largest
        // packet must fit the requester's share.
        let ack = beats_of(tx_frame_len(true, AETH.len, 0), KW);
        let cap_req = (1usize << QA) - 2 * ack;
        assert!(
            beats_of(tx_frame_len(true, RETH.len + IMMDT.len, TX_MAX_PAYLOAD), KW) <= cap_req,
            "a transmit queue must hold the largest packet and an ACK"
        );
        // Where each statistic sits in BAR0's live words (`spec::regs`: MAC_STATS, RC_STATS).
        let live = |name: &str| -> Constant<Bits<16>> {
            let n =
                regs::live_index(name).unwrap_or_else(|| panic!("no statistics register {name}"));
            k((32 * n) as u64)
        };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_req_hdr: Default::default(),
            s_req_tdata: Default::default(),
            s_req_tkeep: Default::default(),
            s_req_tlast: Default::default(),
            s_req_tvalid: Default::default(),
            s_req_tready: Default::default(),
            m_cpl_hdr: Default::default(),
            m_cpl_tdata: Default::default(),
            m_cpl_tkeep: Default::default(),
            m_cpl_tlast: Default::default(),
            m_cpl_tvalid: Default::default(),
            m_cpl_tready: Default::default(),
            m_rq_hdr: Default::default(),
            m_rq_tdata: Default::default(),
            m_rq_tkeep: Default::default(),
            m_rq_tlast: Default::default(),
            m_rq_tvalid: Default::default(),
            m_rq_tready: Default::default(),
            s_rc_hdr: Default::default(),
            s_rc_tdata: Default::default(),
            s_rc_tlast: Default::default(),
            s_rc_tvalid: Default::default(),
            s_rc_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            req_bad_db: Default::default(),
            req_bad_qp: Default::default(),
            req_bad_wqe: Default::default(),
            req_dma_err: Default::default(),
            req_prot_err: Default::default(),
            req_yields: Default::default(),
            mac_tx_used: Default::default(),
            mac_tx_held: Default::default(),
            rd_bad_cpl: Default::default(),
            rd_timeouts: Default::default(),
            tx_bad_len: Default::default(),
            tx_bad_opcode: Default::default(),
            tx_self_check: Default::default(),
            rx_fcs_err: Default::default(),
            rx_runt: Default::default(),
            rx_code_err: Default::default(),
            rx_too_long: Default::default(),
            rx_not_roce: Default::default(),
            rx_frame_len_err: Default::default(),
            rx_icrc_err: Default::default(),
            rx_overflow: Default::default(),
            rx_self_check: Default::default(),
            rx_accepted: Default::default(),
            rx_unsupported: Default::default(),
            rx_bad_csum: Default::default(),
            rx_bad_mac: Default::default(),
            rx_bad_ip: Default::default(),
            rx_bad_opcode: Default::default(),
            rx_bad_len: Default::default(),
            rx_truncated: Default::default(),
            mac_paused: Default::default(),
            mac_q_ready: Default::default(),
            mac_oversize: Default::default(),
            mac_bad_frames: Default::default(),
            mac_ctrl_sent: Default::default(),
            mac_frames_sent: Default::default(),
            mac_xoff_sent: Default::default(),
            mac_xon_sent: Default::default(),
            mac_pause_rx: Default::default(),
            mac_pfc_rx: Default::default(),
            mac_paused_cycles: Default::default(),
            mac_ctrl_bad_dst: Default::default(),
            mac_ctrl_bad_opcode: Default::default(),
            mac_ctrl_bad_reserved: Default::default(),
            resp_bad_qp: Default::default(),
            resp_unsupported: Default::default(),
            resp_dup: Default::default(),
            resp_seq_err: Default::default(),
            resp_bad_req: Default::default(),
            resp_bad_rkey: Default::default(),
            resp_bad_pkey: Default::default(),
            resp_rnr: Default::default(),
            resp_sc_bad_len: Default::default(),
            rq_bad_wqe: Default::default(),
            rq_empty: Default::default(),
            req_reads: Default::default(),
            resp_reads: Default::default(),
            resp_jobs_full: Default::default(),
            resp_bad_resp: Default::default(),
            resp_atomics: Default::default(),
            resp_flushed: Default::default(),
            cpl_naks: Default::default(),
            cpl_bad_cq: Default::default(),
            cpl_cqes: Default::default(),
            cpl_timeouts: Default::default(),
            cpl_seq_naks: Default::default(),
            cpl_rnr_naks: Default::default(),
            cpl_retry_exc: Default::default(),
            req_retrans: Default::default(),
            req_cuts: Default::default(),
            req_win_stops: Default::default(),
            fail_local: Default::default(),
            req_rsp_refused: Default::default(),
            cpl_ghosts: Default::default(),
            req_pool_waits: Default::default(),
            wr_bad_len: Default::default(),
            cqe_bad_len: Default::default(),
            live_pfc_rx0: live("PFC_RX0"),
            live_xoff_tx0: live("XOFF_TX0"),
            live_xon_tx0: live("XON_TX0"),
            live_paused0: live("PAUSED0"),
            live_frames_tx0: live("FRAMES_TX0"),
            live_pause_rx: live("PAUSE_RX"),
            live_ctrl_bad_dst: live("CTRL_BAD_DST"),
            live_ctrl_bad_opcode: live("CTRL_BAD_OPCODE"),
            live_ctrl_bad_reserved: live("CTRL_BAD_RESERVED"),
            live_tx_oversize: live("TX_OVERSIZE"),
            live_tx_bad_frame: live("TX_BAD_FRAME"),
            live_rx_fcs_err: live("RX_FCS_ERR"),
            live_rx_runt: live("RX_RUNT"),
            live_rx_overflow: live("RX_OVERFLOW"),
            live_rx_code_err: live("RX_CODE_ERR"),
            live_rx_too_long: live("RX_TOO_LONG"),
            live_retrans: live("RETRANS"),
            live_timeouts: live("TIMEOUTS"),
            live_seq_nak_rx: live("SEQ_NAK_RX"),
            live_seq_nak_tx: live("SEQ_NAK_TX"),
            live_rnr_nak_rx: live("RNR_NAK_RX"),
            live_rnr_nak_tx: live("RNR_NAK_TX"),
            live_dup_rx: live("DUP_RX"),
            live_retry_exc: live("RETRY_EXC"),
            live_ghost_rx: live("GHOST_RX"),
            live_local_fail: live("LOCAL_FAIL"),
            live_rsp_refused: live("RSP_REFUSED"),
            live_jobs_full: live("JOBS_FULL"),
            live_key_refused: live("KEY_REFUSED"),
            live_pool_wait: live("POOL_WAIT"),
            bar0: Bar0::new(params),
            cap_req: k(cap_req as u64),
            cap_resp: k(1 << QA),
            req: Requester::new(),
            rd: DmaRead::new(),
            rds: RdShare::new(),
            rq: RecvQueue::new(),
            arb: TxArb::new(),
            tx: TxFrame::new(),
            rx: RxFrame::new(),
            resp: Responder::new(),
            cpl: Completer::new(timer_unit_cycles(params.clock_khz)),
            fail: QpFail::new(),
            wr_resp: DmaWrite::new(),
            wr_cpl: DmaWrite::new(),
            wr_mux: RqMux::new(),
            rq_mux: RqMux::new(),
        }
    }
}

impl<
        const DW: usize,
        const KW: usize,
        const BB: usize,
        const IW: usize,
        const SW: usize,
        const AW: usize,
        const RW: usize,
        const QA: usize,
        const RA: usize,
        const RSW: usize,
        const RSK: usize,
    > Logic for Nic<DW, KW, BB, IW, SW, AW, RW, QA, RA, RSW, RSK>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.bar0.clk.next = self.clk.val();
        self.bar0.rst.next = self.rst.val();
        self.req.clk.next = self.clk.val();
        self.req.rst.next = self.rst.val();
        self.rd.clk.next = self.clk.val();
        self.rd.rst.next = self.rst.val();
        self.rds.clk.next = self.clk.val();
        self.rds.rst.next = self.rst.val();
        self.rq.clk.next = self.clk.val();
        self.rq.rst.next = self.rst.val();
        self.arb.clk.next = self.clk.val();
        self.arb.rst.next = self.rst.val();
        self.tx.clk.next = self.clk.val();
        self.tx.rst.next = self.rst.val();
        self.rx.clk.next = self.clk.val();
        self.rx.rst.next = self.rst.val();
        self.resp.clk.next = self.clk.val();
        self.resp.rst.next = self.rst.val();
        self.cpl.clk.next = self.clk.val();
        self.cpl.rst.next = self.rst.val();
        self.wr_resp.clk.next = self.clk.val();
        self.wr_resp.rst.next = self.rst.val();
        self.wr_cpl.clk.next = self.clk.val();
        self.wr_cpl.rst.next = self.rst.val();
        self.wr_mux.clk.next = self.clk.val();
        self.wr_mux.rst.next = self.rst.val();
        self.rq_mux.clk.next = self.clk.val();
        self.rq_mux.rst.next = self.rst.val();
        // BAR0.
        self.bar0.s_req_hdr.next = self.s_req_hdr.val();
        self.bar0.s_req_tdata.next = self.s_req_tdata.val();
        self.bar0.s_req_tkeep.next = self.s_req_tkeep.val();
        self.bar0.s_req_tlast.next = self.s_req_tlast.val();
        self.bar0.s_req_tvalid.next = self.s_req_tvalid.val();
        self.s_req_tready.next = self.bar0.s_req_tready.val();
        self.m_cpl_hdr.next = self.bar0.m_cpl_hdr.val();
        self.m_cpl_tdata.next = self.bar0.m_cpl_tdata.val();
        self.m_cpl_tkeep.next = self.bar0.m_cpl_tkeep.val();
        self.m_cpl_tlast.next = self.bar0.m_cpl_tlast.val();
        self.m_cpl_tvalid.next = self.bar0.m_cpl_tvalid.val();
        self.bar0.m_cpl_tready.next = self.m_cpl_tready.val();
        // Doorbells, table write-throughs and the port addresses to the engines.
        self.req.s_db_qpn.next = self.bar0.m_db_qpn.val();
        self.req.s_db_pi.next = self.bar0.m_db_pi.val();
        self.req.s_db_tvalid.next = self.bar0.m_db_tvalid.val();
        self.bar0.m_db_tready.next = self.req.s_db_tready.val();
        self.req.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.req.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.req.s_qpw_data.next = self.bar0.m_qpw_data.val().get_bits::<512>(0);
        self.resp.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.resp.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.resp.s_qpw_data.next = self.bar0.m_qpw_data.val();
        self.cpl.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.cpl.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.cpl.s_qpw_data.next = self.bar0.m_qpw_data.val();
        // The receive queues take the whole QP context (their fields lie past bit 512), the
        // receive doorbells, the MR table, and answer the responder's WQE requests.
        self.rq.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.rq.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.rq.s_qpw_data.next = self.bar0.m_qpw_data.val();
        self.rq.s_rdb_en.next = self.bar0.m_rdb_en.val();
        self.rq.s_rdb_qpn.next = self.bar0.m_rdb_qpn.val();
        self.rq.s_rdb_pi.next = self.bar0.m_rdb_pi.val();
        self.resp.s_rdb_en.next = self.bar0.m_rdb_en.val();
        self.resp.s_rdb_qpn.next = self.bar0.m_rdb_qpn.val();
        self.rq.s_mrw_en.next = self.bar0.m_mrw_en.val();
        self.rq.s_mrw_index.next = self.bar0.m_mrw_index.val();
        self.rq.s_mrw_data.next = self.bar0.m_mrw_data.val();
        self.rq.s_peek_index.next = self.bar0.m_peek_index.val();
        self.bar0.s_peek_rci.next = self.rq.m_peek_ci.val();
        self.rq.s_req_valid.next = self.resp.m_rq_req_valid.val();
        self.rq.s_req_qpn.next = self.resp.m_rq_req_qpn.val();
        self.rq.s_req_sq.next = self.resp.m_rq_req_sq.val();
        self.rq.s_req_idx.next = self.resp.m_rq_req_idx.val();
        self.rq.s_req_at.next = self.resp.m_rq_req_at.val();
        self.rq.s_req_addr.next = self.resp.m_rq_req_addr.val();
        self.resp.s_rq_ans_data.next = self.rq.m_ans_data.val();
        // An atomic's read waits until the responder's writes are ahead of it: out of its
        // engine and past the write mux (the request mux keeps them in order from there).
        self.resp.wr_ordered.next = self.wr_resp.idle.val() & !self.wr_mux.m_rq_tvalid.val();
        // A region's table entry written: BAR0 ends the command once the responder has taken
        // no packet since and every write of those before has left the NIC's request port.
        self.resp.s_hold.next = self.bar0.m_fence_req.val();
        self.bar0.s_fence_done.next = self.resp.m_held.val()
            & self.req.m_quiet.val()
            & self.wr_resp.idle.val()
            & !self.wr_mux.m_rq_tvalid.val()
            & !self.rq_mux.m_rq_tvalid.val();
        // RDMA READ: jobs from the responder to the requester, the requester's word that a
        // job's last record has gone, its READ slots; READ landings to the completer and
        // their counts back to the requester.
        self.req.s_rj_tdata.next = self.resp.m_rj_tdata.val();
        self.req.s_rj_tvalid.next = self.resp.m_rj_tvalid.val();
        self.resp.m_rj_tready.next = self.req.s_rj_tready.val();
        self.req.s_dup_valid.next = self.resp.m_dup_valid.val();
        self.req.s_dup_qpn.next = self.resp.m_dup_qpn.val();
        self.req.s_dup_psn.next = self.resp.m_dup_psn.val();
        self.resp.s_rdone_valid.next = self.req.m_rdone_valid.val();
        self.resp.s_rdone_qpn.next = self.req.m_rdone_qpn.val();
        self.resp.s_rdone_seq.next = self.req.m_rdone_seq.val();
        self.resp.s_rslot_en.next = self.req.m_rslot_en.val();
        self.resp.s_rslot_addr.next = self.req.m_rslot_addr.val();
        self.resp.s_rslot_data.next = self.req.m_rslot_data.val();
        self.req.s_rl_valid.next = self.resp.m_rl_valid.val();
        self.req.s_rl_qpn.next = self.resp.m_rl_qpn.val();
        self.req.s_rl_cnt.next = self.resp.m_rl_cnt.val();
        self.req.s_rlc_valid.next = self.resp.m_rlc_valid.val();
        self.req.s_rlc_qpn.next = self.resp.m_rlc_qpn.val();
        self.req.s_rlc_cnt.next = self.resp.m_rlc_cnt.val();
        self.req.s_ret_valid.next = self.cpl.m_ret_valid.val();
        self.req.s_ret_qpn.next = self.cpl.m_ret_qpn.val();
        self.req.s_ret_count.next = self.cpl.m_ret_count.val();
        self.req.s_ret_shared.next = self.cpl.m_ret_shared.val();
        // Retries: the completer's rewinds to the requester.
        self.req.s_rew_valid.next = self.cpl.m_rew_valid.val();
        self.cpl.m_rew_ready.next = self.req.s_rew_ready.val();
        self.req.s_rew_qpn.next = self.cpl.m_rew_qpn.val();
        self.req.s_rew_ci.next = self.cpl.m_rew_ci.val();
        self.req.s_rew_psn.next = self.cpl.m_rew_psn.val();
        self.req.s_rew_pkts.next = self.cpl.m_rew_pkts.val();
        self.req.s_una_en.next = self.cpl.m_una_en.val();
        self.req.s_una_qpn.next = self.cpl.m_una_qpn.val();
        self.req.s_una_psn.next = self.cpl.m_una_psn.val();
        self.resp.s_rpk_qpn.next = self.cpl.m_rpk_qpn.val();
        self.cpl.s_rpk_data.next = self.resp.m_rpk_data.val();
        self.resp.s_rpk_clr.next = self.cpl.m_rpk_clr.val();
        self.cpl.s_rland_tdata.next = self.resp.m_rland_tdata.val();
        self.cpl.s_rland_tvalid.next = self.resp.m_rland_tvalid.val();
        self.resp.m_rland_tready.next = self.cpl.s_rland_tready.val();
        self.resp.m_rq_req_ready.next = self.rq.s_req_ready.val();
        self.resp.s_rq_ans_valid.next = self.rq.m_ans_valid.val();
        self.rq.m_ans_ready.next = self.resp.s_rq_ans_ready.val();
        self.resp.s_rq_ans_status.next = self.rq.m_ans_status.val();
        self.resp.s_rq_ans_wrid.next = self.rq.m_ans_wrid.val();
        self.resp.s_rq_ans_nsge.next = self.rq.m_ans_nsge.val();
        self.resp.s_rq_ans_sges.next = self.rq.m_ans_sges.val();
        self.resp.s_rq_ans_len.next = self.rq.m_ans_len.val();
        self.resp.s_rq_ans_cqn.next = self.rq.m_ans_cqn.val();
        // Receive completions: the responder releases each once its writes have left.
        self.cpl.s_rcv_tdata.next = self.resp.m_rcv_tdata.val();
        self.cpl.s_rcv_tvalid.next = self.resp.m_rcv_tvalid.val();
        self.resp.m_rcv_tready.next = self.cpl.s_rcv_tready.val();
        self.resp.wr_idle.next = self.wr_resp.idle.val();
        self.resp.s_mrw_en.next = self.bar0.m_mrw_en.val();
        self.resp.s_mr_gen.next = self.bar0.m_mr_gen.val();
        // QUERY: the engines' running state of the QP BAR0's command names.
        self.req.s_peek_index.next = self.bar0.m_peek_index.val();
        self.resp.s_peek_index.next = self.bar0.m_peek_index.val();
        self.cpl.s_peek_index.next = self.bar0.m_peek_index.val();
        self.bar0.s_peek_sq.next = self.req.m_peek_sq.val();
        self.bar0.s_peek_rq.next = self.resp.m_peek_rq.val();
        self.bar0.s_peek_cpl.next = self.cpl.m_peek_cpl.val();
        // A QP a fatal NAK failed: the requester stops sending for it.
        // One ERR for the whole QP: each engine's reports to `QpFail`, its bits to all.
        self.fail.clk.next = self.clk.val();
        self.fail.rst.next = self.rst.val();
        self.fail.s_req_valid.next = self.req.m_fail_valid.val();
        self.fail.s_req_qpn.next = self.req.m_fail_qpn.val();
        self.fail.s_req_local.next = self.req.m_fail_local.val();
        self.fail.s_cpl_valid.next = self.cpl.m_qerr_valid.val();
        self.fail.s_cpl_qpn.next = self.cpl.m_qerr_qpn.val();
        self.fail.s_resp_valid.next = self.resp.m_qerr_valid.val();
        self.fail.s_resp_qpn.next = self.resp.m_qerr_qpn.val();
        self.fail.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.fail.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.fail.s_qpw_data.next = self.bar0.m_qpw_data.val();
        self.req.s_failed.next = self.fail.failed.val();
        self.cpl.s_failed.next = self.fail.failed.val();
        self.resp.s_failed.next = self.fail.failed.val();
        self.cpl.s_fail_valid.next = self.fail.m_cpl_valid.val();
        self.cpl.s_fail_qpn.next = self.fail.m_cpl_qpn.val();
        // A packet whose payload read failed fails its QP: a request's at the completer, a
        // READ response's at the responder (its NAK).
        self.cpl.s_pfail_valid.next = self.req.m_pfail_valid.val();
        self.req.m_pfail_ready.next = self.cpl.s_pfail_ready.val();
        self.cpl.s_pfail_qpn.next = self.req.m_pfail_qpn.val();
        self.cpl.s_pfail_psn.next = self.req.m_pfail_psn.val();
        self.cpl.s_pfail_epoch.next = self.req.m_pfail_epoch.val();
        self.resp.s_rfail_valid.next = self.req.m_rfail_valid.val();
        self.req.m_rfail_ready.next = self.resp.s_rfail_ready.val();
        self.resp.s_rfail_qpn.next = self.req.m_rfail_qpn.val();
        self.resp.s_rfail_psn.next = self.req.m_rfail_psn.val();
        self.resp.s_rfail_epoch.next = self.req.m_rfail_epoch.val();
        self.fail.m_cpl_ready.next = self.cpl.s_fail_ready.val();
        self.resp.s_fail_valid.next = self.fail.m_resp_valid.val();
        self.resp.s_fail_qpn.next = self.fail.m_resp_qpn.val();
        self.fail.m_resp_ready.next = self.resp.s_fail_ready.val();
        self.req.s_mrw_en.next = self.bar0.m_mrw_en.val();
        self.req.s_mr_gen.next = self.bar0.m_mr_gen.val();
        self.req.s_mrw_index.next = self.bar0.m_mrw_index.val();
        self.req.s_mrw_data.next = self.bar0.m_mrw_data.val();
        self.resp.s_mrw_index.next = self.bar0.m_mrw_index.val();
        self.resp.s_mrw_data.next = self.bar0.m_mrw_data.val();
        self.cpl.s_cqw_en.next = self.bar0.m_cqw_en.val();
        self.cpl.s_cqw_index.next = self.bar0.m_cqw_index.val();
        self.cpl.s_cqw_data.next = self.bar0.m_cqw_data.val();
        self.req.local_mac.next = self.bar0.local_mac.val();
        self.req.local_ipv4.next = self.bar0.local_ipv4.val();
        self.resp.local_mac.next = self.bar0.local_mac.val();
        self.resp.local_ipv4.next = self.bar0.local_ipv4.val();
        self.rx.local_mac.next = self.bar0.local_mac.val();
        self.rx.local_ip.next = self.bar0.local_ipv4.val();
        // Send: DMA reads for the requester (A) and the receive queues (B) share the one
        // read engine; the requester's packets and the ACKs to the TX path.
        self.rds.s_a_addr.next = self.req.m_rd_addr.val();
        self.rds.s_a_len.next = self.req.m_rd_len.val();
        self.rds.s_a_tvalid.next = self.req.m_rd_tvalid.val();
        self.req.m_rd_tready.next = self.rds.s_a_tready.val();
        self.rds.s_b_addr.next = self.rq.m_rd_addr.val();
        self.rds.s_b_len.next = self.rq.m_rd_len.val();
        self.rds.s_b_tvalid.next = self.rq.m_rd_tvalid.val();
        self.rq.m_rd_tready.next = self.rds.s_b_tready.val();
        self.rd.s_cmd_addr.next = self.rds.m_cmd_addr.val();
        self.rd.s_cmd_len.next = self.rds.m_cmd_len.val();
        self.rd.s_cmd_tvalid.next = self.rds.m_cmd_tvalid.val();
        self.rds.m_cmd_tready.next = self.rd.s_cmd_tready.val();
        self.rds.s_tdata.next = self.rd.m_data_tdata.val();
        self.rds.s_tkeep.next = self.rd.m_data_tkeep.val();
        self.rds.s_tlast.next = self.rd.m_data_tlast.val();
        self.rds.s_tuser.next = self.rd.m_data_tuser.val();
        self.rds.s_tvalid.next = self.rd.m_data_tvalid.val();
        self.rd.m_data_tready.next = self.rds.s_tready.val();
        self.req.s_rd_tdata.next = self.rds.m_a_tdata.val();
        self.req.s_rd_tkeep.next = self.rds.m_a_tkeep.val();
        self.req.s_rd_tlast.next = self.rds.m_a_tlast.val();
        self.req.s_rd_tuser.next = self.rds.m_a_tuser.val();
        self.req.s_rd_tvalid.next = self.rds.m_a_tvalid.val();
        self.rds.m_a_tready.next = self.req.s_rd_tready.val();
        self.rq.s_rd_tdata.next = self.rds.m_b_tdata.val();
        self.rq.s_rd_tlast.next = self.rds.m_b_tlast.val();
        self.rq.s_rd_tuser.next = self.rds.m_b_tuser.val();
        self.rq.s_rd_tvalid.next = self.rds.m_b_tvalid.val();
        self.rds.m_b_tready.next = self.rq.s_rd_tready.val();
        self.arb.s_a_meta_tdata.next = self.req.m_meta_tdata.val();
        self.arb.s_a_meta_tvalid.next = self.req.m_meta_tvalid.val();
        self.req.m_meta_tready.next = self.arb.s_a_meta_tready.val();
        self.resp.s_req_sent.next = self.req.m_meta_tvalid.val() & self.arb.s_a_meta_tready.val();
        self.arb.s_a_pay_tdata.next = self.req.m_pay_tdata.val();
        self.arb.s_a_pay_tkeep.next = self.req.m_pay_tkeep.val();
        self.arb.s_a_pay_tlast.next = self.req.m_pay_tlast.val();
        self.arb.s_a_pay_tuser.next = self.req.m_pay_tuser.val();
        self.arb.s_a_pay_tvalid.next = self.req.m_pay_tvalid.val();
        self.req.m_pay_tready.next = self.arb.s_a_pay_tready.val();
        self.arb.s_b_meta_tdata.next = self.resp.m_ack_tdata.val();
        self.arb.s_b_meta_tvalid.next = self.resp.m_ack_tvalid.val();
        self.resp.m_ack_tready.next = self.arb.s_b_meta_tready.val();
        self.tx.s_meta_tdata.next = self.arb.m_meta_tdata.val();
        self.tx.s_meta_tvalid.next = self.arb.m_meta_tvalid.val();
        self.arb.m_meta_tready.next = self.tx.s_meta_tready.val();
        self.tx.s_pay_tdata.next = self.arb.m_pay_tdata.val();
        self.tx.s_pay_tkeep.next = self.arb.m_pay_tkeep.val();
        self.tx.s_pay_tlast.next = self.arb.m_pay_tlast.val();
        self.tx.s_pay_tuser.next = self.arb.m_pay_tuser.val();
        self.tx.s_pay_tvalid.next = self.arb.m_pay_tvalid.val();
        self.arb.m_pay_tready.next = self.tx.s_pay_tready.val();
        self.m_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.tx.m_axis_tready.next = self.m_axis_tready.val();
        // Receive: the wire to the responder, its writes; ACKs and SENT to the completer.
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.resp.s_meta_tdata.next = self.rx.m_meta_tdata.val();
        self.resp.s_meta_tvalid.next = self.rx.m_meta_tvalid.val();
        self.rx.m_meta_tready.next = self.resp.s_meta_tready.val();
        self.resp.s_pay_tdata.next = self.rx.m_axis_tdata.val();
        self.resp.s_pay_tkeep.next = self.rx.m_axis_tkeep.val();
        self.resp.s_pay_tlast.next = self.rx.m_axis_tlast.val();
        self.resp.s_pay_tvalid.next = self.rx.m_axis_tvalid.val();
        self.rx.m_axis_tready.next = self.resp.s_pay_tready.val();
        self.wr_resp.s_cmd_addr.next = self.resp.m_wr_addr.val();
        self.wr_resp.s_cmd_len.next = self.resp.m_wr_len.val();
        self.wr_resp.s_cmd_tvalid.next = self.resp.m_wr_tvalid.val();
        self.resp.m_wr_tready.next = self.wr_resp.s_cmd_tready.val();
        self.wr_resp.s_data_tdata.next = self.resp.m_wd_tdata.val();
        self.wr_resp.s_data_tlast.next = self.resp.m_wd_tlast.val();
        self.wr_resp.s_data_tvalid.next = self.resp.m_wd_tvalid.val();
        self.resp.m_wd_tready.next = self.wr_resp.s_data_tready.val();
        self.cpl.s_rack_tdata.next = self.resp.m_rack_tdata.val();
        self.cpl.s_rack_tvalid.next = self.resp.m_rack_tvalid.val();
        self.resp.m_rack_tready.next = self.cpl.s_rack_tready.val();
        self.cpl.s_sent_tdata.next = self.req.m_sent_tdata.val();
        self.cpl.s_sent_tvalid.next = self.req.m_sent_tvalid.val();
        self.req.m_sent_tready.next = self.cpl.s_sent_tready.val();
        self.wr_cpl.s_cmd_addr.next = self.cpl.m_wr_addr.val();
        self.wr_cpl.s_cmd_len.next = self.cpl.m_wr_len.val();
        self.wr_cpl.s_cmd_tvalid.next = self.cpl.m_wr_tvalid.val();
        self.cpl.m_wr_tready.next = self.wr_cpl.s_cmd_tready.val();
        self.wr_cpl.s_data_tdata.next = self.cpl.m_wd_tdata.val();
        self.wr_cpl.s_data_tlast.next = self.cpl.m_wd_tlast.val();
        self.wr_cpl.s_data_tvalid.next = self.cpl.m_wd_tvalid.val();
        self.cpl.m_wd_tready.next = self.wr_cpl.s_data_tready.val();
        // Memory requests: the two write engines, then reads and writes.
        self.wr_mux.s_a_hdr.next = self.wr_resp.m_rq_hdr.val();
        self.wr_mux.s_a_tdata.next = self.wr_resp.m_rq_tdata.val();
        self.wr_mux.s_a_tkeep.next = self.wr_resp.m_rq_tkeep.val();
        self.wr_mux.s_a_tlast.next = self.wr_resp.m_rq_tlast.val();
        self.wr_mux.s_a_tvalid.next = self.wr_resp.m_rq_tvalid.val();
        self.wr_resp.m_rq_tready.next = self.wr_mux.s_a_tready.val();
        self.wr_mux.s_b_hdr.next = self.wr_cpl.m_rq_hdr.val();
        self.wr_mux.s_b_tdata.next = self.wr_cpl.m_rq_tdata.val();
        self.wr_mux.s_b_tkeep.next = self.wr_cpl.m_rq_tkeep.val();
        self.wr_mux.s_b_tlast.next = self.wr_cpl.m_rq_tlast.val();
        self.wr_mux.s_b_tvalid.next = self.wr_cpl.m_rq_tvalid.val();
        self.wr_cpl.m_rq_tready.next = self.wr_mux.s_b_tready.val();
        self.rq_mux.s_a_hdr.next = self.rd.m_rq_hdr.val();
        self.rq_mux.s_a_tdata.next = self.rd.m_rq_tdata.val();
        self.rq_mux.s_a_tkeep.next = self.rd.m_rq_tkeep.val();
        self.rq_mux.s_a_tlast.next = self.rd.m_rq_tlast.val();
        self.rq_mux.s_a_tvalid.next = self.rd.m_rq_tvalid.val();
        self.rd.m_rq_tready.next = self.rq_mux.s_a_tready.val();
        self.rq_mux.s_b_hdr.next = self.wr_mux.m_rq_hdr.val();
        self.rq_mux.s_b_tdata.next = self.wr_mux.m_rq_tdata.val();
        self.rq_mux.s_b_tkeep.next = self.wr_mux.m_rq_tkeep.val();
        self.rq_mux.s_b_tlast.next = self.wr_mux.m_rq_tlast.val();
        self.rq_mux.s_b_tvalid.next = self.wr_mux.m_rq_tvalid.val();
        self.wr_mux.m_rq_tready.next = self.rq_mux.s_b_tready.val();
        self.m_rq_hdr.next = self.rq_mux.m_rq_hdr.val();
        self.m_rq_tdata.next = self.rq_mux.m_rq_tdata.val();
        self.m_rq_tkeep.next = self.rq_mux.m_rq_tkeep.val();
        self.m_rq_tlast.next = self.rq_mux.m_rq_tlast.val();
        self.m_rq_tvalid.next = self.rq_mux.m_rq_tvalid.val();
        self.rq_mux.m_rq_tready.next = self.m_rq_tready.val();
        self.rd.s_rc_hdr.next = self.s_rc_hdr.val();
        self.rd.s_rc_tdata.next = self.s_rc_tdata.val();
        self.rd.s_rc_tlast.next = self.s_rc_tlast.val();
        self.rd.s_rc_tvalid.next = self.s_rc_tvalid.val();
        self.s_rc_tready.next = self.rd.s_rc_tready.val();
        // Counters.
        self.req_bad_db.next = self.req.bad_db.val();
        self.req_bad_qp.next = self.req.bad_qp.val();
        self.req_bad_wqe.next = self.req.bad_wqe.val();
        self.req_dma_err.next = self.req.dma_err.val();
        self.req_prot_err.next = self.req.prot_err.val();
        self.req_yields.next = self.req.yields.val();
        self.mac_tx_used.next = self.tx.used.val();
        self.mac_tx_held.next = self.tx.held.val();
        self.req.tx_used.next = self.tx.used.val();
        self.req.tx_cap.next = self.cap_req.val();
        self.tx.rsv_a.next = self.req.m_rsv.val();
        self.resp.tx_used.next = self.tx.used.val();
        self.resp.tx_cap.next = self.cap_resp.val();
        self.tx.rsv_b.next = self.resp.m_rsv.val();
        self.rd_bad_cpl.next = self.rd.bad_cpl.val();
        self.rd_timeouts.next = self.rd.timeouts.val();
        self.tx_bad_len.next = self.tx.bad_len.val();
        self.tx_bad_opcode.next = self.tx.bad_opcode.val();
        self.tx_self_check.next = self.tx.self_check.val();
        self.rx_fcs_err.next = self.rx.fcs_err.val();
        self.rx_runt.next = self.rx.runt.val();
        self.rx_code_err.next = self.rx.code_err.val();
        self.rx_too_long.next = self.rx.too_long.val();
        self.rx_not_roce.next = self.rx.not_roce.val();
        self.rx_frame_len_err.next = self.rx.frame_len_err.val();
        self.rx_icrc_err.next = self.rx.icrc_err.val();
        self.rx_overflow.next = self.rx.overflow.val();
        self.rx_self_check.next = self.rx.self_check.val();
        self.rx_accepted.next = self.rx.accepted.val();
        self.rx_unsupported.next = self.rx.unsupported.val();
        self.rx_bad_csum.next = self.rx.bad_csum.val();
        self.rx_bad_mac.next = self.rx.bad_mac.val();
        self.rx_bad_ip.next = self.rx.bad_ip.val();
        self.rx_bad_opcode.next = self.rx.bad_opcode.val();
        self.rx_bad_len.next = self.rx.bad_len.val();
        self.rx_truncated.next = self.rx.truncated.val();
        self.mac_paused.next = self.rx.paused.val();
        self.mac_q_ready.next = self.tx.q_ready.val();
        self.mac_oversize.next = self.tx.oversize.val();
        self.mac_bad_frames.next = self.tx.bad_frames.val();
        self.mac_ctrl_sent.next = self.tx.ctrl_sent.val();
        self.mac_frames_sent.next = self.tx.frames_sent.val();
        self.mac_xoff_sent.next = self.tx.xoff_sent.val();
        self.mac_xon_sent.next = self.tx.xon_sent.val();
        // Pause: what the peer's PFC/PAUSE frames asked holds our transmit queues.
        // BAR0's MAC_STATS block reads the MAC's counters live.
        self.bar0.s_live.next = (bit_cast::<LIVE_W, PRIO_COUNTERS_W>(self.rx.pfc_rx.val())
            << self.live_pfc_rx0.val())
            | (bit_cast::<LIVE_W, PRIO_COUNTERS_W>(self.tx.xoff_sent.val())
                << self.live_xoff_tx0.val())
            | (bit_cast::<LIVE_W, PRIO_COUNTERS_W>(self.tx.xon_sent.val())
                << self.live_xon_tx0.val())
            | (bit_cast::<LIVE_W, PRIO_COUNTERS_W>(self.rx.paused_cycles.val())
                << self.live_paused0.val())
            | (bit_cast::<LIVE_W, PRIO_COUNTERS_W>(self.tx.frames_sent.val())
                << self.live_frames_tx0.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.pause_rx.val()) << self.live_pause_rx.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.ctrl_bad_dst.val()) << self.live_ctrl_bad_dst.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.ctrl_bad_opcode.val())
                << self.live_ctrl_bad_opcode.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.ctrl_bad_reserved.val())
                << self.live_ctrl_bad_reserved.val())
            | (bit_cast::<LIVE_W, 32>(self.tx.oversize.val()) << self.live_tx_oversize.val())
            | (bit_cast::<LIVE_W, 32>(self.tx.bad_frames.val()) << self.live_tx_bad_frame.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.fcs_err.val()) << self.live_rx_fcs_err.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.runt.val()) << self.live_rx_runt.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.overflow.val()) << self.live_rx_overflow.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.code_err.val()) << self.live_rx_code_err.val())
            | (bit_cast::<LIVE_W, 32>(self.rx.too_long.val()) << self.live_rx_too_long.val())
            // BAR0's RC_STATS block: the transport's reliability counters.
            | (bit_cast::<LIVE_W, 32>(self.req.retrans.val()) << self.live_retrans.val())
            | (bit_cast::<LIVE_W, 32>(self.cpl.timeouts.val()) << self.live_timeouts.val())
            | (bit_cast::<LIVE_W, 32>(self.cpl.seq_naks.val()) << self.live_seq_nak_rx.val())
            | (bit_cast::<LIVE_W, 32>(self.resp.seq_naks.val()) << self.live_seq_nak_tx.val())
            | (bit_cast::<LIVE_W, 32>(self.cpl.rnr_naks.val()) << self.live_rnr_nak_rx.val())
            | (bit_cast::<LIVE_W, 32>(self.resp.rnr.val()) << self.live_rnr_nak_tx.val())
            | (bit_cast::<LIVE_W, 32>(self.resp.dup.val()) << self.live_dup_rx.val())
            | (bit_cast::<LIVE_W, 32>(self.cpl.retry_exc.val()) << self.live_retry_exc.val())
            | (bit_cast::<LIVE_W, 32>(self.cpl.ghosts.val()) << self.live_ghost_rx.val())
            | (bit_cast::<LIVE_W, 32>(self.fail.local_fails.val()) << self.live_local_fail.val())
            | (bit_cast::<LIVE_W, 32>(self.req.pool_waits.val()) << self.live_pool_wait.val())
            | (bit_cast::<LIVE_W, 32>(self.req.rsp_refused.val()) << self.live_rsp_refused.val())
            | (bit_cast::<LIVE_W, 32>(self.resp.jobs_full.val()) << self.live_jobs_full.val())
            | (bit_cast::<LIVE_W, 32>(self.resp.bad_rkey.val()) << self.live_key_refused.val());
        self.tx.paused.next = self.rx.paused.val();
        self.tx.local_mac.next = self.bar0.local_mac.val();
        // PFC: the receive buffer's watermarks decide XOFF/XON, the MAC sends the frames.
        self.rx.xoff_bytes.next = self.bar0.pfc_xoff_bytes.val();
        self.rx.xon_bytes.next = self.bar0.pfc_xon_bytes.val();
        self.tx.xoff.next = self.rx.xoff.val();
        self.tx.pfc_enable.next = self.bar0.pfc_enable.val();
        self.rx.pfc_enable.next = self.bar0.pfc_enable.val();
        self.tx.pfc_quanta.next = self.bar0.pfc_quanta.val();
        self.mac_pause_rx.next = self.rx.pause_rx.val();
        self.mac_pfc_rx.next = self.rx.pfc_rx.val();
        self.mac_paused_cycles.next = self.rx.paused_cycles.val();
        self.mac_ctrl_bad_dst.next = self.rx.ctrl_bad_dst.val();
        self.mac_ctrl_bad_opcode.next = self.rx.ctrl_bad_opcode.val();
        self.mac_ctrl_bad_reserved.next = self.rx.ctrl_bad_reserved.val();
        self.resp_bad_qp.next = self.resp.bad_qp.val();
        self.resp_unsupported.next = self.resp.unsupported.val();
        self.resp_dup.next = self.resp.dup.val();
        self.resp_seq_err.next = self.resp.seq_err.val();
        self.resp_bad_req.next = self.resp.bad_req.val();
        self.resp_bad_rkey.next = self.resp.bad_rkey.val();
        self.resp_bad_pkey.next = self.resp.bad_pkey.val();
        self.resp_rnr.next = self.resp.rnr.val();
        self.resp_sc_bad_len.next = self.resp.sc_bad_len.val();
        self.rq_bad_wqe.next = self.rq.bad_wqe.val();
        self.rq_empty.next = self.rq.empty.val();
        self.req_reads.next = self.req.reads.val();
        self.resp_reads.next = self.resp.reads.val();
        self.resp_jobs_full.next = self.resp.jobs_full.val();
        self.resp_bad_resp.next = self.resp.bad_resp.val();
        self.resp_atomics.next = self.resp.atomics.val();
        self.resp_flushed.next = self.resp.flushed.val();
        self.cpl_naks.next = self.cpl.naks.val();
        self.cpl_bad_cq.next = self.cpl.bad_cq.val();
        self.cpl_cqes.next = self.cpl.cqes.val();
        self.cpl_timeouts.next = self.cpl.timeouts.val();
        self.cpl_seq_naks.next = self.cpl.seq_naks.val();
        self.cpl_rnr_naks.next = self.cpl.rnr_naks.val();
        self.cpl_retry_exc.next = self.cpl.retry_exc.val();
        self.req_retrans.next = self.req.retrans.val();
        self.req_cuts.next = self.req.cuts.val();
        self.req_win_stops.next = self.req.win_stops.val();
        self.fail_local.next = self.fail.local_fails.val();
        self.req_rsp_refused.next = self.req.rsp_refused.val();
        self.cpl_ghosts.next = self.cpl.ghosts.val();
        self.req_pool_waits.next = self.req.pool_waits.val();
        self.cpl.s_snd_en.next = self.req.m_snd_en.val();
        self.cpl.s_snd_qpn.next = self.req.m_snd_qpn.val();
        self.cpl.s_snd_psn.next = self.req.m_snd_psn.val();
        self.cpl.s_snd_epoch.next = self.req.m_snd_epoch.val();
        self.wr_bad_len.next = self.wr_resp.bad_len.val();
        self.cqe_bad_len.next = self.wr_cpl.bad_len.val();
    }
}
