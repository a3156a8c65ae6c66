//! SEND and RECV between two `ferroce_nic_64` models, each driven by the Rust driver through
//! its own root complex (500 ns reads, completions split and reordered from the seed; in the
//! random test, memory requests also held back at random). `mixed`: every verb at once over
//! 16 QP pairs, lossless and lossy: every SEND (with or without immediate) consumes one
//! receive WQE at the peer and is scattered across its SGEs; an RDMA WRITE with immediate
//! lands where its RETH says and consumes a receive WQE for its completion; every byte of the
//! receive side, guards around every buffer included, and every completion on both sides is
//! checked; both wires are dissected by tshark and their ICRCs confirmed by scapy.
//! `refusals`: what IBA defines for the receive side, a receive buffer too short (NAK invalid
//! request, `LOC_LEN_ERR`), a receive WQE whose key the NIC refuses (NAK remote operational
//! error, `LOC_PROT_ERR`), a QP moved to ERR, a fatal NAK sent. `retries`: no receive WQE
//! posted (RNR NAK) and a peer that stops answering.

mod mixed;
mod refusals;
mod retries;

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
