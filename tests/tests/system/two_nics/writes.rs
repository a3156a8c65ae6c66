//! WRITEs both ways over an exact link, a corrupted frame, and a link that loses, corrupts,
//! duplicates and reorders.

use super::*;

#[test]
fn writes_both_ways_land_byte_exact_and_complete_in_order() -> Result<()> {
    let s = seed("writes_both_ways_land_byte_exact_and_complete_in_order");
    let mut r = rng(s);
    // 9 Gb/s: at 10 Gb/s both ways, 4 KiB packets in both directions at once load the 10g
    // configuration's 64-bit host interface (payload writes, payload reads, CQEs and WQE
    // fetches on one requester stream at the core clock) to ~100%, and without PFC
    // or retransmission a receive buffer that overflows loses a packet for good. Seen with
    // seed 1795394295742246628 at 10 Gb/s: one `rx_overflow` after ~600 of 1040 WRITEs.
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        link: ferroce_sim::LinkConfig {
            rate_bps: 9_000_000_000,
            ..Default::default()
        },
        ..WorldConfig::default()
    })?;
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (pab, pba) = (tmp.join("two_nics_ab.pcap"), tmp.join("two_nics_ba.pcap"));
    w.ab.tap(&pab)?;
    w.ba.tap(&pba)?;
    let (mut qa, mut qb) = (Vec::new(), Vec::new());
    let (mut psn_ab, mut psn_ba) = (HashMap::new(), HashMap::new());
    let (mut tags_ab, mut tags_ba) = (HashMap::new(), HashMap::new());
    for (k, pmtu) in PMTUS.iter().enumerate() {
        // One pair starts just below the PSN wrap each way.
        let (p1, p2) = if k == 1 {
            (0xFF_FFF0, 0xFF_FFFA)
        } else {
            (r.gen_range(0..0x100_0000), r.gen_range(0..0x100_0000))
        };
        // Two pairs send 802.1Q-tagged (their PFC priority; VLAN 0 is a priority tag only).
        let vlan = match k {
            2 => Some(Vlan { pcp: 3, vid: 100 }),
            3 => Some(Vlan { pcp: 5, vid: 0 }),
            _ => None,
        };
        let (a, b) = w.connect_tagged(*pmtu, p1, p2, 32, vlan)?;
        psn_ab.insert(u64::from(b.qpn), p1);
        psn_ba.insert(u64::from(a.qpn), p2);
        tags_ab.insert(u64::from(b.qpn), vlan);
        tags_ba.insert(u64::from(a.qpn), vlan);
        qa.push(Qp::new(a));
        qb.push(Qp::new(b));
    }
    let mut dab = dir(&mut r, &mut w.a, &mut w.b, PMTUS.len())?;
    let mut dba = dir(&mut r, &mut w.b, &mut w.a, PMTUS.len())?;
    let total = queue_writes(&mut r, (&mut qa, &mut qb), (&mut dab, &mut dba), soak(130));
    let bytes: u64 = qa
        .iter()
        .chain(&qb)
        .flat_map(|q| q.todo.iter())
        .map(|wr| wr.length())
        .sum();
    let start = w.cycle();
    let max_cycles: u64 = std::env::var("FERROCE_MAX_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(budget(20_000_000));
    let mut done = 0;
    while done < total {
        done += pump(&mut w.a, &mut qa, &mut r).with_context(|| format!("seed {s}: host a"))?;
        done += pump(&mut w.b, &mut qb, &mut r).with_context(|| format!("seed {s}: host b"))?;
        w.run(2000)?;
        if w.cycle() - start >= max_cycles {
            let mut faults = Vec::new();
            for (n, h) in [("a", &w.a), ("b", &w.b)] {
                for (c, v) in h.faults()? {
                    if v != 0 {
                        faults.push(format!("{n}.{c}={v}"));
                    }
                }
            }
            let left: Vec<(usize, usize)> = qa
                .iter()
                .chain(&qb)
                .map(|q| (q.out.len(), q.todo.len()))
                .collect();
            anyhow::bail!(
                "seed {s}: {done} of {total} completions after {} cycles; counters {faults:?}; outstanding/to post per QP {left:?}",
                w.cycle() - start
            );
        }
    }
    let cycles = w.cycle() - start;
    w.run(5000)?;
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 8)?.is_empty(),
        "extra CQE on a"
    );
    ensure!(
        w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(),
        "extra CQE on b"
    );
    // Memory: every target byte as expected, the guards and the gaps untouched.
    for (d, h) in [(&dab, &mut w.b), (&dba, &mut w.a)] {
        let mut got = vec![0u8; d.expect.len()];
        h.dev.mem.read(d.tgt_buf, &mut got)?;
        if let Some(i) = (0..got.len()).find(|&i| got[i] != d.expect[i]) {
            anyhow::bail!(
                "seed {s}: target byte {i:#x} is {:#04x}, want {:#04x}",
                got[i],
                d.expect[i]
            );
        }
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    for h in [&w.a, &w.b] {
        for (c, v) in h.faults()? {
            ensure!(v == 0, "seed {s}: {c} = {v}");
        }
        ensure!(h.counter("cpl_cqes")? == (total / 2) as u64);
        // Every frame's transmit credits came back: the beats the requester and the
        // responder reserved (`spec::meta::tx_frame_len`) are exactly the frames' beats.
        ensure!(
            h.tx_used()? == [0; 8],
            "seed {s}: credits left {:?}",
            h.tx_used()?
        );
    }
    ensure!(w.ab.pcap_error().is_none() && w.ba.pcap_error().is_none());
    drop(w);
    let (rq_ab, ack_ab) = check_pcap(&pab, &psn_ab, &tags_ab)?;
    let (rq_ba, ack_ba) = check_pcap(&pba, &psn_ba, &tags_ba)?;
    // At most one ACK per message and one per 64 request packets: the requester asks on a
    // message's last packet and on every 64th PSN, and an ACK still waiting to be sent is
    // replaced by a newer one for its QP (ACKs are cumulative; the completions above show
    // every message was covered). b's ACKs travel b -> a (for a's requests, `rq_ab`).
    ensure!(
        (1..=total / 2 + rq_ab / 64 + 1).contains(&ack_ba)
            && (1..=total / 2 + rq_ba / 64 + 1).contains(&ack_ab),
        "ACKs {ack_ab} {ack_ba} for {} messages and {rq_ab} + {rq_ba} packets each way",
        total / 2
    );
    println!(
        "seed {s}: {total} WRITEs, {bytes} bytes, {} + {} packets, {cycles} cycles: {:.2} B/cycle both ways",
        rq_ab,
        rq_ba,
        bytes as f64 / cycles as f64
    );
    Ok(())
}

