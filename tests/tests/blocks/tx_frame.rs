//! The TX framing path on Verilator, checked by outside references: the FCS by the `crc`
//! crate (zlib's CRC-32), the ICRC by scapy (`tests/py/roce_check.py` over a pcap of the
//! frames), the dissection by tshark (every frame RoCEv2 with the opcode, QP and PSN it was
//! given, nothing malformed), the headers by etherparse (`ferroce_tests::tx`). Random idle
//! cycles on the inputs and back-pressure on the output throughout.

use anyhow::{ensure, Context, Result};
use ferroce_sim::{AxisSink, AxisSource, PauseGenerator, RecordSource, Tb};
use ferroce_spec::opcodes::{opcode, ExtHeader};
use ferroce_tests::tx::{by_wire_order, TxPacket};
use ferroce_tests::wire::{scapy_check, strip_fcs, tshark_fields, write_pcap};
use ferroce_tests::{budget, rng, seed, soak};
use rand::Rng;
use std::path::PathBuf;

fn open(name: &str) -> Result<Tb> {
    Ok(ferroce_sim::designs::open_tb(
        name,
        &ferroce_sim::BuildOptions::default(),
    )?)
}

fn collect(tb: &mut Tb, out: &std::cell::RefCell<AxisSink>, n: usize) -> Result<Vec<Vec<u8>>> {
    tb.run_until(budget(3_000_000), "frames", |_| out.borrow().count() >= n)?;
    tb.clock_cycles(50)?;
    ensure!(
        out.borrow().violations().is_empty(),
        "{:?}",
        out.borrow().violations()
    );
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| out.borrow_mut().recv())
        .map(|f| f.data)
        .collect();
    ensure!(got.len() == n, "{} frames, expected {n}", got.len());
    Ok(got)
}

#[test]
fn mac_pads_short_frames_and_appends_the_zlib_fcs() -> Result<()> {
    let s = seed("mac_pads_short_frames_and_appends_the_zlib_fcs");
    let mut r = rng(s);
    let mut tb = open("ferroce_mac_tx_64")?;
    let src = AxisSource::new(&mut tb, "s_axis")?;
    let out = AxisSink::new(&mut tb, "m_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, 0.2));
    out.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, 0.3));
    let frames: Vec<Vec<u8>> = (0..soak(600))
        .map(|i| {
            let len = match i % 3 {
                0 => r.gen_range(0..=70),
                1 => r.gen_range(56..=68),
                _ => r.gen_range(0..=1600),
            };
            let mut f: Vec<u8> = (0..len).map(|_| r.gen()).collect();
            // Untagged, so all go through priority 0's queue in order (random bytes make an
            // 802.1Q TPID in one frame of 65,536, which the MAC queues by its PCP).
            if f.get(12..14) == Some(&[0x81, 0x00]) {
                f[12] = 0x08;
            }
            f
        })
        .collect();
    for f in &frames {
        src.borrow_mut().send(f.clone());
    }
    let got = collect(&mut tb, &out, frames.len())?;
    for (i, (g, f)) in got.iter().zip(&frames).enumerate() {
        let body = strip_fcs(i, g).with_context(|| format!("seed {s}"))?;
        let mut want = f.clone();
        if want.len() < 60 {
            want.resize(60, 0);
        }
        ensure!(
            body == want.as_slice(),
            "seed {s}: frame {i} ({} bytes): body differs\n got {body:02x?}\nwant {want:02x?}",
            f.len()
        );
    }
    ensure!(tb.get("bad_keep")? == 0, "bad_keep");
    Ok(())
}

