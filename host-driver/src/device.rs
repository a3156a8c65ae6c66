//! Device, completion queues and queue pairs (verbs: `ibv_open_device`, `ibv_create_cq`,
//! `ibv_create_qp`, `ibv_modify_qp`, `ibv_query_qp`).

use crate::{Bar, DmaBuf, DmaMemory, DriverError, Result};
use ferroce_spec::layout::Layout;
use ferroce_spec::queues::{self, CQE, CQE_LEN, CQ_CTX, MR_CTX, QP_CTX, WQE_LEN};
use ferroce_spec::regs::{self, Block, Param, Reset, BLOCKS};
use std::collections::{HashMap, VecDeque};

/// What the ID block says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub datapath_width: u32,
    pub clock_khz: u32,
    pub num_qps: u32,
    pub num_cqs: u32,
    pub num_mrs: u32,
    pub db_offset: u32,
    pub db_stride: u32,
}

/// An open ferroce device.
pub struct Device<B: Bar, M: DmaMemory> {
    pub bar: B,
    pub mem: M,
    pub info: DeviceInfo,
    next_qpn: u32,
    next_cqn: u32,
    next_pdn: u32,
    /// Registered memory regions by key index (`lkey >> 8`); `None` once deregistered.
    mrs: Vec<Option<MemoryRegion>>,
    mr_gen: u32,
    /// Per QP, the wr_ids posted and not yet retired by a completion, in order: a completion
    /// retires its request and every unsignaled one before it (send queues complete in order).
    sq_track: HashMap<u32, VecDeque<u64>>,
    /// Per QP, the send queue entries retired (`QueuePair::sq_done` is taken from here).
    sq_retired: HashMap<u32, u16>,
    /// Per QP, the receive queue entries retired: one per receive completion (every receive
    /// WQE the NIC takes completes, in ring order), set to the producer index by a move to
    /// RESET (`QueuePair::rq_done` is taken from here).
    rq_retired: HashMap<u32, u16>,
}

/// A protection domain (`ibv_alloc_pd`): QPs and memory regions of one PD work together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtectionDomain {
    pub pdn: u32,
}

/// Access rights of a memory region (`IBV_ACCESS_*` values, `spec::queues::ACCESS_*`).
pub mod access {
    pub use ferroce_spec::queues::{
        ACCESS_LOCAL_WRITE as LOCAL_WRITE, ACCESS_REMOTE_ATOMIC as REMOTE_ATOMIC,
        ACCESS_REMOTE_READ as REMOTE_READ, ACCESS_REMOTE_WRITE as REMOTE_WRITE,
    };
}

/// A registered memory region (`ibv_reg_mr`): a host buffer the NIC may use, named by its keys.
/// Keys are `index << 8 | tag`: a region registered again at the same index gets a new tag, so
/// a stale key is refused. The driver checks local keys when work is posted (a clear error
/// before anything is written); the NIC checks them again, and every remote key, against its
/// MR table (`spec::queues::MR_CTX`), which `reg_mr` and `dereg_mr` keep equal to the driver's
/// list, so a WQE written behind the driver's back gets LOC_PROT_ERR and no DMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRegion {
    pub pdn: u32,
    pub addr: u64,
    pub len: u64,
    pub access: u32,
    pub lkey: u32,
    pub rkey: u32,
}

impl MemoryRegion {
    /// Whether `[addr, addr + len)` lies inside the region.
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.addr + self.len)
    }
}

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

/// A completion queue: a ring of CQEs in host memory.
#[derive(Debug)]
pub struct CompletionQueue {
    pub cqn: u32,
    pub ring: DmaBuf,
    pub log_size: u32,
    /// CQEs taken by `poll_cq` (the consumer index, wrapping).
    ci: u32,
}

/// A work completion (`struct ibv_wc`, the fields this NIC fills).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkCompletion {
    pub wr_id: u64,
    /// `queues::WC_STATUS` code (`WC_SUCCESS` = 0).
    pub status: u32,
    /// `queues::WC_OPCODES` code.
    pub opcode: u32,
    pub byte_len: u32,
    pub qpn: u32,
    /// Receive completions: the immediate data of a SEND or WRITE with immediate (the ImmDt as
    /// a big-endian number), `None` without one.
    pub imm_data: Option<u32>,
    /// Receive completions: the sending QP.
    pub src_qp: u32,
}

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
    /// RDMA READs and atomics outstanding at most, 1..=16 (`max_rd_atomic`: no more than the
    /// peer's `max_dest_rd_atomic`; RTR -> RTS; default `queues::MAX_RD_ATOMIC`, 16).
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
    attr: QpAttr,
}

/// One receive work request (`struct ibv_recv_wr`): a buffer for one incoming SEND (or the
/// completion of a WRITE with immediate), the bytes written across `sg_list` in order (at
/// most `spec::queues::MAX_SGE` elements, each in a region with local write access).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sg_list: Vec<Sge>,
}

impl RecvWr {
    /// Bytes the buffer holds.
    pub fn length(&self) -> u64 {
        self.sg_list.iter().map(|s| u64::from(s.length)).sum()
    }

    /// The receive WQE image (`spec::queues::RECV_WQE`, its SGEs after the header).
    pub fn wqe(&self) -> [u8; queues::RECV_WQE_LEN] {
        let mut img = [0u8; queues::RECV_WQE_LEN];
        let w = &queues::RECV_WQE;
        put(w, &mut img, "num_sge", self.sg_list.len().min(255) as u128);
        put(w, &mut img, "wr_id", self.wr_id.into());
        put_sges(&mut img, &self.sg_list);
        img
    }
}

/// The entries of a ring of `2^log_size` with producer `pi` and `done` retired, when `asked`
/// more fit; else `QueueFull`.
fn ring_room(qpn: u32, log_size: u32, pi: u16, done: u16, asked: usize) -> Result<usize> {
    let size = 1usize << log_size;
    let free = size - usize::from(pi.wrapping_sub(done));
    if asked > free {
        return Err(DriverError::QueueFull { qpn, free, asked });
    }
    Ok(size)
}

/// `sges` into a WQE image from `WQE_SGE_AT` (at most `MAX_SGE`).
fn put_sges(img: &mut [u8], sges: &[Sge]) {
    for (i, sge) in sges.iter().take(queues::MAX_SGE).enumerate() {
        let at = queues::WQE_SGE_AT + i * queues::SGE_LEN;
        let e = &mut img[at..at + queues::SGE_LEN];
        put(&queues::SGE, e, "addr", sge.addr.into());
        put(&queues::SGE, e, "length", sge.length.into());
        put(&queues::SGE, e, "lkey", sge.lkey.into());
    }
}

