//! RoCEv2 test frames: random but well-formed, built with etherparse (an outside encoder) for
//! Ethernet, 802.1Q, IPv4/IPv6 and UDP, then BTH, extended headers, payload and ICRC.
//!
//! Every field the ICRC masks (TOS/ECN, TTL, IPv6 traffic class, flow label, hop limit, UDP
//! checksum, FECN/BECN) is random, so a test that flips one of them has something to flip.

use etherparse::{
    IpHeaders, IpNumber, Ipv4Dscp, Ipv4Ecn, Ipv4Header, Ipv6FlowLabel, Ipv6Header, PacketBuilder,
    VlanId,
};
use ferroce_spec::headers::{ETH_MIN_FRAME_NO_FCS, ROCEV2_UDP_PORT};
use ferroce_spec::icrc::{icrc, IcrcLayout, IpVersion};
use ferroce_spec::opcodes::{Opcode, OPCODES};
use rand::Rng;

/// What a generated frame looks like; [`RoceFrame::build`] turns it into bytes.
#[derive(Clone, Debug)]
pub struct RoceFrame {
    pub layout: IcrcLayout,
    pub opcode: &'static Opcode,
    pub payload_len: usize,
    /// Bytes after the ICRC that are not part of the IP packet (as a FCS or padding would be).
    pub trailer: usize,
    pub seed: u64,
}

impl RoceFrame {
    /// A random frame with a payload of up to `max_payload` bytes.
    pub fn random(r: &mut impl Rng, max_payload: usize) -> Self {
        let layout = IcrcLayout::ALL[r.gen_range(0..4)];
        let opcode = &OPCODES[r.gen_range(0..OPCODES.len())];
        let payload_len = if opcode.payload {
            match r.gen_range(0..4) {
                0 => r.gen_range(0..=16.min(max_payload)),
                _ => r.gen_range(0..=max_payload),
            }
        } else {
            0
        };
        let trailer = match r.gen_range(0..4) {
            0 => 4,
            1 => r.gen_range(1..8),
            _ => 0,
        };
        RoceFrame {
            layout,
            opcode,
            payload_len,
            trailer,
            seed: r.gen(),
        }
    }

    /// The frame's bytes: headers, payload (padded to 4 bytes as BTH's pad count says), ICRC,
    /// then the trailer, and Ethernet padding up to 60 bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(self.seed);
        let mac = |r: &mut rand_chacha::ChaCha8Rng| -> [u8; 6] {
            let mut m: [u8; 6] = r.gen();
            m[0] &= 0xFE;
            m
        };
        let (src, dst) = (mac(&mut r), mac(&mut r));
        let eth = PacketBuilder::ethernet2(src, dst);
        let ip = match self.layout.ip {
            IpVersion::V4 => {
                let mut h = Ipv4Header::new(0, r.gen(), IpNumber::UDP, r.gen(), r.gen())
                    .unwrap_or_default();
                h.dscp = Ipv4Dscp::try_new(r.gen_range(0..64)).unwrap_or_default();
                h.ecn = Ipv4Ecn::try_new(r.gen_range(0..4)).unwrap_or_default();
                h.identification = r.gen();
                h.dont_fragment = r.gen();
                IpHeaders::Ipv4(h, Default::default())
            }
            IpVersion::V6 => IpHeaders::Ipv6(
                Ipv6Header {
                    traffic_class: r.gen(),
                    flow_label: Ipv6FlowLabel::try_new(r.gen_range(0..1 << 20)).unwrap_or_default(),
                    hop_limit: r.gen(),
                    source: r.gen(),
                    destination: r.gen(),
                    ..Default::default()
                },
                Default::default(),
            ),
        };
        let sport = r.gen_range(0xC000..=0xFFFF);
        // BTH + extended headers + payload + pad + ICRC placeholder.
        let pad = (4 - self.payload_len % 4) % 4;
        let mut bth = vec![0u8; 12];
        bth[0] = self.opcode.code;
        bth[1] = (u8::from(r.gen::<bool>()) << 7) | ((pad as u8) << 4); // SE, pad, TVer 0
        bth[2..4].copy_from_slice(&0xFFFFu16.to_be_bytes());
        bth[4] = [0x00, 0x40, 0x80, 0xC0][r.gen_range(0..4)]; // FECN, BECN
        let dqp: u32 = r.gen_range(1..1 << 24);
        bth[5..8].copy_from_slice(&dqp.to_be_bytes()[1..]);
        bth[8] = u8::from(r.gen::<bool>()) << 7; // AckReq
        let psn: u32 = r.gen_range(0..1 << 24);
        bth[9..12].copy_from_slice(&psn.to_be_bytes()[1..]);
        let mut udp_payload = bth;
        udp_payload.extend((0..self.opcode.ext_len()).map(|_| r.gen::<u8>()));
        udp_payload.extend((0..self.payload_len).map(|_| r.gen::<u8>()));
        udp_payload.extend(std::iter::repeat_n(0u8, pad));
        udp_payload.extend([0u8; 4]);
        let mut frame = Vec::new();
        let written = if self.layout.vlan {
            let vid = VlanId::try_new(r.gen_range(1..4095)).unwrap_or_default();
            eth.single_vlan(vid)
                .ip(ip)
                .udp(sport, ROCEV2_UDP_PORT)
                .write(&mut frame, &udp_payload)
        } else {
            eth.ip(ip)
                .udp(sport, ROCEV2_UDP_PORT)
                .write(&mut frame, &udp_payload)
        };
        assert!(
            written.is_ok(),
            "etherparse failed to build a frame: {written:?}"
        );
        // A random UDP checksum (IPv4 allows 0; RoCEv2 senders often leave it 0): masked anyway.
        let udp_ck = self.layout.udp_offset() + 6;
        let ck: u16 = r.gen();
        frame[udp_ck..udp_ck + 2].copy_from_slice(&ck.to_be_bytes());
        let end = frame.len() - 4;
        let crc = icrc(&frame).map(|c| c.to_le_bytes()).unwrap_or_default();
        frame[end..].copy_from_slice(&crc);
        frame.extend((0..self.trailer).map(|_| r.gen::<u8>()));
        if frame.len() < ETH_MIN_FRAME_NO_FCS {
            frame.resize(ETH_MIN_FRAME_NO_FCS, 0);
        }
        frame
    }
}

use rand::SeedableRng;
