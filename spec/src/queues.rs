//! Host-memory structures and object contexts: the send WQE, the CQE, the QP and CQ contexts
//! written through the OBJECT block, and the codes in them (IB verbs names and values).
//!
//! Rings: a queue of `2^log_size` fixed-size entries in host memory. The driver owns the
//! producer index of a send queue and writes it to the QP's doorbell page (`regs::DB_SQ_PI`,
//! 16 bits, wrapping; entry `i` lives at `base + (i mod 2^log_size) * WQE_LEN`). The NIC owns a
//! CQ's producer index; each CQE carries an owner bit equal to the pass over the ring
//! (`(index >> log_size) & 1` inverted, so the first pass writes 1 over zeroed memory) and the
//! driver polls the next entry's owner bit without touching the NIC.

use crate::layout::{f, Layout};

/// Send work queue entry, 128 bytes: this 64-byte header, then `num_sge` scatter/gather
/// elements (`SGE`) from byte `WQE_SGE_AT`, at most `MAX_SGE`. The message is the SGEs' bytes
/// in order; its length is their sum (the NIC adds them up itself, up to 2^31).
pub const WQE: Layout = Layout::host(
    "send WQE",
    128,
    &[
        f("opcode", 0, 8, "work request opcode (WR_*)"),
        f("flags", 8, 8, "WQE_FLAG_* bits"),
        f(
            "num_sge",
            16,
            8,
            "scatter/gather elements that follow (0 ..= MAX_SGE)",
        ),
        f(
            "imm_data",
            32,
            32,
            "immediate data (WITH_IMM opcodes): the ImmDt read as a big-endian number, as \
             tshark shows it",
        ),
        f("wr_id", 64, 64, "returned in the completion"),
        f("remote_addr", 128, 64, "target virtual address at the peer"),
        f("rkey", 192, 32, "remote key of the target"),
        f(
            "compare_add",
            256,
            64,
            "atomics: the compare value (CMP_AND_SWP) or the addend (FETCH_AND_ADD)",
        ),
        f("swap", 320, 64, "atomics: the swap value (CMP_AND_SWP)"),
    ],
    "Send queue entry: one work request; its scatter/gather list (`SGE`) follows from byte 64.",
);
pub const WQE_LEN: usize = WQE.len;

/// Receive queue entry, 128 bytes: a receive buffer's scatter list. Its fields sit where the
/// send WQE has them (one parser for both rings): `num_sge` SGEs from byte `WQE_SGE_AT`, at
/// most `MAX_SGE`; a SEND is written across them in order.
pub const RECV_WQE: Layout = Layout::host(
    "receive WQE",
    128,
    &[
        f(
            "num_sge",
            16,
            8,
            "scatter/gather elements that follow (0 ..= MAX_SGE)",
        ),
        f("wr_id", 64, 64, "returned in the completion"),
    ],
    "Receive queue entry: one receive buffer; its scatter list (`SGE`) follows from byte 64.",
);
pub const RECV_WQE_LEN: usize = RECV_WQE.len;

/// Scatter/gather element: one local buffer of a work request, 16 bytes.
pub const SGE: Layout = Layout::host(
    "SGE",
    16,
    &[
        f("addr", 0, 64, "buffer address in host memory"),
        f("length", 64, 32, "bytes (0 ..= 2^31)"),
        f(
            "lkey",
            96,
            32,
            "local key of a region that holds the buffer",
        ),
    ],
    "Scatter/gather element, as WQEs carry them.",
);
pub const SGE_LEN: usize = SGE.len;
/// Byte offset of a WQE's first SGE.
pub const WQE_SGE_AT: usize = 64;
/// Scatter/gather elements per work request, at most (`ibv_qp_cap.max_send_sge`).
pub const MAX_SGE: usize = 4;
/// Longest message: 2^31 bytes (IBA 9.4.1: the RETH DMA length).
pub const MAX_MSG_LEN: u32 = 1 << 31;
/// RDMA READs and atomics a QP has outstanding at most, as requester
/// (`ibv_qp_attr.max_rd_atomic`) and as responder (`max_dest_rd_atomic`): the NIC keeps a slot
/// per READ in flight and an atomic result per atomic, so this sizes two QP x
/// `MAX_RD_ATOMIC` tables (a power of two). Eight READs of 64 KiB in flight cover the 10G
/// link's bandwidth x round trip many times; sixteen cost the 10g NIC 17 more of the ECP5-85's
/// block RAMs. The ID block reports it (`MAX_RD_ATOMIC`) and the driver refuses more.
pub const MAX_RD_ATOMIC: usize = 8;
/// A QP's reliability attributes when the host sets none (`ibv_qp_attr`'s `timeout`,
/// `retry_cnt`, `rnr_retry`; `min_rnr_timer` is `headers::RNR_TIMER_DEFAULT`): 67 ms, 7, 7
/// (RNR retries without end).
pub const QP_TIMEOUT_DEFAULT: u8 = 14;
pub const QP_RETRY_CNT_DEFAULT: u8 = 7;
pub const QP_RNR_RETRY_DEFAULT: u8 = 7;

