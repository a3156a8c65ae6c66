//! Many QPs sending at once: `qps` RC QP pairs from host a to host b, each with its own
//! source and target regions, every send queue kept full of WRITEs. It measures what one QP
//! alone cannot: that the requester's turns, the completer's pool of `SENT` records and the
//! per-QP shares of it keep the line busy when the work is spread over many QPs
//! (`ferroce perf`'s "64 QPs" table).

use crate::traffic::{WriteRun, LOSSLESS_PFC};
use crate::world::{step_until, World, WorldConfig};
use crate::{Result, SimError};
use ferroce_driver::{DmaMemory, MemoryRegion, QueuePair, SendWr, Sge, WrOpcode};
use ferroce_spec::queues::WC_SUCCESS;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// Send queue entries of each QP (the driver's ring): the WRITEs a QP keeps posted.
const DEPTH: u32 = 16;

/// What [`write_many`] measured: the stream as a whole (`count` is every QP's WRITEs), and
/// how often a QP waited for its share of the completer's pool (RC_STATS `POOL_WAIT`).
#[derive(Clone, Copy, Debug)]
pub struct ManyRun {
    pub qps: usize,
    pub run: WriteRun,
    pub pool_waits: u32,
}

/// One QP's side of the run: its pair, its regions, its WRITEs posted and completed.
struct Lane {
    qa: QueuePair,
    src: MemoryRegion,
    dst: MemoryRegion,
    posted: usize,
    done: usize,
}

/// `per_qp` WRITEs of `size` bytes on each of `qps` QP pairs (path MTU `pmtu`, PFC on
/// priority 0 both ways), a to b, every send queue kept full. Each QP writes its source
/// (random bytes from `seed`) to consecutive places in its own target region; every
/// completion (per QP in order, success, length) and every target byte is checked.
/// `progress` is told the bytes completed so far.
pub fn write_many(
    qps: usize,
    pmtu: u32,
    size: usize,
    per_qp: usize,
    seed: u64,
    mut progress: impl FnMut(u64),
) -> Result<ManyRun> {
    let mut w = World::open(&WorldConfig::default())?;
    w.a.dev.set_pfc(&LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&LOSSLESS_PFC)?;
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut data = vec![0u8; size];
    r.fill_bytes(&mut data);
    let mut lanes = Vec::with_capacity(qps);
    for _ in 0..qps {
        let (qa, _qb) = w.connect(pmtu, r.next_u32() >> 8, r.next_u32() >> 8, DEPTH)?;
        let src = w.a.buffer(size, &data)?;
        let dst = w.b.buffer(size * per_qp, &vec![0; size * per_qp])?;
        lanes.push(Lane {
            qa,
            src,
            dst,
            posted: 0,
            done: 0,
        });
    }
    let sim = w.a.sim.clone();
    let period_ps = sim.borrow().tb.period_ps();
    let link_bps = w.ab.config().rate_bps;
    let total = qps * per_qp;
    let budget = 100_000 + 4 * (total * size) as u64 + 2_000 * total as u64;
    let start = sim.borrow().tb.cycle();
    let wall = Instant::now();
    let mut done = 0;
    while done < total {
        for l in &mut lanes {
            let n = (DEPTH as usize - (l.posted - l.done)).min(per_qp - l.posted);
            let list: Vec<SendWr> = (l.posted..l.posted + n)
                .map(|i| SendWr {
                    wr_id: i as u64,
                    opcode: WrOpcode::RdmaWrite,
                    sg_list: vec![Sge {
                        addr: l.src.addr,
                        length: size as u32,
                        lkey: l.src.lkey,
                    }],
                    remote_addr: l.dst.addr + (i * size) as u64,
                    rkey: l.dst.rkey,
                    signaled: true,
                    ..Default::default()
                })
                .collect();
            if n > 0 {
                w.a.dev.post_send(&mut l.qa, &list)?;
                l.posted += n;
            }
        }
        let mut failure = None;
        let used = sim.borrow().tb.cycle() - start;
        let (dev, cq) = (&mut w.a.dev, &mut w.a.cq);
        step_until(
            &sim,
            budget.saturating_sub(used).max(1),
            "completions",
            || match dev.poll_cq(cq, 64) {
                Ok(wcs) => {
                    for wc in &wcs {
                        let lane = lanes.iter_mut().find(|l| l.qa.qpn == wc.qpn);
                        let ok = lane.is_some_and(|l| {
                            let want = (l.done as u64, WC_SUCCESS, size as u32);
                            l.done += 1;
                            (wc.wr_id, wc.status, wc.byte_len) == want
                        });
                        if !ok {
                            failure.get_or_insert(format!("completion {wc:?}"));
                        }
                        done += 1;
                    }
                    !wcs.is_empty()
                }
                Err(e) => {
                    failure = Some(e.to_string());
                    true
                }
            },
        )?;
        if let Some(f) = failure {
            return Err(SimError::Design(f));
        }
        progress((done * size) as u64);
    }
    let cycles = sim.borrow().tb.cycle() - start;
    let wall_s = wall.elapsed().as_secs_f64();
    let mut got = vec![0u8; size * per_qp];
    for (q, l) in lanes.iter().enumerate() {
        w.b.dev.mem.read(l.dst.addr, &mut got)?;
        if let Some(i) = (0..got.len()).find(|&i| got[i] != data[i % size]) {
            return Err(SimError::Design(format!(
                "QP {q} of {qps}: byte {} of WRITE {} ({size} B) differs",
                i % size,
                i / size
            )));
        }
    }
    Ok(ManyRun {
        qps,
        run: WriteRun {
            opcode: WrOpcode::RdmaWrite,
            size: size as u64,
            count: total as u64,
            pmtu,
            cycles,
            period_ps,
            link_bps,
            wall_s,
        },
        pool_waits: w.a.dev.rc_stats()?.pool_wait,
    })
}

