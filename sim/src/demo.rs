//! `ferroce demo`: emit the Verilog, lint it, build the Verilator models and run random frames
//! through them, checking every result against a reference (the `crc` crate for the CRC-32,
//! `spec`'s ICRC for RoCEv2 frames), and print what happened.

use crate::axis::AxisSource;
use crate::build::BuildOptions;
use crate::designs::{emit_to, open_tb};
use crate::pause::PauseGenerator;
use crate::roce::RoceFrame;
use anyhow::{bail, ensure, Context, Result};
use ferroce_hdl::designs::DESIGNS;
use ferroce_spec::icrc::icrc;
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
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let work: Vec<(Vec<u8>, u64, u64)> = (0..frames)
        .map(|_| {
            let len = rng.gen_range(1..=1500);
            let f: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let c = u64::from(crc.checksum(&f));
            (f, c, 0)
        })
        .collect();
    for name in ["ferroce_crc32_64", "ferroce_crc32_512"] {
        stream(name, "m_crc", &work, seed, "crc crate")?;
    }
    println!("3. RoCEv2 ICRC tap under Verilator: {frames} frames per width (VLAN or not, IPv4/IPv6, every opcode)");
    let mut work = Vec::with_capacity(frames);
    for _ in 0..frames {
        let f = RoceFrame::random(&mut rng, 1024).build();
        let c = icrc(&f).context("a generated frame has no ICRC")?;
        work.push((f, u64::from(c), 0));
    }
    for name in ["ferroce_icrc_64", "ferroce_icrc_512"] {
        stream(name, "m_icrc", &work, seed, "spec reference")?;
    }
    println!("all results match the reference");
    Ok(())
}

/// Stream `work` (frame, expected tdata, expected tuser) through tap design `name` with random
/// idle and back-pressure, check every result on `<out>_t*`, and print the speed.
fn stream(
    name: &str,
    out: &str,
    work: &[(Vec<u8>, u64, u64)],
    seed: u64,
    reference: &str,
) -> Result<()> {
    let built = Instant::now();
    let mut tb = open_tb(name, &BuildOptions::default())
        .with_context(|| format!("building the Verilator model of {name}"))?;
    let build_s = built.elapsed().as_secs_f64();
    let src = AxisSource::new(&mut tb, "s_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(seed, 0.2));
    src.borrow_mut()
        .set_backpressure_generator(PauseGenerator::random(seed + 1, 0.2));
    let bytes: usize = work.iter().map(|w| w.0.len()).sum();
    for (f, _, _) in work {
        src.borrow_mut().send(f.clone());
    }
    let frames = work.len();
    let bar = ProgressBar::new(frames as u64).with_style(
        ProgressStyle::with_template("   {prefix:<20} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(name.to_string());
    let mut got = Vec::with_capacity(frames);
    let t0 = Instant::now();
    let c0 = tb.cycle();
    let port = |s: &str| tb.model_ref().port(&format!("{out}_{s}"));
    let (data, valid, user) = (port("tdata")?, port("tvalid")?, port("tuser")?);
    while got.len() < frames {
        tb.rising_edge()?;
        if tb.model_ref().get(valid) != 0 {
            got.push((tb.model_ref().get(data), tb.model_ref().get(user)));
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
    let bad = got
        .iter()
        .zip(work)
        .filter(|(g, w)| **g != (w.1, w.2))
        .count();
    println!(
        "   {name:<20} {frames} frames, {bytes} bytes: {bad} mismatches vs {reference}; {cycles} cycles in {secs:.2} s = {:.0} cycles/s (model build {build_s:.1} s)",
        cycles as f64 / secs
    );
    ensure!(bad == 0, "{name}: {bad} mismatches");
    Ok(())
}