/// A corrupted frame in the middle of a WRITE is dropped by the MAC (FCS); the responder NAKs
/// the gap once, the requester goes back to the lost PSN, and the WRITE lands whole and
/// completes once, with no timeout.
#[test]
fn a_corrupted_frame_is_dropped_and_the_write_recovers_by_one_sequence_nak() -> Result<()> {
    let s = seed("a_corrupted_frame_is_dropped_and_the_write_recovers_by_one_sequence_nak");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        rq_pause: 0.2,
        ..WorldConfig::default()
    })?;
    let mut qps = Vec::new();
    for _ in 0..4 {
        qps.push(w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?.0);
    }
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 4)?;
    // The fourth frame a sends (a middle packet of QP 0's 8 KiB WRITE) is corrupted.
    let hit = r.gen_range(100..1000);
    w.ab.set_fault_hook(move |i, _| {
        if i == 3 {
            Fault::Corrupt {
                offset: hit,
                mask: 0x10,
            }
        } else {
            Fault::Pass
        }
    })?;
    let wr = |k: usize, len: u32, remote: u64, rkey: u32, id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: len,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA) as u64 + remote,
        rkey,
        signaled: true,
        ..Default::default()
    };
    let rkey = d.tgt.rkey;
    w.a.dev.post_send(&mut qps[0], &[wr(0, 8192, 0, rkey, 1)])?;
    let a_naks = || w.a.counter("cpl_naks");
    w.run_until(200_000, "QP 0's packets and a NAK", || {
        a_naks().map(|n| n == 1).unwrap_or(true)
    })?;
    // The first three packets (3 KiB) landed; the corrupted one was dropped by the MAC, those
    // after it by the responder (PSN sequence error, one NAK); the NAK sends the requester
    // back to the corrupted packet's PSN, and the rest of the WRITE lands once.
    let mut wcs = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 200_000, "the WRITE sent again")?;
    w.run(5000)?;
    wcs.extend(w.a.dev.poll_cq(&mut w.a.cq, 8)?);
    ensure!(
        wcs.len() == 1 && (wcs[0].wr_id, wcs[0].status) == (1, WC_SUCCESS),
        "seed {s}: completions {wcs:?}"
    );
    d.expect[GUARD..GUARD + 8192].copy_from_slice(&d.src_bytes[..8192]);
    ensure!(w.b.counter("rx_fcs_err")? == 1, "FCS errors");
    let seq = w.b.counter("resp_seq_err")?;
    ensure!((1..=4).contains(&seq), "seed {s}: {seq} sequence errors");
    ensure!(w.a.counter("cpl_seq_naks")? == 1, "seed {s}: sequence NAKs");
    let again = w.a.counter("req_retrans")?;
    ensure!(
        (1..=5).contains(&again),
        "seed {s}: {again} packets sent again"
    );
    ensure!(w.a.counter("cpl_timeouts")? == 0, "seed {s}: a timeout");
    check_target(&w.b, &d, s)?;
    Ok(())
}

