//! BAR0 register map: a linked list of self-describing register blocks (type, version, next),
//! the ID block first, then per-QP doorbell pages.
//!
//! ```text
//! 0x00_0000  control region: register blocks, each starting TYPE, VERSION, NEXT
//! 0x10_0000  doorbell page of QP 0   (DB_STRIDE = 4 KiB per QP, so user space could own one)
//! 0x10_1000  doorbell page of QP 1 ...
//! ```
//!
//! All registers are 32 bits; the completer accepts 1- and 2-DW reads and writes. Objects (QP
//! and CQ contexts) are created, modified and queried through the OBJECT block: write the
//! context words into CTX*, then a command into CMD; a read of STATUS returns once the command
//! has finished (the completer takes no request while a command runs).

use crate::layout::{f, str_eq, Layout, Order};

/// How software may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
    /// Write only; reads return 0. Writes have a side effect (a command, a doorbell).
    Wo,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Ro => "RO",
            Access::Rw => "RW",
            Access::Wo => "WO",
        }
    }
}

/// Reset value: a constant, or a parameter of the configuration the NIC was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reset {
    Value(u32),
    Param(Param),
    /// A live value (a counter of the datapath): word n of the completer's `s_live` input,
    /// which the NIC assembles in this table's order. Reset with the datapath (to 0).
    Live(u16),
}

/// Build parameters the ID block reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// Datapath width in bits (64 for `10g`, 512 for `100g`).
    DatapathWidth,
    /// Core clock in kHz.
    ClockKhz,
    /// Number of queue pairs.
    NumQps,
    /// Number of completion queues.
    NumCqs,
    /// Number of memory regions (keys name index `key >> 8`).
    NumMrs,
    /// RDMA READs and atomics a QP may have outstanding, as requester and as responder.
    MaxRdAtomic,
}

impl Param {
    pub fn name(self) -> &'static str {
        match self {
            Param::DatapathWidth => "datapath width",
            Param::ClockKhz => "clock kHz",
            Param::NumQps => "QPs",
            Param::NumCqs => "CQs",
            Param::NumMrs => "MRs",
            Param::MaxRdAtomic => "READs and atomics outstanding per QP",
        }
    }
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg {
    pub name: &'static str,
    /// Byte offset from the block base.
    pub offset: u32,
    pub access: Access,
    pub reset: Reset,
    pub doc: &'static str,
}

const fn reg(
    name: &'static str,
    offset: u32,
    access: Access,
    reset: Reset,
    doc: &'static str,
) -> Reg {
    Reg {
        name,
        offset,
        access,
        reset,
        doc,
    }
}

/// A register block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub name: &'static str,
    pub type_id: u32,
    pub version: u32,
    /// Byte offset in BAR0.
    pub base: u32,
    /// Registers after the common TYPE/VERSION/NEXT header.
    pub regs: &'static [Reg],
    pub doc: &'static str,
}

use Access::*;
use Reset::{Param as P, Value as V};

/// Offsets of the header every block starts with.
pub const TYPE: u32 = 0x00;
pub const VERSION: u32 = 0x04;
pub const NEXT: u32 = 0x08;
/// Version 1.0 of every block but OBJECT.
pub const VERSION_1_0: u32 = 0x0001_0000;
/// OBJECT's version: a READ returns a QP's running state, not the context the host wrote.
pub const VERSION_2_0: u32 = 0x0002_0000;

/// Doorbell region: one page per QP.
pub const DB_OFFSET: u32 = 0x10_0000;
pub const DB_STRIDE: u32 = 0x1000;
/// Offset in a doorbell page: the send queue producer index (low 16 bits used).
pub const DB_SQ_PI: u32 = 0x0;
/// Offset in a doorbell page: the receive queue producer index (low 16 bits used). The driver
/// rings it on `post_recv`; the NIC ignores it until its receive path takes receive WQEs.
pub const DB_RQ_PI: u32 = 0x8;
/// Size of BAR0 in bytes: control region plus doorbell pages for 256 QPs.
pub const BAR0_SIZE: u32 = 0x20_0000;
/// Address bits BAR0 decodes.
pub const BAR0_ADDR_W: usize = 21;

/// Words of the context staging window (CTX0 ..).
pub const CTX_WORDS: usize = 32;
const CTX_BASE: u32 = 0x40;

