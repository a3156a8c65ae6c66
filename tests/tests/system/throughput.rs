//! The performance floor, in simulated time (not wall-clock): RDMA WRITEs of 64 KiB and 1 MiB,
//! and SENDs of 64 KiB (each into a receive WQE posted ahead), between two `ferroce_nic_64`
//! reach at least 95% of their RoCEv2 goodput ceiling at 10 Gb/s (`ferroce_spec::wire`) with
//! the default 500 ns PCIe read latency. The setting is the benchmark's (`ferroce perf`,
//! `ferroce_sim::bench::Bench`); the figures for every size are in the README.

use anyhow::{ensure, Result};
use ferroce_sim::bench::Bench;
use ferroce_sim::traffic::WriteRun;

fn floor(w: &WriteRun) -> Result<()> {
    println!(
        "{:?} {} B x {}: {} cycles, {:.3} Gb/s of a {:.3} Gb/s ceiling ({:.1}%)",
        w.opcode,
        w.size,
        w.count,
        w.cycles,
        w.gbps(),
        w.ceiling_gbps(),
        100.0 * w.of_ceiling()
    );
    ensure!(
        w.of_ceiling() >= 0.95,
        "{} B {:?}s at {:.1}% of the goodput ceiling",
        w.size,
        w.opcode,
        100.0 * w.of_ceiling()
    );
    Ok(())
}

#[test]
fn large_writes_reach_95_percent_of_the_goodput_ceiling() -> Result<()> {
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 7,
    };
    let r = bench.run(&[(64 << 10, 32), (1 << 20, 3)], |_, _| ())?;
    for w in &r.runs {
        floor(w)?;
    }
    // One 64-byte WRITE: two PCIe reads (WQE, payload), the wire both ways, the CQE write.
    println!("64-byte latency: {} cycles", r.latency_64);
    ensure!(
        r.latency_64 > 2 * 78 && r.latency_64 < 1000,
        "latency {}",
        r.latency_64
    );
    Ok(())
}

#[test]
fn large_sends_reach_95_percent_of_the_goodput_ceiling() -> Result<()> {
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 11,
    };
    let r = bench.run_sends(&[(64 << 10, 32)], |_, _| ())?;
    r.runs.iter().try_for_each(floor)
}

/// RDMA READs of 64 KiB: the responses fill the wire like WRITEs (the requests, one small
/// packet each, go the other way).
#[test]
fn large_reads_reach_95_percent_of_the_goodput_ceiling() -> Result<()> {
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 13,
    };
    let r = bench.run_reads(&[(64 << 10, 32)], |_, _| ())?;
    r.runs.iter().try_for_each(floor)
}
