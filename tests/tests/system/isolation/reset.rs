//! A reset QP keeps nothing of its last life that is still on its way through the NIC: a
//! rewind not yet taken, a receive queue flush in progress, a receive completion, the READ
//! responses it saw.

use super::{read_wr, watch, write_wr};
use anyhow::{ensure, Result};
use ferroce_driver::{QpAttr, QpState, QueuePair, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::pause::PauseGenerator;
use ferroce_sim::pcie::RootComplex;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// A go-back-N rewind the requester has not yet taken when its QP is reset (a's requester
/// waits for another QP's WQE fetch, a's host holding its DMA completions) is of the QP's last
/// life: the next connection's first WRITE goes at its own first PSN, once, and completes.
#[test]
fn a_rewind_waiting_when_its_qp_is_reset_moves_nothing_new() -> Result<()> {
    let s = seed("a_rewind_waiting_when_its_qp_is_reset_moves_nothing_new");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(4);
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let (mut ya, _yb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = r.gen_range(1..=2 * pmtu);
    let src = w.a.buffer(len as usize, &vec![0x5a; len as usize])?;
    let dst = w.b.buffer(2 * len as usize, &vec![0; 2 * len as usize])?;
    // b's QP hears nothing: the WRITE times out.
    let dead = qb.qpn;
    let seen = watch(&w, true, move |b| b.dqpn == dead)?;
    w.a.dev
        .post_send(&mut qa, &[write_wr(1, &src, len, dst.addr, dst.rkey)])?;
    let t0 = w.cycle();
    while seen.borrow().is_empty() {
        ensure!(w.cycle() - t0 < budget(50_000), "seed {s}: nothing sent");
        w.run(1)?;
    }
    // The requester goes to fetch the other QP's WQE, and waits for it.
    let rc = w.a.sim.borrow().rc.clone();
    let held = |p: f64| {
        rc.borrow_mut()
            .set_completion_pause_generator(PauseGenerator::random(s, p))
    };
    held(1.0);
    let reads = rc.borrow().dma_stats().read_requests;
    w.a.dev.post_send(
        &mut ya,
        &[write_wr(2, &src, len, dst.addr + len as u64, dst.rkey)],
    )?;
    while rc.borrow().dma_stats().read_requests == reads {
        ensure!(w.cycle() - t0 < budget(50_000), "seed {s}: no WQE fetch");
        w.run(1)?;
    }
    // The timeout: a rewind, which the requester cannot take yet.
    while w.a.counter("cpl_timeouts")? == 0 {
        ensure!(w.cycle() - t0 < budget(200_000), "seed {s}: no timeout");
        w.run(100)?;
    }
    let psn = r.gen_range(0..1 << 24);
    w.reconnect(&mut qa, &mut qb, pmtu, psn, r.gen_range(0..1 << 24))?;
    let seen = watch(&w, true, |_| false)?;
    held(0.0);
    w.a.dev
        .post_send(&mut qa, &[write_wr(3, &src, len, dst.addr, dst.rkey)])?;
    let got = reap(&mut w, 0, 2, budget(100_000), &format!("seed {s}"))?;
    w.run(20_000)?;
    let late = w.a.dev.poll_cq(&mut w.a.cq, 16)?;
    let mut ids: Vec<_> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ids.sort_unstable();
    ensure!(
        ids == [(2, WC_SUCCESS), (3, WC_SUCCESS)] && late.is_empty(),
        "seed {s}: a completed {got:?} then {late:?}: {}",
        nonzero_counters(&w.a)
    );
    let pkts = len.div_ceil(pmtu);
    let sent: Vec<u32> = seen
        .borrow()
        .iter()
        .filter(|b| b.dqpn == qb.qpn)
        .map(|b| b.psn)
        .collect();
    let want: Vec<u32> = (0..pkts).map(|k| (psn + k) & 0xFF_FFFF).collect();
    ensure!(
        sent == want,
        "seed {s}: pmtu {pmtu}, {len} B: the new connection sent PSNs {sent:x?}, not {want:x?}"
    );
    println!("seed {s}: pmtu {pmtu}, {len} B: the rewind of the last life moved nothing");
    Ok(())
}

/// A receive queue flush (b's QP moved to ERR with receives posted) whose WQE fetch is
/// answered after the host reset the QP (b's host holds its DMA completions meanwhile)
/// completes nothing: the WQE is of the QP's last life, and the host counts its receive queue
/// from the reset. On the next connection b's receives complete, each with its own wr_id.
#[test]
fn a_receive_flush_answered_after_its_qp_was_reset_completes_nothing() -> Result<()> {
    let s = seed("a_receive_flush_answered_after_its_qp_was_reset_completes_nothing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = r.gen_range(1..=4096u32);
    let fill: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    let src = w.a.buffer(len as usize, &fill)?;
    let land = w.b.buffer(4096, &[0; 4096])?;
    let recv = |wr_id: u64| RecvWr {
        wr_id,
        sg_list: vec![Sge {
            addr: land.addr,
            length: 4096,
            lkey: land.lkey,
        }],
    };
    let old = r.gen_range(1..=8u64);
    let wrs: Vec<RecvWr> = (0..old).map(|i| recv(100 + i)).collect();
    w.b.dev.post_recv(&mut qb, &wrs)?;
    let rc = w.b.sim.borrow().rc.clone();
    let held = |p: f64| {
        rc.borrow_mut()
            .set_completion_pause_generator(PauseGenerator::random(s, p))
    };
    held(1.0);
    let reads = rc.borrow().dma_stats().read_requests;
    w.b.dev
        .modify_qp(&mut qb, QpState::Err, QpAttr::default())?;
    let t0 = w.cycle();
    while rc.borrow().dma_stats().read_requests == reads {
        ensure!(w.cycle() - t0 < budget(50_000), "seed {s}: no flush fetch");
        w.run(1)?;
    }
    w.run(r.gen_range(0..200))?;
    let before = w.b.dev.poll_cq(&mut w.b.cq, 16)?;
    w.reconnect(
        &mut qa,
        &mut qb,
        pmtu,
        r.gen_range(0..1 << 24),
        r.gen_range(0..1 << 24),
    )?;
    held(0.0);
    w.run(20_000)?;
    let after = w.b.dev.poll_cq(&mut w.b.cq, 16)?;
    ensure!(
        after.is_empty(),
        "seed {s}: b completed {after:?} after the reset ({before:?} before)"
    );
    // The next connection: two receives, two SENDs, each receive its own completion.
    w.b.dev.post_recv(&mut qb, &[recv(200), recv(201)])?;
    let sends: Vec<SendWr> = (0..2)
        .map(|i| SendWr {
            opcode: WrOpcode::Send,
            ..write_wr(300 + i, &src, len, 0, 0)
        })
        .collect();
    w.a.dev.post_send(&mut qa, &sends)?;
    let got = reap(&mut w, 1, 2, budget(100_000), &format!("seed {s}"))?;
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status, c.byte_len))
            .eq([(200, WC_SUCCESS, len), (201, WC_SUCCESS, len)]),
        "seed {s}: b completed {got:?}: {}",
        nonzero_counters(&w.b)
    );
    println!(
        "seed {s}: pmtu {pmtu}: {old} receives flushing, {} completed before the reset, none \
         after",
        before.len()
    );
    Ok(())
}

