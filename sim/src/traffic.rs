//! RDMA WRITE and SEND traffic over the two-host [`World`]: streams of WRITEs (or SENDs, each
//! into a receive WQE posted ahead) of one size from one host to the other with every byte
//! and every completion checked, and the doorbell-to-completion latency of one WRITE. The
//! demo, the benchmark (`ferroce perf --nic`) and the throughput test all use these.
//!
//! Throughput is measured in simulated time, from the cycle of the first doorbell to the cycle
//! the last completion is seen by `poll_cq` (for SENDs, the sender's and the receiver's), and
//! compared with the goodput ceiling of the link ([`ferroce_spec::wire`]'s ceiling of the verb
//! times the link's rate).

use crate::world::{step_until, Host, World};
use crate::{Result, SimError};
use ferroce_driver::{access, DmaMemory, QueuePair, RecvWr, SendWr, Sge, WorkCompletion, WrOpcode};
use ferroce_spec::queues::{WC_RECV, WC_SUCCESS};
use ferroce_spec::wire::{read_goodput_ceiling, send_goodput_ceiling, write_goodput_ceiling};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Bytes on each side of a target region that must stay untouched (outside the region).
const GUARD: usize = 4096;
/// The guard bytes' value.
const GUARD_BYTE: u8 = 0xA5;

/// The WRITE and SEND sizes of the benchmark and the demo's WRITEs, with how many of each they
/// send (per direction): the README's performance table.
pub const SIZES: [(usize, usize); 4] = [(64, 2000), (1024, 1000), (64 << 10, 64), (1 << 20, 8)];
/// The demo's SEND sizes and counts (per direction).
pub const SEND_SIZES: [(usize, usize); 3] = [(64, 500), (4097, 100), (64 << 10, 32)];

pub use crate::world::LOSSLESS_PFC;

/// Which way the WRITEs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    AToB,
    BToA,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::AToB => "a -> b",
            Direction::BToA => "b -> a",
        }
    }
}

/// What a stream of WRITEs (or SENDs) measured.
#[derive(Clone, Copy, Debug)]
pub struct WriteRun {
    /// `WrOpcode::RdmaWrite` or `WrOpcode::Send`.
    pub opcode: WrOpcode,
    pub size: u64,
    pub count: u64,
    pub pmtu: u32,
    /// Simulated cycles from the first doorbell to the last completion.
    pub cycles: u64,
    pub period_ps: u64,
    pub link_bps: u64,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
}

impl WriteRun {
    pub fn bytes(&self) -> u64 {
        self.size * self.count
    }
    /// Simulated nanoseconds.
    pub fn ns(&self) -> f64 {
        (self.cycles * self.period_ps) as f64 / 1000.0
    }
    /// Goodput in simulated Gb/s.
    pub fn gbps(&self) -> f64 {
        if self.cycles == 0 {
            return 0.0;
        }
        self.bytes() as f64 * 8.0 / self.ns()
    }
    /// The RoCEv2 goodput ceiling for this size on this link, Gb/s.
    pub fn ceiling_gbps(&self) -> f64 {
        let c = match self.opcode {
            WrOpcode::Send => send_goodput_ceiling(self.size, self.pmtu.into()),
            WrOpcode::RdmaRead => read_goodput_ceiling(self.size, self.pmtu.into()),
            _ => write_goodput_ceiling(self.size, self.pmtu.into()),
        };
        c * self.link_bps as f64 / 1e9
    }
    /// Goodput as a fraction of the ceiling.
    pub fn of_ceiling(&self) -> f64 {
        self.gbps() / self.ceiling_gbps()
    }
    /// Simulation speed, cycles per wall-clock second.
    pub fn cycles_per_s(&self) -> f64 {
        self.cycles as f64 / self.wall_s.max(1e-9)
    }
}

