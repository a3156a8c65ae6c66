//! Long WRITEs: a 2 GiB message resumed near its end, a timeout inside a long write.

use super::*;

/// A 2 GiB RDMA WRITE at path MTU 256 is 2^23 packets, half the PSN space: the most one
/// message may span. Simulating all of them takes hours, so a's QP is set (a context write
/// with `init_sq`, as after a yield, and `una` at that point) to resume the message `K`
/// packets before its end, with the message's first PSN chosen so its last packets cross the
/// 24-bit PSN wrap. a's
/// requester sends those `K` packets (MIDDLE, then LAST) from the 2 GiB region's last bytes;
/// they are caught on the wire (b, which never saw the FIRST, would NAK them), and b's
/// answer is played by hand: an ACK one PSN short of the last leaves the request outstanding
/// (its 2^23 PSNs are not all acknowledged), the ACK of the last completes it with its byte
/// count, 2^31.
#[test]
fn a_2_gib_write_at_pmtu_256_resumed_near_its_end_completes_on_its_last_ack() -> Result<()> {
    const K: u32 = 200;
    const PKTS: u32 = 1 << 23;
    const LEN: u64 = 1 << 31;
    let s = seed("a_2_gib_write_at_pmtu_256_resumed_near_its_end_completes_on_its_last_ack");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    // The message's first PSN: its resume point below the wrap, its last packet past it.
    let first = (1 << 24) - PKTS + r.gen_range(1..K - 1);
    let (mut qp, _) = w.connect(256, first - 1, 7, 16)?;
    let d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    // One ordinary WRITE first: its ACK, caught on b's wire, is the template of the answers.
    let acks: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let log = acks.clone();
    w.ba.set_fault_hook(move |_, f| {
        log.borrow_mut().push(f[..f.len() - 4].to_vec());
        Fault::Pass
    })?;
    let small = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: 64,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qp, &[small])?;
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 100_000, "the small WRITE")?;
    ensure!((wcs[0].wr_id, wcs[0].status) == (1, WC_SUCCESS), "{wcs:?}");
    let ack = acks.borrow().last().cloned().context("b's ACK")?;
    ensure!(
        ack[42] == RC_ACKNOWLEDGE,
        "b's answer, opcode {:#x}",
        ack[42]
    );
    // The 2 GiB region: untouched zero pages but for the tail the requester will send.
    let buf = w.a.dev.mem.alloc(LEN as usize, 4096)?;
    let tail_off = LEN - u64::from(K) * 256;
    let mut tail = vec![0u8; (K * 256) as usize];
    r.fill(&mut tail[..]);
    w.a.dev.mem.write(buf.addr + tail_off, &tail)?;
    let mr =
        w.a.dev
            .reg_mr(&w.a.pd, buf.addr, LEN, ferroce_driver::access::LOCAL_WRITE)?;
    // Resume the QP's next WQE `K` packets before its end.
    let mut img = w.a.dev.read_context(TABLE_QP, qp.qpn, QP_CTX.len)?;
    let put = |img: &mut Vec<u8>, name: &str, v: u128| QP_CTX.set(&QP_CTX.field(name), img, v);
    put(&mut img, "init_sq", 1);
    put(&mut img, "sq_psn", ((first + PKTS - K) & 0xFF_FFFF).into());
    put(&mut img, "sq_pkts", (PKTS - K).into());
    // (Everything before the resume point acknowledged: the requester's window, 1024 PSNs
    // past `una`, would hold a QP with 2^23 PSNs unacknowledged.)
    put(&mut img, "una_psn", ((first + PKTS - K) & 0xFF_FFFF).into());
    w.a.dev.write_context(TABLE_QP, qp.qpn, &img)?;
    // a's packets caught, none delivered.
    let caught: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let c = caught.clone();
    w.ab.set_fault_hook(move |_, f| {
        c.borrow_mut().push(f[..f.len() - 4].to_vec());
        Fault::Drop
    })?;
    let big = SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: buf.addr,
            length: LEN as u32,
            lkey: mr.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qp, &[big])?;
    w.run_until(budget(2_000_000), "the message's last packets", || {
        caught.borrow().len() >= K as usize
    })?;
    w.run(2000)?;
    let frames = caught.borrow().clone();
    ensure!(frames.len() == K as usize, "{} packets sent", frames.len());
    let last = (first + PKTS - 1) & 0xFF_FFFF;
    for (i, f) in frames.iter().enumerate() {
        let psn = (first + PKTS - K + i as u32) & 0xFF_FFFF;
        let op = if i + 1 == K as usize {
            RC_RDMA_WRITE_LAST
        } else {
            RC_RDMA_WRITE_MIDDLE
        };
        let got_psn = u32::from_be_bytes([0, f[51], f[52], f[53]]);
        ensure!(
            (f[42], got_psn) == (op, psn),
            "seed {s}: packet {i}: opcode {:#x} PSN {got_psn:#x}, want {op:#x} {psn:#x}",
            f[42]
        );
        // BTH, 256 bytes of payload, ICRC: the region's bytes at the packet's offset.
        let (_, end) = ferroce_spec::icrc::parse(f)?;
        ensure!(
            end == 54 + 256,
            "seed {s}: packet {i}: payload ends at {end}"
        );
        ensure!(
            f[54..end] == tail[i * 256..(i + 1) * 256],
            "seed {s}: packet {i}: payload"
        );
        let ic = ferroce_spec::icrc::icrc(f)?;
        ensure!(
            f[end..end + 4] == ic.to_le_bytes(),
            "seed {s}: packet {i}: ICRC"
        );
    }
    // b's answers, by hand: an ACK (syndrome ACK, MSN 2) for a PSN, its ICRC recomputed.
    let answer = |psn: u32| -> Result<Vec<u8>> {
        let mut f = ack.clone();
        f[51..54].copy_from_slice(&psn.to_be_bytes()[1..]);
        f[55..58].copy_from_slice(&2u32.to_be_bytes()[1..]);
        let (_, end) = ferroce_spec::icrc::parse(&f)?;
        let ic = ferroce_spec::icrc::icrc(&f)?;
        f[end..end + 4].copy_from_slice(&ic.to_le_bytes());
        Ok(f)
    };
    w.ba.inject(0, &answer((last + 0xFF_FFFF) & 0xFF_FFFF)?);
    w.run(5000)?;
    wcs = w.a.dev.poll_cq(&mut w.a.cq, 4)?;
    ensure!(
        wcs.is_empty(),
        "seed {s}: completed on the ACK one PSN short: {wcs:?}"
    );
    w.ba.inject(0, &answer(last)?);
    a_completions(&mut w, &mut wcs, 1, 100_000, "the 2 GiB WRITE's completion")?;
    let c = &wcs[0];
    ensure!(
        (c.wr_id, c.status, c.opcode, u64::from(c.byte_len)) == (2, WC_SUCCESS, WC_RDMA_WRITE, LEN),
        "seed {s}: {c:?}"
    );
    let q = w.a.dev.query_qp(&qp)?;
    ensure!(
        (q.sq_psn, q.una_psn) == ((last + 1) & 0xFF_FFFF, (last + 1) & 0xFF_FFFF),
        "seed {s}: after the message: {q:?}"
    );
    println!(
        "2 GiB WRITE at PMTU 256: PSNs {first:#08x}..={last:#08x}, the last {K} packets sent \
         and checked, completed with byte_len {}",
        c.byte_len
    );
    Ok(())
}

