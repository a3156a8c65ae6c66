//! Queue pairs: their states, the attributes a state change takes (`ibv_qp_attr`), and the
//! context read back from the NIC (`ibv_query_qp`).

use crate::DmaBuf;
use ferroce_spec::queues;

/// QP states (`enum ibv_qp_state`), values from `spec::queues::QP_STATES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Err,
}

impl QpState {
    pub fn code(self) -> u32 {
        match self {
            QpState::Reset => queues::QP_STATE_RESET,
            QpState::Init => queues::QP_STATE_INIT,
            QpState::Rtr => queues::QP_STATE_RTR,
            QpState::Rts => queues::QP_STATE_RTS,
            QpState::Err => queues::QP_STATE_ERR,
        }
    }

    pub fn from_code(c: u32) -> Option<QpState> {
        [
            QpState::Reset,
            QpState::Init,
            QpState::Rtr,
            QpState::Rts,
            QpState::Err,
        ]
        .into_iter()
        .find(|s| s.code() == c)
    }
}

/// Attributes for `modify_qp` (the fields of `ibv_qp_attr` this NIC uses).
#[derive(Clone, Copy, Debug, Default)]
pub struct QpAttr {
    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096 (RTR).
    pub path_mtu: Option<u32>,
    pub dest_qpn: Option<u32>,
    /// Expected PSN of incoming requests (RTR).
    pub rq_psn: Option<u32>,
    /// First PSN this QP sends (RTS).
    pub sq_psn: Option<u32>,
    pub remote_mac: Option<[u8; 6]>,
    pub remote_ipv4: Option<[u8; 4]>,
    /// Send the QP's frames, its ACKs included, with this 802.1Q tag (RTR, with the
    /// address). The PCP is the QP's priority for PFC; untagged frames are priority 0.
    /// `None` keeps the tag the QP has: a tag, once set, goes only with a move to RESET.
    pub vlan: Option<Vlan>,
    /// Local ACK timeout, 4.096 us x 2^timeout, 0..=31, 0 = none (RTR -> RTS; default
    /// `queues::QP_TIMEOUT_DEFAULT`, 14: 67 ms).
    pub timeout: Option<u8>,
    /// Retries after a timeout or a sequence NAK, 0..=7 (RTR -> RTS; default 7).
    pub retry_cnt: Option<u8>,
    /// Retries after an RNR NAK, 0..=7, 7 = without end (RTR -> RTS; default 7).
    pub rnr_retry: Option<u8>,
    /// The RNR NAK timer code this QP's responder sends, 0..=31 (IBA table 45; INIT -> RTR
    /// or RTS -> RTS; default `headers::RNR_TIMER_DEFAULT`, 1: 0.01 ms).
    pub min_rnr_timer: Option<u8>,
    /// RDMA READs and atomics outstanding at most, 1 up to what the NIC was built with
    /// (`DeviceInfo::max_rd_atomic`, the ID block's `MAX_RD_ATOMIC`: 8 in the 10g NIC;
    /// `max_rd_atomic`: no more than the peer's `max_dest_rd_atomic`; RTR -> RTS; default
    /// the NIC's).
    pub max_rd_atomic: Option<u8>,
    /// Remote access the QP allows (`qp_access_flags`: `access::REMOTE_WRITE`, `REMOTE_READ`,
    /// `REMOTE_ATOMIC`), besides each region's own rights (any move but to RESET; default all
    /// three, unlike verbs' none, so a QP set up without it takes what its regions allow).
    pub access: Option<u32>,
}

/// An 802.1Q tag: the priority (the address vector's service level, 0..=7) and the VLAN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vlan {
    pub pcp: u8,
    /// 0 ..= 4094 (0: priority tag only).
    pub vid: u16,
}

/// A reliable-connected queue pair.
#[derive(Debug)]
pub struct QueuePair {
    pub qpn: u32,
    pub state: QpState,
    pub send_cq: u32,
    pub pdn: u32,
    pub sq: DmaBuf,
    pub sq_log_size: u32,
    /// Work requests posted (the SQ producer index, wrapping at 2^16).
    pub sq_pi: u16,
    /// Work requests the driver knows have left the ring (completed).
    pub sq_done: u16,
    /// Moves to RESET so far, mod 256 (the context's `epoch`): the NIC completes no work
    /// request sent before the last one.
    pub epoch: u8,
    /// The receive queue: a ring of `2^rq_log_size` receive WQEs (as many as the send queue),
    /// its completions to CQ `recv_cq`.
    pub rq: DmaBuf,
    pub rq_log_size: u32,
    pub recv_cq: u32,
    /// Receive requests posted (the RQ producer index, wrapping at 2^16).
    pub rq_pi: u16,
    /// Receive requests retired: completed, or discarded by a move to RESET (the context's
    /// `rq_ci` on an `init_rq` write).
    pub rq_done: u16,
    pub(crate) attr: QpAttr,
}

/// A QP context read back from the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpContext {
    pub state: Option<QpState>,
    pub pmtu: u32,
    pub remote_qpn: u32,
    /// Next PSN the requester sends.
    pub sq_psn: u32,
    /// PSN the responder expects.
    pub epsn: u32,
    /// Messages the responder has completed.
    pub msn: u32,
    /// WQEs the requester has taken from the send queue.
    pub sq_ci: u16,
    /// Oldest PSN not yet acknowledged.
    pub una_psn: u32,
    pub sq_base: u64,
    /// The receive queue ring, and the receive WQEs the NIC has taken from it.
    pub rq_base: u64,
    pub rq_ci: u16,
    pub remote_mac: u64,
    pub remote_ip: u128,
    pub vlan: Option<Vlan>,
    /// Reliability: the local ACK timeout code, the retry counts, the RNR NAK timer code.
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    pub max_rd_atomic: u8,
    /// The remote rights the QP allows (`access::REMOTE_*`).
    pub access: u32,
}
