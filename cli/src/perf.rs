//! `ferroce perf`: the benchmark figures of `docs/performance.md` and the README. Nothing here
//! asserts a speed; it measures and prints Markdown tables (`--write PAGE` also writes them
//! to a page, keeping the sections of the parts skipped: [`page`]) and draws goodput against
//! message size for each verb ([`plot`], SVG, beside the page or in `out/perf/`).
//!
//! - Throughput: frames sent back to back at full rate (no idle, no back-pressure); the
//!   fraction of cycles that carried a beat, against a ceiling of one beat per clock.
//! - Simulation speed: Verilator cycles per wall-clock second through the Rust harness, and
//!   through the Python harness (`python -m ferroce.bench` in `.venv`, one `await RisingEdge`
//!   per cycle) when `.ci/setup` has built it.
//! - Resources: Yosys `synth_xilinx` and `synth_ice40`, flattened, of every design: the
//!   blocks the test suite gates and the assemblies (whole MACs, whole NICs) only perf
//!   synthesizes. Results come from the cache when the Verilog is unchanged.
//! - The whole NIC ([`nic`]): RDMA WRITE goodput between two simulated NICs against the
//!   RoCEv2 goodput ceiling at 10 Gb/s, the latency of a 64-byte WRITE, simulation speed.

use anyhow::{ensure, Context, Result};
use ferroce_driver::WrOpcode;
use ferroce_fpga::synth::{synth, Resources, Target};
use ferroce_hdl::designs::{Scope, DESIGNS};
use ferroce_sim::axis::AxisSource;
use ferroce_sim::bench::Bench;
use ferroce_sim::build::BuildOptions;
use ferroce_sim::designs::{emit_to, open_tb, verilog_dir};
use ferroce_sim::roce::RoceFrame;
use ferroce_sim::traffic::SIZES;
use ferroce_spec::icrc::{IcrcLayout, IpVersion};
use ferroce_spec::opcodes::opcode;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

mod page;
mod plot;

use page::{LOSSY_NOTE, MAC_NOTE, NIC_NOTE, SYNTH_NOTE, TAPS_NOTE};

/// Atomics the benchmark runs on one QP.
const ATOMICS: usize = 2000;

/// A frame of exactly `len` bytes for the design's tap: random bytes for the CRC-32, a RoCEv2
/// SEND (IPv4, no VLAN) for the ICRC.
fn frame(icrc: bool, len: usize, r: &mut ChaCha8Rng) -> Result<Vec<u8>> {
    if !icrc {
        return Ok((0..len).map(|_| r.gen()).collect());
    }
    // Ethernet, IPv4, UDP, BTH, ICRC; the payload is padded to 4 bytes.
    let headers = 14 + 20 + 8 + 12 + 4;
    Ok(RoceFrame {
        layout: IcrcLayout {
            vlan: false,
            ip: IpVersion::V4,
        },
        opcode: opcode(0x04).context("RC SEND ONLY in the opcode table")?,
        payload_len: len.saturating_sub(headers) / 4 * 4,
        trailer: 0,
        seed: r.gen(),
    }
    .build())
}

/// Cycles/s of the CRC-32 and ICRC taps through the Python harness, if `.venv` has it.
fn python_speeds() -> std::collections::HashMap<String, f64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let taps = DESIGNS
        .iter()
        .filter(|d| d.name.contains("crc"))
        .map(|d| d.name);
    let out = Command::new(root.join(".venv/bin/python"))
        .args(["-m", "ferroce.bench"])
        .args(taps)
        .current_dir(&root)
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                let (d, v) = l.split_once(' ')?;
                Some((d.to_string(), v.trim().parse().ok()?))
            })
            .collect(),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            eprintln!(
                "perf: the Python harness's benchmark failed, skipping it: {}",
                err.lines().last().unwrap_or("")
            );
            Default::default()
        }
        Err(_) => {
            eprintln!("perf: no Python harness in .venv (run `bash .ci/setup`); skipping it");
            Default::default()
        }
    }
}

/// Where the plots go (`dir`) and how the page's links name that directory (`link`).
pub struct Plots {
    pub dir: PathBuf,
    pub link: String,
}

impl Plots {
    /// Beside `page` (its directory's `perf/`), or `out/perf/` without a page.
    pub fn for_page(page: Option<&Path>) -> Plots {
        match page {
            Some(p) => Plots {
                dir: p.parent().unwrap_or(Path::new(".")).join("perf"),
                link: "perf/".into(),
            },
            None => Plots {
                dir: PathBuf::from("out/perf"),
                link: "out/perf/".into(),
            },
        }
    }
}

