//! The port: PFC settings and the MAC's and RC transport's counters.

/// Priority flow control of the port (`Device::set_pfc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcConfig {
    /// Bit p: send PFC frames for priority p (received PFC and PAUSE are always obeyed).
    pub enable: u8,
    /// Pause time XOFF frames carry, in quanta of 512 bit times (refreshed at half of it).
    pub quanta: u16,
    /// XOFF when a priority's frames in the receive buffer exceed this many bytes.
    pub xoff_bytes: u32,
    /// XON when they fall below this many bytes.
    pub xon_bytes: u32,
}

/// The MAC's statistics (BAR0's MAC_STATS block, `Device::mac_stats`): 32-bit counters that
/// wrap; per priority where the array has eight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacStats {
    /// PFC frames received naming priority p (XOFF or XON).
    pub pfc_rx: [u32; 8],
    /// PFC frames sent pausing priority p (XOFF and refreshes).
    pub xoff_tx: [u32; 8],
    /// PFC frames sent resuming priority p.
    pub xon_tx: [u32; 8],
    /// Core clock cycles priority p was paused by the peer.
    pub paused_cycles: [u32; 8],
    /// Frames of priority p sent.
    pub frames_tx: [u32; 8],
    /// 802.3x PAUSE frames received.
    pub pause_rx: u32,
    /// Malformed MAC control frames dropped, by reason.
    pub ctrl_bad_dst: u32,
    pub ctrl_bad_opcode: u32,
    pub ctrl_bad_reserved: u32,
    /// Frames the transmit queues dropped as larger than a queue.
    pub tx_oversize: u32,
    /// Frames dropped on receive, by reason.
    pub rx_fcs_err: u32,
    pub rx_runt: u32,
    pub rx_overflow: u32,
    pub rx_code_err: u32,
    pub rx_too_long: u32,
    /// Frames the transmit queues dropped as marked bad: a payload's read from host memory
    /// failed, so none of the frame reached the wire.
    pub tx_bad_frame: u32,
}

/// The RC transport's reliability statistics (BAR0's RC_STATS block, `Device::rc_stats`),
/// summed over the NIC's QPs: 32-bit counters that wrap. Clean traffic leaves them all zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RcStats {
    /// Packets sent again (go-back-N after an ACK timeout, a sequence NAK or an RNR wait).
    pub retrans: u32,
    /// ACK timer expiries.
    pub timeouts: u32,
    /// NAK PSN sequence errors received.
    pub seq_nak_rx: u32,
    /// Gaps NAKed (NAK PSN sequence error, once per gap).
    pub seq_nak_tx: u32,
    /// RNR NAKs received.
    pub rnr_nak_rx: u32,
    /// RNR NAKs sent (a SEND found no receive WQE).
    pub rnr_nak_tx: u32,
    /// Duplicate requests received (ACKed again, READs served again, atomics answered again).
    pub dup_rx: u32,
    /// QPs failed because their retries ran out.
    pub retry_exc: u32,
    /// ACKs and NAKs dropped: a PSN never sent, or a NAK behind the oldest unacknowledged PSN.
    pub ghost_rx: u32,
    /// QPs failed by a local error (a WQE refused, its fetch failed).
    pub local_fail: u32,
    /// Times a QP waited for its share of the completion pool.
    pub pool_wait: u32,
    /// READ responses refused: the region of a READ being served was deregistered (or
    /// registered anew) since it was checked; a NAK remote access error went instead.
    pub rsp_refused: u32,
    /// READs and atomics received and dropped undone for want of a job (their QP's share of
    /// the READ job pool used, or the pool full); the peer sends them again.
    pub jobs_full: u32,
    /// Requests refused by the rkey check (a NAK remote access error sent): a bad key or
    /// range, or a WRITE whose region was deregistered since its first packet.
    pub key_refused: u32,
}

impl RcStats {
    /// `(name, value)` in BAR0's order, the names as the driver's fields.
    pub fn fields(&self) -> [(&'static str, u32); 14] {
        [
            ("retrans", self.retrans),
            ("timeouts", self.timeouts),
            ("seq_nak_rx", self.seq_nak_rx),
            ("seq_nak_tx", self.seq_nak_tx),
            ("rnr_nak_rx", self.rnr_nak_rx),
            ("rnr_nak_tx", self.rnr_nak_tx),
            ("dup_rx", self.dup_rx),
            ("retry_exc", self.retry_exc),
            ("ghost_rx", self.ghost_rx),
            ("local_fail", self.local_fail),
            ("pool_wait", self.pool_wait),
            ("rsp_refused", self.rsp_refused),
            ("jobs_full", self.jobs_full),
            ("key_refused", self.key_refused),
        ]
    }
}