/// A SEND's receive completion waiting when its QP is reset completes nothing after the
/// reset: b's host takes the first beat of a DMA write, then nothing until after the
/// reconnect, so the SEND's bytes wait and, behind them, either the completion's decision (a
/// SEND longer than the NIC's write buffering) or its CQE, already made in the last life (a
/// short one: the CQE lands after the reset, and the host knows it by its epoch). The host
/// counts its receive queue from the reset: on the next connection b's receive completes
/// with its own wr_id. One SEND of 1-32 B and one of 41-64 B, each on a fresh world.
#[test]
fn a_receive_completion_waiting_when_its_qp_is_reset_completes_nothing() -> Result<()> {
    let s = seed("a_receive_completion_waiting_when_its_qp_is_reset_completes_nothing");
    let mut r = rng(s);
    for len in [r.gen_range(1..=32u32), r.gen_range(41..=64u32)] {
        reset_while_a_receive_completes(s, &mut r, len)?;
    }
    Ok(())
}

/// Reconnect the pair (the QPs reset, new PSNs), then give the host that took no writes its
/// bandwidth back, and let what was waiting land.
fn reconnect_and_let_writes_through(
    w: &mut World,
    (qa, qb): (&mut QueuePair, &mut QueuePair),
    pmtu: u32,
    r: &mut impl Rng,
    rc: &Rc<RefCell<RootComplex>>,
) -> Result<()> {
    w.reconnect(
        qa,
        qb,
        pmtu,
        r.gen_range(0..1 << 24),
        r.gen_range(0..1 << 24),
    )?;
    rc.borrow_mut().set_write_bandwidth(1e9);
    w.run(20_000)?;
    Ok(())
}

