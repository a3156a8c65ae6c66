//! Records for the RX path tests: what the RX parser must hand the transport for a packet
//! (packed by `spec::meta::RX_META`, the block's interface), from the packet's own fields.

use crate::tx::TxPacket;
use ferroce_spec::meta::RX_META;

/// MAC receive's drop counters (and its bug counter), in the order the tests report them: a
/// frame not delivered is counted in exactly one.
pub const MAC_RX_COUNTERS: [&str; 9] = [
    "fcs_err",
    "runt",
    "not_roce",
    "bad_len",
    "icrc_err",
    "overflow",
    "self_check",
    "code_err",
    "too_long",
];

/// A byte string as one big-endian number.
pub fn be(b: &[u8]) -> u128 {
    b.iter().fold(0u128, |a, &x| (a << 8) | u128::from(x))
}

/// A record as `RX_META` packs it, from named values; `ext` is the extended headers in wire
/// order (up to 32 bytes).
pub fn record(values: &[(&str, u128)], ext: &[u8]) -> Vec<u8> {
    let mut m = vec![0u8; RX_META.len];
    for (name, v) in values {
        let f = RX_META.find(name).expect("RX_META field");
        RX_META.set(f, &mut m, *v);
    }
    let mut e = [0u8; 32];
    e[..ext.len()].copy_from_slice(ext);
    RX_META.set(&RX_META.field("ext"), &mut m, be(&e[..16]));
    RX_META.set(&RX_META.field("ext2"), &mut m, be(&e[16..]));
    m
}

/// The record a packet must become; `bits` are the BTH's (M, FECN, BECN), which `TxPacket`
/// leaves clear.
pub fn record_of(p: &TxPacket, bits: (bool, bool, bool)) -> Vec<u8> {
    let (m, fecn, becn) = bits;
    record(
        &[
            ("src_mac", be(&p.src_mac)),
            ("src_ip", be(&p.src_ip)),
            ("dst_ip", be(&p.dst_ip)),
            ("src_port", p.src_port.into()),
            ("dscp", p.dscp.into()),
            ("ecn", p.ecn.into()),
            ("ttl", p.ttl.into()),
            ("opcode", p.opcode.into()),
            ("se", p.se.into()),
            ("ack_req", p.ack_req.into()),
            ("mig_req", m.into()),
            ("fecn", fecn.into()),
            ("becn", becn.into()),
            ("pkey", p.pkey.into()),
            ("dest_qp", p.dest_qp.into()),
            ("psn", p.psn.into()),
            ("pay_len", p.payload.len() as u128),
            ("vlan", p.vlan.is_some().into()),
            ("pcp", p.vlan.map_or(0, |v| v.0).into()),
            ("vid", p.vlan.map_or(0, |v| v.1).into()),
        ],
        &p.ext,
    )
}

/// Where two records differ, by field name.
pub fn diff(got: &[u8], want: &[u8]) -> Vec<String> {
    RX_META
        .fields
        .iter()
        .filter(|f| RX_META.get(f, got) != RX_META.get(f, want))
        .map(|f| {
            format!(
                "{}: got {:#x} want {:#x}",
                f.name,
                RX_META.get(f, got),
                RX_META.get(f, want)
            )
        })
        .collect()
}
