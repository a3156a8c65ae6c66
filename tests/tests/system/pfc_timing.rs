//! PFC and PAUSE response of the whole NIC, judged from pcap timestamps. Host a streams 1 MiB
//! RDMA WRITEs to b at 10 Gb/s (untagged: priority 0); the link model's traffic generator puts
//! MAC control frames from `spec::mac_ctrl` on the b -> a wire at chosen times, and both
//! directions are captured with the start time of every frame. For each control frame, from the
//! moment its last bit reaches a (`A`):
//! - pausing priority 0 for q quanta (PFC, or 802.3x PAUSE which stops every priority): no
//!   frame starts on a -> b later than `A` + one maximum frame time + the response delay, and
//!   none until q x 512 bit times have passed (`spec::mac_ctrl::quanta_ps`), unless an XON
//!   for priority 0 comes first, after which frames flow again within the response delay;
//! - pausing priority 3 only: priority-0 frames keep flowing through the window.
//!
//! The response delay asserted is the README's (`pfc_response_bits`, per face); the measured
//! one is printed. Run over the frame face (`ferroce_nic_64`) and over XGMII (`ferroce_nic_10g`).

use anyhow::{ensure, Context, Result};
use ferroce_sim::traffic::{write_stream, Direction};
use ferroce_sim::world::{Phy, World, WorldConfig};
use ferroce_spec::mac_ctrl;
use ferroce_tests::seed;
use ferroce_tests::wire::{
    check_pause_windows, pcap_ctrl_frames_ps, pcap_frames_ps, pfc_response_bits, PauseCheck,
};

const RATE: u64 = 10_000_000_000;
const PMTU: u32 = 256;
/// The largest frame of the run on the wire: PMTU + headers 58 + ICRC 4 + FCS 4.
const MAX_FRAME: u64 = PMTU as u64 + 58 + 8;

#[test]
fn pause_windows_hold_from_pcap_timestamps() -> Result<()> {
    pause_windows("pause_windows_hold_from_pcap_timestamps", Phy::Frames)
}

/// The same over XGMII: `ferroce_nic_10g` on both ends, the XGMII encoder and decoder in the
/// response, frames timed from the lanes by the XGMII link's tap.
#[test]
fn pause_windows_hold_over_xgmii() -> Result<()> {
    pause_windows("pause_windows_hold_over_xgmii", Phy::Xgmii)
}

fn pause_windows(name: &str, phy: Phy) -> Result<()> {
    let s = seed(name);
    let dir = std::env::temp_dir().join(format!("ferroce_{name}_{s}"));
    std::fs::create_dir_all(&dir)?;
    let mut w = World::open(&WorldConfig {
        phy,
        ..WorldConfig::default()
    })?;
    let (ab, ba) = (dir.join("a_to_b.pcap"), dir.join("b_to_a.pcap"));
    w.ab.tap(&ab)?;
    w.ba.tap(&ba)?;
    let (mut qa, _qb) = w.connect(PMTU, 1, 2, 64)?;
    let t0 = w.a.sim.borrow().tb.time_ps();
    let us = 1_000_000u64;
    let src = [0x02, 0xfe, 0, 0, 0, 0x0b];
    let pfc0 = |q: u16| mac_ctrl::pfc_frame(src, 0x01, [q, 0, 0, 0, 0, 0, 0, 0]);
    // The special cases, then PFC windows of random length at random moments (frames of a
    // 256-byte path MTU are short, so some window starts right after a frame began: that
    // measures the response).
    let mut plan: Vec<(u64, Vec<u8>)> = vec![
        (100 * us, pfc0(400)),
        (150 * us, mac_ctrl::pause_frame(src, 300)),
        (200 * us, pfc0(0xffff)),
        (240 * us, pfc0(0)),
        (
            280 * us,
            mac_ctrl::pfc_frame(src, 0x08, [0, 0, 0, 400, 0, 0, 0, 0]),
        ),
    ];
    let mut r = ferroce_tests::rng(s);
    for k in 0..40u64 {
        let at = 330 * us + k * 30 * us + rand::Rng::gen_range(&mut r, 0..10 * us);
        plan.push((at, pfc0(rand::Rng::gen_range(&mut r, 20..200))));
    }
    for (at, f) in &plan {
        w.ba.inject(t0 + at, f);
    }
    let run = write_stream(
        &mut w,
        Direction::AToB,
        &mut qa,
        PMTU,
        1 << 20,
        2,
        s,
        |_| (),
    )?;
    ensure!(
        run.cycles * run.period_ps > 1600 * us,
        "the stream ended before the last window"
    );
    let data = pcap_frames_ps(&ab)?;
    let ctl = pcap_ctrl_frames_ps(&ba)?;
    ensure!(
        ctl.len() == plan.len(),
        "{} control frames on the wire",
        ctl.len()
    );
    // Only priority 0 carries traffic: it resumes within the response and one PFC frame.
    let rep = check_pause_windows(
        &PauseCheck {
            rate_bps: RATE,
            propagation_ps: w.ba.config().propagation_ps,
            max_frame: MAX_FRAME,
            response_bits: pfc_response_bits(phy),
            backlogged: 1,
            resume_slack_bits: 8 * 84,
        },
        &data,
        &ctl,
    )
    .with_context(|| format!("seed {s}"))?;
    let worst = rep.worst_ps;
    println!(
        "traffic back {:?} ns after the first pauses ended; priority 3 paused: {:?} \
         priority-0 frames went meanwhile",
        rep.resume_ps
            .iter()
            .take(5)
            .map(|p| p / 1000)
            .collect::<Vec<_>>(),
        rep.others_flowing
    );
    ensure!(
        rep.others_flowing.len() == 1 && rep.others_flowing[0] >= 3,
        "priority 0 must keep flowing while priority 3 is paused"
    );
    let windows = rep.windows;
    let stats = w.a.prio_counters("mac_pfc_rx")?;
    ensure!(windows == 43, "{windows} pause windows checked");
    println!(
        "stop response (last frame start after A, a frame in progress included): {} ns = {} \
         bit times; a received {stats:?} PFC frames, {} PAUSE",
        worst / 1000,
        worst / 100,
        w.a.counter("mac_pause_rx")?
    );
    ensure!(stats[0] == 43 && stats[3] == 1 && w.a.counter("mac_pause_rx")? == 1);
    ensure!(stats.iter().sum::<u64>() == 44);
    ensure!(
        worst > 0,
        "no window began near a frame start: the response was not measured"
    );
    for wire in [&w.ab, &w.ba] {
        ensure!(wire.pcap_error().is_none(), "pcap: {:?}", wire.pcap_error());
        if let Some(x) = wire.xgmii() {
            let st = x.xgmii_stats();
            println!("XGMII link: {st:?}");
            ensure!(st.broken == 0, "a NIC broke clause 46 on transmit");
        }
    }
    for h in [&w.a, &w.b] {
        for (c, v) in h.faults()? {
            ensure!(v == 0, "{c} = {v}");
        }
    }
    Ok(())
}
