//! Generated documentation pages: the opcode table, the register map and the formats, made
//! from the tables in this crate. `ferroce docs` writes them to `docs/`; a test fails when a
//! checked-in page differs from what the tables generate.

use crate::layout::{Layout, Order};
use crate::opcodes::OPCODES;
use crate::queues::{self, Code};
use crate::regs::{self, Reset};
use crate::{headers, mac_ctrl, tlp};
use std::fmt::Write;

const BANNER: &str =
    "<!-- Generated from the spec crate by `cargo run --bin ferroce -- docs`; do not edit. -->\n\n";

/// Every generated page: (file name under `docs/`, contents).
pub fn pages() -> Vec<(&'static str, String)> {
    vec![
        ("opcodes.md", opcodes()),
        ("registers.md", registers()),
        ("formats.md", formats()),
    ]
}

fn opcodes() -> String {
    let mut s = String::from(BANNER);
    s.push_str("# BTH opcodes\n\nEvery RC and UD opcode (IBA 9.2, table 38), the extended headers each carries in wire order, and whether ferroce implements it today.\n\n");
    s.push_str("| code | name | extended headers | header bytes after BTH | payload | position | implemented |\n|---|---|---|---|---|---|---|\n");
    for o in OPCODES {
        let ext: Vec<&str> = o.ext.iter().map(|h| h.layout().name).collect();
        let _ = writeln!(
            s,
            "| 0x{:02X} | {} | {} | {} | {} | {:?} | {} |",
            o.code,
            o.name,
            if ext.is_empty() {
                "-".into()
            } else {
                ext.join(", ")
            },
            o.ext_len(),
            if o.payload { "yes" } else { "no" },
            o.position(),
            if o.implemented() { "yes" } else { "" },
        );
    }
    s
}

fn reset(r: Reset) -> String {
    match r {
        Reset::Value(v) => format!("0x{v:08X}"),
        Reset::Param(p) => format!("({})", p.name()),
        Reset::Live(_) => "(live)".into(),
    }
}

fn registers() -> String {
    let mut s = String::from(BANNER);
    s.push_str("# BAR0 register map\n\n");
    let _ = writeln!(
        s,
        "BAR0 is {} KiB. Register blocks form a linked list from offset 0 (each starts with TYPE, VERSION, NEXT); QP `n`'s doorbell page is at 0x{:X} + n * 0x{:X}. Registers are 32 bits; 1- and 2-DW accesses are accepted, anything else is refused and counted in COUNTERS.MMIO_BAD (reads get a Completer Abort).\n",
        regs::BAR0_SIZE / 1024,
        regs::DB_OFFSET,
        regs::DB_STRIDE
    );
    for b in regs::BLOCKS {
        let _ = writeln!(
            s,
            "## {} (type 0x{:08X}, at 0x{:04X})\n\n{}\n",
            b.name, b.type_id, b.base, b.doc
        );
        s.push_str("| offset | name | access | reset | description |\n|---|---|---|---|---|\n");
        for r in b.all_regs() {
            let _ = writeln!(
                s,
                "| 0x{:04X} | {} | {} | {} | {} |",
                b.base + r.offset,
                r.name,
                r.access.name(),
                reset(r.reset),
                r.doc
            );
        }
        s.push('\n');
    }
    s.push_str("## Doorbell page (one per QP)\n\n| offset in page | name | access | description |\n|---|---|---|---|\n");
    let _ = writeln!(
        s,
        "| 0x{:03X} | SQ_PI | WO | send queue producer index, 16 bits, wrapping |\n",
        regs::DB_SQ_PI
    );
    layout_table(&mut s, &regs::CMD);
    codes(
        &mut s,
        "Object tables (CMD.table)",
        &[
            Code {
                value: regs::TABLE_QP,
                name: "QP",
                implemented: true,
            },
            Code {
                value: regs::TABLE_CQ,
                name: "CQ",
                implemented: true,
            },
            Code {
                value: regs::TABLE_MR,
                name: "MR",
                implemented: true,
            },
        ],
    );
    codes(
        &mut s,
        "Object operations (CMD.op)",
        &[
            Code {
                value: regs::OP_WRITE,
                name: "WRITE",
                implemented: true,
            },
            Code {
                value: regs::OP_READ,
                name: "READ",
                implemented: true,
            },
        ],
    );
    codes(
        &mut s,
        "STATUS errors (bits 15..8)",
        &[
            Code {
                value: regs::ERR_NONE,
                name: "NONE",
                implemented: true,
            },
            Code {
                value: regs::ERR_BAD_OP,
                name: "BAD_OP",
                implemented: true,
            },
            Code {
                value: regs::ERR_BAD_TABLE,
                name: "BAD_TABLE",
                implemented: true,
            },
            Code {
                value: regs::ERR_BAD_INDEX,
                name: "BAD_INDEX",
                implemented: true,
            },
        ],
    );
    s
}