/// The runs of `ferroce perf`'s "64 QPs" table: (QPs, bytes per WRITE, WRITEs per QP), the
/// same bytes in all at each size.
const RUNS: [(usize, usize, usize); 6] = [
    (1, 64 << 10, 128),
    (8, 64 << 10, 16),
    (64, 64 << 10, 2),
    (1, 4 << 10, 1024),
    (8, 4 << 10, 128),
    (64, 4 << 10, 16),
];

/// What the "64 QPs" table's runs are (the page's note).
pub const NOTE: &str = "Host a to host b, path MTU 4096, PFC on priority 0, each QP with its \
own source and target regions and its send queue (16 entries) kept full of WRITEs, all QPs \
at once; throughput from the first doorbell to the last completion, every byte and completion \
checked. The same bytes go on one QP and spread over 8 and 64: the requester takes the QPs \
in turns (a quantum each), and each QP holds at most its share of the completer's 512 `SENT` \
records (`pool waits`: a QP's turn ended because its share was used, RC_STATS POOL_WAIT).";

/// The "64 QPs" table (see [`NOTE`]).
pub fn table() -> Result<String> {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "| QPs | WRITE size (bytes) | WRITEs per QP | simulated cycles | Gb/s | of ceiling | pool waits | Verilator cycles/s (2 NICs) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (k, &(qps, size, per_qp)) in RUNS.iter().enumerate() {
        let m = write_many(qps, 4096, size, per_qp, 0x6400 + k as u64, |_| ())?;
        let _ = writeln!(
            out,
            "| {qps} | {size} | {per_qp} | {} | {:.3} | {:.1}% | {} | {:.0} k |",
            m.run.cycles,
            m.run.gbps(),
            100.0 * m.run.of_ceiling(),
            m.pool_waits,
            m.run.cycles_per_s() / 1e3
        );
    }
    Ok(out)
}
