//! `ferroce perf`: benchmark figures for the README. Nothing here asserts a speed; it
//! measures and prints.
//!
//! - Throughput: frames sent back to back at full rate (no idle, no back-pressure); the
//!   fraction of cycles that carried a beat, against a ceiling of one beat per clock.
//! - Simulation speed: Verilator cycles per wall-clock second through the Rust harness, and
//!   through the Python harness (`python -m ferroce.bench` in `.venv`, one `await RisingEdge`
//!   per cycle) when `.ci/setup` has built it.
//! - Resources: Yosys `synth_xilinx` and `synth_ice40`, flattened.
//! - The whole NIC ([`nic`]): RDMA WRITE goodput between two simulated NICs against the
//!   RoCEv2 goodput ceiling at 10 Gb/s, the latency of a 64-byte WRITE, simulation speed.

use crate::axis::AxisSource;
use crate::build::BuildOptions;
use crate::designs::{emit_to, open_tb, verilog_dir};
use crate::roce::RoceFrame;
use crate::synth::{synth, Target};
use crate::traffic::{Bench, SIZES};
use anyhow::{ensure, Context, Result};
use ferroce_hdl::designs::DESIGNS;
use ferroce_spec::icrc::{IcrcLayout, IpVersion};
use ferroce_spec::opcodes::opcode;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

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

/// Cycles/s per design through the Python harness, if `.venv` has it.
fn python_speeds() -> std::collections::HashMap<String, f64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(root.join(".venv/bin/python"))
        .args(["-m", "ferroce.bench"])
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
        _ => {
            eprintln!("perf: no Python harness in .venv (run `bash .ci/setup`); skipping it");
            Default::default()
        }
    }
}

/// RDMA WRITE goodput, latency and simulation speed of two `ferroce_nic_64` (see
/// [`crate::traffic::Bench`]); prints a Markdown table.
pub fn nic() -> Result<()> {
    let bench = Bench {
        pmtu: 4096,
        reorder_seed: None,
        seed: 7,
    };
    let total: u64 = SIZES.iter().map(|(s, n)| (s * n) as u64).sum();
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("[{bar:40}] {bytes}/{total_bytes}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let done: Vec<u64> = SIZES.iter().map(|(s, n)| (s * n) as u64).collect();
    let r = bench.run(&SIZES, |k, b| {
        bar.set_position(done[..k].iter().sum::<u64>() + b)
    })?;
    bar.finish_and_clear();
    println!("RDMA WRITE host a -> host b, one RC QP, path MTU 4096, 10 Gb/s link, PCIe reads 500 ns (completions in order)");
    println!();
    println!("| WRITE size | WRITEs | simulated cycles | Gb/s | RoCEv2 goodput ceiling, Gb/s | of ceiling | Verilator cycles/s (2 NICs) |");
    println!("|---|---|---|---|---|---|---|");
    for w in &r.runs {
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.1}% | {:.0} k |",
            w.size,
            w.count,
            w.cycles,
            w.gbps(),
            w.ceiling_gbps(),
            100.0 * w.of_ceiling(),
            w.cycles_per_s() / 1e3
        );
    }
    println!();
    println!(
        "64-byte WRITE, doorbell to completion seen by poll_cq: {} cycles = {:.0} ns",
        r.latency_64,
        (r.latency_64 * r.period_ps) as f64 / 1000.0
    );
    Ok(())
}

pub fn run(with_synth: bool, taps: bool, nic_traffic: bool) -> Result<()> {
    if nic_traffic {
        nic()?;
        println!();
    }
    if taps {
        self::taps()?;
    }
    if with_synth {
        synth_table()?;
    }
    Ok(())
}

fn taps() -> Result<()> {
    let py = python_speeds();
    println!("| design | frame bytes | beats/cycle (ceiling 1.0) | latency, last beat to result | Verilator cycles/s, Rust harness | Python harness |");
    println!("|---|---|---|---|---|---|");
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
            println!(
                "| {} | {len} | {:.3} | {latency} cycles | {:.2} M | {py} |",
                d.name,
                beats as f64 / cycles as f64,
                cycles as f64 / secs / 1e6
            );
        }
    }
    Ok(())
}

fn synth_table() -> Result<()> {
    {
        println!();
        println!("| design | synth_xilinx LUT | FF | MUXF7/8 | RAMB18/36 | synth_ice40 SB_LUT4 | SB_DFF* | SB_RAM40_4K |");
        println!("|---|---|---|---|---|---|---|---|");
        let scratch = verilog_dir().join("synth");
        for d in DESIGNS {
            let files = emit_to(d.name, &verilog_dir())?;
            let x = synth(d.name, &files, Target::Xilinx, &scratch)?
                .map_err(anyhow::Error::msg)
                .context("yosys synth_xilinx")?;
            let i = synth(d.name, &files, Target::Ice40, &scratch)?
                .map_err(anyhow::Error::msg)
                .context("yosys synth_ice40")?;
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
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
    }
    Ok(())
}