/// Completion queue entry, 32 bytes; the owner bit is in the last byte so a CQE written by
/// one TLP is seen complete once that byte is.
pub const CQE: Layout = Layout::host(
    "CQE",
    32,
    &[
        f("wr_id", 0, 64, "wr_id of the completed work request"),
        f("byte_len", 64, 32, "bytes transferred"),
        f("qpn", 96, 24, "local QP number"),
        f("opcode", 120, 8, "work completion opcode (WC_*)"),
        f("status", 128, 8, "work completion status (WC_*)"),
        f(
            "wc_flags",
            136,
            8,
            "WC_WITH_IMM: imm_data holds the immediate",
        ),
        f(
            "epoch",
            144,
            8,
            "the QP's epoch (QP context `epoch`) when its work was taken: a CQE of an earlier \
             one belongs to a reset QP's last life and is discarded by the host",
        ),
        f(
            "imm_data",
            160,
            32,
            "receive completions: the ImmDt as a big-endian number",
        ),
        f(
            "src_qp",
            192,
            24,
            "receive completions: the sending QP (the local QP's remote QP)",
        ),
        f("owner", 255, 1, "phase: flips on every pass over the ring"),
    ],
    "Completion queue entry.",
);
pub const CQE_LEN: usize = CQE.len;

/// QP context as the OBJECT block's staging window holds it (`regs::CTX_WORDS` words).
/// Fields marked NIC are maintained by the hardware once the QP runs. A write sets their start
/// value only when it says so (`init_sq` for the send side's, `init_rq` for the receive
/// side's); any other write (RTS -> RTS, -> ERR) changes the host's fields and leaves the
/// NIC's running state alone. A READ returns the NIC's current values of them
/// (`QP_RUNNING`), `state` as ERR for a QP the NIC has failed (else 0), and 0 in every other
/// field: the NIC keeps no copy of the host's fields, the driver does. Bits no field names are
/// not kept.
pub const QP_CTX: Layout = Layout::host(
    "QP context",
    128,
    &[
        f("state", 0, 4, "QP_STATE_*"),
        f("pmtu", 4, 4, "path MTU, IB encoding: 1 = 256 .. 5 = 4096"),
        f(
            "init_sq",
            8,
            1,
            "this write sets sq_psn, sq_ci, sq_pkts and una_psn (and clears the QP's send \
             error); without it the NIC keeps its own",
        ),
        f(
            "init_rq",
            9,
            1,
            "this write sets epsn, msn and rq_ci (and ends any message in progress); \
             without it the NIC keeps its own",
        ),
        f(
            "max_rd_atomic",
            10,
            5,
            "RDMA READs and atomics the requester keeps outstanding at most (`ibv_qp_attr`'s \
             max_rd_atomic: at most the peer's max_dest_rd_atomic), 1..=MAX_RD_ATOMIC (8); 0 or more \
             reads as MAX_RD_ATOMIC",
        ),
        f("sq_log_size", 16, 5, "send queue has 2^n WQEs"),
        f(
            "epoch",
            24,
            8,
            "the QP's incarnation: the driver counts it up on every move to RESET; a work \
             request sent in an earlier epoch leaves no completion (IBA 10.3.1: RESET \
             discards the QP's work)",
        ),
        f("remote_qpn", 32, 24, "destination QP at the peer"),
        f(
            "qp_access",
            56,
            8,
            "remote access the QP's responder allows (ACCESS_REMOTE_*: `ibv_qp_attr`'s \
             qp_access_flags), besides the rights of the region a request names",
        ),
        f("sq_cqn", 64, 16, "CQ that receives send completions"),
        f(
            "pdn",
            80,
            16,
            "protection domain: remote keys must name a region of this PD",
        ),
        f("sq_psn", 96, 24, "NIC: next PSN the requester sends"),
        f("epsn", 128, 24, "NIC: PSN the responder expects"),
        f("msn", 160, 24, "NIC: responder's message sequence number"),
        f("sq_ci", 192, 16, "NIC: WQEs the requester has fetched"),
        f(
            "sq_pkts",
            208,
            24,
            "NIC: packets of the WQE at sq_ci already sent (a requester that yields a QP \
             mid-message, its priority's transmit queue full, resumes there)",
        ),
        f("una_psn", 232, 24, "NIC: oldest PSN not yet acknowledged"),
        f("remote_mac", 256, 48, "peer MAC"),
        f(
            "vlan",
            304,
            1,
            "send the QP's frames (and its ACKs) with an 802.1Q tag: PCP and VID below",
        ),
        f(
            "pcp",
            305,
            3,
            "802.1p priority of the QP's frames: its traffic class, the PFC priority \
             (untagged frames are priority 0)",
        ),
        f("vid", 308, 12, "VLAN identifier of the tag"),
        f("remote_ip", 320, 128, "peer IP address; IPv4 in bits 31..0"),
        f("sq_base", 448, 64, "send queue ring address in host memory"),
        f(
            "rq_base",
            512,
            64,
            "receive queue ring address in host memory",
        ),
        f("rq_cqn", 576, 16, "CQ that receives receive completions"),
        f("rq_log_size", 592, 5, "receive queue has 2^n receive WQEs"),
        f(
            "rq_ci",
            608,
            16,
            "NIC: receive WQEs the responder has taken (set by an init_rq write)",
        ),
        f(
            "timeout",
            624,
            5,
            "local ACK timeout: 4.096 us x 2^timeout, 0 = none (IBA 9.7.6.1.3); the \
             reliability issue's requester",
        ),
        f(
            "retry_cnt",
            629,
            3,
            "retries after a timeout or a NAK PSN sequence error before RETRY_EXC_ERR",
        ),
        f(
            "rnr_retry",
            632,
            3,
            "retries after an RNR NAK before RNR_RETRY_EXC_ERR; 7 = without end",
        ),
        f(
            "min_rnr_timer",
            635,
            5,
            "the RNR NAK timer code this QP's responder sends (IBA table 45: 1 = 0.01 ms .. \
             0 = 655.36 ms)",
        ),
    ],
    "Queue pair context.",
);

