//! The host moving a QP to ERR in the middle of a message: the message stops between two
//! packets (rxe's requester and its READ responder check the QP's state at every packet), it
//! does not run to its end. Only frames already built before the move may still leave.

use super::{read_wr, write_wr};
use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, QpAttr, QpState};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::opcodes::{RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_ONLY};
use ferroce_spec::queues::{WC_SUCCESS, WC_WR_FLUSH_ERR};
use ferroce_tests::{bth, budget, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// The message: 256 KiB, hundreds of packets at any MTU.
const LEN: usize = 256 * 1024;

/// QPs whose WRITEs pre-empt the READ response job (one turn each before it has its next).
const WRITERS: usize = 3;

/// Frames that may leave after the move to ERR: those already built into the transmit path
/// (its queues hold a few packets), in simulated cycles after the move.
const BUILT: u64 = 2_048;

/// Start times (ps) of the frames on `ab` to `dqpn` from now on.
fn times_to(w: &World, dqpn: u32) -> Result<Rc<RefCell<Vec<u64>>>> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s2 = seen.clone();
    w.ab.set_timed_fault_hook(move |_, t, f| {
        if bth(f).is_some_and(|b| b.dqpn == dqpn) {
            s2.borrow_mut().push(t);
        }
        Fault::Pass
    })?;
    Ok(seen)
}

/// Start times (ps) of the READ responses (whatever their destination: a reset QP's context
/// names none) and of the other RoCE frames on `ab` from now on.
type Times = Rc<RefCell<Vec<u64>>>;
fn responses_and_others(w: &World) -> Result<(Times, Times)> {
    let seen: [Times; 2] = Default::default();
    let s2 = seen.clone();
    let responses = RC_RDMA_READ_RESPONSE_FIRST..=RC_RDMA_READ_RESPONSE_ONLY;
    w.ab.set_timed_fault_hook(move |_, t, f| {
        if let Some(b) = bth(f) {
            let i = usize::from(!responses.contains(&b.opcode));
            s2[i].borrow_mut().push(t);
        }
        Fault::Pass
    })?;
    let [x, y] = seen;
    Ok((x, y))
}

/// Run until `n` frames are in `seen` (at most `max` cycles).
fn until_seen(w: &World, seen: &RefCell<Vec<u64>>, n: usize, max: u64) -> Result<()> {
    let t0 = w.cycle();
    while seen.borrow().len() < n {
        ensure!(w.cycle() - t0 < max, "{n} frames not seen in {max} cycles");
        w.run(50)?;
    }
    Ok(())
}

/// The frames in `seen` that left more than `BUILT` cycles after `at` (ps).
fn late(w: &World, seen: &RefCell<Vec<u64>>, at: u64) -> (usize, usize) {
    let period = w.a.sim.borrow().tb.period_ps();
    let s = seen.borrow();
    let after = s.iter().filter(|&&t| t > at).count();
    let late = s.iter().filter(|&&t| t > at + BUILT * period).count();
    (after, late)
}

/// A QP moved to ERR by its host while it sends a long WRITE: no packet of it leaves once
/// the frames already built have; the WRITE and the WR behind it complete WR_FLUSH_ERR.
#[test]
fn a_qp_moved_to_err_mid_write_sends_nothing_more() -> Result<()> {
    stopped_mid_message("a_qp_moved_to_err_mid_write_sends_nothing_more", false)
}

/// A QP moved to ERR by its host while it serves a long READ: its READ responses stop once
/// the frames already built have left.
#[test]
fn a_qp_moved_to_err_mid_read_response_sends_nothing_more() -> Result<()> {
    stopped_mid_message(
        "a_qp_moved_to_err_mid_read_response_sends_nothing_more",
        true,
    )
}

