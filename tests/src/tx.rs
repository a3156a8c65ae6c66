//! Packets for the TX path tests: random metadata records (packed by `spec::meta::TX_META`, the
//! block's interface) and the frame each must become, built independently of the HDL's header
//! image: etherparse for Ethernet, IPv4 (its checksum) and UDP, the BTH and extended headers
//! written byte by byte from IBA's figures.

use etherparse::{
    IpNumber, Ipv4Dscp, Ipv4Ecn, Ipv4Header, PacketBuilder, SingleVlanHeader, VlanHeader, VlanId,
    VlanPcp,
};
use ferroce_spec::meta::{tx_opcodes, TX_EXT_LEN, TX_MAX_PAYLOAD, TX_META};
use ferroce_spec::opcodes::opcode;
use rand::Rng;

/// One packet as a requester or responder would describe it.
#[derive(Clone, Debug)]
pub struct TxPacket {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub src_port: u16,
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    pub opcode: u8,
    pub se: bool,
    pub ack_req: bool,
    pub pkey: u16,
    pub dest_qp: u32,
    pub psn: u32,
    /// An 802.1Q tag as (PCP, VID), or untagged.
    pub vlan: Option<(u8, u16)>,
    /// Extended headers as they go on the wire (16 bytes for a RETH, 4 for an AETH, 20 for a
    /// RETH and ImmDt, 28 for an AtomicETH).
    pub ext: Vec<u8>,
    pub payload: Vec<u8>,
}

/// Extended-header bytes of an opcode, from IBA's table of its headers.
pub fn ext_len(code: u8) -> usize {
    opcode(code).map_or(0, |o| o.ext_len())
}

impl TxPacket {
    /// A random packet of an opcode the builder sends (every RC opcode); payload lengths
    /// favour the edges, none for opcodes that carry none.
    pub fn random(r: &mut impl Rng) -> TxPacket {
        let ops = tx_opcodes();
        let opcode = ops[r.gen_range(0..ops.len())].0;
        let len = if !self::opcode(opcode).is_some_and(|o| o.payload) {
            0
        } else {
            match r.gen_range(0..8) {
                0 => r.gen_range(0..=9),
                1 => TX_MAX_PAYLOAD - r.gen_range(0..4),
                2 => [256, 512, 1024, 2048][r.gen_range(0..4)],
                3 => r.gen_range(0..=TX_MAX_PAYLOAD),
                _ => r.gen_range(0..=300),
            }
        };
        let mut mac = || -> [u8; 6] {
            let mut m: [u8; 6] = r.gen();
            m[0] &= 0xFE;
            m
        };
        let (dst_mac, src_mac) = (mac(), mac());
        TxPacket {
            dst_mac,
            src_mac,
            src_ip: r.gen(),
            dst_ip: r.gen(),
            src_port: r.gen_range(0xC000..=0xFFFF),
            dscp: r.gen_range(0..64),
            ecn: r.gen_range(0..4),
            ttl: r.gen_range(1..=255),
            opcode,
            se: r.gen(),
            ack_req: r.gen(),
            pkey: r.gen(),
            dest_qp: r.gen_range(0..1 << 24),
            psn: r.gen_range(0..1 << 24),
            vlan: r
                .gen_bool(0.4)
                .then(|| (r.gen_range(0..8), r.gen_range(0..4095))),
            ext: (0..ext_len(opcode)).map(|_| r.gen()).collect(),
            payload: (0..len).map(|_| r.gen()).collect(),
        }
    }

    /// The metadata record, packed as the block takes it.
    pub fn meta(&self) -> Vec<u8> {
        let mut m = vec![0u8; TX_META.len];
        let mut set = |name: &str, v: u128| {
            let f = TX_META.find(name).expect("TX_META field");
            TX_META.set(f, &mut m, v);
        };
        let be = |b: &[u8]| b.iter().fold(0u128, |a, &x| (a << 8) | u128::from(x));
        set("dst_mac", be(&self.dst_mac));
        set("src_mac", be(&self.src_mac));
        set("src_ip", be(&self.src_ip));
        set("dst_ip", be(&self.dst_ip));
        set("src_port", self.src_port.into());
        set("dscp", self.dscp.into());
        set("ecn", self.ecn.into());
        set("ttl", self.ttl.into());
        set("opcode", self.opcode.into());
        set("se", self.se.into());
        set("ack_req", self.ack_req.into());
        set("pkey", self.pkey.into());
        set("dest_qp", self.dest_qp.into());
        set("psn", self.psn.into());
        set("pay_len", self.payload.len() as u128);
        if let Some((pcp, vid)) = self.vlan {
            set("vlan", 1);
            set("pcp", pcp.into());
            set("vid", vid.into());
        }
        let mut ext = [0u8; TX_EXT_LEN];
        ext[..self.ext.len()].copy_from_slice(&self.ext);
        set("ext", be(&ext[..16]));
        set("ext2", be(&ext[16..]));
        m
    }

