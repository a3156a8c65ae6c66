//! A wire fuzzer's mutations: a real RoCEv2 frame (the NIC's own traffic, the Soft-RoCE
//! captures) changed in one or two of its fields (BTH, the extended headers after it, IP and
//! UDP headers, lengths, truncation), addressed to the receiving NIC, and made to pass the
//! checks a broken frame would otherwise fail by accident: the ICRC is computed again (the
//! link appends a correct FCS) and so is the IPv4 header checksum, except when the mutation
//! is of the checked bytes' framing itself (the parser must drop those).
//!
//! A mutant never names one of the receiver's protected QPs: a frame that would is sent to a
//! victim QP or to a QPN that names none, so the test can ask that the protected QPs see
//! nothing of the fuzzing.

use ferroce_spec::headers::{
    BTH, BTH_LEN, ETH, ICRC_LEN, IPV4, IPV4_CHECKSUM_OFFSET, IPV4_HDR_LEN, IPV4_PROTOCOL_OFFSET,
    UDP, UDP_DST_PORT_OFFSET,
};
use ferroce_spec::icrc::{self, IcrcLayout, IpVersion};
use rand::Rng;

/// Where mutants go: the receiving NIC's addresses, the QPNs they must never name and the
/// QPNs they may.
#[derive(Clone, Debug)]
pub struct Target {
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    pub protected: Vec<u32>,
    pub victims: Vec<u32>,
}

/// One mutant: its bytes (no FCS), what was changed, and whether the receiver's parser must
/// drop it (a wrong address, not RoCEv2, a broken IP header, a frame shorter than its IP
/// packet) rather than pass it to the transport.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub frame: Vec<u8>,
    pub what: Mutation,
    pub parser_drops: bool,
}

/// The field mutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mutation {
    Opcode,
    Psn,
    Qpn,
    Pkey,
    BthFlags,
    BthByte48,
    ExtHeader,
    PayloadLen,
    IpLen,
    UdpLen,
    Truncate,
    DstMac,
    DstIp,
    IpVersion,
    IpProto,
    UdpPort,
    IpChecksum,
    Byte,
}

impl Mutation {
    pub const ALL: [Mutation; 18] = [
        Mutation::Opcode,
        Mutation::Psn,
        Mutation::Qpn,
        Mutation::Pkey,
        Mutation::BthFlags,
        Mutation::BthByte48,
        Mutation::ExtHeader,
        Mutation::PayloadLen,
        Mutation::IpLen,
        Mutation::UdpLen,
        Mutation::Truncate,
        Mutation::DstMac,
        Mutation::DstIp,
        Mutation::IpVersion,
        Mutation::IpProto,
        Mutation::UdpPort,
        Mutation::IpChecksum,
        Mutation::Byte,
    ];

    /// The mutation's name, as the fuzz test reports it.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::Opcode => "opcode",
            Mutation::Psn => "psn",
            Mutation::Qpn => "qpn",
            Mutation::Pkey => "pkey",
            Mutation::BthFlags => "bth_flags",
            Mutation::BthByte48 => "bth_byte4_8",
            Mutation::ExtHeader => "ext_header",
            Mutation::PayloadLen => "payload_len",
            Mutation::IpLen => "ip_len",
            Mutation::UdpLen => "udp_len",
            Mutation::Truncate => "truncate",
            Mutation::DstMac => "dst_mac",
            Mutation::DstIp => "dst_ip",
            Mutation::IpVersion => "ip_version",
            Mutation::IpProto => "ip_proto",
            Mutation::UdpPort => "udp_port",
            Mutation::IpChecksum => "ip_checksum",
            Mutation::Byte => "byte",
        }
    }
}

/// 24 bits at `o` (big-endian).
fn get24(f: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([0, f[o], f[o + 1], f[o + 2]])
}

fn set24(f: &mut [u8], o: usize, v: u32) {
    f[o..o + 3].copy_from_slice(&v.to_be_bytes()[1..]);
}

/// Set the IP length field (and the UDP length) for an IP packet of `ip_len` bytes.
fn set_lengths(f: &mut [u8], l: &IcrcLayout, ip_len: usize) {
    let ip_field = (ip_len - l.ip_len_bias()) as u16;
    f[l.ip_len_offset()..l.ip_len_offset() + 2].copy_from_slice(&ip_field.to_be_bytes());
    let udp_len = (ip_len - l.ip_hdr_len()) as u16;
    let o = l.udp_offset() + UDP.field("len").byte();
    f[o..o + 2].copy_from_slice(&udp_len.to_be_bytes());
}

