//! `ferroce perf`: benchmark figures for the README. Nothing here asserts a speed; it
//! measures and prints.
//!
//! - Throughput: frames sent back to back at full rate (no idle, no back-pressure); the
//!   fraction of cycles that carried a beat, against a ceiling of one beat per clock.
//! - Simulation speed: Verilator cycles per wall-clock second through the Rust harness.
//! - Resources: Yosys `synth_xilinx` and `synth_ice40`, flattened.

use crate::axis::AxisSource;
use crate::build::BuildOptions;
use crate::designs::{emit_to, open_tb, verilog_dir};
use crate::synth::{synth, Target};
use anyhow::{ensure, Context, Result};
use ferroce_hdl::designs::DESIGNS;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

pub fn run(with_synth: bool) -> Result<()> {
    println!("| design | frame bytes | beats/cycle (ceiling 1.0) | latency, last beat to CRC | Verilator cycles/s (Rust harness) |");
    println!("|---|---|---|---|---|");
    for d in DESIGNS {
        for len in [64usize, 1500, 9000] {
            let mut tb = open_tb(d.name, &BuildOptions::default())?;
            let src = AxisSource::new(&mut tb, "s_axis")?;
            let lanes = d.config.data_width() / 8;
            let mut r = ChaCha8Rng::seed_from_u64(7);
            let frames = (4_000_000 / len).max(200);
            for _ in 0..frames {
                src.borrow_mut()
                    .send((0..len).map(|_| r.gen()).collect::<Vec<u8>>());
            }
            let valid = tb.model_ref().port("m_crc_tvalid")?;
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
            let beats_per_frame = len.div_ceil(lanes) as u64;
            // The source presents its first beat before edge 1, so the first frame's last beat
            // is taken at edge `beats_per_frame`; latency counts edges from there to the
            // edge after which the result is valid.
            let latency = first_result.unwrap_or(0).saturating_sub(beats_per_frame);
            println!(
                "| {} | {len} | {:.3} | {latency} cycles | {:.2} M |",
                d.name,
                beats as f64 / cycles as f64,
                cycles as f64 / secs / 1e6
            );
        }
    }
    if with_synth {
        println!();
        println!("| design | synth_xilinx LUT | FF | MUXF7/8 | synth_ice40 SB_LUT4 | SB_DFF* |");
        println!("|---|---|---|---|---|---|");
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
                "| {} | {} | {} | {} | {} | {} |",
                d.name,
                x.luts(),
                x.ffs(),
                x.muxf(),
                i.luts(),
                i.ffs()
            );
        }
    }
    Ok(())
}
