//! Nothing stale and nothing forged moves a QP: a reset QP keeps nothing of its last life,
//! answers to PSNs never sent are dropped, and QPs that cannot finish hold only their share.

use super::{three_streams, watch, write_wr};
use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, QpAttr, QpState, SendWr, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::pause::PauseGenerator;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::{WC_SUCCESS, WC_WR_FLUSH_ERR, WQE_LEN};
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// A reset QP keeps nothing of its last life: eight WRITEs queued behind three QPs streaming
/// 256 KiB WRITEs, the QP moved to ERR, RESET and back to RTS with nothing posted, sends
/// nothing and completes nothing (the NIC's copy of its producer index is reset with it).
#[test]
fn a_reset_qp_never_replays_its_old_ring() -> Result<()> {
    let s = seed("a_reset_qp_never_replays_its_old_ring");
    let mut r = rng(s);
    let (mut w, (mut qa, qb), src, dst) = three_streams(&mut r, 2)?;
    w.run(2_000)?;
    let wrs: Vec<SendWr> = (0..8)
        .map(|k| write_wr(k, &src, 64, dst.addr + 64 * k, dst.rkey))
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    let seen = watch(&w, true, |_| false)?;
    w.a.dev
        .modify_qp(&mut qa, QpState::Err, QpAttr::default())?;
    w.a.dev
        .modify_qp(&mut qa, QpState::Reset, QpAttr::default())?;
    w.a.dev
        .modify_qp(&mut qa, QpState::Init, QpAttr::default())?;
    w.a.dev.modify_qp(
        &mut qa,
        QpState::Rtr,
        QpAttr {
            path_mtu: Some(4096),
            dest_qpn: Some(qb.qpn),
            rq_psn: Some(r.gen_range(0..1 << 24)),
            remote_mac: Some(w.b.mac),
            remote_ipv4: Some(w.b.ip),
            ..QpAttr::default()
        },
    )?;
    let new_psn = r.gen_range(0..1 << 24);
    w.a.dev.modify_qp(
        &mut qa,
        QpState::Rts,
        QpAttr {
            sq_psn: Some(new_psn),
            ..QpAttr::default()
        },
    )?;
    // The busy QPs finish; the reset one stays silent.
    let got = reap(&mut w, 0, 6, budget(1_500_000), &format!("seed {s}"))?;
    w.run(10_000)?;
    let late: Vec<_> = w.a.dev.poll_cq(&mut w.a.cq, 64)?;
    for c in got.iter().chain(&late) {
        ensure!(
            c.qpn != qa.qpn || c.status == WC_WR_FLUSH_ERR,
            "seed {s}: the reset QP completed {c:?}"
        );
        ensure!(c.qpn == qa.qpn || c.status == WC_SUCCESS, "seed {s}: {c:?}");
    }
    // A replay would carry the new life's PSNs.
    let after: Vec<_> = seen
        .borrow()
        .iter()
        .filter(|b| b.dqpn == qb.qpn && (b.psn.wrapping_sub(new_psn) & 0xFF_FFFF) < 8)
        .cloned()
        .collect();
    ensure!(after.is_empty(), "seed {s}: the reset QP sent {after:?}");
    ensure!(w.a.dev.query_qp(&qa)?.sq_ci == 0, "seed {s}: sq_ci moved");
    Ok(())
}