/// The QP context's fields the NIC maintains (marked NIC above): what a READ returns.
pub const QP_RUNNING: [&str; 7] = [
    "sq_psn", "sq_ci", "sq_pkts", "una_psn", "epsn", "msn", "rq_ci",
];

/// CQ context.
pub const CQ_CTX: Layout = Layout::host(
    "CQ context",
    16,
    &[
        f("base", 0, 64, "ring address in host memory"),
        f("log_size", 64, 5, "the ring has 2^n CQEs"),
        f("pi", 96, 32, "NIC: CQEs written (wraps)"),
    ],
    "Completion queue context.",
);

/// Memory region context: what a remote key may touch. The responder checks every RDMA
/// WRITE's RETH against it: the whole key (index and tag), the QP's PD, the access right,
/// and the range. A cleared entry has no access rights, so it matches nothing.
pub const MR_CTX: Layout = Layout::host(
    "MR context",
    32,
    &[
        f(
            "va",
            0,
            64,
            "first address of the region (host address = VA)",
        ),
        f("len", 64, 64, "bytes in the region"),
        f("key", 128, 32, "the region's key: table index << 8 | tag"),
        f("pdn", 160, 16, "protection domain"),
        f("access", 176, 8, "ACCESS_* bits"),
    ],
    "Memory region context.",
);