/// a's QP sends a 256 KiB message to b (a WRITE it posts, or the responses to a READ b
/// posts), at a random PMTU; the host moves it to ERR after 2-40 of its packets.
fn stopped_mid_message(test: &str, read: bool) -> Result<()> {
    let s = seed(test);
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let src = w.a.buffer(LEN, &vec![0x3C; LEN])?;
    let dst = w.b.buffer(LEN, &vec![0; LEN])?;
    let seen = times_to(&w, qb.qpn)?;
    if read {
        w.b.dev
            .post_send(&mut qb, &[read_wr(1, &dst, LEN as u32, src.addr, src.rkey)])?;
    } else {
        w.a.dev.post_send(
            &mut qa,
            &[
                write_wr(1, &src, LEN as u32, dst.addr, dst.rkey),
                write_wr(2, &src, 64, dst.addr, dst.rkey),
            ],
        )?;
    }
    let k = r.gen_range(2..40);
    until_seen(&w, &seen, k, budget(200_000))?;
    let period = w.a.sim.borrow().tb.period_ps();
    let at = w.cycle() * period;
    w.a.dev
        .modify_qp(&mut qa, QpState::Err, QpAttr::default())?;
    if read {
        w.run(40_000)?;
    } else {
        let got = reap(&mut w, 0, 2, budget(50_000), &format!("seed {s}"))?;
        let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        ensure!(
            st == [(1, WC_WR_FLUSH_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: {st:?}"
        );
        w.run(20_000)?;
    }
    let (after, late) = late(&w, &seen, at);
    let what = if read {
        "READ responses"
    } else {
        "WRITE packets"
    };
    println!(
        "seed {s}: pmtu {pmtu}, ERR after {k} {what}: {after} left after the move, {late} late, \
         {} in all",
        seen.borrow().len()
    );
    ensure!(
        late == 0,
        "seed {s}: {late} {what} left more than {BUILT} cycles after the move to ERR ({after} \
         after it, {} in all)",
        seen.borrow().len()
    );
    ensure!(
        w.a.dev.query_qp(&qa)?.state == Some(QpState::Err),
        "seed {s}: a not ERR"
    );
    Ok(())
}

/// A READ response job waiting its turn (pre-empted by another QP's long WRITE) when the host
/// resets its QP: it never resumes (not while the QP is in RESET, not once it is connected
/// again), and a READ on the new connection is served whole.
#[test]
fn a_pre_empted_read_response_of_a_reset_qp_never_resumes() -> Result<()> {
    let s = seed("a_pre_empted_read_response_of_a_reset_qp_never_resumes");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256, 1024, 4096][r.gen_range(0..3)];
    let mut psn = || r.gen_range(0..1u32 << 24);
    let (mut qa, mut qb) = w.connect(pmtu, psn(), psn(), 16)?;
    let mut writers = Vec::new();
    for _ in 0..WRITERS {
        writers.push(w.connect(pmtu, psn(), psn(), 16)?.0);
    }
    let (p1, p2) = (psn(), psn());
    let fill: Vec<u8> = (0..LEN).map(|i| (i * 7 + 1) as u8).collect();
    let src = w.a.buffer(LEN, &fill)?;
    let dst = w.b.buffer(LEN, &vec![0; LEN])?;
    let (reads, writes) = responses_and_others(&w)?;
    w.b.dev
        .post_send(&mut qb, &[read_wr(1, &dst, LEN as u32, src.addr, src.rkey)])?;
    until_seen(&w, &reads, r.gen_range(2..20), budget(200_000))?;
    // a's WRITEs on its other QPs take the requester's turns: the READ response job waits
    // a turn of each (their targets are b's `dst` too: only their completions matter).
    for (i, q) in writers.iter_mut().enumerate() {
        let wr = write_wr(2 + i as u64, &src, LEN as u32, dst.addr, dst.rkey);
        w.a.dev.post_send(q, &[wr])?;
    }
    until_seen(&w, &writes, 1, budget(200_000))?;
    let period = w.a.sim.borrow().tb.period_ps();
    let at = w.cycle() * period;
    w.a.dev
        .modify_qp(&mut qa, QpState::Reset, QpAttr::default())?;
    w.run(40_000)?;
    let (after, late) = late(&w, &reads, at);
    println!(
        "seed {s}: pmtu {pmtu}, reset with the READ response job waiting: {after} READ \
         responses left after the reset, {late} late, {} in all",
        reads.borrow().len()
    );
    ensure!(
        late == 0,
        "seed {s}: {late} READ responses of the reset QP left more than {BUILT} cycles after \
         the reset ({after} after it)"
    );
    // The WRITE completes; a READ on the new connection is served whole.
    let mut got = reap(&mut w, 0, WRITERS, budget(300_000), &format!("seed {s}: a"))?;
    got.sort_by_key(|c| c.wr_id);
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status))
            .eq((0..WRITERS as u64).map(|i| (2 + i, WC_SUCCESS))),
        "seed {s}: a completed {got:?}"
    );
    w.reconnect(&mut qa, &mut qb, pmtu, p1, p2)?;
    let fresh = w.b.buffer(LEN, &vec![0; LEN])?;
    w.b.dev.post_send(
        &mut qb,
        &[read_wr(3, &fresh, LEN as u32, src.addr, src.rkey)],
    )?;
    let got = reap(&mut w, 1, 1, budget(100_000), &format!("seed {s}: b"))?;
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status))
            .eq([(3, WC_SUCCESS)]),
        "seed {s}: b completed {got:?}"
    );
    let mut got = vec![0; LEN];
    w.b.dev.mem.read(fresh.addr, &mut got)?;
    ensure!(got == fill, "seed {s}: the new connection's READ data");
    Ok(())
}

