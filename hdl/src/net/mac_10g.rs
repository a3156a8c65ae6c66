//! `Mac10g`: the whole MAC of the `10g` configuration with its XGMII face: `Mac` at 64 bits
//! (16 KiB transmit queues and a 32 KiB receive buffer, as in the NIC, so 9,000-byte frames
//! fit) with `XgmiiTx` after its transmit path and `XgmiiRx` before its receive path. The
//! transport faces (`s_axis_*`, `m_axis_*`), configuration and counters are `Mac`'s; the wire
//! is `xgmii_txd`/`xgmii_txc` and `xgmii_rxd`/`xgmii_rxc` with the XGMII counters of
//! `Nic10g`. It lets the MAC be tested and synthesized at 10G without the transport.

use crate::config::ten_g;
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::net::{XgmiiRx, XgmiiTx};
use crate::prelude::*;

crate::net::xgmii_face::xgmii_face! {
    Mac10g wraps mac: ten_g::Mac,
    tx { tx_axis_tdata, tx_axis_tkeep, tx_axis_tlast, tx_axis_tvalid, tx_axis_tready }
    rx { rx_axis_tdata, rx_axis_tkeep, rx_axis_tlast, rx_axis_tvalid, rx_axis_tuser }
    ins {
        s_axis_tdata: Bits<64>,
        s_axis_tkeep: Bits<8>,
        s_axis_tlast: Bit,
        s_axis_tuser: Bit,
        s_axis_tvalid: Bit,
        m_axis_tready: Bit,
        local_mac: Bits<48>,
        pfc_enable: Bits<8>,
        pfc_quanta: Bits<16>,
        xoff_bytes: Bits<16>,
        xon_bytes: Bits<16>,
        rsv_a: Bits<RSV_W>,
        rsv_b: Bits<RSV_W>,
    }
    outs {
        s_axis_tready: Bit,
        m_axis_tdata: Bits<64>,
        m_axis_tkeep: Bits<8>,
        m_axis_tlast: Bit,
        m_axis_tvalid: Bit,
        used: Bits<USED_W>,
        q_ready: Bits<8>,
        bad_keep: Bits<32>,
        held: Bits<32>,
        oversize: Bits<32>,
        bad_frames: Bits<32>,
        ctrl_sent: Bits<32>,
        frames_sent: Bits<PRIO_COUNTERS_W>,
        xoff_sent: Bits<PRIO_COUNTERS_W>,
        xon_sent: Bits<PRIO_COUNTERS_W>,
        paused: Bits<8>,
        xoff: Bits<8>,
        fcs_err: Bits<32>,
        runt: Bits<32>,
        not_roce: Bits<32>,
        bad_len: Bits<32>,
        icrc_err: Bits<32>,
        overflow: Bits<32>,
        self_check: Bits<32>,
        code_err: Bits<32>,
        too_long: Bits<32>,
        pause_rx: Bits<32>,
        pfc_rx: Bits<PRIO_COUNTERS_W>,
        paused_cycles: Bits<PRIO_COUNTERS_W>,
        ctrl_bad_dst: Bits<32>,
        ctrl_bad_opcode: Bits<32>,
        ctrl_bad_reserved: Bits<32>,
    }
}

impl Mac10g {
    pub fn new() -> Self {
        Self::wrap(ten_g::Mac::new())
    }
}

impl Default for Mac10g {
    fn default() -> Self {
        Self::new()
    }
}