const fn ctx_regs() -> [Reg; 4 + CTX_WORDS] {
    const NAMES: [&str; CTX_WORDS] = [
        "CTX0", "CTX1", "CTX2", "CTX3", "CTX4", "CTX5", "CTX6", "CTX7", "CTX8", "CTX9", "CTX10",
        "CTX11", "CTX12", "CTX13", "CTX14", "CTX15", "CTX16", "CTX17", "CTX18", "CTX19", "CTX20",
        "CTX21", "CTX22", "CTX23", "CTX24", "CTX25", "CTX26", "CTX27", "CTX28", "CTX29", "CTX30",
        "CTX31",
    ];
    let mut out = [reg("", 0, Ro, V(0), ""); 4 + CTX_WORDS];
    out[0] = reg(
        "CMD",
        0x0C,
        Wo,
        V(0),
        "command: op, table, index (see the CMD layout)",
    );
    out[1] = reg(
        "STATUS",
        0x10,
        Ro,
        V(0),
        "bit 0 busy; bits 15..8 error of the last command",
    );
    out[2] = reg(
        "CTX_WORDS",
        0x14,
        Ro,
        V(CTX_WORDS as u32),
        "words in the staging window",
    );
    out[3] = reg("COMMANDS", 0x18, Ro, V(0), "commands completed (wraps)");
    let mut i = 0;
    while i < CTX_WORDS {
        out[4 + i] = reg(
            NAMES[i],
            CTX_BASE + 4 * i as u32,
            Rw,
            V(0),
            "context staging word",
        );
        i += 1;
    }
    out
}

const OBJECT_REGS: [Reg; 4 + CTX_WORDS] = ctx_regs();

mod stats;
pub use stats::LIVE_WORDS;
use stats::{MAC_STATS_REGS, RC_STATS_REGS};

/// The live word a register of a statistics block (MAC_STATS, RC_STATS) reads.
pub fn live_index(name: &str) -> Option<usize> {
    BLOCKS
        .iter()
        .flat_map(|b| b.regs.iter())
        .find_map(|r| match r.reset {
            Reset::Live(n) if r.name == name => Some(usize::from(n)),
            _ => None,
        })
}

/// Every register block, in list order; NEXT of each points to the following one.
pub const BLOCKS: &[Block] = &[
    Block {
        name: "ID",
        type_id: 0x4652_0001,
        version: VERSION_1_0,
        base: 0x0000,
        regs: &[
            reg(
                "DATAPATH_W",
                0x0C,
                Ro,
                P(Param::DatapathWidth),
                "datapath width in bits",
            ),
            reg(
                "CLOCK_KHZ",
                0x10,
                Ro,
                P(Param::ClockKhz),
                "core clock in kHz",
            ),
            reg("NUM_QPS", 0x14, Ro, P(Param::NumQps), "queue pairs"),
            reg("NUM_CQS", 0x18, Ro, P(Param::NumCqs), "completion queues"),
            reg(
                "DB_OFFSET",
                0x1C,
                Ro,
                V(DB_OFFSET),
                "BAR0 offset of QP 0's doorbell page",
            ),
            reg(
                "DB_STRIDE",
                0x20,
                Ro,
                V(DB_STRIDE),
                "bytes between doorbell pages",
            ),
            reg("SCRATCH", 0x24, Rw, V(0), "scratch register for bus tests"),
            reg("NUM_MRS", 0x28, Ro, P(Param::NumMrs), "memory regions"),
            reg(
                "MAX_RD_ATOMIC",
                0x2C,
                Ro,
                P(Param::MaxRdAtomic),
                "RDMA READs and atomics a QP may have outstanding, as requester \
                 (`max_rd_atomic`) and as responder (`max_dest_rd_atomic`)",
            ),
        ],
        doc: "Identifies the NIC and its build parameters. Always at offset 0.",
    },
    Block {
        name: "PORT",
        type_id: 0x4652_0002,
        version: VERSION_1_0,
        base: 0x0100,
        regs: &[
            reg("MAC_LO", 0x0C, Rw, V(0), "local MAC, bits 31..0"),
            reg("MAC_HI", 0x10, Rw, V(0), "local MAC, bits 47..32"),
            reg("IPV4", 0x14, Rw, V(0), "local IPv4 address"),
        ],
        doc: "The Ethernet port's addresses.",
    },
    Block {
        name: "OBJECT",
        type_id: 0x4652_0003,
        version: VERSION_2_0,
        base: 0x0200,
        regs: &OBJECT_REGS,
        doc: "Writes QP, CQ and MR contexts through a staging window to the engines that \
              own them, and reads a QP's running state. The NIC keeps no copy of what the \
              host wrote: the driver does (a READ of the CQ or MR table fails with BAD_OP).",
    },
    Block {
        name: "COUNTERS",
        type_id: 0x4652_0004,
        version: VERSION_1_0,
        base: 0x0300,
        regs: &[reg(
            "MMIO_BAD",
            0x0C,
            Ro,
            V(0),
            "BAR0 requests refused: not 1-2 DW, not a memory request, or poisoned (wraps)",
        )],
        doc: "Error and event counters, 32 bits, wrapping.",
    },
    Block {
        name: "PFC",
        type_id: 0x4652_0005,
        version: VERSION_1_0,
        base: 0x0400,
        regs: &[
            reg(
                "ENABLE",
                0x0C,
                Rw,
                V(0),
                "bits 7..0: priorities PFC frames are sent for (received PFC and PAUSE are always obeyed)",
            ),
            reg(
                "QUANTA",
                0x10,
                Rw,
                V(0xffff),
                "bits 15..0: pause time XOFF frames carry, in quanta of 512 bit times (refreshed at half)",
            ),
            reg(
                "XOFF_BYTES",
                0x14,
                Rw,
                V(0),
                "bits 15..0: XOFF when a priority's frames in the receive buffer exceed this",
            ),
            reg(
                "XON_BYTES",
                0x18,
                Rw,
                V(0),
                "bits 15..0: XON when they are at or below this",
            ),
        ],
        doc: "Priority flow control (802.1Qbb) of the Ethernet port: which priorities are lossless, the pause time sent, the receive buffer's watermarks.",
    },
    Block {
        name: "MAC_STATS",
        type_id: 0x4652_0006,
        version: VERSION_1_0,
        base: 0x0500,
        regs: &MAC_STATS_REGS,
        doc: "The Ethernet MAC's statistics: PFC and pause per priority, frames sent per priority, drops by reason. Live 32-bit counters, wrapping.",
    },
    Block {
        name: "RC_STATS",
        type_id: 0x4652_0007,
        version: VERSION_1_0,
        base: 0x0600,
        regs: &RC_STATS_REGS,
        doc: "The RC transport's reliability and isolation statistics, summed over QPs: retransmissions, timeouts, NAKs both ways, duplicates, QPs failed by retries and by local errors, answers to nothing sent, waits for a QP's share of the completion pool, READ responses refused after a deregistration, READs and atomics dropped for want of a job, requests refused by the rkey check. Live 32-bit counters, wrapping.",
    },
];