fn reset_while_a_receive_completes(s: u64, r: &mut impl Rng, len: u32) -> Result<()> {
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let src = w.a.buffer(len as usize, &vec![0x2d; len as usize])?;
    let land = w.b.buffer(4096, &[0; 4096])?;
    let recv = |wr_id: u64| RecvWr {
        wr_id,
        sg_list: vec![Sge {
            addr: land.addr,
            length: 4096,
            lkey: land.lkey,
        }],
    };
    let send = |wr_id: u64| SendWr {
        opcode: WrOpcode::Send,
        ..write_wr(wr_id, &src, len, 0, 0)
    };
    w.b.dev.post_recv(&mut qb, &[recv(100)])?;
    let rc = w.b.sim.borrow().rc.clone();
    // b's host takes one beat of a memory write, then none (a token bucket that never
    // refills): the receive WQE is fetched, the SEND's bytes wait.
    rc.borrow_mut().set_write_bandwidth(1e-12);
    w.a.dev.post_send(&mut qa, &[send(1)])?;
    w.run(r.gen_range(1_000..3_000))?;
    let accepted = w.b.counter("rx_accepted")?;
    let cqes = w.b.counter("cpl_cqes")?;
    let before = w.b.dev.poll_cq(&mut w.b.cq, 16)?;
    // (The scenario: the SEND taken, its completion not in b's CQ.)
    ensure!(
        accepted == 1 && before.is_empty(),
        "seed {s}: {len} B: not the scenario: {before:?} polled, {}",
        nonzero_counters(&w.b)
    );
    reconnect_and_let_writes_through(&mut w, (&mut qa, &mut qb), pmtu, r, &rc)?;
    let after = w.b.dev.poll_cq(&mut w.b.cq, 16)?;
    ensure!(
        after.is_empty(),
        "seed {s}: {len} B: b completed {after:?} after the reset ({cqes} CQEs made before \
         it)"
    );
    w.b.dev.post_recv(&mut qb, &[recv(200)])?;
    w.a.dev.post_send(&mut qa, &[send(2)])?;
    let got = reap(&mut w, 1, 1, budget(100_000), &format!("seed {s}"))?;
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status, c.byte_len))
            .eq([(200, WC_SUCCESS, len)]),
        "seed {s}: b completed {got:?}: {}",
        nonzero_counters(&w.b)
    );
    println!(
        "seed {s}: pmtu {pmtu}, {len} B: {cqes} CQEs made before the reset, none completed \
         after"
    );
    Ok(())
}

/// A send completion whose CQE is on its way to the host when its QP is reset (a's host
/// takes one beat of a memory write after the WRITE is on the wire, then nothing until after
/// the reconnect) is not returned after the reset: its epoch is the QP's last. The next
/// connection's WRITE completes with its own wr_id.
#[test]
fn a_send_completion_on_its_way_when_its_qp_is_reset_completes_nothing() -> Result<()> {
    let s = seed("a_send_completion_on_its_way_when_its_qp_is_reset_completes_nothing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = r.gen_range(1..=2 * pmtu);
    let src = w.a.buffer(len as usize, &vec![0x4e; len as usize])?;
    let dst = w.b.buffer(len as usize, &vec![0; len as usize])?;
    w.a.dev
        .post_send(&mut qa, &[write_wr(1, &src, len, dst.addr, dst.rkey)])?;
    // Until b has taken the WRITE: a's payload is read, its CQE waits for the ACK.
    let mut waited = 0;
    while w.b.counter("rx_accepted")? < u64::from(len.div_ceil(pmtu)) {
        ensure!(waited < 100_000, "seed {s}: b took no WRITE");
        w.run(50)?;
        waited += 50;
    }
    let rc = w.a.sim.borrow().rc.clone();
    rc.borrow_mut().set_write_bandwidth(1e-12);
    w.run(r.gen_range(2_000..4_000))?;
    let cqes = w.a.counter("cpl_cqes")?;
    let before = w.a.dev.poll_cq(&mut w.a.cq, 16)?;
    // (The scenario: the CQE made, not yet in a's CQ.)
    ensure!(
        cqes == 1 && before.is_empty(),
        "seed {s}: {len} B: not the scenario: {before:?} polled, {}",
        nonzero_counters(&w.a)
    );
    reconnect_and_let_writes_through(&mut w, (&mut qa, &mut qb), pmtu, &mut r, &rc)?;
    let after = w.a.dev.poll_cq(&mut w.a.cq, 16)?;
    ensure!(
        after.is_empty(),
        "seed {s}: {len} B: a completed {after:?} after the reset"
    );
    w.a.dev
        .post_send(&mut qa, &[write_wr(2, &src, len, dst.addr, dst.rkey)])?;
    let got = reap(&mut w, 0, 1, budget(100_000), &format!("seed {s}"))?;
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status))
            .eq([(2, WC_SUCCESS)]),
        "seed {s}: a completed {got:?}: {}",
        nonzero_counters(&w.a)
    );
    println!("seed {s}: pmtu {pmtu}, {len} B: the CQE on its way at the reset not returned");
    Ok(())
}

