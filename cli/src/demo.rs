//! `ferroce demo`: emit the Verilog of every design and lint it, build the whole NIC under
//! Verilator, and run two hosts, each with its NIC and the Rust driver, joined by a 10G link
//! each way: RDMA WRITEs, SENDs and READs of several sizes and atomics both ways with every
//! byte and completion checked, throughput against the RoCEv2 goodput ceiling, the atomic
//! rate, the latency of a 64-byte WRITE, the simulation speed, a run over a lossy link (the
//! retries read from BAR0), and the pcap files of both links.

use anyhow::{bail, ensure, Context, Result};
use ferroce_driver::WrOpcode;
use ferroce_hdl::designs::DESIGNS;
use ferroce_sim::bench::Bench;
use ferroce_sim::designs::emit_to;
use ferroce_sim::traffic::{
    atomic_stream, read_stream, send_stream, write_latency, write_stream, Direction, WriteRun,
    LOSSLESS_PFC, SEND_SIZES, SIZES,
};
use ferroce_sim::world::{World, WorldConfig, FAULT_COUNTERS};
use ferroce_sim::RandomFaults;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Atomics the demo runs each way.
const ATOMICS: usize = 400;

#[derive(clap::Args)]
pub struct Args {
    /// Random seed (the run is reproducible from it).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Path MTU of the QP pair: 256, 512, 1024, 2048 or 4096.
    #[arg(long, default_value_t = 4096)]
    pmtu: u32,
    /// Output directory (Verilog in `verilog/`, pcap files in `pcap/`).
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Interleave PCIe read completions across tags (a stress; costs throughput).
    #[arg(long)]
    reorder: bool,
    /// Write a waveform (VCD, every signal of one NIC, GTKWave opens it) of the streams'
    /// world to this file; its models are built with tracing on the first use.
    #[arg(long)]
    wave: Option<PathBuf>,
    /// Which host's NIC the waveform shows: `a` or `b`.
    #[arg(long, default_value = "a", value_parser = ["a", "b"])]
    wave_nic: String,
    /// The waveform's first cycle (the streams' world counts from its reset).
    #[arg(long, default_value_t = 0)]
    wave_from: u64,
    /// The waveform's length in cycles.
    #[arg(long, default_value_t = 20_000)]
    wave_cycles: u64,
}

/// A waveform of one NIC for a window of cycles.
pub struct Wave {
    pub path: PathBuf,
    pub host_b: bool,
    pub from: u64,
    pub cycles: u64,
}

pub fn main(a: Args) -> Result<()> {
    let wave = a.wave.map(|path| Wave {
        path,
        host_b: a.wave_nic == "b",
        from: a.wave_from,
        cycles: a.wave_cycles,
    });
    run(a.seed, a.pmtu, a.reorder, &a.out, wave.as_ref())
}