/// An ACK or NAK that names no request sent is dropped and counted (`cpl_ghosts`), and moves
/// nothing (IBA 9.7.5.1; rxe's `check_psn`): an ACK 500 PSNs past the last one sent (a
/// stale ACK of a last connection, a bogus peer), a remote access NAK past it, an RNR NAK
/// behind `una`. A WRITE the link then loses is sent again and lands: without the check the
/// ghost ACK had moved `una` past it and it completed SUCCESS unsent, a silent loss.
#[test]
fn acks_and_naks_for_psns_never_sent_are_dropped_and_move_nothing() -> Result<()> {
    use ferroce_spec::headers::{AETH_NAK_REM_ACCESS, AETH_RNR_NAK};
    use ferroce_tests::tx::TxPacket;
    let s = seed("acks_and_naks_for_psns_never_sent_are_dropped_and_move_nothing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(4);
    let base = r.gen_range(0..1 << 24);
    let (mut qa, _qb) = w.connect(1024, base, r.gen_range(0..1 << 24), 16)?;
    let src_bytes: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    let src = w.a.buffer(4096, &src_bytes)?;
    let dst = w.b.buffer(4096, &vec![0; 4096])?;
    // One clean WRITE; b's ACK for it, kept as the model of a well-formed answer.
    let caught = ferroce_tests::catch_first(&w.ba, 0x11)?;
    w.a.dev
        .post_send(&mut qa, &[write_wr(1, &src, 100, dst.addr, dst.rkey)])?;
    let got = reap(&mut w, 0, 1, budget(20_000), &format!("seed {s}"))?;
    ensure!(got[0].status == WC_SUCCESS, "seed {s}: {got:?}");
    let ack = TxPacket::parse(
        &caught
            .borrow()
            .clone()
            .ok_or_else(|| anyhow::anyhow!("no ACK"))?,
    )?;
    ensure!(ack.psn == base, "seed {s}: the ACK names {:#x}", ack.psn);
    let forge = |psn: u32, syndrome: u8| -> Result<Vec<u8>> {
        let mut p = ack.clone();
        p.psn = psn & 0xFF_FFFF;
        p.ext[0] = syndrome;
        Ok(p.frame()?)
    };
    let ghosts = [
        forge(base + 500, ack.ext[0])?,
        forge(base + r.gen_range(2..5000), AETH_NAK_REM_ACCESS)?,
        // (`una` is base + 1 now: an RNR NAK for base is behind it.)
        forge(base, AETH_RNR_NAK | 14)?,
    ];
    for g in &ghosts {
        w.ba.inject(0, g);
        w.run(2_000)?;
    }
    ensure!(
        w.a.counter("cpl_ghosts")? == 3 && w.a.counter("cpl_rnr_naks")? == 0,
        "seed {s}: {}",
        nonzero_counters(&w.a)
    );
    // The next WRITE's first transmission is lost: it must go again and land.
    let lost = Rc::new(RefCell::new(false));
    let l2 = lost.clone();
    w.ab.set_fault_hook(move |_, f| {
        if bth(f).is_some_and(|b| b.opcode == 0x0A) && !*l2.borrow() {
            *l2.borrow_mut() = true;
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let len = r.gen_range(1..=1024u32);
    w.a.dev.post_send(
        &mut qa,
        &[write_wr(2, &src, len, dst.addr + 1024, dst.rkey)],
    )?;
    let got = reap(&mut w, 0, 1, budget(100_000), &format!("seed {s}"))?;
    ensure!(
        got[0].wr_id == 2 && got[0].status == WC_SUCCESS,
        "seed {s}: {got:?}"
    );
    ensure!(*lost.borrow(), "seed {s}: nothing lost");
    let mut mem = vec![0u8; len as usize];
    w.b.dev.mem.read(dst.addr + 1024, &mut mem)?;
    ensure!(
        mem == src_bytes[..len as usize],
        "seed {s}: the WRITE completed but its bytes never landed"
    );
    ensure!(
        w.a.counter("req_retrans")? >= 1 && w.a.dev.query_qp(&qa)?.state == Some(QpState::Rts),
        "seed {s}: {}",
        nonzero_counters(&w.a)
    );
    Ok(())
}

/// One QP cannot stop another: twenty QPs whose peers are gone (the peer QP reset, `timeout`
/// 0: their work requests never complete) or never post a receive (`rnr_retry` 7: RNR NAKs
/// without end), 24 work requests each, more than their share of the completer's pool (16
/// records each) and than its shared part in all (256). A healthy QP's four 4 KiB WRITEs
/// still complete at once, on its reserved entry; the stuck QPs waited for their share
/// (`req_pool_waits`). Moved to ERR, the stuck QPs flush every work request, in order.
#[test]
fn stuck_qps_hold_only_their_share_of_the_completion_pool() -> Result<()> {
    let s = seed("stuck_qps_hold_only_their_share_of_the_completion_pool");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(0);
    let src = w.a.buffer(4096, &vec![0x66; 4096])?;
    let dst = w.b.buffer(64 * 1024, &vec![0; 64 * 1024])?;
    let (stuck, per) = (20usize, 24u64);
    let mut qps = Vec::new();
    for i in 0..stuck {
        let (qa, mut qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
        let rnr = i % 4 == 3;
        if !rnr {
            // The peer is gone: its QP reset, it takes nothing and answers nothing.
            w.b.dev
                .modify_qp(&mut qb, QpState::Reset, QpAttr::default())?;
        }
        qps.push((qa, rnr));
    }
    let (mut healthy, _hb) =
        w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    for (i, (qa, rnr)) in qps.iter_mut().enumerate() {
        let wrs: Vec<SendWr> = (0..per)
            .map(|k| {
                let mut wr = write_wr(1000 * i as u64 + k, &src, 64, dst.addr, dst.rkey);
                if *rnr {
                    wr.opcode = WrOpcode::Send;
                }
                wr
            })
            .collect();
        w.a.dev.post_send(qa, &wrs)?;
    }
    w.run(100_000)?;
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 64)?.is_empty(),
        "seed {s}: a stuck QP completed"
    );
    let waits = w.a.counter("req_pool_waits")?;
    ensure!(waits > 0, "seed {s}: no QP waited for its share");
    let wrs: Vec<SendWr> = (0..4)
        .map(|k| write_wr(9000 + k, &src, 4096, dst.addr + 4096 * k, dst.rkey))
        .collect();
    w.a.dev.post_send(&mut healthy, &wrs)?;
    let t0 = w.cycle();
    let got = reap(
        &mut w,
        0,
        4,
        budget(20_000),
        &format!("seed {s}: the healthy QP"),
    )?;
    for (k, c) in got.iter().enumerate() {
        ensure!(
            c.wr_id == 9000 + k as u64 && c.status == WC_SUCCESS,
            "seed {s}: {c:?}"
        );
    }
    println!(
        "seed {s}: {stuck} stuck QPs ({waits} waits for a share); the healthy QP's four 4 KiB \
         WRITEs in {} cycles",
        w.cycle() - t0
    );
    // The stuck QPs to ERR: every work request flushes, in order, each QP its own.
    for (qa, _) in qps.iter_mut() {
        w.a.dev.modify_qp(qa, QpState::Err, QpAttr::default())?;
    }
    let got = reap(
        &mut w,
        0,
        stuck * per as usize,
        budget(400_000),
        &format!("seed {s}: the flushes"),
    )?;
    let mut next = vec![0u64; stuck];
    for c in &got {
        let i = (c.wr_id / 1000) as usize;
        ensure!(
            i < stuck && c.wr_id % 1000 == next[i] && c.status == WC_WR_FLUSH_ERR,
            "seed {s}: {c:?}"
        );
        next[i] += 1;
    }
    Ok(())
}

/// A READ whose response landed just before its QP was reset, the landing's report held up
/// (b's host takes no DMA request until after the reconnect): the QP's next life still
/// issues READs, and they complete.
#[test]
fn a_read_landing_reported_after_its_qp_was_reset_blocks_nothing_new() -> Result<()> {
    let s = seed("a_read_landing_reported_after_its_qp_was_reset_blocks_nothing_new");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = 4096;
    let fill: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    let src = w.a.buffer(len, &fill)?;
    let dst = w.b.buffer(len, &vec![0; len])?;
    let read = |wr_id: u64, n: usize| SendWr {
        wr_id,
        opcode: WrOpcode::RdmaRead,
        sg_list: vec![ferroce_driver::Sge {
            addr: dst.addr,
            length: n as u32,
            lkey: dst.lkey,
        }],
        remote_addr: src.addr,
        rkey: src.rkey,
        signaled: true,
        ..Default::default()
    };
    let seen = watch(&w, true, |_| false)?;
    w.b.dev.post_send(&mut qb, &[read(1, 64)])?;
    let t0 = w.cycle();
    while seen.borrow().is_empty() {
        ensure!(
            w.cycle() - t0 < budget(50_000),
            "seed {s}: no READ response"
        );
        w.run(1)?;
    }
    let rc = w.b.sim.borrow().rc.clone();
    let stalled = |p: f64| {
        rc.borrow_mut()
            .set_rq_backpressure_generator(PauseGenerator::random(s, p))
    };
    stalled(1.0);
    w.run(2_000)?;
    w.reconnect(
        &mut qa,
        &mut qb,
        pmtu,
        r.gen_range(0..1 << 24),
        r.gen_range(0..1 << 24),
    )?;
    stalled(0.0);
    w.run(5_000)?;
    let old = w.b.dev.poll_cq(&mut w.b.cq, 16)?;
    // The next life: READs, more than the QP's limit of outstanding ones (16: a ring's worth).
    let wrs: Vec<SendWr> = (0..16).map(|i| read(10 + i, len)).collect();
    w.b.dev.post_send(&mut qb, &wrs)?;
    let got = reap(
        &mut w,
        1,
        16,
        budget(200_000),
        &format!("seed {s}: b ({old:?} before)"),
    )?;
    ensure!(
        got.iter().all(|c| c.status == WC_SUCCESS),
        "seed {s}: b completed {got:?}"
    );
    let mut back = vec![0; len];
    w.b.dev.mem.read(dst.addr, &mut back)?;
    ensure!(back == fill, "seed {s}: the new READs' data");
    println!("seed {s}: pmtu {pmtu}: 16 READs of the next life SUCCESS ({old:?} before)");
    Ok(())
}

/// A WQE fetch that fails (its ring's memory poisoned) after its QP was reset and connected
/// again (a's host holds its DMA completions meanwhile): the local error is of the QP's last
/// life and fails nothing of the next; a WRITE on the new connection completes SUCCESS.
#[test]
fn a_wqe_fetch_failing_after_its_qp_was_reset_fails_nothing_new() -> Result<()> {
    let s = seed("a_wqe_fetch_failing_after_its_qp_was_reset_fails_nothing_new");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let src = w.a.buffer(64, &[0x77; 64])?;
    let dst = w.b.buffer(64, &[0; 64])?;
    let rc = w.a.sim.borrow().rc.clone();
    let ring = (1u64 << qa.sq_log_size) * WQE_LEN as u64;
    rc.borrow_mut().mem.poison(qa.sq.addr, ring);
    let held = |p: f64| {
        rc.borrow_mut()
            .set_completion_pause_generator(PauseGenerator::random(s, p))
    };
    held(1.0);
    let reads = rc.borrow().dma_stats().read_requests;
    w.a.dev
        .post_send(&mut qa, &[write_wr(1, &src, 64, dst.addr, dst.rkey)])?;
    let t0 = w.cycle();
    while rc.borrow().dma_stats().read_requests == reads {
        ensure!(w.cycle() - t0 < budget(50_000), "seed {s}: no WQE fetch");
        w.run(1)?;
    }
    rc.borrow_mut().mem.heal();
    w.reconnect(
        &mut qa,
        &mut qb,
        pmtu,
        r.gen_range(0..1 << 24),
        r.gen_range(0..1 << 24),
    )?;
    held(0.0);
    w.run(20_000)?;
    let old = w.a.dev.poll_cq(&mut w.a.cq, 16)?;
    w.a.dev
        .post_send(&mut qa, &[write_wr(2, &src, 64, dst.addr, dst.rkey)])?;
    let got = reap(&mut w, 0, 1, budget(50_000), &format!("seed {s}"))?;
    println!(
        "seed {s}: pmtu {pmtu}: before {old:?}; the next connection's WRITE {:?}",
        got.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>()
    );
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status))
            .eq([(2, WC_SUCCESS)]),
        "seed {s}: a completed {got:?} ({old:?} before): {}",
        nonzero_counters(&w.a)
    );
    Ok(())
}
