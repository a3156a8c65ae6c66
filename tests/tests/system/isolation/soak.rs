//! The isolation soak: 64 QP pairs doing every verb both ways (WRITE, READ, SEND, atomics) over
//! links that lose 1% of frames and reorder them, PFC on, host a's memory slower than the
//! wire and both root complexes holding the NICs' memory requests back a fifth of the time. Sixteen of the pairs go bad at random times: the peer stops posting receives (the
//! sender's SENDs meet RNR NAKs for ever, `rnr_retry` 7), the peer goes to ERR or to RESET,
//! the peer deregisters the region being written with work in flight, or both ends are reset
//! and connected again.
//!
//! Three runs of the same healthy work: alone, beside the sixteen pairs doing their work and
//! never going bad (`Calm`), and beside them going bad (`Faulty`). The NIC serves one work
//! request at a time per engine, so any extra work slows the rest by its share (measured: the
//! sixteen pairs at 8 WRs a connection cost 1.19-1.27x whether or not they went bad); the
//! faulty pairs' work is light and posted shortly before their fault, so it is in flight when
//! the fault hits. Asserted: the faults cost the healthy work at most `FAULT_COST` over the
//! same work calm, and the whole at most `SLOWER` over the healthy work alone.

use crate::pairs::{pair, post_one, reap, reconnect, End, OUTSTANDING};
use anyhow::{ensure, Result};
use ferroce_driver::{QpAttr, QpState};
use ferroce_sim::world::{RetryAttrs, World, WorldConfig};
use ferroce_sim::RandomFaults;
use ferroce_spec::queues::{WC_REM_ACCESS_ERR, WC_RETRY_EXC_ERR, WC_WR_FLUSH_ERR};
use ferroce_tests::{nonzero_counters, rng, seed, soak, Bth};
use rand::Rng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

const PAIRS: usize = 64;
const FAULTY: usize = 16;
/// WRs a faulty end posts a connection.
const FAULTY_WORK: u64 = 4;
/// A faulty end posts its work from this many cycles before its fault.
const LEAD: u64 = 20_000;
/// How much longer the healthy work may take beside the faulty pairs than alone (throughput
/// within 20%).
const SLOWER: f64 = 1.25;
/// How much longer beside the faulty pairs than beside the same pairs calm: the faults
/// themselves (run to run noise is a few percent).
const FAULT_COST: f64 = 1.15;

/// Which pairs run beside the healthy ones.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// None.
    Alone,
    /// The faulty pairs, doing their work, never going bad.
    Calm,
    /// The faulty pairs, going bad.
    Faulty,
}

/// Frames a QP's requester built before its error may still wait in the MAC's transmit queue
/// behind others when the host sees the error (measured: 3,000 cycles, a reset pair's SEND
/// behind 24 KB); a request on the wire this many cycles after it is late.
const QUEUED: u64 = 8_192;

/// How a faulty pair goes bad (its `b` end is the bad peer, its `a` end the victim).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bad {
    NoRecv,
    PeerErr,
    PeerReset,
    Dereg,
    Reconnect,
}

/// What the victim's first failed send completion may be: WR_FLUSH_ERR (the QP moved to ERR
/// at the end, or by its reconnection), RETRY_EXC_ERR (a peer that answers nothing; or, with
/// three retries over a lossy link, one that answers only RNR NAKs: a lost RNR NAK or
/// resend is a timeout, and RNR NAKs are not progress, as in rxe), REM_ACCESS_ERR for a
/// WRITE into the region deregistered. Never RNR_RETRY_EXC_ERR (`rnr_retry` 7), a local
/// error or another remote one.
fn allowed(bad: Bad, status: u32) -> bool {
    status == WC_WR_FLUSH_ERR
        || status == WC_RETRY_EXC_ERR
        || (bad == Bad::Dereg && status == WC_REM_ACCESS_ERR)
}

/// Per receiving QP (the frame's destination QPN): the newest request PSN seen on the wire,
/// and, once its sender has failed, the newest it may ever carry and when that was seen.
#[derive(Default)]
struct Watch {
    newest: HashMap<u32, u32>,
    frozen: HashMap<u32, (u32, u64)>,
    late: Vec<(u32, u32)>,
}

fn newer(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b) & 0xFF_FFFF;
    d != 0 && d < 0x80_0000
}

