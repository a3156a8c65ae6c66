//! QPs as closed boxes: an error found by any engine fails the whole QP (its send queue and
//! its receive queue flush, requests to it are dropped, nothing after the error reaches the
//! wire), and a reset QP keeps nothing of its last life.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, QpAttr, QpState, QueuePair, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{Host, World, WorldConfig};
use ferroce_spec::queues::{
    WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR, WQE_LEN,
};
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// Post `wr` by writing its WQE into the ring behind the driver's back (its keys unchecked),
/// and ring the doorbell.
fn post_raw(h: &mut Host, qp: &mut QueuePair, wr: &SendWr) -> Result<()> {
    let size = 1u64 << qp.sq_log_size;
    let slot = u64::from(qp.sq_pi) & (size - 1);
    h.dev
        .mem
        .write(qp.sq.addr + slot * WQE_LEN as u64, &wr.wqe())?;
    qp.sq_pi = qp.sq_pi.wrapping_add(1);
    h.dev.ring_sq_doorbell(qp.qpn, qp.sq_pi)?;
    Ok(())
}

/// Every RoCE frame on a wire from now on, as its BTH, through a fault hook that passes them
/// (or drops those `drop` says to).
fn watch(
    w: &World,
    ab: bool,
    mut drop: impl FnMut(&ferroce_tests::Bth) -> bool + 'static,
) -> Result<Rc<RefCell<Vec<ferroce_tests::Bth>>>> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s2 = seen.clone();
    let wire = if ab { &w.ab } else { &w.ba };
    wire.set_fault_hook(move |_, f| match bth(f) {
        Some(b) => {
            s2.borrow_mut().push(b);
            if drop(&b) {
                Fault::Drop
            } else {
                Fault::Pass
            }
        }
        None => Fault::Pass,
    })?;
    Ok(seen)
}

fn write_wr(
    wr_id: u64,
    src: &ferroce_driver::MemoryRegion,
    len: u32,
    to: u64,
    rkey: u32,
) -> SendWr {
    SendWr {
        wr_id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: src.addr,
            length: len,
            lkey: src.lkey,
        }],
        remote_addr: to,
        rkey,
        signaled: true,
        ..Default::default()
    }
}

/// A local error fails the QP (IBA 10.7.3.1, rxe's `rxe_qp_error` from the requester): a
/// WRITE forged with a key that names no region completes LOC_PROT_ERR, and the SEND posted
/// behind it ("the data is there") flushes and never reaches the wire; the peer's receive
/// WQE stays posted, the QP reads ERR.
#[test]
fn a_local_error_fails_the_qp_and_nothing_behind_it_reaches_the_wire() -> Result<()> {
    let s = seed("a_local_error_fails_the_qp_and_nothing_behind_it_reaches_the_wire");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut qa, mut qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let src = w.a.buffer(4096, &vec![0x5A; 4096])?;
    let dst = w.b.buffer(4096, &vec![0; 4096])?;
    w.b.dev.post_recv(
        &mut qb,
        &[RecvWr {
            wr_id: 77,
            sg_list: vec![Sge {
                addr: dst.addr,
                length: 4096,
                lkey: dst.lkey,
            }],
        }],
    )?;
    let seen = watch(&w, true, |_| false)?;
    let mut forged = write_wr(1, &src, r.gen_range(1..=4096), dst.addr, dst.rkey);
    forged.sg_list[0].lkey ^= r.gen_range(1..=255);
    post_raw(&mut w.a, &mut qa, &forged)?;
    let send = SendWr {
        wr_id: 2,
        opcode: WrOpcode::Send,
        sg_list: vec![Sge {
            addr: src.addr,
            length: 64,
            lkey: src.lkey,
        }],
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[send])?;
    let got = reap(&mut w, 0, 2, budget(20_000), &format!("seed {s}"))?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [(1, WC_LOC_PROT_ERR), (2, WC_WR_FLUSH_ERR)],
        "seed {s}: {st:?}"
    );
    w.run(5_000)?;
    ensure!(
        seen.borrow().is_empty(),
        "seed {s}: on the wire: {:?}",
        seen.borrow()
    );
    ensure!(
        w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(),
        "seed {s}: b completed"
    );
    ensure!(
        w.a.dev.query_qp(&qa)?.state == Some(QpState::Err),
        "seed {s}: a not ERR"
    );
    ensure!(
        w.a.counter("fail_local")? == 1,
        "seed {s}: {}",
        nonzero_counters(&w.a)
    );
    Ok(())
}

