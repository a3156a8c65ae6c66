//! The host moving a QP to ERR in the middle of a message: the message stops between two
//! packets (rxe's requester and its READ responder check the QP's state at every packet), it
//! does not run to its end. Only frames already built before the move may still leave.

use super::{read_wr, write_wr};
use anyhow::{ensure, Result};
use ferroce_driver::{QpAttr, QpState};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::WC_WR_FLUSH_ERR;
use ferroce_tests::{bth, budget, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// The message: 256 KiB, hundreds of packets at any MTU.
const LEN: usize = 256 * 1024;

/// Frames that may leave after the move to ERR: those already built into the transmit path
/// (its queues hold a few packets), in simulated cycles after the move.
const BUILT: u64 = 2_048;

/// Start times (ps) of the frames on `ab` (or `ba`) to `dqpn` from now on.
fn times_to(w: &World, ab: bool, dqpn: u32) -> Result<Rc<RefCell<Vec<u64>>>> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s2 = seen.clone();
    let wire = if ab { &w.ab } else { &w.ba };
    wire.set_timed_fault_hook(move |_, t, f| {
        if bth(f).is_some_and(|b| b.dqpn == dqpn) {
            s2.borrow_mut().push(t);
        }
        Fault::Pass
    })?;
    Ok(seen)
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
    let seen = times_to(&w, true, qb.qpn)?;
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
