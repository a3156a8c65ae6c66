//! The 100G MAC (`ferroce_mac_512`: 512-bit beats at 250 MHz, the face of a hard 100G MAC) on
//! Verilator, two of them back to back over the 100 Gb/s link model (`ferroce_sim::Link`).
//!
//! - Frames of every length from 0 to 9,018 bytes (9,022 with FCS: a 9,000-byte payload
//!   tagged) and beyond, to 12,000, with random gaps on the input and random back-pressure on the output, cross a's
//!   transmit path, the wire and b's receive path, at 100G (512 bits) and at 10G over XGMII
//!   (`ferroce_mac_10g`, the XGMII link model): the wire's own record (its pcap, taken before
//!   any damage) holds every frame as given, padded to 60 bytes, in order within its
//!   priority; RoCEv2 frames (every size a RoCEv2 frame can have) come out of b byte-exact;
//!   frames of other EtherTypes of every length are counted `not_roce` (so their FCS was good:
//!   that check comes first); frames the wire corrupts are counted `fcs_err`, /E/ in the lanes
//!   (10G) or a PHY error in `tuser` (the hard MAC's flag at 100G) `code_err`, runts the traffic generator puts on the wire `runt`, frames over 9,022 bytes
//!   `too_long`. Nothing else is dropped.
//! - PFC and PAUSE response at 100 Gb/s, from pcap timestamps: the windows of
//!   `ferroce_tests::wire::check_pause_windows`, with traffic on priorities 0 and 3.

use anyhow::{ensure, Context, Result};
use ferroce_sim::world::Wire;
use ferroce_sim::{
    AxisSink, AxisSource, BuildOptions, Fault, LaneFault, Link, LinkConfig, PauseGenerator, Tb,
    XgmiiLink,
};
use ferroce_spec::mac_ctrl;
use ferroce_tests::tx::{wire_prio, TxPacket};
use ferroce_tests::wire::{check_pause_windows, pcap_ctrl_frames_ps, pcap_frames_ps, PauseCheck};
use ferroce_tests::{rng, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

const RATE: u64 = 100_000_000_000;
/// The longest frame MAC receive takes, without FCS (`spec::headers::ETH_MAX_FRAME` - 4).
const MAX_NO_FCS: usize = ferroce_spec::headers::ETH_MAX_FRAME - 4;
/// The receive counters that must account for every frame not delivered.
const COUNTERS: [&str; 9] = ferroce_tests::rx::MAC_RX_COUNTERS;

fn open(name: &str) -> Result<Tb> {
    let mut tb = ferroce_sim::designs::open_tb(name, &BuildOptions::default())?;
    tb.set("local_mac", 0x02fe_0000_000a)?;
    tb.set("xoff_bytes", 0xffff)?;
    tb.set("xon_bytes", 0xffff)?;
    tb.set("pfc_quanta", 0xffff)?;
    Ok(tb)
}

fn link_cfg(gbps: u64) -> LinkConfig {
    LinkConfig {
        rate_bps: gbps * 1_000_000_000,
        overhead_bytes: 20,
        propagation_ps: 10_000,
    }
}

/// A RoCEv2 frame (IPv4, ICRC from the `spec` reference, itself checked against scapy) as
/// close to `len` bytes without FCS as the headers and 4-byte payload padding allow, on
/// priority `prio` (untagged when 0 and `tag` is false).
fn roce(r: &mut impl Rng, len: usize, prio: u8, tag: bool) -> Result<Vec<u8>> {
    let mut p = TxPacket::random(r);
    p.vlan = (tag || prio != 0).then(|| (prio, r.gen_range(1..4095)));
    p.payload.clear();
    if len < 60 {
        // The smallest RoCEv2 frame: no extended header (58 bytes, padded to 60 on the wire).
        p.opcode = ferroce_spec::opcodes::RC_RDMA_WRITE_MIDDLE;
        p.ext.clear();
    }
    let base = p.frame_without_icrc().len();
    let n = len.saturating_sub(base) / 4 * 4;
    p.payload = (0..n).map(|_| r.gen()).collect();
    let mut f = p.frame_without_icrc();
    let end = f.len();
    let crc = ferroce_spec::icrc(&f).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    f[end - 4..].copy_from_slice(&crc.to_le_bytes());
    Ok(f)
}

/// A frame of another EtherType (0x88B5, local experimental) of exactly `len` bytes.
fn other(r: &mut impl Rng, len: usize, prio: u8) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len.max(18)).map(|_| r.gen()).collect();
    f[0] &= 0xfe;
    f[12..14].copy_from_slice(&[0x81, 0x00]);
    f[14] = (prio << 5) | (f[14] & 0x1f);
    f[16..18].copy_from_slice(&[0x88, 0xb5]);
    f.truncate(len.max(18));
    f
}