/// RDMA WRITE, SEND and READ goodput, latency, the atomic rate and simulation speed of two
/// `ferroce_nic_64` (see [`ferroce_sim::bench::Bench`]); prints a Markdown table and draws
/// each verb's goodput against message size into `plots`.
pub fn nic(plots: &Plots) -> Result<String> {
    let mut out = String::new();
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 7,
    };
    let total: u64 = SIZES.iter().map(|(s, n)| (s * n) as u64).sum();
    // WRITEs, then SENDs, then READs.
    let bar = ProgressBar::new(3 * total).with_style(
        ProgressStyle::with_template("[{bar:40}] {bytes}/{total_bytes}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let done: Vec<u64> = SIZES.iter().map(|(s, n)| (s * n) as u64).collect();
    let r = bench.run(&SIZES, |k, b| {
        bar.set_position(done[..k].iter().sum::<u64>() + b)
    })?;
    let s = bench.run_sends(&SIZES, |k, b| {
        bar.set_position(total + done[..k].iter().sum::<u64>() + b)
    })?;
    let rd = bench.run_reads(&SIZES, |k, b| {
        bar.set_position(2 * total + done[..k].iter().sum::<u64>() + b)
    })?;
    bar.finish_and_clear();
    let _ = writeln!(out, "| verb | size (bytes) | messages | simulated cycles | Gb/s | RoCEv2 goodput ceiling, Gb/s | of ceiling | Verilator cycles/s (2 NICs) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for w in r.runs.iter().chain(&s.runs).chain(&rd.runs) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.1}% | {:.0} k |",
            match w.opcode {
                WrOpcode::Send => "SEND",
                WrOpcode::RdmaRead => "READ",
                _ => "WRITE",
            },
            w.size,
            w.count,
            w.cycles,
            w.gbps(),
            w.ceiling_gbps(),
            100.0 * w.of_ceiling(),
            w.cycles_per_s() / 1e3
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "64-byte WRITE, doorbell to completion seen by poll_cq: {} cycles = {:.0} ns",
        r.latency_64,
        (r.latency_64 * r.period_ps) as f64 / 1000.0
    );
    let at = bench.run_atomics(ATOMICS, |_| ())?;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Atomics (FETCH_AND_ADD and CMP_AND_SWP in turn, one QP, send queue full): {} in {} \
         cycles, {:.0} cycles each = {:.2} M atomics/s",
        at.count,
        at.cycles,
        at.cycles_per_op(),
        at.mops()
    );
    std::fs::create_dir_all(&plots.dir)
        .with_context(|| format!("creating {}", plots.dir.display()))?;
    let _ = write!(out, "\nGoodput against message size, the ceiling drawn:");
    for (verb, file, runs) in [
        ("RDMA WRITE", "goodput-write.svg", &r.runs),
        ("SEND", "goodput-send.svg", &s.runs),
        ("RDMA READ", "goodput-read.svg", &rd.runs),
    ] {
        let title = format!("{verb} goodput, two ferroce NICs, 10 Gb/s, path MTU 4096");
        plot::goodput(&plots.dir.join(file), &title, runs)?;
        let _ = write!(out, " [{verb}]({}{file})", plots.link);
    }
    let _ = writeln!(out);
    Ok(out)
}