fn codes(s: &mut String, title: &str, table: &[Code]) {
    let _ = writeln!(
        s,
        "### {title}\n\n| value | name | implemented |\n|---|---|---|"
    );
    for c in table {
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            c.value,
            c.name,
            if c.implemented { "yes" } else { "" }
        );
    }
    s.push('\n');
}

fn layout_table(s: &mut String, l: &Layout) {
    let order = match l.order {
        Order::Network => "network order: bit 0 is the most significant bit of byte 0",
        Order::Host => "little-endian: bit 0 is the least significant bit of byte 0",
    };
    let _ = writeln!(
        s,
        "### {} ({} bytes)\n\n{} Bits in {}.\n",
        l.name, l.len, l.doc, order
    );
    s.push_str("| bits | byte | field | width | description |\n|---|---|---|---|---|\n");
    for fd in l.fields {
        let _ = writeln!(
            s,
            "| {}..{} | {} | {} | {} | {} |",
            fd.bit,
            fd.bit + fd.width - 1,
            fd.byte(),
            fd.name,
            fd.width,
            fd.doc
        );
    }
    s.push('\n');
}

fn formats() -> String {
    let mut s = String::from(BANNER);
    s.push_str("# Formats\n\n## Wire headers\n\n");
    for l in headers::LAYOUTS {
        layout_table(&mut s, l);
    }
    s.push_str("## MAC control frames\n\n");
    s.push_str(
        "Destination 01-80-C2-00-00-01, EtherType 0x8808, then these fields, then zero padding \
         to the 60-byte minimum. Pause times count quanta of 512 bit times at the line rate \
         (51.2 ns at 10 Gb/s, 5.12 ns at 100 Gb/s). Received: PAUSE and PFC are consumed, \
         other opcodes, other destinations, short frames and a non-zero reserved PFC octet \
         are dropped and counted (`spec::mac_ctrl::parse`).\n\n",
    );
    for l in mac_ctrl::LAYOUTS {
        layout_table(&mut s, l);
    }
    s.push_str("## Host memory structures and contexts\n\n");
    s.push_str(crate_doc_rings());
    for l in queues::LAYOUTS {
        layout_table(&mut s, l);
    }
    codes(
        &mut s,
        "Work request opcodes (WQE.opcode)",
        queues::WR_OPCODES,
    );
    codes(
        &mut s,
        "Work completion opcodes (CQE.opcode)",
        queues::WC_OPCODES,
    );
    codes(
        &mut s,
        "Work completion status (CQE.status)",
        queues::WC_STATUS,
    );
    codes(&mut s, "QP states (QP context.state)", queues::QP_STATES);
    codes(
        &mut s,
        "Memory region access rights (MR context.access, bits)",
        queues::ACCESS_FLAGS,
    );
    s.push_str("## Records between NIC blocks\n\n");
    layout_table(&mut s, &crate::meta::TX_META);
    layout_table(&mut s, &crate::meta::RX_META);
    layout_table(&mut s, &crate::meta::SENT);
    layout_table(&mut s, &crate::meta::RX_ACK);
    layout_table(&mut s, &crate::meta::RECV_DONE);
    layout_table(&mut s, &crate::meta::READ_JOB);
    layout_table(&mut s, &crate::meta::READ_SLOT);
    layout_table(&mut s, &crate::meta::ACK_OWED);
    s.push_str("## PCIe TLP headers\n\nCarried beside the payload as one 128-bit big-endian value, always in the 4-DW form.\n\n");
    layout_table(&mut s, &tlp::REQUEST);
    layout_table(&mut s, &tlp::COMPLETION);
    s
}

fn crate_doc_rings() -> &'static str {
    "Rings hold `2^log_size` fixed-size entries. The driver writes the send queue producer index (16 bits, wrapping) to the QP's doorbell page; the NIC writes CQEs whose owner bit flips on every pass over the ring (1 on the first pass over zeroed memory), so polling needs no MMIO read.\n\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in pages must equal what the tables generate now.
    #[test]
    fn checked_in_pages_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        for (name, text) in pages() {
            let path = dir.join(name);
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == text,
                "{} is stale: run `cargo run --bin ferroce -- docs` and commit it",
                path.display()
            );
        }
    }
}
