//! PCIe transaction layer packets as ferroce's host interface carries them (PCIe Base 6.0,
//! 2.2): a 128-bit header beside the first beat of a payload stream.
//!
//! Two payload placements, as in the PCIe hard blocks of current FPGAs:
//! - **Completer side** (BAR0 requests in, their completions out): DW-aligned, DW 0 of the
//!   payload in the lowest lanes whatever the address (like Corundum's generic TLP interface).
//! - **Requester side** (DMA: memory reads and writes out, read completions in):
//!   address-aligned, the payload byte at host address `A` in lane `A mod (DW/8)` of its beat,
//!   so a transfer cut into TLPs at aligned boundaries needs no re-shifting per TLP. `tkeep`
//!   marks the payload bytes exactly.
//!
//! The header is always carried in the 4-DW form, read as one big-endian 128-bit integer (DW 0
//! in bits 127..96). A request with a 32-bit address is written with a 64-bit address whose
//! upper half is 0; the `fmt` field still says which one went on the wire.

use crate::layout::{f, Field, Layout, Order};

/// DW 0, common to every TLP.
const DW0: [Field; 11] = [
    f("fmt", 0, 3, "format: header size and whether data follows"),
    f("type", 3, 5, "type (with fmt)"),
    f("t9", 8, 1, "tag bit 9"),
    f("tc", 9, 3, "traffic class"),
    f("t8", 12, 1, "tag bit 8"),
    f("attr2", 13, 1, "ID-based ordering"),
    f("ln", 14, 1, "lightweight notification"),
    f("th", 15, 1, "TLP hints"),
    f("td", 16, 1, "TLP digest present"),
    f("ep", 17, 1, "poisoned"),
    f("attr", 18, 2, "relaxed ordering, no snoop"),
];

const fn request_fields() -> [Field; 17] {
    let mut out = [f("", 0, 1, ""); 17];
    let mut i = 0;
    while i < 11 {
        out[i] = DW0[i];
        i += 1;
    }
    out[11] = f("at", 20, 2, "address type; 0");
    out[12] = f("length", 22, 10, "payload length in DW; 0 means 1024");
    out[13] = f(
        "requester_id",
        32,
        16,
        "bus/device/function of the requester",
    );
    out[14] = f("tag", 48, 8, "tag: matches completions to the request");
    out[15] = f(
        "be",
        56,
        8,
        "last DW byte enables (high nibble), first DW byte enables (low)",
    );
    out[16] = f("addr", 64, 64, "byte address; bits 1..0 are 0");
    out
}

const fn completion_fields() -> [Field; 22] {
    let mut out = [f("", 0, 1, ""); 22];
    let mut i = 0;
    while i < 11 {
        out[i] = DW0[i];
        i += 1;
    }
    out[11] = f("at", 20, 2, "address type; 0");
    out[12] = f("length", 22, 10, "payload length in DW");
    out[13] = f(
        "completer_id",
        32,
        16,
        "bus/device/function of the completer",
    );
    out[14] = f("status", 48, 3, "completion status");
    out[15] = f("bcm", 51, 1, "byte count modified (PCI-X only); 0");
    out[16] = f(
        "byte_count",
        52,
        12,
        "bytes left to complete the request, this TLP included",
    );
    out[17] = f(
        "requester_id",
        64,
        16,
        "requester of the request being completed",
    );
    out[18] = f("tag", 80, 8, "tag of the request being completed");
    out[19] = f("r", 88, 1, "reserved");
    out[20] = f(
        "lower_addr",
        89,
        7,
        "low address bits of this TLP's first byte",
    );
    out[21] = f("resv", 96, 32, "DW 3: not sent; 0");
    out
}

const REQUEST_FIELDS: [Field; 17] = request_fields();
const COMPLETION_FIELDS: [Field; 22] = completion_fields();

/// Memory read and write requests.
pub const REQUEST: Layout = Layout {
    name: "TLP request header",
    order: Order::Network,
    len: 16,
    fields: &REQUEST_FIELDS,
    doc: "Memory read/write request header, 4-DW form.",
};

/// Completions with and without data.
pub const COMPLETION: Layout = Layout {
    name: "TLP completion header",
    order: Order::Network,
    len: 16,
    fields: &COMPLETION_FIELDS,
    doc: "Completion header; DW 3 is carried as 0.",
};

/// `fmt` values (PCIe 2.2.1).
pub const FMT_3DW_NO_DATA: u8 = 0b000;
pub const FMT_4DW_NO_DATA: u8 = 0b001;
pub const FMT_3DW_DATA: u8 = 0b010;
pub const FMT_4DW_DATA: u8 = 0b011;
/// `type` of memory requests and of completions.
pub const TYPE_MEM: u8 = 0b0_0000;
pub const TYPE_CPL: u8 = 0b0_1010;

/// Completion status (PCIe 2.2.9).
pub const CPL_SC: u8 = 0b000;
pub const CPL_UR: u8 = 0b001;
pub const CPL_CA: u8 = 0b100;