/// Eight 32-bit per-priority counters of a port (priority p at bits 32p).
fn prio_counters(tb: &Tb, name: &str) -> Result<[u64; 8]> {
    let m = tb.model_ref();
    let b = m.get_bytes(m.port(name)?);
    ensure!(b.len() >= 32, "{name}: {} bytes", b.len());
    Ok(std::array::from_fn(|p| {
        u64::from(u32::from_le_bytes([
            b[4 * p],
            b[4 * p + 1],
            b[4 * p + 2],
            b[4 * p + 3],
        ]))
    }))
}

/// What the wire did to a frame (by its index on the wire).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Damage {
    /// Lost on the wire: the receiver never sees it.
    Dropped,
    /// A byte flipped: an FCS error.
    Corrupted,
    /// A code error: an /E/ in the lanes (XGMII), or the hard MAC's `tuser` on the last beat
    /// (the 512-bit face).
    CodeError,
}

/// The 512-bit path: `ferroce_mac_512` to `ferroce_mac_512` over a 100 Gb/s frame link.
#[test]
fn frames_of_every_length_cross_the_512_bit_path() -> Result<()> {
    frames_cross("frames_of_every_length_cross_the_512_bit_path", false)
}

/// The XGMII link: `ferroce_mac_10g` to `ferroce_mac_10g`, the XGMII encoder and decoder and
/// the XGMII link model between the two MACs, lane faults (drop, flipped byte, /E/) on it.
#[test]
fn frames_of_every_length_cross_the_xgmii_link() -> Result<()> {
    frames_cross("frames_of_every_length_cross_the_xgmii_link", true)
}

