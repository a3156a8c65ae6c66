//! MAC receive on its Verilator model: frames from the wire (FCS appended by the `crc` crate),
//! with random idle cycles between beats and random back-pressure on the output. Every frame of
//! the Soft-RoCE captures must come out byte-exact without its FCS, and everything else must be
//! dropped and counted under its reason, the good frames around it untouched.

use anyhow::{ensure, Context, Result};
use ferroce_sim::{AxisFrame, AxisSink, AxisSource, PauseGenerator, Tb};
use ferroce_spec::headers::ROCEV2_UDP_PORT;
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{rng, rxe_frames, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

const FCS: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
const COUNTERS: [&str; 9] = ferroce_tests::rx::MAC_RX_COUNTERS;

/// A frame as the wire carries it: padded to 60 bytes, FCS appended.
fn wire(f: &[u8]) -> Vec<u8> {
    let mut w = f.to_vec();
    if w.len() < 60 {
        w.resize(60, 0);
    }
    w.extend(FCS.checksum(&w).to_le_bytes());
    w
}

/// A RoCEv2 frame with its ICRC (from the `spec` reference, itself checked against scapy).
fn roce(r: &mut impl Rng) -> Result<Vec<u8>> {
    let mut f = TxPacket::random(r).frame_without_icrc();
    let n = f.len();
    let crc = ferroce_spec::icrc(&f).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    f[n - 4..].copy_from_slice(&crc.to_le_bytes());
    Ok(f)
}

/// Where a frame's IPv4 header starts: after its 802.1Q tag, if it has one.
fn l3(f: &[u8]) -> usize {
    if f[12..14] == [0x81, 0x00] {
        18
    } else {
        14
    }
}

struct Bench {
    tb: Tb,
    src: Rc<RefCell<AxisSource>>,
    out: Rc<RefCell<AxisSink>>,
}

fn bench(s: u64, idle: f64, stall: f64) -> Result<Bench> {
    let mut tb =
        ferroce_sim::designs::open_tb("ferroce_mac_rx_64", &ferroce_sim::BuildOptions::default())?;
    let src = AxisSource::new(&mut tb, "s_axis")?;
    let out = AxisSink::new(&mut tb, "m_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, idle));
    out.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, stall));
    Ok(Bench { tb, src, out })
}

