//! Every verb at once over 16 QP pairs at four path MTUs, both directions, lossless and over
//! lossy links: every byte and every completion checked, both wires dissected.

use super::*;

/// A message of one direction, as both ends should complete it.
struct Msg {
    send: SendWr,
    recv: RecvWr,
    /// The receive completion's opcode and byte count.
    wc_op: u32,
    byte_len: u32,
}
/// A message length: 0, small, PMTU ± 1, a few PMTUs, up to 64 KiB, now and then (one a
/// round per QP and direction, `d.big`) 1 MiB.
fn message_len(r: &mut ChaCha8Rng, d: &mut Side, k: usize, pmtu: usize) -> usize {
    if !d.lossy && !d.big[k] && r.gen_ratio(1, 500) {
        d.big[k] = true;
        return 1 << 20;
    }
    match r.gen_range(0..100) {
        0..=5 => 0,
        6..=30 => r.gen_range(1..=64),
        31..=50 => pmtu - 1 + r.gen_range(0..3),
        51..=60 => 3 * pmtu + r.gen_range(0..pmtu),
        61..=62 => r.gen_range(48 << 10..=64 << 10),
        _ => r.gen_range(65..=8 << 10),
    }
}
/// A random message on QP `k` of direction `d`: a SEND (± IMM) scattered across a receive WQE
/// of 1-4 SGEs with room to spare, or a WRITE with immediate (its receive WQE's buffer stays
/// untouched). The expected image is updated.
fn random_msg(r: &mut ChaCha8Rng, d: &mut Side, k: usize, pmtu: usize, id: u64) -> Msg {
    let len = message_len(r, d, k, pmtu);
    let opcode = match r.gen_range(0..10) {
        0..=3 => WrOpcode::Send,
        4..=6 => WrOpcode::SendWithImm,
        _ => WrOpcode::RdmaWriteWithImm,
    };
    // The sender's gather list: 1-4 pieces from random places of its source; the message is
    // their bytes in order.
    let (sg_list, bytes) = d.gather(r, len);
    // The receive WQE: 1-4 SGEs holding `len` plus some slack.
    let room = len + r.gen_range(0..=200);
    let pieces = split(r, room, 4);
    let mut rsg = Vec::new();
    let mut landed = 0;
    let sending = opcode != WrOpcode::RdmaWriteWithImm;
    for p in pieces {
        let off = d.take(r, k, p);
        if sending {
            let n = p.min(len - landed);
            d.land(off, &bytes[landed..landed + n]);
            landed += n;
        }
        rsg.push(Sge {
            addr: d.addr(off),
            length: p as u32,
            lkey: d.area.lkey,
        });
    }
    let mut send = SendWr {
        wr_id: id,
        opcode,
        sg_list,
        imm_data: if opcode.has_imm() { r.gen() } else { 0 },
        signaled: true,
        solicited: r.gen_bool(0.3),
        ..Default::default()
    };
    let wc_op = if sending {
        WC_RECV
    } else {
        let off = d.take(r, k, len);
        d.land(off, &bytes);
        send.remote_addr = d.addr(off);
        send.rkey = d.area.rkey;
        WC_RECV_RDMA_WITH_IMM
    };
    Msg {
        send,
        recv: RecvWr {
            wr_id: id ^ 0xABCD_0000_0000,
            sg_list: rsg,
        },
        wc_op,
        byte_len: len as u32,
    }
}
/// A random RDMA READ by QP `k` of the receive side of `d`: `len` bytes from random places
/// of the sender's source region into 1-4 SGEs of the receive side's area. The expected image
/// is updated.
fn random_read(r: &mut ChaCha8Rng, d: &mut Side, k: usize, pmtu: usize, id: u64) -> SendWr {
    let mut len = message_len(r, d, k, pmtu);
    if d.lossy {
        len = len.min(4 * pmtu);
    }
    let from = r.gen_range(0..=SRC_LEN - len);
    let bytes = d.src_bytes[from..from + len].to_vec();
    let sg_list = d.land_in_sges(r, k, &bytes, 4);
    SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaRead,
        sg_list,
        remote_addr: d.src.addr + from as u64,
        rkey: d.src.rkey,
        signaled: true,
        ..Default::default()
    }
}
/// A random RDMA WRITE (no immediate) by the sender of `d` on its QP `k`: 1-4 pieces of its
/// source into the receive side's area. The expected image is updated.
fn random_write(r: &mut ChaCha8Rng, d: &mut Side, k: usize, pmtu: usize, id: u64) -> SendWr {
    let len = message_len(r, d, k, pmtu);
    let (sg_list, bytes) = d.gather(r, len);
    let off = d.take(r, k, len);
    d.land(off, &bytes);
    SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list,
        remote_addr: d.addr(off),
        rkey: d.area.rkey,
        signaled: true,
        ..Default::default()
    }
}
/// A random atomic by QP `k` of the receive side of `d` on its word in the sender's memory:
/// FETCH_AND_ADD, or CMP_AND_SWP whose compare value is right half the time. The original
/// value lands in 1-2 SGEs of the receive side's area; the word's value moves on.
fn random_atomic(r: &mut ChaCha8Rng, d: &mut Side, k: usize, id: u64) -> SendWr {
    let orig = d.word_vals[k];
    let (opcode, compare_add, swap) = if r.gen_bool(0.5) {
        let add = r.gen();
        d.word_vals[k] = orig.wrapping_add(add);
        (WrOpcode::AtomicFetchAndAdd, add, 0)
    } else {
        let cmp = if r.gen_bool(0.5) { orig } else { r.gen() };
        let swap = r.gen();
        if cmp == orig {
            d.word_vals[k] = swap;
        }
        (WrOpcode::AtomicCmpAndSwp, cmp, swap)
    };
    let bytes = orig.to_le_bytes();
    let sg_list = d.land_in_sges(r, k, &bytes, 2);
    SendWr {
        wr_id: id,
        opcode,
        sg_list,
        remote_addr: d.words.addr + 8 * k as u64,
        rkey: d.words.rkey,
        compare_add,
        swap,
        signaled: true,
        ..Default::default()
    }
}
/// One QP of one host, with what it has posted and not yet seen complete.
struct Ep {
    q: QueuePair,
    peer_qpn: u32,
    sends: VecDeque<SendWr>,
    recvs: VecDeque<Msg>,
    /// Requests to post on this QP after the sends its peer's receives expect: RDMA READs and
    /// atomics (their results land in this host's area), RDMA WRITEs (into the peer's).
    reads: Vec<SendWr>,
}
/// Poll `h`'s CQ and check each completion against the oldest outstanding request of its
/// queue: send completions in send order, receive completions in receive order, exact.
fn reap(h: &mut Host, eps: &mut [Ep], seed: u64) -> Result<usize> {
    let wcs = h.dev.poll_cq(&mut h.cq, 64)?;
    for wc in &wcs {
        let ep = eps
            .iter_mut()
            .find(|e| e.q.qpn == wc.qpn)
            .with_context(|| format!("seed {seed}: completion for QP {}", wc.qpn))?;
        let want = if wc.opcode & WC_RECV != 0 {
            let m = ep
                .recvs
                .pop_front()
                .with_context(|| format!("seed {seed}: receive completion {wc:?} unasked"))?;
            WorkCompletion {
                wr_id: m.recv.wr_id,
                status: WC_SUCCESS,
                opcode: m.wc_op,
                byte_len: m.byte_len,
                qpn: wc.qpn,
                imm_data: m.send.opcode.has_imm().then_some(m.send.imm_data),
                src_qp: ep.peer_qpn,
            }
        } else {
            let wr = ep
                .sends
                .pop_front()
                .with_context(|| format!("seed {seed}: send completion {wc:?} unasked"))?;
            WorkCompletion {
                wr_id: wr.wr_id,
                status: WC_SUCCESS,
                opcode: wr.opcode.wc_opcode(),
                byte_len: wr.length() as u32,
                qpn: wc.qpn,
                ..Default::default()
            }
        };
        ensure!(*wc == want, "seed {seed}: completion {wc:?}, want {want:?}");
    }
    Ok(wcs.len())
}
/// Post every receive WQE of each QP's outstanding messages, one list (one doorbell) a QP.
fn post_recvs(h: &mut Host, eps: &mut [Ep]) -> Result<()> {
    for ep in eps.iter_mut() {
        let list: Vec<RecvWr> = ep.recvs.iter().map(|m| m.recv.clone()).collect();
        h.dev.post_recv(&mut ep.q, &list)?;
    }
    Ok(())
}
/// Post `list` on `ep`'s QP in lists of 1-4 (a doorbell a list); they complete in order.
fn post_in_lists(h: &mut Host, ep: &mut Ep, list: Vec<SendWr>, r: &mut ChaCha8Rng) -> Result<()> {
    let mut at = 0;
    while at < list.len() {
        let n = r.gen_range(1..=4).min(list.len() - at);
        h.dev.post_send(&mut ep.q, &list[at..at + n])?;
        at += n;
    }
    ep.sends.extend(list);
    Ok(())
}
/// Post the sends of the messages each peer expects.
fn post_sends(h: &mut Host, eps: &mut [Ep], peers: &[Ep], r: &mut ChaCha8Rng) -> Result<()> {
    for (ep, peer) in eps.iter_mut().zip(peers) {
        let list: Vec<SendWr> = peer.recvs.iter().map(|m| m.send.clone()).collect();
        post_in_lists(h, ep, list, r)?;
    }
    Ok(())
}
/// Post each QP's READs.
fn post_reads(h: &mut Host, eps: &mut [Ep], r: &mut ChaCha8Rng) -> Result<()> {
    for ep in eps.iter_mut() {
        let list = std::mem::take(&mut ep.reads);
        post_in_lists(h, ep, list, r)?;
    }
    Ok(())
}
/// Every verb at once: sixteen QP pairs at four path MTUs, both directions at once, rounds of
/// random SENDs and SENDs with immediate (each into a receive WQE of 1-4 SGEs posted first),
/// RDMA WRITEs with and without immediate, RDMA READs and atomics (FETCH_AND_ADD, CMP_AND_SWP
/// on a word per QP), 0 B to 1 MiB with PMTU ± 1 and page-crossing buffers, 1-4 SGEs, until
/// 5,000 work requests (times the soak factor) have completed: every byte lands where its verb
/// says and nothing else changes (every guard byte checked each round), every atomic word ends
/// where its atomics leave it, every completion on both sides is exact (wr_id, status, opcode,
/// byte count, immediate, QP, source QP) and in order per queue, and both wires pass tshark
/// (the expected opcodes among them) and scapy (every ICRC).
#[test]
fn every_verb_mixed_over_16_qp_pairs_both_ways_is_exact() -> Result<()> {
    let s = seed("every_verb_mixed_over_16_qp_pairs_both_ways_is_exact");
    every_verb_mixed(s, lossless_world(s)?, 5000 * soak_factor(), false).map(|_| ())
}
/// The same over lossy links both ways (1% loss, 0.1% corruption, 0.5% duplication, 1%
/// reordering; no PFC), 10,000 work requests (times the soak factor): go-back-N,
/// duplicate READs served again and duplicate atomics answered from the replay cache make
/// every message land exactly once (every byte and guard, every atomic word: each atomic done
/// once), every completion exact and in order on both sides, no QP out of retries. No 1 MiB
/// messages and READs of at most four PMTUs, for its time (with 1 MiB SENDs and WRITEs and
/// 64 KiB READs it passes in 530 s rather than 230); `read::` runs READs of up to 64 KiB over
/// lossy links, and one of 1 MiB with its responses dropped.
#[test]
fn every_verb_mixed_over_16_qp_pairs_survives_a_lossy_link() -> Result<()> {
    let (s, links) = lossy_mix(
        "every_verb_mixed_over_16_qp_pairs_survives_a_lossy_link",
        0.01,
        0.0,
        10_000,
    )?;
    for l in links {
        ensure!(l.dropped > 0 && l.corrupted > 0, "seed {s}: {l:?}");
    }
    Ok(())
}
/// The lossy workload at 10% loss both ways (with the same corruption, duplication and
/// reordering): every message still lands exactly once, every completion exact and in
/// order, no QP out of retries. 1,000 work requests (times the soak factor; the issue's
/// 10,000 with `FERROCE_SOAK=10`).
#[test]
fn every_verb_mixed_over_16_qp_pairs_survives_10_percent_loss() -> Result<()> {
    let (s, links) = lossy_mix(
        "every_verb_mixed_over_16_qp_pairs_survives_10_percent_loss",
        0.10,
        0.0,
        1_000,
    )?;
    for l in links {
        ensure!(
            l.dropped * 100 >= l.frames * 8,
            "seed {s}: a tenth of the frames lost: {l:?}"
        );
    }
    Ok(())
}
/// The lossy workload with bursts of 20 lost frames both ways (one starting at 0.2% of the
/// frames, beside the 1% loss, corruption, duplication and reordering): a burst takes whole
/// messages, their ACKs and the retries' first packets, and the ACK timer finds them. 1,000
/// work requests (times the soak factor).
#[test]
fn every_verb_mixed_over_16_qp_pairs_survives_bursts_of_20_lost_frames() -> Result<()> {
    let (s, links) = lossy_mix(
        "every_verb_mixed_over_16_qp_pairs_survives_bursts_of_20_lost_frames",
        0.01,
        0.002,
        1_000,
    )?;
    for l in links {
        ensure!(
            l.burst_dropped >= 2 * 20,
            "seed {s}: bursts of 20 both ways: {l:?}"
        );
    }
    Ok(())
}
/// The every-verb workload of test `name` over links losing `loss` of the frames, bursts of
/// 20 starting at `burst` of them, 0.1% corrupted, 0.5% duplicated and 1% reordered, both
/// ways: `total` work requests times the soak factor. Its seed and the links' stats.
fn lossy_mix(
    name: &str,
    loss: f64,
    burst: f64,
    total: usize,
) -> Result<(u64, [ferroce_sim::LinkStats; 2])> {
    let s = seed(name);
    let faults = ferroce_sim::RandomFaults {
        loss,
        corrupt: 0.001,
        duplicate: 0.005,
        reorder: 0.01,
        burst,
        burst_len: 20,
        burst_ps: 100_000_000,
        seed: s,
    };
    let w = ferroce_tests::faulty_world(s, faults)?;
    Ok((s, every_verb_mixed(s, w, total * soak_factor(), true)?))
}
fn every_verb_mixed(
    s: u64,
    mut w: World,
    want_total: usize,
    lossy: bool,
) -> Result<[ferroce_sim::LinkStats; 2]> {
    let mut r = rng(s);
    let dir = std::env::temp_dir().join(format!("ferroce-mix-{s}"));
    std::fs::create_dir_all(&dir)?;
    let (pab, pba) = (dir.join("ab.pcap"), dir.join("ba.pcap"));
    if !lossy {
        w.ab.tap(&pab)?;
        w.ba.tap(&pba)?;
    }
    let npairs = 16;
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for k in 0..npairs {
        let pmtu = PMTUS[k % PMTUS.len()];
        let (qa, qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
        let (na, nb) = (qa.qpn, qb.qpn);
        ea.push(Ep {
            q: qa,
            peer_qpn: nb,
            sends: VecDeque::new(),
            recvs: VecDeque::new(),
            reads: Vec::new(),
        });
        eb.push(Ep {
            q: qb,
            peer_qpn: na,
            sends: VecDeque::new(),
            recvs: VecDeque::new(),
            reads: Vec::new(),
        });
    }
    let mut ab = side(&mut r, &mut w.a, &mut w.b, npairs)?;
    let mut ba = side(&mut r, &mut w.b, &mut w.a, npairs)?;
    ab.lossy = lossy;
    ba.lossy = lossy;
    let mut id = 1u64;
    let (mut total, mut round, mut bigs) = (0usize, 0usize, 0usize);
    while total < want_total {
        ab.new_round();
        ba.new_round();
        // Per direction (sender's endpoints, receiver's, the direction's side): messages
        // into receive WQEs, WRITEs by the sender, READs and atomics by the receiver.
        for to_b in [true, false] {
            let (snd, rcv, d) = if to_b {
                (&mut ea, &mut eb, &mut ab)
            } else {
                (&mut eb, &mut ea, &mut ba)
            };
            for k in 0..npairs {
                let pmtu = PMTUS[k % PMTUS.len()] as usize;
                let n = r.gen_range(4..=12);
                for _ in 0..n {
                    id += 1;
                    let m = random_msg(&mut r, d, k, pmtu, id);
                    rcv[k].recvs.push_back(m);
                }
                let nw = r.gen_range(0..=3);
                for _ in 0..nw {
                    id += 1;
                    let wr = random_write(&mut r, d, k, pmtu, id);
                    snd[k].reads.push(wr);
                }
                let (nr, na) = (r.gen_range(1..=4), r.gen_range(0..=3));
                for i in 0..nr + na {
                    id += 1;
                    let wr = if i < nr {
                        random_read(&mut r, d, k, pmtu, id)
                    } else {
                        random_atomic(&mut r, d, k, id)
                    };
                    rcv[k].reads.push(wr);
                }
                total += n + nw + nr + na;
            }
            bigs += d.big.iter().filter(|b| **b).count();
        }
        post_recvs(&mut w.b, &mut eb)?;
        post_recvs(&mut w.a, &mut ea)?;
        post_sends(&mut w.a, &mut ea, &eb, &mut r)?;
        post_sends(&mut w.b, &mut eb, &ea, &mut r)?;
        post_reads(&mut w.a, &mut ea, &mut r)?;
        post_reads(&mut w.b, &mut eb, &mut r)?;
        let pending = |eps: &[Ep]| {
            eps.iter()
                .map(|e| e.sends.len() + e.recvs.len())
                .sum::<usize>()
        };
        let mut idle = 0;
        while pending(&ea) + pending(&eb) > 0 {
            w.run(2000)?;
            let got = reap(&mut w.a, &mut ea, s)? + reap(&mut w.b, &mut eb, s)?;
            idle = if got == 0 { idle + 2000 } else { 0 };
            ensure!(
                idle < budget(2_000_000),
                "seed {s}: round {round}: {} completions outstanding on a, {} on b; a: {}; b: {}",
                pending(&ea),
                pending(&eb),
                nonzero_counters(&w.a),
                nonzero_counters(&w.b)
            );
        }
        ab.check(&mut w.b, &format!("seed {s}: round {round}: a to b"))?;
        ba.check(&mut w.a, &format!("seed {s}: round {round}: b to a"))?;
        ab.check_words(&mut w.a, &format!("seed {s}: round {round}: a's words"))?;
        ba.check_words(&mut w.b, &format!("seed {s}: round {round}: b's words"))?;
        round += 1;
    }
    w.run(3000)?;
    if lossy {
        let (sa, sb) = (w.a.dev.rc_stats()?, w.b.dev.rc_stats()?);
        for (h, st) in [(&w.a, &sa), (&w.b, &sb)] {
            ensure!(st.retry_exc == 0, "seed {s}: a QP ran out of retries");
            ensure!(st.retrans > 0, "seed {s}: nothing was sent again");
            ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
        }
        println!(
            "seed {s}: {total} work requests over {npairs} QP pairs in {round} rounds both \
             ways over lossy links {:?} / {:?}: bytes, atomic words and completions exact; \
             RC_STATS a {sa:?}; b {sb:?}",
            w.ab.stats(),
            w.ba.stats()
        );
        let _ = std::fs::remove_dir_all(&dir);
        return Ok([w.ab.stats(), w.ba.stats()]);
    }
    for h in [&w.a, &w.b] {
        ensure!(h.counter("resp_rnr")? == 0, "seed {s}: RNR NAKs");
        ensure!(h.counter("resp_bad_req")? == 0, "seed {s}: bad requests");
        // (No READ or atomic waits for a job, nor is dropped for want of one: with a 20-job
        // queue, seed 1795943181748512645 paused both NICs by each other through it.)
        ensure!(
            h.counter("resp_seq_err")? == 0 && h.counter("resp_jobs_full")? == 0,
            "seed {s}: {} sequence errors, {} READs or atomics dropped for want of a job",
            h.counter("resp_seq_err")?,
            h.counter("resp_jobs_full")?
        );
        ensure!(
            h.counter("resp_bad_resp")? == 0,
            "seed {s}: stray responses"
        );
        ensure!(
            h.counter("resp_sc_bad_len")? == 0,
            "seed {s}: scatter lengths"
        );
        ensure!(
            h.counter("rq_bad_wqe")? == 0,
            "seed {s}: receive WQEs refused"
        );
        ensure!(h.counter("rx_overflow")? == 0, "seed {s}: frames dropped");
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    for p in [&pab, &pba] {
        let ops: HashSet<u8> = check_pcap(p)?.iter().map(|r| r.opcode).collect();
        for op in [
            RC_SEND_ONLY,
            RC_SEND_FIRST,
            RC_SEND_ONLY_WITH_IMMEDIATE,
            RC_RDMA_WRITE_ONLY,
            RC_RDMA_WRITE_FIRST,
            RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            RC_ACKNOWLEDGE,
            RC_RDMA_READ_REQUEST,
            RC_RDMA_READ_RESPONSE_ONLY,
            RC_RDMA_READ_RESPONSE_FIRST,
            RC_CMP_SWAP,
            RC_FETCH_ADD,
            RC_ATOMIC_ACKNOWLEDGE,
        ] {
            ensure!(
                ops.contains(&op),
                "seed {s}: {}: no opcode {op:#x}",
                p.display()
            );
        }
    }
    println!(
        "seed {s}: {total} work requests ({bigs} of 1 MiB) over {npairs} QP pairs in {round} \
         rounds both ways, bytes, atomic words and completions exact"
    );
    // The pcaps stay behind only when the test fails.
    let _ = std::fs::remove_dir_all(&dir);
    Ok([w.ab.stats(), w.ba.stats()])
}
