//! `ferroce demo`: emit the Verilog, lint it, build the Verilator models and run random frames
//! through them, checking every result against the `crc` crate, and print what happened.

use crate::axis::AxisSource;
use crate::build::BuildOptions;
use crate::designs::{emit_to, open_tb};
use crate::pause::PauseGenerator;
use anyhow::{bail, ensure, Context, Result};
use ferroce_hdl::designs::DESIGNS;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::time::Instant;

pub fn run(frames: usize, seed: u64) -> Result<()> {
    let out = Path::new("out/verilog");
    println!("ferroce demo (seed {seed})");
    println!("1. Verilog -> {}", out.display());
    for d in DESIGNS {
        let files = emit_to(d.name, out).with_context(|| format!("emitting {}", d.name))?;
        if let Err(diag) = crate::synth::lint(d.name, &files)? {
            bail!("lint of {} failed:\n{diag}", d.name);
        }
        println!(
            "   {:<20} {:>3} modules, verilator -Wall clean",
            d.name,
            files.len()
        );
    }
    println!("2. CRC-32 tap under Verilator: {frames} random frames per width, random idle and back-pressure");
    let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    for name in ["ferroce_crc32_64", "ferroce_crc32_512"] {
        let built = Instant::now();
        let mut tb = open_tb(name, &BuildOptions::default())
            .with_context(|| format!("building the Verilator model of {name}"))?;
        let build_s = built.elapsed().as_secs_f64();
        let src = AxisSource::new(&mut tb, "s_axis")?;
        src.borrow_mut()
            .set_pause_generator(PauseGenerator::random(seed, 0.2));
        src.borrow_mut()
            .set_backpressure_generator(PauseGenerator::random(seed + 1, 0.2));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut expect = Vec::with_capacity(frames);
        let mut bytes = 0usize;
        for _ in 0..frames {
            let len = rng.gen_range(1..=1500);
            let f: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            expect.push(crc.checksum(&f));
            bytes += len;
            src.borrow_mut().send(f);
        }
        let bar = ProgressBar::new(frames as u64).with_style(
            ProgressStyle::with_template("   {prefix:<20} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(name);
        let mut got = Vec::with_capacity(frames);
        let t0 = Instant::now();
        let c0 = tb.cycle();
        let (data, valid) = (
            tb.model_ref().port("m_crc_tdata")?,
            tb.model_ref().port("m_crc_tvalid")?,
        );
        while got.len() < frames {
            tb.rising_edge()?;
            if tb.model_ref().get(valid) != 0 {
                got.push(tb.model_ref().get(data) as u32);
                bar.inc(1);
            }
            ensure!(
                tb.cycle() - c0 < 100 * bytes as u64 + 1000,
                "{name} stopped producing results"
            );
        }
        bar.finish_and_clear();
        let cycles = tb.cycle() - c0;
        let secs = t0.elapsed().as_secs_f64();
        let bad = got.iter().zip(&expect).filter(|(a, b)| a != b).count();
        println!(
            "   {name:<20} {frames} frames, {bytes} bytes: {} mismatches vs crc crate; {cycles} cycles in {secs:.2} s = {:.0} cycles/s (model build {build_s:.1} s)",
            bad,
            cycles as f64 / secs
        );
        ensure!(bad == 0, "{name}: {bad} CRC mismatches");
    }
    println!("all results match the reference");
    Ok(())
}
