//! An error found by any engine fails the whole QP: its send queue and its receive queue
//! flush, requests to it are dropped, and nothing after the error reaches the wire.

use super::{failed_alone, post_raw, read_wr, three_streams, watch, write_wr};
use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, QpAttr, QpState, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::{
    WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR, WC_RETRY_EXC_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR,
};
use ferroce_tests::{budget, nonzero_counters, reap, rng, seed};
use rand::Rng;

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
    failed_alone(&mut w, &qa).with_context(|| format!("seed {s}"))?;
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

/// After the request that takes a QP's error, every later one flushes, acknowledged or not: a
/// READ whose responses are all lost (the ACKs pass) runs out of retries while the WRITE posted
/// behind it is acknowledged by the peer. The READ completes RETRY_EXC_ERR and the WRITE
/// WR_FLUSH_ERR, as rxe flushes the send queue of a QP in error; it used to complete SUCCESS
/// after the READ's error.
#[test]
fn a_write_acknowledged_behind_a_failed_read_flushes() -> Result<()> {
    let s = seed("a_write_acknowledged_behind_a_failed_read_flushes");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(1);
    w.retry.retry_cnt = Some(r.gen_range(0..=2));
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let len = r.gen_range(1..=4096);
    let sa = w.a.buffer(4096, &vec![0x22; 4096])?;
    let da = w.a.buffer(4096, &vec![0; 4096])?;
    let sb = w.b.buffer(4096, &vec![0x33; 4096])?;
    let db = w.b.buffer(4096, &vec![0; 4096])?;
    // Every READ response b sends is lost (opcodes 0x0D..=0x10); its ACKs pass.
    let lost = watch(&w, false, |b| (0x0D..=0x10).contains(&b.opcode))?;
    let read = read_wr(1, &da, len, sb.addr, sb.rkey);
    let write = write_wr(2, &sa, r.gen_range(1..=4096), db.addr, db.rkey);
    w.a.dev.post_send(&mut qa, &[read, write])?;
    let got = reap(&mut w, 0, 2, budget(100_000), &format!("seed {s}"))?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [(1, WC_RETRY_EXC_ERR), (2, WC_WR_FLUSH_ERR)],
        "seed {s}: {st:?}"
    );
    ensure!(
        lost.borrow().iter().any(|b| b.opcode == 0x11),
        "seed {s}: b never acknowledged the WRITE"
    );
    Ok(())
}