/// Work request opcodes the driver posts (`enum ibv_wr_opcode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WrOpcode {
    #[default]
    RdmaWrite,
    RdmaWriteWithImm,
    Send,
    SendWithImm,
    /// RDMA READ: the peer's bytes at `remote_addr` into the local SGEs (which need
    /// LOCAL_WRITE).
    RdmaRead,
    /// Atomic compare and swap of the peer's 8 bytes at `remote_addr` (8-byte aligned): if
    /// they equal `compare_add` they become `swap`; their original value lands in the local
    /// SGEs (8 bytes, LOCAL_WRITE).
    AtomicCmpAndSwp,
    /// Atomic fetch and add: the peer's 8 bytes at `remote_addr` plus `compare_add`; their
    /// original value lands in the local SGEs (8 bytes, LOCAL_WRITE).
    AtomicFetchAndAdd,
}

impl WrOpcode {
    pub const ALL: [WrOpcode; 7] = [
        WrOpcode::RdmaWrite,
        WrOpcode::RdmaWriteWithImm,
        WrOpcode::Send,
        WrOpcode::SendWithImm,
        WrOpcode::RdmaRead,
        WrOpcode::AtomicCmpAndSwp,
        WrOpcode::AtomicFetchAndAdd,
    ];

    pub fn code(self) -> u32 {
        match self {
            WrOpcode::RdmaWrite => queues::WR_RDMA_WRITE,
            WrOpcode::RdmaWriteWithImm => queues::WR_RDMA_WRITE_WITH_IMM,
            WrOpcode::Send => queues::WR_SEND,
            WrOpcode::SendWithImm => queues::WR_SEND_WITH_IMM,
            WrOpcode::RdmaRead => queues::WR_RDMA_READ,
            WrOpcode::AtomicCmpAndSwp => queues::WR_ATOMIC_CMP_AND_SWP,
            WrOpcode::AtomicFetchAndAdd => queues::WR_ATOMIC_FETCH_AND_ADD,
        }
    }

    /// The opcode of an `ibv_wr_opcode` value, if the driver posts it.
    pub fn from_code(code: u32) -> Option<WrOpcode> {
        WrOpcode::ALL.into_iter().find(|o| o.code() == code)
    }

    /// Carries immediate data.
    pub fn has_imm(self) -> bool {
        matches!(self, WrOpcode::RdmaWriteWithImm | WrOpcode::SendWithImm)
    }

    /// A SEND (consumes a receive at the peer; no remote address).
    pub fn is_send(self) -> bool {
        matches!(self, WrOpcode::Send | WrOpcode::SendWithImm)
    }

    /// An atomic (8 bytes at the peer; the original value comes back).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd
        )
    }

    /// Its response lands in the local SGEs (a READ or an atomic): they need LOCAL_WRITE.
    pub fn writes_local(self) -> bool {
        self == WrOpcode::RdmaRead || self.is_atomic()
    }

    /// The completion opcode of this request (`spec::queues::WR_TO_WC`).
    pub fn wc_opcode(self) -> u32 {
        queues::WR_TO_WC
            .iter()
            .find(|p| p.0 == self.code())
            .map_or(u32::MAX, |p| p.1)
    }
}

/// One local buffer of a work request (`struct ibv_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Buffer address in host memory.
    pub addr: u64,
    /// Bytes (the list's sum at most 2^31).
    pub length: u32,
    /// Key of a region, in the QP's PD, that holds the buffer.
    pub lkey: u32,
}

/// One send work request (`struct ibv_send_wr`): its message is the bytes of `sg_list` in
/// order (at most `spec::queues::MAX_SGE` elements, 2^31 bytes in all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SendWr {
    pub wr_id: u64,
    pub opcode: WrOpcode,
    pub sg_list: Vec<Sge>,
    /// Target at the peer (WRITEs).
    pub remote_addr: u64,
    pub rkey: u32,
    /// Immediate data of the WITH_IMM opcodes: the ImmDt read as a big-endian number.
    pub imm_data: u32,
    /// Atomics: the compare value (CMP_AND_SWP) or the addend (FETCH_AND_ADD).
    pub compare_add: u64,
    /// Atomics: the swap value (CMP_AND_SWP).
    pub swap: u64,
    /// Ask for a completion (`IBV_SEND_SIGNALED`).
    pub signaled: bool,
    /// Set the solicited event bit on the last packet of a SEND or a WRITE with immediate
    /// (`IBV_SEND_SOLICITED`).
    pub solicited: bool,
    /// Start only once every READ and atomic posted before it on the QP has completed
    /// (`IBV_SEND_FENCE`, IBA 10.8.3.3).
    pub fence: bool,
}

impl SendWr {
    /// Bytes of the message: the SGEs' lengths added up.
    pub fn length(&self) -> u64 {
        self.sg_list.iter().map(|s| u64::from(s.length)).sum()
    }

    /// The WQE image of this work request (`spec::queues::WQE`, its SGEs after the header).
    /// SGEs past `MAX_SGE` are not written (`post_send` refuses such a request).
    pub fn wqe(&self) -> [u8; WQE_LEN] {
        let mut img = [0u8; WQE_LEN];
        let mut flags = 0;
        if self.signaled {
            flags |= queues::WQE_FLAG_SIGNALED;
        }
        if self.solicited {
            flags |= queues::WQE_FLAG_SOLICITED;
        }
        if self.fence {
            flags |= queues::WQE_FLAG_FENCE;
        }
        let w = &queues::WQE;
        put(w, &mut img, "opcode", self.opcode.code().into());
        put(w, &mut img, "flags", flags.into());
        put(w, &mut img, "num_sge", self.sg_list.len().min(255) as u128);
        put(w, &mut img, "wr_id", self.wr_id.into());
        put(w, &mut img, "imm_data", self.imm_data.into());
        put(w, &mut img, "rkey", self.rkey.into());
        put(w, &mut img, "remote_addr", self.remote_addr.into());
        put(w, &mut img, "compare_add", self.compare_add.into());
        put(w, &mut img, "swap", self.swap.into());
        put_sges(&mut img, &self.sg_list);
        img
    }
}

