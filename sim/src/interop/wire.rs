//! The RoCE packets of an interop pcap, for checking host memory against what crossed the
//! wire: Ethernet, IPv4 and UDP by etherparse (an outside parser), the BTH and extended
//! headers by the spec's layouts.

use super::err;
use crate::Result;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use ferroce_spec::headers::{ATOMIC_ACK_ETH, ATOMIC_ETH, BTH, BTH_LEN, ICRC_LEN, RETH};
use ferroce_spec::opcodes::{opcode, ExtHeader};
use pcap_file::pcap::PcapReader;
use std::path::Path;

/// One RoCE packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    /// RETH: virtual address, R_Key, DMA length.
    pub reth: Option<(u64, u32, u32)>,
    /// AtomicETH: virtual address, swap/add, compare.
    pub atomic: Option<(u64, u64, u64)>,
    /// AtomicAckETH: the original remote data.
    pub atomic_orig: Option<u64>,
    /// The payload, without pad and ICRC.
    pub payload: Vec<u8>,
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
        let Ok(s) = SlicedPacket::from_ethernet(&p.data) else {
            continue;
        };
        let (Some(NetSlice::Ipv4(ip)), Some(TransportSlice::Udp(udp))) = (&s.net, &s.transport)
        else {
            continue;
        };
        if udp.destination_port() != ferroce_spec::headers::ROCEV2_UDP_PORT {
            continue;
        }
        // The UDP payload as the IP length bounds it (Ethernet padding excluded).
        let ip_len = usize::from(ip.header().total_len()) - ip.header().slice().len();
        let l4 = &udp.slice()[..ip_len.min(udp.slice().len())];
        let b = &l4[8..];
        if b.len() < BTH_LEN + ICRC_LEN {
            continue;
        }
        let code = field(&BTH, "opcode", b)? as u8;
        let pad = field(&BTH, "pad", b)? as usize;
        let Some(op) = opcode(code) else {
            continue;
        };
        let mut pk = Packet {
            opcode: code,
            dest_qp: field(&BTH, "dest_qp", b)? as u32,
            psn: field(&BTH, "psn", b)? as u32,
            ..Packet::default()
        };
        let mut at = BTH_LEN;
        for h in op.ext {
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
                _ => {}
            }
            at += h.size();
        }
        let end = b.len() - ICRC_LEN;
        if at + pad > end {
            return Err(err(format!(
                "{}: packet PSN {} shorter than its headers",
                path.display(),
                pk.psn
            )));
        }
        pk.payload = b[at..end - pad].to_vec();
        out.push(pk);
    }
    Ok(out)
}

/// The packets whose (QP, PSN, opcode) was seen before dropped: what a responder takes once.
pub fn first_copies(pkts: &[Packet]) -> Vec<&Packet> {
    let mut seen = std::collections::HashSet::new();
    pkts.iter()
        .filter(|p| seen.insert((p.dest_qp, p.psn, p.opcode)))
        .collect()
}
