//! SEND and RECV between two `ferroce_nic_64` models, each driven by the Rust driver through
//! its own root complex (500 ns reads, completions split and reordered from the seed; in the
//! random test, memory requests also held back at random): every SEND (with or without
//! immediate) consumes one receive WQE at the peer and is scattered
//! across its SGEs; an RDMA WRITE with immediate lands where its RETH says and consumes a
//! receive WQE for its completion. Every byte of the receive side, guards around every buffer
//! included, and every completion on both sides is checked; both wires are dissected by tshark
//! and their ICRCs confirmed by scapy. Then the refusals IBA defines for the receive side: no
//! receive WQE posted (RNR NAK), a receive buffer too short (NAK invalid request,
//! `LOC_LEN_ERR`), a receive WQE whose key the NIC refuses (NAK remote operational error,
//! `LOC_PROT_ERR`).

use anyhow::{ensure, Context, Result};
use ferroce_driver::{
    access, DmaMemory, MemoryRegion, QpAttr, QpState, QueuePair, RecvWr, SendWr, Sge,
    WorkCompletion, WrOpcode,
};
use ferroce_sim::world::{Host, RetryAttrs, World, WorldConfig};
use ferroce_sim::Fault;
use ferroce_spec::headers::AETH_RNR_NAK;
use ferroce_spec::opcodes::{
    RC_ACKNOWLEDGE, RC_ATOMIC_ACKNOWLEDGE, RC_CMP_SWAP, RC_FETCH_ADD, RC_RDMA_READ_REQUEST,
    RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_ONLY, RC_RDMA_WRITE_FIRST,
    RC_RDMA_WRITE_ONLY, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_SEND_FIRST, RC_SEND_ONLY,
    RC_SEND_ONLY_WITH_IMMEDIATE,
};
use ferroce_spec::queues::{
    RECV_WQE_LEN, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR, WC_RECV, WC_RECV_RDMA_WITH_IMM,
    WC_REM_ACCESS_ERR, WC_REM_INV_REQ_ERR, WC_REM_OP_ERR, WC_RNR_RETRY_EXC_ERR, WC_SUCCESS,
    WC_WR_FLUSH_ERR,
};
use ferroce_tests::wire::check_pcap;
use ferroce_tests::{budget, guarded, lossless_world, nonzero_counters, rng, seed, soak_factor};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashSet, VecDeque};

const PMTUS: [u32; 4] = [256, 1024, 4096, 512];
/// The sender's source: a 1 MiB message's pieces come from it.
const SRC_LEN: usize = (1 << 20) + (256 << 10);
/// Each QP's share of the receive side's area (a round's bytes; the next round starts over).
const AREA: usize = 3 << 20;
const GUARD: usize = 4096;
/// Atomic words of each side, one per QP (in the sender's memory, the receive side's QP works
/// on it).
const WORDS: usize = 16;

/// One direction: the sender's source bytes, the receiver's area (a region for local and
/// remote writes inside a buffer with guard bytes) and its expected image.
struct Side {
    src: MemoryRegion,
    src_bytes: Vec<u8>,
    buf: u64,
    area: MemoryRegion,
    expect: Vec<u8>,
    /// Per QP, the next free byte of its share of the area.
    cursor: Vec<usize>,
    /// The sender's atomic words (REMOTE_ATOMIC), one per QP, and their values.
    words: MemoryRegion,
    word_vals: Vec<u64>,
    /// Per QP, a 1 MiB message this round already.
    big: Vec<bool>,
    /// Over lossy links: no 1 MiB messages, READs of at most four PMTUs (for the soak's time:
    /// with them it takes 530 s instead of 230).
    lossy: bool,
}

