//! The RoCEv2 invariant CRC (IBA Annex A17.3.3, "ICRC").
//!
//! The ICRC is CRC-32 (as [`crate::crc::crc32`]) over, in order: eight bytes of 0xFF standing
//! in for the InfiniBand LRH, the IP header with its variant fields set to ones, the UDP header
//! with its checksum set to ones, the BTH with byte 4 (FECN, BECN, reserved) set to ones, and
//! everything after it up to the ICRC itself. It travels least-significant byte first.
//!
//! [`MASKED_FIELDS`] is the one table of which bits are forced to one; the HDL builds its
//! per-beat mask ROMs from it through [`IcrcLayout::masked_bytes`].

use crate::crc;
use crate::headers::*;
use thiserror::Error;

/// Register state after the eight 0xFF bytes that stand in for the LRH (rxe's seed).
pub const SEED: u32 = 0xDEBB_20E3;

/// Which header a masked field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Ipv4,
    Ipv6,
    Udp,
    Bth,
}

/// A byte of a header whose `mask` bits are replaced by ones for the ICRC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskedByte {
    pub layer: Layer,
    pub offset: usize,
    pub mask: u8,
}

const fn mb(layer: Layer, offset: usize, mask: u8) -> MaskedByte {
    MaskedByte {
        layer,
        offset,
        mask,
    }
}

/// Every bit the ICRC treats as ones (IBA A17.3.3; rxe `rxe_icrc_hdr`).
pub const MASKED_FIELDS: &[MaskedByte] = &[
    // IPv4: type of service (DSCP + ECN), time to live, header checksum.
    mb(Layer::Ipv4, IPV4_TOS_OFFSET, 0xFF),
    mb(Layer::Ipv4, IPV4_TTL_OFFSET, 0xFF),
    mb(Layer::Ipv4, IPV4_CHECKSUM_OFFSET, 0xFF),
    mb(Layer::Ipv4, IPV4_CHECKSUM_OFFSET + 1, 0xFF),
    // IPv6: traffic class (low nibble of byte 0, high nibble of byte 1), flow label, hop limit.
    mb(Layer::Ipv6, 0, 0x0F),
    mb(Layer::Ipv6, 1, 0xFF),
    mb(Layer::Ipv6, 2, 0xFF),
    mb(Layer::Ipv6, 3, 0xFF),
    mb(Layer::Ipv6, IPV6_HOP_LIMIT_OFFSET, 0xFF),
    // UDP checksum.
    mb(Layer::Udp, UDP_CHECKSUM_OFFSET, 0xFF),
    mb(Layer::Udp, UDP_CHECKSUM_OFFSET + 1, 0xFF),
    // BTH byte 4: FECN, BECN, reserved.
    mb(Layer::Bth, BTH_FECN_BECN_OFFSET, 0xFF),
];

/// IP version of a RoCEv2 frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IpVersion {
    V4,
    V6,
}

/// Where the headers of a RoCEv2 frame sit, for a given VLAN tagging and IP version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IcrcLayout {
    pub vlan: bool,
    pub ip: IpVersion,
}

impl IcrcLayout {
    /// All four layouts ferroce handles.
    pub const ALL: [IcrcLayout; 4] = [
        IcrcLayout {
            vlan: false,
            ip: IpVersion::V4,
        },
        IcrcLayout {
            vlan: false,
            ip: IpVersion::V6,
        },
        IcrcLayout {
            vlan: true,
            ip: IpVersion::V4,
        },
        IcrcLayout {
            vlan: true,
            ip: IpVersion::V6,
        },
    ];

    /// Offset of the EtherType that announces the IP header.
    pub fn ethertype_offset(&self) -> usize {
        if self.vlan {
            VLAN_INNER_TYPE_OFFSET
        } else {
            ETH_TYPE_OFFSET
        }
    }
    /// Offset of the IP header: where the ICRC's coverage starts.
    pub fn ip_offset(&self) -> usize {
        self.ethertype_offset() + 2
    }
    pub fn ip_hdr_len(&self) -> usize {
        match self.ip {
            IpVersion::V4 => IPV4_HDR_LEN,
            IpVersion::V6 => IPV6_HDR_LEN,
        }
    }
    pub fn udp_offset(&self) -> usize {
        self.ip_offset() + self.ip_hdr_len()
    }
    pub fn bth_offset(&self) -> usize {
        self.udp_offset() + UDP_HDR_LEN
    }
    /// Offset of the 16-bit IP length field (IPv4 total length, IPv6 payload length).
    pub fn ip_len_offset(&self) -> usize {
        self.ip_offset()
            + match self.ip {
                IpVersion::V4 => IPV4_TOTAL_LEN_OFFSET,
                IpVersion::V6 => IPV6_PAYLOAD_LEN_OFFSET,
            }
    }
    /// What the IP length field adds to the IP offset to reach the end of the IP packet.
    pub fn ip_len_bias(&self) -> usize {
        match self.ip {
            IpVersion::V4 => 0,
            IpVersion::V6 => IPV6_HDR_LEN,
        }
    }
    /// Offset of the byte that names the transport protocol (IPv4 protocol, IPv6 next header).
    pub fn ip_proto_offset(&self) -> usize {
        self.ip_offset()
            + match self.ip {
                IpVersion::V4 => IPV4_PROTOCOL_OFFSET,
                IpVersion::V6 => IPV6_NEXT_HEADER_OFFSET,
            }
    }
    /// Frame offsets and masks of every byte the ICRC treats as (partly) ones.
    pub fn masked_bytes(&self) -> Vec<(usize, u8)> {
        MASKED_FIELDS
            .iter()
            .filter_map(|m| {
                let base = match (m.layer, self.ip) {
                    (Layer::Ipv4, IpVersion::V4) | (Layer::Ipv6, IpVersion::V6) => self.ip_offset(),
                    (Layer::Ipv4, _) | (Layer::Ipv6, _) => return None,
                    (Layer::Udp, _) => self.udp_offset(),
                    (Layer::Bth, _) => self.bth_offset(),
                };
                Some((base + m.offset, m.mask))
            })
            .collect()
    }
    /// Smallest IP packet that holds the headers and the ICRC.
    pub fn min_ip_len(&self) -> usize {
        self.ip_hdr_len() + UDP_HDR_LEN + BTH_LEN + ICRC_LEN
    }
}

