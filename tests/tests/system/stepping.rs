//! Two NICs stepped one after the other and stepped together (their models evaluated at once
//! on two threads, `Stepping::Parallel`) put the same bytes on the wire at the same times: the
//! same lossy, reordering world, seed and traffic give byte-identical pcaps both ways and the
//! same counters. Both run on models whose clock evaluations skip the input-fed logic.

use anyhow::{ensure, Result};
use ferroce_sim::host::Stepping;
use ferroce_sim::traffic::{write_latency, write_stream, Direction};
use ferroce_tests::{lossy_world, seed};
use std::path::PathBuf;

/// WRITEs both ways over a link losing 1% of the frames (and corrupting, duplicating and
/// reordering some), and single WRITEs each way whose completion waits for the ACK (their
/// latency in cycles: one cycle early or late shows); the pcaps of both links, the RC counters
/// of both NICs and the latencies.
fn run(s: u64, stepping: Stepping, name: &str) -> Result<(Vec<Vec<u8>>, String, u64)> {
    let mut w = lossy_world(s, 0.01)?;
    // The model's clock evaluations skip the logic fed only by inputs when no input changed
    // (the build patched Verilator's evaluation): both worlds run on that path.
    ensure!(
        w.a.sim.borrow().tb.model_ref().clock_skips_inputs(),
        "the NIC model evaluates its input logic on every clock edge"
    );
    w.set_stepping(stepping);
    let opened = w.parallel_cycles();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let pcaps = [
        tmp.join(format!("stepping_{name}_ab.pcap")),
        tmp.join(format!("stepping_{name}_ba.pcap")),
    ];
    w.ab.tap(&pcaps[0])?;
    w.ba.tap(&pcaps[1])?;
    let (mut qa, mut qb) = w.connect(1024, 0xff_fff0, 0x12_3456, 32)?;
    write_stream(&mut w, Direction::AToB, &mut qa, 1024, 3000, 24, s, |_| {})?;
    write_stream(
        &mut w,
        Direction::BToA,
        &mut qb,
        1024,
        5000,
        12,
        s ^ 1,
        |_| {},
    )?;
    let mut latency = Vec::new();
    for k in 0..4 {
        latency.push(write_latency(
            &mut w,
            Direction::AToB,
            &mut qa,
            1024,
            64,
            s + k,
        )?);
        latency.push(write_latency(
            &mut w,
            Direction::BToA,
            &mut qb,
            1024,
            64,
            s + k,
        )?);
    }
    let stats = format!(
        "latencies {latency:?}, {:?} {:?}",
        w.a.dev.rc_stats()?,
        w.b.dev.rc_stats()?
    );
    let cycles = w.parallel_cycles() - opened;
    drop(w);
    let bytes = pcaps
        .iter()
        .map(std::fs::read)
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok((bytes, stats, cycles))
}

#[test]
fn stepping_the_two_nics_together_changes_no_byte_and_no_cycle() -> Result<()> {
    let s = seed("stepping_the_two_nics_together_changes_no_byte_and_no_cycle");
    let (one, one_stats, none) = run(s, Stepping::Sequential, "sequential")?;
    let (two, two_stats, cycles) = run(s, Stepping::Parallel, "parallel")?;
    ensure!(
        none == 0,
        "the sequential world stepped {none} cycles in parallel"
    );
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        ensure!(cycles > 20_000, "only {cycles} cycles stepped in parallel");
    }
    ensure!(
        one_stats == two_stats,
        "counters differ:\n{one_stats}\n{two_stats}"
    );
    for (dir, (a, b)) in ["a to b", "b to a"].iter().zip(one.iter().zip(&two)) {
        ensure!(
            a.len() > 10_000,
            "{dir}: the pcap holds only {} bytes",
            a.len()
        );
        ensure!(a == b, "{dir}: the pcaps differ (seed {s})");
    }
    Ok(())
}
