//! A failed payload read (host memory that answers a DMA read with an error, as after an
//! uncorrectable memory error) never sends a packet with whatever bytes the NIC had: the
//! frame is dropped before the wire (MAC_STATS `TX_BAD_FRAME`), the work request fails with
//! GENERAL_ERR, the QP fails, and nothing of the QP after the failed packet reaches the wire.

use super::{failed_alone, read_wr, watch, write_wr};
use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, QpState, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::pause::PauseGenerator;
use ferroce_sim::world::{RetryAttrs, World, WorldConfig};
use ferroce_spec::headers::AETH_NAK_REM_OP;
use ferroce_spec::opcodes::{RC_ACKNOWLEDGE, RC_RDMA_WRITE_ONLY, RC_SEND_ONLY};
use ferroce_spec::queues::{WC_GENERAL_ERR, WC_REM_OP_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR};
use ferroce_tests::{budget, nonzero_counters, reap, rng, seed};
use rand::Rng;

/// A WRITE of 2 to 40 packets (path MTU 256, 1024 or 4096; one to three SGEs) whose source
/// has a poisoned range somewhere in it, posted after a WRITE that completed, with a SEND and
/// a WRITE behind it. Asserted, for six random cases: the WRITE completes GENERAL_ERR, the two
/// behind it WR_FLUSH_ERR; on the wire, the QP's last PSN sent is the one before the packet
/// that holds the poisoned range's first byte, and no SEND goes out; the peer's memory holds
/// exactly the packets before it (the rest untouched), its receive WQE stays posted; the QP
/// reads ERR; the MAC dropped at least one frame as bad and the root complex saw no DMA
/// violation.
#[test]
fn a_failed_payload_read_fails_the_work_request_and_nothing_after_it_reaches_the_wire() -> Result<()>
{
    let s =
        seed("a_failed_payload_read_fails_the_work_request_and_nothing_after_it_reaches_the_wire");
    let mut r = rng(s);
    for case in 0..6 {
        let mut w = World::open(&WorldConfig::default())?;
        let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
        let psn0 = r.gen_range(0..1 << 24);
        let (mut qa, mut qb) = w.connect(pmtu, psn0, r.gen_range(0..1 << 24), 16)?;
        let len = pmtu as usize * r.gen_range(2..=40usize.min(128 * 1024 / pmtu as usize));
        let img: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        let src = w.a.buffer(len, &img)?;
        let dst = w.b.buffer(len, &vec![0; len])?;
        let rcv = w.b.buffer(64, &[0; 64])?;
        w.b.dev.post_recv(
            &mut qb,
            &[RecvWr {
                wr_id: 9,
                sg_list: vec![Sge {
                    addr: rcv.addr,
                    length: 64,
                    lkey: rcv.lkey,
                }],
            }],
        )?;
        // A WRITE that completes first (one packet of the first PSN).
        w.a.dev
            .post_send(&mut qa, &[write_wr(1, &src, 64, dst.addr, dst.rkey)])?;
        let got = reap(
            &mut w,
            0,
            1,
            budget(20_000),
            &format!("seed {s} case {case}"),
        )?;
        ensure!(got[0].status == WC_SUCCESS, "seed {s} case {case}: {got:?}");
        // The failing WRITE: its bytes in one to three SGEs; the poisoned range in it.
        let at = r.gen_range(0..len - 1);
        let bad = r.gen_range(1..=(len - at).min(3000));
        w.a.sim
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .poison(src.addr + at as u64, bad as u64);
        let mut cuts: Vec<usize> = (0..r.gen_range(0..3))
            .map(|_| r.gen_range(1..len))
            .collect();
        cuts.extend([0, len]);
        cuts.sort_unstable();
        cuts.dedup();
        let mut wr = write_wr(2, &src, len as u32, dst.addr, dst.rkey);
        wr.sg_list = cuts
            .windows(2)
            .map(|c| Sge {
                addr: src.addr + c[0] as u64,
                length: (c[1] - c[0]) as u32,
                lkey: src.lkey,
            })
            .collect();
        let send = SendWr {
            wr_id: 3,
            opcode: WrOpcode::Send,
            sg_list: vec![Sge {
                addr: src.addr,
                length: 64,
                lkey: src.lkey,
            }],
            signaled: true,
            ..Default::default()
        };
        let after = write_wr(4, &src, 64, dst.addr, dst.rkey);
        let seen = watch(&w, true, |_| false)?;
        w.a.dev.post_send(&mut qa, &[wr, send, after])?;
        let got = reap(
            &mut w,
            0,
            3,
            budget(50_000),
            &format!("seed {s} case {case}"),
        )?;
        let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        ensure!(
            st == [
                (2, WC_GENERAL_ERR),
                (3, WC_WR_FLUSH_ERR),
                (4, WC_WR_FLUSH_ERR)
            ],
            "seed {s} case {case} (pmtu {pmtu}, {len} B, poisoned {at}+{bad}): {st:?}"
        );
        w.run(5_000)?;
        // The packet holding the poisoned range's first byte, and none after it, never left.
        let failed = (at / pmtu as usize) as u32;
        let first = (psn0 + 1) & 0xFF_FFFF;
        let seen = seen.borrow();
        let late: Vec<_> = seen
            .iter()
            .filter(|b| b.dqpn == qb.qpn && (b.psn.wrapping_sub(first) & 0xFF_FFFF) >= failed)
            .collect();
        ensure!(
            late.is_empty() && !seen.iter().any(|b| b.opcode == RC_SEND_ONLY),
            "seed {s} case {case}: packet {failed} of the WRITE failed, on the wire: {late:?}"
        );
        // The peer holds the packets before the failed one, and nothing more.
        let mut mem = vec![0u8; len];
        w.b.dev.mem.read(dst.addr, &mut mem)?;
        // The first WRITE put the first 64 bytes there already, even when the failed packet
        // is the first.
        let good = (failed as usize * pmtu as usize).max(64);
        ensure!(
            mem[..good] == img[..good] && mem[good..].iter().all(|&b| b == 0),
            "seed {s} case {case}: the peer's memory is not the {failed} packets before it"
        );
        failed_alone(&mut w, &qa).with_context(|| format!("seed {s} case {case}"))?;
        ensure!(
            w.a.counter("mac_bad_frames")? >= 1 && w.a.dev.mac_stats()?.tx_bad_frame >= 1,
            "seed {s} case {case}: {}",
            nonzero_counters(&w.a)
        );
        for h in [&w.a, &w.b] {
            let v = h.sim.borrow().rc.borrow().violations.clone();
            ensure!(v.is_empty(), "seed {s} case {case}: {v:?}");
        }
    }
    Ok(())
}