/// The 100G MAC (`ferroce_mac_512`) at full rate: RoCEv2 frames back to back into its transmit
/// face, its wire face looped back into its receive face through one register (`tx_axis_tready`
/// high: a hard MAC that always takes), the received frames out with `m_axis_tready` high.
/// Prints beats per clock on the wire (ceiling 1.0), frames out of MAC receive per frame in
/// (1.0: it keeps up), and the frame rate at 250 MHz against the 100 Gb/s line's (20 bytes of
/// preamble and gap per frame).
pub fn mac() -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(out, "| frame on the wire (bytes, FCS included) | beats per frame | frames | transmit beats/cycle (ceiling 1.0) | receive: frames out per frame in | frame rate / 100 Gb/s line rate | Verilator cycles/s |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let mut r = ChaCha8Rng::seed_from_u64(7);
    for want in [64usize, 66, 512, 1500, 9000] {
        let mut tb = open_tb("ferroce_mac_512", &BuildOptions::default())?;
        for (p, v) in [
            ("tx_axis_tready", 1),
            ("m_axis_tready", 1),
            ("xoff_bytes", 0xffff),
            ("xon_bytes", 0xffff),
        ] {
            tb.set(p, v)?;
        }
        let src = AxisSource::new(&mut tb, "s_axis")?;
        // RoCEv2 SENDs: 58 bytes of headers and ICRC, a payload of whole words, padding to 60.
        let f = RoceFrame {
            layout: IcrcLayout {
                vlan: false,
                ip: IpVersion::V4,
            },
            opcode: opcode(0x04).context("RC SEND ONLY in the opcode table")?,
            payload_len: want.saturating_sub(4 + 58) / 4 * 4,
            trailer: 0,
            seed: r.gen(),
        }
        .build();
        let on_wire = f.len().max(60) + 4;
        let beats = on_wire.div_ceil(64) as u64;
        let n = (40_000 / beats).max(200);
        for _ in 0..n {
            src.borrow_mut().send(f.clone());
        }
        let m = tb.model_ref();
        let tx: Vec<_> = ["tdata", "tkeep", "tlast", "tvalid"]
            .iter()
            .map(|p| m.port(&format!("tx_axis_{p}")))
            .collect::<std::result::Result<_, _>>()?;
        let rx: Vec<_> = ["tdata", "tkeep", "tlast", "tvalid"]
            .iter()
            .map(|p| m.port(&format!("rx_axis_{p}")))
            .collect::<std::result::Result<_, _>>()?;
        let (out_v, out_l) = (m.port("m_axis_tvalid")?, m.port("m_axis_tlast")?);
        let (mut tx_span, mut rx_span) = ((u64::MAX, 0u64), (u64::MAX, 0u64));
        let (mut tx_beats, mut frames) = (0u64, 0u64);
        let (c0, t0) = (tb.cycle(), Instant::now());
        while frames < n {
            if tb.cycle() - c0 >= 4 * n * beats + 10_000 {
                let counts = [
                    "fcs_err", "runt", "too_long", "icrc_err", "bad_len", "overflow",
                ]
                .iter()
                .map(|c| Ok((*c, tb.get(c)?)))
                .collect::<Result<Vec<_>>>()?;
                anyhow::bail!(
                    "{want} bytes: stalled at {frames} frames, {} sent; receive counters {counts:?}",
                    src.borrow().frames_sent()
                );
            }
            tb.rising_edge()?;
            let c = tb.cycle();
            let m = tb.model_ref();
            let (d, k, l, v) = (m.get_bytes(tx[0]), m.get(tx[1]), m.get(tx[2]), m.get(tx[3]));
            if v == 1 {
                tx_beats += 1;
                tx_span = (tx_span.0.min(c), c);
            }
            if m.get(out_v) == 1 {
                rx_span = (rx_span.0.min(c), c);
                frames += m.get(out_l);
            }
            let m = tb.model();
            m.set_bytes(rx[0], &d)?;
            m.set(rx[1], k)?;
            m.set(rx[2], l)?;
            m.set(rx[3], v)?;
        }
        let secs = t0.elapsed().as_secs_f64();
        for c in ["fcs_err", "icrc_err", "overflow", "not_roce", "self_check"] {
            ensure!(tb.get(c)? == 0, "{c} = {} at {want} bytes", tb.get(c)?);
        }
        let rate = |b: u64, span: (u64, u64)| b as f64 / (span.1 + 1 - span.0) as f64;
        let tx_rate = rate(tx_beats, tx_span);
        // Frames per cycle out of receive against frames per cycle into it (the wire's).
        let keeps_up = rate(frames, rx_span) / (tx_rate / beats as f64);
        let mac_fps = 250e6 * tx_rate / beats as f64;
        let line_fps = 100e9 / ((on_wire + 20) * 8) as f64;
        let _ = writeln!(
            out,
            "| {on_wire} | {beats} | {n} | {:.4} | {:.4} | {:.2} | {:.0} k |",
            tx_rate,
            keeps_up,
            mac_fps / line_fps,
            (tb.cycle() - c0) as f64 / secs / 1e3
        );
    }
    Ok(out)
}

