//! The receive side's refusals: a receive buffer too short, a receive WQE with a forged key,
//! a QP moved to ERR with receive WQEs posted, a fatal NAK sent.

use super::*;

/// A SEND longer than the receive WQE's buffer (one packet, and three at PMTU 256 whose last
/// overflows): NAK invalid request, the sender completes REM_INV_REQ_ERR, the receiver
/// LOC_LEN_ERR with the WQE's wr_id; nothing is written past the buffer (the packets that fit
/// before the overflowing one are in it, as IBA allows).
#[test]
fn a_send_longer_than_its_receive_buffer_fails_both_sides_and_writes_nothing_past_it() -> Result<()>
{
    let s =
        seed("a_send_longer_than_its_receive_buffer_fails_both_sides_and_writes_nothing_past_it");
    let mut r = rng(s);
    for (pmtu, room, len) in [(1024u32, 500usize, 501usize), (256, 600, 700)] {
        let mut p = pair(&mut r, pmtu)?;
        let pieces = split(&mut r, room, 2);
        let mut sg = Vec::new();
        let mut at = 0;
        let mut landed = 0;
        for piece in pieces {
            sg.push(Sge {
                addr: p.d.addr(at),
                length: piece as u32,
                lkey: p.d.area.lkey,
            });
            // Whole packets that fit land; the one that overflows does not.
            let fits = (len / pmtu as usize) * pmtu as usize;
            let n = piece.min(fits.saturating_sub(landed));
            let bytes = p.d.src_bytes[landed..landed + n].to_vec();
            p.d.land(at, &bytes);
            landed += n;
            at += piece + 7;
        }
        p.w.b.dev.post_recv(
            &mut p.qb,
            &[RecvWr {
                wr_id: 77,
                sg_list: sg,
            }],
        )?;
        p.w.a
            .dev
            .post_send(&mut p.qa, &[send_wr(&p.d, 5, WrOpcode::Send, len)])?;
        let a = completions(&mut p.w, false, 1, s)?;
        ensure!(
            (a[0].wr_id, a[0].status) == (5, WC_REM_INV_REQ_ERR),
            "seed {s}: sender {:?}",
            a[0]
        );
        let b = completions(&mut p.w, true, 1, s)?;
        ensure!(
            (b[0].wr_id, b[0].status, b[0].qpn) == (77, WC_LOC_LEN_ERR, p.qb.qpn),
            "seed {s}: receiver {:?}",
            b[0]
        );
        ensure!(
            p.w.b.counter("resp_bad_req")? == 1,
            "seed {s}: resp_bad_req"
        );
        p.d.check(&mut p.w.b, &format!("seed {s}: PMTU {pmtu}"))?;
    }
    Ok(())
}
/// A receive WQE written into the ring behind the driver with a key the NIC refuses (a stale
/// tag; a region without local write access): the receiver completes it LOC_PROT_ERR, the
/// sender gets NAK remote operational error (REM_OP_ERR), and nothing is written.
#[test]
fn a_receive_wqe_with_a_forged_key_completes_loc_prot_err_and_writes_nothing() -> Result<()> {
    let s = seed("a_receive_wqe_with_a_forged_key_completes_loc_prot_err_and_writes_nothing");
    let mut r = rng(s);
    for forge in 0..2 {
        let mut p = pair(&mut r, 1024)?;
        let ro =
            p.w.b
                .dev
                .reg_mr(&p.w.b.pd, p.d.area.addr, p.d.area.len, access::REMOTE_WRITE)?;
        let lkey = if forge == 0 {
            p.d.area.lkey ^ r.gen_range(1..=255)
        } else {
            ro.lkey
        };
        let wqe = RecvWr {
            wr_id: 9,
            sg_list: vec![Sge {
                addr: p.d.addr(64),
                length: 2048,
                lkey,
            }],
        }
        .wqe();
        let slot = u64::from(p.qb.rq_pi) & ((1 << p.qb.rq_log_size) - 1);
        p.w.b
            .dev
            .mem
            .write(p.qb.rq.addr + slot * RECV_WQE_LEN as u64, &wqe)?;
        p.qb.rq_pi += 1;
        p.w.b.dev.ring_rq_doorbell(p.qb.qpn, p.qb.rq_pi)?;
        let len = r.gen_range(1..=2048);
        p.w.a
            .dev
            .post_send(&mut p.qa, &[send_wr(&p.d, 3, WrOpcode::Send, len)])?;
        let a = completions(&mut p.w, false, 1, s)?;
        ensure!(
            (a[0].wr_id, a[0].status) == (3, WC_REM_OP_ERR),
            "seed {s}: sender {:?}",
            a[0]
        );
        let b = completions(&mut p.w, true, 1, s)?;
        ensure!(
            (b[0].wr_id, b[0].status) == (9, WC_LOC_PROT_ERR),
            "seed {s}: receiver {:?}",
            b[0]
        );
        ensure!(p.w.b.counter("rq_bad_wqe")? == 1, "seed {s}: rq_bad_wqe");
        p.d.check(&mut p.w.b, &format!("seed {s}: forged key {forge}"))?;
    }
    Ok(())
}
/// Host b moves a QP to ERR with receive WQEs posted, one of them held by a SEND whose later
/// packets were lost on the wire: every one completes WR_FLUSH_ERR with its wr_id, in order,
/// the held one first, and receive WQEs posted while the QP is in ERR flush too; another QP's
/// SENDs meanwhile land and complete as usual.
#[test]
fn receive_wqes_flush_when_their_qp_goes_to_err_and_other_qps_go_on() -> Result<()> {
    use ferroce_driver::{QpAttr, QpState};
    use std::cell::RefCell;
    use std::rc::Rc;
    let s = seed("receive_wqes_flush_when_their_qp_goes_to_err_and_other_qps_go_on");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut q1a, mut q1b) = w.connect(1024, r.gen_range(0..1 << 24), 5, 16)?;
    let (mut q2a, mut q2b) = w.connect(1024, r.gen_range(0..1 << 24), 9, 16)?;
    let mut d = side(&mut r, &mut w.a, &mut w.b, 2)?;
    // Frames a sends to QP 1 at b after its first are dropped.
    let seen = Rc::new(RefCell::new(0usize));
    let (log, drop_to) = (seen.clone(), q1b.qpn);
    w.ab.set_fault_hook(move |_, f| {
        let dq = u32::from_be_bytes([0, f[47], f[48], f[49]]);
        if dq != drop_to {
            return Fault::Pass;
        }
        *log.borrow_mut() += 1;
        if *log.borrow() > 1 {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let recv = |d: &mut Side, r: &mut ChaCha8Rng, k: usize, id: u64, len: usize| {
        let sg_list = split(r, len, 2)
            .into_iter()
            .map(|p| {
                let off = d.take(r, k, p);
                Sge {
                    addr: d.addr(off),
                    length: p as u32,
                    lkey: d.area.lkey,
                }
            })
            .collect();
        RecvWr { wr_id: id, sg_list }
    };
    let list1: Vec<RecvWr> = (0..5)
        .map(|i| recv(&mut d, &mut r, 0, 100 + i, 4000))
        .collect();
    let list2: Vec<RecvWr> = (0..2)
        .map(|i| recv(&mut d, &mut r, 1, 200 + i, 4000))
        .collect();
    w.b.dev.post_recv(&mut q1b, &list1)?;
    w.b.dev.post_recv(&mut q2b, &list2)?;
    // A 3-packet SEND on QP 1: its FIRST lands and holds receive WQE 100, the rest is lost.
    w.a.dev
        .post_send(&mut q1a, &[send_wr(&d, 1, WrOpcode::Send, 3000)])?;
    w.run(20_000)?;
    ensure!(
        *seen.borrow() == 3,
        "seed {s}: {} frames to QP 1",
        seen.borrow()
    );
    w.b.dev
        .modify_qp(&mut q1b, QpState::Err, QpAttr::default())?;
    w.a.dev.post_send(
        &mut q2a,
        &[
            send_wr(&d, 2, WrOpcode::Send, 1500),
            send_wr(&d, 3, WrOpcode::Send, 10),
        ],
    )?;
    let mut got = completions(&mut w, true, 7, s)?;
    let more: Vec<RecvWr> = (0..2)
        .map(|i| recv(&mut d, &mut r, 0, 300 + i, 64))
        .collect();
    w.b.dev.post_recv(&mut q1b, &more)?;
    got.extend(completions(&mut w, true, 2, s)?);
    let on = |q: u32| -> Vec<(u64, u32)> {
        got.iter()
            .filter(|c| c.qpn == q)
            .map(|c| (c.wr_id, c.status))
            .collect()
    };
    let flushed: Vec<(u64, u32)> = [100, 101, 102, 103, 104, 300, 301]
        .into_iter()
        .map(|i| (i, WC_WR_FLUSH_ERR))
        .collect();
    ensure!(on(q1b.qpn) == flushed, "seed {s}: QP 1: {:?}", on(q1b.qpn));
    ensure!(
        on(q2b.qpn) == [(200, WC_SUCCESS), (201, WC_SUCCESS)],
        "seed {s}: QP 2: {:?}",
        on(q2b.qpn)
    );
    ensure!(w.b.counter("resp_flushed")? == 7, "seed {s}: resp_flushed");
    w.run(5000)?;
    ensure!(
        w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(),
        "seed {s}: a completion after the flush"
    );
    Ok(())
}
/// A fatal NAK the responder sends (a WRITE with a bad rkey: remote access error) moves its own
/// QP to ERR, as IBA has it: the sender completes REM_ACCESS_ERR, and at the responder's host
/// the QP reads ERR, its posted receive WQEs complete WR_FLUSH_ERR in order, a work request it
/// posts afterwards flushes too, and a request that still arrives for it is dropped.
#[test]
fn a_fatal_nak_sent_moves_the_responders_qp_to_err() -> Result<()> {
    use ferroce_driver::QpState;
    let s = seed("a_fatal_nak_sent_moves_the_responders_qp_to_err");
    let mut r = rng(s);
    let mut p = pair(&mut r, 1024)?;
    let recvs: Vec<RecvWr> = (0..3)
        .map(|i| {
            let off = p.d.take(&mut r, 0, 100);
            RecvWr {
                wr_id: 50 + i,
                sg_list: vec![Sge {
                    addr: p.d.addr(off),
                    length: 100,
                    lkey: p.d.area.lkey,
                }],
            }
        })
        .collect();
    p.w.b.dev.post_recv(&mut p.qb, &recvs)?;
    let mut bad = send_wr(&p.d, 1, WrOpcode::RdmaWrite, 64);
    bad.rkey ^= 0x80;
    p.w.a.dev.post_send(&mut p.qa, &[bad])?;
    let got = completions(&mut p.w, false, 1, s)?;
    ensure!(
        (got[0].wr_id, got[0].status) == (1, WC_REM_ACCESS_ERR),
        "seed {s}: sender {got:?}"
    );
    let got = completions(&mut p.w, true, 3, s)?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [
            (50, WC_WR_FLUSH_ERR),
            (51, WC_WR_FLUSH_ERR),
            (52, WC_WR_FLUSH_ERR)
        ],
        "seed {s}: receiver {st:?}"
    );
    ensure!(
        p.w.b.dev.query_qp(&p.qb)?.state == Some(QpState::Err),
        "seed {s}: b's QP after the NAK it sent"
    );
    // The QP's own requests flush; a request arriving for it is dropped.
    let mut own = send_wr(&p.d, 7, WrOpcode::RdmaWrite, 16);
    own.sg_list[0].lkey = p.d.area.lkey;
    own.sg_list[0].addr = p.d.area.addr;
    p.w.b.dev.post_send(&mut p.qb, &[own])?;
    let got = completions(&mut p.w, true, 1, s)?;
    ensure!(
        (got[0].wr_id, got[0].status) == (7, WC_WR_FLUSH_ERR),
        "seed {s}: b's own request {got:?}"
    );
    ensure!(p.w.b.counter("resp_bad_rkey")? == 1, "seed {s}: bad_rkey");
    ensure!(p.w.b.counter("resp_flushed")? == 3, "seed {s}: flushed");
    p.d.check(&mut p.w.b, &format!("seed {s}: b's memory"))?;
    Ok(())
}