fn frames_cross(name: &str, xgmii: bool) -> Result<()> {
    let s = seed(name);
    let mut r = rng(s);
    let dir = std::env::temp_dir().join(format!("ferroce_{name}_{s}"));
    std::fs::create_dir_all(&dir)?;
    let pcap = dir.join("a_to_b.pcap");
    let (mut a, mut b) = if xgmii {
        (open("ferroce_mac_10g")?, open("ferroce_mac_10g")?)
    } else {
        (open("ferroce_mac_512")?, open("ferroce_mac_512")?)
    };
    let damage: Rc<RefCell<Vec<(u64, Damage)>>> = Rc::default();
    let hook_seed = s ^ 3;
    // The wire damages frames 10, 11 and 12 (one of each kind) and then one in 23: which
    // way, by the frame's index; a byte within the first 18 (every frame has them: a runt
    // too).
    let pick = move |i: u64, kinds: usize| {
        let mut h = rng(hook_seed ^ i);
        let kind = match i {
            10..=12 => Some((i - 10) as usize),
            _ => h.gen_ratio(1, 23).then(|| h.gen_range(0..kinds)),
        };
        kind.map(|k| (k, h.gen_range(0..18), 1u8 << h.gen_range(0..8)))
    };
    let log = damage.clone();
    let wire = if xgmii {
        let l = XgmiiLink::connect(&mut a, "xgmii_tx", &mut b, "xgmii_rx", link_cfg(10))?;
        l.set_fault_hook(move |i| match pick(i, 3) {
            None => LaneFault::Pass,
            Some((0, _, _)) => {
                log.borrow_mut().push((i, Damage::Dropped));
                LaneFault::Drop
            }
            Some((1, offset, mask)) => {
                log.borrow_mut().push((i, Damage::Corrupted));
                LaneFault::Corrupt { offset, mask }
            }
            Some((_, offset, _)) => {
                log.borrow_mut().push((i, Damage::CodeError));
                LaneFault::CodeError { offset }
            }
        });
        Wire::Xgmii(l)
    } else {
        let l = Link::connect(&mut a, "tx_axis", &mut b, "rx_axis", link_cfg(100))?;
        l.set_fault_hook(move |i, _| match pick(i, 3) {
            None => Fault::Pass,
            Some((0, _, _)) => {
                log.borrow_mut().push((i, Damage::Dropped));
                Fault::Drop
            }
            Some((1, offset, mask)) => {
                log.borrow_mut().push((i, Damage::Corrupted));
                Fault::Corrupt { offset, mask }
            }
            Some(_) => {
                log.borrow_mut().push((i, Damage::CodeError));
                Fault::PhyError
            }
        });
        Wire::Frames(l)
    };
    wire.tap(&pcap)?;
    let src = AxisSource::new(&mut a, "s_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, 0.2));
    let out = AxisSink::new(&mut b, "m_axis")?;
    out.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, 0.1));
    // Every length class: the smallest, around each 64-byte boundary, the largest, random;
    // RoCEv2 frames (every length they can have), other EtherTypes (every length), and
    // frames over the limit.
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for i in 0..soak(400) {
        let len = match i % 5 {
            0 => r.gen_range(0..=130),
            1 => 64 * r.gen_range(1..=140) + r.gen_range(0..=4) - 2,
            2 => MAX_NO_FCS - r.gen_range(0..=8),
            _ => r.gen_range(60..=MAX_NO_FCS),
        };
        let prio = r.gen_range(0..8u8);
        let f = match i % 17 {
            // The smallest RoCEv2 frame (58 bytes, padded to 60) and the largest.
            _ if i == 0 => roce(&mut r, 0, 0, false)?,
            _ if i == 1 => roce(&mut r, MAX_NO_FCS, 5, true)?,
            3 => {
                let long = r.gen_range(MAX_NO_FCS + 1..=12_000);
                other(&mut r, long, prio)
            }
            5 | 11 => other(&mut r, len, prio),
            _ => {
                let tag = r.gen();
                roce(&mut r, len, prio, tag)?
            }
        };
        frames.push(f);
    }
    for f in &frames {
        src.borrow_mut().send(f.clone());
    }
    // Runts (under 64 bytes with FCS): only a traffic generator makes them, MAC transmit pads.
    let period = a.period_ps();
    for k in 0..8u64 {
        let len = r.gen_range(14..60);
        wire.inject((k + 1) * 2_000 * period, &other(&mut r, len, 0));
    }
    // Both ends in lockstep until every frame has crossed the wire and the far end is quiet.
    let (mut quiet, mut last, mut budget) = (0, 0, ferroce_tests::budget(4_000_000));
    let total = frames.len() as u64 + 8;
    // Quiet cycles count only once the wire is done: the last frame's bytes are still in b's
    // receive path when the wire goes idle, however long b's output was quiet before.
    while quiet <= 300 {
        budget = budget.checked_sub(1).context("frames did not all cross")?;
        a.rising_edge()?;
        b.rising_edge()?;
        let n = out.borrow().beats();
        let done = wire.stats().frames == total && wire.idle();
        quiet = if n == last && done { quiet + 1 } else { 0 };
        last = n;
    }
    ensure!(
        out.borrow().violations().is_empty(),
        "{:?}",
        out.borrow().violations()
    );
    ensure!(wire.pcap_error().is_none(), "pcap: {:?}", wire.pcap_error());
    // The damage is mapped by index into the wire's record: it must hold every frame.
    if let Some(x) = wire.xgmii() {
        let st = x.xgmii_stats();
        println!(
            "XGMII link: {st:?}; a's underruns {}",
            a.get("xgmii_tx_underrun")?
        );
        ensure!(st.broken == 0 && a.get("xgmii_tx_underrun")? == 0);
    }
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| out.borrow_mut().recv())
        .map(|f| f.data)
        .collect();
    let counts: Vec<u64> = COUNTERS
        .iter()
        .map(|c| b.get(c))
        .collect::<Result<_, _>>()?;
    // The wire's record (frames as sent, before damage): every frame a sent, padded to 60
    // bytes, in order within its priority, and the runts.
    let sent: Vec<Vec<u8>> = pcap_frames_ps(&pcap)?.into_iter().map(|f| f.1).collect();
    ensure!(
        sent.len() == frames.len() + 8,
        "{} frames on the wire",
        sent.len()
    );
    let padded = |f: &[u8]| {
        let mut w = f.to_vec();
        w.resize(w.len().max(60), 0);
        w
    };
    let mut want_sent: [Vec<Vec<u8>>; 8] = Default::default();
    for f in &frames {
        want_sent[wire_prio(f)].push(padded(f));
    }
    let mut on_wire: [Vec<Vec<u8>>; 8] = Default::default();
    for f in sent.iter().filter(|f| f.len() >= 60) {
        on_wire[wire_prio(f)].push(f.clone());
    }
    ensure!(
        on_wire == want_sent,
        "seed {s}: the wire did not carry every frame as given: per priority {:?} on the wire, \
         {:?} given; first difference {:?}",
        on_wire.iter().map(Vec::len).collect::<Vec<_>>(),
        want_sent.iter().map(Vec::len).collect::<Vec<_>>(),
        (0..8)
            .filter_map(|p| on_wire[p]
                .iter()
                .zip(&want_sent[p])
                .position(|(x, y)| x != y)
                .map(|i| (p, i, on_wire[p][i].len(), want_sent[p][i].len())))
            .next()
    );
    // What b must make of each: by the damage, then by its kind.
    let damage = damage.borrow();
    let is_roce = |f: &[u8]| {
        etherparse::SlicedPacket::from_ethernet(f).is_ok_and(|p| {
            matches!(p.transport, Some(etherparse::TransportSlice::Udp(u))
            if u.destination_port() == ferroce_spec::headers::ROCEV2_UDP_PORT)
        })
    };
    let mut expect = [0u64; 9];
    let mut want: [Vec<Vec<u8>>; 8] = Default::default();
    for (i, f) in sent.iter().enumerate() {
        match damage.iter().find(|d| d.0 == i as u64).map(|d| d.1) {
            Some(Damage::Dropped) => {}
            Some(Damage::Corrupted) => expect[0] += 1,
            Some(Damage::CodeError) => expect[7] += 1,
            None if f.len() + 4 < 64 => expect[1] += 1,
            None if f.len() > MAX_NO_FCS => expect[8] += 1,
            None if is_roce(f) => want[wire_prio(f)].push(f.clone()),
            None => expect[2] += 1,
        }
    }
    let mut by_prio: [Vec<Vec<u8>>; 8] = Default::default();
    for g in &got {
        by_prio[wire_prio(g)].push(g.clone());
    }
    let stats = wire.stats();
    println!(
        "seed {s}: {} frames on the wire ({} bytes with FCS), {} delivered, damage {:?}; \
         counters {:?}",
        stats.frames,
        stats.bytes,
        got.len(),
        [Damage::Dropped, Damage::Corrupted, Damage::CodeError]
            .map(|k| damage.iter().filter(|d| d.1 == k).count()),
        COUNTERS.iter().zip(&counts).collect::<Vec<_>>()
    );
    for p in 0..8 {
        ensure!(
            by_prio[p] == want[p],
            "seed {s}: priority {p}: {} frames out, {} expected; first difference at {:?}",
            by_prio[p].len(),
            want[p].len(),
            by_prio[p].iter().zip(&want[p]).position(|(x, y)| x != y)
        );
    }
    ensure!(
        counts == expect,
        "seed {s}: counters {counts:?}, expected {expect:?}"
    );
    ensure!(a.get("oversize")? == 0 && a.get("bad_keep")? == 0);
    let kinds = [Damage::Dropped, Damage::Corrupted, Damage::CodeError];
    ensure!(
        kinds.iter().all(|k| damage.iter().any(|d| d.1 == *k))
            && [0, 1, 2, 7, 8].iter().all(|&c| expect[c] > 0),
        "seed {s}: every damage and drop reason was exercised: {expect:?}"
    );
    ensure!(
        sent.iter().any(|f| f.len() >= MAX_NO_FCS - 3 && is_roce(f))
            && sent.iter().any(|f| f.len() == 60 && is_roce(f)),
        "the largest and the smallest RoCEv2 frames were sent"
    );
    if wire.xgmii().is_some() {
        ensure!(b.get("xgmii_rx_code_err")? == expect[7]);
    }
    Ok(())
}