/// One run: the healthy pairs' work (the same in every run), beside what `mode` says; the
/// mean of the cycles each healthy end took to do its work.
fn run(s: u64, mode: Mode) -> Result<u64> {
    let faults = RandomFaults {
        loss: 0.01,
        reorder: 0.01,
        seed: s,
        ..Default::default()
    };
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        write_gbps: [Some(6.0), None],
        // The root complexes hold the NICs' memory requests back at random too.
        rq_pause: 0.2,
        faults,
        ..WorldConfig::default()
    })?;
    w.retry.timeout = Some(6);
    w.a.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    let hpd = [w.a.dev.alloc_pd()?, w.b.dev.alloc_pd()?];
    let mut hcq = [w.a.dev.create_cq(1024)?, w.b.dev.create_cq(1024)?];
    let fpd = [w.a.dev.alloc_pd()?, w.b.dev.alloc_pd()?];
    let mut fcq = [w.a.dev.create_cq(1024)?, w.b.dev.create_cq(1024)?];
    // Healthy pairs draw from their own stream, so they do the same work in both runs.
    let mut rh = rng(s);
    let mut rf = rng(s ^ 0xBAD);
    let mut healthy: Vec<[End; 2]> = Vec::new();
    // The faulty pairs, and for each how it goes bad, when, and whether it has.
    let mut bad: Vec<[End; 2]> = Vec::new();
    let mut fate: Vec<(Bad, u64, bool)> = Vec::new();
    for i in 0..PAIRS - FAULTY {
        healthy.push(pair(&mut w, &mut rh, &hpd, &hcq, 0x1000 * i as u32)?);
    }
    if mode != Mode::Alone {
        // The faulty pairs give up sooner (three retries of the ACK timeout, 262 us), so
        // their peers' faults show before the healthy work ends.
        w.retry = RetryAttrs {
            retry_cnt: Some(3),
            ..w.retry
        };
        let kinds = [
            Bad::NoRecv,
            Bad::PeerErr,
            Bad::PeerReset,
            Bad::Dereg,
            Bad::Reconnect,
        ];
        for i in 0..FAULTY {
            let e = pair(&mut w, &mut rf, &fpd, &fcq, 0x80_0000 + 0x1000 * i as u32)?;
            let at = rf.gen_range(10_000..150_000);
            bad.push(e);
            fate.push((kinds[i % kinds.len()], at, false));
        }
    }
    let watch = Rc::new(RefCell::new(Watch::default()));
    let w2 = watch.clone();
    // (The watch takes the a-to-b link's hook: it draws the same random faults after it looks.)
    let mut lossy = faults.hook();
    let period = w.a.sim.borrow().tb.period_ps();
    w.ab.set_timed_fault_hook(move |i, t, f| {
        if let Some(Bth {
            dqpn, psn, opcode, ..
        }) = ferroce_tests::bth(f)
        {
            // Requests (not READ responses or ACKs: opcodes 0x0D..=0x12).
            if !(0x0D..=0x12).contains(&opcode) {
                let mut wt = w2.borrow_mut();
                let n = wt.newest.entry(dqpn).or_insert(psn);
                if newer(psn, *n) {
                    *n = psn;
                }
                if wt
                    .frozen
                    .get(&dqpn)
                    .is_some_and(|&(l, at)| newer(psn, l) && t > at + QUEUED * period)
                {
                    wt.late.push((dqpn, psn));
                }
            }
        }
        lossy(i, t, f)
    })?;
    let work = soak(12) as u64;
    let start = w.cycle();
    let (mut last, mut last_at, mut healthy_end) = (0, start, None);
    // When each healthy end finished its work.
    let mut fin: Vec<Option<u64>> = vec![None; 2 * healthy.len()];
    loop {
        let done: u64 = healthy.iter().flatten().map(|e| e.done).sum();
        if done != last {
            (last, last_at) = (done, w.cycle());
        }
        ensure!(
            w.cycle() - last_at < 600_000,
            "seed {s}: no healthy WR completed in 600,000 cycles ({done} done)\na: {}\nb: {}",
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
        w.run(64)?;
        for (side, h) in [&mut w.a, &mut w.b].into_iter().enumerate() {
            reap(h, &mut hcq[side], &mut healthy, side, true)?;
            reap(h, &mut fcq[side], &mut bad, side, false)?;
        }
        // The victims' failures: what they sent may not grow past what was on the wire.
        for p in bad.iter() {
            if p[0].send_failed {
                let mut wt = watch.borrow_mut();
                let n = wt.newest.get(&p[1].qp.qpn).copied();
                if let Some(n) = n {
                    wt.frozen
                        .entry(p[1].qp.qpn)
                        .or_insert((n, w.cycle() * period));
                }
            }
        }
        if healthy_end.is_none() {
            // Healthy work: `work` WRs per end, `OUTSTANDING` at a time.
            for [a, b] in healthy.iter_mut() {
                for side in 0..2 {
                    let (h, me, peer) = if side == 0 {
                        (&mut w.a, &mut *a, &mut *b)
                    } else {
                        (&mut w.b, &mut *b, &mut *a)
                    };
                    if me.posted < work && me.outstanding < OUTSTANDING {
                        post_one(h, me, peer, &mut rh, true)?;
                    }
                }
            }
            for (f, e) in fin.iter_mut().zip(healthy.iter().flatten()) {
                if f.is_none() && e.done == work {
                    *f = Some(w.cycle() - start);
                }
            }
            if healthy.iter().flatten().all(|e| e.done == work) {
                healthy_end = Some(w.cycle() - start);
            }
        }
        let now = w.cycle() - start;
        for (p, (kind, at, gone)) in bad.iter_mut().zip(fate.iter_mut()) {
            let [a, b] = p;
            if !*gone && now >= *at && mode == Mode::Faulty {
                *gone = true;
                match kind {
                    Bad::NoRecv => b.starve = true,
                    Bad::PeerErr => {
                        w.b.dev
                            .modify_qp(&mut b.qp, QpState::Err, QpAttr::default())?
                    }
                    Bad::PeerReset => {
                        w.b.dev
                            .modify_qp(&mut b.qp, QpState::Reset, QpAttr::default())?
                    }
                    Bad::Dereg => w.b.dev.dereg_mr(&b.dst)?,
                    Bad::Reconnect => {
                        w.a.dev
                            .modify_qp(&mut a.qp, QpState::Err, QpAttr::default())?;
                        w.b.dev
                            .modify_qp(&mut b.qp, QpState::Err, QpAttr::default())?;
                        (a.draining, b.draining) = (true, true);
                    }
                }
            }
            if *kind == Bad::Reconnect && a.draining && a.outstanding == 0 && b.outstanding == 0 {
                reconnect(&mut w, a, b, rf.gen_range(0..1 << 24))?;
                watch.borrow_mut().frozen.remove(&b.qp.qpn);
            }
            // The faulty pairs post while the healthy ones work, from `LEAD` cycles before
            // their fault.
            if healthy_end.is_none() {
                for side in 0..2 {
                    let (h, me, peer) = if side == 0 {
                        (&mut w.a, &mut *a, &mut *b)
                    } else {
                        (&mut w.b, &mut *b, &mut *a)
                    };
                    // A light load: up to `FAULTY_WORK` WRs a connection (what faulty QPs
                    // do to the others is measured against `Calm`, not their share).
                    let ok = !me.failed
                        && !me.draining
                        && me.outstanding < OUTSTANDING
                        && me.posted - me.floor < FAULTY_WORK
                        && now + LEAD >= *at;
                    // (The bad peer's own QP posts nothing once gone: it is in ERR or RESET.)
                    let silent = side == 1 && *gone && *kind != Bad::NoRecv;
                    if ok && !silent && rf.gen_ratio(1, 4) {
                        post_one(h, me, peer, &mut rf, true)?;
                    }
                }
            }
        }
        if healthy_end.is_some() {
            break;
        }
    }
    let took = healthy_end.unwrap_or(0);
    // The measure: the mean of the ends' finishing times (each end's throughput is its work
    // over its time). The last end's alone is one lost packet's timeout more or less.
    let mean = fin.iter().flatten().sum::<u64>() / fin.len() as u64;
    // The faulty pairs' QPs to ERR: everything still outstanding flushes, promptly.
    for [a, b] in bad.iter_mut() {
        w.a.dev
            .modify_qp(&mut a.qp, QpState::Err, QpAttr::default())?;
        if w.b.dev.query_qp(&b.qp)?.state != Some(QpState::Reset) {
            w.b.dev
                .modify_qp(&mut b.qp, QpState::Err, QpAttr::default())?;
        }
    }
    let flush_start = w.cycle();
    while bad.iter().zip(&fate).any(|(p, (kind, _, _))| {
        p[0].outstanding > 0 || (p[1].outstanding > 0 && *kind != Bad::PeerReset)
    }) {
        ensure!(
            w.cycle() - flush_start < 200_000,
            "seed {s}: the faulty QPs' work did not flush in 200,000 cycles: {:?}",
            bad.iter()
                .zip(&fate)
                .map(|(p, (k, _, _))| (*k, p[0].outstanding, p[1].outstanding))
                .collect::<Vec<_>>()
        );
        w.run(256)?;
        for (side, h) in [&mut w.a, &mut w.b].into_iter().enumerate() {
            reap(h, &mut hcq[side], &mut healthy, side, true)?;
            reap(h, &mut fcq[side], &mut bad, side, false)?;
        }
    }
    for (i, (p, (kind, _, _))) in bad.iter().zip(&fate).enumerate() {
        let v = &p[0];
        ensure!(
            v.ok_after_err == 0,
            "seed {s}: faulty pair {i} ({kind:?}): {} WRs succeeded after its first error",
            v.ok_after_err
        );
        if let Some(e) = v.first_err {
            ensure!(
                allowed(*kind, e),
                "seed {s}: faulty pair {i} ({kind:?}): first error status {e}"
            );
        }
    }
    let late = watch.borrow().late.clone();
    ensure!(
        late.is_empty(),
        "seed {s}: requests on the wire after their QP's error: {late:?} (pairs: {:?})",
        bad.iter()
            .zip(&fate)
            .filter(|(p, _)| late.iter().any(|l| l.0 == p[1].qp.qpn))
            .map(|(p, (k, at, _))| (*k, *at, p[0].first_err, p[0].lives))
            .collect::<Vec<_>>()
    );
    for h in [&w.a, &w.b] {
        let v = h.sim.borrow().rc.borrow().violations.clone();
        ensure!(v.is_empty(), "seed {s}: {v:?}");
    }
    println!(
        "seed {s}: {} healthy WRs in {took} cycles, ends done in {mean} on average ({mode:?}){}\na: {}\nb: {}",
        healthy.iter().flatten().map(|e| e.done).sum::<u64>(),
        if mode == Mode::Faulty {
            format!(
                "; faulty first errors {:?}",
                bad.iter()
                    .zip(&fate)
                    .map(|(p, (k, _, _))| (*k, p[0].first_err))
                    .collect::<Vec<_>>()
            )
        } else {
            String::new()
        },
        nonzero_counters(&w.a),
        nonzero_counters(&w.b)
    );
    Ok(mean)
}