/// READ responses a QP saw in its last life do not stand for the next one's: the completer
/// takes an ACK timeout of a QP whose READ responses are still coming as no timeout (the
/// timer again), and a reset forgets them. A 1-16 KiB READ completes, the pair reconnects,
/// and the next connection's first WRITE is lost on the wire: it goes again one timeout
/// after it was sent (before, the READ's responses kept the timer going a second time).
#[test]
fn read_responses_of_the_last_life_do_not_defer_the_next_ones_timeout() -> Result<()> {
    let s = seed("read_responses_of_the_last_life_do_not_defer_the_next_ones_timeout");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let tmo = 4u8;
    w.retry.timeout = Some(tmo);
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = r.gen_range(1024..=16384u32);
    let from = w.b.buffer(len as usize, &vec![0x3c; len as usize])?;
    let into = w.a.buffer(len as usize, &vec![0; len as usize])?;
    w.a.dev
        .post_send(&mut qa, &[read_wr(1, &into, len, from.addr, from.rkey)])?;
    let got = reap(
        &mut w,
        0,
        1,
        budget(100_000),
        &format!("seed {s}: the READ"),
    )?;
    ensure!(got[0].status == WC_SUCCESS, "seed {s}: {got:?}");
    let psn = r.gen_range(0..1 << 24);
    w.reconnect(&mut qa, &mut qb, pmtu, psn, r.gen_range(0..1 << 24))?;
    // The WRITE's transmissions (their time on the wire), the first dropped.
    let sent: Rc<RefCell<Vec<u64>>> = Default::default();
    let s2 = sent.clone();
    let dqpn = qb.qpn;
    w.ab.set_timed_fault_hook(move |_, at, f| match bth(f) {
        Some(b) if b.dqpn == dqpn && b.psn == psn => {
            s2.borrow_mut().push(at);
            if s2.borrow().len() == 1 {
                Fault::Drop
            } else {
                Fault::Pass
            }
        }
        _ => Fault::Pass,
    })?;
    let wlen = r.gen_range(1..=pmtu);
    w.a.dev
        .post_send(&mut qa, &[write_wr(2, &into, wlen, from.addr, from.rkey)])?;
    let got = reap(
        &mut w,
        0,
        1,
        budget(200_000),
        &format!("seed {s}: the WRITE"),
    )?;
    ensure!(got[0].status == WC_SUCCESS, "seed {s}: {got:?}");
    let sent = sent.borrow();
    ensure!(
        sent.len() == 2,
        "seed {s}: the WRITE went {} times",
        sent.len()
    );
    // IBA's timeout: 4.096 us << code.
    let t_ps = 4_096_000u64 << tmo;
    let after = sent[1] - sent[0];
    ensure!(
        after < t_ps * 3 / 2,
        "seed {s}: pmtu {pmtu}, READ {len} B: the WRITE went again {} us after it was sent, \
         the timeout is {} us",
        after / 1_000_000,
        t_ps / 1_000_000
    );
    println!(
        "seed {s}: the lost WRITE went again after {} us (timeout {} us)",
        after / 1_000_000,
        t_ps / 1_000_000
    );
    Ok(())
}
