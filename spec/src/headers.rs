//! Wire header layouts (Ethernet, 802.1Q, IPv4, IPv6, UDP, the IBA transport headers) and the
//! offsets, lengths and protocol numbers derived from them. Offsets are in bytes from the start
//! of the header they belong to; every one is computed from a layout, none typed by hand.

use crate::layout::{f, Layout};

/// Ethernet II header (IEEE 802.3 clause 3.1.1).
pub const ETH: Layout = Layout::net(
    "Ethernet",
    14,
    &[
        f("dst", 0, 48, "destination MAC"),
        f("src", 48, 48, "source MAC"),
        f("ethertype", 96, 16, "EtherType, or the 802.1Q TPID 0x8100"),
    ],
    "Ethernet II header; the FCS trails the frame.",
);

/// 802.1Q tag as it follows the source MAC (TPID included).
pub const VLAN: Layout = Layout::net(
    "802.1Q tag",
    4,
    &[
        f("tpid", 0, 16, "0x8100"),
        f("pcp", 16, 3, "priority code point (PFC priority)"),
        f("dei", 19, 1, "drop eligible"),
        f("vid", 20, 12, "VLAN identifier"),
    ],
    "802.1Q tag between the source MAC and the inner EtherType.",
);

/// IPv4 header without options (RFC 791 3.1). rxe and ferroce carry RoCEv2 with IHL = 5.
pub const IPV4: Layout = Layout::net(
    "IPv4",
    20,
    &[
        f("version", 0, 4, "4"),
        f("ihl", 4, 4, "header length in 32-bit words; 5 (no options)"),
        f("dscp", 8, 6, "differentiated services code point"),
        f("ecn", 14, 2, "explicit congestion notification"),
        f("total_len", 16, 16, "IP header + payload bytes"),
        f("id", 32, 16, "identification"),
        f("flags", 48, 3, "bit 1: don't fragment"),
        f("frag_off", 51, 13, "fragment offset; 0"),
        f("ttl", 64, 8, "time to live"),
        f("protocol", 72, 8, "17 (UDP)"),
        f("checksum", 80, 16, "header checksum (RFC 1071)"),
        f("src", 96, 32, "source address"),
        f("dst", 128, 32, "destination address"),
    ],
    "IPv4 header, no options.",
);

/// IPv6 header (RFC 8200 3).
pub const IPV6: Layout = Layout::net(
    "IPv6",
    40,
    &[
        f("version", 0, 4, "6"),
        f("traffic_class", 4, 8, "DSCP and ECN"),
        f("flow_label", 12, 20, "flow label"),
        f("payload_len", 32, 16, "bytes after this header"),
        f("next_header", 48, 8, "17 (UDP)"),
        f("hop_limit", 56, 8, "hop limit"),
        f("src", 64, 128, "source address"),
        f("dst", 192, 128, "destination address"),
    ],
    "IPv6 header, no extension headers.",
);

/// UDP header (RFC 768).
pub const UDP: Layout = Layout::net(
    "UDP",
    8,
    &[
        f(
            "src_port",
            0,
            16,
            "source port: flow entropy for RoCEv2 (A17.3.1)",
        ),
        f("dst_port", 16, 16, "4791 for RoCEv2"),
        f("len", 32, 16, "UDP header + payload bytes"),
        f(
            "checksum",
            48,
            16,
            "0: RoCEv2 over IPv4 sends no UDP checksum",
        ),
    ],
    "UDP header.",
);

/// Base Transport Header (IBA 9.2).
pub const BTH: Layout = Layout::net(
    "BTH",
    12,
    &[
        f(
            "opcode",
            0,
            8,
            "transport and operation (see the opcode table)",
        ),
        f("se", 8, 1, "solicited event"),
        f("m", 9, 1, "migration state"),
        f(
            "pad",
            10,
            2,
            "pad bytes added to the payload to a 4-byte multiple",
        ),
        f("tver", 12, 4, "transport header version; 0"),
        f("pkey", 16, 16, "partition key; 0xFFFF"),
        f("fecn", 32, 1, "forward explicit congestion notification"),
        f("becn", 33, 1, "backward explicit congestion notification"),
        f("resv6", 34, 6, "reserved"),
        f("dest_qp", 40, 24, "destination queue pair"),
        f("ack_req", 64, 1, "acknowledge request"),
        f("resv7", 65, 7, "reserved"),
        f("psn", 72, 24, "packet sequence number"),
    ],
    "Base Transport Header.",
);

/// RDMA Extended Transport Header (IBA 9.3.3).
pub const RETH: Layout = Layout::net(
    "RETH",
    16,
    &[
        f("va", 0, 64, "remote virtual address"),
        f("rkey", 64, 32, "remote key"),
        f(
            "dma_len",
            96,
            32,
            "length of the whole RDMA operation in bytes",
        ),
    ],
    "RDMA Extended Transport Header.",
);

