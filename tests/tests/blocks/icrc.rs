//! ICRC engine on the Verilator model: against the `spec` reference on etherparse-built frames
//! and on Linux Soft-RoCE captures; masked and unmasked field flips; every bad input flagged.

use anyhow::{Context, Result};
use ferroce_hdl::crc::ICRC_LATENCY;
use ferroce_sim::designs::open_tb;
use ferroce_sim::roce::RoceFrame;
use ferroce_sim::{AxisSink, AxisSource, BuildOptions, PauseGenerator, Tb};
use ferroce_spec::headers::*;
use ferroce_spec::icrc::{carried_icrc, flags, icrc, parse, IcrcLayout, IpVersion};
use ferroce_tests::{beat, collect, drain, full_keep, read_pcap, rng, rxe_frames, seed, soak};
use rand::Rng;
use std::path::PathBuf;

const WIDTHS: [&str; 2] = ["ferroce_icrc_64", "ferroce_icrc_512"];

/// What the engine must report for a frame, from the spec reference: the ICRC and no flag, or
/// MISMATCH when the carried ICRC is wrong, or (for a malformed frame) the flag of the first
/// error the reference finds, which must be among the flags raised.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Good(u32),
    Mismatch(u32),
    Flag(u8),
}

fn expect(frame: &[u8]) -> Expect {
    match carried_icrc(frame).and_then(|carried| Ok((carried, icrc(frame)?))) {
        Ok((carried, computed)) if carried == computed => Expect::Good(computed),
        Ok((_, computed)) => Expect::Mismatch(computed),
        Err(e) => Expect::Flag(e.flag()),
    }
}

fn check(name: &str, i: usize, got: (u64, u64), want: Expect, frame: &[u8]) {
    let (data, user) = (got.0 as u32, got.1 as u8);
    let ok = match want {
        Expect::Good(c) => data == c && user == 0,
        Expect::Mismatch(c) => data == c && user == flags::MISMATCH,
        Expect::Flag(f) => user & f != 0,
    };
    assert!(
        ok,
        "{name} frame {i} ({} B): got icrc {data:#010x} flags {user:#04x}, want {want:x?}\n{frame:02x?}",
        frame.len()
    );
}

/// Stream `frames` through a fresh model at random idle and back-pressure; check each result.
fn run(name: &str, frames: &[Vec<u8>], seed: u64) -> Result<Tb> {
    let mut r = rng(seed);
    let mut tb = open_tb(name, &BuildOptions::default())?;
    let src = AxisSource::new(&mut tb, "s_axis")?;
    let idle = [0.0, 0.1, 0.5][r.gen_range(0..3)];
    let stall = [0.0, 0.1, 0.5][r.gen_range(0..3)];
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(r.gen(), idle));
    src.borrow_mut()
        .set_backpressure_generator(PauseGenerator::random(r.gen(), stall));
    let bytes: usize = frames.iter().map(Vec::len).sum();
    for f in frames {
        src.borrow_mut().send(f.clone());
    }
    let got = collect(&mut tb, "m_icrc", frames.len(), 20 * bytes as u64 + 10_000)
        .with_context(|| format!("{name}: idle {idle}, back-pressure {stall}"))?;
    for (i, (g, f)) in got.into_iter().zip(frames).enumerate() {
        check(name, i, g, expect(f), f);
    }
    println!(
        "{name}: {} frames, {bytes} bytes, idle {idle}, back-pressure {stall}: all match",
        frames.len()
    );
    Ok(tb)
}

#[test]
fn built_frames_match_the_reference() -> Result<()> {
    let seed = seed("built_frames_match_the_reference");
    let mut r = rng(seed);
    let frames: Vec<Vec<u8>> = (0..soak(2000))
        .map(|_| RoceFrame::random(&mut r, 1500).build())
        .collect();
    for layout in IcrcLayout::ALL {
        let n = frames
            .iter()
            .filter(|f| parse(f).map(|p| p.0) == Ok(layout))
            .count();
        assert!(n > 300, "only {n} frames of layout {layout:?}");
    }
    for (w, name) in WIDTHS.iter().enumerate() {
        run(name, &frames, seed + w as u64)?;
    }
    Ok(())
}

#[test]
fn scapy_frames_match_the_reference_and_scapy() -> Result<()> {
    // tests/data/scapy_roce.pcap: 1,200 frames built by scapy (tests/py/scapy_frames.py; a
    // pytest checks the file is what scapy makes). The ICRC each carries is scapy's.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/scapy_roce.pcap");
    let frames = read_pcap(&path)?;
    assert_eq!(frames.len(), 1200);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(
            expect(f),
            Expect::Good(carried_icrc(f)?),
            "frame {i}: spec reference differs from scapy"
        );
    }
    let seed = seed("scapy_frames_match_the_reference_and_scapy");
    for (w, name) in WIDTHS.iter().enumerate() {
        run(name, &frames, seed + w as u64)?;
    }
    Ok(())
}