/// The same WRITEs both ways over links that lose, corrupt, duplicate and reorder frames
/// (both directions, from the seed): go-back-N retransmission on timeouts and sequence NAKs
/// delivers every WRITE exactly once, byte-exact, and completes each once, in order; the
/// retries show in the counters.
#[test]
fn writes_both_ways_survive_loss_corruption_duplication_and_reordering() -> Result<()> {
    let s = seed("writes_both_ways_survive_loss_corruption_duplication_and_reordering");
    let mut r = rng(s);
    let mut w = ferroce_tests::lossy_world(s, 0.02)?;
    let (mut qa, mut qb) = (Vec::new(), Vec::new());
    for pmtu in PMTUS {
        let (a, b) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
        qa.push(Qp::new(a));
        qb.push(Qp::new(b));
    }
    let mut dab = dir(&mut r, &mut w.a, &mut w.b, PMTUS.len())?;
    let mut dba = dir(&mut r, &mut w.b, &mut w.a, PMTUS.len())?;
    let total = queue_writes(&mut r, (&mut qa, &mut qb), (&mut dab, &mut dba), soak(16));
    let start = w.cycle();
    let max_cycles = budget(30_000_000);
    let mut done = 0;
    while done < total {
        done += pump(&mut w.a, &mut qa, &mut r).with_context(|| format!("seed {s}: host a"))?;
        done += pump(&mut w.b, &mut qb, &mut r).with_context(|| format!("seed {s}: host b"))?;
        w.run(2000)?;
        if w.cycle() - start >= max_cycles {
            let left: Vec<(usize, usize)> = qa
                .iter()
                .chain(&qb)
                .map(|q| (q.out.len(), q.todo.len()))
                .collect();
            anyhow::bail!(
                "seed {s}: {done} of {total} completions after {} cycles; a: {}; b: {}; outstanding/to post per QP {left:?}",
                w.cycle() - start,
                ferroce_tests::nonzero_counters(&w.a),
                ferroce_tests::nonzero_counters(&w.b),
            );
        }
    }
    let cycles = w.cycle() - start;
    w.run(5000)?;
    for h in [&mut w.a, &mut w.b] {
        ensure!(
            h.dev.poll_cq(&mut h.cq, 8)?.is_empty(),
            "seed {s}: a completion too many"
        );
    }
    check_target(&w.b, &dab, s)?;
    check_target(&w.a, &dba, s)?;
    let (sab, sba) = (w.ab.stats(), w.ba.stats());
    let count = |n: &str| -> Result<u64> { Ok(w.a.counter(n)? + w.b.counter(n)?) };
    let (retrans, timeouts, seq) = (
        count("req_retrans")?,
        count("cpl_timeouts")?,
        count("cpl_seq_naks")?,
    );
    println!(
        "seed {s}: {total} WRITEs in {cycles} cycles; links a->b {sab:?}, b->a {sba:?}; \
         {retrans} packets sent again, {timeouts} timeouts, {seq} sequence NAKs"
    );
    ensure!(
        retrans > 0 && seq > 0,
        "seed {s}: no retry seen ({retrans} retransmitted, {seq} sequence NAKs)"
    );
    for h in [&w.a, &w.b] {
        ensure!(h.counter("cpl_retry_exc")? == 0, "seed {s}: a QP gave up");
        ensure!(h.counter("cpl_cqes")? == (total / 2) as u64);
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    // The drivers read the same through BAR0's RC_STATS block; the NAKs one side decided
    // and the other received agree, but for those the link lost (or a newer ACK replaced).
    let st = [w.a.dev.rc_stats()?, w.b.dev.rc_stats()?];
    for (h, st) in [&w.a, &w.b].into_iter().zip(&st) {
        let want = [
            h.counter("req_retrans")?,
            h.counter("cpl_timeouts")?,
            h.counter("cpl_seq_naks")?,
            h.counter("cpl_rnr_naks")?,
            h.counter("resp_rnr")?,
            h.counter("resp_dup")?,
            h.counter("cpl_retry_exc")?,
            h.counter("cpl_ghosts")?,
            h.counter("fail_local")?,
            h.counter("req_pool_waits")?,
            h.counter("req_rsp_refused")?,
            h.counter("resp_jobs_full")?,
            h.counter("resp_bad_rkey")?,
        ];
        let got = [
            st.retrans,
            st.timeouts,
            st.seq_nak_rx,
            st.rnr_nak_rx,
            st.rnr_nak_tx,
            st.dup_rx,
            st.retry_exc,
            st.ghost_rx,
            st.local_fail,
            st.pool_wait,
            st.rsp_refused,
            st.jobs_full,
            st.key_refused,
        ]
        .map(u64::from);
        ensure!(
            got == want,
            "seed {s}: RC_STATS {st:?}, the NIC's ports {want:?}"
        );
        ensure!(
            u64::from(st.seq_nak_tx) <= h.counter("resp_seq_err")?,
            "seed {s}: more gaps NAKed than packets past a gap"
        );
    }
    // (A NAK the link duplicated is received twice.)
    for (tx, rx, link) in [(&st[1], &st[0], &sba), (&st[0], &st[1], &sab)] {
        ensure!(
            u64::from(rx.seq_nak_rx) <= u64::from(tx.seq_nak_tx) + link.duplicated
                && tx.seq_nak_tx > 0,
            "seed {s}: {} sequence NAKs decided, {} received",
            tx.seq_nak_tx,
            rx.seq_nak_rx
        );
    }
    println!("seed {s}: RC_STATS a {:?}; b {:?}", st[0], st[1]);
    Ok(())
}
