//! The network half end to end on two Verilator models: the TX path (`ferroce_tx_64`: header
//! builder, ICRC, padding, FCS) feeds a wire into the RX path (`ferroce_rx_64`: MAC receive,
//! RX parser). Every packet sent must come out as the record and payload it went in as; a
//! frame damaged on the wire must be dropped and counted, with no byte of it reaching the
//! output. Random idle cycles on the TX inputs, random back-pressure on the RX outputs (the
//! wire itself never waits).

use anyhow::{ensure, Result};
use ferroce_sim::{AxisSink, AxisSource, PauseGenerator, RecordSink, RecordSource};
use ferroce_tests::rx::{be, diff, record_of};
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{rng, seed};
use rand::Rng;

const LOCAL_MAC: [u8; 6] = [0x02, 0x00, 0x5E, 0x10, 0x20, 0x30];
const LOCAL_IP: [u8; 4] = [10, 0, 0, 2];

#[test]
fn packets_cross_the_wire_byte_exact_and_damaged_frames_are_dropped() -> Result<()> {
    let s = seed("packets_cross_the_wire_byte_exact_and_damaged_frames_are_dropped");
    let mut r = rng(s);
    let opts = ferroce_sim::BuildOptions::default();
    let mut tx = ferroce_sim::designs::open_tb("ferroce_tx_64", &opts)?;
    let mut rx = ferroce_sim::designs::open_tb("ferroce_rx_64", &opts)?;
    rx.set("local_mac", be(&LOCAL_MAC) as u64)?;
    rx.set("local_ip", be(&LOCAL_IP) as u64)?;
    let meta_in = RecordSource::new(&mut tx, "s_meta", &["tdata"])?;
    let pay_in = AxisSource::new(&mut tx, "s_pay")?;
    let meta_out = RecordSink::new(&mut rx, "m_meta", &["tdata"])?;
    let pay_out = AxisSink::new(&mut rx, "m_axis")?;
    meta_in
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, 0.2));
    pay_in
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, 0.2));
    meta_out
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, 0.2));
    pay_out
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 4, 0.2));
    tx.set("m_axis_tready", 1)?;

    let n = 300;
    let pkts: Vec<TxPacket> = (0..n)
        .map(|_| {
            let mut p = TxPacket::random(&mut r);
            p.dst_mac = LOCAL_MAC;
            p.dst_ip = LOCAL_IP;
            p
        })
        .collect();
    // Frames to damage on the wire (one bit, somewhere in the frame).
    let damaged: Vec<bool> = (0..n).map(|i| i % 10 == 3).collect();
    for p in &pkts {
        meta_in.borrow_mut().send_bytes(vec![p.meta()]);
        pay_in.borrow_mut().send(p.payload.clone());
    }

    let port = |tb: &ferroce_sim::Tb, n: &str| tb.model_ref().port(n);
    let (td, tk, tl, tv) = (
        port(&tx, "m_axis_tdata")?,
        port(&tx, "m_axis_tkeep")?,
        port(&tx, "m_axis_tlast")?,
        port(&tx, "m_axis_tvalid")?,
    );
    let (rd, rk, rl, rv) = (
        port(&rx, "s_axis_tdata")?,
        port(&rx, "s_axis_tkeep")?,
        port(&rx, "s_axis_tlast")?,
        port(&rx, "s_axis_tvalid")?,
    );
    let (mut frame, mut beat_in_frame) = (0usize, 0u64);
    let mut flip_at = None;
    let (mut quiet, mut last) = (0, (0, 0));
    let mut cycles = 0u64;
    while quiet < 500 {
        // The wire: what TX shows after its edge goes into RX before RX's next edge.
        let (d, k, l, v) = {
            let m = tx.model_ref();
            (m.get(td), m.get(tk), m.get(tl), m.get(tv))
        };
        let mut d = d;
        if v == 1 {
            if beat_in_frame == 0 && frame < n && damaged[frame] {
                // Frames are at least 8 beats: beats 0..7 are full.
                flip_at = Some((r.gen_range(0..7u64), r.gen_range(0..64u32)));
            }
            if let Some((b, bit)) = flip_at {
                if b == beat_in_frame {
                    d ^= 1 << bit;
                    flip_at = None;
                }
            }
            beat_in_frame += 1;
            if l == 1 {
                frame += 1;
                beat_in_frame = 0;
                flip_at = None;
            }
        }
        let m = rx.model();
        m.set(rd, d)?;
        m.set(rk, k)?;
        m.set(rl, l)?;
        m.set(rv, v)?;
        tx.rising_edge()?;
        rx.rising_edge()?;
        cycles += 1;
        ensure!(cycles < 2_000_000, "no end after {cycles} cycles");
        let now = (pay_out.borrow().beats(), meta_out.borrow().count());
        let idle = meta_in.borrow().idle() && pay_in.borrow().idle();
        quiet = if idle && now == last { quiet + 1 } else { 0 };
        last = now;
    }
    ensure!(frame == n, "{frame} frames on the wire, want {n}");
    ensure!(
        pay_out.borrow().violations().is_empty() && meta_out.borrow().violations().is_empty(),
        "stream contract broken"
    );
    let want: Vec<(Vec<u8>, Vec<u8>)> = pkts
        .iter()
        .zip(&damaged)
        .filter(|(_, d)| !**d)
        .map(|(p, _)| (record_of(p, (false, false, false)), p.payload.clone()))
        .collect();
    let mut got = Vec::new();
    while let Some(mut m) = meta_out.borrow_mut().recv_bytes() {
        let p = pay_out
            .borrow_mut()
            .recv()
            .map(|f| f.data)
            .unwrap_or_default();
        got.push((m.remove(0), p));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        ensure!(
            g.0 == w.0,
            "packet {i}: record differs: {:?}",
            diff(&g.0, &w.0)
        );
        ensure!(g.1 == w.1, "packet {i}: payload differs");
    }
    ensure!(
        got.len() == want.len(),
        "{} packets out, want {}",
        got.len(),
        want.len()
    );
    let dropped = damaged.iter().filter(|d| **d).count() as u64;
    let c = |name: &str| rx.get(name);
    ensure!(
        c("fcs_err")? == dropped && c("accepted")? == want.len() as u64,
        "fcs_err {} accepted {}, want {dropped} and {}",
        c("fcs_err")?,
        c("accepted")?,
        want.len()
    );
    for name in [
        "runt",
        "not_roce",
        "frame_len_err",
        "icrc_err",
        "overflow",
        "self_check",
        "unsupported",
        "bad_csum",
        "bad_mac",
        "bad_ip",
        "bad_opcode",
        "bad_len",
        "truncated",
    ] {
        ensure!(c(name)? == 0, "{name} = {}", c(name)?);
    }
    ensure!(tx.get("self_check")? == 0, "TX self_check");
    println!(
        "{n} packets, {dropped} damaged on the wire and dropped, {} delivered in {cycles} cycles",
        want.len()
    );
    Ok(())
}