#[test]
fn frames_pass_scapy_icrc_zlib_fcs_and_tshark() -> Result<()> {
    let s = seed("frames_pass_scapy_icrc_zlib_fcs_and_tshark");
    let mut r = rng(s);
    let mut tb = open("ferroce_tx_64")?;
    let meta = RecordSource::new(&mut tb, "s_meta", &["tdata"])?;
    let pay = AxisSource::new(&mut tb, "s_pay")?;
    let out = AxisSink::new(&mut tb, "m_axis")?;
    meta.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, 0.2));
    pay.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, 0.1));
    out.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, 0.3));
    let pkts: Vec<TxPacket> = (0..soak(300)).map(|_| TxPacket::random(&mut r)).collect();
    for p in &pkts {
        meta.borrow_mut().send_bytes(vec![p.meta()]);
        pay.borrow_mut().send(p.payload.clone());
    }
    let got = collect(&mut tb, &out, pkts.len())?;
    // The transmit queues send by priority: each frame is the next packet of its priority.
    let order = by_wire_order(&pkts, &got);
    let mut bodies = Vec::new();
    let mut sent = Vec::new();
    for (i, (g, p)) in got.iter().zip(&order).enumerate() {
        let p = p.with_context(|| format!("frame {i}: no packet of its priority left"))?;
        sent.push(p);
        let body = strip_fcs(i, g).with_context(|| format!("seed {s}"))?;
        // The frame, its ICRC slot taken from what came out (scapy checks it below), and
        // Ethernet padding when it is short.
        let mut want = p.frame_without_icrc();
        let n = want.len();
        want.resize(n.max(60), 0);
        ensure!(
            body.len() == want.len(),
            "frame {i}: {} bytes, expected {}",
            body.len(),
            want.len()
        );
        want[n - 4..n].copy_from_slice(&body[n - 4..n]);
        ensure!(
            body == want.as_slice(),
            "frame {i}: differs outside the ICRC (seed {s})"
        );
        bodies.push(body);
    }
    ensure!(tb.get("self_check")? == 0, "self_check");
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tx_frames.pcap");
    write_pcap(&pcap, &bodies)?;
    let ok = scapy_check(&pcap)?;
    ensure!(ok.trim() == format!("ok {}", pkts.len()), "scapy: {ok}");
    let rows = tshark_fields(&pcap)?;
    ensure!(rows.len() == pkts.len(), "tshark saw {} frames", rows.len());
    for (i, (row, p)) in rows.iter().zip(&sent).enumerate() {
        let be = |b: &[u8]| b.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
        // A RETH, an AtomicETH (whose VA tshark files under the same field) or an AETH comes
        // first in the extended headers when the opcode has one.
        let first = opcode(p.opcode).and_then(|o| o.ext.first().copied());
        let (va, msn) = match first {
            Some(ExtHeader::Reth | ExtHeader::AtomicEth) => {
                (format!("{:#018x}", be(&p.ext[..8])), String::new())
            }
            Some(ExtHeader::Aeth) => (String::new(), be(&p.ext[1..4]).to_string()),
            _ => (String::new(), String::new()),
        };
        // Expert notes (a low TTL) are fine; warnings and errors are not.
        let sev_ok = row.get(5).is_some_and(|sev| {
            sev.split(',')
                .all(|v| v.is_empty() || v.parse::<u64>().is_ok_and(|v| v < 0x0060_0000))
        });
        ensure!(sev_ok, "frame {i}: tshark expert warning or error {row:?}");
        let mut row = row.clone();
        row[5].clear();
        // Protocol, opcode, QP, PSN, nothing malformed, (expert), RETH VA, AETH MSN, 802.1Q
        // priority and VLAN.
        let want = [
            "RRoCE".to_string(),
            p.opcode.to_string(),
            format!("{:#08x}", p.dest_qp),
            p.psn.to_string(),
            String::new(),
            String::new(),
            va,
            msn,
            p.vlan.map(|v| v.0.to_string()).unwrap_or_default(),
            p.vlan.map(|v| v.1.to_string()).unwrap_or_default(),
        ];
        ensure!(
            row.len() == 15 && row[..10] == want,
            "frame {i}: tshark says {row:?}, expected {want:?}"
        );
        // AtomicETH swap/add and compare data, AtomicAckETH original data, where the opcode
        // has them (after an AETH for the last).
        let num = |k: usize| -> Result<Option<u64>> {
            Ok(if row[k].is_empty() {
                None
            } else {
                Some(ferroce_tests::wire::tshark_num(&row[k])?)
            })
        };
        let (sa, cmp, orig) = match first {
            Some(ExtHeader::AtomicEth) => {
                (Some(be(&p.ext[12..20])), Some(be(&p.ext[20..28])), None)
            }
            _ if opcode(p.opcode).is_some_and(|o| o.ext.contains(&ExtHeader::AtomicAckEth)) => {
                (None, None, Some(be(&p.ext[4..12])))
            }
            _ => (None, None, None),
        };
        ensure!(
            (num(12)?, num(13)?, num(14)?) == (sa, cmp, orig),
            "frame {i}: tshark atomic fields {row:?}, expected {sa:?} {cmp:?} {orig:?}"
        );
        // The ImmDt where the opcode has one (after the headers before it; tshark 3.6 lists
        // it twice), and the SE bit.
        let imm = opcode(p.opcode).and_then(|o| {
            let k = o.ext.iter().position(|h| *h == ExtHeader::ImmDt)?;
            let at: usize = o.ext[..k].iter().map(|h| h.size()).sum();
            Some(
                p.ext[at..at + 4]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
            )
        });
        ensure!(
            row[10]
                .split(',')
                .all(|x| x == imm.as_deref().unwrap_or("")),
            "frame {i}: tshark ImmDt {row:?}, expected {imm:?}"
        );
        ensure!(
            (row[11] == "1" || row[11] == "True") == p.se,
            "frame {i}: tshark SE {row:?}"
        );
    }
    println!(
        "{} frames: scapy {}, tshark RRoCE with opcode/QP/PSN",
        pkts.len(),
        ok.trim()
    );
    Ok(())
}

