//! RDMA READ between two `ferroce_nic_64` models: the requester sends READ REQUEST, the peer's
//! responder reads its host memory by DMA and answers READ RESPONSE FIRST/MIDDLE/LAST/ONLY,
//! and the requester writes the bytes into the READ's local SGEs before its completion. READs
//! mixed with WRITEs on one QP (a WRITE's ACK may not overtake a READ's response), sizes
//! from 0 B to 1 MiB across PMTUs, 1-4 local SGEs at odd offsets; every byte and the guards
//! around the local buffers checked, every completion exact and in order. Then the refusals:
//! a region without REMOTE_READ, a wrong rkey, a range past the region (NAK remote access
//! error, REM_ACCESS_ERR, nothing written), a READ WQE forged into the ring whose local
//! buffer may not be written (LOC_PROT_ERR, no packet).

use anyhow::{ensure, Context, Result};
use ferroce_driver::{
    access, DmaMemory, QpState, QueuePair, SendWr, Sge, WorkCompletion, WrOpcode,
};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::{
    WC_LOC_PROT_ERR, WC_RDMA_READ, WC_RDMA_WRITE, WC_REM_ACCESS_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR,
    WQE_LEN,
};
use ferroce_tests::{budget, guarded, lossless_world, nonzero_counters, rng, seed, soak};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const SRC_LEN: usize = 2 << 20;
/// a's area: a round's READs (one of 1 MiB at most, the rest 64 KiB at most) fit in it.
const AREA: usize = 4 << 20;
const GUARD: usize = 4096;
/// The longest READ the lossy test posts. Each lost response costs a resume, every later
/// request of the QP sent again (go-back-N) and the packets of the streams it made stale
/// until the peer cuts them; the peer tells a rewind's first duplicate from a later one of
/// the same rewind only by PSN order, so a stream of an earlier rewind queued behind one
/// may still run to its end. A READ of thousands of packets at the test's 3.5 % of faults
/// takes longer than the test's patience (1 MiB at PMTU 256: about 140 losses).
const LOSSY_READ_MAX: usize = 64 << 10;

