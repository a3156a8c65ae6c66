//! Sequence NAKs: a gap NAKed once is closed by any request at the expected PSN, so the next
//! gap gets its own NAK rather than waiting for the requester's ACK timer.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::opcodes::{RC_FETCH_ADD, RC_RDMA_READ_REQUEST};
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{bth, budget, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// A gap NAKed once is closed by any request at the expected PSN, a READ too (rxe clears
/// `sent_psn_nak` in `check_psn`): a peer that only READs and loses two requests far apart gets
/// a sequence NAK for each, and never waits for its ACK timer.
#[test]
fn a_read_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too() -> Result<()> {
    each_gap_naked(
        "a_read_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too",
        false,
    )
}

/// The same for atomics: a peer that only sends FETCH_AND_ADDs and loses two far apart gets a
/// sequence NAK for each; every atomic is done once (the results count up by one).
#[test]
fn an_atomic_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too() -> Result<()> {
    each_gap_naked(
        "an_atomic_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too",
        true,
    )
}

/// Forty READs of 64 bytes (or FETCH_AND_ADDs of 1 to one word), two of them lost the first
/// time they go, far apart: all complete SUCCESS with the right bytes, b NAKs two gaps and a
/// never times out.
fn each_gap_naked(test: &str, atomic: bool) -> Result<()> {
    let s = seed(test);
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(8);
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
    let src: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    let sb = w.b.buffer(4096, &src)?;
    let da = w.a.buffer(64 * 64, &vec![0; 64 * 64])?;
    let op = if atomic {
        RC_FETCH_ADD
    } else {
        RC_RDMA_READ_REQUEST
    };
    // The requests a sends, counted as they first go: the two by plan are lost.
    let (first, second) = (r.gen_range(2..8usize), r.gen_range(20..28usize));
    let seen = Rc::new(RefCell::new(Vec::<u32>::new()));
    let s2 = seen.clone();
    w.ab.set_fault_hook(move |_, f| {
        let Some(b) = bth(f) else { return Fault::Pass };
        if b.opcode != op {
            return Fault::Pass;
        }
        // (The k-th request is the k-th PSN seen; a retransmission passes.)
        let mut v = s2.borrow_mut();
        if v.contains(&b.psn) {
            return Fault::Pass;
        }
        let k = v.len();
        v.push(b.psn);
        if k == first || k == second {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let n = 40u64;
    let wrs: Vec<SendWr> = (0..n)
        .map(|i| SendWr {
            wr_id: i,
            opcode: if atomic {
                WrOpcode::AtomicFetchAndAdd
            } else {
                WrOpcode::RdmaRead
            },
            sg_list: vec![Sge {
                addr: da.addr + 64 * i,
                length: if atomic { 8 } else { 64 },
                lkey: da.lkey,
            }],
            remote_addr: sb.addr + if atomic { 0 } else { 64 * i },
            rkey: sb.rkey,
            compare_add: 1,
            signaled: true,
            ..Default::default()
        })
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    let got = reap(
        &mut w,
        0,
        n as usize,
        budget(400_000),
        &format!("seed {s}: the requests"),
    )?;
    for (i, c) in got.iter().enumerate() {
        ensure!(
            c.wr_id == i as u64 && c.status == WC_SUCCESS,
            "seed {s}: {c:?}"
        );
    }
    let mut mem = vec![0u8; 64 * 64];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    if atomic {
        // Done once each, in order: the k-th saw the word plus k.
        let word = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let at0 = word(&src);
        for i in 0..n as usize {
            let got = word(&mem[64 * i..]);
            ensure!(
                got == at0.wrapping_add(i as u64),
                "seed {s}: atomic {i} returned {got:#x}, not {:#x}",
                at0.wrapping_add(i as u64)
            );
        }
        let mut end = [0u8; 8];
        w.b.dev.mem.read(sb.addr, &mut end)?;
        ensure!(
            u64::from_le_bytes(end) == at0.wrapping_add(n),
            "seed {s}: the word ends at {:#x}",
            u64::from_le_bytes(end)
        );
    } else {
        ensure!(
            mem[..64 * n as usize] == src[..64 * n as usize],
            "seed {s}: bytes"
        );
    }
    let (sa, sb) = (w.a.dev.rc_stats()?, w.b.dev.rc_stats()?);
    ensure!(
        sb.seq_nak_tx == 2 && sa.timeouts == 0,
        "seed {s}: requests {first} and {second} lost: b NAKed {} gaps, a timed out {} times",
        sb.seq_nak_tx,
        sa.timeouts
    );
    Ok(())
}