/// `reorder`: interleave the root complexes' read completions across tags (from `seed`), a
/// stress for the DMA engine that costs throughput; off, completions come in request order.
pub fn run(seed: u64, pmtu: u32, reorder: bool, out: &Path, wave: Option<&Wave>) -> Result<()> {
    println!("ferroce demo (seed {seed}, path MTU {pmtu})");
    let vdir = out.join("verilog");
    println!("1. Verilog -> {}", vdir.display());
    for d in DESIGNS {
        let files = emit_to(d.name, &vdir).with_context(|| format!("emitting {}", d.name))?;
        if let Err(diag) = ferroce_fpga::synth::lint(d.name, &files)? {
            bail!("lint of {} failed:\n{diag}", d.name);
        }
        println!(
            "   {:<22} {:>3} modules, verilator -Wall clean",
            d.name,
            files.len()
        );
    }
    println!(
        "2. Two hosts, each with ferroce_nic_64 under Verilator and the Rust driver, 10G links"
    );
    let built = Instant::now();
    let mut w = World::open(&WorldConfig {
        reorder_seed: reorder.then_some(seed),
        trace: wave.is_some(),
        ..WorldConfig::default()
    })
    .context("building and opening the two NICs")?;
    if let Some(v) = wave {
        let host = if v.host_b { &w.b } else { &w.a };
        host.wave(&v.path, v.from, v.cycles)
            .with_context(|| format!("starting the waveform {}", v.path.display()))?;
        println!(
            "   waveform of host {}'s NIC, cycles {}..{}: {}",
            if v.host_b { "b" } else { "a" },
            v.from,
            v.from + v.cycles,
            v.path.display()
        );
    }
    let pdir = out.join("pcap");
    std::fs::create_dir_all(&pdir).with_context(|| format!("creating {}", pdir.display()))?;
    let (pab, pba) = (pdir.join("a_to_b.pcap"), pdir.join("b_to_a.pcap"));
    w.ab.tap(&pab)?;
    w.ba.tap(&pba)?;
    // PFC on priority 0: back-to-back small SENDs can outrun the receiver's receive WQE
    // fetches, and nothing retransmits yet.
    w.a.dev.set_pfc(&LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&LOSSLESS_PFC)?;
    let (mut qa, mut qb) = w.connect(pmtu, 0xff_fff0, (seed as u32) & 0xff_ffff, 256)?;
    println!(
        "   models ready in {:.1} s; QP {} (host a) <-> QP {} (host b); PCIe reads 500 ns, PFC on, completions {}",
        built.elapsed().as_secs_f64(),
        qa.qpn,
        qb.qpn,
        if reorder { "interleaved across tags" } else { "in request order" }
    );
    println!("3. Latency of one 64-byte WRITE, doorbell to completion seen by poll_cq");
    let ns = w.a.sim.borrow().tb.period_ps() as f64 / 1000.0;
    for (dir, qp) in [(Direction::AToB, &mut qa), (Direction::BToA, &mut qb)] {
        let c = write_latency(&mut w, dir, qp, pmtu, 64, seed)?;
        println!("   {}: {c} cycles = {:.0} ns", dir.name(), c as f64 * ns);
    }
    println!("4. WRITE, SEND and READ streams and atomics, every byte and completion checked (goodput ceiling: RoCEv2 over untagged IPv4 at 10 Gb/s)");
    let total: u64 = SIZES
        .iter()
        .chain(&SEND_SIZES)
        .chain(&SEND_SIZES)
        .map(|(s, n)| 2 * (s * n) as u64)
        .sum();
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("   [{bar:40}] {bytes}/{total_bytes} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut runs: Vec<(Direction, WriteRun)> = Vec::new();
    let mut base = 0u64;
    for (k, &(size, count)) in SIZES.iter().enumerate() {
        for (dir, qp) in [(Direction::AToB, &mut qa), (Direction::BToA, &mut qb)] {
            bar.set_message(format!("{size} B {}", dir.name()));
            let r = write_stream(&mut w, dir, qp, pmtu, size, count, seed ^ k as u64, |b| {
                bar.set_position(base + b)
            })
            .with_context(|| format!("{count} WRITEs of {size} B {}", dir.name()))?;
            base += r.bytes();
            runs.push((dir, r));
        }
    }
    // SENDs: each into a receive WQE the receiver posts ahead of it.
    for (k, &(size, count)) in SEND_SIZES.iter().enumerate() {
        for dir in [Direction::AToB, Direction::BToA] {
            let (qp, rq) = match dir {
                Direction::AToB => (&mut qa, &mut qb),
                Direction::BToA => (&mut qb, &mut qa),
            };
            bar.set_message(format!("SEND {size} B {}", dir.name()));
            let r = send_stream(
                &mut w,
                dir,
                qp,
                rq,
                pmtu,
                size,
                count,
                seed ^ k as u64,
                |b| bar.set_position(base + b),
            )
            .with_context(|| format!("{count} SENDs of {size} B {}", dir.name()))?;
            base += r.bytes();
            runs.push((dir, r));
        }
    }
    // RDMA READs: the receiving side asks for the bytes (its QP posts the READs).
    for (k, &(size, count)) in SEND_SIZES.iter().enumerate() {
        for dir in [Direction::AToB, Direction::BToA] {
            let qp = match dir {
                Direction::AToB => &mut qb,
                Direction::BToA => &mut qa,
            };
            bar.set_message(format!("READ {size} B {}", dir.name()));
            let r = read_stream(&mut w, dir, qp, pmtu, size, count, seed ^ k as u64, |b| {
                bar.set_position(base + b)
            })
            .with_context(|| format!("{count} READs of {size} B {}", dir.name()))?;
            base += r.bytes();
            runs.push((dir, r));
        }
    }
    bar.finish_and_clear();
    println!(
        "   {:>5} {:>8} {:>7} {:>6} {:>10} {:>9} {:>9} {:>8} {:>10}",
        "verb", "size", "dir", "count", "cycles", "Gb/s", "ceiling", "of ceil", "cycles/s"
    );
    for (dir, r) in &runs {
        println!(
            "   {:>5} {:>8} {:>7} {:>6} {:>10} {:>9.3} {:>9.3} {:>7.1}% {:>10.0}",
            match r.opcode {
                WrOpcode::Send => "SEND",
                WrOpcode::RdmaRead => "READ",
                _ => "WRITE",
            },
            human(r.size),
            dir.name(),
            r.count,
            r.cycles,
            r.gbps(),
            r.ceiling_gbps(),
            100.0 * r.of_ceiling(),
            r.cycles_per_s()
        );
    }
    let bytes: u64 = runs.iter().map(|(_, r)| r.bytes()).sum();
    println!("   {bytes} bytes written, sent or read, every one equal to its source, every guard byte untouched, every completion on both sides exact");
    // Atomics: FETCH_AND_ADD and CMP_AND_SWP in turn on a word of the peer's memory.
    for (k, (dir, qp)) in [(Direction::AToB, &mut qa), (Direction::BToA, &mut qb)]
        .into_iter()
        .enumerate()
    {
        let at = atomic_stream(&mut w, dir, qp, ATOMICS, seed ^ (0xA7 + k as u64), |_| ())
            .with_context(|| format!("{ATOMICS} atomics {}", dir.name()))?;
        println!(
            "   {:>5} {:>8} {:>7} {:>6} {:>10}   {:.0} cycles each = {:.2} M atomics/s, every original value and the word's end value checked",
            "ATOM",
            "8 B",
            dir.name(),
            at.count,
            at.cycles,
            at.cycles_per_op(),
            at.mops()
        );
    }
    for h in [&w.a, &w.b] {
        for (c, v) in h.faults()? {
            ensure!(v == 0, "fault counter {c} is {v}");
        }
    }
    let (cycles, wall): (u64, f64) = runs
        .iter()
        .fold((0, 0.0), |(c, s), (_, r)| (c + r.cycles, s + r.wall_s));
    println!(
        "   all {} fault counters of both NICs are zero",
        FAULT_COUNTERS.len()
    );
    println!(
        "5. Simulation speed: {:.0} cycles/s (two whole NICs, root complexes and links)",
        cycles as f64 / wall
    );
    println!(
        "6. Lossless Ethernet: a second world whose receiver's host takes memory writes at \
         5 Gb/s (half the link), PFC on priority 0 (traffic::LOSSLESS_PFC)"
    );
    lossless(seed)?;
    println!(
        "7. A lossy link: a third world whose links lose 1% of frames each way, corrupt 0.1%, \
         duplicate 0.5% and reorder 1%, no PFC; RC recovers by go-back-N"
    );
    lossy(seed)?;
    let (sab, sba) = (w.ab.stats(), w.ba.stats());
    for l in [&w.ab, &w.ba] {
        if let Some(e) = l.pcap_error() {
            bail!("writing a pcap: {e}");
        }
    }
    drop(w);
    println!("8. pcap (nanosecond timestamps of simulated time):");
    for (path, frames) in [(&pab, sab.frames), (&pba, sba.frames)] {
        println!(
            "   {} ({frames} frames){}",
            path.display(),
            tshark(path, frames)?
        );
    }
    Ok(())
}

/// 24 x 64 KiB WRITEs into a host at half the line rate with PFC: every byte checked, no frame
/// dropped, the MAC statistics read by the drivers through BAR0.
fn lossless(seed: u64) -> Result<()> {
    let cfg = WorldConfig {
        write_gbps: [None, Some(5.0)],
        ..Default::default()
    };
    let mut w = World::open(&cfg)?;
    w.a.dev.set_pfc(&LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&LOSSLESS_PFC)?;
    let (mut qa, _qb) = w.connect(4096, 1, 2, 64)?;
    let r = write_stream(
        &mut w,
        Direction::AToB,
        &mut qa,
        4096,
        64 << 10,
        24,
        seed,
        |_| (),
    )
    .context("lossless WRITE stream")?;
    let (sa, sb) = (w.a.dev.mac_stats()?, w.b.dev.mac_stats()?);
    ensure!(sb.rx_overflow == 0, "the receiver dropped frames");
    println!(
        "   24 x 64 KiB a -> b: {:.3} Gb/s into the 5 Gb/s host, every byte checked, receive \
         drops {}",
        r.gbps(),
        sb.rx_overflow
    );
    println!(
        "   MAC_STATS over BAR0: b sent {} XOFF and {} XON for priority 0; a received {} PFC \
         frames and was paused {} cycles ({:.0}% of the run)",
        sb.xoff_tx[0],
        sb.xon_tx[0],
        sa.pfc_rx[0],
        sa.paused_cycles[0],
        100.0 * f64::from(sa.paused_cycles[0]) / r.cycles as f64
    );
    Ok(())
}

/// 24 x 64 KiB WRITEs over links that lose, corrupt, duplicate and reorder frames: every
/// byte and completion checked (each WRITE completes once, in order), the retries read by the
/// drivers from BAR0's RC_STATS block.
fn lossy(seed: u64) -> Result<()> {
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed,
    };
    let faults = RandomFaults {
        loss: 0.01,
        corrupt: 0.001,
        duplicate: 0.005,
        reorder: 0.01,
        seed,
        ..Default::default()
    };
    let r = bench
        .run_lossy_writes(64 << 10, 24, faults, 4, |_| ())
        .context("lossy WRITE stream")?;
    let (sa, sb) = (&r.stats[0], &r.stats[1]);
    ensure!(
        sa.retry_exc == 0 && sb.retry_exc == 0,
        "a QP ran out of retries"
    );
    let l = &r.links;
    println!(
        "   24 x 64 KiB a -> b: {:.3} Gb/s, every byte checked, each WRITE completed once; the \
         links lost {} and {} frames, corrupted {} and {}, duplicated {} and {}",
        r.run.gbps(),
        l[0].dropped,
        l[1].dropped,
        l[0].corrupted,
        l[1].corrupted,
        l[0].duplicated,
        l[1].duplicated
    );
    println!(
        "   RC_STATS over BAR0: a sent {} packets again after {} ACK timeouts and {} sequence \
         NAKs (b decided {}); b took {} duplicates; no QP ran out of retries",
        sa.retrans, sa.timeouts, sa.seq_nak_rx, sb.seq_nak_tx, sb.dup_rx
    );
    Ok(())
}

/// What tshark makes of a pcap: every frame must dissect as InfiniBand BTH on UDP 4791.
fn tshark(path: &Path, frames: u64) -> Result<String> {
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(["-d", "udp.port==4791,infiniband", "-T", "fields"])
        .args(["-e", "infiniband.bth.opcode", "-e", "eth.type"])
        .output();
    let Ok(out) = out else {
        return Ok(String::from(" (no tshark here to dissect it)"));
    };
    ensure!(out.status.success(), "tshark failed on {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout);
    // Each frame is RoCEv2 (a BTH) or MAC control (PFC, EtherType 0x8808).
    let (mut bth, mut pfc) = (0u64, 0u64);
    for l in text.lines() {
        let mut f = l.split('\t');
        let (op, ty) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        if !op.trim().is_empty() {
            bth += 1;
        } else if ty.trim() == "0x8808" {
            pfc += 1;
        }
    }
    ensure!(
        bth + pfc == frames,
        "tshark finds a BTH in {bth} and PFC in {pfc} of the {frames} frames of {}",
        path.display()
    );
    Ok(format!(
        ": tshark dissects {bth} frames as RoCEv2 (BTH on UDP 4791), {pfc} as PFC"
    ))
}

fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}