/// PFC and PAUSE at 100 Gb/s, judged from pcap timestamps: a streams RoCEv2 frames of up to
/// 1,500 bytes on priorities 0 (most) and 3 to b; the link model's traffic generator puts
/// MAC control frames on the b -> a wire at chosen times. `check_pause_windows` holds every
/// window: no paused frame starts later than one maximum frame time plus the response, none
/// until the pause ends, the other priority flows, traffic resumes promptly.
#[test]
fn pause_windows_hold_at_100g() -> Result<()> {
    let s = seed("pause_windows_hold_at_100g");
    let mut r = rng(s);
    let dir = std::env::temp_dir().join(format!("ferroce_pause_windows_hold_at_100g_{s}"));
    std::fs::create_dir_all(&dir)?;
    let mut a = open("ferroce_mac_512")?;
    let mut b = open("ferroce_mac_512")?;
    let ab = Link::connect(&mut a, "tx_axis", &mut b, "rx_axis", link_cfg(100))?;
    let ba = Link::connect(&mut b, "tx_axis", &mut a, "rx_axis", link_cfg(100))?;
    let (ab_pcap, ba_pcap) = (dir.join("a_to_b.pcap"), dir.join("b_to_a.pcap"));
    ab.tap(&ab_pcap)?;
    ba.tap(&ba_pcap)?;
    let src = AxisSource::new(&mut a, "s_axis")?;
    let out = AxisSink::new(&mut b, "m_axis")?;
    let t0 = a.time_ps();
    let us = 1_000_000u64;
    let peer = [0x02, 0xfe, 0, 0, 0, 0x0b];
    let pfc = |prio: usize, q: u16| {
        let mut t = [0u16; 8];
        t[prio] = q;
        mac_ctrl::pfc_frame(peer, 1 << prio, t)
    };
    let mut plan: Vec<(u64, Vec<u8>)> = vec![
        (20 * us, pfc(0, 400)),
        (30 * us, mac_ctrl::pause_frame(peer, 300)),
        (40 * us, pfc(0, 0xffff)),
        (46 * us, pfc(0, 0)),
        (52 * us, pfc(3, 1000)),
        // A pause renewed before it runs out: no start at all in the second window.
        (60 * us, pfc(0, 1000)),
        (63 * us, pfc(0, 400)),
    ];
    for k in 0..40u64 {
        let at = 70 * us + k * 8 * us + r.gen_range(0..3 * us);
        let prio = if k % 4 == 3 { 3 } else { 0 };
        plan.push((at, pfc(prio, r.gen_range(300..1000))));
    }
    for (at, f) in &plan {
        ba.inject(t0 + at, f);
    }
    let end_ps = t0 + 400 * us;
    let (mut queued, mut delivered) = (0u64, 0usize);
    let mut max_frame = 0u64;
    let mut last_p3 = 0u64;
    while a.time_ps() < end_ps {
        // Keep two frames waiting, mostly priority 0; priority 3 now and then, at most one
        // frame in 96 cycles (about a third of the line), so that strict priority never
        // starves priority 0 and its queue holds at most a frame or two; priority 0 only while
        // it is not paused and its queue is at most half full (`q_ready`), priority 3 only
        // while it is not paused: a sender that never fills a queue, so the MAC's input is
        // never held, as the NIC's credits ensure.
        while queued - src.borrow().frames_sent() < 2 {
            let p3_due = a.cycle() >= last_p3 + 96;
            let paused = a.get("paused")?;
            let p3_due = p3_due && paused & 8 == 0;
            let p0_held = paused & 1 == 1 || a.get("q_ready")? & 1 == 0;
            let prio = if p0_held {
                if !p3_due {
                    break;
                }
                3
            } else if p3_due && r.gen_ratio(1, 8) {
                3
            } else {
                0
            };
            if prio == 3 {
                last_p3 = a.cycle();
            }
            let len = r.gen_range(60..=1500);
            let f = roce(&mut r, len, prio, prio != 0)?;
            max_frame = max_frame.max(f.len().max(60) as u64 + 4);
            src.borrow_mut().send(f);
            queued += 1;
        }
        a.rising_edge()?;
        b.rising_edge()?;
        delivered += std::iter::from_fn(|| out.borrow_mut().recv()).count();
    }
    let data = pcap_frames_ps(&ab_pcap)?;
    let ctl = pcap_ctrl_frames_ps(&ba_pcap)?;
    ensure!(
        ctl.len() == plan.len(),
        "{} control frames on the wire",
        ctl.len()
    );
    let report = check_pause_windows(
        &PauseCheck {
            rate_bps: RATE,
            propagation_ps: ba.config().propagation_ps,
            max_frame,
            response_bits: ferroce_tests::wire::PFC_RESPONSE_BITS_100G,
            backlogged: 1,
            resume_slack_bits: 8 * (max_frame + 20),
        },
        &data,
        &ctl,
    )
    .with_context(|| format!("seed {s}"))?;
    println!(
        "seed {s}: {} frames a -> b ({delivered} delivered), {} windows; stop response {} ns = \
         {} bit times; resume after {:?} ns; other priority frames in PFC windows {:?}",
        data.len(),
        report.windows,
        report.worst_ps / 1000,
        report.worst_ps / 10,
        report
            .resume_ps
            .iter()
            .map(|p| p / 1000)
            .collect::<Vec<_>>(),
        report.others_flowing
    );
    ensure!(report.windows == 46, "{} windows checked", report.windows);
    ensure!(
        report.worst_ps > 0,
        "no window began near a frame start: the response was not measured"
    );
    ensure!(
        report.others_flowing.len() == 45 && report.others_flowing.iter().all(|n| *n >= 1),
        "the unpaused priority must keep flowing"
    );
    let pfc_rx = prio_counters(&a, "pfc_rx")?;
    let sent = |p: usize| {
        plan.iter()
            .filter(|(_, f)| f[14..16] == [1, 1] && f[17] == 1 << p)
            .count() as u64
    };
    println!(
        "a received PFC frames {pfc_rx:?}, {} PAUSE",
        a.get("pause_rx")?
    );
    ensure!(a.get("pause_rx")? == 1, "one PAUSE received");
    ensure!(
        pfc_rx[0] == sent(0)
            && pfc_rx[3] == sent(3)
            && pfc_rx.iter().sum::<u64>() == sent(0) + sent(3)
    );
    for c in COUNTERS {
        ensure!(b.get(c)? == 0, "b's {c} = {}", b.get(c)?);
    }
    ensure!(ab.pcap_error().is_none() && ba.pcap_error().is_none());
    Ok(())
}

