//! The RoCE packets of an interop pcap, for checking host memory against what crossed the
//! wire: Ethernet, IPv4 and UDP by etherparse (an outside parser), the BTH and extended
//! headers by the spec's layouts.

use super::err;
use crate::Result;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use ferroce_spec::headers::{AETH, ATOMIC_ACK_ETH, ATOMIC_ETH, BTH, BTH_LEN, ICRC_LEN, RETH};
use ferroce_spec::opcodes::{opcode, ExtHeader};
use pcap_file::pcap::PcapReader;
use std::path::Path;

/// One RoCE packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    /// BTH AckReq.
    pub ack_req: bool,
    /// AETH syndrome (ACKs, NAKs, READ responses that carry one).
    pub syndrome: Option<u8>,
    /// RETH: virtual address, R_Key, DMA length.
    pub reth: Option<(u64, u32, u32)>,
    /// AtomicETH: virtual address, swap/add, compare.
    pub atomic: Option<(u64, u64, u64)>,
    /// AtomicAckETH: the original remote data.
    pub atomic_orig: Option<u64>,
    /// The payload, without pad and ICRC.
    pub payload: Vec<u8>,
    /// When it started on the wire (the pcap's timestamp: simulated time), in ns.
    pub time_ns: u64,
}

fn field(l: &ferroce_spec::layout::Layout, name: &str, buf: &[u8]) -> Result<u128> {
    let f = l
        .find(name)
        .ok_or_else(|| err(format!("spec layout has no field {name}")))?;
    Ok(l.get(f, buf))
}

/// Every RoCE packet of `path`, in capture order (frames that are not RoCEv2 are skipped;
/// the pcap check judges those).
pub fn packets(path: &Path) -> Result<Vec<Packet>> {
    let file = std::fs::File::open(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
    let mut r = PcapReader::new(file).map_err(|e| err(format!("{}: {e}", path.display())))?;
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.map_err(|e| err(format!("{}: {e}", path.display())))?;
        if let Some(mut pk) = parse(&p.data).map_err(|e| err(format!("{}: {e}", path.display())))? {
            pk.time_ns = p.timestamp.as_nanos() as u64;
            out.push(pk);
        }
    }
    Ok(out)
}

/// The RoCE packet in an Ethernet frame (no FCS), or `None` for a frame that is not RoCEv2
/// over IPv4 with a known opcode.
pub fn parse(frame: &[u8]) -> Result<Option<Packet>> {
    let Ok(s) = SlicedPacket::from_ethernet(frame) else {
        return Ok(None);
    };
    let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Udp(udp))) = (&s.net, &s.transport) else {
        return Ok(None);
    };
    if udp.destination_port() != ferroce_spec::headers::ROCEV2_UDP_PORT {
        return Ok(None);
    }
    // The UDP payload as the IP length bounds it (Ethernet padding excluded).
    let ip_len = usize::from(ip.header().total_len()) - ip.header().slice().len();
    let l4 = &udp.slice()[..ip_len.min(udp.slice().len())];
    let b = &l4[8..];
    if b.len() < BTH_LEN + ICRC_LEN {
        return Ok(None);
    }
    let code = field(&BTH, "opcode", b)? as u8;
    let pad = field(&BTH, "pad", b)? as usize;
    let Some(op) = opcode(code) else {
        return Ok(None);
    };
    let mut pk = Packet {
        opcode: code,
        dest_qp: field(&BTH, "dest_qp", b)? as u32,
        psn: field(&BTH, "psn", b)? as u32,
        ack_req: field(&BTH, "ack_req", b)? == 1,
        ..Packet::default()
    };
    let mut at = BTH_LEN;
    let end = b.len() - ICRC_LEN;
    for h in op.ext {
        if at + h.size() > end {
            return Err(err(format!(
                "packet PSN {} shorter than its headers",
                pk.psn
            )));
        }
        let e = &b[at..];
        match h {
            ExtHeader::Reth => {
                pk.reth = Some((
                    field(&RETH, "va", e)? as u64,
                    field(&RETH, "rkey", e)? as u32,
                    field(&RETH, "dma_len", e)? as u32,
                ))
            }
            ExtHeader::AtomicEth => {
                pk.atomic = Some((
                    field(&ATOMIC_ETH, "va", e)? as u64,
                    field(&ATOMIC_ETH, "swap_add", e)? as u64,
                    field(&ATOMIC_ETH, "compare", e)? as u64,
                ))
            }
            ExtHeader::AtomicAckEth => {
                pk.atomic_orig = Some(field(&ATOMIC_ACK_ETH, "orig", e)? as u64)
            }
            ExtHeader::Aeth => pk.syndrome = Some(field(&AETH, "syndrome", e)? as u8),
            _ => {}
        }
        at += h.size();
    }
    if at + pad > end {
        return Err(err(format!(
            "packet PSN {} shorter than its headers",
            pk.psn
        )));
    }
    pk.payload = b[at..end - pad].to_vec();
    Ok(Some(pk))
}

