//! The network half end to end on two Verilator models: the TX path (`ferroce_tx_64`: header
//! builder, ICRC, padding, FCS) feeds a wire into the RX path (`ferroce_rx_64`: MAC receive,
//! RX parser). Every packet sent must come out as the record and payload it went in as; a
//! frame damaged on the wire must be dropped and counted, with no byte of it reaching the
//! output; frames lost or delayed on the wire are gone or late, never reordered. The wire is
//! `ferroce_sim::Link` at 10 Gb/s with its pcap tap. Random idle cycles on the TX inputs,
//! random back-pressure on the RX outputs (the wire itself never waits).

use anyhow::{ensure, Result};
use ferroce_sim::{
    AxisSink, AxisSource, Fault, Link, LinkConfig, PauseGenerator, RecordSink, RecordSource,
};
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

    let n = 300;
    let pkts: Vec<TxPacket> = (0..n)
        .map(|_| {
            let mut p = TxPacket::random(&mut r);
            p.dst_mac = LOCAL_MAC;
            p.dst_ip = LOCAL_IP;
            p
        })
        .collect();
    for p in &pkts {
        meta_in.borrow_mut().send_bytes(vec![p.meta()]);
        pay_in.borrow_mut().send(p.payload.clone());
    }

    let link = Link::connect(&mut tx, "m_axis", &mut rx, "s_axis", LinkConfig::default())?;
    let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("loopback.pcap");
    link.tap(&pcap)?;
    let fate: Vec<Fault> = (0..n)
        .map(|i| match i % 10 {
            3 => Fault::Corrupt {
                offset: r.gen_range(0..60),
                mask: 1 << r.gen_range(0..8),
            },
            5 => Fault::Delay {
                ps: r.gen_range(0..2_000_000),
            },
            7 => Fault::Drop,
            _ => Fault::Pass,
        })
        .collect();
    let hook_fate = fate.clone();
    link.set_fault_hook(move |i, _| hook_fate.get(i as usize).copied().unwrap_or(Fault::Pass));
    let (mut quiet, mut last) = (0, (0, 0));
    let mut cycles = 0u64;
    while quiet < 500 {
        tx.rising_edge()?;
        rx.rising_edge()?;
        cycles += 1;
        ensure!(cycles < 2_000_000, "no end after {cycles} cycles");
        let now = (pay_out.borrow().beats(), meta_out.borrow().count());
        let idle = meta_in.borrow().idle() && pay_in.borrow().idle() && link.idle();
        quiet = if idle && now == last { quiet + 1 } else { 0 };
        last = now;
    }
    let frame = link.stats().frames as usize;
    ensure!(frame == n, "{frame} frames on the wire, want {n}");
    ensure!(
        pay_out.borrow().violations().is_empty() && meta_out.borrow().violations().is_empty(),
        "stream contract broken"
    );
    let delivered = |f: &Fault| matches!(f, Fault::Pass | Fault::Delay { .. });
    let want: Vec<(Vec<u8>, Vec<u8>)> = pkts
        .iter()
        .zip(&fate)
        .filter(|(_, f)| delivered(f))
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
    let dropped = fate
        .iter()
        .filter(|f| matches!(f, Fault::Corrupt { .. }))
        .count() as u64;
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
    // The tap: every frame as sent, without FCS, stamped with its start on the wire in ns;
    // a frame starts no sooner than the previous one's bytes, preamble and gap allow.
    ensure!(link.pcap_error().is_none(), "{:?}", link.pcap_error());
    let st = link.stats();
    ensure!(
        st.dropped == n as u64 / 10 && st.corrupted == dropped,
        "{st:?}"
    );
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&pcap)?)?;
    ensure!(
        reader.header().ts_resolution == pcap_file::TsResolution::NanoSecond,
        "pcap timestamps are not in ns"
    );
    let mut prev: Option<(u128, usize)> = None;
    let mut seen = 0;
    while let Some(p) = reader.next_packet() {
        let p = p?;
        let t = p.timestamp.as_nanos();
        if let Some((t0, len0)) = prev {
            // 0.8 ns per byte at 10 Gb/s: the frame, its FCS, preamble, SFD and gap.
            let min = ((len0 + 4 + 20) * 8).div_ceil(10) as u128;
            ensure!(
                t - t0 >= min,
                "frame {seen}: {} ns after the last, min {min}",
                t - t0
            );
        }
        // The frame as built, but for its ICRC (the last 4 bytes before any padding).
        let want = pkts[seen].frame_without_icrc();
        let k = want.len() - 4;
        ensure!(
            p.data.len() == want.len().max(60) && p.data[..k] == want[..k],
            "frame {seen}: the pcap holds another frame"
        );
        prev = Some((t, p.data.len()));
        seen += 1;
    }
    ensure!(seen == n, "{seen} frames in the pcap, want {n}");
    println!(
        "{n} packets: {} corrupted and dropped by FCS, {} lost on the wire, {} delayed, {} delivered in {cycles} cycles; pcap {}",
        st.corrupted,
        st.dropped,
        st.delayed,
        want.len(),
        pcap.display()
    );
    Ok(())
}