/// The isolation soak (see the module): every healthy QP completes all its work SUCCESS, in
/// at most `SLOWER` times what it takes without the faulty pairs and `FAULT_COST` times what
/// it takes beside them calm; every faulty pair's victim sees, after its first error (one its fault explains), only
/// WR_FLUSH_ERR, and sends no request past what was on the wire when it failed; no DMA into a
/// deregistered region; no hang (a watchdog on simulated time). `FERROCE_SOAK` scales the
/// healthy work.
#[test]
fn sixty_four_qp_pairs_where_sixteen_go_bad_keep_the_healthy_ones_working() -> Result<()> {
    let s = seed("sixty_four_qp_pairs_where_sixteen_go_bad_keep_the_healthy_ones_working");
    let alone = run(s, Mode::Alone)?;
    let calm = run(s, Mode::Calm)?;
    let with = run(s, Mode::Faulty)?;
    println!(
        "seed {s}: the healthy ends took {with} cycles on average beside the faulty pairs, \
         {:.3}x their {alone} alone, {:.3}x their {calm} beside them calm",
        with as f64 / alone as f64,
        with as f64 / calm as f64
    );
    ensure!(
        with as f64 <= alone as f64 * SLOWER && with as f64 <= calm as f64 * FAULT_COST,
        "seed {s}: the healthy ends took {with} cycles on average beside the faulty pairs, \
         {alone} alone, {calm} beside them calm"
    );
    Ok(())
}
