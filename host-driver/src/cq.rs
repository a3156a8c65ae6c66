//! Completion queues and the work completions polled from them (`ibv_cq`, `ibv_wc`).

use crate::DmaBuf;

/// A completion queue: a ring of CQEs in host memory.
#[derive(Debug)]
pub struct CompletionQueue {
    pub cqn: u32,
    pub ring: DmaBuf,
    pub log_size: u32,
    /// CQEs taken by `poll_cq` (the consumer index, wrapping).
    pub(crate) ci: u32,
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