fn sides(w: &mut World, dir: Direction) -> (&mut Host, &mut Host) {
    match dir {
        Direction::AToB => (&mut w.a, &mut w.b),
        Direction::BToA => (&mut w.b, &mut w.a),
    }
}

/// Send `count` WRITEs of `size` bytes on `qp` (the sending host's QP of a connected pair,
/// path MTU `pmtu`), keeping the send queue full. Sources are random (from `seed`); targets
/// are consecutive in one region at the receiver, with guard bytes around it. Checks every
/// completion (in order, success, length) and every target and guard byte; `progress` is
/// told the bytes completed so far.
#[allow(clippy::too_many_arguments)]
pub fn write_stream(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    pmtu: u32,
    size: usize,
    count: usize,
    seed: u64,
    progress: impl FnMut(u64),
) -> Result<WriteRun> {
    stream(w, dir, qp, None, false, pmtu, size, count, seed, progress)
}

/// [`write_stream`] with SENDs: the receiver's QP `rq` (the pair's other end) has a receive
/// WQE posted ahead for each SEND, its buffer the SEND's target, and keeps its receive queue
/// full; every receive completion is checked too (in order, `WC_RECV`, length, source QP).
#[allow(clippy::too_many_arguments)]
pub fn send_stream(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    rq: &mut QueuePair,
    pmtu: u32,
    size: usize,
    count: usize,
    seed: u64,
    progress: impl FnMut(u64),
) -> Result<WriteRun> {
    stream(
        w,
        dir,
        qp,
        Some(rq),
        false,
        pmtu,
        size,
        count,
        seed,
        progress,
    )
}

/// [`write_stream`] with RDMA READs: the bytes still move in `dir`, but the receiving host
/// asks for them: `qp` is its QP (the pair's end on the receiving side), each READ takes
/// `size` bytes of the sender's region (registered for remote reads) into its target.
#[allow(clippy::too_many_arguments)]
pub fn read_stream(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    pmtu: u32,
    size: usize,
    count: usize,
    seed: u64,
    progress: impl FnMut(u64),
) -> Result<WriteRun> {
    stream(w, dir, qp, None, true, pmtu, size, count, seed, progress)
}

