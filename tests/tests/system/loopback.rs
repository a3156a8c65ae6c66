//! The network half end to end on two Verilator models: the TX path (`ferroce_tx_64`: header
//! builder, ICRC, padding, FCS) feeds a wire into the RX path (`ferroce_rx_64`: MAC receive,
//! RX parser). Every packet sent must come out as the record and payload it went in as; a
//! frame damaged on the wire must be dropped and counted, with no byte of it reaching the
//! output; frames lost or delayed on the wire are gone or late, never reordered within a
//! priority (40% of the packets carry an 802.1Q tag of a random PCP). The wire is
//! `ferroce_sim::Link` at 10 Gb/s with its pcap tap. Random idle cycles on the TX inputs,
//! random back-pressure on the RX outputs (the wire itself never waits).

use anyhow::{ensure, Result};
use ferroce_sim::{
    AxisSink, AxisSource, Fault, Link, LinkConfig, PauseGenerator, RecordSink, RecordSource,
};
use ferroce_spec::meta::RX_META;
use ferroce_tests::rx::{be, diff, record_of};
use ferroce_tests::tx::{wire_prio, TxPacket};
use ferroce_tests::{budget, rng, seed, soak};
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

    let n = soak(300);
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
    // A packet's fate follows it, whatever its place on the wire (priorities reorder): the
    // frame is known by its first 34 bytes (random addresses).
    let key = |f: &[u8]| f[..34].to_vec();
    let by_frame: std::collections::HashMap<Vec<u8>, Fault> = pkts
        .iter()
        .zip(&fate)
        .map(|(p, f)| (key(&p.frame_without_icrc()), *f))
        .collect();
    ensure!(
        by_frame.len() == n,
        "two random packets share their headers"
    );
    link.set_fault_hook(move |_, f| by_frame.get(&key(f)).copied().unwrap_or(Fault::Pass));
    let (mut quiet, mut last) = (0, (0, 0));
    let mut cycles = 0u64;
    while quiet < 500 {
        tx.rising_edge()?;
        rx.rising_edge()?;
        cycles += 1;
        ensure!(cycles < budget(2_000_000), "no end after {cycles} cycles");
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
    // The transmit queues send by priority (strict, VLAN PCP, untagged 0), so packets keep
    // their order within a priority; a higher one may overtake.
    let delivered = |f: &Fault| matches!(f, Fault::Pass | Fault::Delay { .. });
    let mut want: [Vec<(Vec<u8>, Vec<u8>)>; 8] = Default::default();
    for (p, _) in pkts.iter().zip(&fate).filter(|(_, f)| delivered(f)) {
        want[p.prio()].push((record_of(p, (false, false, false)), p.payload.clone()));
    }
    let mut got: [Vec<(Vec<u8>, Vec<u8>)>; 8] = Default::default();
    while let Some(mut m) = meta_out.borrow_mut().recv_bytes() {
        let p = pay_out
            .borrow_mut()
            .recv()
            .map(|f| f.data)
            .unwrap_or_default();
        let rec = m.remove(0);
        let pcp = RX_META.get(&RX_META.field("pcp"), &rec) as usize;
        got[pcp].push((rec, p));
    }
    for q in 0..8 {
        for (i, (g, w)) in got[q].iter().zip(&want[q]).enumerate() {
            ensure!(
                g.0 == w.0,
                "priority {q} packet {i}: record differs: {:?}",
                diff(&g.0, &w.0)
            );
            ensure!(g.1 == w.1, "priority {q} packet {i}: payload differs");
        }
        ensure!(
            got[q].len() == want[q].len(),
            "priority {q}: {} packets out, want {}",
            got[q].len(),
            want[q].len()
        );
    }
    let want_n: usize = want.iter().map(Vec::len).sum();
    let dropped = fate
        .iter()
        .filter(|f| matches!(f, Fault::Corrupt { .. }))
        .count() as u64;
    let c = |name: &str| rx.get(name);
    ensure!(
        c("fcs_err")? == dropped && c("accepted")? == want_n as u64,
        "fcs_err {} accepted {}, want {dropped} and {}",
        c("fcs_err")?,
        c("accepted")?,
        want_n
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
    let mut sent: [std::collections::VecDeque<&TxPacket>; 8] = Default::default();
    for p in &pkts {
        sent[p.prio()].push_back(p);
    }
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
        // The frame as built, but for its ICRC (the last 4 bytes before any padding): the
        // next one of its priority.
        let q = wire_prio(&p.data);
        let next = sent[q].pop_front();
        ensure!(
            next.is_some(),
            "frame {seen}: priority {q} had no frame left"
        );
        let want = next.map(TxPacket::frame_without_icrc).unwrap_or_default();
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
        want_n,
        pcap.display()
    );
    Ok(())
}