/// A READ response whose bytes cannot be read (the region the peer reads is poisoned
/// somewhere) is dropped before the wire, and the responder NAKs its PSN remote operational
/// error (IBA 9.7.5.2.4): the reader's READ completes REM_OP_ERR at once (a retry timer of
/// about a second would run out first: it must not be what ends it), and the READ posted
/// behind it WR_FLUSH_ERR. Asserted for four random cases (path MTU, length, the poisoned
/// byte, which may be in the first response): on the wire, one NAK at the failed response's
/// PSN and no response at or after it; the reader holds exactly the responses before it;
/// both QPs read ERR; the responder's MAC dropped the frame as bad.
#[test]
fn a_failed_read_response_is_naked_remote_operational_error() -> Result<()> {
    let s = seed("a_failed_read_response_is_naked_remote_operational_error");
    let mut r = rng(s);
    for case in 0..4 {
        let mut w = World::open(&WorldConfig::default())?;
        w.retry = RetryAttrs {
            timeout: Some(18),
            retry_cnt: Some(7),
            ..Default::default()
        };
        let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
        let psn0 = r.gen_range(0..1 << 24);
        let (mut qa, qb) = w.connect(pmtu, psn0, r.gen_range(0..1 << 24), 16)?;
        let len = pmtu as usize * r.gen_range(2..=32);
        let img: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        let src = w.b.buffer(len, &img)?;
        let dst = w.a.buffer(2 * len, &vec![0; 2 * len])?;
        let at = r.gen_range(0..len);
        w.b.sim
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .poison(src.addr + at as u64, 1);
        // READs 5 and 6, each into its half of `dst`.
        let read = |wr_id: u64, half: u64| {
            let mut wr = read_wr(wr_id, &dst, len as u32, src.addr, src.rkey);
            wr.sg_list[0].addr += half * len as u64;
            wr
        };
        let seen = watch(&w, false, |_| false)?;
        w.a.dev.post_send(&mut qa, &[read(5, 0), read(6, 1)])?;
        let why = format!("seed {s} case {case} (pmtu {pmtu}, {len} B, poisoned at {at})");
        let got = reap(&mut w, 0, 2, budget(100_000), &why)?;
        let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        ensure!(
            st == [(5, WC_REM_OP_ERR), (6, WC_WR_FLUSH_ERR)],
            "{why}: {st:?}"
        );
        w.run(5_000)?;
        let failed = (psn0 + (at / pmtu as usize) as u32) & 0xFF_FFFF;
        let seen = seen.borrow();
        let naks: Vec<_> = seen
            .iter()
            .filter(|b| b.opcode == RC_ACKNOWLEDGE && b.dqpn == qa.qpn)
            .collect();
        let late = seen.iter().any(|b| {
            b.opcode != RC_ACKNOWLEDGE && (b.psn.wrapping_sub(failed) & 0xFF_FFFF) < 1 << 23
        });
        ensure!(
            naks.len() == 1
                && naks[0].psn == failed
                && naks[0].syndrome == Some(AETH_NAK_REM_OP)
                && !late,
            "{why}: response {failed:#x} failed, on the wire: {seen:?}"
        );
        let mut mem = vec![0u8; 2 * len];
        w.a.dev.mem.read(dst.addr, &mut mem)?;
        let good = at / pmtu as usize * pmtu as usize;
        ensure!(
            mem[good..].iter().all(|&b| b == 0) && mem[..good] == img[..good],
            "{why}: the reader holds more or less than the responses before the failed one"
        );
        let sa = w.a.dev.query_qp(&qa)?.state;
        let sb = w.b.dev.query_qp(&qb)?.state;
        ensure!(
            sa == Some(QpState::Err) && sb == Some(QpState::Err),
            "{why}: the QPs read {sa:?} and {sb:?}, not ERR"
        );
        ensure!(
            w.b.counter("mac_bad_frames")? >= 1,
            "{why}: {}",
            nonzero_counters(&w.b)
        );
    }
    Ok(())
}