/// ACK Extended Transport Header (IBA 9.3.5).
pub const AETH: Layout = Layout::net(
    "AETH",
    4,
    &[
        f(
            "syndrome",
            0,
            8,
            "ACK/NAK/RNR and credit or NAK code (IBA 9.7.5.1)",
        ),
        f("msn", 8, 24, "message sequence number"),
    ],
    "ACK Extended Transport Header.",
);

/// AETH syndromes (IBA 9.7.5.1, table 43): the top three bits say ACK (000), RNR NAK (001) or
/// NAK (011); an ACK's low five bits are a credit count, 31 meaning "no credit information"
/// (what a responder without end-to-end credits sends); a NAK's are its code.
pub const AETH_ACK: u8 = 0x1F;
pub const AETH_NAK_PSN_SEQ: u8 = 0x60;
pub const AETH_NAK_INV_REQ: u8 = 0x61;
pub const AETH_NAK_REM_ACCESS: u8 = 0x62;
pub const AETH_NAK_REM_OP: u8 = 0x63;
/// An RNR NAK: the top three bits 001, the low five the RNR timer code (IBA table 45).
pub const AETH_RNR_NAK: u8 = 0x20;
/// The RNR timer code a QP's responder sends when its `min_rnr_timer` was never set: 1,
/// 0.01 ms (the driver's default; each QP's own is in its context).
pub const RNR_TIMER_DEFAULT: u8 = 1;
/// The RNR NAK timer codes' delays in microseconds (IBA 9.7.5.2.8, table 45), by code.
pub const RNR_TIMER_US: [f64; 32] = [
    655_360.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0, 640.0, 960.0,
    1_280.0, 1_920.0, 2_560.0, 3_840.0, 5_120.0, 7_680.0, 10_240.0, 15_360.0, 20_480.0, 30_720.0,
    40_960.0, 61_440.0, 81_920.0, 122_880.0, 163_840.0, 245_760.0, 327_680.0, 491_520.0,
];
/// AckReq: besides a message's last packet, a request packet whose PSN's low bits are all
/// ones under this mask (every 64th PSN) asks for an ACK, so the requester's `una` moves
/// inside long messages and a timeout goes back to there, not to the message's start
/// (Linux's rxe asks every 64 packets too).
pub const ACKREQ_PSN_MASK: u32 = 63;
/// The requester's window: a QP sends a request packet only while fewer than this many of its
/// PSNs past the oldest unacknowledged one (`una`) are out, so a message of any length (up to
/// 2^23 packets at PMTU 256) never has more than this outstanding, and a PSN is never
/// ambiguous at the responder (IBA 9.7.1 allows 2^23). A power of two, well above the AckReq
/// interval, so a window's worth of ACKs is always on its way (Linux's rxe allows 128).
pub const MAX_UNACKED_PSNS: u32 = 1024;
/// How far behind `una` a QP's next PSN may be and still be read as behind (a retry sent
/// again from before the ACKs that came meanwhile): 2^22. A PSN 2^22 to 2^23 + 1023 past
/// `una` is ahead, out of the window: after a READ of 2^23 PSNs (2^31 bytes at PMTU 256) the
/// next PSN is 2^23 past `una`, which the PSN space alone cannot tell from 2^23 behind. A retry
/// further behind than this waits for its ACK timeout, which sends again from `una`.
pub const MAX_PSNS_BEHIND: u32 = 1 << 22;
/// The NIC's timers count in units of 256 ns, 1/16 of IBA's 4.096 us timeout unit: a local ACK
/// timeout `t` (1..31) is `2^(t + 4)` units.
pub const TIMER_UNIT_NS: u64 = 256;
/// An RNR wait in timer units: the code's delay rounded up, plus one unit (a wait starts
/// anywhere inside a unit, so it is never shorter than the delay).
pub const fn rnr_wait_units(code: usize) -> u64 {
    let ns = (RNR_TIMER_US[code] * 1000.0) as u64;
    ns.div_ceil(TIMER_UNIT_NS) + 1
}

/// Immediate data (IBA 9.3.4).
pub const IMMDT: Layout = Layout::net(
    "ImmDt",
    4,
    &[f("imm", 0, 32, "immediate data")],
    "Immediate data.",
);

/// Datagram Extended Transport Header (IBA 9.3.2).
pub const DETH: Layout = Layout::net(
    "DETH",
    8,
    &[
        f("qkey", 0, 32, "queue key"),
        f("resv8", 32, 8, "reserved"),
        f("src_qp", 40, 24, "source queue pair"),
    ],
    "Datagram Extended Transport Header.",
);