/// The CMD register image.
pub const CMD: Layout = Layout {
    name: "CMD",
    order: Order::Host,
    len: 4,
    fields: &[
        f("index", 0, 24, "QP, CQ or MR number (an MR's key >> 8)"),
        f("table", 24, 4, "0: QP, 1: CQ, 2: MR"),
        f(
            "op",
            28,
            4,
            "1: write the context from CTX*; 2 (QP only): read the QP's running state into CTX* \
             (sq_psn, sq_ci, sq_pkts, una_psn, epsn, msn, rq_ci; state ERR if the NIC failed \
             the QP, else 0; other fields 0)",
        ),
    ],
    doc: "Object command.",
};

pub const TABLE_QP: u32 = 0;
pub const TABLE_CQ: u32 = 1;
pub const TABLE_MR: u32 = 2;
pub const OP_WRITE: u32 = 1;
pub const OP_READ: u32 = 2;

/// STATUS error codes.
pub const ERR_NONE: u32 = 0;
pub const ERR_BAD_OP: u32 = 1;
pub const ERR_BAD_TABLE: u32 = 2;
pub const ERR_BAD_INDEX: u32 = 3;
pub const STATUS_BUSY: u32 = 1;
pub const STATUS_ERR_SHIFT: u32 = 8;

/// Find a block by name.
pub const fn block(name: &str) -> &'static Block {
    let mut i = 0;
    while i < BLOCKS.len() {
        if str_eq(BLOCKS[i].name, name) {
            return &BLOCKS[i];
        }
        i += 1;
    }
    panic!("no such block")
}

/// BAR0 offset of register `name` in block `blk`.
pub const fn addr(blk: &str, name: &str) -> u32 {
    let b = block(blk);
    let mut i = 0;
    while i < b.regs.len() {
        if str_eq(b.regs[i].name, name) {
            return b.base + b.regs[i].offset;
        }
        i += 1;
    }
    panic!("no such register")
}

impl Block {
    /// NEXT: the following block's base, 0 for the last.
    pub fn next(&self) -> u32 {
        let i = BLOCKS
            .iter()
            .position(|b| b.base == self.base)
            .unwrap_or(BLOCKS.len());
        BLOCKS.get(i + 1).map_or(0, |b| b.base)
    }

    /// The full register list: header then block registers.
    pub fn all_regs(&self) -> Vec<Reg> {
        let mut v = vec![
            reg("TYPE", TYPE, Ro, V(self.type_id), "block type"),
            reg(
                "VERSION",
                VERSION,
                Ro,
                V(self.version),
                "block version (major.minor, 16 bits each)",
            ),
            reg(
                "NEXT",
                NEXT,
                Ro,
                V(self.next()),
                "BAR0 offset of the next block; 0 ends the list",
            ),
        ];
        v.extend_from_slice(self.regs);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_do_not_overlap_and_registers_are_aligned() {
        let mut seen = std::collections::BTreeSet::new();
        for b in BLOCKS {
            assert_eq!(b.base % 0x100, 0);
            for r in b.all_regs() {
                assert_eq!(r.offset % 4, 0, "{}.{}", b.name, r.name);
                assert!(r.offset < 0x100, "{}.{}", b.name, r.name);
                assert!(
                    seen.insert(b.base + r.offset),
                    "{}.{} overlaps",
                    b.name,
                    r.name
                );
            }
        }
        assert_eq!(BLOCKS[0].name, "ID");
        assert_eq!(BLOCKS[0].base, 0);
        assert_eq!(addr("OBJECT", "CTX31"), 0x200 + 0x40 + 31 * 4);
        const { assert!(DB_OFFSET + 256 * DB_STRIDE <= BAR0_SIZE) };
        assert_eq!(1u64 << BAR0_ADDR_W, BAR0_SIZE as u64);
        CMD.check().unwrap();
    }
}
