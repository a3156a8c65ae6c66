//! A requester's READ slots: each READ or atomic in flight has one (`READ_SLOT`), slot `k mod
//! MAX_RD_ATOMIC` for the QP's k-th, and only the slot of the QP's next to land takes a
//! response. A slot stays as it was written until it is used again `MAX_RD_ATOMIC` READs later,
//! so a response must match its count too: a late duplicate of a response that many READs back
//! finds its old slot, and nothing else about it (PSN, epoch, kind) tells it from the one the
//! slot waits for.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WorkCompletion, WrOpcode};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_sim::Fault;
use ferroce_spec::opcodes::{RC_ATOMIC_ACKNOWLEDGE, RC_RDMA_READ_RESPONSE_ONLY};
use ferroce_spec::queues::{MAX_RD_ATOMIC, WC_FETCH_ADD, WC_RDMA_READ, WC_SUCCESS};
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Slots per QP.
const SLOTS: usize = MAX_RD_ATOMIC;

/// A's QP does `SLOTS`-24 READs (each one packet) and FETCH_ADDs to b, every one completes;
/// a's host then writes new bytes over their local buffers. Copies of b's responses to the
/// first 1-4 of the last `SLOTS` arrive again, late: the first of them is for the slot a's next
/// READ would take, and carries its PSN, epoch and kind. Each is dropped and counted
/// (`resp_bad_resp`), none writes a byte or completes anything, and a READ and a FETCH_ADD
/// after them complete with b's bytes and b's counter. (Before the slot held its count, the
/// first landed again: its bytes over the host's, and a landed count past the issued one,
/// which stopped the QP's READs for good, as a lossy link's replays once did.)
#[test]
fn a_late_duplicate_of_a_response_a_slot_cycle_back_lands_nowhere() -> Result<()> {
    let s = seed("a_late_duplicate_of_a_response_a_slot_cycle_back_lands_nowhere");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let psn = r.gen_range(0..1u32 << 24);
    let (mut qa, _qb) = w.connect(pmtu, psn, r.gen_range(0..1 << 24), 64)?;
    let n = r.gen_range(SLOTS..=24);
    // b: the READs' source and the counter; a: one local buffer per operation.
    let src: Vec<u8> = (0..pmtu).map(|_| r.gen()).collect();
    let remote = w.b.buffer(pmtu as usize, &src)?;
    let start: u64 = r.gen();
    let counter = w.b.buffer(8, &start.to_le_bytes())?;
    let local =
        w.a.buffer((n + 2) * pmtu as usize, &vec![0; (n + 2) * pmtu as usize])?;
    let slot_of = |i: usize| local.addr + (i * pmtu as usize) as u64;
    // Each operation: READ of 1..=pmtu bytes (one response) or FETCH_ADD.
    let mut ops: Vec<(bool, u32, u64)> = Vec::new();
    let wr = |i: usize, (read, len, add): (bool, u32, u64)| SendWr {
        wr_id: i as u64,
        opcode: if read {
            WrOpcode::RdmaRead
        } else {
            WrOpcode::AtomicFetchAndAdd
        },
        sg_list: vec![Sge {
            addr: slot_of(i),
            length: if read { len } else { 8 },
            lkey: local.lkey,
        }],
        remote_addr: if read { remote.addr } else { counter.addr },
        rkey: if read { remote.rkey } else { counter.rkey },
        compare_add: add,
        signaled: true,
        ..Default::default()
    };
    for _ in 0..n + 2 {
        ops.push((
            r.gen_bool(0.5),
            r.gen_range(1..=pmtu),
            r.gen_range(1..1u64 << 40),
        ));
    }
    // b's responses, by PSN.
    let seen: Rc<RefCell<HashMap<u32, Vec<u8>>>> = Default::default();
    let s2 = seen.clone();
    w.ba.set_fault_hook(move |_, f| {
        let f = &f[..f.len() - 4];
        if let Some(b) = bth(f) {
            if b.opcode == RC_RDMA_READ_RESPONSE_ONLY || b.opcode == RC_ATOMIC_ACKNOWLEDGE {
                s2.borrow_mut().entry(b.psn).or_insert_with(|| f.to_vec());
            }
        }
        Fault::Pass
    })?;
    let first: Vec<SendWr> = (0..n).map(|i| wr(i, ops[i])).collect();
    w.a.dev.post_send(&mut qa, &first)?;
    let got = reap(&mut w, 0, n, budget(200_000), &format!("seed {s}: the {n}"))?;
    check(&got, &ops, 0, s)?;
    // The host takes its buffers back.
    let fresh: Vec<u8> = (0..n * pmtu as usize).map(|_| r.gen()).collect();
    w.a.dev.mem.write(local.addr, &fresh)?;
    // Late copies of the responses to operations n-SLOTS.. (the first for slot n mod SLOTS).
    let k = r.gen_range(1..=4);
    let bad0 = w.a.counter("resp_bad_resp")?;
    for i in n - SLOTS..n - SLOTS + k {
        let p = (psn + i as u32) & 0xFF_FFFF;
        let f = seen.borrow().get(&p).cloned();
        let f = f.ok_or_else(|| anyhow::anyhow!("seed {s}: no response with PSN {p:#x}"))?;
        w.ba.inject(0, &f);
    }
    w.run(5_000)?;
    let late = w.a.dev.poll_cq(&mut w.a.cq, 16)?;
    ensure!(
        late.is_empty(),
        "seed {s}: completions after the copies: {late:?}"
    );
    ensure!(
        w.a.counter("resp_bad_resp")? == bad0 + k as u64,
        "seed {s}: {k} copies (n {n}): {}",
        nonzero_counters(&w.a)
    );
    let mut now = vec![0u8; fresh.len()];
    w.a.dev.mem.read(local.addr, &mut now)?;
    ensure!(
        now == fresh,
        "seed {s}: a copy wrote a's buffers (n {n}, {k} copies)"
    );
    // The QP goes on: a READ and a FETCH_ADD.
    ops[n].0 = true;
    ops[n + 1].0 = false;
    w.a.dev
        .post_send(&mut qa, &[wr(n, ops[n]), wr(n + 1, ops[n + 1])])?;
    let got = reap(
        &mut w,
        0,
        2,
        budget(50_000),
        &format!("seed {s}: after the copies"),
    )?;
    check(&got, &ops, n, s)?;
    let mut b = vec![0u8; ops[n].1 as usize];
    w.a.dev.mem.read(slot_of(n), &mut b)?;
    ensure!(b == src[..b.len()], "seed {s}: the READ after the copies");
    let sum = ops[..n + 2]
        .iter()
        .filter(|o| !o.0)
        .fold(start, |a, o| a.wrapping_add(o.2));
    let mut c = [0u8; 8];
    w.b.dev.mem.read(counter.addr, &mut c)?;
    ensure!(u64::from_le_bytes(c) == sum, "seed {s}: b's counter");
    Ok(())
}

/// Completions `got` are the operations from `from` on, in order, each SUCCESS with its
/// kind and length.
fn check(got: &[WorkCompletion], ops: &[(bool, u32, u64)], from: usize, s: u64) -> Result<()> {
    for (j, c) in got.iter().enumerate() {
        let (read, len, _) = ops[from + j];
        let want = if read {
            (WC_RDMA_READ, len)
        } else {
            (WC_FETCH_ADD, 8)
        };
        ensure!(
            c.wr_id == (from + j) as u64
                && c.status == WC_SUCCESS
                && (c.opcode, c.byte_len) == want,
            "seed {s}: completion {j} from {from}: {c:?}"
        );
    }
    Ok(())
}