/// Largest IP length (IPv4 total length, or IPv6 payload length plus its 40-byte header) that
/// ferroce accepts: 16 KiB, above any Ethernet jumbo frame. Longer lengths are [`IcrcError::BadIpLength`].
pub const MAX_IP_LEN: usize = 16384;

/// The status bits the ICRC engine reports with each frame (`m_icrc_tuser`); zero means the
/// frame is RoCEv2, complete, and carries the ICRC it should. One table for the HDL, the
/// drivers, the Python harness and the docs.
pub mod flags {
    /// EtherType (after an optional 802.1Q tag) is neither IPv4 nor IPv6, or the IP version
    /// field disagrees with it.
    pub const NOT_IP: u8 = 1 << 0;
    /// IPv4 header with options (IHL != 5).
    pub const IP_OPTIONS: u8 = 1 << 1;
    /// Not UDP, or not UDP destination port 4791.
    pub const NOT_ROCE: u8 = 1 << 2;
    /// IP length shorter than the RoCEv2 headers plus ICRC, or longer than [`super::MAX_IP_LEN`].
    pub const BAD_LENGTH: u8 = 1 << 3;
    /// The frame ends before its headers or before the last byte of its ICRC.
    pub const TRUNCATED: u8 = 1 << 4;
    /// `tkeep` broke the stream convention (not all ones before the last beat, or not
    /// contiguous from lane 0 on it).
    pub const BAD_KEEP: u8 = 1 << 5;
    /// The ICRC the frame carries differs from the computed one.
    pub const MISMATCH: u8 = 1 << 6;
    /// Name and meaning of every flag, in bit order.
    pub const ALL: &[(u8, &str, &str)] = &[
        (
            NOT_IP,
            "not_ip",
            "not IPv4/IPv6, or IP version disagrees with the EtherType",
        ),
        (IP_OPTIONS, "ip_options", "IPv4 header with options"),
        (NOT_ROCE, "not_roce", "not UDP to port 4791"),
        (
            BAD_LENGTH,
            "bad_length",
            "IP length too short for RoCEv2 or over MAX_IP_LEN",
        ),
        (
            TRUNCATED,
            "truncated",
            "frame ends before its headers or its ICRC",
        ),
        (BAD_KEEP, "bad_keep", "tkeep breaks the stream convention"),
        (
            MISMATCH,
            "mismatch",
            "carried ICRC differs from the computed one",
        ),
    ];
}

/// Why a frame has no ICRC.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum IcrcError {
    #[error("frame of {len} bytes ends inside the {what}")]
    Truncated { what: &'static str, len: usize },
    #[error("EtherType {0:#06x} is neither IPv4 nor IPv6")]
    NotIp(u16),
    #[error("IPv4 header with IHL {0}: RoCEv2 frames carry no IP options")]
    Ipv4Options(u8),
    #[error("IP version field {0} does not match the EtherType")]
    BadVersion(u8),
    #[error("IP protocol {0} is not UDP")]
    NotUdp(u8),
    #[error("UDP destination port {0} is not RoCEv2's 4791")]
    NotRoce(u16),
    #[error(
        "IP length {ip_len} is too short for the RoCEv2 headers and ICRC, or over {MAX_IP_LEN}"
    )]
    BadIpLength { ip_len: usize },
}

impl IcrcError {
    /// The [`flags`] bit the ICRC engine raises for this error.
    pub fn flag(&self) -> u8 {
        match self {
            IcrcError::Truncated { .. } => flags::TRUNCATED,
            IcrcError::NotIp(_) | IcrcError::BadVersion(_) => flags::NOT_IP,
            IcrcError::Ipv4Options(_) => flags::IP_OPTIONS,
            IcrcError::NotUdp(_) | IcrcError::NotRoce(_) => flags::NOT_ROCE,
            IcrcError::BadIpLength { .. } => flags::BAD_LENGTH,
        }
    }
}