/// Memory region access rights (the MR context's `access`; values of `IBV_ACCESS_*`).
pub const ACCESS_LOCAL_WRITE: u32 = 1;
pub const ACCESS_REMOTE_WRITE: u32 = 2;
pub const ACCESS_REMOTE_READ: u32 = 4;
pub const ACCESS_REMOTE_ATOMIC: u32 = 8;

/// Every host layout, for checks and docs.
pub const LAYOUTS: &[&Layout] = &[&WQE, &RECV_WQE, &SGE, &CQE, &QP_CTX, &CQ_CTX, &MR_CTX];

/// The CQE's `wc_flags` bit: the completion carries immediate data (`IBV_WC_WITH_IMM`).
pub const WC_WITH_IMM: u32 = 2;

/// A code with its name, for tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    pub value: u32,
    pub name: &'static str,
    pub implemented: bool,
}

const fn code(value: u32, name: &'static str, implemented: bool) -> Code {
    Code {
        value,
        name,
        implemented,
    }
}

/// Work request opcodes (the WQE's `opcode`; values of `enum ibv_wr_opcode`).
pub const WR_OPCODES: &[Code] = &[
    code(0, "RDMA_WRITE", true),
    code(1, "RDMA_WRITE_WITH_IMM", true),
    code(2, "SEND", true),
    code(3, "SEND_WITH_IMM", true),
    code(4, "RDMA_READ", true),
    code(5, "ATOMIC_CMP_AND_SWP", true),
    code(6, "ATOMIC_FETCH_AND_ADD", true),
];
pub const WR_RDMA_WRITE: u32 = 0;
pub const WR_RDMA_WRITE_WITH_IMM: u32 = 1;
pub const WR_SEND: u32 = 2;
pub const WR_SEND_WITH_IMM: u32 = 3;
pub const WR_RDMA_READ: u32 = 4;
pub const WR_ATOMIC_CMP_AND_SWP: u32 = 5;
pub const WR_ATOMIC_FETCH_AND_ADD: u32 = 6;

/// The completion opcode of each work request opcode (`WR_*` to `WC_*`): a WRITE with or
/// without immediate completes as RDMA_WRITE, a SEND as SEND (verbs' mapping).
pub const WR_TO_WC: &[(u32, u32)] = &[
    (WR_RDMA_WRITE, WC_RDMA_WRITE),
    (WR_RDMA_WRITE_WITH_IMM, WC_RDMA_WRITE),
    (WR_SEND, WC_SEND),
    (WR_SEND_WITH_IMM, WC_SEND),
    (WR_RDMA_READ, WC_RDMA_READ),
    (WR_ATOMIC_CMP_AND_SWP, WC_COMP_SWAP),
    (WR_ATOMIC_FETCH_AND_ADD, WC_FETCH_ADD),
];

/// WQE flags.
pub const WQE_FLAG_SIGNALED: u32 = 1 << 0;
pub const WQE_FLAG_FENCE: u32 = 1 << 1;
pub const WQE_FLAG_SOLICITED: u32 = 1 << 2;

/// Work completion opcodes (the CQE's `opcode`; values of `enum ibv_wc_opcode`).
pub const WC_OPCODES: &[Code] = &[
    code(0, "SEND", true),
    code(1, "RDMA_WRITE", true),
    code(2, "RDMA_READ", true),
    code(3, "COMP_SWAP", true),
    code(4, "FETCH_ADD", true),
    code(128, "RECV", true),
    code(129, "RECV_RDMA_WITH_IMM", true),
];
pub const WC_SEND: u32 = 0;
pub const WC_RDMA_WRITE: u32 = 1;
pub const WC_RDMA_READ: u32 = 2;
pub const WC_COMP_SWAP: u32 = 3;
pub const WC_FETCH_ADD: u32 = 4;
pub const WC_RECV: u32 = 128;
pub const WC_RECV_RDMA_WITH_IMM: u32 = 129;