/// An ACK the responder owes when the host resets its QP is not sent: b's WRITE behind its
/// 64-packet READ earns one that waits for the READ's responses; the reset drops the responses
/// still to go, and the ACK with them (a QP in RESET sends nothing, IBA 10.3.1).
#[test]
fn an_ack_owed_when_its_qp_is_reset_is_never_sent() -> Result<()> {
    let s = seed("an_ack_owed_when_its_qp_is_reset_is_never_sent");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = [256, 1024, 4096][r.gen_range(0..3)];
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    // 64 responses: the WRITE's PSN inside the requester's window (`MAX_UNACKED_PSNS`).
    let len = 64 * pmtu as usize;
    let src = w.a.buffer(len, &vec![0x5A; len])?;
    let dst = w.b.buffer(len, &vec![0; len])?;
    let (reads, others) = responses_and_others(&w)?;
    w.b.dev.post_send(
        &mut qb,
        &[
            read_wr(1, &dst, len as u32, src.addr, src.rkey),
            write_wr(2, &dst, 64, src.addr, src.rkey),
        ],
    )?;
    let k = r.gen_range(2..40);
    until_seen(&w, &reads, k, budget(200_000))?;
    w.a.dev
        .modify_qp(&mut qa, QpState::Reset, QpAttr::default())?;
    w.run(40_000)?;
    println!(
        "seed {s}: pmtu {pmtu}, reset after {k} READ responses: {} in all, {} other frames \
         from a",
        reads.borrow().len(),
        others.borrow().len()
    );
    ensure!(
        others.borrow().is_empty(),
        "seed {s}: a sent {} ACKs for a QP it reset before they were due",
        others.borrow().len()
    );
    // On the next connection the QP's ACKs are its own: a WRITE and a READ complete.
    let (p1, p2) = (r.gen_range(0..1 << 24), r.gen_range(0..1 << 24));
    w.reconnect(&mut qa, &mut qb, pmtu, p1, p2)?;
    w.b.dev.post_send(
        &mut qb,
        &[
            write_wr(3, &dst, 64, src.addr, src.rkey),
            read_wr(4, &dst, 4096, src.addr, src.rkey),
        ],
    )?;
    let got = reap(&mut w, 1, 2, budget(100_000), &format!("seed {s}: b"))?;
    ensure!(
        got.iter()
            .map(|c| (c.wr_id, c.status))
            .eq([(3, WC_SUCCESS), (4, WC_SUCCESS)]),
        "seed {s}: b completed {got:?}"
    );
    Ok(())
}