/// A payload read of a WRITE that fails after its QP was reset and connected again (the
/// host's completions held meanwhile): it fails nothing of the new connection, and no packet
/// of the old one reaches the wire.
#[test]
fn a_payload_read_failing_after_its_qp_was_reset_fails_nothing_new() -> Result<()> {
    failing_after_reset(
        "a_payload_read_failing_after_its_qp_was_reset_fails_nothing_new",
        false,
        false,
    )
}

/// The same for a READ response's payload read: no NAK, nothing failed on a's side.
#[test]
fn a_read_response_failing_after_its_qp_was_reset_fails_nothing_new() -> Result<()> {
    failing_after_reset(
        "a_read_response_failing_after_its_qp_was_reset_fails_nothing_new",
        true,
        false,
    )
}

/// A READ response's payload read that failed before its QP's reset, its report waiting for
/// the responder (busy landing a WRITE the host's memory holds off): no NAK, nothing of the
/// new connection failed.
#[test]
fn a_read_response_failure_waiting_for_a_busy_responder_fails_nothing_new() -> Result<()> {
    failing_after_reset(
        "a_read_response_failure_waiting_for_a_busy_responder_fails_nothing_new",
        true,
        true,
    )
}

/// a sends 8 packets (a WRITE it posts, or the responses to b's READ) whose second one's
/// source is poisoned; from its first payload read on, a's host holds its DMA completions
/// while the pair is reset and connected again, then lets them go. With `busy` (a READ
/// response), the read fails before the reset instead, while the responder is held up
/// landing a 64 B WRITE from b (a's host takes no DMA request until after the reconnect).
/// Asserted: the poisoned read came
/// back failed, and no frame of the old connection leaves after the reconnect; a WRITE and a
/// READ on the new one complete SUCCESS, data exact, and a's QP stays RTS.
fn failing_after_reset(test: &str, read: bool, busy: bool) -> Result<()> {
    let s = seed(test);
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256u32, 1024, 4096][r.gen_range(0..3)];
    let len = 8 * pmtu as usize;
    // The old connection's PSNs and the new one's, far apart.
    let (old_ab, old_ba) = (r.gen_range(0..1 << 23), r.gen_range(0..1 << 23));
    let (mut qa, mut qb) = w.connect(pmtu, old_ab, old_ba, 16)?;
    let img: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    let src = w.a.buffer(len, &img)?;
    let dst = w.b.buffer(len, &vec![0; len])?;
    // (With `busy`, the first packet's: read in one go, its failure held from the start.)
    let at = usize::from(!busy) * pmtu as usize + r.gen_range(0..pmtu as usize - 16);
    let rc = w.a.sim.borrow().rc.clone();
    rc.borrow_mut().mem.poison(src.addr + at as u64, 16);
    let reads = || rc.borrow().dma_stats().read_requests;
    let small = w.a.buffer(64, &[0x11; 64])?;
    // The first payload read: after the WQE's read for a WRITE.
    let first = reads() + if read { 1 } else { 2 };
    let bytes0 = rc.borrow().dma_stats().read_bytes;
    if read {
        w.b.dev
            .post_send(&mut qb, &[read_wr(1, &dst, len as u32, src.addr, src.rkey)])?;
    } else {
        w.a.dev.post_send(
            &mut qa,
            &[write_wr(1, &src, len as u32, dst.addr, dst.rkey)],
        )?;
    }
    let until = |w: &World, what: &str, done: &dyn Fn() -> bool| -> Result<()> {
        let t0 = w.cycle();
        while !done() {
            ensure!(w.cycle() - t0 < budget(50_000), "seed {s}: no {what}");
            w.run(1)?;
        }
        Ok(())
    };
    until(&w, "payload read", &|| reads() >= first)?;
    let held = |p: f64| {
        rc.borrow_mut()
            .set_completion_pause_generator(PauseGenerator::random(s, p))
    };
    let stalled = |p: f64| {
        rc.borrow_mut()
            .set_rq_backpressure_generator(PauseGenerator::random(s, p))
    };
    held(1.0);
    if busy {
        // Once the poisoned response's reads are out, a's host takes no more DMA requests;
        // b's WRITE reaches the responder and waits there to land; then the read fails.
        until(&w, "poisoned response's reads", &|| {
            rc.borrow().dma_stats().read_bytes - bytes0 >= u64::from(pmtu)
        })?;
        stalled(1.0);
        let writes = watch(&w, false, |_| false)?;
        w.b.dev
            .post_send(&mut qb, &[write_wr(2, &dst, 64, small.addr, small.rkey)])?;
        until(&w, "WRITE", &|| {
            writes
                .borrow()
                .iter()
                .any(|b| b.opcode == RC_RDMA_WRITE_ONLY)
        })?;
        w.run(500)?;
        held(0.0);
        w.run(3_000)?;
        ensure!(
            w.a.counter("req_dma_err")? == 1,
            "seed {s}: the poisoned read before the reset: {}",
            nonzero_counters(&w.a)
        );
    }
    let (new_ab, new_ba) = (old_ab + (1 << 23), old_ba + (1 << 23));
    w.reconnect(&mut qa, &mut qb, pmtu, new_ab, new_ba)?;
    let after = watch(&w, true, |_| false)?;
    held(0.0);
    stalled(0.0);
    w.run(20_000)?;
    // (Of the old connection only work acknowledged before the reset completes: the first
    // WRITE's CQE, whose ACK came before.)
    for h in [&mut w.a, &mut w.b] {
        let left = h.dev.poll_cq(&mut h.cq, 16)?;
        ensure!(
            left.iter().all(|c| c.status == WC_SUCCESS),
            "seed {s}: completions of the old connection: {left:?}"
        );
    }
    ensure!(
        w.a.counter("req_dma_err")? == 1,
        "seed {s}: the poisoned read: {}",
        nonzero_counters(&w.a)
    );
    let old: Vec<_> = after
        .borrow()
        .iter()
        .filter(|b| b.psn < 1 << 23)
        .copied()
        .collect();
    println!(
        "seed {s}: pmtu {pmtu}, poisoned at byte {at}; {} frames after the reconnect, {} of the \
         old connection",
        after.borrow().len(),
        old.len()
    );
    ensure!(
        old.is_empty(),
        "seed {s}: frames of the old connection left after the reconnect: {old:?}"
    );
    // The new connection works whole.
    let fresh: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    let src2 = w.a.buffer(len, &fresh)?;
    let dst2 = w.b.buffer(len, &vec![0; len])?;
    let back = w.b.buffer(len, &vec![0; len])?;
    w.a.dev.post_send(
        &mut qa,
        &[write_wr(2, &src2, len as u32, dst2.addr, dst2.rkey)],
    )?;
    w.b.dev.post_send(
        &mut qb,
        &[read_wr(3, &back, len as u32, src2.addr, src2.rkey)],
    )?;
    for (side, id) in [(0, 2), (1, 3)] {
        let got = reap(&mut w, side, 1, budget(100_000), &format!("seed {s}"))?;
        ensure!(
            got.len() == 1 && got[0].wr_id == id && got[0].status == WC_SUCCESS,
            "seed {s}: side {side} completed {got:?}"
        );
    }
    for (mr, what) in [(&dst2, "WRITE"), (&back, "READ")] {
        let mut got = vec![0; len];
        w.b.dev.mem.read(mr.addr, &mut got)?;
        ensure!(got == fresh, "seed {s}: the new connection's {what} data");
    }
    ensure!(
        w.a.dev.query_qp(&qa)?.state == Some(QpState::Rts),
        "seed {s}: a's QP left RTS"
    );
    Ok(())
}
