//! Two traffic classes through one NIC, judged from pcap timestamps: a paused priority holds
//! only its own frames. Host a streams RDMA WRITEs to b on two QPs at once, one tagged with
//! priority 3, one with priority 1 (strict priority: 3 has the wire while it has frames). The
//! link model's traffic generator puts on the b -> a wire, at chosen times:
//! - a PFC frame pausing priority 3 for 65,535 quanta, then its XON 200 us later: from the
//!   PFC frame's last bit at a (plus one maximum frame and the response delay) to the XON, no
//!   priority-3 frame starts, and priority 1 has the wire: its frames fill at least 85% of
//!   the line rate in the window (94% measured). Without credits (the requester and the responder reserving
//!   queue room before they send), priority 3's queue would fill, hold the queue input and
//!   the requester, and priority 1 would stop after the frames already queued;
//! - an 802.3x PAUSE of 1,000 quanta: no frame of either class starts in its window (priority
//!   1, starved by priority 3, has frames queued all through it).
//!
//! Both streams complete with every byte right, the requester yielded QPs to each other, and
//! the transmit credits of both NICs all came back.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, Vlan, WrOpcode};
use ferroce_sim::world::{Phy, World, WorldConfig};
use ferroce_spec::mac_ctrl;
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::wire::{pcap_frames_ps, pfc_response_bits};
use ferroce_tests::{rng, seed};
use rand::RngCore;

const RATE: u64 = 10_000_000_000;
const PMTU: u32 = 1024;
const WR_BYTES: usize = 64 * 1024;
/// WRITEs on the priority-3 QP and on the priority-1 QP.
const N_HI: usize = 8;
const N_LO: usize = 16;
/// The largest frame on the wire: PMTU + tagged headers 62 + RETH 16 + ICRC 4 + FCS 4.
const MAX_FRAME: u64 = PMTU as u64 + 62 + 16 + 8;

fn bits_ps(bits: u64) -> u64 {
    bits * 1_000_000_000_000 / RATE
}

/// The PCP of a tagged frame.
fn pcp(f: &[u8]) -> Option<u8> {
    (f.len() > 14 && f[12..14] == [0x81, 0x00]).then(|| f[14] >> 5)
}

#[test]
fn a_paused_priority_holds_only_its_own_frames() -> Result<()> {
    paused_priority("a_paused_priority_holds_only_its_own_frames", Phy::Frames)
}

/// The same between two `ferroce_nic_10g` over the XGMII link.
#[test]
fn a_paused_priority_holds_only_its_own_frames_over_xgmii() -> Result<()> {
    paused_priority(
        "a_paused_priority_holds_only_its_own_frames_over_xgmii",
        Phy::Xgmii,
    )
}

