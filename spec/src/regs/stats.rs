//! The statistics blocks' registers (MAC_STATS, RC_STATS): live 32-bit counters, each a word
//! of the live bus BAR0 reads (`Reset::Live`).

use super::Access::*;
use super::Reset::{Live as L, Value as V};
use super::{reg, Reg};

/// Words of live values BAR0 reads (`Reset::Live`), 32 bits each: MAC_STATS' then RC_STATS'.
pub const LIVE_WORDS: usize = MAC_LIVE + RC_LIVE;
const MAC_LIVE: usize = 51;
const MAC_STATS_BASE_OFF: u32 = 0x0C;

/// The MAC's statistics: per priority, then per port, each a live 32-bit counter (wrapping).
const fn mac_stats_regs() -> [Reg; MAC_LIVE] {
    const PER_PRIO: [(&str, &str); 5] = [
        (
            "PFC_RX",
            "PFC frames received naming priority p (XOFF or XON)",
        ),
        (
            "XOFF_TX",
            "PFC frames sent pausing priority p (XOFF and its refreshes)",
        ),
        ("XON_TX", "PFC frames sent resuming priority p"),
        (
            "PAUSED",
            "core clock cycles priority p was paused by the peer",
        ),
        ("FRAMES_TX", "frames of priority p sent"),
    ];
    const NAMES: [[&str; 8]; 5] = [
        [
            "PFC_RX0", "PFC_RX1", "PFC_RX2", "PFC_RX3", "PFC_RX4", "PFC_RX5", "PFC_RX6", "PFC_RX7",
        ],
        [
            "XOFF_TX0", "XOFF_TX1", "XOFF_TX2", "XOFF_TX3", "XOFF_TX4", "XOFF_TX5", "XOFF_TX6",
            "XOFF_TX7",
        ],
        [
            "XON_TX0", "XON_TX1", "XON_TX2", "XON_TX3", "XON_TX4", "XON_TX5", "XON_TX6", "XON_TX7",
        ],
        [
            "PAUSED0", "PAUSED1", "PAUSED2", "PAUSED3", "PAUSED4", "PAUSED5", "PAUSED6", "PAUSED7",
        ],
        [
            "FRAMES_TX0",
            "FRAMES_TX1",
            "FRAMES_TX2",
            "FRAMES_TX3",
            "FRAMES_TX4",
            "FRAMES_TX5",
            "FRAMES_TX6",
            "FRAMES_TX7",
        ],
    ];
    const PORT: [(&str, &str); 11] = [
        (
            "PAUSE_RX",
            "802.3x PAUSE frames received (they pause every priority)",
        ),
        (
            "CTRL_BAD_DST",
            "MAC control frames dropped: destination not 01-80-C2-00-00-01",
        ),
        (
            "CTRL_BAD_OPCODE",
            "MAC control frames dropped: opcode neither PAUSE nor PFC",
        ),
        (
            "CTRL_BAD_RESERVED",
            "PFC frames dropped: reserved octet not zero",
        ),
        (
            "TX_OVERSIZE",
            "frames dropped by the transmit queues: larger than a queue",
        ),
        ("RX_FCS_ERR", "frames dropped on receive: FCS wrong"),
        (
            "RX_RUNT",
            "frames dropped on receive: shorter than 64 bytes",
        ),
        (
            "RX_OVERFLOW",
            "frames dropped on receive: no room in the receive buffer",
        ),
        (
            "RX_CODE_ERR",
            "frames dropped on receive: the PHY flagged a code error (XGMII /E/)",
        ),
        (
            "RX_TOO_LONG",
            "frames dropped on receive: longer than 9,022 bytes (a tagged 9,000-byte jumbo)",
        ),
        (
            "TX_BAD_FRAME",
            "frames dropped by the transmit queues: marked bad by the transport (a payload's \
             read from host memory failed), so none of their bytes reached the wire",
        ),
    ];
    let mut out = [reg("", 0, Ro, V(0), ""); MAC_LIVE];
    let mut g = 0;
    while g < 5 {
        let mut p = 0;
        while p < 8 {
            let n = g * 8 + p;
            out[n] = reg(
                NAMES[g][p],
                MAC_STATS_BASE_OFF + 4 * n as u32,
                Ro,
                L(n as u16),
                PER_PRIO[g].1,
            );
            p += 1;
        }
        g += 1;
    }
    let mut i = 0;
    while i < PORT.len() {
        let n = 40 + i;
        out[n] = reg(
            PORT[i].0,
            MAC_STATS_BASE_OFF + 4 * n as u32,
            Ro,
            L(n as u16),
            PORT[i].1,
        );
        i += 1;
    }
    out
}