/// A long WRITE (`MAX_UNACKED_PSNS` + 500 packets at PMTU 256) whose packets from the 150th
/// on are lost until the first retry, so b never hears of them and never NAKs. b's ACKs of the
/// packets a asked for (AckReq on every PSN that is 63 mod 64) move a's `una` to the last
/// such PSN before the loss, plus one. a sends on until `MAX_UNACKED_PSNS` PSNs past `una` are
/// out and stops there (its window); its ACK timer then goes back to `una`, inside the
/// message, not to its start: every packet from `una` on is sent a second time (a MIDDLE at
/// its own PSN; `req_retrans` counts exactly the window), the ones before it once; b ACKs
/// those it had again without writing them (`resp_dup`), sees no gap (no sequence NAK), and
/// the WRITE lands byte-exact and completes once.
#[test]
fn a_timeout_inside_a_long_write_goes_back_to_its_last_ack_and_the_window_stops_it() -> Result<()> {
    use ferroce_spec::headers::{ACKREQ_PSN_MASK, MAX_UNACKED_PSNS};
    use std::collections::HashSet;
    const LOSE: u32 = 150;
    let s = seed("a_timeout_inside_a_long_write_goes_back_to_its_last_ack_and_the_window_stops_it");
    let mut r = rng(s);
    // Memory requests held back at random on both sides (PFC on: no loss but the test's).
    let mut w = ferroce_tests::lossless_world(s)?;
    // 524 us: longer than the window takes to send (~0.3 ms at 10G).
    w.retry.timeout = Some(7);
    let psn0: u32 = r.gen_range(0..1 << 24);
    let (mut qa, _qb) = w.connect(256, psn0, r.gen_range(0..1 << 24), 16)?;
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    let n = MAX_UNACKED_PSNS + 500;
    let len = n as usize * 256 - r.gen_range(0..200);
    let src_off = r.gen_range(0..=SRC_LEN - len);
    d.expect[GUARD..GUARD + len].copy_from_slice(&d.src_bytes[src_off..src_off + len]);
    // a's packets as they pass: (offset from the first PSN, opcode); from offset LOSE on, all
    // lost until one is sent a second time.
    let sent: Rc<RefCell<Vec<(u32, u8)>>> = Rc::default();
    let log = sent.clone();
    let (mut seen, mut retrying) = (HashSet::new(), false);
    w.ab.set_fault_hook(move |_, f| {
        let off = u32::from_be_bytes([0, f[51], f[52], f[53]]).wrapping_sub(psn0) & 0xFF_FFFF;
        log.borrow_mut().push((off, f[42]));
        retrying |= !seen.insert(off);
        if !retrying && off >= LOSE {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let wr = SendWr {
        wr_id: 7,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr + src_off as u64,
            length: len as u32,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[wr])?;
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 3_000_000, "the long WRITE")?;
    ensure!(
        (wcs[0].wr_id, wcs[0].status, wcs[0].byte_len as usize) == (7, WC_SUCCESS, len),
        "seed {s}: {:?}",
        wcs[0]
    );
    w.run(2000)?;
    check_target(&w.b, &d, s)?;
    // `una` when the packets stopped coming: one past the last AckReq PSN before the loss.
    let every = ACKREQ_PSN_MASK + 1;
    let una = ((psn0 + LOSE) & 0xFF_FFFF) / every * every;
    let u = una.wrapping_sub(psn0) & 0xFF_FFFF;
    let log = sent.borrow().clone();
    // The first pass sends offsets 0, 1, 2, ... in order; the retry starts where that ends.
    let again = log
        .iter()
        .enumerate()
        .position(|(i, x)| x.0 != i as u32)
        .context("no packet sent twice")?;
    let top = again as u32 - 1;
    ensure!(
        top == u + MAX_UNACKED_PSNS - 1,
        "seed {s}: sent to offset {top} before the timeout, want {} (una at offset {u}, window \
         {MAX_UNACKED_PSNS})",
        u + MAX_UNACKED_PSNS - 1
    );
    ensure!(
        log[again] == (u, RC_RDMA_WRITE_MIDDLE),
        "seed {s}: the retry starts with {:?}, want offset {u} (MIDDLE)",
        log[again]
    );
    let rest: Vec<u32> = log[again..].iter().map(|x| x.0).collect();
    let jumps: Vec<(u32, u32)> = rest
        .windows(2)
        .filter(|p| p[1] != p[0] + 1)
        .map(|p| (p[0], p[1]))
        .collect();
    ensure!(
        rest == (u..n).collect::<Vec<u32>>(),
        "seed {s}: the retry sends offsets {}..{} ({} packets, jumps {jumps:?}), want {u}..{n}; \
         counters: {}",
        rest.first().copied().unwrap_or(0),
        rest.last().copied().unwrap_or(0),
        rest.len(),
        ferroce_tests::nonzero_counters(&w.a)
    );
    let counts = [
        ("req_win_stops", w.a.counter("req_win_stops")?),
        ("req_retrans", w.a.counter("req_retrans")?),
        ("cpl_timeouts", w.a.counter("cpl_timeouts")?),
        ("cpl_seq_naks", w.a.counter("cpl_seq_naks")?),
        ("resp_dup", w.b.counter("resp_dup")?),
        ("resp_seq_err", w.b.counter("resp_seq_err")?),
    ];
    ensure!(
        counts[0].1 >= 1
            && counts[1].1 == u64::from(MAX_UNACKED_PSNS)
            && counts[2].1 == 1
            && counts[3].1 == 0
            && counts[4].1 == u64::from(LOSE - u)
            && counts[5].1 == 0,
        "seed {s}: counters {counts:?} (una at offset {u})"
    );
    println!(
        "seed {s}: {n} packets, lost from {LOSE}: stopped at offset {top} (una {u} + window \
         {MAX_UNACKED_PSNS} - 1), timed out once, went on from offset {u}; {counts:?}"
    );
    Ok(())
}
