//! Sending again: a SEND with no receive WQE posted (RNR NAK, its timer, `rnr_retry`), SENDs
//! RNR NAKed until receives are posted, a peer that stops answering (`timeout`, `retry_cnt`).

use super::*;

/// A SEND (and a WRITE with immediate) with no receive WQE posted: the responder answers RNR
/// NAK with the timer code of its QP's `min_rnr_timer` (set at random with an RTS -> RTS
/// modify; read off the wire by etherparse) and counts it; the sender, its `rnr_retry` 0,
/// completes the request with RNR_RETRY_EXC_ERR and flushes the one behind it; nothing is
/// written and the receiver sees no completion. Out-of-range attributes and attributes on the
/// wrong transition are refused.
#[test]
fn a_send_with_no_receive_posted_is_rnr_naked_and_writes_nothing() -> Result<()> {
    let s = seed("a_send_with_no_receive_posted_is_rnr_naked_and_writes_nothing");
    let mut r = rng(s);
    for (i, op) in [WrOpcode::Send, WrOpcode::RdmaWriteWithImm]
        .into_iter()
        .enumerate()
    {
        let no_retry = RetryAttrs {
            rnr_retry: Some(0),
            ..RetryAttrs::default()
        };
        let mut p = pair_with(&mut r, 1024, no_retry)?;
        let timer: u8 = r.gen_range(0..=31);
        let set = |t: u8| QpAttr {
            min_rnr_timer: Some(t),
            ..QpAttr::default()
        };
        ensure!(
            p.w.b
                .dev
                .modify_qp(&mut p.qb, QpState::Rts, set(32))
                .is_err(),
            "min_rnr_timer 32 taken"
        );
        let late = QpAttr {
            timeout: Some(3),
            ..QpAttr::default()
        };
        ensure!(
            p.w.b.dev.modify_qp(&mut p.qb, QpState::Rts, late).is_err(),
            "timeout taken on RTS -> RTS"
        );
        p.w.b.dev.modify_qp(&mut p.qb, QpState::Rts, set(timer))?;
        let syndromes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = syndromes.clone();
        p.w.ba.set_fault_hook(move |_, f| {
            if let Ok(Some(pk)) = ferroce_interop::wire::parse(&f[..f.len() - 4]) {
                if let Some(syn) = pk.syndrome {
                    seen.borrow_mut().push(syn);
                }
            }
            Fault::Pass
        })?;
        let len = r.gen_range(1..=3000);
        let wrs = [
            send_wr(&p.d, 1, op, len),
            send_wr(&p.d, 2, WrOpcode::Send, 16),
        ];
        p.w.a.dev.post_send(&mut p.qa, &wrs)?;
        let got = completions(&mut p.w, false, 2, s)?;
        let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        ensure!(
            st == [(1, WC_RNR_RETRY_EXC_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: {op:?}: sender completions {st:?}"
        );
        p.w.run(5000)?;
        ensure!(
            p.w.b.counter("resp_rnr")? >= 1,
            "seed {s}: {op:?}: resp_rnr"
        );
        let rnr: Vec<u8> = syndromes
            .borrow()
            .iter()
            .copied()
            .filter(|s| s & 0xE0 == AETH_RNR_NAK)
            .collect();
        ensure!(
            !rnr.is_empty() && rnr.iter().all(|&x| x == AETH_RNR_NAK | timer),
            "seed {s}: {op:?}: RNR NAK syndromes {rnr:x?}, min_rnr_timer {timer}"
        );
        ensure!(
            p.w.b.counter("rq_empty")? >= 1,
            "seed {s}: {op:?}: rq_empty"
        );
        ensure!(
            p.w.b.dev.poll_cq(&mut p.w.b.cq, 8)?.is_empty(),
            "seed {s}: {op:?}: a receive completion"
        );
        // A WRITE with immediate of more than a packet has written its first packets
        // before its last found no WQE (IBA: the data of a message RNR NAKed at its last
        // packet may be in place); a SEND has written nothing.
        if i == 0 || len <= 1024 {
            p.d.check(&mut p.w.b, &format!("seed {s}: {op:?}"))?;
        }
    }
    Ok(())
}
/// SENDs that find no receive WQE are RNR NAKed and sent again, each time no sooner than the
/// NAK's delay (IBA table 45, the responder's `min_rnr_timer`) after the NAK, for as long as
/// `rnr_retry` 7 (without end) allows; once receives are posted both land, byte-exact, and
/// complete once on both sides.
#[test]
fn sends_rnr_naked_are_sent_again_after_the_naks_delay_until_receives_are_posted() -> Result<()> {
    use ferroce_interop::wire::packets;
    use ferroce_spec::headers::RNR_TIMER_US;
    let s = seed("sends_rnr_naked_are_sent_again_after_the_naks_delay_until_receives_are_posted");
    let mut r = rng(s);
    let mut p = pair(&mut r, 1024)?;
    let code: u8 = r.gen_range(1..=5);
    let attr = QpAttr {
        min_rnr_timer: Some(code),
        ..QpAttr::default()
    };
    p.w.b.dev.modify_qp(&mut p.qb, QpState::Rts, attr)?;
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (pab, pba) = (tmp.join("rnr_wait_ab.pcap"), tmp.join("rnr_wait_ba.pcap"));
    p.w.ab.tap(&pab)?;
    p.w.ba.tap(&pba)?;
    let lens = [r.gen_range(1..=3000usize), r.gen_range(0..=64usize)];
    let wrs: Vec<SendWr> = lens
        .iter()
        .enumerate()
        .map(|(i, &len)| send_wr(&p.d, i as u64 + 1, WrOpcode::Send, len))
        .collect();
    p.w.a.dev.post_send(&mut p.qa, &wrs)?;
    let mut waited = 0;
    while p.w.b.counter("resp_rnr")? < 3 {
        p.w.run(1000)?;
        waited += 1000;
        ensure!(
            waited < 400_000,
            "seed {s}: {} RNR NAKs",
            p.w.b.counter("resp_rnr")?
        );
    }
    ensure!(
        p.w.a.dev.poll_cq(&mut p.w.a.cq, 8)?.is_empty(),
        "seed {s}: a completion before any receive was posted"
    );
    // Both messages land one after the other in the area.
    let mut recvs = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let off = p.d.take(&mut r, 0, len);
        let bytes = p.d.src_bytes[..len].to_vec();
        p.d.land(off, &bytes);
        recvs.push(RecvWr {
            wr_id: 100 + i as u64,
            sg_list: vec![Sge {
                addr: p.d.addr(off),
                length: len as u32,
                lkey: p.d.area.lkey,
            }],
        });
    }
    p.w.b.dev.post_recv(&mut p.qb, &recvs)?;
    let got = completions(&mut p.w, false, 2, s)?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [(1, WC_SUCCESS), (2, WC_SUCCESS)],
        "seed {s}: sender {st:?}"
    );
    let got = completions(&mut p.w, true, 2, s)?;
    let st: Vec<(u64, u32, u32)> = got
        .iter()
        .map(|c| (c.wr_id, c.status, c.byte_len))
        .collect();
    ensure!(
        st == [
            (100, WC_SUCCESS, lens[0] as u32),
            (101, WC_SUCCESS, lens[1] as u32)
        ],
        "seed {s}: receiver {st:?}"
    );
    p.w.run(5000)?;
    ensure!(
        p.w.b.dev.poll_cq(&mut p.w.b.cq, 8)?.is_empty()
            && p.w.a.dev.poll_cq(&mut p.w.a.cq, 8)?.is_empty(),
        "seed {s}: a completion too many"
    );
    p.d.check(&mut p.w.b, &format!("seed {s}"))?;
    let naks = p.w.a.counter("cpl_rnr_naks")?;
    ensure!(naks >= 3, "seed {s}: cpl_rnr_naks {naks}");
    ensure!(
        p.w.a.counter("cpl_retry_exc")? == 0,
        "seed {s}: cpl_retry_exc"
    );
    // On the wire: after each RNR NAK, the NAKed PSN comes again no sooner than the delay.
    drop(p.w);
    let (reqs, answers) = (packets(&pab)?, packets(&pba)?);
    let delay_ns = (RNR_TIMER_US[usize::from(code)] * 1000.0) as u64;
    let mut checked = 0;
    for nak in answers
        .iter()
        .filter(|a| a.syndrome.is_some_and(|x| x & 0xE0 == AETH_RNR_NAK))
    {
        ensure!(
            nak.syndrome == Some(AETH_RNR_NAK | code),
            "seed {s}: RNR NAK syndrome {:?}, code {code}",
            nak.syndrome
        );
        if let Some(again) = reqs
            .iter()
            .find(|q| q.psn == nak.psn && q.time_ns > nak.time_ns)
        {
            let gap = again.time_ns - nak.time_ns;
            ensure!(
                gap >= delay_ns && gap <= delay_ns + 10_000,
                "seed {s}: PSN {:#x} sent again {gap} ns after its RNR NAK, delay {delay_ns} ns",
                nak.psn
            );
            checked += 1;
        }
    }
    ensure!(checked >= 3, "seed {s}: {checked} RNR waits seen");
    println!(
        "seed {s}: {checked} RNR waits of code {code} ({delay_ns} ns), then both SENDs landed"
    );
    Ok(())
}
/// A peer that stops answering one QP: with `timeout` t and `retry_cnt` n, the oldest work
/// request is sent n + 1 times, `4.096 us x 2^t` apart (each timeout fires within one scan of
/// the timers, 1.64 us, after its deadline; the timer starts when the request's last packet
/// is handed to the transmit path, at most 3 us before its first is on the wire), then
/// completes RETRY_EXC_ERR; the QP reads ERR,
/// its later work requests (and one posted afterwards) complete WR_FLUSH_ERR, and another QP
/// to the same peer goes on untouched.
#[test]
fn a_peer_that_stops_answering_fails_the_qp_after_its_retries_and_others_go_on() -> Result<()> {
    use ferroce_interop::wire::packets;
    use ferroce_spec::queues::WC_RETRY_EXC_ERR;
    let s = seed("a_peer_that_stops_answering_fails_the_qp_after_its_retries_and_others_go_on");
    let mut r = rng(s);
    let (t, n): (u8, u8) = (r.gen_range(2..=4), r.gen_range(0..=3));
    let mut w = World::open(&WorldConfig::default())?;
    w.retry = RetryAttrs {
        timeout: Some(t),
        retry_cnt: Some(n),
        ..RetryAttrs::default()
    };
    let (mut q1a, q1b) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let (mut q2a, _q2b) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let d = side(&mut r, &mut w.a, &mut w.b, 2)?;
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let pab = tmp.join("stopped_peer_ab.pcap");
    w.ab.tap(&pab)?;
    // Every frame to QP 1 at b is lost: b never hears of it, never answers.
    let dead = q1b.qpn;
    w.ab.set_fault_hook(move |_, f| {
        if u32::from_be_bytes([0, f[47], f[48], f[49]]) == dead {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let wr = |id: u64, len: usize| {
        let mut x = send_wr(&d, id, WrOpcode::RdmaWrite, len);
        x.remote_addr = d.area.addr + (id % 8) * 8192;
        x
    };
    let start = w.cycle();
    w.a.dev
        .post_send(&mut q1a, &[wr(1, 3000), wr(2, 100), wr(3, 0)])?;
    w.a.dev.post_send(&mut q2a, &[wr(4, 2000), wr(5, 64)])?;
    let period_ns = 6.4;
    let tick_ns = 4096.0 * f64::from(1u32 << t);
    let mut got: Vec<(u64, u32, u64)> = Vec::new();
    while got.iter().filter(|c| c.0 <= 3).count() < 3 {
        w.run(50)?;
        for c in w.a.dev.poll_cq(&mut w.a.cq, 8)? {
            got.push((c.wr_id, c.status, w.cycle()));
        }
        ensure!(
            (w.cycle() - start) as f64 * period_ns < 2.0 * tick_ns * f64::from(n + 2) + 100_000.0,
            "seed {s}: QP 1 still waiting: {got:?}"
        );
    }
    let mut rest = completions(&mut w, false, 5 - got.len(), s)?;
    got.extend(rest.drain(..).map(|c| (c.wr_id, c.status, 0)));
    let on1: Vec<(u64, u32)> = got
        .iter()
        .filter(|c| c.0 <= 3)
        .map(|c| (c.0, c.1))
        .collect();
    let on2: Vec<(u64, u32)> = got.iter().filter(|c| c.0 > 3).map(|c| (c.0, c.1)).collect();
    ensure!(
        on1 == [
            (1, WC_RETRY_EXC_ERR),
            (2, WC_WR_FLUSH_ERR),
            (3, WC_WR_FLUSH_ERR)
        ],
        "seed {s}: QP 1 {on1:?}"
    );
    ensure!(
        on2 == [(4, WC_SUCCESS), (5, WC_SUCCESS)],
        "seed {s}: QP 2 {on2:?}"
    );
    let ctx = w.a.dev.query_qp(&q1a)?;
    ensure!(
        ctx.state == Some(QpState::Err),
        "seed {s}: QP 1 reads {:?}",
        ctx.state
    );
    w.a.dev.post_send(&mut q1a, &[wr(6, 10)])?;
    let later = completions(&mut w, false, 1, s)?;
    ensure!(
        (later[0].wr_id, later[0].status) == (6, WC_WR_FLUSH_ERR),
        "seed {s}: posted after: {:?}",
        later[0]
    );
    ensure!(
        w.a.counter("cpl_retry_exc")? == 1,
        "seed {s}: cpl_retry_exc"
    );
    ensure!(
        w.a.counter("cpl_timeouts")? == u64::from(n) + 1,
        "seed {s}: cpl_timeouts {}",
        w.a.counter("cpl_timeouts")?
    );
    // The time: from the first packet to the failure, n + 1 timeouts.
    let failed_ns = got[got.iter().position(|c| c.0 == 1).unwrap_or(0)].2 as f64 * period_ns;
    drop(w);
    let sent: Vec<u64> = packets(&pab)?
        .iter()
        .filter(|q| q.dest_qp == dead && q.opcode == RC_RDMA_WRITE_FIRST)
        .map(|q| q.time_ns)
        .collect();
    ensure!(
        sent.len() == usize::from(n) + 1,
        "seed {s}: the first WRITE sent {} times, retry_cnt {n}",
        sent.len()
    );
    let first = sent[0] as f64;
    let took = failed_ns - first;
    let want = f64::from(n + 1) * tick_ns;
    ensure!(
        took >= want - 3_000.0 && took <= want + f64::from(n + 1) * 2_000.0 + 5_000.0,
        "seed {s}: failed {took:.0} ns after the first packet, want {want:.0} ns (timeout {t}, retry_cnt {n})"
    );
    for pair in sent.windows(2) {
        let gap = (pair[1] - pair[0]) as f64;
        ensure!(
            gap >= tick_ns - 1_000.0 && gap <= tick_ns + 4_096.0,
            "seed {s}: sent again {gap:.0} ns later, timeout {tick_ns:.0} ns"
        );
    }
    println!(
        "seed {s}: timeout {t}, retry_cnt {n}: {} sends, RETRY_EXC_ERR {took:.0} ns after the first (want {want:.0})",
        sent.len()
    );
    Ok(())
}