/// A fatal NAK received fails the receive side too (IBA 9.9.3; rxe's `rxe_qp_error` puts the
/// responder in ERR): the QP's posted receive WQEs complete WR_FLUSH_ERR at once, and a SEND
/// the peer sends it afterwards (the peer reset and reconnected at the QP's expected PSN) is
/// dropped: no receive completion, no byte written.
#[test]
fn a_fatal_nak_received_flushes_the_receive_queue_and_drops_later_requests() -> Result<()> {
    let s = seed("a_fatal_nak_received_flushes_the_receive_queue_and_drops_later_requests");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (psn_ab, psn_ba) = (r.gen_range(0..1 << 24), r.gen_range(0..1 << 24));
    let (mut qa, mut qb) = w.connect(1024, psn_ab, psn_ba, 16)?;
    let src = w.a.buffer(4096, &vec![0x11; 4096])?;
    let dst = w.b.buffer(4096, &vec![0; 4096])?;
    let fill: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    let land = w.a.buffer(4096, &fill)?;
    let nrecv = r.gen_range(1..=6u64);
    let recvs: Vec<RecvWr> = (0..nrecv)
        .map(|i| RecvWr {
            wr_id: 100 + i,
            sg_list: vec![Sge {
                addr: land.addr,
                length: 4096,
                lkey: land.lkey,
            }],
        })
        .collect();
    w.a.dev.post_recv(&mut qa, &recvs)?;
    // A WRITE with a wrong tag: b NAKs it remote access error.
    let bad = write_wr(1, &src, 512, dst.addr, dst.rkey ^ r.gen_range(1..=255));
    w.a.dev.post_send(&mut qa, &[bad])?;
    let got = reap(
        &mut w,
        0,
        1 + nrecv as usize,
        budget(30_000),
        &format!("seed {s}"),
    )?;
    ensure!(
        got[0].wr_id == 1 && got[0].status == WC_REM_ACCESS_ERR,
        "seed {s}: {got:?}"
    );
    for (i, c) in got[1..].iter().enumerate() {
        ensure!(
            c.wr_id == 100 + i as u64 && c.status == WC_WR_FLUSH_ERR,
            "seed {s}: receive {i}: {c:?}"
        );
    }
    // b, reset and connected again, SENDs at a's expected PSN: a drops it.
    let q = w.a.dev.query_qp(&qa)?;
    w.b.dev
        .modify_qp(&mut qb, QpState::Reset, QpAttr::default())?;
    w.b.dev
        .modify_qp(&mut qb, QpState::Init, QpAttr::default())?;
    w.b.dev.modify_qp(
        &mut qb,
        QpState::Rtr,
        QpAttr {
            path_mtu: Some(1024),
            dest_qpn: Some(qa.qpn),
            rq_psn: Some(q.sq_psn),
            remote_mac: Some(w.a.mac),
            remote_ipv4: Some(w.a.ip),
            ..QpAttr::default()
        },
    )?;
    w.b.dev.modify_qp(
        &mut qb,
        QpState::Rts,
        QpAttr {
            sq_psn: Some(q.epsn),
            timeout: Some(0),
            ..QpAttr::default()
        },
    )?;
    let before = w.a.counter("resp_bad_qp")?;
    let send = SendWr {
        wr_id: 9,
        opcode: WrOpcode::Send,
        sg_list: vec![Sge {
            addr: dst.addr,
            length: 300,
            lkey: dst.lkey,
        }],
        signaled: true,
        ..Default::default()
    };
    w.b.dev.post_send(&mut qb, &[send])?;
    w.run(20_000)?;
    ensure!(
        w.a.counter("resp_bad_qp")? > before,
        "seed {s}: a took the SEND: {}",
        nonzero_counters(&w.a)
    );
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 8)?.is_empty(),
        "seed {s}: a completed"
    );
    let mut mem = vec![0u8; 4096];
    w.a.dev.mem.read(land.addr, &mut mem)?;
    ensure!(mem == fill, "seed {s}: a's receive buffer changed");
    Ok(())
}