/// The packets whose (QP, PSN, opcode) was seen before dropped: what a responder takes once.
pub fn first_copies(pkts: &[Packet]) -> Vec<&Packet> {
    let mut seen = std::collections::HashSet::new();
    pkts.iter()
        .filter(|p| seen.insert((p.dest_qp, p.psn, p.opcode)))
        .collect()
}

/// A responder's packet: a READ response, an ACK or NAK, an atomic ACK (any transport).
pub fn is_answer(opcode: u8) -> bool {
    use ferroce_spec::opcodes::{RC_ATOMIC_ACKNOWLEDGE, RC_RDMA_READ_RESPONSE_FIRST};
    (RC_RDMA_READ_RESPONSE_FIRST..=RC_ATOMIC_ACKNOWLEDGE).contains(&(opcode & 0x1F))
}

/// A request (not a response or acknowledgement: those are not repeated by a requester).
pub fn is_request(opcode: u8) -> bool {
    !is_answer(opcode)
}

/// The answer that ends a request's wait: an ACK or NAK, an atomic ACK, a READ's last (or
/// only) response.
pub fn ends_wait(opcode: u8) -> bool {
    use ferroce_spec::opcodes::{
        RC_ACKNOWLEDGE, RC_ATOMIC_ACKNOWLEDGE, RC_RDMA_READ_RESPONSE_LAST,
        RC_RDMA_READ_RESPONSE_ONLY,
    };
    [
        RC_ACKNOWLEDGE,
        RC_ATOMIC_ACKNOWLEDGE,
        RC_RDMA_READ_RESPONSE_LAST,
        RC_RDMA_READ_RESPONSE_ONLY,
    ]
    .contains(&opcode)
}

/// An AETH syndrome that is a NAK or an RNR NAK (not 000xxxxx).
pub fn is_nak(syndrome: u8) -> bool {
    syndrome & 0xE0 != 0
}

/// How long one side took to answer the other's requests: for each first copy of a request
/// with AckReq (in `requests`, one side's packets), the time until the first packet of
/// `answers` (the other side's, same clock) that answers it: an ACK or NAK, an atomic ACK or a
/// READ response with a PSN at or after it. The slowest, in ns, and the requests never
/// answered. For runs of one QP pair (every interop run).
pub fn answer_times(requests: &[Packet], answers: &[Packet]) -> (u64, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut slowest = 0;
    let mut never = 0;
    for p in requests
        .iter()
        .filter(|p| is_request(p.opcode) && p.ack_req && seen.insert((p.dest_qp, p.psn)))
    {
        let t = answers
            .iter()
            .find(|a| {
                a.time_ns >= p.time_ns
                    && is_answer(a.opcode)
                    && !ferroce_spec::psn::before(a.psn, p.psn)
            })
            .map(|a| a.time_ns - p.time_ns);
        match t {
            Some(t) => slowest = slowest.max(t),
            None => never += 1,
        }
    }
    (slowest, never)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroce_spec::opcodes::{RC_ACKNOWLEDGE, RC_SEND_ONLY};

    fn pk(opcode: u8, psn: u32, time_ns: u64) -> Packet {
        Packet {
            opcode,
            psn,
            time_ns,
            syndrome: (opcode == RC_ACKNOWLEDGE).then_some(0x1F),
            ..Packet::default()
        }
    }

    #[test]
    fn answer_times_take_the_first_covering_answer() {
        let mut req = vec![
            pk(RC_SEND_ONLY, 5, 0),
            pk(RC_SEND_ONLY, 6, 200),
            pk(RC_SEND_ONLY, 7, 300),
        ];
        for r in &mut req {
            r.ack_req = true;
        }
        // 5 answered at 50 (its ACK), 6 by the coalesced ACK of 7 at 400; 7 at 400 too.
        let ans = [pk(RC_ACKNOWLEDGE, 5, 50), pk(RC_ACKNOWLEDGE, 7, 400)];
        assert_eq!(answer_times(&req, &ans), (200, 0));
        // Nothing answers 7 before the end.
        assert_eq!(answer_times(&req, &ans[..1]), (50, 2));
    }
}