/// Work completion status (the CQE's `status`; values of `enum ibv_wc_status`).
pub const WC_STATUS: &[Code] = &[
    code(0, "SUCCESS", true),
    code(1, "LOC_LEN_ERR", true),
    code(2, "LOC_QP_OP_ERR", true),
    code(4, "LOC_PROT_ERR", true),
    code(5, "WR_FLUSH_ERR", true),
    code(9, "REM_INV_REQ_ERR", true),
    code(10, "REM_ACCESS_ERR", true),
    code(11, "REM_OP_ERR", true),
    code(12, "RETRY_EXC_ERR", true),
    code(13, "RNR_RETRY_EXC_ERR", true),
    code(21, "GENERAL_ERR", true),
];
/// Memory region access rights by name (`implemented`: the NIC enforces the right today).
pub const ACCESS_FLAGS: &[Code] = &[
    code(ACCESS_LOCAL_WRITE, "LOCAL_WRITE", true),
    code(ACCESS_REMOTE_WRITE, "REMOTE_WRITE", true),
    code(ACCESS_REMOTE_READ, "REMOTE_READ", true),
    code(ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC", true),
];
pub const WC_SUCCESS: u32 = 0;
pub const WC_LOC_LEN_ERR: u32 = 1;
pub const WC_LOC_QP_OP_ERR: u32 = 2;
pub const WC_LOC_PROT_ERR: u32 = 4;
pub const WC_WR_FLUSH_ERR: u32 = 5;
pub const WC_REM_INV_REQ_ERR: u32 = 9;
pub const WC_REM_ACCESS_ERR: u32 = 10;
pub const WC_REM_OP_ERR: u32 = 11;
pub const WC_RETRY_EXC_ERR: u32 = 12;
pub const WC_RNR_RETRY_EXC_ERR: u32 = 13;
pub const WC_GENERAL_ERR: u32 = 21;

/// QP states (the context's `state`; values of `enum ibv_qp_state`).
pub const QP_STATES: &[Code] = &[
    code(0, "RESET", true),
    code(1, "INIT", true),
    code(2, "RTR", true),
    code(3, "RTS", true),
    code(4, "SQD", false),
    code(5, "SQE", false),
    code(6, "ERR", true),
];
pub const QP_STATE_RESET: u32 = 0;
pub const QP_STATE_INIT: u32 = 1;
pub const QP_STATE_RTR: u32 = 2;
pub const QP_STATE_RTS: u32 = 3;
pub const QP_STATE_ERR: u32 = 6;

/// Path MTU in bytes for the IB encoding 1..=5, as `enum ibv_mtu`.
pub const fn mtu_bytes(enc: u32) -> Option<u32> {
    match enc {
        1..=5 => Some(128 << enc),
        _ => None,
    }
}

/// The name of a code in a table, for messages.
pub fn name_of(table: &[Code], value: u32) -> &'static str {
    table
        .iter()
        .find(|c| c.value == value)
        .map_or("?", |c| c.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_fit() {
        for l in LAYOUTS {
            l.check().unwrap();
        }
        const { assert!(QP_CTX.len <= crate::regs::CTX_WORDS * 4) };
        const { assert!(CQ_CTX.len <= crate::regs::CTX_WORDS * 4) };
        assert_eq!(CQE.field("owner").bit, CQE_LEN * 8 - 1);
        assert!(WQE.fields.iter().all(|x| x.bit + x.width <= WQE_SGE_AT * 8));
        assert_eq!(
            WQE_SGE_AT + MAX_SGE * SGE_LEN,
            WQE_LEN,
            "the SGEs fill the WQE"
        );
        for name in ["num_sge", "wr_id"] {
            assert_eq!(
                RECV_WQE.field(name),
                WQE.field(name),
                "{name} where WQE has it"
            );
        }
        assert_eq!(RECV_WQE_LEN, WQE_LEN);
        assert_eq!(mtu_bytes(1), Some(256));
        assert_eq!(mtu_bytes(5), Some(4096));
        assert_eq!(mtu_bytes(6), None);
    }
}
