//! The wire fuzzer: real frames (the Soft-RoCE captures and the NICs' own traffic) mutated
//! field by field (`ferroce_tests::fuzz`), with a right ICRC and FCS, injected both ways
//! between two NICs whose QPs are doing real work. Protected QPs (their own PD and CQ) are
//! never named by a mutant; victim QPs (another PD and CQ, WRITEs, SENDs, READs and atomics of
//! their own) and QPNs that name none are. Asserted: the protected QPs complete every WR
//! SUCCESS with every byte where it belongs and nothing anywhere else (no hang: a watchdog on
//! simulated time), their QPs stay in RTS, no DMA outside a driver buffer (the root complex
//! fails the run on one), every mutant the parser must drop is counted under a reason, and
//! neither NIC's self-checks fire. Victim pairs that fail (and now and then others) go to
//! ERR, flush, and are reset and connected again mid-run: nothing of a victim's last
//! connection completes after its reset, and victims work again after it. `FERROCE_SOAK`
//! scales the number of frames.

use crate::pairs::{pair, post_one, reap, reconnect, OUTSTANDING, REGION};
use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, QpAttr, QpState};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{Host, World, WorldConfig};
use ferroce_tests::fuzz::{mutate, Mutation, Target};
use ferroce_tests::{nonzero_counters, rng, rxe_frames, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Frames on `wire` to `t` (the receiver) kept for mutation: up to 2,048, the newest
/// replacing one at random, only well-formed ones to a QP of the test.
fn capture(w: &World, ab: bool, t: &Target, s: u64) -> Result<Rc<RefCell<Vec<Vec<u8>>>>> {
    let corpus = Rc::new(RefCell::new(Vec::new()));
    let (c2, t2) = (corpus.clone(), t.clone());
    let mut r = rng(s);
    let wire = if ab { &w.ab } else { &w.ba };
    wire.set_fault_hook(move |_, f| {
        let f = &f[..f.len() - 4];
        let ours = ferroce_tests::bth(f)
            .is_some_and(|b| t2.protected.contains(&b.dqpn) || t2.victims.contains(&b.dqpn));
        let right = ferroce_spec::icrc::icrc(f).ok() == ferroce_spec::icrc::carried_icrc(f).ok();
        if ours && right {
            let mut c = c2.borrow_mut();
            if c.len() < 2048 {
                c.push(f.to_vec());
            } else {
                let i = r.gen_range(0..c.len());
                c[i] = f.to_vec();
            }
        }
        Fault::Pass
    })?;
    Ok(corpus)
}

#[test]
fn fuzzed_frames_change_nothing_of_the_qps_they_do_not_name() -> Result<()> {
    let s = seed("fuzzed_frames_change_nothing_of_the_qps_they_do_not_name");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    w.retry.timeout = Some(6);
    let ppd = [w.a.dev.alloc_pd()?, w.b.dev.alloc_pd()?];
    let mut pcq = [w.a.dev.create_cq(256)?, w.b.dev.create_cq(256)?];
    let vpd = [w.a.dev.alloc_pd()?, w.b.dev.alloc_pd()?];
    let mut vcq = [w.a.dev.create_cq(256)?, w.b.dev.create_cq(256)?];
    let mut prot = Vec::new();
    let mut vict = Vec::new();
    for i in 0..3u32 {
        prot.push(pair(&mut w, &mut r, &ppd, &pcq, 0x10_0000 * i + 100)?);
        vict.push(pair(&mut w, &mut r, &vpd, &vcq, 0x10_0000 * i + 0x8_0000)?);
    }
    let target = |h: &Host, side: usize| Target {
        mac: h.mac,
        ip: h.ip,
        protected: prot.iter().map(|p| p[side].qp.qpn).collect(),
        victims: vict.iter().map(|p| p[side].qp.qpn).collect(),
    };
    let targets = [target(&w.b, 1), target(&w.a, 0)];
    let corpus = [
        capture(&w, true, &targets[0], s ^ 1)?,
        capture(&w, false, &targets[1], s ^ 2)?,
    ];
    let rxe: Vec<Vec<u8>> = rxe_frames()?
        .into_iter()
        .filter(|f| ferroce_spec::icrc::parse(f).is_ok())
        .collect();
    let frames = soak(6000);
    let period = w.a.sim.borrow().tb.period_ps();
    let (mut injected, mut parser_drops) = (0usize, 0u64);
    let mut by_kind: BTreeMap<&str, usize> = Mutation::ALL.iter().map(|m| (m.name(), 0)).collect();
    // The watchdog: the protected QPs complete something at least every million cycles
    // (6.4 ms of simulated time, 24 ACK timeouts).
    let start = w.cycle();
    let (mut last_done, mut last_cycle) = (0, start);
    let mut posting = true;
    let mut next_at = [0u64; 2];
    loop {
        let done: u64 = prot.iter().flatten().map(|e| e.done).sum();
        if done != last_done {
            (last_done, last_cycle) = (done, w.cycle());
        }
        ensure!(
            w.cycle() - last_cycle < 1_000_000,
            "no protected WR completed in a million cycles: {injected} frames injected, \
             (done, posted) per QP {:?}\na: {}\nb: {}",
            prot.iter()
                .flatten()
                .map(|e| (e.done, e.posted))
                .collect::<Vec<_>>(),
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
        // Mutants both ways, a few at a time behind the NICs' own frames.
        for (i, wire) in [&w.ab, &w.ba].into_iter().enumerate() {
            while injected < frames && wire.inject_backlog() < 2 {
                let from_rxe = corpus[i].borrow().is_empty() || r.gen_ratio(1, 8);
                let f = if from_rxe {
                    rxe[r.gen_range(0..rxe.len())].clone()
                } else {
                    let c = corpus[i].borrow();
                    c[r.gen_range(0..c.len())].clone()
                };
                let Some(m) = mutate(&mut r, &f, &targets[i]) else {
                    continue;
                };
                // (Paced to half the wire's time: the NIC's own frames keep the rest, as a
                // switch would share the port.)
                let at = next_at[i].max(w.cycle() * period);
                wire.inject(at, &m.frame);
                next_at[i] = at + 2 * wire.config().wire_ps(m.frame.len() as u64 + 24);
                injected += 1;
                parser_drops += u64::from(m.parser_drops);
                *by_kind.entry(m.what.name()).or_default() += 1;
            }
        }
        posting &= injected < frames;
        w.run(64)?;
        for (side, h) in [&mut w.a, &mut w.b].into_iter().enumerate() {
            reap(h, &mut pcq[side], &mut prot, side, true)?;
            reap(h, &mut vcq[side], &mut vict, side, false)?;
        }
        // Victims fail (the mutants see to it) or are stopped at random; either way both
        // ends go to ERR, and once every WR has flushed the pair is reset and connected
        // again, as an application would, while the mutants go on.
        for [a, b] in vict.iter_mut() {
            if posting && !a.draining && (a.failed || b.failed || r.gen_ratio(1, 4000)) {
                w.a.dev
                    .modify_qp(&mut a.qp, QpState::Err, QpAttr::default())?;
                w.b.dev
                    .modify_qp(&mut b.qp, QpState::Err, QpAttr::default())?;
                (a.draining, b.draining) = (true, true);
            } else if a.draining && a.outstanding == 0 && b.outstanding == 0 {
                reconnect(&mut w, a, b, r.gen_range(0..1 << 24))?;
            }
        }
        if posting {
            for (pairs, atomics) in [(&mut prot, false), (&mut vict, true)] {
                for [a, b] in pairs.iter_mut() {
                    for side in 0..2 {
                        let (h, me, peer) = if side == 0 {
                            (&mut w.a, &mut *a, &mut *b)
                        } else {
                            (&mut w.b, &mut *b, &mut *a)
                        };
                        if !me.failed
                            && !me.draining
                            && me.outstanding < OUTSTANDING
                            && r.gen_ratio(1, 4)
                        {
                            post_one(h, me, peer, &mut r, atomics)?;
                        }
                    }
                }
            }
        } else if prot
            .iter()
            .flatten()
            .all(|e| e.outstanding == 0 && e.incoming.is_empty())
        {
            break;
        }
    }
    // Every protected byte where it belongs and nowhere else; the QPs still in RTS.
    for (k, p) in prot.iter().enumerate() {
        for side in 0..2 {
            let (me, peer) = (&p[side], &p[1 - side]);
            let h = if side == 0 { &mut w.a } else { &mut w.b };
            let mut got = vec![0; REGION];
            h.dev.mem.read(me.dst.addr, &mut got)?;
            for (i, &b) in got.iter().enumerate() {
                let want = if me.filled[i] { peer.src_bytes[i] } else { 0 };
                ensure!(
                    b == want,
                    "pair {k} side {side}: byte {i} of the target is {b:#x}, not {want:#x}"
                );
            }
            let state = h.dev.query_qp(&me.qp)?.state;
            ensure!(
                state == Some(QpState::Rts),
                "pair {k} side {side}: QP in {state:?}"
            );
        }
    }
    // Quiet wires: no frame on either or in flight for 4,000 cycles (the victims' last
    // retries may still be going out), so every frame sent has been through the parser.
    let frames_now = |w: &World| w.ab.stats().frames + w.ba.stats().frames;
    let mut quiet = false;
    for _ in 0..500 {
        let before = frames_now(&w);
        w.run(4000)?;
        if frames_now(&w) == before && w.ab.idle() && w.ba.idle() {
            quiet = true;
            break;
        }
    }
    ensure!(quiet, "the wires never went quiet in 2 M cycles");
    // Every frame that reached a NIC accepted or dropped under a reason (the parser's
    // counters add up to the wire's frames), every mutant the parser must drop among the
    // drops; no self-check fired.
    let mut counted = 0;
    for (h, wire) in [(&w.a, &w.ba), (&w.b, &w.ab)] {
        let mut dropped = 0;
        for (name, v) in h.faults()? {
            ensure!(
                !name.ends_with("self_check") || v == 0,
                "{name} = {v}: {}",
                nonzero_counters(h)
            );
            dropped += if name.starts_with("rx_") { v } else { 0 };
        }
        let (frames, accepted) = (wire.stats().frames, h.counter("rx_accepted")?);
        ensure!(
            accepted + dropped == frames,
            "{frames} frames arrived, {accepted} accepted, {dropped} dropped: {:?}",
            h.faults()?
        );
        counted += dropped;
    }
    ensure!(
        counted >= parser_drops,
        "{parser_drops} mutants the parser must drop, {counted} dropped"
    );
    let work: u64 = prot.iter().flatten().map(|e| e.done).sum();
    let vwork: u64 = vict.iter().flatten().map(|e| e.done).sum();
    let dead = vict.iter().flatten().filter(|e| e.failed).count();
    let lives: u32 = vict.iter().map(|p| p[0].lives).sum();
    let later: u64 = vict.iter().flatten().map(|e| e.done_later).sum();
    println!(
        "fuzz: seed {s}, {injected} mutants ({parser_drops} for the parser), {} cycles, \
         {work} protected WRs done, {vwork} victim WRs ({dead} of 6 victim QPs failed at the \
         end; {lives} reconnections, {later} WRs done after them); {by_kind:?}\na: {}\nb: {}",
        w.cycle() - start,
        nonzero_counters(&w.a),
        nonzero_counters(&w.b)
    );
    ensure!(work > 50, "only {work} protected WRs done");
    ensure!(
        lives > 0 && later > 0,
        "{lives} victim pairs reconnected, {later} WRs done after"
    );
    Ok(())
}