pub(super) const MAC_STATS_REGS: [Reg; MAC_LIVE] = mac_stats_regs();

const RC_LIVE: usize = 14;
const RC_STATS_BASE_OFF: u32 = 0x0C;

/// The RC transport's reliability statistics, each a live 32-bit counter (wrapping).
const fn rc_stats_regs() -> [Reg; RC_LIVE] {
    const RC: [(&str, &str); RC_LIVE] = [
        (
            "RETRANS",
            "packets sent again: go-back-N after an ACK timeout, a sequence NAK or an RNR wait",
        ),
        (
            "TIMEOUTS",
            "ACK timer expiries (each a retry, or the one that fails the QP)",
        ),
        ("SEQ_NAK_RX", "NAK PSN sequence errors received"),
        (
            "SEQ_NAK_TX",
            "gaps NAKed: NAK PSN sequence error decided, once per gap (a NAK still waiting when a newer ACK of its QP comes is replaced by it)",
        ),
        ("RNR_NAK_RX", "RNR NAKs received"),
        (
            "RNR_NAK_TX",
            "RNR NAKs sent: a SEND or WRITE with immediate found no receive WQE",
        ),
        (
            "DUP_RX",
            "duplicate requests received: ACKed again, a READ served again, an atomic answered from the replay cache",
        ),
        (
            "RETRY_EXC",
            "QPs failed because retries ran out (RETRY_EXC_ERR or RNR_RETRY_EXC_ERR)",
        ),
        (
            "GHOST_RX",
            "ACKs and NAKs dropped: a PSN never sent in the QP's epoch, or a NAK behind the oldest unacknowledged PSN (stale)",
        ),
        (
            "LOCAL_FAIL",
            "QPs failed by a local error: a WQE refused (opcode, SGEs, length, keys) or its fetch failed",
        ),
        (
            "POOL_WAIT",
            "times a QP waited for its share of the completion pool (its own records out, or the shared part full)",
        ),
        (
            "RSP_REFUSED",
            "READ responses refused: the region of a READ being served, checked again after an MR table write (deregistered, or registered anew), refused it; a NAK remote access error went in the response's place and the QP failed",
        ),
        (
            "JOBS_FULL",
            "READs and atomics received and dropped undone for want of a job: their QP held its whole share of the READ job pool, or the pool stayed full; the peer sends them again",
        ),
        (
            "KEY_REFUSED",
            "requests refused by the rkey check, a NAK remote access error sent and the QP failed: a key that names no region of the QP's PD with the access asked, a range outside the region, or a WRITE MIDDLE or LAST whose region was deregistered (or registered anew) since its FIRST",
        ),
    ];
    let mut out = [reg("", 0, Ro, V(0), ""); RC_LIVE];
    let mut i = 0;
    while i < RC_LIVE {
        out[i] = reg(
            RC[i].0,
            RC_STATS_BASE_OFF + 4 * i as u32,
            Ro,
            L((MAC_LIVE + i) as u16),
            RC[i].1,
        );
        i += 1;
    }
    out
}

pub(super) const RC_STATS_REGS: [Reg; RC_LIVE] = rc_stats_regs();