fn paused_priority(name: &str, phy: Phy) -> Result<()> {
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
    let tag = |pcp| Some(Vlan { pcp, vid: 7 });
    let (mut q_hi, _) = w.connect_tagged(PMTU, 1, 2, 64, tag(3))?;
    let (mut q_lo, _) = w.connect_tagged(PMTU, 100, 200, 64, tag(1))?;

    // Sources at a, one target region at b; WRITE i of QP k goes to its own place.
    let total = (N_HI + N_LO) * WR_BYTES;
    let mut data = vec![0u8; total];
    rng(s).fill_bytes(&mut data);
    let src = w.a.buffer(total, &data)?;
    let dst = w.b.buffer(total, &vec![0u8; total])?;
    let mut plan = Vec::new();
    for (qp, n, base) in [(&mut q_hi, N_HI, 0), (&mut q_lo, N_LO, N_HI)] {
        let list: Vec<SendWr> = (0..n)
            .map(|i| {
                let off = ((base + i) * WR_BYTES) as u64;
                SendWr {
                    wr_id: i as u64,
                    opcode: WrOpcode::RdmaWrite,
                    sg_list: vec![Sge {
                        addr: src.addr + off,
                        length: WR_BYTES as u32,
                        lkey: src.lkey,
                    }],
                    remote_addr: dst.addr + off,
                    rkey: dst.rkey,
                    signaled: true,
                    ..Default::default()
                }
            })
            .collect();
        w.a.dev.post_send(qp, &list)?;
        plan.push((qp.qpn, n));
    }
    let t0 = w.a.sim.borrow().tb.time_ps();
    let us = 1_000_000u64;
    let peer = [0x02, 0xfe, 0, 0, 0, 0x0b];
    let mut times = [0u16; 8];
    times[3] = 0xffff;
    w.ba.inject(t0 + 40 * us, &mac_ctrl::pfc_frame(peer, 1 << 3, times));
    w.ba.inject(t0 + 240 * us, &mac_ctrl::pfc_frame(peer, 1 << 3, [0; 8]));
    w.ba.inject(t0 + 340 * us, &mac_ctrl::pause_frame(peer, 1000));

    // Completions: in order per QP, all successful.
    let mut done = [0usize; 2];
    let mut bad = None;
    let (dev, cq) = (&mut w.a.dev, &mut w.a.cq);
    ferroce_sim::world::step_until(&w.a.sim, 3_000_000, "both streams", || {
        match dev.poll_cq(cq, 64) {
            Ok(wcs) => {
                for wc in wcs {
                    let k = usize::from(wc.qpn == plan[1].0);
                    if wc.status != WC_SUCCESS || wc.wr_id != done[k] as u64 {
                        bad.get_or_insert(format!("{wc:?}"));
                    }
                    done[k] += 1;
                }
            }
            Err(e) => {
                bad.get_or_insert(e.to_string());
            }
        }
        bad.is_some() || (done[0] == plan[0].1 && done[1] == plan[1].1)
    })?;
    ensure!(bad.is_none(), "completion: {bad:?}");
    w.run(2000)?;
    let mut got = vec![0u8; total];
    w.b.dev.mem.read(dst.addr, &mut got)?;
    ensure!(
        got == data,
        "target bytes differ from byte {:?}",
        got.iter().zip(&data).position(|(a, b)| a != b)
    );

    // The windows, from the control frames' arrival (their last bit at a).
    let arrive = |(t, f): &(u64, Vec<u8>)| {
        t + w.ba.config().propagation_ps + bits_ps(8 * (f.len() as u64 + 4))
    };
    let ctl: Vec<(u64, mac_ctrl::MacCtrl)> = pcap_frames_ps(&ba)?
        .iter()
        .filter_map(|x| match mac_ctrl::parse(&x.1) {
            mac_ctrl::MacCtrl::NotCtrl => None,
            c => Some((arrive(x), c)),
        })
        .collect();
    ensure!(ctl.len() == 3, "{} control frames on b -> a", ctl.len());
    let (a1, a2, a3) = (ctl[0].0, ctl[1].0, ctl[2].0);
    let frames = pcap_frames_ps(&ab)?;
    let allowance = bits_ps(8 * (MAX_FRAME + 20) + pfc_response_bits(phy));
    let starts = |p: u8, from: u64, to: u64| -> Vec<&(u64, Vec<u8>)> {
        frames
            .iter()
            .filter(|(t, f)| pcp(f) == Some(p) && *t > from && *t < to)
            .collect()
    };
    let late = starts(3, a1 + allowance, a2);
    ensure!(
        late.is_empty(),
        "priority 3 paused from {a1} to {a2} ps: {} frames started, first at {} ps",
        late.len(),
        late[0].0
    );
    let lo: u64 = starts(1, a1 + allowance, a2)
        .iter()
        .map(|(_, f)| 8 * (f.len() as u64 + 4 + 20))
        .sum();
    let share = lo as f64 * 1e12 / RATE as f64 / (a2 - a1 - allowance) as f64;
    let before = starts(1, t0, a1).len();
    println!(
        "priority 3 paused {:.1} us: priority 1 sent {:.1}% of the line rate meanwhile \
         ({before} priority-1 frames before the pause)",
        (a2 - a1) as f64 / 1e6,
        100.0 * share
    );
    ensure!(
        share > 0.85,
        "priority 1 must have the wire while priority 3 is paused: {:.1}%",
        100.0 * share
    );
    let resumed = frames
        .iter()
        .find(|(t, f)| pcp(f) == Some(3) && *t >= a2)
        .map(|(t, _)| *t);
    ensure!(
        resumed.is_some_and(|t| t <= a2 + allowance),
        "priority 3 did not resume promptly after its XON at {a2} ps: {resumed:?}"
    );
    let end3 = a3 + mac_ctrl::quanta_ps(1000, RATE);
    let during: Vec<_> = frames
        .iter()
        .filter(|(t, _)| *t > a3 + allowance && *t < end3)
        .collect();
    ensure!(
        during.is_empty(),
        "802.3x PAUSE from {a3} to {end3} ps: {} frames started",
        during.len()
    );
    ensure!(
        !starts(3, a3 - 20 * us, a3).is_empty()
            && frames.iter().any(|(t, _)| *t > end3 && *t < end3 + 20 * us),
        "the stream must be running around the PAUSE window"
    );
    // Priority 1 (starved by 3 under strict priority) had frames waiting all through it.
    ensure!(
        !starts(1, end3, u64::MAX).is_empty(),
        "priority 1 must still have had frames to send after the PAUSE"
    );

    let yields = w.a.counter("req_yields")?;
    println!("requester yields: {yields}");
    ensure!(yields > 0, "the paused QP never yielded to the other");
    for h in [&w.a, &w.b] {
        ensure!(h.tx_used()? == [0; 8], "credits left: {:?}", h.tx_used()?);
        for (c, v) in h.faults()? {
            ensure!(v == 0, "{c} = {v}");
        }
    }
    Ok(())
}
