//! Header lengths, field offsets and protocol numbers for the frames ferroce handles.
//! Offsets are in bytes from the start of the header they belong to.

/// Ethernet II header: destination MAC, source MAC, EtherType.
pub const ETH_HDR_LEN: usize = 14;
/// Offset of the EtherType (or the 802.1Q TPID) in the Ethernet header.
pub const ETH_TYPE_OFFSET: usize = 12;
/// 802.1Q tag length (TPID + TCI); the inner EtherType follows it.
pub const VLAN_TAG_LEN: usize = 4;
/// Offset of the EtherType that follows an 802.1Q tag.
pub const VLAN_INNER_TYPE_OFFSET: usize = ETH_TYPE_OFFSET + VLAN_TAG_LEN;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_VLAN: u16 = 0x8100;

/// IPv4 header without options (IHL = 5). rxe and ferroce carry RoCEv2 without IP options.
pub const IPV4_HDR_LEN: usize = 20;
pub const IPV4_TOS_OFFSET: usize = 1;
pub const IPV4_TOTAL_LEN_OFFSET: usize = 2;
pub const IPV4_TTL_OFFSET: usize = 8;
pub const IPV4_PROTOCOL_OFFSET: usize = 9;
pub const IPV4_CHECKSUM_OFFSET: usize = 10;

pub const IPV6_HDR_LEN: usize = 40;
pub const IPV6_PAYLOAD_LEN_OFFSET: usize = 4;
pub const IPV6_NEXT_HEADER_OFFSET: usize = 6;
pub const IPV6_HOP_LIMIT_OFFSET: usize = 7;

pub const IP_PROTO_UDP: u8 = 17;

pub const UDP_HDR_LEN: usize = 8;
pub const UDP_DST_PORT_OFFSET: usize = 2;
pub const UDP_CHECKSUM_OFFSET: usize = 6;
/// IANA-assigned UDP destination port for RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;

/// Base Transport Header.
pub const BTH_LEN: usize = 12;
/// BTH byte 4 holds FECN, BECN and six reserved bits (IBA 9.2, RoCEv2 A17.3.3).
pub const BTH_FECN_BECN_OFFSET: usize = 4;

/// Invariant CRC trailer.
pub const ICRC_LEN: usize = 4;
/// Ethernet frame check sequence.
pub const FCS_LEN: usize = 4;
/// Minimum Ethernet frame without FCS (64 with it).
pub const ETH_MIN_FRAME_NO_FCS: usize = 60;
