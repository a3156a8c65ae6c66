//! `Nic10g`: the `10g` NIC with its XGMII face (docs/ARCHITECTURE.md, "NIC top"): the whole
//! NIC (`Nic`, 64 bits) with `XgmiiTx` after its MAC transmit and `XgmiiRx` before its MAC
//! receive, so the port is a 64-bit XGMII at 156.25 MHz for a 10GBASE-R PCS.
//!
//! Ports: those of `Nic` but its frame faces (`m_axis_*`, `s_axis_*`), which become
//! - `xgmii_txd[63:0]`, `xgmii_txc[7:0]`: the transmit XGMII word every clock (lane i in bits
//!   8i+7..8i, its control flag in bit i; `spec::xgmii`);
//! - `xgmii_rxd[63:0]`, `xgmii_rxc[7:0]`: the receive XGMII word every clock;
//! - counters `xgmii_tx_frames`, `xgmii_tx_underrun` (a frame whose next beat did not come in
//!   time, ended with /E/: stays zero, `MacTx` ends in a `StartGate`),
//!   `xgmii_rx_frames`, `xgmii_rx_code_err` (frames the PHY layer saw broken; the MAC drops
//!   them and counts them again in `rx_code_err`).
//!
//! Wiring only: every other port passes straight through to the `Nic` inside, listed once in
//! the `xgmii_face!` invocation below.

use crate::config::ten_g;
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_queues::USED_W;
use crate::net::{XgmiiRx, XgmiiTx};
use crate::prelude::*;

crate::net::xgmii_face::xgmii_face! {
    Nic10g wraps nic: ten_g::Nic,
    tx { m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tvalid, m_axis_tready }
    rx { s_axis_tdata, s_axis_tkeep, s_axis_tlast, s_axis_tvalid, s_axis_tuser }
    ins {
        s_req_hdr: Bits<128>,
        s_req_tdata: Bits<64>,
        s_req_tkeep: Bits<8>,
        s_req_tlast: Bit,
        s_req_tvalid: Bit,
        m_cpl_tready: Bit,
        m_rq_tready: Bit,
        s_rc_hdr: Bits<128>,
        s_rc_tdata: Bits<64>,
        s_rc_tlast: Bit,
        s_rc_tvalid: Bit,
    }
    outs {
        s_req_tready: Bit,
        m_cpl_hdr: Bits<128>,
        m_cpl_tdata: Bits<64>,
        m_cpl_tkeep: Bits<8>,
        m_cpl_tlast: Bit,
        m_cpl_tvalid: Bit,
        m_rq_hdr: Bits<128>,
        m_rq_tdata: Bits<64>,
        m_rq_tkeep: Bits<8>,
        m_rq_tlast: Bit,
        m_rq_tvalid: Bit,
        s_rc_tready: Bit,
        req_bad_db: Bits<32>,
        req_bad_qp: Bits<32>,
        req_bad_wqe: Bits<32>,
        req_dma_err: Bits<32>,
        req_prot_err: Bits<32>,
        req_yields: Bits<32>,
        mac_tx_used: Bits<USED_W>,
        mac_tx_held: Bits<32>,
        rd_bad_cpl: Bits<32>,
        rd_timeouts: Bits<32>,
        tx_bad_len: Bits<32>,
        tx_bad_opcode: Bits<32>,
        tx_self_check: Bits<32>,
        rx_fcs_err: Bits<32>,
        rx_runt: Bits<32>,
        rx_code_err: Bits<32>,
        rx_too_long: Bits<32>,
        rx_not_roce: Bits<32>,
        rx_frame_len_err: Bits<32>,
        rx_icrc_err: Bits<32>,
        rx_overflow: Bits<32>,
        rx_self_check: Bits<32>,
        rx_accepted: Bits<32>,
        rx_unsupported: Bits<32>,
        rx_bad_csum: Bits<32>,
        rx_bad_mac: Bits<32>,
        rx_bad_ip: Bits<32>,
        rx_bad_opcode: Bits<32>,
        rx_bad_len: Bits<32>,
        rx_truncated: Bits<32>,
        mac_paused: Bits<8>,
        mac_q_ready: Bits<8>,
        mac_oversize: Bits<32>,
        mac_bad_frames: Bits<32>,
        mac_ctrl_sent: Bits<32>,
        mac_frames_sent: Bits<PRIO_COUNTERS_W>,
        mac_xoff_sent: Bits<PRIO_COUNTERS_W>,
        mac_xon_sent: Bits<PRIO_COUNTERS_W>,
        mac_pause_rx: Bits<32>,
        mac_pfc_rx: Bits<PRIO_COUNTERS_W>,
        mac_paused_cycles: Bits<PRIO_COUNTERS_W>,
        mac_ctrl_bad_dst: Bits<32>,
        mac_ctrl_bad_opcode: Bits<32>,
        mac_ctrl_bad_reserved: Bits<32>,
        resp_bad_qp: Bits<32>,
        resp_unsupported: Bits<32>,
        resp_dup: Bits<32>,
        resp_seq_err: Bits<32>,
        resp_bad_req: Bits<32>,
        resp_bad_rkey: Bits<32>,
        resp_bad_pkey: Bits<32>,
        resp_rnr: Bits<32>,
        resp_sc_bad_len: Bits<32>,
        rq_bad_wqe: Bits<32>,
        rq_empty: Bits<32>,
        req_reads: Bits<32>,
        resp_reads: Bits<32>,
        resp_jobs_full: Bits<32>,
        resp_bad_resp: Bits<32>,
        resp_atomics: Bits<32>,
        resp_flushed: Bits<32>,
        cpl_naks: Bits<32>,
        cpl_bad_cq: Bits<32>,
        cpl_cqes: Bits<32>,
        cpl_timeouts: Bits<32>,
        cpl_seq_naks: Bits<32>,
        cpl_rnr_naks: Bits<32>,
        cpl_retry_exc: Bits<32>,
        req_retrans: Bits<32>,
        req_cuts: Bits<32>,
        req_win_stops: Bits<32>,
        fail_local: Bits<32>,
        req_rsp_refused: Bits<32>,
        cpl_ghosts: Bits<32>,
        req_pool_waits: Bits<32>,
        wr_bad_len: Bits<32>,
        cqe_bad_len: Bits<32>,
    }
}

impl Nic10g {
    pub fn new(params: crate::host::Bar0Params) -> Self {
        Self::wrap(ten_g::Nic::new(params))
    }
}