#[test]
fn scapy_check_catches_a_flipped_byte() -> Result<()> {
    // The ICRC check above means something only if it can fail.
    let p = TxPacket::random(&mut rng(7));
    let mut f = p.frame()?;
    let n = f.len();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let good = dir.join("tx_one_good.pcap");
    write_pcap(&good, &[&f])?;
    scapy_check(&good)?;
    f[n - 5] ^= 0x10;
    let bad = dir.join("tx_one_bad.pcap");
    write_pcap(&bad, &[&f])?;
    ensure!(
        scapy_check(&bad).is_err(),
        "scapy accepted a corrupted frame"
    );
    Ok(())
}

#[test]
fn full_size_frames_stream_at_one_beat_per_clock() -> Result<()> {
    // No idle, no back-pressure: 4096-byte payloads, a frame per (beats + 3) clocks at most
    // (the builder's gap, the FCS spilling into its own beat, one spare).
    let s = seed("full_size_frames_stream_at_one_beat_per_clock");
    let mut r = rng(s);
    let mut tb = open("ferroce_tx_64")?;
    let meta = RecordSource::new(&mut tb, "s_meta", &["tdata"])?;
    let pay = AxisSource::new(&mut tb, "s_pay")?;
    let out = AxisSink::new(&mut tb, "m_axis")?;
    let n = 20;
    for _ in 0..n {
        let mut p = TxPacket::random(&mut r);
        p.opcode = ferroce_spec::opcodes::RC_RDMA_WRITE_MIDDLE;
        p.ext.clear();
        p.payload = (0..4096).map(|_| r.gen()).collect();
        meta.borrow_mut().send_bytes(vec![p.meta()]);
        pay.borrow_mut().send(p.payload.clone());
    }
    // Count from the first beat out to the last.
    let o = out.clone();
    tb.run_until(10_000, "first beat", |_| o.borrow().beats() > 0)?;
    let start = tb.cycle();
    let got = collect(&mut tb, &out, n)?;
    let cycles = tb.cycle() - 50 - start;
    let beats: u64 = got.iter().map(|f| f.len().div_ceil(8) as u64).sum();
    println!(
        "{n} frames of {} bytes: {beats} beats in {cycles} cycles",
        got[0].len()
    );
    ensure!(
        cycles <= beats + 3 * n as u64,
        "{beats} beats took {cycles} cycles"
    );
    Ok(())
}