fn side(r: &mut ChaCha8Rng, from: &mut Host, to: &mut Host, qps: usize) -> Result<Side> {
    let g = guarded(
        r,
        from,
        to,
        (SRC_LEN, qps * AREA, GUARD),
        access::LOCAL_WRITE | access::REMOTE_WRITE,
    )?;
    let word_vals: Vec<u64> = (0..WORDS).map(|_| r.gen()).collect();
    let img: Vec<u8> = word_vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let words = from.buffer(img.len(), &img)?;
    Ok(Side {
        src: g.src,
        src_bytes: g.src_bytes,
        buf: g.buf,
        area: g.region,
        expect: g.expect,
        cursor: vec![0; qps],
        words,
        word_vals,
        big: vec![false; qps],
        lossy: false,
    })
}

impl Side {
    /// `len` bytes of QP `k`'s share, after a random gap (odd offsets, sometimes across a
    /// page): their offset in the area.
    fn take(&mut self, r: &mut ChaCha8Rng, k: usize, len: usize) -> usize {
        let mut at = self.cursor[k] + r.gen_range(0..48);
        if len > 1 && r.gen_bool(0.2) {
            // Across the next page boundary, never back over bytes already given out (what
            // lands there would depend on which message lands last).
            let page = (at / 4096 + 1) * 4096;
            at = (page - r.gen_range(1..len.min(4096))).max(self.cursor[k]);
        }
        assert!(at + len <= AREA, "QP {k}'s share of the area is used up");
        self.cursor[k] = at + len;
        k * AREA + at
    }

    /// A new round: each QP's share from its start again (the last round's bytes are checked).
    fn new_round(&mut self) {
        self.cursor.fill(0);
        self.big.fill(false);
    }

    fn addr(&self, off: usize) -> u64 {
        self.area.addr + off as u64
    }

    fn land(&mut self, off: usize, bytes: &[u8]) {
        self.expect[GUARD + off..GUARD + off + bytes.len()].copy_from_slice(bytes);
    }

    /// A gather list of 1-4 pieces from random places of the sender's source, and the
    /// message they make (their bytes in order).
    fn gather(&self, r: &mut ChaCha8Rng, len: usize) -> (Vec<Sge>, Vec<u8>) {
        let mut sg_list = Vec::new();
        let mut bytes = Vec::with_capacity(len);
        for piece in split(r, len, 4) {
            let from = r.gen_range(0..=SRC_LEN - piece);
            bytes.extend_from_slice(&self.src_bytes[from..from + piece]);
            sg_list.push(Sge {
                addr: self.src.addr + from as u64,
                length: piece as u32,
                lkey: self.src.lkey,
            });
        }
        (sg_list, bytes)
    }

    /// `bytes` landing in 1 to `most` local SGEs of QP `k`'s share of the area (a READ's or an
    /// atomic's result): the SGEs, the expected image updated.
    fn land_in_sges(
        &mut self,
        r: &mut ChaCha8Rng,
        k: usize,
        bytes: &[u8],
        most: usize,
    ) -> Vec<Sge> {
        let mut sg_list = Vec::new();
        let mut landed = 0;
        for p in split(r, bytes.len(), most) {
            let off = self.take(r, k, p);
            self.land(off, &bytes[landed..landed + p]);
            landed += p;
            sg_list.push(Sge {
                addr: self.addr(off),
                length: p as u32,
                lkey: self.area.lkey,
            });
        }
        sg_list
    }

    /// The sender's atomic words hold what the atomics on them leave.
    fn check_words(&self, h: &mut Host, what: &str) -> Result<()> {
        let mut got = vec![0u8; 8 * WORDS];
        h.dev.mem.read(self.words.addr, &mut got)?;
        for (k, v) in self.word_vals.iter().enumerate() {
            let now = u64::from_le_bytes(got[8 * k..8 * k + 8].try_into()?);
            ensure!(
                now == *v,
                "{what}: atomic word {k} is {now:#x}, want {v:#x}"
            );
        }
        Ok(())
    }