/// A completion's fields as the stream expects them, or why not.
fn expect_wc(wc: &WorkCompletion, want: (u64, u32, u32, u32)) -> Option<String> {
    let got = (wc.wr_id, wc.opcode, wc.byte_len, wc.qpn);
    (wc.status != WC_SUCCESS || got != want).then(|| format!("{wc:?}, want {want:?}"))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn stream(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    mut rq: Option<&mut QueuePair>,
    read: bool,
    pmtu: u32,
    size: usize,
    count: usize,
    seed: u64,
    mut progress: impl FnMut(u64),
) -> Result<WriteRun> {
    let opcode = if read {
        WrOpcode::RdmaRead
    } else if rq.is_some() {
        WrOpcode::Send
    } else {
        WrOpcode::RdmaWrite
    };
    let total = size * count;
    let period_ps = w.a.sim.borrow().tb.period_ps();
    let link_bps = w.ab.config().rate_bps;
    let (src, dst) = sides(w, dir);
    let mut data = vec![0u8; total.max(1)];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut data);
    let sbuf = src.dev.mem.alloc(total.max(1), 4096)?;
    src.dev.mem.write(sbuf.addr, &data)?;
    let smr = src.dev.reg_mr(
        &src.pd,
        sbuf.addr,
        total.max(1) as u64,
        access::LOCAL_WRITE | access::REMOTE_READ,
    )?;
    let dbuf = dst.dev.mem.alloc(total + 2 * GUARD, 4096)?;
    dst.dev
        .mem
        .write(dbuf.addr, &vec![GUARD_BYTE; total + 2 * GUARD])?;
    let dmr = dst.dev.reg_mr(
        &dst.pd,
        dbuf.addr + GUARD as u64,
        total.max(1) as u64,
        access::LOCAL_WRITE | access::REMOTE_WRITE,
    )?;
    let depth = 1usize << qp.sq_log_size;
    let target = |i: usize| Sge {
        addr: dmr.addr + (i * size) as u64,
        length: size as u32,
        lkey: dmr.lkey,
    };
    let wr = |i: usize| {
        let source = Sge {
            addr: sbuf.addr + (i * size) as u64,
            length: size as u32,
            lkey: smr.lkey,
        };
        if read {
            // The receiving side reads the source into its target.
            SendWr {
                wr_id: i as u64,
                opcode,
                sg_list: vec![target(i)],
                remote_addr: source.addr,
                rkey: smr.rkey,
                signaled: true,
                ..Default::default()
            }
        } else {
            SendWr {
                wr_id: i as u64,
                opcode,
                sg_list: vec![source],
                remote_addr: target(i).addr,
                rkey: dmr.rkey,
                signaled: true,
                ..Default::default()
            }
        }
    };
    let sim = src.sim.clone();
    let start = sim.borrow().tb.cycle();
    let wall = Instant::now();
    let (mut posted, mut done) = (0usize, 0usize);
    // Receives: posted ahead of the SENDs, and completed (none for WRITEs).
    let (mut rposted, mut rdone) = (0usize, if rq.is_some() { 0 } else { count });
    let budget = 100_000 + 4 * (total as u64) + 2_000 * count as u64;
    while done < count || rdone < count {
        if let Some(rq) = rq.as_deref_mut() {
            let rdepth = 1usize << rq.rq_log_size;
            let n = (rdepth - (rposted - rdone)).min(count - rposted);
            if n > 0 {
                let list: Vec<RecvWr> = (rposted..rposted + n)
                    .map(|i| RecvWr {
                        wr_id: i as u64,
                        sg_list: vec![target(i)],
                    })
                    .collect();
                dst.dev.post_recv(rq, &list)?;
                rposted += n;
            }
        } else {
            rposted = count;
        }
        let free = depth - (posted - done);
        let n = free.min(rposted - posted);
        if n > 0 {
            let list: Vec<SendWr> = (posted..posted + n).map(wr).collect();
            if read {
                dst.dev.post_send(qp, &list)?;
            } else {
                src.dev.post_send(qp, &list)?;
            }
            posted += n;
        }
        let mut failure = None;
        // The requests complete at the host that posted them (the receiving side's, for
        // READs); receive completions at the receiving side.
        let (dev, cq, rdev, rcq) = if read {
            (&mut dst.dev, &mut dst.cq, &mut src.dev, &mut src.cq)
        } else {
            (&mut src.dev, &mut src.cq, &mut dst.dev, &mut dst.cq)
        };
        let rqpn = rq.as_deref().map_or(0, |q| q.qpn);
        let used = sim.borrow().tb.cycle() - start;
        step_until(
            &sim,
            budget.saturating_sub(used).max(1),
            "completions",
            || {
                let mut got = 0;
                let polled = dev.poll_cq(cq, 64).and_then(|s| {
                    let r = if rdone < count {
                        rdev.poll_cq(rcq, 64)?
                    } else {
                        Vec::new()
                    };
                    Ok((s, r))
                });
                let (wcs, rwcs) = match polled {
                    Ok(w) => w,
                    Err(e) => {
                        failure = Some(e.to_string());
                        return true;
                    }
                };
                for wc in &wcs {
                    let want = (done as u64, opcode.wc_opcode(), size as u32, qp.qpn);
                    if let Some(f) = expect_wc(wc, want) {
                        failure.get_or_insert(format!("completion {done} of {count}: {f}"));
                    }
                    done += 1;
                    got += 1;
                }
                for wc in &rwcs {
                    let want = (rdone as u64, WC_RECV, size as u32, rqpn);
                    if let Some(f) = expect_wc(wc, want) {
                        failure.get_or_insert(format!("receive {rdone} of {count}: {f}"));
                    }
                    rdone += 1;
                    got += 1;
                }
                got > 0
            },
        )?;
        if let Some(f) = failure {
            return Err(SimError::Design(f));
        }
        progress((done.min(rdone) * size) as u64);
    }
    let cycles = sim.borrow().tb.cycle() - start;
    let wall_s = wall.elapsed().as_secs_f64();
    let mut got = vec![0u8; total + 2 * GUARD];
    dst.dev.mem.read(dbuf.addr, &mut got)?;
    if let Some(i) = (0..total).find(|&i| got[GUARD + i] != data[i]) {
        return Err(SimError::Design(format!(
            "byte {} of {opcode:?} {} ({size} B, {}) differs: {:#04x}, sent {:#04x}",
            i % size.max(1),
            i / size.max(1),
            dir.name(),
            got[GUARD + i],
            data[i]
        )));
    }
    let guards = got[..GUARD].iter().chain(&got[GUARD + total..]);
    if guards.clone().any(|&b| b != GUARD_BYTE) {
        return Err(SimError::Design(format!(
            "a byte around the target region ({}) changed",
            dir.name()
        )));
    }
    src.dev.dereg_mr(&smr)?;
    dst.dev.dereg_mr(&dmr)?;
    src.dev.mem.free(sbuf)?;
    dst.dev.mem.free(dbuf)?;
    Ok(WriteRun {
        opcode,
        size: size as u64,
        count: count as u64,
        pmtu,
        cycles,
        period_ps,
        link_bps,
        wall_s,
    })
}