#[test]
fn soft_roce_captures_pass() -> Result<()> {
    let frames = rxe_frames()?;
    let good = frames
        .iter()
        .filter(|f| matches!(expect(f), Expect::Good(_)))
        .count();
    assert!(good >= 680, "only {good} good RoCE frames in the captures");
    let seed = seed("soft_roce_captures_pass");
    for (w, name) in WIDTHS.iter().enumerate() {
        run(name, &frames, seed + w as u64)?;
    }
    println!("{} frames, {good} of them RoCEv2", frames.len());
    Ok(())
}

/// Offsets and bit masks of every masked bit in a frame.
fn masked(frame: &[u8]) -> Vec<(usize, u8)> {
    parse(frame)
        .map(|(l, _)| l.masked_bytes())
        .unwrap_or_default()
}

#[test]
fn masked_flips_keep_the_icrc_unmasked_flips_change_it() -> Result<()> {
    let seed = seed("masked_flips_keep_the_icrc_unmasked_flips_change_it");
    let mut r = rng(seed);
    let mut frames = Vec::new();
    let mut kinds = Vec::new();
    while frames.len() < 1200 {
        let frame = RoceFrame::random(&mut r, 300).build();
        let Ok((layout, end)) = parse(&frame) else {
            continue;
        };
        let mut f = frame.clone();
        if r.gen_bool(0.5) {
            // A masked bit: TTL/hop limit, TOS/ECN/traffic class/flow label, UDP checksum,
            // FECN/BECN. The carried ICRC stays right.
            let m = masked(&frame);
            let (o, mask) = m[r.gen_range(0..m.len())];
            let bits: Vec<u8> = (0..8).filter(|b| mask >> b & 1 == 1).collect();
            f[o] ^= 1 << bits[r.gen_range(0..bits.len())];
            kinds.push(true);
        } else {
            // An unmasked covered byte that does not change the layout: the ICRC changes.
            let (o, bit) = loop {
                let o = r.gen_range(layout.ip_offset()..end);
                let bit = 1u8 << r.gen_range(0..8);
                let is_masked = masked(&frame)
                    .iter()
                    .any(|&(mo, m)| mo == o && m & bit != 0);
                let mut g = frame.clone();
                g[o] ^= bit;
                if !is_masked && parse(&g) == Ok((layout, end)) {
                    break (o, bit);
                }
            };
            f[o] ^= bit;
            kinds.push(false);
        }
        frames.push(f);
    }
    for (w, name) in WIDTHS.iter().enumerate() {
        // `run` checks against the reference: a masked flip must come out Good, an unmasked one
        // Mismatch. Assert that the reference agrees, so the test cannot pass vacuously.
        for (f, &masked_flip) in frames.iter().zip(&kinds) {
            match expect(f) {
                Expect::Good(_) => assert!(masked_flip, "unmasked flip kept the ICRC"),
                Expect::Mismatch(_) => assert!(!masked_flip, "masked flip changed the ICRC"),
                Expect::Flag(f) => panic!("flip broke the frame (flag {f:#x})"),
            }
        }
        run(name, &frames, seed + w as u64)?;
    }
    Ok(())
}

/// A well-formed frame broken in one way, and the flag it must raise.
fn break_frame(r: &mut impl Rng, frame: &mut Vec<u8>) -> u8 {
    let (layout, end) = parse(frame).expect("built frames parse");
    let ip = layout.ip_offset();
    let set16 = |f: &mut Vec<u8>, o: usize, v: u16| f[o..o + 2].copy_from_slice(&v.to_be_bytes());
    match r.gen_range(0..9) {
        0 => {
            let et = layout.ethertype_offset();
            set16(
                frame,
                et,
                [0x0806, 0x88CC, 0x8100, 0x0000][r.gen_range(0..4)],
            );
            flags::NOT_IP
        }
        1 => {
            frame[ip] = (frame[ip] & 0x0F) | [0x00, 0x50, 0x70, 0xF0][r.gen_range(0..4)];
            flags::NOT_IP
        }
        2 if layout.ip == IpVersion::V4 => {
            frame[ip] = 0x40 | r.gen_range(6..16);
            flags::IP_OPTIONS
        }
        3 => {
            frame[layout.ip_proto_offset()] = [6, 1, 0, 0x11 ^ 0x80][r.gen_range(0..4)];
            flags::NOT_ROCE
        }
        4 => {
            let dport = layout.udp_offset() + UDP_DST_PORT_OFFSET;
            set16(
                frame,
                dport,
                [4790, 4792, 0x12B7 ^ 0x8000, 53][r.gen_range(0..4)],
            );
            flags::NOT_ROCE
        }
        5 => {
            // IP length below the RoCEv2 minimum.
            let min = layout.min_ip_len() - layout.ip_len_bias();
            set16(frame, layout.ip_len_offset(), r.gen_range(0..min) as u16);
            flags::BAD_LENGTH
        }
        6 => {
            // IP length beyond MAX_IP_LEN.
            let bias = layout.ip_len_bias();
            let v = r.gen_range(16385 - bias..=0xFFFF);
            set16(frame, layout.ip_len_offset(), v as u16);
            flags::BAD_LENGTH
        }
        7 => {
            // Cut inside the headers, the payload or the ICRC.
            let cut = r.gen_range(1..end + 4);
            frame.truncate(cut);
            flags::TRUNCATED
        }
        _ => {
            // IP length longer than the frame.
            let ip_len = end + 4 - ip;
            let more = frame.len() - (end + 4) + r.gen_range(1..200);
            let field = (ip_len + more - layout.ip_len_bias()) as u16;
            set16(frame, layout.ip_len_offset(), field);
            flags::TRUNCATED
        }
    }
}

