//! CRC-32 tap on the Verilator model, against the `crc` crate (an outside reference).

use anyhow::{Context, Result};
use ferroce_sim::designs::open_tb;
use ferroce_sim::{AxisSink, AxisSource, BuildOptions, PauseGenerator, Tb};
use ferroce_tests::{beat, drain, full_keep, rng, seed, soak};
use rand::Rng;

const WIDTHS: [&str; 2] = ["ferroce_crc32_64", "ferroce_crc32_512"];

fn reference(data: &[u8]) -> u32 {
    crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(data)
}

/// Run every queued frame through and collect (crc, tuser) results.
fn collect(tb: &mut Tb, n: usize, budget: u64) -> Result<Vec<(u32, u64)>> {
    Ok(ferroce_tests::collect(tb, "m_crc", n, budget)?
        .into_iter()
        .map(|(d, u)| (d as u32, u))
        .collect())
}

#[test]
fn check_value_at_both_widths() -> Result<()> {
    for name in WIDTHS {
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let src = AxisSource::new(&mut tb, "s_axis")?;
        src.borrow_mut().send(b"123456789".to_vec());
        let got = collect(&mut tb, 1, 100)?;
        assert_eq!(got, vec![(0xCBF4_3926, 0)], "{name}");
    }
    Ok(())
}

#[test]
fn random_frames_match_reference() -> Result<()> {
    let seed = seed("random_frames_match_reference");
    for (w, name) in WIDTHS.iter().enumerate() {
        let mut r = rng(seed + w as u64);
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let src = AxisSource::new(&mut tb, "s_axis")?;
        // Idle and back-pressure from none to heavy, chosen per run.
        let idle = [0.0, 0.1, 0.5][r.gen_range(0..3)];
        let stall = [0.0, 0.1, 0.5][r.gen_range(0..3)];
        println!("{name}: idle {idle}, back-pressure {stall}");
        src.borrow_mut()
            .set_pause_generator(PauseGenerator::random(r.gen(), idle));
        src.borrow_mut()
            .set_backpressure_generator(PauseGenerator::random(r.gen(), stall));
        let n = soak(10_000);
        let mut expect = Vec::with_capacity(n);
        let mut bytes = 0u64;
        for i in 0..n {
            // Every length near a beat boundary early on, then 1..=9000 at random.
            let len = if i < 200 {
                1 + i
            } else {
                r.gen_range(1..=9000)
            };
            let frame: Vec<u8> = (0..len).map(|_| r.gen()).collect();
            expect.push((reference(&frame), 0u64));
            bytes += len as u64;
            src.borrow_mut().send(frame);
        }
        let got = collect(&mut tb, n, 20 * bytes + 10_000).context(*name)?;
        for (i, (g, e)) in got.iter().zip(&expect).enumerate() {
            assert_eq!(
                g, e,
                "{name} frame {i}: got {:#010x}, want {:#010x}",
                g.0, e.0
            );
        }
        println!("{name}: {n} frames, {bytes} bytes, {} cycles", tb.cycle());
    }
    Ok(())
}

#[test]
fn bad_keep_is_flagged_and_the_next_frame_is_clean() -> Result<()> {
    for name in WIDTHS {
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let lanes = tb.model_ref().port("s_axis_tkeep")?.width;
        let full = full_keep(lanes);
        let data: Vec<u8> = (0..lanes as u8).collect();
        let mon = AxisSink::monitor(&mut tb, "m_crc")?;
        // Gap in the last beat's keep.
        beat(&mut tb, &data, 0b101, true)?;
        // Partial keep on a beat that is not the last.
        beat(&mut tb, &data, 0b1, false)?;
        beat(&mut tb, &data, full, true)?;
        // A good two-beat frame, and one ending in an empty beat (keep 0: no bytes).
        beat(&mut tb, &data, full, false)?;
        beat(&mut tb, &data, 0b111, true)?;
        beat(&mut tb, &data, full, false)?;
        beat(&mut tb, &data, 0, true)?;
        tb.clock_cycles(4)?;
        let got = drain(&mon);
        assert_eq!(got.len(), 4, "{name}: one result per frame");
        assert_eq!(got[0].1, 1, "{name}: gap in last keep not flagged");
        assert_eq!(got[1].1, 1, "{name}: partial middle keep not flagged");
        let mut two = data.clone();
        two.extend_from_slice(&data[..3]);
        assert_eq!(
            got[2],
            (reference(&two), 0),
            "{name}: good frame after errors"
        );
        assert_eq!(got[3], (reference(&data), 0), "{name}: empty last beat");
    }
    Ok(())
}

#[test]
fn back_to_back_single_beat_frames() -> Result<()> {
    // One frame per clock, no idle: the core must not need a bubble between frames.
    for name in WIDTHS {
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let lanes = tb.model_ref().port("s_axis_tkeep")?.width;
        let src = AxisSource::new(&mut tb, "s_axis")?;
        let frames: Vec<Vec<u8>> = (1..=lanes).map(|n| vec![n as u8; n]).collect();
        for f in &frames {
            src.borrow_mut().send(f.clone());
        }
        let start = tb.cycle();
        let got = collect(&mut tb, lanes, 10 * lanes as u64)?;
        // lanes frames + 2 cycles latency + 1 cycle for the source's first drive.
        assert!(
            tb.cycle() - start <= lanes as u64 + 3 + 4,
            "{name}: bubbles between frames"
        );
        for (g, f) in got.iter().zip(&frames) {
            assert_eq!(*g, (reference(f), 0), "{name}: {} byte frame", f.len());
        }
    }
    Ok(())
}