/// Cycles from ringing the doorbell of one `size`-byte WRITE on an idle `qp` to `poll_cq`
/// seeing its completion (polled every cycle), checked like [`write_stream`].
pub fn write_latency(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    pmtu: u32,
    size: usize,
    seed: u64,
) -> Result<u64> {
    Ok(write_stream(w, dir, qp, pmtu, size, 1, seed, |_| ())?.cycles)
}

/// What an atomic stream measured: `count` atomics on one QP, doorbell of the first to
/// `poll_cq` seeing the last completion.
#[derive(Clone, Debug)]
pub struct AtomicRun {
    pub count: u64,
    pub cycles: u64,
    pub period_ps: u64,
    pub wall_s: f64,
}

impl AtomicRun {
    /// Atomics per second of simulated time, in millions.
    pub fn mops(&self) -> f64 {
        self.count as f64 / (self.cycles as f64 * self.period_ps as f64 * 1e-12) / 1e6
    }

    /// Simulated cycles per atomic.
    pub fn cycles_per_op(&self) -> f64 {
        self.cycles as f64 / self.count.max(1) as f64
    }

    /// Verilator's speed over the run (two whole NICs).
    pub fn cycles_per_s(&self) -> f64 {
        self.cycles as f64 / self.wall_s.max(1e-9)
    }
}