/// Lossless at 100G, MAC to MAC: a streams RoCEv2 frames of up to 1,500 bytes on priority 0 to
/// b, whose reader takes a beat on half the cycles (64 Gb/s of beats against the 100 Gb/s
/// line). With PFC on priority 0 at b, b's watermarks send XOFF/XON to a, a's queues hold, and
/// every frame arrives byte-exact with nothing dropped; without PFC the same reader overflows
/// b's buffer and the drops are counted.
#[test]
fn a_slow_reader_is_lossless_with_pfc_at_100g() -> Result<()> {
    let s = seed("a_slow_reader_is_lossless_with_pfc_at_100g");
    let mut r = rng(s);
    let frames: Vec<Vec<u8>> = (0..800)
        .map(|_| {
            let len = r.gen_range(60..=1500);
            roce(&mut r, len, 0, false)
        })
        .collect::<Result<_>>()?;
    let mut overflow = Vec::new();
    for enable in [1u64, 0] {
        let mut a = open("ferroce_mac_512")?;
        let mut b = open("ferroce_mac_512")?;
        b.set("pfc_enable", enable)?;
        b.set("xoff_bytes", 16 * 1024)?;
        b.set("xon_bytes", 8 * 1024)?;
        b.set("pfc_quanta", 0x400)?;
        let ab = Link::connect(&mut a, "tx_axis", &mut b, "rx_axis", link_cfg(100))?;
        let ba = Link::connect(&mut b, "tx_axis", &mut a, "rx_axis", link_cfg(100))?;
        let src = AxisSource::new(&mut a, "s_axis")?;
        src.borrow_mut()
            .set_pause_generator(PauseGenerator::random(s ^ 1, 0.05));
        let out = AxisSink::new(&mut b, "m_axis")?;
        out.borrow_mut()
            .set_pause_generator(PauseGenerator::random(s ^ 2, 0.5));
        for f in &frames {
            src.borrow_mut().send(f.clone());
        }
        let (mut quiet, mut last, mut budget) = (0, 0, 1_000_000u64);
        while !(src.borrow().idle() && ab.idle() && ba.idle() && quiet > 300) {
            budget = budget.checked_sub(1).context("the stream did not end")?;
            a.rising_edge()?;
            b.rising_edge()?;
            let n = out.borrow().beats();
            quiet = if n == last { quiet + 1 } else { 0 };
            last = n;
        }
        let got: Vec<Vec<u8>> = std::iter::from_fn(|| out.borrow_mut().recv())
            .map(|f| f.data)
            .collect();
        let (xoff, xon) = (
            prio_counters(&b, "xoff_sent")?,
            prio_counters(&b, "xon_sent")?,
        );
        let held = prio_counters(&a, "paused_cycles")?;
        let dropped = b.get("overflow")?;
        println!(
            "seed {s}, pfc_enable {enable}: {} of {} frames delivered, {dropped} dropped on \
             overflow; b sent {} XOFF, {} XON; a paused {} cycles",
            got.len(),
            frames.len(),
            xoff[0],
            xon[0],
            held[0]
        );
        for c in COUNTERS.iter().filter(|c| **c != "overflow") {
            ensure!(b.get(c)? == 0, "b's {c} = {}", b.get(c)?);
        }
        ensure!(got.len() as u64 + dropped == frames.len() as u64);
        if enable == 1 {
            ensure!(
                got.len() == frames.len()
                    && got
                        .iter()
                        .zip(&frames)
                        .all(|(g, f)| { g.len() == f.len().max(60) && g[..f.len()] == f[..] }),
                "seed {s}: with PFC every frame must arrive byte-exact, in order"
            );
            ensure!(
                xoff[0] > 0 && xon[0] > 0 && held[0] > 0 && prio_counters(&a, "pfc_rx")?[0] > 0,
                "seed {s}: PFC must have held the sender"
            );
        }
        overflow.push(dropped);
    }
    ensure!(
        overflow[0] == 0 && overflow[1] > 0,
        "seed {s}: overflow drops with and without PFC: {overflow:?}"
    );
    Ok(())
}