    /// The receive side's memory, guards included, is what the test expects.
    fn check(&self, h: &mut Host, what: &str) -> Result<()> {
        let mut got = vec![0u8; self.expect.len()];
        h.dev.mem.read(self.buf, &mut got)?;
        if let Some(i) = (0..got.len()).find(|&i| got[i] != self.expect[i]) {
            anyhow::bail!(
                "{what}: byte {i} of the receive buffer (area offset {}) is {:#04x}, want {:#04x}",
                i as i64 - GUARD as i64,
                got[i],
                self.expect[i]
            );
        }
        Ok(())
    }
}

/// `len` split into 1 to `most` pieces (some may be empty).
fn split(r: &mut ChaCha8Rng, len: usize, most: usize) -> Vec<usize> {
    let n = r.gen_range(1..=most);
    let mut cuts: Vec<usize> = (1..n).map(|_| r.gen_range(0..=len)).collect();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(n);
    let mut prev = 0;
    for c in cuts.into_iter().chain([len]) {
        out.push(c - prev);
        prev = c;
    }
    out
}

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
        ensure!(h.counter("resp_seq_err")? == 0, "seed {s}: sequence errors");
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

struct Pair {
    w: World,
    qa: QueuePair,
    qb: QueuePair,
    d: Side,
}

fn pair(r: &mut ChaCha8Rng, pmtu: u32) -> Result<Pair> {
    pair_with(r, pmtu, RetryAttrs::default())
}