/// `count` atomics on `qp`, whose host is the sender of `dir` (its peer's memory holds the
/// 8-byte word they work on), the send queue kept full: FETCH_AND_ADDs of random addends and
/// CMP_AND_SWPs, every other one, whose compare value is the word's value at that point (so
/// each swaps). One QP's atomics are done in its order, so each original value is known:
/// every one that lands, every completion (`WC_FETCH_ADD` / `WC_COMP_SWAP`, 8 bytes) and the
/// word's final value are checked.
pub fn atomic_stream(
    w: &mut World,
    dir: Direction,
    qp: &mut QueuePair,
    count: usize,
    seed: u64,
    mut progress: impl FnMut(u64),
) -> Result<AtomicRun> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let period_ps = w.a.sim.borrow().tb.period_ps();
    let (src, dst) = sides(w, dir);
    let start_v = r.next_u64();
    let word = dst.dev.mem.alloc(8, 8)?;
    dst.dev.mem.write(word.addr, &start_v.to_le_bytes())?;
    let wmr = dst
        .dev
        .reg_mr(&dst.pd, word.addr, 8, access::REMOTE_ATOMIC)?;
    let res = src.dev.mem.alloc(8 * count.max(1), 8)?;
    let rmr = src.dev.reg_mr(
        &src.pd,
        res.addr,
        8 * count.max(1) as u64,
        access::LOCAL_WRITE,
    )?;
    // The requests and the original value each finds.
    let mut v = start_v;
    let mut wrs = Vec::with_capacity(count);
    let mut origs = Vec::with_capacity(count);
    for i in 0..count {
        let (opcode, compare_add, swap) = if i % 2 == 0 {
            (WrOpcode::AtomicFetchAndAdd, r.next_u64(), 0)
        } else {
            (WrOpcode::AtomicCmpAndSwp, v, r.next_u64())
        };
        origs.push(v);
        v = if i % 2 == 0 {
            v.wrapping_add(compare_add)
        } else {
            swap
        };
        wrs.push(SendWr {
            wr_id: i as u64,
            opcode,
            sg_list: vec![Sge {
                addr: res.addr + 8 * i as u64,
                length: 8,
                lkey: rmr.lkey,
            }],
            remote_addr: word.addr,
            rkey: wmr.rkey,
            compare_add,
            swap,
            signaled: true,
            ..Default::default()
        });
    }
    let depth = 1usize << qp.sq_log_size;
    let sim = src.sim.clone();
    let start = sim.borrow().tb.cycle();
    let wall = Instant::now();
    let (mut posted, mut done) = (0usize, 0usize);
    let budget = 100_000 + 5_000 * count as u64;
    while done < count {
        let n = (depth - (posted - done)).min(count - posted);
        if n > 0 {
            src.dev.post_send(qp, &wrs[posted..posted + n])?;
            posted += n;
        }
        let mut failure = None;
        let used = sim.borrow().tb.cycle() - start;
        let (dev, cq) = (&mut src.dev, &mut src.cq);
        step_until(
            &sim,
            budget.saturating_sub(used).max(1),
            "atomic completions",
            || {
                let wcs = match dev.poll_cq(cq, 64) {
                    Ok(w) => w,
                    Err(e) => {
                        failure = Some(e.to_string());
                        return true;
                    }
                };
                for wc in &wcs {
                    let want = (done as u64, wrs[done].opcode.wc_opcode(), 8, qp.qpn);
                    if let Some(f) = expect_wc(wc, want) {
                        failure.get_or_insert(format!("atomic {done} of {count}: {f}"));
                    }
                    done += 1;
                }
                !wcs.is_empty()
            },
        )?;
        if let Some(f) = failure {
            return Err(SimError::Design(f));
        }
        progress(done as u64);
    }
    let cycles = sim.borrow().tb.cycle() - start;
    let wall_s = wall.elapsed().as_secs_f64();
    let mut got = vec![0u8; 8 * count];
    src.dev.mem.read(res.addr, &mut got)?;
    for (i, want) in origs.iter().enumerate() {
        let orig = u64::from_le_bytes(got[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
        if orig != *want {
            return Err(SimError::Design(format!(
                "atomic {i} ({}) brought back {orig:#x}, the word held {want:#x}",
                dir.name()
            )));
        }
    }
    let mut fin = [0u8; 8];
    dst.dev.mem.read(word.addr, &mut fin)?;
    if u64::from_le_bytes(fin) != v {
        return Err(SimError::Design(format!(
            "after {count} atomics ({}) the word is {:#x}, want {v:#x}",
            dir.name(),
            u64::from_le_bytes(fin)
        )));
    }
    src.dev.dereg_mr(&rmr)?;
    dst.dev.dereg_mr(&wmr)?;
    src.dev.mem.free(res)?;
    dst.dev.mem.free(word)?;
    Ok(AtomicRun {
        count: count as u64,
        cycles,
        period_ps,
        wall_s,
    })
}