#[test]
fn bad_frames_are_flagged_and_good_ones_around_them_pass() -> Result<()> {
    let seed = seed("bad_frames_are_flagged_and_good_ones_around_them_pass");
    let mut r = rng(seed);
    let mut frames = Vec::new();
    let mut seen = 0u8;
    for _ in 0..soak(1500) {
        let mut f = RoceFrame::random(&mut r, 200).build();
        if r.gen_bool(0.6) {
            let flag = break_frame(&mut r, &mut f);
            // The reference must see the same error (so the expectation is the outside one).
            // The reference must see an error too; when the break makes several (a cut that
            // removes the headers), it reports the first, and `run` checks that one.
            if let Expect::Flag(e) = expect(&f) {
                seen |= e;
            } else {
                panic!("broken frame ({flag:#x}) passes the reference: {f:02x?}");
            }
        }
        frames.push(f);
    }
    let all =
        flags::NOT_IP | flags::IP_OPTIONS | flags::NOT_ROCE | flags::BAD_LENGTH | flags::TRUNCATED;
    assert_eq!(seen, all, "not every kind of bad frame was made");
    for (w, name) in WIDTHS.iter().enumerate() {
        run(name, &frames, seed + w as u64)?;
    }
    Ok(())
}

#[test]
fn bad_keep_is_flagged_and_the_next_frame_is_clean() -> Result<()> {
    let mut r = rng(seed("icrc bad keep"));
    let frame = RoceFrame::random(&mut r, 100).build();
    let want = icrc(&frame)?;
    for name in WIDTHS {
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let lanes = tb.model_ref().port("s_axis_tkeep")?.width;
        let mon = AxisSink::monitor(&mut tb, "m_icrc")?;
        let beats: Vec<&[u8]> = frame.chunks(lanes).collect();
        let send = |tb: &mut Tb, spoil: Option<usize>| -> Result<()> {
            for (i, b) in beats.iter().enumerate() {
                let mut data = b.to_vec();
                data.resize(lanes, 0);
                let mut keep = full_keep(b.len());
                if spoil == Some(i) {
                    // A hole in lane 1, or a lane kept past a gap on a short last beat.
                    keep = if b.len() >= 3 {
                        keep ^ 2
                    } else {
                        keep | 1 << (lanes - 1)
                    };
                }
                beat(tb, &data, keep, i + 1 == beats.len())?;
            }
            Ok(())
        };
        send(&mut tb, Some(0))?;
        send(&mut tb, Some(beats.len() - 1))?;
        send(&mut tb, None)?;
        tb.clock_cycles(ICRC_LATENCY as u64 + 2)?;
        let got = drain(&mon);
        assert_eq!(got.len(), 3, "{name}: one result per frame");
        assert!(
            got[0].1 & u64::from(flags::BAD_KEEP) != 0,
            "{name}: first beat hole"
        );
        assert!(
            got[1].1 & u64::from(flags::BAD_KEEP) != 0,
            "{name}: last beat hole"
        );
        assert_eq!(got[2], (want, 0), "{name}: clean frame after bad ones");
    }
    Ok(())
}

#[test]
fn back_to_back_minimum_frames() -> Result<()> {
    // 60-byte frames one after another with no idle: one result per frame, all right.
    let mut r = rng(seed("back_to_back_minimum_frames"));
    let frames: Vec<Vec<u8>> = (0..200)
        .map(|_| loop {
            let mut fr = RoceFrame::random(&mut r, 0);
            fr.trailer = 0;
            fr.payload_len = 0;
            let f = fr.build();
            if f.len() <= 64 {
                break f;
            }
        })
        .collect();
    for name in WIDTHS {
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let src = AxisSource::new(&mut tb, "s_axis")?;
        for f in &frames {
            src.borrow_mut().send(f.clone());
        }
        let lanes = tb.model_ref().port("s_axis_tkeep")?.width;
        let start = tb.cycle();
        let got = collect(&mut tb, "m_icrc", frames.len(), 100_000)?;
        let beats: usize = frames.iter().map(|f| f.len().div_ceil(lanes)).sum();
        assert!(
            tb.cycle() - start <= beats as u64 + ICRC_LATENCY as u64 + 5,
            "{name}: bubbles between frames"
        );
        for (i, (g, f)) in got.into_iter().zip(&frames).enumerate() {
            check(name, i, g, expect(f), f);
        }
    }
    Ok(())
}