    /// The frame the builder must emit: headers, payload, pad, and 4 zero bytes for the ICRC
    /// (no FCS).
    pub fn frame_without_icrc(&self) -> Vec<u8> {
        let pad = (4 - self.payload.len() % 4) % 4;
        let mut bth = vec![0u8; 12];
        bth[0] = self.opcode;
        bth[1] = (u8::from(self.se) << 7) | ((pad as u8) << 4);
        bth[2..4].copy_from_slice(&self.pkey.to_be_bytes());
        bth[5..8].copy_from_slice(&self.dest_qp.to_be_bytes()[1..]);
        bth[8] = u8::from(self.ack_req) << 7;
        bth[9..12].copy_from_slice(&self.psn.to_be_bytes()[1..]);
        let mut udp_payload = bth;
        udp_payload.extend(&self.ext);
        udp_payload.extend(&self.payload);
        udp_payload.extend(std::iter::repeat_n(0u8, pad + 4));
        let mut ip = Ipv4Header::new(0, self.ttl, IpNumber::UDP, self.src_ip, self.dst_ip)
            .expect("IPv4 header");
        ip.dscp = Ipv4Dscp::try_new(self.dscp).expect("dscp");
        ip.ecn = Ipv4Ecn::try_new(self.ecn).expect("ecn");
        ip.identification = 0;
        ip.dont_fragment = true;
        let mut frame = Vec::new();
        let eth = PacketBuilder::ethernet2(self.src_mac, self.dst_mac);
        let ip = etherparse::IpHeaders::Ipv4(ip, Default::default());
        let port = ferroce_spec::headers::ROCEV2_UDP_PORT;
        match self.vlan {
            Some((pcp, vid)) => eth
                .vlan(VlanHeader::Single(SingleVlanHeader {
                    pcp: VlanPcp::try_new(pcp).expect("pcp"),
                    drop_eligible_indicator: false,
                    vlan_id: VlanId::try_new(vid).expect("vid"),
                    ether_type: etherparse::EtherType::IPV4,
                }))
                .ip(ip)
                .udp(self.src_port, port)
                .write(&mut frame, &udp_payload),
            None => eth
                .ip(ip)
                .udp(self.src_port, port)
                .write(&mut frame, &udp_payload),
        }
        .expect("etherparse builds the frame");
        // RoCEv2 over IPv4 sends no UDP checksum.
        let udp = self.l3_offset() + 20;
        frame[udp + 6] = 0;
        frame[udp + 7] = 0;
        frame
    }

    /// The frame with its ICRC (`spec`'s) in place: what a conforming sender puts on the wire,
    /// FCS aside.
    pub fn frame(&self) -> Result<Vec<u8>, ferroce_spec::icrc::IcrcError> {
        let mut f = self.frame_without_icrc();
        let (_, end) = ferroce_spec::icrc::parse(&f)?;
        let ic = ferroce_spec::icrc::icrc(&f)?;
        f[end..end + 4].copy_from_slice(&ic.to_le_bytes());
        Ok(f)
    }

    /// The packet a RoCEv2 frame (IPv4, without its FCS) carries: every field read back from
    /// the frame, so a test can change one and build the frame again (`frame`).
    pub fn parse(frame: &[u8]) -> Result<TxPacket, ferroce_spec::icrc::IcrcError> {
        let (l, end) = ferroce_spec::icrc::parse(frame)?;
        let (ip, bth) = (l.ip_offset(), l.bth_offset());
        let tci = u16::from_be_bytes([frame[14], frame[15]]);
        let b4 = |o: usize| [frame[o], frame[o + 1], frame[o + 2], frame[o + 3]];
        let opcode = frame[bth];
        let ext = bth + 12 + ext_len(opcode);
        let pad = usize::from((frame[bth + 1] >> 4) & 3);
        Ok(TxPacket {
            dst_mac: frame[0..6].try_into().unwrap_or_default(),
            src_mac: frame[6..12].try_into().unwrap_or_default(),
            src_ip: b4(ip + 12),
            dst_ip: b4(ip + 16),
            src_port: u16::from_be_bytes([frame[ip + 20], frame[ip + 21]]),
            dscp: frame[ip + 1] >> 2,
            ecn: frame[ip + 1] & 3,
            ttl: frame[ip + 8],
            opcode,
            se: frame[bth + 1] >> 7 == 1,
            ack_req: frame[bth + 8] >> 7 == 1,
            pkey: u16::from_be_bytes([frame[bth + 2], frame[bth + 3]]),
            dest_qp: u32::from_be_bytes([0, frame[bth + 5], frame[bth + 6], frame[bth + 7]]),
            psn: u32::from_be_bytes([0, frame[bth + 9], frame[bth + 10], frame[bth + 11]]),
            vlan: l.vlan.then_some(((tci >> 13) as u8, tci & 0xFFF)),
            ext: frame[bth + 12..ext].to_vec(),
            payload: frame[ext..end - pad].to_vec(),
        })
    }

    /// Where the IPv4 header starts in the frame (after the 802.1Q tag, if any).
    pub fn l3_offset(&self) -> usize {
        14 + if self.vlan.is_some() { 4 } else { 0 }
    }
}

/// A frame's priority on the wire: its 802.1Q PCP, 0 when untagged.
pub fn wire_prio(frame: &[u8]) -> usize {
    if frame.len() >= 15 && frame[12..14] == [0x81, 0x00] {
        usize::from(frame[14] >> 5)
    } else {
        0
    }
}

impl TxPacket {
    /// The packet's priority: its PCP, 0 when untagged.
    pub fn prio(&self) -> usize {
        self.vlan.map_or(0, |v| usize::from(v.0))
    }
}

/// The packets in the order frames of them came out of a MAC that sends by priority: for
/// each frame, the next packet of the frame's priority (`None` once a priority has run out).
/// Order within a priority is kept; a higher one may overtake.
pub fn by_wire_order<'a>(pkts: &'a [TxPacket], frames: &[Vec<u8>]) -> Vec<Option<&'a TxPacket>> {
    let mut queues: [std::collections::VecDeque<&TxPacket>; 8] = Default::default();
    for p in pkts {
        queues[p.prio()].push_back(p);
    }
    frames
        .iter()
        .map(|f| queues[wire_prio(f)].pop_front())
        .collect()
}