/// Atomic Extended Transport Header (IBA 9.3.6).
pub const ATOMIC_ETH: Layout = Layout::net(
    "AtomicETH",
    28,
    &[
        f("va", 0, 64, "remote virtual address"),
        f("rkey", 64, 32, "remote key"),
        f("swap_add", 96, 64, "swap or add data"),
        f("compare", 160, 64, "compare data"),
    ],
    "Atomic Extended Transport Header.",
);

/// Atomic ACK Extended Transport Header (IBA 9.3.7).
pub const ATOMIC_ACK_ETH: Layout = Layout::net(
    "AtomicAckETH",
    8,
    &[f("orig", 0, 64, "original remote data")],
    "Atomic ACK Extended Transport Header.",
);

/// Invalidate Extended Transport Header (IBA 9.3.9).
pub const IETH: Layout = Layout::net(
    "IETH",
    4,
    &[f("rkey", 0, 32, "R_Key to invalidate")],
    "Invalidate Extended Transport Header.",
);

/// Every wire header layout, for checks and docs.
pub const LAYOUTS: &[&Layout] = &[
    &ETH,
    &VLAN,
    &IPV4,
    &IPV6,
    &UDP,
    &BTH,
    &RETH,
    &AETH,
    &IMMDT,
    &DETH,
    &ATOMIC_ETH,
    &ATOMIC_ACK_ETH,
    &IETH,
];

pub const ETH_HDR_LEN: usize = ETH.len;
/// Offset of the EtherType (or the 802.1Q TPID) in the Ethernet header.
pub const ETH_TYPE_OFFSET: usize = ETH.field("ethertype").byte();
/// 802.1Q tag length (TPID + TCI); the inner EtherType follows it.
pub const VLAN_TAG_LEN: usize = VLAN.len;
/// Offset of the EtherType that follows an 802.1Q tag.
pub const VLAN_INNER_TYPE_OFFSET: usize = ETH_TYPE_OFFSET + VLAN_TAG_LEN;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_VLAN: u16 = 0x8100;

pub const IPV4_HDR_LEN: usize = IPV4.len;
pub const IPV4_TOS_OFFSET: usize = IPV4.field("dscp").byte();
pub const IPV4_TOTAL_LEN_OFFSET: usize = IPV4.field("total_len").byte();
pub const IPV4_TTL_OFFSET: usize = IPV4.field("ttl").byte();
pub const IPV4_PROTOCOL_OFFSET: usize = IPV4.field("protocol").byte();
pub const IPV4_CHECKSUM_OFFSET: usize = IPV4.field("checksum").byte();

pub const IPV6_HDR_LEN: usize = IPV6.len;
pub const IPV6_PAYLOAD_LEN_OFFSET: usize = IPV6.field("payload_len").byte();
pub const IPV6_NEXT_HEADER_OFFSET: usize = IPV6.field("next_header").byte();
pub const IPV6_HOP_LIMIT_OFFSET: usize = IPV6.field("hop_limit").byte();

pub const IP_PROTO_UDP: u8 = 17;

pub const UDP_HDR_LEN: usize = UDP.len;
pub const UDP_DST_PORT_OFFSET: usize = UDP.field("dst_port").byte();
pub const UDP_CHECKSUM_OFFSET: usize = UDP.field("checksum").byte();
/// IANA-assigned UDP destination port for RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;

pub const BTH_LEN: usize = BTH.len;
/// BTH byte 4 holds FECN, BECN and six reserved bits (IBA 9.2, RoCEv2 A17.3.3).
pub const BTH_FECN_BECN_OFFSET: usize = BTH.field("fecn").byte();

/// Invariant CRC trailer.
pub const ICRC_LEN: usize = 4;
/// Ethernet frame check sequence.
pub const FCS_LEN: usize = 4;
/// Minimum Ethernet frame without FCS (64 with it).
pub const ETH_MIN_FRAME_NO_FCS: usize = 60;

/// The longest frame the MAC takes, FCS included: a 9,000-byte jumbo payload (MTU) behind an
/// 802.1Q-tagged Ethernet header, and the FCS. Longer ones are dropped and counted.
pub const ETH_MAX_FRAME: usize = 9000 + ETH_HDR_LEN + VLAN_TAG_LEN + FCS_LEN;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_tile_their_headers() {
        for l in LAYOUTS {
            l.check().unwrap();
        }
    }

    #[test]
    fn derived_offsets_match_the_standards() {
        assert_eq!(
            (ETH_TYPE_OFFSET, IPV4_TTL_OFFSET, IPV4_CHECKSUM_OFFSET),
            (12, 8, 10)
        );
        assert_eq!(
            (
                IPV6_HOP_LIMIT_OFFSET,
                UDP_CHECKSUM_OFFSET,
                BTH_FECN_BECN_OFFSET
            ),
            (7, 6, 4)
        );
    }
}
