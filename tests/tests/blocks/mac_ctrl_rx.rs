//! MAC control receive (`MacCtrlRx`) at 64 and 512 bits: rust-hdl's simulator and the Verilator
//! model side by side on the same random stimulus (every output compared every cycle), both
//! checked against the outside references: `spec::mac_ctrl::parse` for what each frame is
//! (its builders byte-identical to scapy's, tests/py/test_mac_ctrl_scapy.py), and
//! `spec::mac_ctrl::quanta_ps` for how long a pause lasts at the configuration's line rate.
//!
//! Stimulus: PFC frames (random class-enable vectors, times 0-60 quanta, XON among them),
//! 802.3x PAUSE, malformed control frames (wrong destination, unknown opcode, reserved octet
//! set), VLAN-tagged control frames and other EtherTypes (data), frames 60-200 bytes, random
//! idle cycles between beats and frames, and one in ten judged bad by the owner (`good` low:
//! a wrong FCS), which must change nothing. Long pauses (0xffff quanta, 26 bits of bit times)
//! are loaded and then cleared by XON.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::{hundred_g, ten_g};
use ferroce_hdl::net::mac_ctrl_rx::line_bits_per_cycle;
use ferroce_hdl::net::MacCtrlRx;
use ferroce_hdl::prelude::*;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::mac_ctrl::{self, MacCtrl, Malformed, MAC_CTRL_DST, PRIORITIES};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{budget, bytes_of, hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use std::collections::{HashMap, VecDeque};

/// A frame for the tap, FCS bytes included (their value is the owner's business), and the
/// owner's verdict on it.
struct Frame {
    bytes: Vec<u8>,
    good: bool,
}

fn random_frame(r: &mut impl Rng) -> Frame {
    let src = [0x02, r.gen(), r.gen(), r.gen(), r.gen(), r.gen()];
    let mut times = [0u16; PRIORITIES];
    for t in &mut times {
        *t = match r.gen_range(0..10) {
            0 => 0,
            1 => 0xffff,
            _ => r.gen_range(1..60),
        };
    }
    let mut f = match r.gen_range(0..20) {
        0..=9 => mac_ctrl::pfc_frame(src, r.gen(), times),
        10 | 11 => mac_ctrl::pause_frame(src, r.gen_range(0..40)),
        12 => {
            let mut f = mac_ctrl::pfc_frame(src, r.gen(), times);
            f[r.gen_range(0..6)] ^= 1 << r.gen_range(0..8);
            f
        }
        13 => {
            let mut f = mac_ctrl::pause_frame(src, 5);
            let op: u16 = r.gen_range(2..0x0100);
            f[14..16].copy_from_slice(&op.to_be_bytes());
            f
        }
        14 => {
            let mut f = mac_ctrl::pfc_frame(src, 0xff, times);
            f[16] = r.gen_range(1..=255);
            f
        }
        15 => {
            // A VLAN tag in front of the control EtherType: data, never acted on.
            let mut f = mac_ctrl::pfc_frame(src, 0xff, [7; PRIORITIES]);
            f.splice(12..12, [0x81, 0x00, 0x60, 0x01]);
            f
        }
        _ => {
            let n = r.gen_range(60..200);
            let mut f: Vec<u8> = (0..n).map(|_| r.gen()).collect();
            f[..6].copy_from_slice(&MAC_CTRL_DST);
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f
        }
    };
    if r.gen_bool(0.2) {
        let n = r.gen_range(0..60);
        f.extend((0..n).map(|_| r.gen::<u8>()));
    }
    f.extend((0..4).map(|_| r.gen::<u8>()));
    Frame {
        bytes: f,
        good: r.gen_bool(0.9),
    }
}

/// Counters the reference expects.
#[derive(Default, Debug, PartialEq)]
struct Counts {
    pause: u32,
    bad_dst: u32,
    bad_opcode: u32,
    bad_reserved: u32,
    pfc: [u32; PRIORITIES],
    paused_cycles: [u32; PRIORITIES],
}

fn u32s(bytes: &[u8]) -> [u32; PRIORITIES] {
    let mut v = [0u32; PRIORITIES];
    for (p, c) in v.iter_mut().enumerate() {
        *c = u32::from_le_bytes([
            bytes[4 * p],
            bytes[4 * p + 1],
            bytes[4 * p + 2],
            bytes[4 * p + 3],
        ]);
    }
    v
}

fn run<const DW: usize>(name: &str, frames_wanted: usize, period_ps: u64) -> Result<()> {
    let s = seed(name);
    let mut r = rng(s);
    let lanes = DW / 8;
    let bpc = line_bits_per_cycle(DW);
    let rate_bps = bpc * 1_000_000_000_000 / period_ps;
    let mut hdl = MacCtrlRx::<DW>::new(bpc);
    hdl.connect_all();
    let mut tb = open_tb(name, &BuildOptions::default())?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let tdata = tb.model_ref().port("s_axis_tdata")?;
    let edge = |b: &mut MacCtrlRx<DW>| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;

    // Beats to send: (data, last, frame index); verdicts due by cycle.
    let mut beats: VecDeque<(Vec<u8>, bool, usize)> = VecDeque::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut verdicts: HashMap<u64, usize> = HashMap::new();
    let mut want = Counts::default();
    // Last cycle each priority is paused (inclusive), by the reference.
    let mut until: [Option<u64>; PRIORITIES] = [None; PRIORITIES];
    let mut long_pauses = 0;
    let mut expiries = 0;
    let mut cycle = 0u64;
    let mut idle_after = 0;
    loop {
        if beats.is_empty() && frames.len() < frames_wanted && idle_after == 0 {
            let f = random_frame(&mut r);
            let n = f.bytes.len().div_ceil(lanes);
            for i in 0..n {
                let mut d = f.bytes[i * lanes..((i + 1) * lanes).min(f.bytes.len())].to_vec();
                d.resize(lanes, 0);
                beats.push_back((d, i + 1 == n, frames.len()));
            }
            frames.push(f);
            // Mostly close together; now and then a long gap, so pauses run out on their own.
            idle_after = if r.gen_bool(0.05) {
                r.gen_range(0..800)
            } else {
                r.gen_range(0..4)
            };
        }
        let send = !beats.is_empty() && r.gen_bool(0.8);
        let (data, last, fi) = if send {
            beats.pop_front().unwrap_or_default()
        } else {
            (vec![0; lanes], false, 0)
        };
        if send && last {
            verdicts.insert(cycle + 2, fi);
        } else if !send && beats.is_empty() && idle_after > 0 {
            idle_after -= 1;
        }
        let verdict = verdicts.remove(&cycle);
        let good = verdict.map(|fi| frames[fi].good).unwrap_or(false);

        // Both models: same inputs, one edge.
        hdl.s_axis_tdata.next = wide::<DW>(&data);
        hdl.s_axis_tlast.next = last;
        hdl.s_axis_tvalid.next = send;
        hdl.good.next = good;
        tb.model().set_bytes(tdata, &data)?;
        tb.set("s_axis_tlast", last.into())?;
        tb.set("s_axis_tvalid", send.into())?;
        tb.set("good", good.into())?;
        assert!(simulate(&mut hdl, 200));
        // The verdict's cycle: `ctrl` says whether the frame is a MAC control frame.
        if let Some(fi) = verdict {
            let f = &frames[fi].bytes;
            let kind = mac_ctrl::parse(&f[..f.len() - 4]);
            ensure!(
                hdl.ctrl.val() == (kind != MacCtrl::NotCtrl),
                "{name} cycle {cycle}: frame {fi} ctrl {} but parse says {kind:?}",
                hdl.ctrl.val()
            );
            if good {
                let q_cycles =
                    |q: u16| mac_ctrl::quanta_ps(u64::from(q), rate_bps).div_ceil(period_ps);
                let mut load = |p: usize, q: u16| {
                    until[p] = Some(cycle + q_cycles(q));
                    if q == 0xffff {
                        long_pauses += 1;
                    }
                };
                match kind {
                    MacCtrl::NotCtrl => {}
                    MacCtrl::Pause { time } => {
                        want.pause += 1;
                        (0..PRIORITIES).for_each(|p| load(p, time));
                    }
                    MacCtrl::Pfc { enable, times } => {
                        for (p, &t) in times.iter().enumerate() {
                            if enable & (1 << p) != 0 {
                                want.pfc[p] += 1;
                                load(p, t);
                            }
                        }
                    }
                    MacCtrl::Malformed(Malformed::BadDst) => want.bad_dst += 1,
                    MacCtrl::Malformed(Malformed::UnknownOpcode(_)) => want.bad_opcode += 1,
                    MacCtrl::Malformed(Malformed::Reserved) => want.bad_reserved += 1,
                    MacCtrl::Malformed(Malformed::Short) => {
                        anyhow::bail!("{name}: generated a short frame")
                    }
                }
            }
        }
        edge(&mut hdl);
        tb.rising_edge()?;
        cycle += 1;

        outs.check(&hdl, tb.model_ref(), cycle)
            .with_context(|| format!("{name}: Verilator vs rust-hdl"))?;
        // Pause state against the reference: paused through cycle `until`, inclusive.
        let paused = hdl.paused.val().to_u64() as u8;
        for (p, u) in until.iter().enumerate() {
            let expect = u.is_some_and(|u| cycle <= u);
            ensure!(
                (paused >> p) & 1 == u8::from(expect),
                "{name} cycle {cycle}: priority {p} paused {} but the reference says {expect} \
                 (until {u:?})",
                (paused >> p) & 1
            );
            if expect {
                want.paused_cycles[p] += 1;
            }
            if u.is_some_and(|u| cycle == u + 1) {
                expiries += 1;
            }
        }
        // Clear the long pauses with XON now and then, so the run ends.
        if beats.is_empty() && frames.len() >= frames_wanted && verdicts.is_empty() {
            if until.iter().any(|u| u.is_some_and(|u| u > cycle + 2000)) {
                let f = mac_ctrl::pause_frame([2, 0, 0, 0, 0, 1], 0);
                let n = f.len() + 4;
                let mut b = f;
                b.extend([0; 4]);
                let nb = n.div_ceil(lanes);
                for i in 0..nb {
                    let mut d = b[i * lanes..((i + 1) * lanes).min(n)].to_vec();
                    d.resize(lanes, 0);
                    beats.push_back((d, i + 1 == nb, frames.len()));
                }
                frames.push(Frame {
                    bytes: b,
                    good: true,
                });
            } else if until.iter().all(|u| u.is_none_or(|u| u < cycle)) {
                break;
            }
        }
        ensure!(cycle < budget(2_000_000), "{name}: did not finish");
    }
    let got = Counts {
        pause: hdl.pause_rx.val().to_u64() as u32,
        bad_dst: hdl.bad_dst.val().to_u64() as u32,
        bad_opcode: hdl.bad_opcode.val().to_u64() as u32,
        bad_reserved: hdl.bad_reserved.val().to_u64() as u32,
        pfc: u32s(&bytes_of(hdl.pfc_rx.val())),
        paused_cycles: u32s(&bytes_of(hdl.paused_cycles.val())),
    };
    println!(
        "{name}: {} frames, {cycle} cycles, {long_pauses} long pauses, {expiries} pauses \
         ended; counters {got:?}",
        frames.len()
    );
    ensure!(got == want, "{name}: counters {got:?}, reference {want:?}");
    ensure!(want.pfc.iter().all(|&n| n > 20) && want.pause > 5 && want.bad_dst > 2);
    ensure!(want.bad_opcode > 2 && want.bad_reserved > 2 && long_pauses > 0 && expiries > 40);
    Ok(())
}

#[test]
fn mac_ctrl_rx_64_matches_parse_and_quanta() -> Result<()> {
    run::<{ ten_g::DW }>("ferroce_mac_ctrl_rx_64", soak(400), ten_g::CLOCK_PERIOD_PS)
}

#[test]
fn mac_ctrl_rx_512_matches_parse_and_quanta() -> Result<()> {
    run::<{ hundred_g::DW }>(
        "ferroce_mac_ctrl_rx_512",
        soak(400),
        hundred_g::CLOCK_PERIOD_PS,
    )
}