/// A value near `v` or anywhere in `bits` bits.
fn near(r: &mut impl Rng, v: u32, bits: u32) -> u32 {
    let mask = (1u64 << bits) as u32 - 1;
    match r.gen_range(0..3) {
        0 => v.wrapping_add(r.gen_range(1..8)) & mask,
        1 => v.wrapping_sub(r.gen_range(1..8)) & mask,
        _ => r.gen::<u32>() & mask,
    }
}

/// `frame` (a RoCEv2 frame, no FCS) addressed to `t` and mutated; `None` if it is not a
/// RoCEv2 frame this fuzzer can read.
pub fn mutate(r: &mut impl Rng, frame: &[u8], t: &Target) -> Option<Mutant> {
    let (l, end) = icrc::parse(frame).ok()?;
    if l.ip != IpVersion::V4 || frame.len() < end + ICRC_LEN {
        return None;
    }
    // The IP packet only (no Ethernet padding), addressed to the target.
    let mut f = frame[..end + ICRC_LEN].to_vec();
    f[ETH.field("dst").byte()..][..6].copy_from_slice(&t.mac);
    let ip = l.ip_offset();
    f[ip + IPV4.field("dst").byte()..][..4].copy_from_slice(&t.ip);
    let bth = l.bth_offset();
    let qpn_at = bth + BTH.field("dest_qp").byte();
    let psn_at = bth + BTH.field("psn").byte();
    let ip_len = end + ICRC_LEN - ip;
    let what = Mutation::ALL[r.gen_range(0..Mutation::ALL.len())];
    // (fix the ICRC, the parser must drop it)
    let (mut icrc_ok, mut parser_drops) = (true, false);
    match what {
        Mutation::Opcode => f[bth] = r.gen(),
        Mutation::Psn => {
            let v = near(r, get24(&f, psn_at), 24);
            set24(&mut f, psn_at, v);
        }
        Mutation::Qpn => {
            let v = match r.gen_range(0..4) {
                0 => t.victims[r.gen_range(0..t.victims.len())],
                1 => r.gen_range(0..4),
                2 => 0xFF_FFFF,
                _ => r.gen::<u32>() & 0xFF_FFFF,
            };
            set24(&mut f, qpn_at, v);
        }
        Mutation::Pkey => {
            let o = bth + BTH.field("pkey").byte();
            let v: u16 = if r.gen() { 0x7FFF } else { r.gen() };
            f[o..o + 2].copy_from_slice(&v.to_be_bytes());
        }
        Mutation::BthFlags => f[bth + 1] = r.gen(),
        Mutation::BthByte48 => {
            let o = if r.gen() { 4 } else { 8 };
            f[bth + o] = r.gen();
        }
        Mutation::ExtHeader => {
            // A field of whatever follows the BTH (RETH, AETH, AtomicETH, ImmDt, payload):
            // an address, key, length or value, set anywhere or nudged.
            let room = end.saturating_sub(bth + BTH_LEN);
            if room == 0 {
                return None;
            }
            let o = bth + BTH_LEN + 4 * r.gen_range(0..room.div_ceil(4).min(7));
            let n = 4.min(end - o);
            match r.gen_range(0..3) {
                0 => r.fill(&mut f[o..o + n]),
                1 => f[o + n - 1] ^= 1 << r.gen_range(0..8),
                _ => f[o] ^= 0x80,
            }
        }
        Mutation::PayloadLen => {
            // Cut or grow the packet with lengths and ICRC kept consistent: a payload shorter
            // or longer than the headers say, or past the MTU.
            let hdrs = bth + BTH_LEN - ip;
            let new = match r.gen_range(0..3) {
                0 => r.gen_range(hdrs + ICRC_LEN..=ip_len),
                1 => ip_len + 4 * r.gen_range(1..8),
                _ => ip_len + r.gen_range(1..4200),
            };
            f.resize(ip + new, 0);
            let o = ip + new - ICRC_LEN;
            for b in &mut f[end.min(o)..o] {
                *b = r.gen();
            }
            set_lengths(&mut f, &l, new);
        }
        Mutation::IpLen => {
            let v = near(r, (ip_len - l.ip_len_bias()) as u32, 16) as u16;
            f[l.ip_len_offset()..][..2].copy_from_slice(&v.to_be_bytes());
            icrc_ok = false;
            parser_drops = usize::from(v) != ip_len - l.ip_len_bias();
        }
        Mutation::UdpLen => {
            let o = l.udp_offset() + UDP.field("len").byte();
            let v = near(r, u32::from(u16::from_be_bytes([f[o], f[o + 1]])), 16) as u16;
            f[o..o + 2].copy_from_slice(&v.to_be_bytes());
        }
        Mutation::Truncate => {
            f.truncate(r.gen_range(l.ethertype_offset() + 2..f.len()));
            icrc_ok = false;
            parser_drops = true;
        }
        Mutation::DstMac => {
            let o = ETH.field("dst").byte() + r.gen_range(0..6);
            f[o] ^= r.gen_range(1..=255);
            parser_drops = f[0] & 1 == 0;
        }
        Mutation::DstIp => {
            let o = ip + IPV4.field("dst").byte() + r.gen_range(0..4);
            f[o] ^= r.gen_range(1..=255);
            parser_drops = true;
        }
        Mutation::IpVersion => {
            f[ip] ^= r.gen_range(1..=255);
            icrc_ok = false;
            parser_drops = true;
        }
        Mutation::IpProto => {
            f[ip + IPV4_PROTOCOL_OFFSET] ^= r.gen_range(1..=255);
            icrc_ok = false;
            parser_drops = true;
        }
        Mutation::UdpPort => {
            let o = l.udp_offset() + UDP_DST_PORT_OFFSET + r.gen_range(0..2);
            f[o] ^= r.gen_range(1..=255);
            icrc_ok = false;
            parser_drops = true;
        }
        Mutation::IpChecksum => parser_drops = true,
        Mutation::Byte => {
            // Any byte of the IP packet after the IPv4 header.
            let o = r.gen_range(l.udp_offset()..f.len());
            f[o] ^= r.gen_range(1..=255);
        }
    }
    // Never a protected QP: a victim or a QPN that names none instead.
    if f.len() >= qpn_at + 3 && t.protected.contains(&get24(&f, qpn_at)) {
        let v = if r.gen() {
            t.victims[r.gen_range(0..t.victims.len())]
        } else {
            0x80_0000 | r.gen::<u32>() & 0x7F_FFFF
        };
        set24(&mut f, qpn_at, v);
    }
    if icrc_ok {
        if let Ok((_, end)) = icrc::parse(&f) {
            if let (Ok(c), Some(at)) = (icrc::icrc(&f), f.get_mut(end..end + ICRC_LEN)) {
                at.copy_from_slice(&c.to_le_bytes());
            }
        }
    }
    // The IPv4 header checksum made right, then broken when that is the mutation.
    let cs = ip + IPV4_CHECKSUM_OFFSET;
    if f.len() >= ip + IPV4_HDR_LEN {
        f[cs..cs + 2].fill(0);
        let sum = ipv4_checksum(&f[ip..ip + IPV4_HDR_LEN]);
        f[cs..cs + 2].copy_from_slice(&sum.to_be_bytes());
        if what == Mutation::IpChecksum {
            f[cs + r.gen_range(0..2)] ^= r.gen_range(1..=255);
        }
    }
    // Ethernet padding, as a MAC would add it.
    if f.len() < 60 && r.gen_ratio(15, 16) {
        f.resize(60, 0);
    }
    Some(Mutant {
        frame: f,
        what,
        parser_drops,
    })
}

