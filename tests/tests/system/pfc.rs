//! Lossless RoCE with priority flow control, end to end: two `ferroce_nic_64` back to back at
//! 10 Gb/s, each with its driver and root complex, the receiver's host taking memory writes at
//! only 5 Gb/s (half the line rate: `WorldConfig::write_gbps`).
//!
//! - With PFC on priority 0 (untagged RoCE frames are priority 0), a long stream of 64 KiB RDMA
//!   WRITEs completes with every byte right and zero frames dropped, while the receiver sends
//!   XOFF and XON (its PFC counters), the sender obeys (its pause counters) and the goodput
//!   settles at the receiver's 5 Gb/s. Every fault counter of both NICs stays zero.
//! - Without PFC the same traffic overruns the receive buffer: frames are dropped and
//!   `rx_overflow` shows it.

use anyhow::{ensure, Result};
use ferroce_driver::{access, DmaMemory, PfcConfig, QpAttr, QpState, SendWr, Sge, WrOpcode};
use ferroce_sim::traffic::{write_stream, Direction, LOSSLESS_PFC};
use ferroce_sim::world::{step_until, World, WorldConfig};
use ferroce_tests::seed;

const PMTU: u32 = 4096;
const SIZE: usize = 64 << 10;

const PFC: PfcConfig = LOSSLESS_PFC;

fn slow_receiver() -> Result<World> {
    let cfg = WorldConfig {
        write_gbps: [None, Some(5.0)],
        ..Default::default()
    };
    Ok(World::open(&cfg)?)
}

#[test]
fn pfc_makes_a_half_rate_receiver_lossless() -> Result<()> {
    let s = seed("pfc_makes_a_half_rate_receiver_lossless");
    let mut w = slow_receiver()?;
    w.a.dev.set_pfc(&PFC)?;
    w.b.dev.set_pfc(&PFC)?;
    let (mut qa, _qb) = w.connect(PMTU, 100, 200, 64)?;
    let count = 40;
    let run = write_stream(
        &mut w,
        Direction::AToB,
        &mut qa,
        PMTU,
        SIZE,
        count,
        s,
        |_| (),
    )?;
    let (xoff, xon) = (
        w.b.prio_counters("mac_xoff_sent")?,
        w.b.prio_counters("mac_xon_sent")?,
    );
    let (pfc_rx, paused) = (
        w.a.prio_counters("mac_pfc_rx")?,
        w.a.prio_counters("mac_paused_cycles")?,
    );
    println!(
        "{count} x 64 KiB a -> b in {} cycles: {:.3} Gb/s (receiver's host writes 5 Gb/s); \
         b sent {} XOFF ({} refreshes included) and {} XON for priority 0, a received {} \
         PFC frames and was paused {} cycles ({:.0}% of the run)",
        run.cycles,
        run.gbps(),
        xoff[0],
        xoff[0].saturating_sub(xon[0]),
        xon[0],
        pfc_rx[0],
        paused[0],
        100.0 * paused[0] as f64 / run.cycles as f64
    );
    for h in [&w.a, &w.b] {
        for (c, v) in h.faults()? {
            ensure!(v == 0, "{c} = {v}");
        }
        ensure!(h.tx_used()? == [0; 8], "credits left {:?}", h.tx_used()?);
    }
    // The driver reads the same through BAR0's MAC_STATS block.
    let (sa, sb) = (w.a.dev.mac_stats()?, w.b.dev.mac_stats()?);
    let u = |v: [u64; 8]| v.map(|x| x as u32);
    ensure!(
        sb.xoff_tx == u(xoff) && sb.xon_tx == u(xon),
        "b's PFC counters over BAR0"
    );
    ensure!(sa.pfc_rx == u(pfc_rx), "a's PFC counters over BAR0: {sa:?}");
    // Paused cycles keep no count once the run is over: BAR0's is read later, never less.
    ensure!(sa.paused_cycles[0] >= paused[0] as u32 && sa.paused_cycles[1..] == [0; 7]);
    ensure!(sb.rx_overflow == 0 && sa.frames_tx[0] > 0 && sa.frames_tx[1..] == [0; 7]);
    println!("a over BAR0: {sa:?}\nb over BAR0: {sb:?}");
    ensure!(
        xoff[0] > 10 && xon[0] > 10,
        "the receiver sent XOFF and XON"
    );
    ensure!(xoff[1..].iter().chain(&xon[1..]).all(|&n| n == 0));
    ensure!(
        pfc_rx[0] == xoff[0] + xon[0],
        "the sender saw every PFC frame: {} received, {} + {} sent",
        pfc_rx[0],
        xoff[0],
        xon[0]
    );
    ensure!(paused[0] > run.cycles / 10, "the sender was held");
    ensure!(
        run.gbps() > 4.75 && run.gbps() < 5.05,
        "goodput {:.3} Gb/s should settle near the receiver's 5 Gb/s",
        run.gbps()
    );
    Ok(())
}

#[test]
fn without_pfc_the_same_receiver_drops_frames() -> Result<()> {
    let mut w = slow_receiver()?;
    let (mut qa, _qb) = w.connect(PMTU, 100, 200, 64)?;
    let count = 16;
    let src = w.a.dev.mem.alloc(count * SIZE, 4096)?;
    let smr = w.a.dev.reg_mr(
        &w.a.pd,
        src.addr,
        (count * SIZE) as u64,
        access::LOCAL_WRITE,
    )?;
    let dst = w.b.dev.mem.alloc(count * SIZE, 4096)?;
    let dmr = w.b.dev.reg_mr(
        &w.b.pd,
        dst.addr,
        (count * SIZE) as u64,
        access::LOCAL_WRITE | access::REMOTE_WRITE,
    )?;
    let wrs: Vec<SendWr> = (0..count)
        .map(|i| SendWr {
            wr_id: i as u64,
            opcode: WrOpcode::RdmaWrite,
            sg_list: vec![Sge {
                addr: src.addr + (i * SIZE) as u64,
                length: SIZE as u32,
                lkey: smr.lkey,
            }],
            remote_addr: dmr.addr + (i * SIZE) as u64,
            rkey: dmr.rkey,
            signaled: true,
            ..Default::default()
        })
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    // As long as the lossless run needs for as many bytes at 5 Gb/s, and then some.
    let cycles = (count * SIZE * 8) as u64 * 1000 / 5 / 6400 * 3 / 2;
    let mut n = 0;
    step_until(&w.a.sim, cycles + 1, "time", || {
        n += 1;
        n >= cycles
    })?;
    // RC goes back to the first lost packet and overflows the buffer again: stop the sender
    // (its QP to ERR) and let the link drain, so BAR0 and the port are read at rest.
    w.a.dev
        .modify_qp(&mut qa, QpState::Err, QpAttr::default())?;
    w.run(20_000)?;
    let dropped = w.b.counter("rx_overflow")?;
    let bar0 = u64::from(w.b.dev.mac_stats()?.rx_overflow);
    ensure!(
        bar0 == dropped && w.b.counter("rx_overflow")? == dropped,
        "BAR0 reads the overflow count: {bar0}, the port {dropped}"
    );
    let xoff = w.b.prio_counters("mac_xoff_sent")?;
    println!(
        "without PFC: {dropped} frames dropped on receive-buffer overflow in {cycles} cycles; \
         XOFF sent {xoff:?}"
    );
    ensure!(
        dropped > 0,
        "a half-rate receiver without PFC must overflow"
    );
    ensure!(xoff.iter().all(|&n| n == 0), "PFC is off: no XOFF");
    Ok(())
}