/// `MacTx`'s output contract for a PHY that cannot wait (XGMII, a hard MAC): once a frame's
/// first beat is out, one beat leaves every clock to its last while `m_axis_tready` holds. The
/// input pauses at random (the queues absorb that); `m_axis_tready` drops at random between
/// frames only (an interframe gap), never inside one. Frames of 0 to 8,000 bytes, FCS by zlib.
#[test]
fn mac_frames_leave_one_beat_per_clock_once_started() -> Result<()> {
    one_beat_per_clock(
        "mac_frames_leave_one_beat_per_clock_once_started",
        "ferroce_mac_tx_64",
        "m_axis",
    )
}

/// The same at 512 bits: the 100G MAC's transmit face (`ferroce_mac_512`, `tx_axis`), for a
/// hard MAC's packet interface.
#[test]
fn mac_512_frames_leave_one_beat_per_clock_once_started() -> Result<()> {
    one_beat_per_clock(
        "mac_512_frames_leave_one_beat_per_clock_once_started",
        "ferroce_mac_512",
        "tx_axis",
    )
}

fn one_beat_per_clock(name: &str, design: &str, out: &str) -> Result<()> {
    let s = seed(name);
    let mut r = rng(s);
    let mut tb = open(design)?;
    let src = AxisSource::new(&mut tb, "s_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, 0.3));
    let frames: Vec<Vec<u8>> = (0..soak(400))
        .map(|i| {
            let len = match i % 4 {
                0 => r.gen_range(0..=80),
                1 => r.gen_range(56..=72),
                2 => r.gen_range(0..=1600),
                _ => r.gen_range(0..=8000),
            };
            let mut f: Vec<u8> = (0..len).map(|_| r.gen()).collect();
            // Untagged, so all go through priority 0's queue in order (random bytes make an
            // 802.1Q TPID in one frame of 65,536, which the MAC queues by its PCP).
            if f.get(12..14) == Some(&[0x81, 0x00]) {
                f[12] = 0x08;
            }
            f
        })
        .collect();
    for f in &frames {
        src.borrow_mut().send(f.clone());
    }
    let m = tb.model_ref();
    let (data, keep) = (
        m.port(&format!("{out}_tdata"))?,
        m.port(&format!("{out}_tkeep"))?,
    );
    let (valid_p, last_p, ready_p) = (
        m.port(&format!("{out}_tvalid"))?,
        m.port(&format!("{out}_tlast"))?,
        m.port(&format!("{out}_tready"))?,
    );
    let lanes = data.width / 8;
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    let mut ready = true;
    let mut budget = ferroce_tests::budget(3_000_000);
    while got.len() < frames.len() {
        budget = budget
            .checked_sub(1)
            .context("frames did not all come out")?;
        if cur.is_none() {
            ready = r.gen_bool(0.7);
        }
        tb.model().set(ready_p, u64::from(ready))?;
        let valid = tb.model_ref().get(valid_p) == 1;
        if let Some(c) = &mut cur {
            ensure!(
                valid,
                "seed {s}: frame {} paused after {} bytes",
                got.len(),
                c.len()
            );
        }
        if valid && ready {
            let m = tb.model_ref();
            let (d, k) = (m.get_bytes(data), m.get(keep));
            let c = cur.get_or_insert_with(Vec::new);
            c.extend((0..lanes).filter(|l| k >> l & 1 == 1).map(|l| d[l]));
            if tb.model_ref().get(last_p) == 1 {
                got.extend(cur.take());
            }
        }
        tb.rising_edge()?;
    }
    for (i, (g, f)) in got.iter().zip(&frames).enumerate() {
        let body = strip_fcs(i, g).with_context(|| format!("seed {s}"))?;
        let mut want = f.clone();
        want.resize(want.len().max(60), 0);
        ensure!(body == want.as_slice(), "seed {s}: frame {i} differs");
    }
    Ok(())
}
