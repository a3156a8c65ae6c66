//! BTH opcodes of the RC and UD transports (IBA 9.2, table 38) and the extended headers each
//! carries, in wire order. One table: the HDL's parser and builder, the driver, the Python
//! harness and the docs all read it.

use crate::headers;
use crate::layout::Layout;

/// Extended transport headers that follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtHeader {
    /// RDMA extended transport header: virtual address, R_Key, DMA length.
    Reth,
    /// ACK extended transport header: syndrome, MSN.
    Aeth,
    /// Immediate data.
    ImmDt,
    /// Datagram extended transport header: Q_Key, source QP.
    Deth,
    /// Atomic extended transport header: VA, R_Key, swap/add data, compare data.
    AtomicEth,
    /// Atomic ACK extended transport header: original remote data.
    AtomicAckEth,
    /// Invalidate extended transport header: R_Key.
    Ieth,
}

impl ExtHeader {
    /// The header's field layout.
    pub const fn layout(self) -> &'static Layout {
        match self {
            ExtHeader::Reth => &headers::RETH,
            ExtHeader::Aeth => &headers::AETH,
            ExtHeader::ImmDt => &headers::IMMDT,
            ExtHeader::Deth => &headers::DETH,
            ExtHeader::AtomicEth => &headers::ATOMIC_ETH,
            ExtHeader::AtomicAckEth => &headers::ATOMIC_ACK_ETH,
            ExtHeader::Ieth => &headers::IETH,
        }
    }

    pub const fn size(self) -> usize {
        self.layout().len
    }
}

/// One BTH opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opcode {
    pub code: u8,
    pub name: &'static str,
    pub ext: &'static [ExtHeader],
    /// Whether the packet may carry a payload.
    pub payload: bool,
}

impl Opcode {
    /// Bytes of extended headers after the BTH.
    pub fn ext_len(&self) -> usize {
        self.ext.iter().map(|h| h.size()).sum()
    }
}

const fn op(code: u8, name: &'static str, ext: &'static [ExtHeader], payload: bool) -> Opcode {
    Opcode {
        code,
        name,
        ext,
        payload,
    }
}

use ExtHeader::*;