fn type_of(b: &Block) -> u32 {
    b.type_id
}

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Open the device behind `bar`: walk the register-block list from offset 0 and check
    /// every block this driver needs is where the spec puts it, with a version it speaks.
    pub fn open(mut bar: B, mem: M) -> Result<Self> {
        let id = &BLOCKS[0];
        let found = bar.read32(id.base + regs::TYPE)?;
        if found != id.type_id {
            return Err(DriverError::NoDevice {
                found,
                expected: id.type_id,
            });
        }
        let mut seen = Vec::new();
        let mut at = 0u32;
        loop {
            if seen.len() > 64 || seen.iter().any(|(a, _)| *a == at) && !seen.is_empty() {
                return Err(DriverError::BadBlockList(at));
            }
            let ty = bar.read32(at + regs::TYPE)?;
            let ver = bar.read32(at + regs::VERSION)?;
            seen.push((at, (ty, ver)));
            let next = bar.read32(at + regs::NEXT)?;
            if next == 0 {
                break;
            }
            at = next;
        }
        for b in BLOCKS {
            let (base, (_, ver)) = seen
                .iter()
                .find(|(_, (ty, _))| *ty == type_of(b))
                .copied()
                .ok_or(DriverError::MissingBlock {
                    name: b.name,
                    type_id: b.type_id,
                })?;
            if base != b.base {
                return Err(DriverError::BlockMoved {
                    name: b.name,
                    found: base,
                    expected: b.base,
                });
            }
            if ver >> 16 != b.version >> 16 {
                return Err(DriverError::Version {
                    name: b.name,
                    found: ver,
                    expected: b.version,
                });
            }
        }
        let param = |bar: &mut B, p: Param| -> Result<u32> {
            let r = id
                .regs
                .iter()
                .find(|r| r.reset == Reset::Param(p))
                .ok_or_else(|| DriverError::Invalid(format!("ID block lacks {}", p.name())))?;
            bar.read32(id.base + r.offset)
        };
        let info = DeviceInfo {
            datapath_width: param(&mut bar, Param::DatapathWidth)?,
            clock_khz: param(&mut bar, Param::ClockKhz)?,
            num_qps: param(&mut bar, Param::NumQps)?,
            num_cqs: param(&mut bar, Param::NumCqs)?,
            num_mrs: param(&mut bar, Param::NumMrs)?,
            db_offset: bar.read32(regs::addr("ID", "DB_OFFSET"))?,
            db_stride: bar.read32(regs::addr("ID", "DB_STRIDE"))?,
        };
        Ok(Device {
            bar,
            mem,
            info,
            // QP 0 and 1 are special in IB (SMI, GSI); data QPs start at 2.
            next_qpn: 2,
            next_cqn: 0,
            next_pdn: 0,
            sq_track: HashMap::new(),
            sq_retired: HashMap::new(),
            rq_retired: HashMap::new(),
            mrs: Vec::new(),
            mr_gen: 0,
        })
    }

    /// Run an object command: stage `image` (WRITE) or fetch it (READ).
    fn command(&mut self, op: u32, table: u32, index: u32, image: &mut [u8]) -> Result<()> {
        let words = image.len().div_ceil(4);
        let ctx0 = regs::addr("OBJECT", "CTX0");
        if op == regs::OP_WRITE {
            for w in 0..regs::CTX_WORDS {
                let mut b = [0u8; 4];
                if w < words {
                    let end = (4 * w + 4).min(image.len());
                    b[..end - 4 * w].copy_from_slice(&image[4 * w..end]);
                }
                self.bar
                    .write32(ctx0 + 4 * w as u32, u32::from_le_bytes(b))?;
            }
        }
        let mut cmd = [0u8; 4];
        let l = &regs::CMD;
        l.set(&l.field("index"), &mut cmd, index.into());
        l.set(&l.field("table"), &mut cmd, table.into());
        l.set(&l.field("op"), &mut cmd, op.into());
        self.bar
            .write32(regs::addr("OBJECT", "CMD"), u32::from_le_bytes(cmd))?;
        // The read is ordered behind the CMD write, and the NIC answers once it has finished.
        let status = self.bar.read32(regs::addr("OBJECT", "STATUS"))?;
        let err = (status >> regs::STATUS_ERR_SHIFT) & 0xFF;
        if err != regs::ERR_NONE {
            let reason = match err {
                regs::ERR_BAD_OP => "bad operation",
                regs::ERR_BAD_TABLE => "bad table",
                regs::ERR_BAD_INDEX => "index out of range",
                _ => "unknown error",
            };
            return Err(DriverError::Command {
                op,
                table,
                index,
                reason,
            });
        }
        if op == regs::OP_READ {
            for w in 0..words {
                let v = self.bar.read32(ctx0 + 4 * w as u32)?.to_le_bytes();
                let end = (4 * w + 4).min(image.len());
                image[4 * w..end].copy_from_slice(&v[..end - 4 * w]);
            }
        }
        Ok(())
    }

    /// Write a context image to the device.
    pub fn write_context(&mut self, table: u32, index: u32, image: &[u8]) -> Result<()> {
        let mut img = image.to_vec();
        self.command(regs::OP_WRITE, table, index, &mut img)
    }

    /// Read a context image back (`len` bytes).
    pub fn read_context(&mut self, table: u32, index: u32, len: usize) -> Result<Vec<u8>> {
        let mut img = vec![0u8; len];
        self.command(regs::OP_READ, table, index, &mut img)?;
        Ok(img)
    }

    /// Allocate a protection domain (`ibv_alloc_pd`).
    pub fn alloc_pd(&mut self) -> Result<ProtectionDomain> {
        let max = 1 << QP_CTX.field("pdn").width;
        if self.next_pdn + 1 >= max {
            return Err(DriverError::Exhausted {
                what: "protection domains",
                max: max - 1,
            });
        }
        self.next_pdn += 1;
        Ok(ProtectionDomain { pdn: self.next_pdn })
    }

    /// Register `[addr, addr + len)` of host memory in `pd` with `access` rights
    /// (`ibv_reg_mr`). The range must be DMA memory this driver allocated.
    pub fn reg_mr(
        &mut self,
        pd: &ProtectionDomain,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<MemoryRegion> {
        if addr.checked_add(len).is_none() {
            return Err(DriverError::Invalid(format!(
                "memory region at {addr:#x} of {len} bytes wraps"
            )));
        }
        let known = access::LOCAL_WRITE
            | access::REMOTE_WRITE
            | access::REMOTE_READ
            | access::REMOTE_ATOMIC;
        if access & !known != 0 {
            return Err(DriverError::Invalid(format!("access flags {access:#x}")));
        }
        let index = match self.mrs.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.mrs.push(None);
                self.mrs.len() - 1
            }
        };
        if index >= self.info.num_mrs as usize {
            return Err(DriverError::Exhausted {
                what: "memory regions",
                max: self.info.num_mrs,
            });
        }
        // A fresh tag per registration (1..=255: key 0 is never valid), so a key kept past
        // its region's deregistration does not name the next region at that index.
        self.mr_gen = self.mr_gen % 255 + 1;
        let key = (index as u32) << 8 | self.mr_gen;
        let mr = MemoryRegion {
            pdn: pd.pdn,
            addr,
            len,
            access,
            lkey: key,
            rkey: key,
        };
        let mut img = vec![0u8; MR_CTX.len];
        put(&MR_CTX, &mut img, "va", addr.into());
        put(&MR_CTX, &mut img, "len", len.into());
        put(&MR_CTX, &mut img, "key", key.into());
        put(&MR_CTX, &mut img, "pdn", pd.pdn.into());
        put(&MR_CTX, &mut img, "access", access.into());
        self.write_context(regs::TABLE_MR, index as u32, &img)?;
        self.mrs[index] = Some(mr);
        self.mem.region_registered(addr, len);
        Ok(mr)
    }

    /// Deregister a memory region (`ibv_dereg_mr`): its keys stop working, and once this
    /// returns the NIC writes nothing more into the region (remote packets to it are refused,
    /// those checked before have landed).
    pub fn dereg_mr(&mut self, mr: &MemoryRegion) -> Result<()> {
        let index = (mr.lkey >> 8) as usize;
        match self.mrs.get_mut(index) {
            Some(slot) if *slot == Some(*mr) => {
                *slot = None;
                // A cleared entry has no access rights: the NIC refuses the key from now on.
                // The command ends (its STATUS read returns) only once every packet checked
                // against the old entry has had its writes sent to the host, so from here on
                // the NIC writes nothing into the region.
                self.write_context(regs::TABLE_MR, index as u32, &[0u8; MR_CTX.len])?;
                self.mem.region_deregistered(mr.addr, mr.len);
                Ok(())
            }
            _ => Err(DriverError::Invalid(format!(
                "memory region with lkey {:#x} is not registered",
                mr.lkey
            ))),
        }
    }

    /// The registered region a local key names, if it covers the range and is in `pdn`.
    /// A work request's scatter/gather list: at most `MAX_SGE` elements, 2^31 bytes in all,
    /// each non-empty one inside a region of PD `pdn` its `lkey` names, with the access
    /// rights `need` (`ACCESS_*`; 0 for a buffer the NIC only reads).
    fn check_sg_list(&self, pdn: u32, wr_id: u64, sg_list: &[Sge], need: u32) -> Result<()> {
        if sg_list.len() > queues::MAX_SGE {
            return Err(DriverError::Invalid(format!(
                "wr_id {wr_id}: {} SGEs, at most {}",
                sg_list.len(),
                queues::MAX_SGE
            )));
        }
        let total: u64 = sg_list.iter().map(|s| u64::from(s.length)).sum();
        if total > u64::from(queues::MAX_MSG_LEN) {
            return Err(DriverError::Invalid(format!(
                "wr_id {wr_id}: length {total} is over 2^31"
            )));
        }
        for sge in sg_list.iter().filter(|s| s.length > 0) {
            self.check_local(pdn, sge.lkey, sge.addr, sge.length.into(), need)?;
        }
        Ok(())
    }

    fn check_local(&self, pdn: u32, lkey: u32, addr: u64, len: u64, need: u32) -> Result<()> {
        let mr = self
            .mrs
            .get((lkey >> 8) as usize)
            .copied()
            .flatten()
            .filter(|m| m.lkey == lkey);
        match mr {
            None => Err(DriverError::BadKey { lkey }),
            Some(m) if m.pdn != pdn => Err(DriverError::Invalid(format!(
                "lkey {lkey:#x} is in PD {}, the QP in PD {pdn}",
                m.pdn
            ))),
            Some(m) if !m.covers(addr, len) => Err(DriverError::OutOfRegion { lkey, addr, len }),
            Some(m) if m.access & need != need => Err(DriverError::Invalid(format!(
                "lkey {lkey:#x} lacks access {need:#x} (region has {:#x})",
                m.access
            ))),
            Some(_) => Ok(()),
        }
    }

    /// Create a completion queue of at least `depth` entries (`ibv_create_cq`).
    pub fn create_cq(&mut self, depth: u32) -> Result<CompletionQueue> {
        if self.next_cqn >= self.info.num_cqs {
            return Err(DriverError::Exhausted {
                what: "completion queues",
                max: self.info.num_cqs,
            });
        }
        let log_size = depth.max(2).next_power_of_two().trailing_zeros();
        if log_size > 16 {
            return Err(DriverError::Invalid(format!(
                "CQ depth {depth} is over 65536"
            )));
        }
        let ring = self.mem.alloc(CQE_LEN << log_size, 4096)?;
        let cqn = self.next_cqn;
        let mut img = vec![0u8; CQ_CTX.len];
        put(&CQ_CTX, &mut img, "base", ring.addr.into());
        put(&CQ_CTX, &mut img, "log_size", log_size.into());
        self.write_context(regs::TABLE_CQ, cqn, &img)?;
        self.next_cqn += 1;
        Ok(CompletionQueue {
            cqn,
            ring,
            log_size,
            ci: 0,
        })
    }

    /// Create an RC queue pair in RESET with a send queue of at least `max_send_wr` entries.
    pub fn create_qp(
        &mut self,
        pd: &ProtectionDomain,
        send_cq: &CompletionQueue,
        max_send_wr: u32,
    ) -> Result<QueuePair> {
        if self.next_qpn >= self.info.num_qps {
            return Err(DriverError::Exhausted {
                what: "queue pairs",
                max: self.info.num_qps,
            });
        }
        let sq_log_size = max_send_wr.max(2).next_power_of_two().trailing_zeros();
        if sq_log_size > 15 {
            return Err(DriverError::Invalid(format!(
                "send queue of {max_send_wr} entries is over 32768"
            )));
        }
        let sq = self.mem.alloc(WQE_LEN << sq_log_size, 4096)?;
        let rq = self.mem.alloc(queues::RECV_WQE_LEN << sq_log_size, 4096)?;
        let mut qp = QueuePair {
            qpn: self.next_qpn,
            state: QpState::Reset,
            send_cq: send_cq.cqn,
            pdn: pd.pdn,
            sq,
            sq_log_size,
            sq_pi: 0,
            sq_done: 0,
            epoch: 0,
            rq,
            rq_log_size: sq_log_size,
            recv_cq: send_cq.cqn,
            rq_pi: 0,
            rq_done: 0,
            attr: QpAttr::default(),
        };
        self.write_qp(&qp, true, true)?;
        self.sq_track.insert(qp.qpn, VecDeque::new());
        self.sq_retired.insert(qp.qpn, 0);
        self.rq_retired.insert(qp.qpn, 0);
        self.next_qpn += 1;
        qp.state = QpState::Reset;
        Ok(qp)
    }

    /// The context image of `qp`. `init_sq` / `init_rq` make the NIC take the send / receive
    /// side's running state (PSNs, indices, MSN) from it; without them the NIC keeps its own.
    fn qp_image(qp: &QueuePair, init_sq: bool, init_rq: bool) -> Vec<u8> {
        let mut img = vec![0u8; QP_CTX.len];
        let a = &qp.attr;
        put(&QP_CTX, &mut img, "state", qp.state.code().into());
        put(&QP_CTX, &mut img, "init_sq", init_sq.into());
        put(&QP_CTX, &mut img, "init_rq", init_rq.into());
        put(&QP_CTX, &mut img, "epoch", qp.epoch.into());
        put(&QP_CTX, &mut img, "sq_ci", qp.sq_pi.into());
        put(&QP_CTX, &mut img, "sq_log_size", qp.sq_log_size.into());
        put(&QP_CTX, &mut img, "sq_cqn", qp.send_cq.into());
        put(&QP_CTX, &mut img, "pdn", qp.pdn.into());
        put(&QP_CTX, &mut img, "sq_base", qp.sq.addr.into());
        put(&QP_CTX, &mut img, "rq_base", qp.rq.addr.into());
        put(&QP_CTX, &mut img, "rq_log_size", qp.rq_log_size.into());
        put(&QP_CTX, &mut img, "rq_cqn", qp.recv_cq.into());
        put(&QP_CTX, &mut img, "rq_ci", qp.rq_done.into());
        if let Some(mtu) = a.path_mtu {
            let enc = (1..=5)
                .find(|e| queues::mtu_bytes(*e) == Some(mtu))
                .unwrap_or(0);
            put(&QP_CTX, &mut img, "pmtu", enc.into());
        }
        put(
            &QP_CTX,
            &mut img,
            "remote_qpn",
            a.dest_qpn.unwrap_or(0).into(),
        );
        put(&QP_CTX, &mut img, "epsn", a.rq_psn.unwrap_or(0).into());
        put(&QP_CTX, &mut img, "sq_psn", a.sq_psn.unwrap_or(0).into());
        put(&QP_CTX, &mut img, "una_psn", a.sq_psn.unwrap_or(0).into());
        let mac = a.remote_mac.unwrap_or_default();
        put(
            &QP_CTX,
            &mut img,
            "remote_mac",
            mac.iter().fold(0u128, |acc, b| acc << 8 | u128::from(*b)),
        );
        put(
            &QP_CTX,
            &mut img,
            "remote_ip",
            u32::from_be_bytes(a.remote_ipv4.unwrap_or_default()).into(),
        );
        if let Some(v) = a.vlan {
            put(&QP_CTX, &mut img, "vlan", 1);
            put(&QP_CTX, &mut img, "pcp", v.pcp.into());
            put(&QP_CTX, &mut img, "vid", v.vid.into());
        }
        put(
            &QP_CTX,
            &mut img,
            "max_rd_atomic",
            a.max_rd_atomic
                .unwrap_or(queues::MAX_RD_ATOMIC as u8)
                .into(),
        );
        put(
            &QP_CTX,
            &mut img,
            "qp_access",
            a.access
                .unwrap_or(access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC)
                .into(),
        );
        let attrs = [
            ("timeout", a.timeout, queues::QP_TIMEOUT_DEFAULT),
            ("retry_cnt", a.retry_cnt, queues::QP_RETRY_CNT_DEFAULT),
            ("rnr_retry", a.rnr_retry, queues::QP_RNR_RETRY_DEFAULT),
            (
                "min_rnr_timer",
                a.min_rnr_timer,
                ferroce_spec::headers::RNR_TIMER_DEFAULT,
            ),
        ];
        for (name, v, default) in attrs {
            put(&QP_CTX, &mut img, name, v.unwrap_or(default).into());
        }
        img
    }

    fn write_qp(&mut self, qp: &QueuePair, init_sq: bool, init_rq: bool) -> Result<()> {
        let img = Self::qp_image(qp, init_sq, init_rq);
        self.write_context(regs::TABLE_QP, qp.qpn, &img)
    }

    /// Move a QP to `to` (`ibv_modify_qp`), checking the transition and its attributes
    /// (IBA 10.3.1: RESET -> INIT -> RTR -> RTS; any state -> RESET or ERR). The NIC's running
    /// state is set only where IBA sets it: the receive side's (`epsn` from `rq_psn`, MSN 0)
    /// at INIT -> RTR, the send side's (`sq_psn`, the ring's consumer index) at RTR -> RTS, both
    /// at RESET; any other modify (RTS -> RTS, INIT -> INIT, -> ERR) leaves it running.
    /// `rq_psn` is taken only on the way to RTR and `sq_psn` only on RTR -> RTS.
    pub fn modify_qp(&mut self, qp: &mut QueuePair, to: QpState, attr: QpAttr) -> Result<()> {
        use QpState::{Init, Reset, Rtr, Rts};
        let ok = matches!(
            (qp.state, to),
            (Reset, Init)
                | (Init, Init)
                | (Init, Rtr)
                | (Rtr, Rts)
                | (Rts, Rts)
                | (_, Reset)
                | (_, QpState::Err)
        );
        if !ok {
            return Err(DriverError::BadTransition {
                qpn: qp.qpn,
                from: qp.state,
                to,
            });
        }
        if attr.rq_psn.is_some() && !(qp.state == Init && to == Rtr) {
            return Err(DriverError::Invalid(format!(
                "QP {}: rq_psn is set on INIT -> RTR only, not {:?} -> {to:?}",
                qp.qpn, qp.state
            )));
        }
        if attr.sq_psn.is_some() && !(qp.state == Rtr && to == Rts) {
            return Err(DriverError::Invalid(format!(
                "QP {}: sq_psn is set on RTR -> RTS only, not {:?} -> {to:?}",
                qp.qpn, qp.state
            )));
        }
        let send_side = qp.state == Rtr && to == Rts;
        for (set, what, max) in [
            (attr.timeout, "timeout", 31),
            (attr.retry_cnt, "retry_cnt", 7),
            (attr.rnr_retry, "rnr_retry", 7),
        ] {
            if let Some(v) = set {
                if !send_side {
                    return Err(DriverError::Invalid(format!(
                        "QP {}: {what} is set on RTR -> RTS only, not {:?} -> {to:?}",
                        qp.qpn, qp.state
                    )));
                }
                if v > max {
                    return Err(DriverError::Invalid(format!("{what} {v} (0..={max})")));
                }
            }
        }
        if let Some(v) = attr.max_rd_atomic {
            if !send_side {
                return Err(DriverError::Invalid(format!(
                    "QP {}: max_rd_atomic is set on RTR -> RTS only, not {:?} -> {to:?}",
                    qp.qpn, qp.state
                )));
            }
            if !(1..=queues::MAX_RD_ATOMIC as u8).contains(&v) {
                return Err(DriverError::Invalid(format!(
                    "max_rd_atomic {v} (1..={})",
                    queues::MAX_RD_ATOMIC
                )));
            }
        }
        if let Some(v) = attr.access {
            let remote = access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
            if v & !remote != 0 || to == Reset {
                return Err(DriverError::Invalid(format!(
                    "QP {}: qp_access {v:#x} (remote rights only, not on a move to RESET)",
                    qp.qpn
                )));
            }
        }
        if let Some(v) = attr.min_rnr_timer {
            if !((qp.state == Init && to == Rtr) || (qp.state == Rts && to == Rts)) {
                return Err(DriverError::Invalid(format!(
                    "QP {}: min_rnr_timer is set on INIT -> RTR or RTS -> RTS, not {:?} -> {to:?}",
                    qp.qpn, qp.state
                )));
            }
            if v > 31 {
                return Err(DriverError::Invalid(format!("min_rnr_timer {v} (0..=31)")));
            }
        }
        let mut next = qp.attr;
        next.timeout = attr.timeout.or(next.timeout);
        next.retry_cnt = attr.retry_cnt.or(next.retry_cnt);
        next.rnr_retry = attr.rnr_retry.or(next.rnr_retry);
        next.min_rnr_timer = attr.min_rnr_timer.or(next.min_rnr_timer);
        next.max_rd_atomic = attr.max_rd_atomic.or(next.max_rd_atomic);
        next.access = attr.access.or(next.access);
        let merge = |a: &mut Option<u32>, b: Option<u32>| {
            if b.is_some() {
                *a = b;
            }
        };
        merge(&mut next.path_mtu, attr.path_mtu);
        merge(&mut next.dest_qpn, attr.dest_qpn);
        merge(&mut next.rq_psn, attr.rq_psn);
        merge(&mut next.sq_psn, attr.sq_psn);
        next.remote_mac = attr.remote_mac.or(next.remote_mac);
        next.remote_ipv4 = attr.remote_ipv4.or(next.remote_ipv4);
        next.vlan = attr.vlan.or(next.vlan);
        if let Some(v) = next.vlan {
            if v.pcp > 7 || v.vid > 4094 {
                return Err(DriverError::Invalid(format!(
                    "802.1Q priority {} (0..=7) or VLAN {} (0..=4094)",
                    v.pcp, v.vid
                )));
            }
        }
        let need = |present: bool, what: &'static str| {
            if present {
                Ok(())
            } else {
                Err(DriverError::MissingAttr {
                    qpn: qp.qpn,
                    attr: what,
                    to,
                })
            }
        };
        if to == Rtr {
            need(next.path_mtu.is_some(), "path_mtu")?;
            need(next.dest_qpn.is_some(), "dest_qpn")?;
            need(next.rq_psn.is_some(), "rq_psn")?;
            need(next.remote_mac.is_some(), "remote_mac")?;
            need(next.remote_ipv4.is_some(), "remote_ipv4")?;
            if let Some(m) = next.path_mtu {
                if !(1..=5).any(|e| queues::mtu_bytes(e) == Some(m)) {
                    return Err(DriverError::Invalid(format!("path MTU {m}")));
                }
            }
        }
        if to == Rts {
            need(next.sq_psn.is_some(), "sq_psn")?;
        }
        for psn in [next.rq_psn, next.sq_psn].into_iter().flatten() {
            if psn > ferroce_spec::psn::PSN_MASK {
                return Err(DriverError::Invalid(format!(
                    "PSN {psn:#x} is over 24 bits"
                )));
            }
        }
        if to == Reset {
            next = QpAttr::default();
        }
        let init_sq =
            to == Reset || (qp.state == Reset && to == Init) || (qp.state == Rtr && to == Rts);
        let init_rq = to == Reset || (qp.state == Reset && to == Init) || to == Rtr;
        let prev = (
            qp.state, qp.attr, qp.sq_pi, qp.sq_done, qp.epoch, qp.rq_done,
        );
        if to == Reset {
            // Posted receives are discarded; the ring goes on from where it is (the NIC's
            // copy of the producer index stays right).
            qp.rq_done = qp.rq_pi;
            // The ring starts again at entry 0; what was posted is gone with the QP's state,
            // and what the NIC still holds of it completes silently (a new epoch).
            (qp.sq_pi, qp.sq_done) = (0, 0);
            if qp.state != Reset {
                qp.epoch = qp.epoch.wrapping_add(1);
            }
        }
        qp.state = to;
        qp.attr = next;
        if let Err(e) = self.write_qp(qp, init_sq, init_rq) {
            (
                qp.state, qp.attr, qp.sq_pi, qp.sq_done, qp.epoch, qp.rq_done,
            ) = prev;
            return Err(e);
        }
        if to == Reset {
            self.sq_track.insert(qp.qpn, VecDeque::new());
            self.sq_retired.insert(qp.qpn, 0);
            self.rq_retired.insert(qp.qpn, qp.rq_done);
        }
        Ok(())
    }

    /// The QP's context as the NIC holds it (`ibv_query_qp`): the host's fields as last written
    /// and the NIC's running state (PSNs, send queue consumer index, MSN) as it is now.
    pub fn query_qp(&mut self, qp: &QueuePair) -> Result<QpContext> {
        let img = self.read_context(regs::TABLE_QP, qp.qpn, QP_CTX.len)?;
        let g = |name: &str| QP_CTX.get(&QP_CTX.field(name), &img);
        Ok(QpContext {
            state: QpState::from_code(g("state") as u32),
            pmtu: g("pmtu") as u32,
            remote_qpn: g("remote_qpn") as u32,
            sq_psn: g("sq_psn") as u32,
            epsn: g("epsn") as u32,
            msn: g("msn") as u32,
            sq_ci: g("sq_ci") as u16,
            una_psn: g("una_psn") as u32,
            sq_base: g("sq_base") as u64,
            rq_base: g("rq_base") as u64,
            rq_ci: g("rq_ci") as u16,
            remote_mac: g("remote_mac") as u64,
            remote_ip: g("remote_ip"),
            vlan: (g("vlan") == 1).then(|| Vlan {
                pcp: g("pcp") as u8,
                vid: g("vid") as u16,
            }),
            timeout: g("timeout") as u8,
            retry_cnt: g("retry_cnt") as u8,
            rnr_retry: g("rnr_retry") as u8,
            min_rnr_timer: g("min_rnr_timer") as u8,
            max_rd_atomic: g("max_rd_atomic") as u8,
            access: g("qp_access") as u32,
        })
    }

    /// Set the port's own MAC and IPv4 address (the source of every packet it sends).
    pub fn set_port(&mut self, mac: [u8; 6], ipv4: [u8; 4]) -> Result<()> {
        let m = mac.iter().fold(0u64, |a, b| a << 8 | u64::from(*b));
        self.bar
            .write32(regs::addr("PORT", "MAC_LO"), (m & 0xFFFF_FFFF) as u32)?;
        self.bar
            .write32(regs::addr("PORT", "MAC_HI"), (m >> 32) as u32)?;
        self.bar
            .write32(regs::addr("PORT", "IPV4"), u32::from_be_bytes(ipv4))
    }

    /// Configure priority flow control (the PFC register block): which priorities the port
    /// sends PFC frames for, the pause time they carry, and the receive buffer's watermarks.
    /// Refused: `xon_bytes` above `xoff_bytes`, a watermark past 16 bits, or `quanta` under
    /// `spec::mac_ctrl::PFC_MIN_QUANTA` (a refresh must reach the peer before its pause ends).
    pub fn set_pfc(&mut self, pfc: &PfcConfig) -> Result<()> {
        let min = ferroce_spec::mac_ctrl::PFC_MIN_QUANTA;
        if pfc.quanta < min {
            return Err(DriverError::Invalid(format!(
                "PFC pause time {} quanta: at least {min}",
                pfc.quanta
            )));
        }
        if pfc.xon_bytes > pfc.xoff_bytes || pfc.xoff_bytes > 0xFFFF {
            return Err(DriverError::Invalid(format!(
                "PFC watermarks: XON {} must not exceed XOFF {} (16 bits)",
                pfc.xon_bytes, pfc.xoff_bytes
            )));
        }
        let w = |bar: &mut B, r: &str, v: u32| bar.write32(regs::addr("PFC", r), v);
        w(&mut self.bar, "QUANTA", pfc.quanta.into())?;
        w(&mut self.bar, "XOFF_BYTES", pfc.xoff_bytes)?;
        w(&mut self.bar, "XON_BYTES", pfc.xon_bytes)?;
        w(&mut self.bar, "ENABLE", pfc.enable.into())
    }

    /// Read the MAC's statistics (PFC and pause per priority, drops by reason) from BAR0.
    pub fn mac_stats(&mut self) -> Result<MacStats> {
        let mut st = MacStats::default();
        let bar = &mut self.bar;
        let mut rd = |name: &str| bar.read32(regs::addr("MAC_STATS", name));
        for p in 0..8 {
            st.pfc_rx[p] = rd(&format!("PFC_RX{p}"))?;
            st.xoff_tx[p] = rd(&format!("XOFF_TX{p}"))?;
            st.xon_tx[p] = rd(&format!("XON_TX{p}"))?;
            st.paused_cycles[p] = rd(&format!("PAUSED{p}"))?;
            st.frames_tx[p] = rd(&format!("FRAMES_TX{p}"))?;
        }
        st.pause_rx = rd("PAUSE_RX")?;
        st.ctrl_bad_dst = rd("CTRL_BAD_DST")?;
        st.ctrl_bad_opcode = rd("CTRL_BAD_OPCODE")?;
        st.ctrl_bad_reserved = rd("CTRL_BAD_RESERVED")?;
        st.tx_oversize = rd("TX_OVERSIZE")?;
        st.rx_fcs_err = rd("RX_FCS_ERR")?;
        st.rx_runt = rd("RX_RUNT")?;
        st.rx_overflow = rd("RX_OVERFLOW")?;
        st.rx_code_err = rd("RX_CODE_ERR")?;
        st.rx_too_long = rd("RX_TOO_LONG")?;
        st.tx_bad_frame = rd("TX_BAD_FRAME")?;
        Ok(st)
    }

    /// Read the RC transport's reliability statistics (retransmissions, timeouts, NAKs both
    /// ways, duplicates, QPs failed by retries) from BAR0.
    pub fn rc_stats(&mut self) -> Result<RcStats> {
        let bar = &mut self.bar;
        let mut rd = |name: &str| bar.read32(regs::addr("RC_STATS", name));
        Ok(RcStats {
            retrans: rd("RETRANS")?,
            timeouts: rd("TIMEOUTS")?,
            seq_nak_rx: rd("SEQ_NAK_RX")?,
            seq_nak_tx: rd("SEQ_NAK_TX")?,
            rnr_nak_rx: rd("RNR_NAK_RX")?,
            rnr_nak_tx: rd("RNR_NAK_TX")?,
            dup_rx: rd("DUP_RX")?,
            retry_exc: rd("RETRY_EXC")?,
            ghost_rx: rd("GHOST_RX")?,
            local_fail: rd("LOCAL_FAIL")?,
            pool_wait: rd("POOL_WAIT")?,
            rsp_refused: rd("RSP_REFUSED")?,
            jobs_full: rd("JOBS_FULL")?,
            key_refused: rd("KEY_REFUSED")?,
        })
    }

    /// Post a list of send work requests (`ibv_post_send`): each WQE is written into the send
    /// queue ring, then the doorbell is rung once for the whole list. All or nothing: a list
    /// that does not fit the ring's free entries, or has an invalid request (a source not
    /// inside a region registered with its `lkey` in the QP's PD), posts none.
    pub fn post_send(&mut self, qp: &mut QueuePair, wrs: &[SendWr]) -> Result<()> {
        // In ERR the NIC completes what is posted with WR_FLUSH_ERR, as IBA asks.
        if qp.state != QpState::Rts && qp.state != QpState::Err {
            return Err(DriverError::Invalid(format!(
                "QP {}: post_send in state {:?}, needs RTS (or ERR, to flush)",
                qp.qpn, qp.state
            )));
        }
        if let Some(done) = self.sq_retired.get(&qp.qpn) {
            qp.sq_done = *done;
        }
        let size = ring_room(qp.qpn, qp.sq_log_size, qp.sq_pi, qp.sq_done, wrs.len())?;
        for wr in wrs {
            // A READ or an atomic writes its SGEs; an atomic's are 8 bytes (its original
            // value), as verbs asks.
            if wr.opcode.is_atomic() && wr.length() != 8 {
                return Err(DriverError::Invalid(format!(
                    "wr_id {}: an atomic's scatter list holds 8 bytes, this one {}",
                    wr.wr_id,
                    wr.length()
                )));
            }
            let need = if wr.opcode.writes_local() {
                queues::ACCESS_LOCAL_WRITE
            } else {
                0
            };
            self.check_sg_list(qp.pdn, wr.wr_id, &wr.sg_list, need)?;
        }
        let mut pi = qp.sq_pi;
        for wr in wrs {
            let slot = usize::from(pi) & (size - 1);
            self.mem
                .write(qp.sq.addr + (slot * WQE_LEN) as u64, &wr.wqe())?;
            pi = pi.wrapping_add(1);
        }
        if !wrs.is_empty() {
            self.ring_sq_doorbell(qp.qpn, pi)?;
        }
        qp.sq_pi = pi;
        self.sq_track
            .entry(qp.qpn)
            .or_default()
            .extend(wrs.iter().map(|w| w.wr_id));
        Ok(())
    }

    /// Take up to `max` completions from `cq` (`ibv_poll_cq`): the CQEs whose owner bit says
    /// the NIC has written them on this pass over the ring. Never touches the NIC.
    pub fn poll_cq(&mut self, cq: &mut CompletionQueue, max: usize) -> Result<Vec<WorkCompletion>> {
        let mut out = Vec::new();
        let mask = (1u32 << cq.log_size) - 1;
        while out.len() < max {
            let addr = cq.ring.addr + u64::from(cq.ci & mask) * CQE_LEN as u64;
            let mut e = [0u8; CQE_LEN];
            self.mem.read(addr, &mut e)?;
            let g = |name: &str| CQE.get(&CQE.field(name), &e);
            let pass = (cq.ci >> cq.log_size) & 1;
            if g("owner") as u32 != pass ^ 1 {
                break;
            }
            let wc = WorkCompletion {
                wr_id: g("wr_id") as u64,
                status: g("status") as u32,
                opcode: g("opcode") as u32,
                byte_len: g("byte_len") as u32,
                qpn: g("qpn") as u32,
                imm_data: (g("wc_flags") as u32 & queues::WC_WITH_IMM != 0)
                    .then_some(g("imm_data") as u32),
                src_qp: g("src_qp") as u32,
            };
            cq.ci = cq.ci.wrapping_add(1);
            if wc.opcode & queues::WC_RECV != 0 {
                // A receive completion: its WQE left the receive ring (they complete in order).
                let n = self.rq_retired.entry(wc.qpn).or_default();
                *n = n.wrapping_add(1);
            } else if let Some(q) = self.sq_track.get_mut(&wc.qpn) {
                if let Some(n) = q.iter().position(|id| *id == wc.wr_id) {
                    q.drain(..=n);
                    let r = self.sq_retired.entry(wc.qpn).or_default();
                    *r = r.wrapping_add(n as u16 + 1);
                }
            }
            out.push(wc);
        }
        Ok(out)
    }

    /// Post a list of receive work requests (`ibv_post_recv`): each receive WQE is written
    /// into the receive queue ring, then the receive doorbell is rung once for the list. All
    /// or nothing: a list that does not fit the ring's free entries, or has a buffer that is
    /// not inside a region of the QP's PD registered with its `lkey` and local write access,
    /// posts none. Allowed from INIT on (in ERR the NIC flushes them).
    pub fn post_recv(&mut self, qp: &mut QueuePair, wrs: &[RecvWr]) -> Result<()> {
        if qp.state == QpState::Reset {
            return Err(DriverError::Invalid(format!(
                "QP {}: post_recv in RESET, needs INIT or later",
                qp.qpn
            )));
        }
        if let Some(done) = self.rq_retired.get(&qp.qpn) {
            qp.rq_done = *done;
        }
        let size = ring_room(qp.qpn, qp.rq_log_size, qp.rq_pi, qp.rq_done, wrs.len())?;
        for wr in wrs {
            self.check_sg_list(qp.pdn, wr.wr_id, &wr.sg_list, queues::ACCESS_LOCAL_WRITE)?;
        }
        let mut pi = qp.rq_pi;
        for wr in wrs {
            let slot = usize::from(pi) & (size - 1);
            self.mem
                .write(qp.rq.addr + (slot * queues::RECV_WQE_LEN) as u64, &wr.wqe())?;
            pi = pi.wrapping_add(1);
        }
        if !wrs.is_empty() {
            self.ring_rq_doorbell(qp.qpn, pi)?;
        }
        qp.rq_pi = pi;
        Ok(())
    }

    /// Ring QP `qpn`'s receive doorbell with producer index `pi`.
    pub fn ring_rq_doorbell(&mut self, qpn: u32, pi: u16) -> Result<()> {
        let off = self.info.db_offset + qpn * self.info.db_stride + regs::DB_RQ_PI;
        self.bar.write32(off, pi.into())
    }

    /// Ring QP `qpn`'s send doorbell with producer index `pi`.
    pub fn ring_sq_doorbell(&mut self, qpn: u32, pi: u16) -> Result<()> {
        let off = self.info.db_offset + qpn * self.info.db_stride + regs::DB_SQ_PI;
        self.bar.write32(off, pi.into())
    }
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

fn put(l: &Layout, img: &mut [u8], name: &str, v: u128) {
    l.set(&l.field(name), img, v);
}