/// Run until `n` completions have come on host a's CQ.
fn reap(w: &mut World, n: usize, s: u64, what: &str) -> Result<Vec<WorkCompletion>> {
    let mut got = Vec::new();
    let mut idle = 0;
    while got.len() < n {
        w.run(2000)?;
        let more = w.a.dev.poll_cq(&mut w.a.cq, 64)?;
        idle = if more.is_empty() { idle + 2000 } else { 0 };
        got.extend(more);
        ensure!(
            idle < budget(1_000_000),
            "seed {s}: {what}: {} of {n} completions; a: {}; b: {}",
            got.len(),
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    Ok(got)
}

fn read_len(r: &mut ChaCha8Rng, pmtu: usize) -> usize {
    match r.gen_range(0..100) {
        0..=7 => 0,
        8..=30 => r.gen_range(1..=64),
        31..=55 => pmtu - 1 + r.gen_range(0..3),
        56..=75 => 3 * pmtu + r.gen_range(0..pmtu),
        76..=80 => r.gen_range(48 << 10..=64 << 10),
        _ => r.gen_range(65..=8 << 10),
    }
}

/// READs and WRITEs in random lists on one QP pair at each PMTU: host a reads host b's
/// source into its guarded area and writes into b's; every byte of a's area (guards
/// included) and every completion is exact, in order.
#[test]
fn reads_land_in_local_sges_in_order_with_writes_between() -> Result<()> {
    let s = seed("reads_land_in_local_sges_in_order_with_writes_between");
    // READ responses arrive at line rate while a's memory writes are held back at random.
    reads_with_writes_between(s, lossless_world(s)?, soak(6), false)
}

/// The same over links that lose, corrupt, duplicate and reorder frames both ways: a READ
/// whose request or responses are lost is sent again and served again (the peer answers a
/// duplicate READ request from memory; a READ goes on from its first missing response), and
/// every byte still lands exactly, every completion once and in order; READs up to 64 KiB
/// (`LOSSY_READ_MAX`), streams a retry made stale cut short by the peer.
#[test]
fn reads_with_writes_between_survive_a_lossy_link() -> Result<()> {
    let s = seed("reads_with_writes_between_survive_a_lossy_link");
    let w = ferroce_tests::lossy_world(s, 0.01)?;
    reads_with_writes_between(s, w, soak(12), true)
}

fn reads_with_writes_between(s: u64, mut w: World, rounds: usize, lossy: bool) -> Result<()> {
    let mut r = rng(s);
    // b's source (remote readable), a's area (its READs land there).
    let g = guarded(
        &mut r,
        &mut w.b,
        &mut w.a,
        (SRC_LEN, AREA, GUARD),
        access::LOCAL_WRITE,
    )?;
    let mut expect = g.expect.clone();
    let target = w.b.buffer(1 << 16, &vec![0u8; 1 << 16])?;
    let mut qps: Vec<(QueuePair, usize)> = Vec::new();
    for pmtu in [256u32, 1024, 4096] {
        let (qa, _qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
        qps.push((qa, pmtu as usize));
    }
    let mut at;
    let mut id = 0u64;
    let (mut nreads, mut bytes) = (0usize, 0usize);
    for round in 0..rounds {
        let mut want: Vec<WorkCompletion> = Vec::new();
        // Each round lands from the area's start again (the last one's bytes are checked).
        at = 0;
        let mut big = false;
        for (qa, pmtu) in qps.iter_mut() {
            let mut list = Vec::new();
            for _ in 0..r.gen_range(2..=8) {
                id += 1;
                if r.gen_bool(0.3) {
                    // A WRITE from a's area to b (its ACK must wait for the READ responses
                    // before it on the QP at b).
                    let len = r.gen_range(0..=3000u32);
                    list.push(SendWr {
                        wr_id: id,
                        opcode: WrOpcode::RdmaWrite,
                        sg_list: vec![Sge {
                            addr: g.region.addr + u64::from(r.gen_range(0..1000u32)),
                            length: len,
                            lkey: g.region.lkey,
                        }],
                        remote_addr: target.addr + u64::from(r.gen_range(0..1000u32)),
                        rkey: target.rkey,
                        signaled: true,
                        ..Default::default()
                    });
                    want.push(WorkCompletion {
                        wr_id: id,
                        status: WC_SUCCESS,
                        opcode: WC_RDMA_WRITE,
                        byte_len: len,
                        qpn: qa.qpn,
                        ..Default::default()
                    });
                    continue;
                }
                // A READ: `len` bytes of b's source into 1-4 local SGEs of a's area.
                let len = if lossy {
                    read_len(&mut r, *pmtu).min(LOSSY_READ_MAX)
                } else if !big && r.gen_ratio(1, 20) {
                    big = true;
                    1 << 20
                } else {
                    read_len(&mut r, *pmtu)
                };
                let from = r.gen_range(0..=SRC_LEN - len);
                let n = r.gen_range(1..=4usize);
                let mut cuts: Vec<usize> = (1..n).map(|_| r.gen_range(0..=len)).collect();
                cuts.sort_unstable();
                let mut sg_list = Vec::new();
                let mut prev = 0;
                for c in cuts.into_iter().chain([len]) {
                    let p = c - prev;
                    at += r.gen_range(0..48);
                    ensure!(at + p <= AREA, "seed {s}: the area is used up");
                    expect[GUARD + at..GUARD + at + p]
                        .copy_from_slice(&g.src_bytes[from + prev..from + c]);
                    sg_list.push(Sge {
                        addr: g.region.addr + at as u64,
                        length: p as u32,
                        lkey: g.region.lkey,
                    });
                    at += p;
                    prev = c;
                }
                list.push(SendWr {
                    wr_id: id,
                    opcode: WrOpcode::RdmaRead,
                    sg_list,
                    remote_addr: g.src.addr + from as u64,
                    rkey: g.src.rkey,
                    signaled: true,
                    ..Default::default()
                });
                want.push(WorkCompletion {
                    wr_id: id,
                    status: WC_SUCCESS,
                    opcode: WC_RDMA_READ,
                    byte_len: len as u32,
                    qpn: qa.qpn,
                    ..Default::default()
                });
                nreads += 1;
                bytes += len;
            }
            w.a.dev.post_send(qa, &list)?;
        }
        let got = reap(&mut w, want.len(), s, &format!("round {round}"))?;
        // In order per QP.
        for (qa, _) in &qps {
            let g1: Vec<&WorkCompletion> = got.iter().filter(|c| c.qpn == qa.qpn).collect();
            let w1: Vec<&WorkCompletion> = want.iter().filter(|c| c.qpn == qa.qpn).collect();
            ensure!(
                g1 == w1,
                "seed {s}: round {round}: QP {}: {g1:?}, want {w1:?}",
                qa.qpn
            );
        }
        let mut mem = vec![0u8; expect.len()];
        w.a.dev.mem.read(g.buf, &mut mem)?;
        if let Some(i) = (0..mem.len()).find(|&i| mem[i] != expect[i]) {
            anyhow::bail!(
                "seed {s}: round {round}: byte {i} of a's buffer (area offset {}) is {:#04x}, \
                 want {:#04x}",
                i as i64 - GUARD as i64,
                mem[i],
                expect[i]
            );
        }
    }
    for h in [&w.a, &w.b] {
        // (Over a lossy link a duplicated or re-served response meets no READ: dropped.)
        ensure!(
            lossy || h.counter("resp_bad_resp")? == 0,
            "seed {s}: stray responses"
        );
        ensure!(h.counter("resp_bad_rkey")? == 0, "seed {s}: keys refused");
        ensure!(h.counter("cpl_retry_exc")? == 0, "seed {s}: a QP gave up");
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    // Each READ issued and accepted once (sent again, it is neither).
    ensure!(w.a.counter("req_reads")? == nreads as u64);
    ensure!(w.b.counter("resp_reads")? == nreads as u64);
    let again = w.a.counter("req_retrans")?;
    ensure!(
        !lossy || again > 0,
        "seed {s}: no retransmission over a lossy link"
    );
    println!(
        "seed {s}: {nreads} READs, {bytes} bytes, with WRITEs between: exact ({again} packets \
         sent again, {} duplicate requests served again or ACKed, {} stale streams cut)",
        w.b.counter("resp_dup")?,
        w.b.counter("req_cuts")?
    );
    Ok(())
}

/// A 1 MiB READ (256 responses at PMTU 4096) whose responses are lost goes on from its first
/// missing response (IBA 9.7.4.1.4, as rxe): a's requester asks for the rest only (a READ
/// REQUEST at the missing PSN, its RETH's address and length past the responses landed), b
/// serves it as a duplicate READ and cuts the stream it was sending short, a takes the new
/// stream's FIRST as a MIDDLE (an ONLY as a LAST), and every byte lands exactly in the READ's
/// four SGEs (cut at odd offsets, so the resume points fall inside SGEs). b's response
/// streams, each named by the PSN of its FIRST (ONLY), lose by plan:
/// - the first (+0) loses +50: asked for again at once, after three later responses (no
///   timeout), and b ends the first stream within 40 packets of +50 (not at +255);
/// - the one from +50 loses +120: asked for at once too (another PSN than the last retry's);
/// - the one from +120 loses its own FIRST: the same PSN as the last retry's, so its skips
///   ask nothing more (no pile-up of streams) and it runs to its end; then an ACK timeout
///   (the responses still coming kept the timer from firing before) asks for +120 again;
/// - the next from +120 loses +200: at once; the one from +200 loses +255, the last, which
///   leaves nothing to skip: an ACK timeout;
/// - with `retry_cnt` 2, the QP does not give up: each retry of the READ landed more, but
///   the two at +120.
///
/// The requests are at +0, +50, +120, +120, +200 and +255, and nothing else; b cut three
/// streams short. Both NICs' memory requests are held back at random (PFC keeps the link
/// lossless but for the plan).
#[test]
fn a_read_goes_on_from_its_first_missing_response() -> Result<()> {
    use ferroce_sim::Fault;
    use std::cell::RefCell;
    use std::rc::Rc;
    let s = seed("a_read_goes_on_from_its_first_missing_response");
    let mut r = rng(s);
    let mut w = ferroce_tests::lossless_world(s)?;
    w.retry.timeout = Some(6);
    w.retry.retry_cnt = Some(2);
    let len = 1usize << 20;
    let g = guarded(
        &mut r,
        &mut w.b,
        &mut w.a,
        (SRC_LEN, len + 4096, GUARD),
        access::LOCAL_WRITE,
    )?;
    let (mut qa, _qb) = w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    // a's READ requests as they pass (PSN, RETH address, RETH length); b's response streams
    // (first PSN, last PSN seen, relative to the first request's), and what each loses.
    let reqs: Rc<RefCell<Vec<(u32, u64, u32)>>> = Rc::default();
    let log = reqs.clone();
    w.ab.set_fault_hook(move |_, f| {
        if f[42] == 0x0C {
            let psn = u32::from_be_bytes([0, f[51], f[52], f[53]]);
            let va = u64::from_be_bytes(f[54..62].try_into().expect("8 bytes"));
            let rlen = u32::from_be_bytes(f[66..70].try_into().expect("4 bytes"));
            log.borrow_mut().push((psn, va, rlen));
        }
        Fault::Pass
    })?;
    const PLAN: [(u32, u32); 6] = [
        (0, 50),
        (50, 120),
        (120, 120),
        (120, 200),
        (200, 255),
        (255, 256),
    ];
    let streams: Rc<RefCell<Vec<(u32, u32)>>> = Rc::default();
    let (first, seen) = (reqs.clone(), streams.clone());
    w.ba.set_fault_hook(move |_, f| {
        let Some(&(p0, _, _)) = first.borrow().first() else {
            return Fault::Pass;
        };
        if !(0x0D..=0x10).contains(&f[42]) {
            return Fault::Pass;
        }
        let off = u32::from_be_bytes([0, f[51], f[52], f[53]]).wrapping_sub(p0) & 0xFF_FFFF;
        let mut st = seen.borrow_mut();
        if f[42] == 0x0D || f[42] == 0x10 {
            st.push((off, off));
        }
        let k = st.len().saturating_sub(1);
        if let Some(e) = st.last_mut() {
            e.1 = off;
        }
        match PLAN.get(k) {
            Some(&(_, lose)) if lose == off => Fault::Drop,
            _ => Fault::Pass,
        }
    })?;
    let from = r.gen_range(0..=SRC_LEN - len);
    let mut expect = g.expect.clone();
    let (mut sg_list, mut at, mut prev) = (Vec::new(), 0usize, 0usize);
    let mut cuts: Vec<usize> = (0..3).map(|_| r.gen_range(1..len)).collect();
    cuts.sort_unstable();
    for c in cuts.into_iter().chain([len]) {
        at += r.gen_range(0..1000);
        expect[GUARD + at..GUARD + at + c - prev]
            .copy_from_slice(&g.src_bytes[from + prev..from + c]);
        sg_list.push(Sge {
            addr: g.region.addr + at as u64,
            length: (c - prev) as u32,
            lkey: g.region.lkey,
        });
        at += c - prev;
        prev = c;
    }
    ensure!(at <= len + 4096, "seed {s}: the SGEs fit the area");
    let va = g.src.addr + from as u64;
    w.a.dev.post_send(
        &mut qa,
        &[SendWr {
            wr_id: 7,
            opcode: WrOpcode::RdmaRead,
            sg_list,
            remote_addr: va,
            rkey: g.src.rkey,
            signaled: true,
            ..Default::default()
        }],
    )?;
    let got = reap(&mut w, 1, s, "the READ")?;
    let want = WorkCompletion {
        wr_id: 7,
        status: WC_SUCCESS,
        opcode: WC_RDMA_READ,
        byte_len: len as u32,
        qpn: qa.qpn,
        ..Default::default()
    };
    ensure!(got == [want], "seed {s}: {got:?}");
    let mut mem = vec![0u8; expect.len()];
    w.a.dev.mem.read(g.buf, &mut mem)?;
    if let Some(i) = (0..mem.len()).find(|&i| mem[i] != expect[i]) {
        anyhow::bail!(
            "seed {s}: byte {i} of a's buffer is {:#04x}, want {:#04x}",
            mem[i],
            expect[i]
        );
    }
    let reqs = reqs.borrow().clone();
    let p0 = reqs.first().context("a READ request")?.0;
    let want_reqs: Vec<(u32, u64, u32)> = [0u32, 50, 120, 120, 200, 255]
        .iter()
        .map(|&k| {
            (
                (p0 + k) & 0xFF_FFFF,
                va + u64::from(k) * 4096,
                len as u32 - k * 4096,
            )
        })
        .collect();
    ensure!(
        reqs == want_reqs,
        "seed {s}: READ requests {reqs:?}, want {want_reqs:?}"
    );
    // The streams: each from where the plan says; the stale ones cut short, the one
    // that lost its own FIRST (nothing asked for it) and the last ones to the end.
    let streams = streams.borrow().clone();
    let starts: Vec<u32> = streams.iter().map(|t| t.0).collect();
    let plan: Vec<u32> = PLAN.iter().map(|p| p.0).collect();
    ensure!(
        starts == plan,
        "seed {s}: streams {streams:?}, want from {plan:?}"
    );
    for (k, (&(from, to), &(_, lose))) in streams.iter().zip(PLAN.iter()).enumerate() {
        let cut = matches!(k, 0 | 1 | 3);
        ensure!(
            if cut { to < lose + 40 } else { to == 255 },
            "seed {s}: stream {k} from +{from} went to +{to}"
        );
    }
    ensure!(
        w.b.counter("req_cuts")? == 3,
        "seed {s}: b cut three streams"
    );
    let st = w.a.dev.rc_stats()?;
    ensure!(
        st.timeouts == 2 && st.retrans == 5 && st.seq_nak_rx == 0 && st.retry_exc == 0,
        "seed {s}: {st:?}"
    );
    ensure!(w.a.counter("req_reads")? == 1 && w.b.counter("resp_reads")? == 1);
    ensure!(
        w.b.counter("resp_dup")? == 5,
        "seed {s}: five duplicate READs served"
    );
    ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    println!(
        "seed {s}: 1 MiB READ, 5 responses dropped: went on at +50, +120 (twice), +200 and \
         +255; streams {streams:?}; {} responses past a lost one dropped",
        w.a.counter("resp_bad_resp")?
    );
    Ok(())
}

/// A READ that the peer refuses for its remote key (no REMOTE_READ right, a wrong tag, a
/// range past the region) completes REM_ACCESS_ERR and writes nothing; the QP then flushes
/// the next request. A READ WQE forged into the ring with a local buffer that may not be
/// written completes LOC_PROT_ERR and sends nothing, and fails the QP as well (IBA 10.7.3.1,
/// as rxe): the READ behind it flushes and never reaches the wire.
#[test]
fn read_refusals_complete_with_their_status_and_write_nothing() -> Result<()> {
    let s = seed("read_refusals_complete_with_their_status_and_write_nothing");
    let mut r = rng(s);
    for case in 0..4 {
        let mut w = World::open(&WorldConfig::default())?;
        let (mut qa, _qb) =
            w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
        let src_bytes: Vec<u8> = (0..8192).map(|_| r.gen()).collect();
        let src = w.b.buffer(8192, &src_bytes)?;
        let write_only =
            w.b.dev
                .reg_mr(&w.b.pd, src.addr, 8192, access::REMOTE_WRITE)?;
        let fill: Vec<u8> = (0..8192).map(|_| r.gen()).collect();
        let dst = w.a.buffer(8192, &fill)?;
        let len = r.gen_range(1..=3000u32);
        let mut rd = SendWr {
            wr_id: 1,
            opcode: WrOpcode::RdmaRead,
            sg_list: vec![Sge {
                addr: dst.addr + 100,
                length: len,
                lkey: dst.lkey,
            }],
            remote_addr: src.addr + 7,
            rkey: src.rkey,
            signaled: true,
            ..Default::default()
        };
        let want_status = match case {
            0 => {
                rd.rkey = write_only.rkey;
                WC_REM_ACCESS_ERR
            }
            1 => {
                rd.rkey ^= r.gen_range(1..=255);
                WC_REM_ACCESS_ERR
            }
            2 => {
                rd.remote_addr = src.addr + 8192 - u64::from(len) + 1;
                WC_REM_ACCESS_ERR
            }
            _ => WC_LOC_PROT_ERR,
        };
        let mut next = rd.clone();
        next.wr_id = 2;
        next.rkey = src.rkey;
        next.remote_addr = src.addr;
        if case == 3 {
            // Behind the driver's back: a local buffer registered without LOCAL_WRITE.
            let ro = w.a.dev.reg_mr(&w.a.pd, dst.addr, 8192, 0)?;
            rd.sg_list[0].lkey = ro.lkey;
            let size = 1u64 << qa.sq_log_size;
            let slot = u64::from(qa.sq_pi) & (size - 1);
            w.a.dev
                .mem
                .write(qa.sq.addr + slot * WQE_LEN as u64, &rd.wqe())?;
            qa.sq_pi = qa.sq_pi.wrapping_add(1);
            w.a.dev.ring_sq_doorbell(qa.qpn, qa.sq_pi)?;
            w.a.dev.post_send(&mut qa, &[next.clone()])?;
        } else {
            w.a.dev.post_send(&mut qa, &[rd.clone(), next.clone()])?;
        }
        let got = reap(&mut w, 2, s, &format!("case {case}"))?;
        let status: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        // After a fatal NAK, or a local error, the QP is in error: the next READ flushes.
        ensure!(
            status == [(1, want_status), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: case {case}: {status:?}"
        );
        let mut mem = vec![0u8; 8192];
        w.a.dev.mem.read(dst.addr, &mut mem)?;
        let expect = fill.clone();
        if case == 3 {
            ensure!(
                w.b.counter("resp_reads")? == 0 && w.b.counter("rx_accepted")? == 0,
                "seed {s}: the flushed READ reached the wire"
            );
            ensure!(w.a.counter("req_prot_err")? == 1);
            ensure!(
                w.a.dev.query_qp(&qa)?.state == Some(QpState::Err),
                "seed {s}: QUERY does not read the QP as ERR"
            );
        } else {
            ensure!(w.b.counter("resp_bad_rkey")? == 1, "seed {s}: case {case}");
            ensure!(w.b.counter("resp_reads")? == 0);
        }
        ensure!(mem == expect, "seed {s}: case {case}: a's buffer changed");
        ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
        let _ = got.first().context("a completion")?;
    }
    Ok(())
}

/// Both hosts read each other at once on six QP pairs, 78 READs (and 18 WRITEs) posted per
/// host: more requests than the completer's pool holds (the requester starts a WQE only with
/// room for its record there), while each host's responder hands the peer's READs to its
/// requester as jobs. Every request completes and every READ brings the peer's bytes. (A
/// review found that a requester waiting in Done for that queue could stop the READ jobs and,
/// behind them, the receive path that empties it; this test did not reach that state with
/// the wait put back, so it stands as a stress test, not as that defect's proof.)
#[test]
fn many_reads_both_ways_do_not_stall_on_a_full_completion_queue() -> Result<()> {
    let s = seed("many_reads_both_ways_do_not_stall_on_a_full_completion_queue");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    let (qps, per_qp, size) = (6usize, 16usize, 6000usize);
    let src: Vec<Vec<u8>> = (0..2)
        .map(|_| (0..per_qp * qps * size).map(|_| r.gen()).collect())
        .collect();
    let sa = w.a.buffer(src[0].len(), &src[0])?;
    let sb = w.b.buffer(src[1].len(), &src[1])?;
    let da = w.a.buffer(src[1].len(), &vec![0u8; src[1].len()])?;
    let db = w.b.buffer(src[0].len(), &vec![0u8; src[0].len()])?;
    let mut pairs = Vec::new();
    for _ in 0..qps {
        pairs.push(w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?);
    }
    // host a reads b's source into da, host b reads a's source into db; every fifth request
    // is a WRITE of the same bytes into the peer's target instead (its ACK waits behind the
    // READ responses before it).
    let mut want = [0usize; 2];
    for (k, (qa, qb)) in pairs.iter_mut().enumerate() {
        for (side, qp) in [(0usize, &mut *qa), (1, &mut *qb)] {
            let (dst, rsrc) = if side == 0 { (&da, &sb) } else { (&db, &sa) };
            let list: Vec<SendWr> = (0..per_qp)
                .map(|i| {
                    let off = ((k * per_qp + i) * size) as u64;
                    let read = i % 5 != 4;
                    SendWr {
                        wr_id: (k * per_qp + i) as u64,
                        opcode: if read {
                            WrOpcode::RdmaRead
                        } else {
                            WrOpcode::RdmaWrite
                        },
                        sg_list: vec![Sge {
                            addr: dst.addr + off,
                            length: size as u32,
                            lkey: dst.lkey,
                        }],
                        remote_addr: rsrc.addr + off,
                        rkey: rsrc.rkey,
                        signaled: true,
                        ..Default::default()
                    }
                })
                .collect();
            let h = if side == 0 { &mut w.a } else { &mut w.b };
            h.dev.post_send(qp, &list)?;
            want[side] += list.len();
        }
    }
    let mut got = [0usize; 2];
    let mut idle = 0;
    while got[0] < want[0] || got[1] < want[1] {
        w.run(2000)?;
        let mut n = 0;
        for (side, h) in [(0usize, &mut w.a), (1, &mut w.b)] {
            for wc in h.dev.poll_cq(&mut h.cq, 64)? {
                ensure!(wc.status == WC_SUCCESS, "seed {s}: {wc:?}");
                got[side] += 1;
                n += 1;
            }
        }
        idle = if n == 0 { idle + 2000 } else { 0 };
        ensure!(
            idle < budget(1_000_000),
            "seed {s}: {got:?} of {want:?} completions; a: {}; b: {}",
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    // Every READ brought the peer's bytes (a WRITE's target range held the writer's own
    // bytes, which the READ side did not ask for).
    for (side, h, dst) in [(0usize, &mut w.a, &da), (1, &mut w.b, &db)] {
        let mut mem = vec![0u8; src[1 - side].len()];
        h.dev.mem.read(dst.addr, &mut mem)?;
        for j in 0..qps * per_qp {
            if j % per_qp % 5 == 4 {
                continue;
            }
            let at = j * size;
            ensure!(
                mem[at..at + size] == src[1 - side][at..at + size],
                "seed {s}: host {side}: READ {j}'s bytes"
            );
        }
    }
    ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    Ok(())
}

/// A READ's (or an atomic's) response lost, later requests behind it: the first ACK past it
/// says the response will not come (the peer answers in PSN order), and the requester asks
/// again at once, as rxe's `check_psn` (the implicit NAK), not after an ACK timeout that
/// every later ACK would put off. Here the timeout is 4.3 s (never, in the test's time): a
/// READ of 1 to 3 packets losing its last response, or a FETCH_ADD losing its ATOMIC
/// ACKNOWLEDGE, then 1 to 40 WRITEs, each at a random PMTU; another QP pair's WRITEs meanwhile.
/// Every request completes in order, the READ's bytes and the atomic's original value exact,
/// with one retry and no timeout.
#[test]
fn a_lost_read_response_is_asked_again_at_the_first_answer_past_it() -> Result<()> {
    use ferroce_sim::Fault;
    use std::cell::Cell;
    use std::rc::Rc;
    let s = seed("a_lost_read_response_is_asked_again_at_the_first_answer_past_it");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    w.retry.timeout = Some(20);
    let mut src: Vec<u8> = (0..64 << 10).map(|_| r.gen()).collect();
    let sb = w.b.buffer(src.len(), &src)?;
    let da = w.a.buffer(src.len(), &vec![0u8; src.len()])?;
    for atomic in [false, true, false, true] {
        let pmtu = 256u32 << r.gen_range(0..5);
        let (mut qa, _qb) =
            w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
        let (mut qc, _qd) =
            w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
        let before = w.a.dev.rc_stats()?;
        // b's answers: the READ's last response (LAST or ONLY) or the ATOMIC ACKNOWLEDGE,
        // the first one, lost.
        let lost = Rc::new(Cell::new(false));
        let l = lost.clone();
        w.ba.set_fault_hook(move |_, f| {
            let b = ferroce_tests::bth(&f[..f.len() - 4]);
            if !l.get() && b.is_some_and(|b| matches!(b.opcode, 0x0F | 0x10 | 0x12)) {
                l.set(true);
                return Fault::Drop;
            }
            Fault::Pass
        })?;
        let len = if atomic {
            8
        } else {
            r.gen_range(1..=3 * pmtu as usize)
        };
        let from = r.gen_range(0..src.len() / 2) & !7;
        let first = SendWr {
            wr_id: 0,
            opcode: if atomic {
                WrOpcode::AtomicFetchAndAdd
            } else {
                WrOpcode::RdmaRead
            },
            sg_list: vec![Sge {
                addr: da.addr,
                length: len as u32,
                lkey: da.lkey,
            }],
            remote_addr: sb.addr + from as u64,
            rkey: sb.rkey,
            compare_add: 1,
            signaled: true,
            ..Default::default()
        };
        let writes = r.gen_range(1..=40usize);
        let write = |i: usize, r: &mut ChaCha8Rng| SendWr {
            wr_id: i as u64,
            sg_list: vec![Sge {
                addr: da.addr + (32 << 10),
                length: r.gen_range(1..=256),
                lkey: da.lkey,
            }],
            remote_addr: sb.addr + (48 << 10),
            rkey: sb.rkey,
            signaled: true,
            ..Default::default()
        };
        let mut list = vec![first];
        list.extend((1..=writes).map(|i| write(i, &mut r)));
        w.a.dev.post_send(&mut qa, &list)?;
        let other: Vec<SendWr> = (0..20).map(|i| write(i, &mut r)).collect();
        w.a.dev.post_send(&mut qc, &other)?;
        let mut got: Vec<WorkCompletion> = Vec::new();
        let mut cycles = 0;
        while got.len() < writes + 21 {
            w.run(2000)?;
            cycles += 2000;
            got.extend(w.a.dev.poll_cq(&mut w.a.cq, 64)?);
            ensure!(
                cycles < budget(400_000),
                "seed {s}: {} at PMTU {pmtu}, then {writes} WRITEs: {} of {} completions in \
                 {cycles} cycles; a: {}; b: {}",
                if atomic { "FETCH_ADD" } else { "READ" },
                got.len(),
                writes + 21,
                nonzero_counters(&w.a),
                nonzero_counters(&w.b)
            );
        }
        ensure!(lost.get(), "seed {s}: a response was dropped");
        let mine: Vec<(u64, u32)> = got
            .iter()
            .filter(|c| c.qpn == qa.qpn)
            .map(|c| (c.wr_id, c.status))
            .collect();
        let want: Vec<(u64, u32)> = (0..=writes as u64).map(|i| (i, WC_SUCCESS)).collect();
        ensure!(mine == want, "seed {s}: {mine:?}");
        ensure!(
            got.iter().all(|c| c.status == WC_SUCCESS),
            "seed {s}: {got:?}"
        );
        let mut mem = vec![0u8; len];
        w.a.dev.mem.read(da.addr, &mut mem)?;
        ensure!(
            mem == src[from..from + len],
            "seed {s}: the {} brought other bytes",
            if atomic { "FETCH_ADD" } else { "READ" }
        );
        let st = w.a.dev.rc_stats()?;
        ensure!(
            st.timeouts == before.timeouts && st.retrans > before.retrans,
            "seed {s}: {st:?} (before: {before:?})"
        );
        println!(
            "seed {s}: {} at PMTU {pmtu}, response lost, then {writes} WRITEs: all done in \
             {cycles} cycles, {} retransmitted",
            if atomic { "FETCH_ADD" } else { "READ" },
            st.retrans - before.retrans
        );
        // The atomic added 1 to b's word, once (the retry was a duplicate, answered from the
        // peer's memory of it, not added again).
        if atomic {
            let v = u64::from_le_bytes(src[from..from + 8].try_into()?).wrapping_add(1);
            src[from..from + 8].copy_from_slice(&v.to_le_bytes());
        }
        let mut peer = vec![0u8; src.len()];
        w.b.dev.mem.read(sb.addr, &mut peer)?;
        ensure!(
            peer[..48 << 10] == src[..48 << 10],
            "seed {s}: b's source after the {}",
            if atomic { "FETCH_ADD" } else { "READ" }
        );
    }
    Ok(())
}
