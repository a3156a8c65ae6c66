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

use anyhow::{ensure, Result};
use ferroce_sim::traffic::{write_stream, Direction};
use ferroce_sim::world::{Phy, World, WorldConfig};
use ferroce_spec::mac_ctrl;
use ferroce_tests::seed;
use ferroce_tests::wire::{pcap_frames_ps, pfc_response_bits};

const RATE: u64 = 10_000_000_000;
const PMTU: u32 = 256;
/// The largest frame of the run on the wire: PMTU + headers 58 + ICRC 4 + FCS 4.
const MAX_FRAME: u64 = PMTU as u64 + 58 + 8;

fn bits_ps(bits: u64) -> u64 {
    bits * 1_000_000_000_000 / RATE
}

enum Ctl {
    /// Priority 0 paused for `q` quanta (PFC or PAUSE).
    Pause { q: u16 },
    /// XON for priority 0.
    Xon,
    /// Priority 3 only: priority 0 must keep flowing.
    Other { q: u16 },
}

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
    let ctl: Vec<(u64, Ctl)> = pcap_frames_ps(&ba)?
        .into_iter()
        .filter_map(|(t, f)| {
            let arrive_end = t + w.ba.config().propagation_ps + bits_ps(8 * (f.len() as u64 + 4));
            match mac_ctrl::parse(&f) {
                mac_ctrl::MacCtrl::Pause { time } => Some((arrive_end, Ctl::Pause { q: time })),
                mac_ctrl::MacCtrl::Pfc { enable, times } if enable & 1 != 0 => Some((
                    arrive_end,
                    if times[0] == 0 {
                        Ctl::Xon
                    } else {
                        Ctl::Pause { q: times[0] }
                    },
                )),
                mac_ctrl::MacCtrl::Pfc { times, .. } => {
                    Some((arrive_end, Ctl::Other { q: times[3] }))
                }
                _ => None,
            }
        })
        .collect();
    ensure!(
        ctl.len() == plan.len(),
        "{} control frames on the wire",
        ctl.len()
    );
    let response = pfc_response_bits(phy);
    let allowance = bits_ps(8 * (MAX_FRAME + 20) + response);
    let mut worst = 0u64;
    let mut windows = 0;
    for (i, (a, c)) in ctl.iter().enumerate() {
        match c {
            Ctl::Pause { q } => {
                // The window ends at q quanta, or at the XON that follows.
                let mut end = a + mac_ctrl::quanta_ps((*q).into(), RATE);
                if let Some((x, Ctl::Xon)) = ctl.get(i + 1) {
                    end = end.min(*x);
                }
                let late: Vec<u64> = data
                    .iter()
                    .map(|(t, _)| *t)
                    .filter(|t| *t > a + allowance && *t < end)
                    .collect();
                ensure!(
                    late.is_empty(),
                    "pause {i} (q {q}) from {a} ps to {end} ps: frames started at {late:?}"
                );
                // The last frame that started after A: how long the NIC took to stop.
                if let Some(t) = data
                    .iter()
                    .map(|(t, _)| *t)
                    .filter(|t| t >= a && *t < end)
                    .max()
                {
                    worst = worst.max(t - a);
                }
                let resumed = data.iter().map(|(t, _)| *t).find(|t| *t >= end);
                ensure!(
                    resumed.is_some_and(|t| t <= end + bits_ps(response) + bits_ps(8 * 84)),
                    "pause {i}: traffic did not resume promptly after {end} ps: {resumed:?}"
                );
                if i < 5 {
                    println!(
                        "pause {i}: {q} quanta from {a} ps, window {:.2} us, traffic back \
                         after {:.0} ns",
                        (end - a) as f64 / 1e6,
                        resumed.map(|t| (t - end) as f64 / 1e3).unwrap_or(-1.0)
                    );
                }
                windows += 1;
            }
            Ctl::Xon => {}
            Ctl::Other { q } => {
                let end = a + mac_ctrl::quanta_ps((*q).into(), RATE);
                let n = data.iter().filter(|(t, _)| *t > *a && *t < end).count();
                println!("priority 3 paused {q} quanta: {n} priority-0 frames went meanwhile");
                ensure!(
                    n >= 3,
                    "priority 0 must keep flowing while priority 3 is paused"
                );
            }
        }
    }
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
