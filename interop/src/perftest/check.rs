//! What ferroce checks after a run, against the pcaps of both directions (see the parent's
//! list).

use super::tool::{Bufs, Perftest, Verb, SLOTS};
use crate::wire::{first_copies, packets, Packet};
use crate::Result;
use crate::{err, Rig, Role};
use ferroce_driver::DmaMemory;
use ferroce_spec::opcodes as op;

/// A whole message: its first PSN, the RETH of its first packet, its bytes.
pub(super) type Message = (u32, Option<(u64, u32, u32)>, Vec<u8>);

/// Whole messages of the given kind, from the first copies of their packets.
pub(super) fn messages(pkts: &[&Packet], first: &[u8], rest: &[u8], last: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    let mut cur: Option<Message> = None;
    for p in pkts {
        if first.contains(&p.opcode) {
            cur = Some((p.psn, p.reth, p.payload.clone()));
        } else if rest.contains(&p.opcode) {
            if let Some(c) = &mut cur {
                c.2.extend_from_slice(&p.payload);
            }
        } else {
            continue;
        }
        if last.contains(&p.opcode) {
            if let Some(c) = cur.take() {
                out.push(c);
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
pub(super) fn check(
    rig: &mut Rig,
    p: &Perftest,
    b: &Bufs,
    init: &[u8],
    received: &[Vec<u8>],
    landed: &[Vec<u8>],
    size: u32,
    mtu: u32,
) -> Result<u64> {
    let tx = packets(&rig.pcaps[0])?;
    let rx = packets(&rig.pcaps[1])?;
    let (txf, rxf) = (first_copies(&tx), first_copies(&rx));
    let h = &mut rig.station.host;
    let mut mem = vec![0u8; init.len()];
    h.dev.mem.read(b.main.addr, &mut mem)?;
    let src = &init[..size as usize];
    let fail = |what: String| Err(err(what));
    let write_ops = [op::RC_RDMA_WRITE_FIRST, op::RC_RDMA_WRITE_ONLY];
    let write_rest = [op::RC_RDMA_WRITE_MIDDLE, op::RC_RDMA_WRITE_LAST];
    let write_last = [op::RC_RDMA_WRITE_ONLY, op::RC_RDMA_WRITE_LAST];
    let send_first = [op::RC_SEND_FIRST, op::RC_SEND_ONLY];
    let send_rest = [op::RC_SEND_MIDDLE, op::RC_SEND_LAST];
    let send_last = [op::RC_SEND_ONLY, op::RC_SEND_LAST];
    let mut checked = 0u64;
    match (p.verb, p.role) {
        (Verb::Write, Role::Server) => {
            // The guest's WRITEs replayed onto ferroce's initial bytes.
            let mut want = init.to_vec();
            let mut touched = vec![false; init.len()];
            let msgs = messages(&rxf, &write_ops, &write_rest, &write_last);
            if msgs.len() != p.iters as usize {
                return fail(format!(
                    "{} WRITEs on the wire, expected {}",
                    msgs.len(),
                    p.iters
                ));
            }
            for (_, reth, data) in &msgs {
                let Some((va, _, len)) = reth else { continue };
                let off = va.wrapping_sub(b.main.addr) as usize;
                if off + data.len() > want.len() || data.len() != *len as usize {
                    return fail(format!(
                        "a WRITE of {len} bytes at {va:#x}: outside or short"
                    ));
                }
                want[off..off + data.len()].copy_from_slice(data);
                touched[off..off + data.len()]
                    .iter_mut()
                    .for_each(|t| *t = true);
            }
            if let Some(i) = mem.iter().zip(&want).position(|(a, b)| a != b) {
                return fail(format!(
                    "memory byte {i} is {:#04x}; the WRITEs on the wire put {:#04x}",
                    mem[i], want[i]
                ));
            }
            if touched.iter().filter(|t| **t).count() < size as usize {
                return fail("the WRITEs did not cover the message".into());
            }
            checked += u64::from(size) * u64::from(p.iters);
        }
        (Verb::Write, Role::Client) | (Verb::Send, Role::Client) => {
            let (f, r, l) = if p.verb == Verb::Write {
                (&write_ops[..], &write_rest[..], &write_last[..])
            } else {
                (&send_first[..], &send_rest[..], &send_last[..])
            };
            let msgs = messages(&txf, f, r, l);
            if msgs.len() != p.iters as usize {
                return fail(format!(
                    "ferroce sent {} messages, expected {}",
                    msgs.len(),
                    p.iters
                ));
            }
            for (psn, _, data) in &msgs {
                if data.as_slice() != src {
                    return fail(format!(
                        "message at PSN {psn:#x} does not carry ferroce's bytes"
                    ));
                }
            }
            checked += u64::from(size) * u64::from(p.iters);
            if mem != init {
                return fail("ferroce's source buffer changed".into());
            }
        }
        (Verb::Send, Role::Server) => {
            let msgs = messages(&rxf, &send_first, &send_rest, &send_last);
            if msgs.len() != received.len() {
                return fail(format!(
                    "{} SENDs on the wire, {} received",
                    msgs.len(),
                    received.len()
                ));
            }
            for (i, ((psn, _, data), got)) in msgs.iter().zip(received).enumerate() {
                if data != got {
                    return fail(format!(
                        "message {i} (PSN {psn:#x}): received bytes differ from the wire's"
                    ));
                }
                checked += got.len() as u64;
            }
        }
        (Verb::Read, Role::Server) => {
            // Every READ response carries ferroce's bytes at the address it answers.
            let reqs: Vec<_> = rxf
                .iter()
                .filter(|p| p.opcode == op::RC_RDMA_READ_REQUEST)
                .collect();
            let mut at = std::collections::HashMap::new();
            for r in &reqs {
                let Some((va, _, len)) = r.reth else { continue };
                let n = len.div_ceil(mtu).max(1);
                for i in 0..n {
                    at.insert((r.psn + i) & 0xff_ffff, va + u64::from(i * mtu));
                }
            }
            let resp = [
                op::RC_RDMA_READ_RESPONSE_FIRST,
                op::RC_RDMA_READ_RESPONSE_MIDDLE,
                op::RC_RDMA_READ_RESPONSE_LAST,
                op::RC_RDMA_READ_RESPONSE_ONLY,
            ];
            for r in txf.iter().filter(|p| resp.contains(&p.opcode)) {
                let Some(va) = at.get(&r.psn) else {
                    return fail(format!("READ response PSN {:#x} answers no request", r.psn));
                };
                let off = va.wrapping_sub(b.main.addr) as usize;
                if mem.get(off..off + r.payload.len()) != Some(&r.payload[..]) {
                    return fail(format!(
                        "READ response PSN {:#x} does not carry ferroce's bytes",
                        r.psn
                    ));
                }
                checked += r.payload.len() as u64;
            }
            if mem != init {
                return fail("ferroce's memory changed under READs".into());
            }
        }
        (Verb::Read, Role::Client) => {
            let resp_first = [
                op::RC_RDMA_READ_RESPONSE_FIRST,
                op::RC_RDMA_READ_RESPONSE_ONLY,
            ];
            let resp_rest = [
                op::RC_RDMA_READ_RESPONSE_MIDDLE,
                op::RC_RDMA_READ_RESPONSE_LAST,
            ];
            let resp_last = [
                op::RC_RDMA_READ_RESPONSE_ONLY,
                op::RC_RDMA_READ_RESPONSE_LAST,
            ];
            let msgs = messages(&rxf, &resp_first, &resp_rest, &resp_last);
            let first = landed.first().cloned().unwrap_or_default();
            for (k, got) in landed.iter().enumerate() {
                if *got != first {
                    return fail(format!(
                        "READ {k} landed other bytes than READ 0 (same remote bytes)"
                    ));
                }
                checked += got.len() as u64;
            }
            if msgs.iter().any(|(_, _, d)| *d != first) {
                return fail("a READ response on the wire differs from what landed".into());
            }
        }
        (Verb::FetchAdd | Verb::CmpSwap, Role::Client) => {
            let acks: Vec<u64> = rxf
                .iter()
                .filter(|p| p.opcode == op::RC_ATOMIC_ACKNOWLEDGE)
                .filter_map(|p| p.atomic_orig)
                .collect();
            let got: Vec<u64> = landed
                .iter()
                .map(|m| u64::from_le_bytes(m[..8].try_into().unwrap_or_default()))
                .collect();
            if acks != got {
                return fail(format!(
                    "atomic results differ from the atomic ACKs on the wire ({} results, {} ACKs)",
                    got.len(),
                    acks.len()
                ));
            }
            let step = u64::from(p.verb == Verb::FetchAdd);
            for k in SLOTS as usize..got.len() {
                if got[k] != got[k - SLOTS as usize].wrapping_add(step) {
                    return fail(format!(
                        "atomic {k}: original {:#x}, expected {:#x} (slot {})",
                        got[k],
                        got[k - SLOTS as usize].wrapping_add(step),
                        k % SLOTS as usize
                    ));
                }
            }
            checked += 8 * got.len() as u64;
        }
        (Verb::FetchAdd | Verb::CmpSwap, Role::Server) => {
            let q = |m: &[u8], off: usize| {
                u64::from_le_bytes(m[off..off + 8].try_into().unwrap_or_default())
            };
            let reqs: Vec<_> = rxf
                .iter()
                .filter_map(|p| p.atomic.map(|a| (p.psn, a)))
                .collect();
            // Per slot: the atomics applied so far and the sum of their adds.
            let mut count = std::collections::HashMap::new();
            let mut want_orig = std::collections::HashMap::new();
            for (psn, (va, add, cmp)) in &reqs {
                let off = va.wrapping_sub(b.main.addr) as usize;
                if off + 8 > init.len() {
                    return fail(format!("an atomic at {va:#x}, outside the region"));
                }
                let (n, sum) = count.entry(off).or_insert((0u64, 0u64));
                if p.verb == Verb::CmpSwap && (*cmp != 0 || q(init, off) == 0) {
                    return fail(
                        "a CMP_AND_SWAP that could change memory (compare not 0, or slot 0)".into(),
                    );
                }
                want_orig.insert(*psn, q(init, off).wrapping_add(*sum));
                *n += 1;
                if p.verb == Verb::FetchAdd {
                    *sum = sum.wrapping_add(*add);
                }
            }
            if reqs.len() != p.iters as usize {
                return fail(format!(
                    "{} atomics on the wire, expected {}",
                    reqs.len(),
                    p.iters
                ));
            }
            for (off, (n, sum)) in &count {
                let want = q(init, *off).wrapping_add(*sum);
                if q(&mem, *off) != want {
                    return fail(format!(
                        "slot at {off}: {:#x}, expected {want:#x} after {n} atomics",
                        q(&mem, *off)
                    ));
                }
            }
            for a in txf.iter().filter(|p| p.opcode == op::RC_ATOMIC_ACKNOWLEDGE) {
                if want_orig.get(&a.psn) != a.atomic_orig.as_ref() {
                    return fail(format!(
                        "atomic ACK PSN {:#x} carries {:?}, expected {:?}",
                        a.psn,
                        a.atomic_orig,
                        want_orig.get(&a.psn)
                    ));
                }
            }
            checked += 8 * reqs.len() as u64;
        }
    }
    Ok(checked)
}
