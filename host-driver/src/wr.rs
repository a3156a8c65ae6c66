//! Work requests (`ibv_send_wr`, `ibv_recv_wr`) and their WQE images, laid out by `spec`'s
//! `WQE` and `RECV_WQE`; the room left on a ring.

use crate::put;
use crate::{DriverError, Result};
use ferroce_spec::queues::{self, WQE_LEN};

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
pub(crate) fn ring_room(
    qpn: u32,
    log_size: u32,
    pi: u16,
    done: u16,
    asked: usize,
) -> Result<usize> {
    let size = 1usize << log_size;
    let free = size - usize::from(pi.wrapping_sub(done));
    if asked > free {
        return Err(DriverError::QueueFull { qpn, free, asked });
    }
    Ok(size)
}

/// `sges` into a WQE image from `WQE_SGE_AT` (at most `MAX_SGE`).
pub(crate) fn put_sges(img: &mut [u8], sges: &[Sge]) {
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