/// The IPv4 header checksum of `h` (a 20-byte header, its checksum field zero): RFC 1071's
/// ones' complement sum, which `etherparse` only computes for headers it accepts (a mutant's
/// version may be anything).
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{IpNumber, Ipv4Header};
    use rand::SeedableRng;

    #[test]
    fn the_ipv4_checksum_is_etherparses() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let mut h = Ipv4Header::new(r.gen(), r.gen(), IpNumber::UDP, r.gen(), r.gen())
                .expect("a header");
            h.identification = r.gen();
            let want = h.calc_header_checksum();
            h.header_checksum = 0;
            assert_eq!(ipv4_checksum(&h.to_bytes()), want);
        }
    }

    #[test]
    fn mutants_keep_a_right_icrc_and_never_name_a_protected_qp() {
        let t = Target {
            mac: [2, 0, 0, 0, 0, 2],
            ip: [10, 0, 0, 2],
            protected: (0..8).collect(),
            victims: vec![9, 10],
        };
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let frames = crate::rxe_frames().expect("the Soft-RoCE captures");
        let (mut made, mut kept) = (0, 0);
        for f in frames.iter().cycle().take(20_000) {
            let Some(m) = mutate(&mut r, f, &t) else {
                continue;
            };
            made += 1;
            if let (Ok(c), Ok(carried)) = (icrc::icrc(&m.frame), icrc::carried_icrc(&m.frame)) {
                let bth = icrc::parse(&m.frame).expect("parsed").0.bth_offset();
                let qpn = get24(&m.frame, bth + BTH.field("dest_qp").byte());
                assert!(
                    !t.protected.contains(&qpn),
                    "{} named QP {qpn}",
                    m.what.name()
                );
                if !m.parser_drops {
                    assert_eq!(c, carried, "{}: ICRC", m.what.name());
                    kept += 1;
                }
            }
        }
        assert!(
            made > 5000 && kept > 2000,
            "{made} mutants, {kept} with a right ICRC"
        );
    }
}