/// Send everything, wait until the input is done and the output quiet; the frames out and the
/// counters.
fn run<F: Clone + Into<AxisFrame>>(
    b: &mut Bench,
    frames: &[F],
) -> Result<(Vec<Vec<u8>>, Vec<u64>)> {
    for f in frames {
        b.src.borrow_mut().send(f.clone().into());
    }
    let src = b.src.clone();
    b.tb.run_until(5_000_000, "input", |_| src.borrow().idle())?;
    let mut quiet = 0;
    let mut last = 0;
    while quiet < 200 {
        b.tb.rising_edge()?;
        let n = b.out.borrow().beats();
        quiet = if n == last { quiet + 1 } else { 0 };
        last = n;
    }
    ensure!(
        b.out.borrow().violations().is_empty(),
        "{:?}",
        b.out.borrow().violations()
    );
    let got = std::iter::from_fn(|| b.out.borrow_mut().recv())
        .map(|f| f.data)
        .collect();
    let counts = COUNTERS
        .iter()
        .map(|c| b.tb.get(c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((got, counts))
}

#[test]
fn soft_roce_captures_pass_and_their_tcp_is_counted() -> Result<()> {
    let s = seed("soft_roce_captures_pass_and_their_tcp_is_counted");
    let mut b = bench(s, 0.3, 0.1)?;
    let frames = rxe_frames()?;
    let is_roce = |f: &[u8]| {
        etherparse::SlicedPacket::from_ethernet(f).is_ok_and(|p| {
            matches!(p.transport, Some(etherparse::TransportSlice::Udp(u))
                if u.destination_port() == ROCEV2_UDP_PORT)
        })
    };
    let wired: Vec<Vec<u8>> = frames.iter().map(|f| wire(f)).collect();
    let (got, counts) = run(&mut b, &wired)?;
    let want: Vec<Vec<u8>> = wired
        .iter()
        .zip(&frames)
        .filter(|(_, f)| is_roce(f))
        .map(|(w, _)| w[..w.len() - 4].to_vec())
        .collect();
    let others = (frames.len() - want.len()) as u64;
    println!(
        "{} frames: {} RoCEv2, {others} other",
        frames.len(),
        want.len()
    );
    ensure!(want.len() >= 600, "the captures hold RoCEv2 frames");
    ensure!(
        got == want,
        "RoCEv2 frames did not all pass byte-exact: {} out, counters {counts:?}; first \
         difference at frame {:?}",
        got.len(),
        got.iter().zip(&want).position(|(a, b)| a != b)
    );
    ensure!(
        counts == [0, 0, others, 0, 0, 0, 0, 0, 0],
        "counters {COUNTERS:?} = {counts:?}"
    );
    Ok(())
}

#[test]
fn bad_frames_are_dropped_by_reason_and_good_ones_pass() -> Result<()> {
    let s = seed("bad_frames_are_dropped_by_reason_and_good_ones_pass");
    let mut r = rng(s);
    let mut b = bench(s, 0.3, 0.15)?;
    let (mut frames, mut want): (Vec<AxisFrame>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
    let mut expect = [0u64; 9];
    for i in 0..440 {
        let f = roce(&mut r)?;
        if i >= 400 {
            // A PHY code error on a good frame (tuser on its last beat), then a frame over
            // 9,022 bytes with a right FCS (a jumbo just too long) and one exactly at it.
            let w = wire(&f);
            let long = |n: usize| {
                let mut g = vec![0u8; n - 4];
                g[..14].copy_from_slice(&f[..14]);
                for (k, b) in g.iter_mut().enumerate().skip(14) {
                    *b = k as u8;
                }
                wire(&g)
            };
            match i % 3 {
                0 => {
                    frames.push(AxisFrame { data: w, user: 1 });
                    expect[7] += 1;
                }
                1 => {
                    frames.push(long(ferroce_spec::headers::ETH_MAX_FRAME + 1 + i % 7).into());
                    expect[8] += 1;
                }
                _ => {
                    // At the limit: kept by the MAC, but not RoCEv2 (`not_roce`).
                    frames.push(long(ferroce_spec::headers::ETH_MAX_FRAME).into());
                    expect[2] += 1;
                }
            }
            continue;
        }
        match i % 8 {
            0 => {
                // A bit flipped on the wire: the FCS catches it.
                let mut w = wire(&f);
                let at = r.gen_range(0..w.len());
                w[at] ^= 1 << r.gen_range(0..8);
                frames.push(w.into());
                expect[0] += 1;
            }
            1 => {
                // Under 64 bytes with a good FCS.
                let n = r.gen_range(1..60);
                let mut w: Vec<u8> = f[..n.min(f.len())].to_vec();
                w.extend(FCS.checksum(&w).to_le_bytes());
                frames.push(w.into());
                expect[1] += 1;
            }
            2 => {
                // Not RoCEv2: another UDP port (IPv4 and UDP otherwise intact).
                let mut g = f.clone();
                let port = l3(&g) + 22;
                g[port..port + 2].copy_from_slice(&4792u16.to_be_bytes());
                frames.push(wire(&g).into());
                expect[2] += 1;
            }
            3 => {
                // The IP length promises more than the frame holds (a frame long enough that
                // Ethernet padding does not make up the difference).
                let mut g = f.clone();
                while g.len() < 80 {
                    g = roce(&mut r)?;
                }
                g.truncate(g.len() - 8);
                frames.push(wire(&g).into());
                expect[3] += 1;
            }
            4 => {
                // Changed past the FCS's reach (the FCS recomputed): the ICRC catches it. From
                // BTH byte 5 on (byte 4 is masked from the ICRC), so a frame with no payload
                // and no extended header still has bytes to change.
                let mut g = f.clone();
                let at = r.gen_range(l3(&g) + 33..g.len() - 4);
                g[at] ^= 0x80;
                frames.push(wire(&g).into());
                expect[4] += 1;
            }
            _ => {
                frames.push(wire(&f).into());
                let mut w = f.clone();
                w.resize(w.len().max(60), 0);
                want.push(w);
            }
        }
    }
    let (got, counts) = run(&mut b, &frames)?;
    ensure!(
        got.len() == want.len(),
        "{} frames out, {} good in; counters {counts:?}, expected {expect:?}",
        got.len(),
        want.len()
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        ensure!(g == w, "good frame {i} differs (seed {s})");
    }
    ensure!(
        counts == expect,
        "counters {COUNTERS:?} = {counts:?}, expected {expect:?}"
    );
    Ok(())
}

#[test]
fn overflow_drops_whole_frames_and_the_buffer_recovers() -> Result<()> {
    // The reader is stalled most of the time while large frames arrive at full rate: the 16 KiB
    // buffer fills, whole frames are dropped and counted, and every frame that comes out is
    // intact and in order.
    let s = seed("overflow_drops_whole_frames_and_the_buffer_recovers");
    let mut r = rng(s);
    let mut b = bench(s, 0.0, 0.9)?;
    let mut good = Vec::new();
    while good.len() < 60 {
        let mut p = TxPacket::random(&mut r);
        p.payload.resize(r.gen_range(1000..=4096), 0x5A);
        p.opcode = ferroce_spec::opcodes::RC_RDMA_WRITE_MIDDLE;
        p.ext.clear();
        let mut f = p.frame_without_icrc();
        let n = f.len();
        let crc = ferroce_spec::icrc(&f).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        f[n - 4..].copy_from_slice(&crc.to_le_bytes());
        good.push(f);
    }
    let wired: Vec<Vec<u8>> = good.iter().map(|f| wire(f)).collect();
    let (got, counts) = run(&mut b, &wired)?;
    ensure!(counts[5] > 0, "no overflow: the test did not test it");
    ensure!(
        got.len() as u64 + counts[5] == good.len() as u64,
        "{} out + {} overflow != {} in",
        got.len(),
        counts[5],
        good.len()
    );
    // In order: each frame out is the next good one not dropped.
    let mut at = 0;
    for g in &got {
        while at < good.len() && &good[at] != g {
            at += 1;
        }
        ensure!(
            at < good.len(),
            "a frame came out that was not sent, or out of order"
        );
        at += 1;
    }
    ensure!(
        counts[..5] == [0; 5] && counts[6..] == [0; 3],
        "other counters {counts:?}"
    );
    println!(
        "{} of {} frames through, {} dropped on overflow",
        got.len(),
        good.len(),
        counts[5]
    );
    Ok(())
}

#[test]
fn minimum_size_frames_raise_xoff_long_before_any_is_lost() -> Result<()> {
    // A stream of minimum-size frames at line rate into a reader that never reads: the buffer
    // (16 KiB in this design) must raise XOFF at its watermark (2 KiB) with nothing lost, and
    // fill up by bytes, not by running out of frame records (a 32-record queue used to drop
    // the 30th frame, 1.9 KB in, before any XOFF).
    let s = seed("minimum_size_frames_raise_xoff_long_before_any_is_lost");
    let mut r = rng(s);
    let mut b = bench(s, 0.0, 1.0)?;
    b.tb.set("xoff_bytes", 2048)?;
    b.tb.set("xon_bytes", 1024)?;
    let n = 320;
    for _ in 0..n {
        let mut p = TxPacket::random(&mut r);
        p.opcode = ferroce_spec::opcodes::RC_ACKNOWLEDGE;
        p.ext = vec![0; 4];
        p.payload.clear();
        p.vlan = None;
        let mut f = p.frame_without_icrc();
        let len = f.len();
        let crc = ferroce_spec::icrc(&f).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        f[len - 4..].copy_from_slice(&crc.to_le_bytes());
        b.src.borrow_mut().send(wire(&f));
    }
    let (mut xoff_at, mut lost_at) = (None, None);
    for _ in 0..20_000 {
        b.tb.rising_edge()?;
        let sent = b.src.borrow().frames_sent();
        if xoff_at.is_none() && b.tb.get("xoff")? & 1 == 1 {
            xoff_at = Some((sent, b.tb.get("overflow")?));
        }
        if lost_at.is_none() && b.tb.get("overflow")? > 0 {
            lost_at = Some(sent);
        }
        if b.src.borrow().idle() {
            break;
        }
    }
    let (x_sent, x_lost) = xoff_at.context("XOFF never rose")?;
    let lost = lost_at.context("the buffer never filled")?;
    println!("XOFF after {x_sent} frames; the first frame lost was number {lost}");
    ensure!(x_lost == 0, "{x_lost} frames lost before XOFF");
    ensure!(
        (28..=40).contains(&x_sent),
        "XOFF after {x_sent} frames of 64 bytes, the mark is 2 KiB"
    );
    ensure!(
        lost >= 200,
        "a frame lost after {lost} of them: 16 KiB holds over 200 (records ran out?)"
    );
    ensure!(b.out.borrow().count() == 0);
    Ok(())
}

/// One frame of the lossy-limit test: a 700-byte MIDDLE packet tagged `vlan` (PCP, VID).
fn middle(r: &mut impl Rng, vlan: Option<(u8, u16)>) -> Result<Vec<u8>> {
    let mut p = TxPacket::random(r);
    p.opcode = ferroce_spec::opcodes::RC_RDMA_WRITE_MIDDLE;
    p.ext.clear();
    p.payload = (0..700).map(|_| r.gen()).collect();
    p.vlan = vlan;
    let mut f = p.frame_without_icrc();
    let n = f.len();
    let crc = ferroce_spec::icrc(&f).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    f[n - 4..].copy_from_slice(&crc.to_le_bytes());
    Ok(f)
}

#[test]
fn lossy_frames_cannot_eat_the_lossless_headroom() -> Result<()> {
    // Priority 3 is lossless (PFC on), 0 and 5 are not. The reader is stalled while 14
    // priority-3 frames and 20 lossy ones arrive interleaved, then released. With the limit
    // (lossy frames only while the buffer holds under the 4 KiB XOFF mark), every lossless
    // frame comes out, byte-exact and in order, and the lossy frames beyond the mark are
    // dropped and counted; with PFC off everywhere (no limit), the same arrivals fill the
    // 16 KiB buffer with lossy frames and lossless ones are lost.
    let s = seed("lossy_frames_cannot_eat_the_lossless_headroom");
    let mut r = rng(s);
    let (mut frames, mut lossless) = (Vec::new(), Vec::new());
    let mut lossy = 0;
    for i in 0..34 {
        if i % 2 == 0 && lossless.len() < 14 {
            let f = middle(&mut r, Some((3, 7)))?;
            lossless.push(f.clone());
            frames.push(f);
        } else {
            let vlan = if r.gen_bool(0.5) { None } else { Some((5, 7)) };
            frames.push(middle(&mut r, vlan)?);
            lossy += 1;
        }
    }
    let wired: Vec<Vec<u8>> = frames.iter().map(|f| wire(f)).collect();
    let mut results = Vec::new();
    for enable in [0x08u64, 0x00] {
        // Random gaps on the wire; the reader stalled until everything has arrived, then
        // reading with random back-pressure.
        let mut b = bench(s, 0.3, 1.0)?;
        b.tb.set("xoff_bytes", 4096)?;
        b.tb.set("xon_bytes", 2048)?;
        b.tb.set("pfc_enable", enable)?;
        for f in &wired {
            b.src.borrow_mut().send(f.clone());
        }
        let src = b.src.clone();
        b.tb.run_until(100_000, "input", |_| src.borrow().idle())?;
        b.out
            .borrow_mut()
            .set_pause_generator(PauseGenerator::random(s ^ 4, 0.3));
        let (got, counts) = run(&mut b, &Vec::<Vec<u8>>::new())?;
        let kept: Vec<&Vec<u8>> = got
            .iter()
            .filter(|f| f[14] >> 5 == 3 && f[12] == 0x81)
            .collect();
        let lossy_out = got.len() - kept.len();
        println!(
            "pfc_enable {enable:#04x}: {} of {} lossless frames out, {lossy_out} of {lossy} \
             lossy, {} dropped on overflow",
            kept.len(),
            lossless.len(),
            counts[5]
        );
        ensure!(
            got.len() as u64 + counts[5] == frames.len() as u64,
            "frames out and dropped do not add up: {counts:?}"
        );
        results.push((kept.into_iter().cloned().collect::<Vec<_>>(), lossy_out));
    }
    let (kept, lossy_out) = &results[0];
    ensure!(
        kept == &lossless,
        "with the limit, {} of {} lossless frames came out (or not byte-exact)",
        kept.len(),
        lossless.len()
    );
    ensure!(
        *lossy_out >= 1 && *lossy_out <= 7,
        "{lossy_out} lossy frames kept: the limit is 4 KiB of a 16 KiB buffer"
    );
    ensure!(
        results[1].0.len() < lossless.len(),
        "without the limit the lossless frames should have lost room to lossy ones"
    );
    Ok(())
}

#[test]
fn mac_control_frames_are_consumed_never_forwarded() -> Result<()> {
    // PFC and PAUSE frames (some with a bad FCS, some malformed) between RoCEv2 frames, with the
    // reader stalled now and then: no control frame comes out, none is counted as `not_roce`,
    // the good ones are acted on (`spec::mac_ctrl::parse` says how), the malformed ones
    // counted by reason, and every RoCEv2 frame passes byte-exact.
    use ferroce_spec::mac_ctrl::{self, MacCtrl, Malformed};
    let s = seed("mac_control_frames_are_consumed_never_forwarded");
    let mut r = rng(s);
    let mut b = bench(s, 0.3, 0.2)?;
    let (mut frames, mut want) = (Vec::new(), Vec::new());
    let (mut fcs_bad, mut pause, mut malformed) = (0u64, 0u64, [0u64; 3]);
    let mut pfc = [0u64; 8];
    for i in 0..300 {
        if i % 3 != 0 {
            let f = roce(&mut r)?;
            frames.push(wire(&f));
            let mut w = f.clone();
            w.resize(w.len().max(60), 0);
            want.push(w);
            continue;
        }
        let src = [2, 0, 0, 0, 0, r.gen()];
        let times = [1u16, 2, 3, 4, 5, 6, 7, 8];
        let mut c = match r.gen_range(0..6) {
            0 => mac_ctrl::pause_frame(src, r.gen_range(0..50)),
            1 => {
                let mut c = mac_ctrl::pfc_frame(src, 0xff, times);
                c[0] = 0x03;
                c
            }
            2 => {
                let mut c = mac_ctrl::pfc_frame(src, 0x01, times);
                c[15] = 0x02;
                c
            }
            3 => {
                let mut c = mac_ctrl::pfc_frame(src, 0x80, times);
                c[16] = 0x01;
                c
            }
            _ => mac_ctrl::pfc_frame(src, r.gen(), times),
        };
        if r.gen_bool(0.3) {
            c.resize(r.gen_range(60..200), 0);
        }
        let mut w = wire(&c);
        if r.gen_bool(0.1) {
            w[r.gen_range(0..c.len())] ^= 0x10;
            fcs_bad += 1;
        } else {
            match mac_ctrl::parse(&c) {
                MacCtrl::Pause { .. } => pause += 1,
                MacCtrl::Pfc { enable, .. } => (0..8)
                    .filter(|p| enable & (1 << p) != 0)
                    .for_each(|p| pfc[p] += 1),
                MacCtrl::Malformed(Malformed::BadDst) => malformed[0] += 1,
                MacCtrl::Malformed(Malformed::UnknownOpcode(_)) => malformed[1] += 1,
                MacCtrl::Malformed(Malformed::Reserved) => malformed[2] += 1,
                other => anyhow::bail!("unexpected {other:?}"),
            }
        }
        frames.push(w);
    }
    // Last, a PFC frame pausing priority 3 for the longest time: it stays paused.
    frames.push(wire(&mac_ctrl::pfc_frame(
        [2, 0, 0, 0, 0, 9],
        0x08,
        [0, 0, 0, 0xffff, 0, 0, 0, 0],
    )));
    pfc[3] += 1;
    let (got, counts) = run(&mut b, &frames)?;
    ensure!(
        got == want,
        "RoCEv2 frames: {} out, {} in",
        got.len(),
        want.len()
    );
    ensure!(
        counts == [fcs_bad, 0, 0, 0, 0, 0, 0, 0, 0],
        "counters {COUNTERS:?} = {counts:?} (FCS errors {fcs_bad})"
    );
    let pfc_rx = b.tb.model_ref().port("pfc_rx")?;
    let bytes = b.tb.model_ref().get_bytes(pfc_rx);
    let got_pfc: Vec<u64> = bytes
        .chunks(4)
        .map(|c| u64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    ensure!(got_pfc == pfc, "pfc_rx {got_pfc:?}, reference {pfc:?}");
    let got_mal = [
        b.tb.get("ctrl_bad_dst")?,
        b.tb.get("ctrl_bad_opcode")?,
        b.tb.get("ctrl_bad_reserved")?,
    ];
    ensure!(
        got_mal == malformed,
        "malformed {got_mal:?} vs {malformed:?}"
    );
    ensure!(b.tb.get("pause_rx")? == pause, "pause_rx");
    ensure!(
        b.tb.get("paused")? == 0x08,
        "priority 3 paused, the others not"
    );
    ensure!(pause > 5 && malformed.iter().all(|&m| m > 3), "variety");
    Ok(())
}
