//! Atomics between two `ferroce_nic_64` models: CMP_AND_SWP and FETCH_AND_ADD on 8-byte
//! aligned words of the peer's memory, done by the peer's responder as a read-modify-write of
//! its host memory, one at a time for the whole NIC, answered with ATOMIC ACKNOWLEDGE; the
//! original value lands in the requester's 8-byte buffer before the completion. Both hosts
//! hammer a counter in the other's memory from several QPs at once (the sum and every
//! original value checked), contend for a lock word with CMP_AND_SWP (never two holders), and
//! each refusal gets its NAK, its status and its counter, and writes nothing.

use anyhow::{bail, ensure, Context, Result};
use ferroce_driver::{
    access, DmaMemory, MemoryRegion, QueuePair, SendWr, Sge, WorkCompletion, WrOpcode,
};
use ferroce_sim::world::{Host, World, WorldConfig};
use ferroce_sim::Fault;
use ferroce_spec::opcodes::{RC_ATOMIC_ACKNOWLEDGE, RC_FETCH_ADD};
use ferroce_spec::queues::{
    WC_COMP_SWAP, WC_FETCH_ADD, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR,
    WC_REM_INV_REQ_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR, WQE_LEN,
};
use ferroce_tests::tx::TxPacket;
use ferroce_tests::wire::check_pcap;
use ferroce_tests::{budget, lossless_world, nonzero_counters, rng, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

const GUARD: usize = 64;

fn read_u64(h: &mut Host, addr: u64) -> Result<u64> {
    let mut b = [0u8; 8];
    h.dev.mem.read(addr, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn atomic(
    opcode: WrOpcode,
    wr_id: u64,
    result: (u64, u32),
    target: (u64, u32),
    compare_add: u64,
    swap: u64,
) -> SendWr {
    SendWr {
        wr_id,
        opcode,
        sg_list: vec![Sge {
            addr: result.0,
            length: 8,
            lkey: result.1,
        }],
        remote_addr: target.0,
        rkey: target.1,
        compare_add,
        swap,
        signaled: true,
        ..Default::default()
    }
}

/// Run both hosts until each has `n` more completions on its CQ (or its budget runs out).
fn reap_both(w: &mut World, n: [usize; 2], s: u64, what: &str) -> Result<[Vec<WorkCompletion>; 2]> {
    let mut got: [Vec<WorkCompletion>; 2] = [Vec::new(), Vec::new()];
    let mut idle = 0;
    while got[0].len() < n[0] || got[1].len() < n[1] {
        w.run(500)?;
        let a = w.a.dev.poll_cq(&mut w.a.cq, 256)?;
        let b = w.b.dev.poll_cq(&mut w.b.cq, 256)?;
        idle = if a.is_empty() && b.is_empty() {
            idle + 500
        } else {
            0
        };
        got[0].extend(a);
        got[1].extend(b);
        ensure!(
            idle < budget(500_000),
            "seed {s}: {what}: {}/{} and {}/{} completions; a: {}; b: {}",
            got[0].len(),
            n[0],
            got[1].len(),
            n[1],
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    Ok(got)
}

/// Every host's NIC: no stray response, no refused key, no DMA outside a region.
fn clean(w: &World, s: u64) -> Result<()> {
    for h in [&w.a, &w.b] {
        ensure!(
            h.counter("resp_bad_resp")? == 0,
            "seed {s}: stray responses"
        );
        ensure!(h.counter("resp_bad_rkey")? == 0, "seed {s}: keys refused");
        ensure!(
            h.counter("resp_bad_req")? == 0,
            "seed {s}: requests refused"
        );
        ensure!(
            h.sim.borrow().rc.borrow().violations.is_empty(),
            "seed {s}: host memory violations: {:?}",
            h.sim.borrow().rc.borrow().violations
        );
    }
    Ok(())
}

/// Both hosts FETCH_AND_ADD a counter in the other's memory from four QPs at once, lists of
/// random addends: each counter ends at its start plus every addend; the original values its
/// adds returned, sorted, are distinct and each is the one before plus that one's addend (so
/// the NIC did them one at a time); each QP's come back increasing (in its order); every
/// completion is exact; the guard bytes around the counters and the results never change.
/// Both links' frames pass tshark and scapy (ICRC): the FETCH_ADDs carry exactly the addends,
/// the ATOMIC ACKNOWLEDGEs exactly the original values that landed.
#[test]
fn fetch_and_add_from_several_qps_sums_and_serializes() -> Result<()> {
    let s = seed("fetch_and_add_from_several_qps_sums_and_serializes");
    add_chains(s, lossless_world(s)?, soak(24), false)
}

/// The same over lossy links (loss, corruption, duplication, reordering both ways): lost
/// requests are sent again, lost ATOMIC ACKNOWLEDGEs are answered again from the responder's
/// replay cache, so each add is done exactly once (the counter is the sum, every original
/// value in the chain, `resp_atomics` the count) and completes once.
#[test]
fn fetch_and_add_over_a_lossy_link_is_done_exactly_once() -> Result<()> {
    let s = seed("fetch_and_add_over_a_lossy_link_is_done_exactly_once");
    add_chains(s, ferroce_tests::lossy_world(s, 0.03)?, soak(24), true)
}

fn add_chains(s: u64, mut w: World, per: usize, lossy: bool) -> Result<()> {
    let mut r = rng(s);
    let dir = std::env::temp_dir().join(format!("ferroce-atomic-{s}"));
    std::fs::create_dir_all(&dir)?;
    let pcaps = [dir.join("ab.pcap"), dir.join("ba.pcap")];
    if !lossy {
        w.ab.tap(&pcaps[0])?;
        w.ba.tap(&pcaps[1])?;
    }
    let nqp = 4usize;
    // Per host: its counter (in the middle of a guarded buffer) and its result slots.
    let mut counter: Vec<(MemoryRegion, Vec<u8>, u64)> = Vec::new();
    let mut results: Vec<(MemoryRegion, Vec<u8>)> = Vec::new();
    for side in 0..2 {
        let h = if side == 0 { &mut w.a } else { &mut w.b };
        let mut img: Vec<u8> = (0..2 * GUARD + 8).map(|_| r.gen()).collect();
        let start = r.gen_range(0..1u64 << 62);
        img[GUARD..GUARD + 8].copy_from_slice(&start.to_le_bytes());
        counter.push((h.buffer(img.len(), &img)?, img, start));
        let fill: Vec<u8> = (0..nqp * per * 16 + GUARD).map(|_| r.gen()).collect();
        results.push((h.buffer(fill.len(), &fill)?, fill));
    }
    let mut pairs = Vec::new();
    for _ in 0..nqp {
        let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
        pairs.push(w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?);
    }
    // adds[side][qp]: the addends host `side` sent on QP `qp`, in order.
    let mut adds = vec![vec![Vec::new(); nqp]; 2];
    for (k, (qa, qb)) in pairs.iter_mut().enumerate() {
        for (side, qp) in [(0usize, &mut *qa), (1, &mut *qb)] {
            let (res, tgt) = (&results[side].0, &counter[1 - side].0);
            let list: Vec<SendWr> = (0..per)
                .map(|i| {
                    let add = r.gen_range(1..1u64 << 40);
                    adds[side][k].push(add);
                    // Results 16 bytes apart: the 8 between are guards.
                    let slot = res.addr + (GUARD + (k * per + i) * 16) as u64;
                    atomic(
                        WrOpcode::AtomicFetchAndAdd,
                        (k * per + i) as u64,
                        (slot, res.lkey),
                        (tgt.addr + GUARD as u64, tgt.rkey),
                        add,
                        r.gen(),
                    )
                })
                .collect();
            let h = if side == 0 { &mut w.a } else { &mut w.b };
            h.dev.post_send(qp, &list)?;
        }
    }
    let got = reap_both(&mut w, [nqp * per, nqp * per], s, "adds")?;
    // origs[side]: the original values host `side`'s adds brought back.
    let mut origs: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for side in 0..2 {
        let qpns: Vec<u32> = pairs
            .iter()
            .map(|(qa, qb)| if side == 0 { qa.qpn } else { qb.qpn })
            .collect();
        for (k, qpn) in qpns.iter().enumerate() {
            let mine: Vec<(u64, u32, u32, u32)> = got[side]
                .iter()
                .filter(|c| c.qpn == *qpn)
                .map(|c| (c.wr_id, c.status, c.opcode, c.byte_len))
                .collect();
            let want: Vec<(u64, u32, u32, u32)> = (0..per)
                .map(|i| ((k * per + i) as u64, WC_SUCCESS, WC_FETCH_ADD, 8))
                .collect();
            ensure!(mine == want, "seed {s}: side {side} QP {qpn}: {mine:?}");
        }
        // The originals, with their addends.
        let (res, fill) = &results[side];
        let mut mem = vec![0u8; fill.len()];
        w_host(&mut w, side).dev.mem.read(res.addr, &mut mem)?;
        let mut seen: Vec<(u64, u64)> = Vec::new();
        for (k, list) in adds[side].iter().enumerate() {
            let mut prev = None;
            for (i, add) in list.iter().enumerate() {
                let at = GUARD + (k * per + i) * 16;
                let orig = u64::from_le_bytes(mem[at..at + 8].try_into()?);
                if let Some(p) = prev {
                    ensure!(orig > p, "seed {s}: side {side} QP {k}: {orig} after {p}");
                }
                prev = Some(orig);
                seen.push((orig, *add));
                origs[side].push(orig);
                // The 8 bytes after each result, and the guard before the first, untouched.
                ensure!(
                    mem[at + 8..at + 16] == fill[at + 8..at + 16],
                    "seed {s}: side {side}: bytes after result {k}/{i} changed"
                );
            }
        }
        ensure!(mem[..GUARD] == fill[..GUARD], "seed {s}: guard changed");
        seen.sort_unstable();
        let start = counter[1 - side].2;
        let mut v = start;
        for (orig, add) in &seen {
            ensure!(
                *orig == v,
                "seed {s}: side {side}: an add returned {orig:#x}, the chain is at {v:#x}"
            );
            v = v.wrapping_add(*add);
        }
        // The counter in the peer's memory: the sum, its guards unchanged.
        let (cm, img, _) = &counter[1 - side];
        let mut now = vec![0u8; img.len()];
        w_host(&mut w, 1 - side).dev.mem.read(cm.addr, &mut now)?;
        let mut want = img.clone();
        want[GUARD..GUARD + 8].copy_from_slice(&v.to_le_bytes());
        ensure!(now == want, "seed {s}: side {side}'s counter or its guards");
    }
    for h in [&w.a, &w.b] {
        ensure!(
            h.counter("resp_atomics")? == (nqp * per) as u64,
            "seed {s}: atomics done: {}",
            h.counter("resp_atomics")?
        );
    }
    if lossy {
        ensure!(
            w.a.counter("resp_dup")? + w.b.counter("resp_dup")? > 0,
            "seed {s}: no duplicate reached a responder"
        );
        for h in [&w.a, &w.b] {
            ensure!(
                h.sim.borrow().rc.borrow().violations.is_empty(),
                "seed {s}: host memory violations"
            );
        }
        println!(
            "seed {s}: {} adds each way over {nqp} lossy QPs: exact; a: {}; b: {}",
            nqp * per,
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
        return Ok(());
    }
    clean(&w, s)?;
    // The wire, by outside readers: host `side`'s link carries its adds and its answers to
    // the other's.
    w.run(2000)?;
    for side in 0..2 {
        let rows = check_pcap(&pcaps[side])?;
        let mut sent: Vec<u64> = rows
            .iter()
            .filter(|f| f.opcode == RC_FETCH_ADD)
            .map(|f| f.swap_add.unwrap_or(0))
            .collect();
        let mut want: Vec<u64> = adds[side].iter().flatten().copied().collect();
        sent.sort_unstable();
        want.sort_unstable();
        ensure!(
            sent == want,
            "seed {s}: link {side}: the FETCH_ADDs' addends"
        );
        let mut acked: Vec<u64> = rows
            .iter()
            .filter(|f| f.opcode == RC_ATOMIC_ACKNOWLEDGE)
            .map(|f| f.orig.unwrap_or(0))
            .collect();
        let mut want = origs[1 - side].clone();
        acked.sort_unstable();
        want.sort_unstable();
        ensure!(
            acked == want,
            "seed {s}: link {side}: the ATOMIC ACKNOWLEDGEs' original data"
        );
    }
    println!(
        "seed {s}: {} adds each way over {nqp} QPs: exact",
        nqp * per
    );
    Ok(())
}

fn w_host(w: &mut World, side: usize) -> &mut Host {
    if side == 0 {
        &mut w.a
    } else {
        &mut w.b
    }
}

/// A lock word in each host's memory and four clients on the other host, one QP each: a
/// client takes the lock with CMP_AND_SWP (0 -> its id), and holding it adds one to an
/// occupancy word (which must have been 0), takes it back off, and frees the lock with
/// CMP_AND_SWP (its id -> 0, which must find its id); a client that finds the lock taken
/// tries again. Both hosts' clients at once: every acquisition is alone.
#[test]
fn compare_and_swap_lock_never_admits_two_holders() -> Result<()> {
    let s = seed("compare_and_swap_lock_never_admits_two_holders");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    let (nc, rounds) = (4usize, soak(5));
    // Per host: lock word at 0, occupancy at 8 (the other host's clients use them); result
    // slots for its own clients.
    let mut words = Vec::new();
    let mut slots = Vec::new();
    for side in 0..2 {
        let h = w_host(&mut w, side);
        words.push(h.buffer(16, &[0u8; 16])?);
        slots.push(h.buffer(8 * nc, &[0u8; 64])?);
    }
    let mut qps: Vec<[QueuePair; 2]> = Vec::new();
    for _ in 0..nc {
        let (qa, qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
        qps.push([qa, qb]);
    }
    // Client (side, c): its step (0 lock, 1 enter, 2 leave, 3 unlock) and acquisitions.
    let mut step = [[0usize; 4]; 2];
    let mut held = [[0usize; 4]; 2];
    let mut tries = 0usize;
    let post = |w: &mut World, qps: &mut Vec<[QueuePair; 2]>, side: usize, c: usize, st: usize| {
        let (lock, slot) = (&words[1 - side], &slots[side]);
        let id = (side * nc + c + 1) as u64;
        let res = (slot.addr + 8 * c as u64, slot.lkey);
        let (op, at, ca, sw) = match st {
            0 => (WrOpcode::AtomicCmpAndSwp, 0, 0, id),
            1 => (WrOpcode::AtomicFetchAndAdd, 8, 1, 0),
            2 => (WrOpcode::AtomicFetchAndAdd, 8, u64::MAX, 0),
            _ => (WrOpcode::AtomicCmpAndSwp, 0, id, 0),
        };
        let wr = atomic(
            op,
            (st * 16 + c) as u64,
            res,
            (lock.addr + at, lock.rkey),
            ca,
            sw,
        );
        w_host(w, side).dev.post_send(&mut qps[c][side], &[wr])
    };
    for side in 0..2 {
        for c in 0..nc {
            post(&mut w, &mut qps, side, c, 0)?;
        }
    }
    let mut idle = 0;
    while held.iter().flatten().any(|&n| n < rounds) {
        w.run(300)?;
        let mut any = false;
        for side in 0..2 {
            let h = w_host(&mut w, side);
            let done = h.dev.poll_cq(&mut h.cq, 16)?;
            for wc in done {
                any = true;
                let (st, c) = ((wc.wr_id / 16) as usize, (wc.wr_id % 16) as usize);
                let op = if st == 1 || st == 2 {
                    WC_FETCH_ADD
                } else {
                    WC_COMP_SWAP
                };
                ensure!(
                    wc.status == WC_SUCCESS && wc.opcode == op && wc.byte_len == 8,
                    "seed {s}: {wc:?}"
                );
                ensure!(st == step[side][c], "seed {s}: client {side}/{c} at {st}");
                let slot = slots[side].addr + 8 * c as u64;
                let orig = read_u64(w_host(&mut w, side), slot)?;
                let id = (side * nc + c + 1) as u64;
                let next = match st {
                    0 if orig == 0 => 1,
                    0 => {
                        tries += 1;
                        0
                    }
                    1 => {
                        ensure!(
                            orig == 0,
                            "seed {s}: client {side}/{c} entered with {orig} in"
                        );
                        2
                    }
                    2 => {
                        ensure!(orig == 1, "seed {s}: client {side}/{c} left with {orig} in");
                        3
                    }
                    _ => {
                        ensure!(
                            orig == id,
                            "seed {s}: client {side}/{c} freed {orig}'s lock"
                        );
                        held[side][c] += 1;
                        0
                    }
                };
                step[side][c] = next;
                if next != 0 || held[side][c] < rounds {
                    post(&mut w, &mut qps, side, c, next)?;
                } else {
                    step[side][c] = 9;
                }
            }
        }
        idle = if any { 0 } else { idle + 300 };
        if idle > budget(300_000) {
            bail!("seed {s}: the clients stopped: {step:?}, held {held:?}");
        }
    }
    for (side, word) in words.iter().enumerate() {
        let h = w_host(&mut w, side);
        ensure!(read_u64(h, word.addr)? == 0, "seed {s}: lock left taken");
        ensure!(read_u64(h, word.addr + 8)? == 0, "seed {s}: occupancy");
    }
    clean(&w, s)?;
    println!(
        "seed {s}: {} acquisitions by {} clients, {tries} tries lost: one holder at a time",
        2 * nc * rounds,
        2 * nc
    );
    Ok(())
}

/// Each refusal: a misaligned address (NAK invalid request, REM_INV_REQ_ERR, `resp_bad_req`),
/// a region without REMOTE_ATOMIC, a wrong rkey, 8 bytes past the region's end (NAK remote
/// access error, REM_ACCESS_ERR, `resp_bad_rkey`): the peer's word unchanged, the local
/// buffer unchanged, the next request flushed. An atomic WQE forged into the ring with a
/// local buffer that may not be written (LOC_PROT_ERR) or of 4 bytes (LOC_LEN_ERR) sends
/// nothing and fails the QP: the add behind it flushes too. The driver refuses an atomic
/// whose buffer is not 8 bytes.
#[test]
fn atomic_refusals_complete_with_their_status_and_write_nothing() -> Result<()> {
    let s = seed("atomic_refusals_complete_with_their_status_and_write_nothing");
    let mut r = rng(s);
    for case in 0..6 {
        let mut w = World::open(&WorldConfig::default())?;
        let (mut qa, _qb) =
            w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
        let img: Vec<u8> = (0..256).map(|_| r.gen()).collect();
        let tgt = w.b.buffer(256, &img)?;
        let no_atomic = w.b.dev.reg_mr(
            &w.b.pd,
            tgt.addr,
            256,
            access::REMOTE_WRITE | access::REMOTE_READ,
        )?;
        let fill: Vec<u8> = (0..64).map(|_| r.gen()).collect();
        let dst = w.a.buffer(64, &fill)?;
        let op = if r.gen_bool(0.5) {
            WrOpcode::AtomicFetchAndAdd
        } else {
            WrOpcode::AtomicCmpAndSwp
        };
        let mut wr = atomic(
            op,
            1,
            (dst.addr + 16, dst.lkey),
            (tgt.addr + 8 * r.gen_range(0..30), tgt.rkey),
            r.gen(),
            r.gen(),
        );
        let (want, counter) = match case {
            0 => {
                wr.remote_addr += r.gen_range(1..8);
                (WC_REM_INV_REQ_ERR, "resp_bad_req")
            }
            1 => {
                wr.rkey = no_atomic.rkey;
                (WC_REM_ACCESS_ERR, "resp_bad_rkey")
            }
            2 => {
                wr.rkey ^= r.gen_range(1..=255);
                (WC_REM_ACCESS_ERR, "resp_bad_rkey")
            }
            3 => {
                wr.remote_addr = tgt.addr + 256;
                (WC_REM_ACCESS_ERR, "resp_bad_rkey")
            }
            4 => (WC_LOC_PROT_ERR, "req_prot_err"),
            _ => (WC_LOC_LEN_ERR, "req_bad_wqe"),
        };
        let mut next = atomic(
            WrOpcode::AtomicFetchAndAdd,
            2,
            (dst.addr + 32, dst.lkey),
            (tgt.addr, tgt.rkey),
            1,
            0,
        );
        next.signaled = true;
        if case >= 4 {
            // Behind the driver's back: a local buffer without LOCAL_WRITE, or of 4 bytes.
            if case == 4 {
                let ro = w.a.dev.reg_mr(&w.a.pd, dst.addr, 64, 0)?;
                wr.sg_list[0].lkey = ro.lkey;
            } else {
                wr.sg_list[0].length = 4;
                ensure!(
                    w.a.dev.post_send(&mut qa, &[wr.clone()]).is_err(),
                    "seed {s}: the driver took a 4-byte atomic"
                );
            }
            let size = 1u64 << qa.sq_log_size;
            let slot = u64::from(qa.sq_pi) & (size - 1);
            w.a.dev
                .mem
                .write(qa.sq.addr + slot * WQE_LEN as u64, &wr.wqe())?;
            qa.sq_pi = qa.sq_pi.wrapping_add(1);
            w.a.dev.ring_sq_doorbell(qa.qpn, qa.sq_pi)?;
            w.a.dev.post_send(&mut qa, &[next.clone()])?;
        } else {
            w.a.dev.post_send(&mut qa, &[wr.clone(), next.clone()])?;
        }
        let got = reap_both(&mut w, [2, 0], s, &format!("case {case}"))?;
        let status: Vec<(u64, u32)> = got[0].iter().map(|c| (c.wr_id, c.status)).collect();
        // A fatal NAK fails the QP, and so does a refused WQE (a local error): the next
        // flushes.
        ensure!(
            status == [(1, want), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: case {case}: {status:?}"
        );
        let h = if counter.starts_with("req") {
            &w.a
        } else {
            &w.b
        };
        ensure!(h.counter(counter)? == 1, "seed {s}: case {case}: {counter}");
        // The peer's words: unchanged.
        let mut now = vec![0u8; 256];
        w.b.dev.mem.read(tgt.addr, &mut now)?;
        let expect = img.clone();
        let local = fill.clone();
        ensure!(w.b.counter("resp_atomics")? == 0, "seed {s}: case {case}");
        ensure!(
            now == expect,
            "seed {s}: case {case}: the peer's memory changed"
        );
        let mut mine = vec![0u8; 64];
        w.a.dev.mem.read(dst.addr, &mut mine)?;
        ensure!(mine == local, "seed {s}: case {case}: a's buffer changed");
        ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    }
    Ok(())
}

/// An ATOMIC ACKNOWLEDGE that carries a payload after its AtomicAckETH (IBA 9.4.6: it has
/// none) is malformed: a's NIC drops it whole and counts it (the parser's `rx_bad_len`: bytes
/// left for an opcode without payload), writes nothing to the atomic's buffer, and takes the
/// next packet. Here b's real answer to a FETCH_AND_ADD is caught on the wire and a copy with
/// 1-64 bytes of payload (built by etherparse, the ICRC from `spec`) arrives in its place; a's
/// ACK timer sends the request again, b answers it from its replay cache (the add is not done
/// twice) and the atomic completes with the word's original value; a second FETCH_AND_ADD then
/// goes through as usual.
#[test]
fn an_atomic_acknowledge_with_a_payload_is_dropped_and_the_atomic_is_answered_again() -> Result<()>
{
    let s =
        seed("an_atomic_acknowledge_with_a_payload_is_dropped_and_the_atomic_is_answered_again");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    w.retry.timeout = Some(3);
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let img: Vec<u8> = (0..64).map(|_| r.gen()).collect();
    let tgt = w.b.buffer(64, &img)?;
    let fill: Vec<u8> = (0..64).map(|_| r.gen()).collect();
    let dst = w.a.buffer(64, &fill)?;
    let caught: Rc<RefCell<Option<Vec<u8>>>> = Rc::default();
    let (c, mut once) = (caught.clone(), true);
    w.ba.set_fault_hook(move |_, f| {
        let f = &f[..f.len() - 4];
        let aack = ferroce_spec::icrc::parse(f)
            .is_ok_and(|(l, _)| f[l.bth_offset()] == RC_ATOMIC_ACKNOWLEDGE);
        if aack && once {
            once = false;
            *c.borrow_mut() = Some(f.to_vec());
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let (add1, add2) = (r.gen_range(1..1u64 << 40), r.gen_range(1..1u64 << 40));
    let orig = u64::from_le_bytes(img[8..16].try_into()?);
    let fa = |id: u64, at: u64, add: u64| {
        atomic(
            WrOpcode::AtomicFetchAndAdd,
            id,
            (dst.addr + at, dst.lkey),
            (tgt.addr + 8, tgt.rkey),
            add,
            0,
        )
    };
    w.a.dev.post_send(&mut qa, &[fa(1, 16, add1)])?;
    w.run_until(100_000, "b's ATOMIC ACKNOWLEDGE on the wire", || {
        caught.borrow().is_some()
    })?;
    let frame = caught.borrow_mut().take().context("caught")?;
    let build = |payload: Vec<u8>| -> Result<Vec<u8>> {
        let mut p = TxPacket::parse(&frame)?;
        p.payload = payload;
        Ok(p.frame()?)
    };
    ensure!(
        build(Vec::new())? == frame,
        "seed {s}: the frame rebuilt without a payload differs from b's"
    );
    let extra = r.gen_range(1..=64usize);
    w.ba.inject(0, &build((0..extra).map(|_| r.gen()).collect())?);
    w.run_until(20_000, "a's NIC to count the malformed answer", || {
        w.a.counter("rx_bad_len").is_ok_and(|n| n == 1)
    })?;
    let mut mine = vec![0u8; 64];
    w.a.dev.mem.read(dst.addr, &mut mine)?;
    ensure!(
        mine == fill,
        "seed {s}: the malformed answer ({extra} bytes of payload) wrote a's buffer"
    );
    let got = reap_both(&mut w, [1, 0], s, "the atomic answered again")?;
    let want = WorkCompletion {
        wr_id: 1,
        status: WC_SUCCESS,
        opcode: WC_FETCH_ADD,
        byte_len: 8,
        qpn: qa.qpn,
        ..Default::default()
    };
    ensure!(got[0] == [want], "seed {s}: {:?}", got[0]);
    w.a.dev.post_send(&mut qa, &[fa(2, 32, add2)])?;
    let got = reap_both(&mut w, [1, 0], s, "the next atomic")?;
    ensure!(
        got[0] == [WorkCompletion { wr_id: 2, ..want }],
        "seed {s}: {:?}",
        got[0]
    );
    let mut expect = fill.clone();
    expect[16..24].copy_from_slice(&orig.to_le_bytes());
    expect[32..40].copy_from_slice(&orig.wrapping_add(add1).to_le_bytes());
    w.a.dev.mem.read(dst.addr, &mut mine)?;
    ensure!(mine == expect, "seed {s}: a's result words");
    let mut now = vec![0u8; 64];
    w.b.dev.mem.read(tgt.addr, &mut now)?;
    let mut peer = img.clone();
    peer[8..16].copy_from_slice(&orig.wrapping_add(add1).wrapping_add(add2).to_le_bytes());
    ensure!(
        now == peer,
        "seed {s}: b's word is not the sum of the two adds"
    );
    let st = w.a.dev.rc_stats()?;
    ensure!(
        w.a.counter("rx_bad_len")? == 1
            && w.a.counter("resp_bad_resp")? == 0
            && st.timeouts == 1
            && w.b.counter("resp_atomics")? == 2
            && w.b.counter("resp_dup")? == 1,
        "seed {s}: a {st:?}; a: {}; b: {}",
        nonzero_counters(&w.a),
        nonzero_counters(&w.b)
    );
    ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    println!(
        "seed {s}: an ATOMIC ACKNOWLEDGE with {extra} bytes of payload dropped and counted; \
         the add answered again from b's replay cache, done once"
    );
    Ok(())
}

/// The benchmark's and the demo's atomic stream (`traffic::atomic_stream`): FETCH_AND_ADD and
/// CMP_AND_SWP in turn on one QP with the send queue full, both ways one after the other,
/// every original value and the word's end value checked there; the rate is at least one
/// atomic per round trip of the 16 allowed in flight.
#[test]
fn atomic_streams_both_ways_bring_back_every_original_value() -> Result<()> {
    use ferroce_sim::traffic::{atomic_stream, Direction};
    let s = seed("atomic_streams_both_ways_bring_back_every_original_value");
    let mut w = lossless_world(s)?;
    let (mut qa, mut qb) = w.connect(1024, 0xFF_FFF0, 7, 64)?;
    for (dir, qp) in [(Direction::AToB, &mut qa), (Direction::BToA, &mut qb)] {
        let run = atomic_stream(&mut w, dir, qp, soak(150), s, |_| ())?;
        ensure!(
            run.cycles_per_op() < 400.0,
            "seed {s}: {} cycles per atomic {}",
            run.cycles_per_op(),
            dir.name()
        );
        println!(
            "seed {s}: {} atomics {}: {:.0} cycles each",
            run.count,
            dir.name(),
            run.cycles_per_op()
        );
    }
    clean(&w, s)?;
    Ok(())
}
