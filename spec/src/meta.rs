//! Records that travel between NIC blocks beside a payload stream (ARCHITECTURE: "headers
//! travel as a metadata stream beside the payload stream"). Host order: a record read as one
//! little-endian integer has each field at its `bit`.

use crate::headers::{BTH_LEN, ETH_HDR_LEN, IPV4_HDR_LEN, UDP_HDR_LEN};
use crate::layout::{f, Layout};
use crate::opcodes::{opcode, IMPLEMENTED};

/// One packet for the TX header builder: everything that is not the payload.
pub const TX_META: Layout = Layout::host(
    "TX packet metadata",
    64,
    &[
        f("dst_mac", 0, 48, "destination MAC"),
        f("src_mac", 48, 48, "source MAC"),
        f("src_ip", 96, 32, "source IPv4 address"),
        f("dst_ip", 128, 32, "destination IPv4 address"),
        f(
            "src_port",
            160,
            16,
            "UDP source port (flow entropy, A17.3.1)",
        ),
        f("dscp", 176, 6, "IPv4 DSCP"),
        f("ecn", 182, 2, "IPv4 ECN"),
        f("ttl", 184, 8, "IPv4 time to live"),
        f("opcode", 192, 8, "BTH opcode; decides the extended headers"),
        f("se", 200, 1, "BTH solicited event"),
        f("ack_req", 201, 1, "BTH acknowledge request"),
        f("pkey", 208, 16, "BTH partition key"),
        f("dest_qp", 224, 24, "BTH destination QP"),
        f("psn", 256, 24, "BTH packet sequence number"),
        f(
            "pay_len",
            288,
            13,
            "payload bytes (0 ..= 4096); the payload packet must carry exactly these",
        ),
        f(
            "ext",
            384,
            128,
            "extended headers in wire order as one big-endian value, first byte in bits \
             511..504 (a RETH fills it; an AETH is its top 32 bits)",
        ),
    ],
    "Metadata of one RoCEv2 packet for the TX header builder (`hdl::net::TxHeader`).",
);

/// Bytes of the metadata's `ext` field.
pub const TX_EXT_LEN: usize = 16;

/// Headers before the extended transport headers on an untagged IPv4 frame.
pub const TX_BASE_HDR_LEN: usize = ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + BTH_LEN;

/// Longest header the builder emits.
pub const TX_MAX_HDR_LEN: usize = TX_BASE_HDR_LEN + TX_EXT_LEN;

/// Largest payload of one packet (the largest PMTU).
pub const TX_MAX_PAYLOAD: usize = 4096;

/// IPv4 time to live and flags (don't fragment) the builder writes.
pub const IPV4_FLAGS_DF: u8 = 0b010;

/// The opcodes the TX builder sends, with their extended-header bytes: every implemented
/// opcode (`opcodes::IMPLEMENTED`).
pub fn tx_opcodes() -> Vec<(u8, usize)> {
    IMPLEMENTED
        .iter()
        .map(|&c| {
            let op = opcode(c).expect("implemented opcodes are in the table");
            assert!(
                op.ext_len() <= TX_EXT_LEN,
                "{} ext headers too long",
                op.name
            );
            (c, op.ext_len())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_consistent() {
        TX_META.check().expect("TX_META");
        assert_eq!(TX_MAX_HDR_LEN, 70);
        assert_eq!(
            TX_META.field("ext").width,
            TX_EXT_LEN * 8,
            "ext holds TX_EXT_LEN bytes"
        );
        assert!(TX_MAX_PAYLOAD < 1 << TX_META.field("pay_len").width);
        let ops = tx_opcodes();
        assert!(ops.iter().any(|&(_, e)| e == 16) && ops.iter().any(|&(_, e)| e == 4));
    }
}