/// A fatal NAK sent fails the send side too: a's four WRITEs whose ACKs the link lost would
/// wait for ever (`timeout` 0); b's WRITE with a wrong key makes a NAK remote access error,
/// and the four complete WR_FLUSH_ERR within microseconds.
#[test]
fn a_fatal_nak_sent_flushes_the_outstanding_send_work_requests() -> Result<()> {
    let s = seed("a_fatal_nak_sent_flushes_the_outstanding_send_work_requests");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(0);
    let (mut qa, mut qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let sa = w.a.buffer(8192, &vec![0x22; 8192])?;
    let sb = w.b.buffer(8192, &vec![0x33; 8192])?;
    let da = w.a.buffer(8192, &vec![0; 8192])?;
    let db = w.b.buffer(8192, &vec![0; 8192])?;
    // Every ACK b sends is lost.
    let acks = watch(&w, false, |b| b.opcode == 0x11)?;
    let n = r.gen_range(2..=6u64);
    let wrs: Vec<SendWr> = (0..n)
        .map(|i| write_wr(i, &sa, r.gen_range(1..=2048), db.addr + 1024 * i, db.rkey))
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    w.run(20_000)?;
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 8)?.is_empty(),
        "seed {s}: a completed without ACKs"
    );
    ensure!(!acks.borrow().is_empty(), "seed {s}: no ACK lost");
    let bad = write_wr(50, &sb, 100, da.addr, da.rkey ^ r.gen_range(1..=255));
    w.b.dev.post_send(&mut qb, &[bad])?;
    let t0 = w.cycle();
    let got = reap(&mut w, 0, n as usize, budget(3_000), &format!("seed {s}"))?;
    for (i, c) in got.iter().enumerate() {
        ensure!(
            c.wr_id == i as u64 && c.status == WC_WR_FLUSH_ERR,
            "seed {s}: WRITE {i}: {c:?}"
        );
    }
    let gb = reap(&mut w, 1, 1, budget(10_000), &format!("seed {s}: b"))?;
    ensure!(gb[0].status == WC_REM_ACCESS_ERR, "seed {s}: b: {gb:?}");
    println!(
        "seed {s}: {n} WRITEs flushed {} cycles after b's bad WRITE was posted",
        w.cycle() - t0
    );
    Ok(())
}

/// A world where three QPs of a stream `per` WRITEs of 256 KiB each to b, and a fourth QP
/// pair, connected, behind them; returns the world, the fourth pair, and a's source and b's
/// target regions.
fn three_streams(
    r: &mut impl Rng,
    per: u64,
) -> Result<(
    World,
    (QueuePair, QueuePair),
    ferroce_driver::MemoryRegion,
    ferroce_driver::MemoryRegion,
)> {
    let mut w = World::open(&WorldConfig::default())?;
    let big = 256 * 1024;
    let src = w.a.buffer(big, &vec![0x44; big])?;
    let dst = w.b.buffer(big, &vec![0; big])?;
    let mut busy = Vec::new();
    for _ in 0..3 {
        busy.push(w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?);
    }
    let pair = w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    for (i, (q, _)) in busy.iter_mut().enumerate() {
        let wrs: Vec<SendWr> = (0..per)
            .map(|k| {
                write_wr(
                    1000 + 10 * i as u64 + k,
                    &src,
                    big as u32,
                    dst.addr,
                    dst.rkey,
                )
            })
            .collect();
        w.a.dev.post_send(q, &wrs)?;
    }
    Ok((w, pair, src, dst))
}

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

/// A QP moved to ERR flushes promptly whatever the others send: three QPs stream 256 KiB
/// WRITEs, a fourth has eight WRITEs queued behind them; moved to ERR, its eight complete
/// WR_FLUSH_ERR within 50 us (a QP in ERR flushes its WQEs one after another in its turn, and
/// a turn ends after 16 KiB while others wait: with one WQE flushed a turn it took 96 us, and
/// with the shared pool full, none had completed 320 us later).
#[test]
fn a_qp_moved_to_err_flushes_promptly_while_others_stream() -> Result<()> {
    let s = seed("a_qp_moved_to_err_flushes_promptly_while_others_stream");
    let mut r = rng(s);
    let (mut w, (mut qa, _qb), src, dst) = three_streams(&mut r, 4)?;
    w.run(3_000)?;
    let wrs: Vec<SendWr> = (0..8)
        .map(|k| write_wr(k, &src, r.gen_range(1..=4096), dst.addr, dst.rkey))
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    w.run(r.gen_range(0..2_000))?;
    w.a.dev
        .modify_qp(&mut qa, QpState::Err, QpAttr::default())?;
    let t0 = w.cycle();
    let mut flushed = Vec::new();
    // 50 us at 156.25 MHz.
    while flushed.len() < 8 {
        ensure!(
            w.cycle() - t0 < 7_812,
            "seed {s}: {} of 8 flushed {} cycles after the move to ERR",
            flushed.len(),
            w.cycle() - t0
        );
        w.run(100)?;
        for c in w.a.dev.poll_cq(&mut w.a.cq, 64)? {
            if c.qpn == qa.qpn {
                flushed.push(c);
            }
        }
    }
    let dt = w.cycle() - t0;
    for (k, c) in flushed.iter().enumerate() {
        // (One may have gone before the move to ERR: it succeeds.)
        ensure!(
            c.wr_id == k as u64 && (c.status == WC_WR_FLUSH_ERR || c.status == WC_SUCCESS),
            "seed {s}: {c:?}"
        );
    }
    println!("seed {s}: eight WRs flushed in {dt} cycles while three QPs stream");
    Ok(())
}