/// A DW is 4 bytes.
pub const DW: usize = 4;
/// Requests must not cross a 4 KiB boundary (PCIe 2.2.7).
pub const PAGE: u64 = 4096;
/// Width of the tag field (8-bit tags).
pub const TAG_W: usize = 8;
/// Read requests the NIC keeps outstanding at once (tags 0..DMA_TAGS).
pub const DMA_TAGS: usize = 16;
/// The longest memory read request the NIC issues, in bytes. Its requests also never cross a
/// boundary aligned to this size, so they never cross 4 KiB either. The host's max read
/// request size must be at least this.
pub const DMA_READ_REQUEST: usize = 512;
/// The longest memory write payload the NIC issues, in bytes; writes are cut at boundaries
/// aligned to it (and so at 4 KiB). The host's max payload size must be at least this.
pub const DMA_WRITE_PAYLOAD: usize = 256;
/// The longest single DMA transfer a NIC block asks for: one packet at the largest PMTU.
pub const DMA_MAX_LEN: usize = 4096;
/// Requester ID the NIC puts in its requests (bus 1, device 0, function 0).
pub const NIC_REQUESTER_ID: u16 = 0x0100;

/// Request kinds the host interface sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    MemRead,
    MemWrite,
    Completion,
    CompletionData,
    Other,
}

/// Classify a `fmt`/`type` pair.
pub fn kind(fmt: u8, ty: u8) -> Kind {
    match (fmt, ty) {
        (FMT_3DW_NO_DATA | FMT_4DW_NO_DATA, TYPE_MEM) => Kind::MemRead,
        (FMT_3DW_DATA | FMT_4DW_DATA, TYPE_MEM) => Kind::MemWrite,
        (FMT_3DW_NO_DATA, TYPE_CPL) => Kind::Completion,
        (FMT_3DW_DATA, TYPE_CPL) => Kind::CompletionData,
        _ => Kind::Other,
    }
}

/// A TLP header as plain fields, for models and tests (the HDL reads the packed form).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub fmt: u8,
    pub ty: u8,
    /// Length in DW (1..=1024).
    pub length: u16,
    pub requester_id: u16,
    pub tag: u8,
    /// Requests: first DW byte enables in bits 3..0, last DW in bits 7..4.
    pub be: u8,
    pub addr: u64,
    pub completer_id: u16,
    pub status: u8,
    pub byte_count: u16,
    pub lower_addr: u8,
}

impl Header {
    /// Pack into the 128-bit big-endian form.
    pub fn pack(&self) -> u128 {
        let mut b = [0u8; 16];
        let is_cpl = self.ty == TYPE_CPL;
        let l = if is_cpl { &COMPLETION } else { &REQUEST };
        let mut put = |name: &str, v: u128| {
            if let Some(fd) = l.find(name) {
                l.set(fd, &mut b, v);
            }
        };
        put("fmt", self.fmt.into());
        put("type", self.ty.into());
        put("length", (self.length & 0x3FF).into());
        put("requester_id", self.requester_id.into());
        put("tag", self.tag.into());
        if is_cpl {
            put("completer_id", self.completer_id.into());
            put("status", self.status.into());
            put("byte_count", (self.byte_count & 0xFFF).into());
            put("lower_addr", (self.lower_addr & 0x7F).into());
        } else {
            put("be", self.be.into());
            put("addr", self.addr.into());
        }
        u128::from_be_bytes(b)
    }

    /// Unpack from the 128-bit big-endian form.
    pub fn unpack(v: u128) -> Header {
        let b = v.to_be_bytes();
        let ty = COMPLETION.get(&COMPLETION.field("type"), &b) as u8;
        let is_cpl = ty == TYPE_CPL;
        let l = if is_cpl { &COMPLETION } else { &REQUEST };
        let get = |name: &str| l.find(name).map_or(0, |fd| l.get(fd, &b));
        let len = get("length") as u16;
        let mut h = Header {
            fmt: get("fmt") as u8,
            ty,
            length: if len == 0 { 1024 } else { len },
            requester_id: get("requester_id") as u16,
            tag: get("tag") as u8,
            ..Header::default()
        };
        if is_cpl {
            h.completer_id = get("completer_id") as u16;
            h.status = get("status") as u8;
            h.byte_count = get("byte_count") as u16;
            h.lower_addr = get("lower_addr") as u8;
        } else {
            h.be = get("be") as u8;
            h.addr = get("addr") as u64;
        }
        h
    }

    pub fn kind(&self) -> Kind {
        kind(self.fmt, self.ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_tile_four_dwords() {
        REQUEST.check().unwrap();
        COMPLETION.check().unwrap();
    }

    #[test]
    fn a_memory_write_packs_as_pcie_draws_it() {
        let h = Header {
            fmt: FMT_4DW_DATA,
            ty: TYPE_MEM,
            length: 2,
            requester_id: 0x0100,
            tag: 0x5A,
            be: 0xFF,
            addr: 0x1234_5678_9ABC_DEF0,
            ..Header::default()
        };
        let v = h.pack();
        // DW0 = 0x60000002: fmt 011, type 00000, length 2.
        assert_eq!((v >> 96) as u32, 0x6000_0002);
        assert_eq!((v >> 64) as u32, 0x0100_5AFF);
        assert_eq!(v as u64, 0x1234_5678_9ABC_DEF0);
        assert_eq!(Header::unpack(v), h);
        assert_eq!(h.kind(), Kind::MemWrite);
        let lsb = REQUEST.lsb(&REQUEST.field("tag"));
        assert_eq!((v >> lsb) as u8, 0x5A);
    }

    #[test]
    fn a_completion_round_trips() {
        let h = Header {
            fmt: FMT_3DW_DATA,
            ty: TYPE_CPL,
            length: 1024,
            requester_id: 0x0100,
            tag: 7,
            completer_id: 0x0200,
            status: CPL_SC,
            byte_count: 4095,
            lower_addr: 0x44,
            ..Header::default()
        };
        assert_eq!(Header::unpack(h.pack()), h);
        assert_eq!(h.kind(), Kind::CompletionData);
    }
}