/// 64 KiB WRITEs over links losing 0, 0.1% and 1% of their frames each way: goodput against
/// the lossless run's, and what the retries cost (RC_STATS over BAR0); prints a Markdown table.
pub fn lossy() -> Result<String> {
    const SIZE: usize = 64 << 10;
    const COUNT: usize = 256;
    const TIMEOUT: u8 = 4;
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 11,
    };
    let mut out = String::new();
    let _ = writeln!(out, "| loss each way | simulated cycles | Gb/s | of the lossless run | packets sent again | ACK timeouts | sequence NAKs (a received) | frames lost (a to b, b to a) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    let mut base = None;
    for loss in [0.0, 0.001, 0.01] {
        let bar = ProgressBar::new((SIZE * COUNT) as u64).with_style(
            ProgressStyle::with_template("[{bar:40}] {bytes}/{total_bytes}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let faults = ferroce_sim::RandomFaults {
            loss,
            seed: 0x1055 + (loss * 1e4) as u64,
            ..Default::default()
        };
        let r = bench
            .run_lossy_writes(SIZE, COUNT, faults, TIMEOUT, |b| bar.set_position(b))
            .with_context(|| format!("{COUNT} x 64 KiB WRITEs at {loss} loss"))?;
        bar.finish_and_clear();
        let g = r.run.gbps();
        let b = *base.get_or_insert(g);
        let _ = writeln!(
            out,
            "| {:.1}% | {} | {:.3} | {:.1}% | {} | {} | {} | {}, {} |",
            100.0 * loss,
            r.run.cycles,
            g,
            100.0 * g / b,
            r.stats[0].retrans,
            r.stats[0].timeouts,
            r.stats[0].seq_nak_rx,
            r.links[0].dropped,
            r.links[1].dropped
        );
    }
    Ok(out)
}

/// Which parts of the benchmark to run.
#[derive(clap::Args)]
pub struct Args {
    /// Skip Yosys synthesis (several minutes with the whole NIC).
    #[arg(long)]
    no_synth: bool,
    /// Skip the CRC-32/ICRC tap streams.
    #[arg(long)]
    no_taps: bool,
    /// Skip the two-NIC RDMA WRITE and SEND benchmark.
    #[arg(long)]
    no_nic: bool,
    /// Skip the many-QP benchmark (the same WRITEs on 1, 8 and 64 QPs).
    #[arg(long)]
    no_qps: bool,
    /// Skip the 100G MAC benchmark (beats per clock at 64 to 9,000-byte frames).
    #[arg(long)]
    no_mac: bool,
    /// Skip the lossy-link benchmark (64 KiB WRITEs at 0, 0.1% and 1% loss).
    #[arg(long)]
    no_lossy: bool,
    /// Also write the tables to this Markdown page (the repository's is
    /// `docs/performance.md`).
    #[arg(long)]
    write: Option<std::path::PathBuf>,
}

pub fn main(a: Args) -> Result<()> {
    run(
        &Parts {
            synth: !a.no_synth,
            taps: !a.no_taps,
            nic: !a.no_nic,
            qps: !a.no_qps,
            mac: !a.no_mac,
            lossy: !a.no_lossy,
        },
        a.write.as_deref(),
    )
}

pub struct Parts {
    pub nic: bool,
    pub qps: bool,
    pub lossy: bool,
    pub mac: bool,
    pub taps: bool,
    pub synth: bool,
}

/// Run the chosen parts, printing each table as it is measured; with `page`, also write them
/// all to that Markdown file.
pub fn run(parts: &Parts, page: Option<&Path>) -> Result<()> {
    type Section<'a> = (
        bool,
        &'static str,
        &'static str,
        &'a dyn Fn() -> Result<String>,
    );
    let plots = Plots::for_page(page);
    let sections: [Section; 6] = [
        (
            parts.nic,
            "The whole NIC: RDMA WRITE, SEND and READ between two NICs",
            NIC_NOTE,
            &|| nic(&plots),
        ),
        (
            parts.qps,
            "64 QPs: WRITEs spread over many QPs",
            ferroce_sim::many_qps::NOTE,
            &|| Ok(ferroce_sim::many_qps::table()?),
        ),
        (
            parts.lossy,
            "RC over a lossy link: 64 KiB WRITEs",
            LOSSY_NOTE,
            &lossy,
        ),
        (parts.mac, "100G MAC: one beat per clock", MAC_NOTE, &mac),
        (parts.taps, "CRC-32 and ICRC taps", TAPS_NOTE, &taps),
        (
            parts.synth,
            "Resources (Yosys, flattened)",
            SYNTH_NOTE,
            &synth_table,
        ),
    ];
    let mut measured = Vec::new();
    for (on, title, note, f) in sections {
        let table = if on {
            let table = f().with_context(|| format!("measuring: {title}"))?;
            println!("## {title}\n\n{table}");
            Some(table)
        } else {
            None
        };
        measured.push(page::Section { title, note, table });
    }
    if let Some(path) = page {
        let versions = format!(
            "Measured with {}, {} and {} (`ferroce perf`).",
            ferroce_sim::cache::tool_version("verilator", "--version")?,
            ferroce_sim::cache::tool_version("yosys", "-V")?,
            ferroce_sim::cache::tool_version("g++", "--version")?,
        );
        let old = std::fs::read_to_string(path).unwrap_or_default();
        std::fs::write(path, page::compose(&measured, &old, &versions))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn taps() -> Result<String> {
    let mut out = String::new();
    let py = python_speeds();
    let _ = writeln!(out, "| design | frame bytes | beats/cycle (ceiling 1.0) | latency, last beat to result | Verilator cycles/s, Rust harness | Python harness |");
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for d in DESIGNS {
        for len in [64usize, 1500, 9000] {
            let mut tb = open_tb(d.name, &BuildOptions::default())?;
            let m = tb.model_ref();
            if !(m.has_port("m_crc_tvalid") || m.has_port("m_icrc_tvalid")) {
                break; // not a CRC/ICRC tap
            }
            let src = AxisSource::new(&mut tb, "s_axis")?;
            let lanes = d.config.data_width() / 8;
            let icrc = tb.model_ref().has_port("m_icrc_tvalid");
            let mut r = ChaCha8Rng::seed_from_u64(7);
            let frames = (4_000_000 / len).max(200);
            let mut first_len = 0;
            for _ in 0..frames {
                let f = frame(icrc, len, &mut r)?;
                first_len = if first_len == 0 { f.len() } else { first_len };
                src.borrow_mut().send(f);
            }
            let valid = tb.model_ref().port(if icrc {
                "m_icrc_tvalid"
            } else {
                "m_crc_tvalid"
            })?;
            let (mut got, c0, t0) = (0usize, tb.cycle(), Instant::now());
            let mut first_result = None;
            while got < frames {
                tb.rising_edge()?;
                if tb.model_ref().get(valid) != 0 {
                    got += 1;
                    first_result.get_or_insert(tb.cycle() - c0);
                }
                ensure!(tb.cycle() - c0 < 10 * (frames * len) as u64, "stalled");
            }
            let cycles = tb.cycle() - c0;
            let secs = t0.elapsed().as_secs_f64();
            let beats = src.borrow().beats_sent();
            let beats_per_frame = first_len.div_ceil(lanes) as u64;
            // The source presents its first beat before edge 1, so the first frame's last beat
            // is taken at edge `beats_per_frame`; latency counts edges from there to the
            // edge after which the result is valid.
            let latency = first_result.unwrap_or(0).saturating_sub(beats_per_frame);
            let py = py
                .get(d.name)
                .map_or("-".to_string(), |v| format!("{:.2} M", v / 1e6));
            let _ = writeln!(
                out,
                "| {} | {len} | {:.3} | {latency} cycles | {:.2} M | {py} |",
                d.name,
                beats as f64 / cycles as f64,
                cycles as f64 / secs / 1e6
            );
        }
    }
    Ok(out)
}

fn synth_table() -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| design | scope | synth_xilinx LUT | FF | MUXF7/8 | RAMB18/36 | synth_ice40 SB_LUT4 | SB_DFF* | SB_RAM40_4K |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    let files = DESIGNS
        .iter()
        .map(|d| emit_to(d.name, &verilog_dir()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // Every (design, target) pair on its own thread; `cache::job` keeps one Yosys per core.
    let results = std::thread::scope(|s| {
        let jobs: Vec<_> = DESIGNS
            .iter()
            .zip(&files)
            .flat_map(|(d, f)| [Target::Xilinx, Target::Ice40].map(|t| (d, f, t)))
            .map(|(d, f, t)| {
                s.spawn(move || -> Result<Resources> {
                    synth(d.name, f, t)?
                        .map_err(anyhow::Error::msg)
                        .with_context(|| format!("yosys {} on {}", t.command(), d.name))
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| {
                j.join()
                    .map_err(|_| anyhow::anyhow!("a synthesis thread panicked"))?
            })
            .collect::<Result<Vec<_>>>()
    })?;
    for (d, r) in DESIGNS.iter().zip(results.chunks(2)) {
        let (x, i) = (&r[0], &r[1]);
        let scope = match d.scope {
            Scope::Block => "block",
            Scope::Assembly => "assembly",
        };
        let _ = writeln!(
            out,
            "| {} | {scope} | {} | {} | {} | {} | {} | {} | {} |",
            d.name,
            x.luts(),
            x.ffs(),
            x.muxf(),
            x.brams(),
            i.luts(),
            i.ffs(),
            i.brams()
        );
    }
    Ok(out)
}