/// Parse the layout of a RoCEv2 frame (Ethernet first, no FCS) and return it with the frame
/// offset where the ICRC coverage ends (the offset of the ICRC itself).
pub fn parse(frame: &[u8]) -> Result<(IcrcLayout, usize), IcrcError> {
    let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
    let need = |n: usize, what: &'static str| {
        if frame.len() < n {
            Err(IcrcError::Truncated {
                what,
                len: frame.len(),
            })
        } else {
            Ok(())
        }
    };
    need(ETH_HDR_LEN, "Ethernet header")?;
    let mut ethertype = be16(ETH_TYPE_OFFSET);
    let vlan = ethertype == ETHERTYPE_VLAN;
    if vlan {
        need(ETH_HDR_LEN + VLAN_TAG_LEN, "802.1Q tag")?;
        ethertype = be16(VLAN_INNER_TYPE_OFFSET);
    }
    let ip = match ethertype {
        ETHERTYPE_IPV4 => IpVersion::V4,
        ETHERTYPE_IPV6 => IpVersion::V6,
        other => return Err(IcrcError::NotIp(other)),
    };
    let layout = IcrcLayout { vlan, ip };
    need(layout.bth_offset() + BTH_LEN, "RoCEv2 headers")?;
    let ip0 = frame[layout.ip_offset()];
    match ip {
        IpVersion::V4 if ip0 >> 4 != 4 => return Err(IcrcError::BadVersion(ip0 >> 4)),
        IpVersion::V4 if ip0 & 0x0F != 5 => return Err(IcrcError::Ipv4Options(ip0 & 0x0F)),
        IpVersion::V6 if ip0 >> 4 != 6 => return Err(IcrcError::BadVersion(ip0 >> 4)),
        _ => {}
    }
    let proto = frame[layout.ip_proto_offset()];
    if proto != IP_PROTO_UDP {
        return Err(IcrcError::NotUdp(proto));
    }
    let dport = be16(layout.udp_offset() + UDP_DST_PORT_OFFSET);
    if dport != ROCEV2_UDP_PORT {
        return Err(IcrcError::NotRoce(dport));
    }
    let ip_len = usize::from(be16(layout.ip_len_offset())) + layout.ip_len_bias();
    if ip_len < layout.min_ip_len() || ip_len > MAX_IP_LEN {
        return Err(IcrcError::BadIpLength { ip_len });
    }
    let end = layout.ip_offset() + ip_len - ICRC_LEN;
    Ok((layout, end))
}

/// The bytes the ICRC covers, with the masked fields set to ones (without the LRH stand-in).
/// `frame` may end at the ICRC, or carry the ICRC, Ethernet padding or an FCS after it.
pub fn masked_coverage(frame: &[u8]) -> Result<Vec<u8>, IcrcError> {
    let (layout, end) = parse(frame)?;
    if frame.len() < end {
        return Err(IcrcError::Truncated {
            what: "RoCEv2 payload",
            len: frame.len(),
        });
    }
    let mut covered = frame[layout.ip_offset()..end].to_vec();
    for (offset, mask) in layout.masked_bytes() {
        covered[offset - layout.ip_offset()] |= mask;
    }
    Ok(covered)
}

/// Reference ICRC of a RoCEv2 frame (Ethernet first, no FCS needed; anything after the ICRC's
/// place, such as the ICRC itself or padding, is ignored).
pub fn icrc(frame: &[u8]) -> Result<u32, IcrcError> {
    let covered = masked_coverage(frame)?;
    Ok(crc::register_update(SEED, &covered) ^ crc::XOR_OUT)
}

/// The ICRC a frame carries (little-endian at the end of the IP packet), if present.
pub fn carried_icrc(frame: &[u8]) -> Result<u32, IcrcError> {
    let (_, end) = parse(frame)?;
    frame
        .get(end..end + ICRC_LEN)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(IcrcError::Truncated {
            what: "ICRC",
            len: frame.len(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_is_eight_ff_bytes() {
        assert_eq!(crc::register_update(crc::INIT, &[0xFF; 8]), SEED);
    }

    #[test]
    fn layouts() {
        let l = IcrcLayout {
            vlan: true,
            ip: IpVersion::V6,
        };
        assert_eq!(l.ip_offset(), 18);
        assert_eq!(l.bth_offset(), 18 + 40 + 8);
        let m = IcrcLayout {
            vlan: false,
            ip: IpVersion::V4,
        }
        .masked_bytes();
        assert_eq!(
            m,
            vec![
                (15, 0xFF),
                (22, 0xFF),
                (24, 0xFF),
                (25, 0xFF),
                (40, 0xFF),
                (41, 0xFF),
                (46, 0xFF)
            ]
        );
    }
}