/// A pair whose QPs have the retry attributes `retry`.
fn pair_with(r: &mut ChaCha8Rng, pmtu: u32, retry: RetryAttrs) -> Result<Pair> {
    let mut w = World::open(&WorldConfig::default())?;
    w.retry = retry;
    let (qa, qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let d = side(r, &mut w.a, &mut w.b, 1)?;
    Ok(Pair { w, qa, qb, d })
}

/// Run until host `h`'s CQ has given `n` completions in all.
fn completions(w: &mut World, on_b: bool, n: usize, s: u64) -> Result<Vec<WorkCompletion>> {
    let mut got = Vec::new();
    let mut waited = 0;
    while got.len() < n {
        w.run(1000)?;
        let h = if on_b { &mut w.b } else { &mut w.a };
        got.extend(h.dev.poll_cq(&mut h.cq, 64)?);
        waited += 1000;
        ensure!(
            waited < budget(400_000),
            "seed {s}: {} of {n} completions",
            got.len()
        );
    }
    Ok(got)
}

fn send_wr(d: &Side, id: u64, opcode: WrOpcode, len: usize) -> SendWr {
    SendWr {
        wr_id: id,
        opcode,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: len as u32,
            lkey: d.src.lkey,
        }],
        remote_addr: d.area.addr + 8192,
        rkey: d.area.rkey,
        imm_data: 0x1234_5678,
        signaled: true,
        ..Default::default()
    }
}

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
            if let Ok(Some(pk)) = ferroce_sim::interop::wire::parse(&f[..f.len() - 4]) {
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

/// A SEND longer than the receive WQE's buffer (one packet, and three at PMTU 256 whose last
/// overflows): NAK invalid request, the sender completes REM_INV_REQ_ERR, the receiver
/// LOC_LEN_ERR with the WQE's wr_id; nothing is written past the buffer (the packets that fit
/// before the overflowing one are in it, as IBA allows).
#[test]
fn a_send_longer_than_its_receive_buffer_fails_both_sides_and_writes_nothing_past_it() -> Result<()>
{
    let s =
        seed("a_send_longer_than_its_receive_buffer_fails_both_sides_and_writes_nothing_past_it");
    let mut r = rng(s);
    for (pmtu, room, len) in [(1024u32, 500usize, 501usize), (256, 600, 700)] {
        let mut p = pair(&mut r, pmtu)?;
        let pieces = split(&mut r, room, 2);
        let mut sg = Vec::new();
        let mut at = 0;
        let mut landed = 0;
        for piece in pieces {
            sg.push(Sge {
                addr: p.d.addr(at),
                length: piece as u32,
                lkey: p.d.area.lkey,
            });
            // Whole packets that fit land; the one that overflows does not.
            let fits = (len / pmtu as usize) * pmtu as usize;
            let n = piece.min(fits.saturating_sub(landed));
            let bytes = p.d.src_bytes[landed..landed + n].to_vec();
            p.d.land(at, &bytes);
            landed += n;
            at += piece + 7;
        }
        p.w.b.dev.post_recv(
            &mut p.qb,
            &[RecvWr {
                wr_id: 77,
                sg_list: sg,
            }],
        )?;
        p.w.a
            .dev
            .post_send(&mut p.qa, &[send_wr(&p.d, 5, WrOpcode::Send, len)])?;
        let a = completions(&mut p.w, false, 1, s)?;
        ensure!(
            (a[0].wr_id, a[0].status) == (5, WC_REM_INV_REQ_ERR),
            "seed {s}: sender {:?}",
            a[0]
        );
        let b = completions(&mut p.w, true, 1, s)?;
        ensure!(
            (b[0].wr_id, b[0].status, b[0].qpn) == (77, WC_LOC_LEN_ERR, p.qb.qpn),
            "seed {s}: receiver {:?}",
            b[0]
        );
        ensure!(
            p.w.b.counter("resp_bad_req")? == 1,
            "seed {s}: resp_bad_req"
        );
        p.d.check(&mut p.w.b, &format!("seed {s}: PMTU {pmtu}"))?;
    }
    Ok(())
}

/// A receive WQE written into the ring behind the driver with a key the NIC refuses (a stale
/// tag; a region without local write access): the receiver completes it LOC_PROT_ERR, the
/// sender gets NAK remote operational error (REM_OP_ERR), and nothing is written.
#[test]
fn a_receive_wqe_with_a_forged_key_completes_loc_prot_err_and_writes_nothing() -> Result<()> {
    let s = seed("a_receive_wqe_with_a_forged_key_completes_loc_prot_err_and_writes_nothing");
    let mut r = rng(s);
    for forge in 0..2 {
        let mut p = pair(&mut r, 1024)?;
        let ro =
            p.w.b
                .dev
                .reg_mr(&p.w.b.pd, p.d.area.addr, p.d.area.len, access::REMOTE_WRITE)?;
        let lkey = if forge == 0 {
            p.d.area.lkey ^ r.gen_range(1..=255)
        } else {
            ro.lkey
        };
        let wqe = RecvWr {
            wr_id: 9,
            sg_list: vec![Sge {
                addr: p.d.addr(64),
                length: 2048,
                lkey,
            }],
        }
        .wqe();
        let slot = u64::from(p.qb.rq_pi) & ((1 << p.qb.rq_log_size) - 1);
        p.w.b
            .dev
            .mem
            .write(p.qb.rq.addr + slot * RECV_WQE_LEN as u64, &wqe)?;
        p.qb.rq_pi += 1;
        p.w.b.dev.ring_rq_doorbell(p.qb.qpn, p.qb.rq_pi)?;
        let len = r.gen_range(1..=2048);
        p.w.a
            .dev
            .post_send(&mut p.qa, &[send_wr(&p.d, 3, WrOpcode::Send, len)])?;
        let a = completions(&mut p.w, false, 1, s)?;
        ensure!(
            (a[0].wr_id, a[0].status) == (3, WC_REM_OP_ERR),
            "seed {s}: sender {:?}",
            a[0]
        );
        let b = completions(&mut p.w, true, 1, s)?;
        ensure!(
            (b[0].wr_id, b[0].status) == (9, WC_LOC_PROT_ERR),
            "seed {s}: receiver {:?}",
            b[0]
        );
        ensure!(p.w.b.counter("rq_bad_wqe")? == 1, "seed {s}: rq_bad_wqe");
        p.d.check(&mut p.w.b, &format!("seed {s}: forged key {forge}"))?;
    }
    Ok(())
}

/// Host b moves a QP to ERR with receive WQEs posted, one of them held by a SEND whose later
/// packets were lost on the wire: every one completes WR_FLUSH_ERR with its wr_id, in order,
/// the held one first, and receive WQEs posted while the QP is in ERR flush too; another QP's
/// SENDs meanwhile land and complete as usual.
#[test]
fn receive_wqes_flush_when_their_qp_goes_to_err_and_other_qps_go_on() -> Result<()> {
    use ferroce_driver::{QpAttr, QpState};
    use std::cell::RefCell;
    use std::rc::Rc;
    let s = seed("receive_wqes_flush_when_their_qp_goes_to_err_and_other_qps_go_on");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut q1a, mut q1b) = w.connect(1024, r.gen_range(0..1 << 24), 5, 16)?;
    let (mut q2a, mut q2b) = w.connect(1024, r.gen_range(0..1 << 24), 9, 16)?;
    let mut d = side(&mut r, &mut w.a, &mut w.b, 2)?;
    // Frames a sends to QP 1 at b after its first are dropped.
    let seen = Rc::new(RefCell::new(0usize));
    let (log, drop_to) = (seen.clone(), q1b.qpn);
    w.ab.set_fault_hook(move |_, f| {
        let dq = u32::from_be_bytes([0, f[47], f[48], f[49]]);
        if dq != drop_to {
            return Fault::Pass;
        }
        *log.borrow_mut() += 1;
        if *log.borrow() > 1 {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let recv = |d: &mut Side, r: &mut ChaCha8Rng, k: usize, id: u64, len: usize| {
        let sg_list = split(r, len, 2)
            .into_iter()
            .map(|p| {
                let off = d.take(r, k, p);
                Sge {
                    addr: d.addr(off),
                    length: p as u32,
                    lkey: d.area.lkey,
                }
            })
            .collect();
        RecvWr { wr_id: id, sg_list }
    };
    let list1: Vec<RecvWr> = (0..5)
        .map(|i| recv(&mut d, &mut r, 0, 100 + i, 4000))
        .collect();
    let list2: Vec<RecvWr> = (0..2)
        .map(|i| recv(&mut d, &mut r, 1, 200 + i, 4000))
        .collect();
    w.b.dev.post_recv(&mut q1b, &list1)?;
    w.b.dev.post_recv(&mut q2b, &list2)?;
    // A 3-packet SEND on QP 1: its FIRST lands and holds receive WQE 100, the rest is lost.
    w.a.dev
        .post_send(&mut q1a, &[send_wr(&d, 1, WrOpcode::Send, 3000)])?;
    w.run(20_000)?;
    ensure!(
        *seen.borrow() == 3,
        "seed {s}: {} frames to QP 1",
        seen.borrow()
    );
    w.b.dev
        .modify_qp(&mut q1b, QpState::Err, QpAttr::default())?;
    w.a.dev.post_send(
        &mut q2a,
        &[
            send_wr(&d, 2, WrOpcode::Send, 1500),
            send_wr(&d, 3, WrOpcode::Send, 10),
        ],
    )?;
    let mut got = completions(&mut w, true, 7, s)?;
    let more: Vec<RecvWr> = (0..2)
        .map(|i| recv(&mut d, &mut r, 0, 300 + i, 64))
        .collect();
    w.b.dev.post_recv(&mut q1b, &more)?;
    got.extend(completions(&mut w, true, 2, s)?);
    let on = |q: u32| -> Vec<(u64, u32)> {
        got.iter()
            .filter(|c| c.qpn == q)
            .map(|c| (c.wr_id, c.status))
            .collect()
    };
    let flushed: Vec<(u64, u32)> = [100, 101, 102, 103, 104, 300, 301]
        .into_iter()
        .map(|i| (i, WC_WR_FLUSH_ERR))
        .collect();
    ensure!(on(q1b.qpn) == flushed, "seed {s}: QP 1: {:?}", on(q1b.qpn));
    ensure!(
        on(q2b.qpn) == [(200, WC_SUCCESS), (201, WC_SUCCESS)],
        "seed {s}: QP 2: {:?}",
        on(q2b.qpn)
    );
    ensure!(w.b.counter("resp_flushed")? == 7, "seed {s}: resp_flushed");
    w.run(5000)?;
    ensure!(
        w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(),
        "seed {s}: a completion after the flush"
    );
    Ok(())
}

/// A fatal NAK the responder sends (a WRITE with a bad rkey: remote access error) moves its own
/// QP to ERR, as IBA has it: the sender completes REM_ACCESS_ERR, and at the responder's host
/// the QP reads ERR, its posted receive WQEs complete WR_FLUSH_ERR in order, a work request it
/// posts afterwards flushes too, and a request that still arrives for it is dropped.
#[test]
fn a_fatal_nak_sent_moves_the_responders_qp_to_err() -> Result<()> {
    use ferroce_driver::QpState;
    let s = seed("a_fatal_nak_sent_moves_the_responders_qp_to_err");
    let mut r = rng(s);
    let mut p = pair(&mut r, 1024)?;
    let recvs: Vec<RecvWr> = (0..3)
        .map(|i| {
            let off = p.d.take(&mut r, 0, 100);
            RecvWr {
                wr_id: 50 + i,
                sg_list: vec![Sge {
                    addr: p.d.addr(off),
                    length: 100,
                    lkey: p.d.area.lkey,
                }],
            }
        })
        .collect();
    p.w.b.dev.post_recv(&mut p.qb, &recvs)?;
    let mut bad = send_wr(&p.d, 1, WrOpcode::RdmaWrite, 64);
    bad.rkey ^= 0x80;
    p.w.a.dev.post_send(&mut p.qa, &[bad])?;
    let got = completions(&mut p.w, false, 1, s)?;
    ensure!(
        (got[0].wr_id, got[0].status) == (1, WC_REM_ACCESS_ERR),
        "seed {s}: sender {got:?}"
    );
    let got = completions(&mut p.w, true, 3, s)?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [
            (50, WC_WR_FLUSH_ERR),
            (51, WC_WR_FLUSH_ERR),
            (52, WC_WR_FLUSH_ERR)
        ],
        "seed {s}: receiver {st:?}"
    );
    ensure!(
        p.w.b.dev.query_qp(&p.qb)?.state == Some(QpState::Err),
        "seed {s}: b's QP after the NAK it sent"
    );
    // The QP's own requests flush; a request arriving for it is dropped.
    let mut own = send_wr(&p.d, 7, WrOpcode::RdmaWrite, 16);
    own.sg_list[0].lkey = p.d.area.lkey;
    own.sg_list[0].addr = p.d.area.addr;
    p.w.b.dev.post_send(&mut p.qb, &[own])?;
    let got = completions(&mut p.w, true, 1, s)?;
    ensure!(
        (got[0].wr_id, got[0].status) == (7, WC_WR_FLUSH_ERR),
        "seed {s}: b's own request {got:?}"
    );
    ensure!(p.w.b.counter("resp_bad_rkey")? == 1, "seed {s}: bad_rkey");
    ensure!(p.w.b.counter("resp_flushed")? == 3, "seed {s}: flushed");
    p.d.check(&mut p.w.b, &format!("seed {s}: b's memory"))?;
    Ok(())
}

/// SENDs that find no receive WQE are RNR NAKed and sent again, each time no sooner than the
/// NAK's delay (IBA table 45, the responder's `min_rnr_timer`) after the NAK, for as long as
/// `rnr_retry` 7 (without end) allows; once receives are posted both land, byte-exact, and
/// complete once on both sides.
#[test]
fn sends_rnr_naked_are_sent_again_after_the_naks_delay_until_receives_are_posted() -> Result<()> {
    use ferroce_sim::interop::wire::packets;
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
    use ferroce_sim::interop::wire::packets;
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