/// Every RC and UD opcode.
pub const OPCODES: &[Opcode] = &[
    op(0x00, "RC_SEND_FIRST", &[], true),
    op(0x01, "RC_SEND_MIDDLE", &[], true),
    op(0x02, "RC_SEND_LAST", &[], true),
    op(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", &[ImmDt], true),
    op(0x04, "RC_SEND_ONLY", &[], true),
    op(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", &[ImmDt], true),
    op(0x06, "RC_RDMA_WRITE_FIRST", &[Reth], true),
    op(0x07, "RC_RDMA_WRITE_MIDDLE", &[], true),
    op(0x08, "RC_RDMA_WRITE_LAST", &[], true),
    op(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", &[ImmDt], true),
    op(0x0A, "RC_RDMA_WRITE_ONLY", &[Reth], true),
    op(
        0x0B,
        "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        &[Reth, ImmDt],
        true,
    ),
    op(0x0C, "RC_RDMA_READ_REQUEST", &[Reth], false),
    op(0x0D, "RC_RDMA_READ_RESPONSE_FIRST", &[Aeth], true),
    op(0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", &[], true),
    op(0x0F, "RC_RDMA_READ_RESPONSE_LAST", &[Aeth], true),
    op(0x10, "RC_RDMA_READ_RESPONSE_ONLY", &[Aeth], true),
    op(0x11, "RC_ACKNOWLEDGE", &[Aeth], false),
    op(0x12, "RC_ATOMIC_ACKNOWLEDGE", &[Aeth, AtomicAckEth], false),
    op(0x13, "RC_CMP_SWAP", &[AtomicEth], false),
    op(0x14, "RC_FETCH_ADD", &[AtomicEth], false),
    op(0x16, "RC_SEND_LAST_WITH_INVALIDATE", &[Ieth], true),
    op(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", &[Ieth], true),
    op(0x64, "UD_SEND_ONLY", &[Deth], true),
    op(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", &[Deth, ImmDt], true),
];

/// Opcodes the hardware sends and accepts today; the rest are listed for the parser's
/// validity check and the docs, and arrive with the transport issues.
pub const IMPLEMENTED: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
    0x10, 0x11, 0x12, 0x13, 0x14,
];

/// Where a packet sits in its message (IBA 9.8.3 opcode sequence checks use it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    First,
    Middle,
    Last,
    Only,
}

impl Opcode {
    /// Implemented by the hardware today.
    pub fn implemented(&self) -> bool {
        IMPLEMENTED.contains(&self.code)
    }

    /// Position in the message, from the name the IBA gives it.
    pub fn position(&self) -> Position {
        if self.name.contains("_FIRST") {
            Position::First
        } else if self.name.contains("_MIDDLE") {
            Position::Middle
        } else if self.name.contains("_LAST") {
            Position::Last
        } else {
            Position::Only
        }
    }

    /// Code by name (`"RC_RDMA_WRITE_FIRST"`); panics at compile time in a `const` if absent.
    pub const fn code_of(name: &str) -> u8 {
        let mut i = 0;
        while i < OPCODES.len() {
            if crate::layout::str_eq(OPCODES[i].name, name) {
                return OPCODES[i].code;
            }
            i += 1;
        }
        panic!("no such opcode")
    }
}

pub const RC_RDMA_WRITE_FIRST: u8 = Opcode::code_of("RC_RDMA_WRITE_FIRST");
pub const RC_RDMA_WRITE_MIDDLE: u8 = Opcode::code_of("RC_RDMA_WRITE_MIDDLE");
pub const RC_RDMA_WRITE_LAST: u8 = Opcode::code_of("RC_RDMA_WRITE_LAST");
pub const RC_RDMA_WRITE_ONLY: u8 = Opcode::code_of("RC_RDMA_WRITE_ONLY");
pub const RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: u8 =
    Opcode::code_of("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE");
pub const RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: u8 =
    Opcode::code_of("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
pub const RC_SEND_FIRST: u8 = Opcode::code_of("RC_SEND_FIRST");
pub const RC_SEND_MIDDLE: u8 = Opcode::code_of("RC_SEND_MIDDLE");
pub const RC_SEND_LAST: u8 = Opcode::code_of("RC_SEND_LAST");
pub const RC_SEND_LAST_WITH_IMMEDIATE: u8 = Opcode::code_of("RC_SEND_LAST_WITH_IMMEDIATE");
pub const RC_SEND_ONLY: u8 = Opcode::code_of("RC_SEND_ONLY");
pub const RC_SEND_ONLY_WITH_IMMEDIATE: u8 = Opcode::code_of("RC_SEND_ONLY_WITH_IMMEDIATE");
pub const RC_ACKNOWLEDGE: u8 = Opcode::code_of("RC_ACKNOWLEDGE");
pub const RC_RDMA_READ_REQUEST: u8 = Opcode::code_of("RC_RDMA_READ_REQUEST");
pub const RC_RDMA_READ_RESPONSE_FIRST: u8 = Opcode::code_of("RC_RDMA_READ_RESPONSE_FIRST");
pub const RC_RDMA_READ_RESPONSE_MIDDLE: u8 = Opcode::code_of("RC_RDMA_READ_RESPONSE_MIDDLE");
pub const RC_RDMA_READ_RESPONSE_LAST: u8 = Opcode::code_of("RC_RDMA_READ_RESPONSE_LAST");
pub const RC_RDMA_READ_RESPONSE_ONLY: u8 = Opcode::code_of("RC_RDMA_READ_RESPONSE_ONLY");
pub const RC_ATOMIC_ACKNOWLEDGE: u8 = Opcode::code_of("RC_ATOMIC_ACKNOWLEDGE");
pub const RC_CMP_SWAP: u8 = Opcode::code_of("RC_CMP_SWAP");
pub const RC_FETCH_ADD: u8 = Opcode::code_of("RC_FETCH_ADD");

/// Look an opcode up by its code.
pub fn opcode(code: u8) -> Option<&'static Opcode> {
    OPCODES.iter().find(|o| o.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_sorted() {
        assert!(OPCODES.windows(2).all(|w| w[0].code < w[1].code));
        assert_eq!(opcode(0x0B).map(|o| o.ext_len()), Some(20));
        assert_eq!(opcode(0x15), None);
        assert_eq!(RC_RDMA_WRITE_ONLY, 0x0A);
        for code in IMPLEMENTED {
            assert!(opcode(*code).is_some());
        }
        assert_eq!(opcode(0x07).map(|o| o.position()), Some(Position::Middle));
        assert_eq!(opcode(0x0B).map(|o| o.position()), Some(Position::Only));
    }
}
