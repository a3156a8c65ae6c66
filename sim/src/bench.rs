//! The benchmark's setting ([`Bench`]): one RC QP pair between the two hosts of a default world,
//! and the streams `ferroce perf`, the demo and the throughput tests measure on it.

use crate::traffic::{
    atomic_stream, stream, write_latency, write_stream, AtomicRun, Direction, WriteRun,
};
use crate::world::{World, LOSSLESS_PFC};
use crate::Result;
use crate::{LinkStats, RandomFaults};
use ferroce_driver::{RcStats, WrOpcode};

/// The benchmark's setting: one RC QP pair at path MTU `pmtu` between the two hosts of a
/// default world (10 Gb/s links, 500 ns PCIe reads) with PFC on priority 0
/// ([`LOSSLESS_PFC`]), completions in request order unless `reorder_seed` interleaves them.
#[derive(Clone, Copy, Debug)]
pub struct Bench {
    pub pmtu: u32,
    pub reorder_seed: Option<u64>,
    pub seed: u64,
}

/// What [`Bench::run_lossy_writes`] measured: the stream, both drivers' RC_STATS (a, b) and
/// both links' faults (a to b, b to a).
#[derive(Clone, Debug)]
pub struct LossyRun {
    pub run: WriteRun,
    pub stats: [RcStats; 2],
    pub links: [LinkStats; 2],
}

/// What [`Bench::run`] measured.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Doorbell-to-completion cycles of one 64-byte WRITE on an idle QP.
    pub latency_64: u64,
    pub period_ps: u64,
    /// One stream per size, host a to host b.
    pub runs: Vec<WriteRun>,
}

impl Bench {
    /// Measure the 64-byte latency, then stream `count` WRITEs of each `size` from a to b.
    pub fn run(
        &self,
        sizes: &[(usize, usize)],
        progress: impl FnMut(usize, u64),
    ) -> Result<BenchResult> {
        self.measure(WrOpcode::RdmaWrite, sizes, progress)
    }

    /// [`Bench::run`] with SENDs (the receiver posting a receive WQE ahead of each); the
    /// latency is still a 64-byte WRITE's.
    pub fn run_sends(
        &self,
        sizes: &[(usize, usize)],
        progress: impl FnMut(usize, u64),
    ) -> Result<BenchResult> {
        self.measure(WrOpcode::Send, sizes, progress)
    }

    /// [`Bench::run`] with RDMA READs: host b reads a's bytes (the responses go a to b, as
    /// the WRITEs do); the latency is still a 64-byte WRITE's.
    pub fn run_reads(
        &self,
        sizes: &[(usize, usize)],
        progress: impl FnMut(usize, u64),
    ) -> Result<BenchResult> {
        self.measure(WrOpcode::RdmaRead, sizes, progress)
    }

    /// `count` atomics on one QP, host a on a word in host b's memory ([`atomic_stream`]).
    pub fn run_atomics(&self, count: usize, progress: impl FnMut(u64)) -> Result<AtomicRun> {
        let mut w = World::open(&crate::world::WorldConfig {
            reorder_seed: self.reorder_seed,
            ..Default::default()
        })?;
        w.a.dev.set_pfc(&LOSSLESS_PFC)?;
        w.b.dev.set_pfc(&LOSSLESS_PFC)?;
        let (mut qa, _qb) = w.connect(self.pmtu, 0xff_ff00, 0, 256)?;
        atomic_stream(&mut w, Direction::AToB, &mut qa, count, self.seed, progress)
    }

    /// `count` WRITEs of `size` bytes from a to b over links that lose `faults`' share of
    /// their frames (and corrupt, duplicate, reorder as it says), the QPs' ACK timeout
    /// `timeout` (4.096 us x 2^timeout): go-back-N recovers every loss; every byte and
    /// completion is checked as in [`write_stream`]. PFC stays off (it would not stop these
    /// losses).
    pub fn run_lossy_writes(
        &self,
        size: usize,
        count: usize,
        faults: RandomFaults,
        timeout: u8,
        progress: impl FnMut(u64),
    ) -> Result<LossyRun> {
        let mut w = World::open(&crate::world::WorldConfig {
            reorder_seed: self.reorder_seed,
            faults,
            ..Default::default()
        })?;
        w.retry.timeout = Some(timeout);
        let (mut qa, _qb) = w.connect(self.pmtu, 0xff_ff00, 0, 256)?;
        let run = write_stream(
            &mut w,
            Direction::AToB,
            &mut qa,
            self.pmtu,
            size,
            count,
            self.seed,
            progress,
        )?;
        Ok(LossyRun {
            run,
            stats: [w.a.dev.rc_stats()?, w.b.dev.rc_stats()?],
            links: [w.ab.stats(), w.ba.stats()],
        })
    }

    fn measure(
        &self,
        opcode: WrOpcode,
        sizes: &[(usize, usize)],
        mut progress: impl FnMut(usize, u64),
    ) -> Result<BenchResult> {
        let mut w = World::open(&crate::world::WorldConfig {
            reorder_seed: self.reorder_seed,
            ..Default::default()
        })?;
        // Lossless Ethernet, as RoCE is deployed: back-to-back small SENDs can arrive faster
        // than the receiver takes receive WQEs (one fetch each), and nothing retransmits yet.
        w.a.dev.set_pfc(&LOSSLESS_PFC)?;
        w.b.dev.set_pfc(&LOSSLESS_PFC)?;
        let (mut qa, mut qb) = w.connect(self.pmtu, 0xff_ff00, 0, 256)?;
        let period_ps = w.a.sim.borrow().tb.period_ps();
        let latency_64 = write_latency(&mut w, Direction::AToB, &mut qa, self.pmtu, 64, self.seed)?;
        let mut runs = Vec::new();
        for (k, &(size, count)) in sizes.iter().enumerate() {
            let read = opcode == WrOpcode::RdmaRead;
            let (qp, rq) = match opcode {
                WrOpcode::Send => (&mut qa, Some(&mut qb)),
                WrOpcode::RdmaRead => (&mut qb, None),
                _ => (&mut qa, None),
            };
            let seed = self.seed ^ k as u64;
            runs.push(stream(
                &mut w,
                Direction::AToB,
                qp,
                rq,
                read,
                self.pmtu,
                size,
                count,
                seed,
                |b| progress(k, b),
            )?);
        }
        Ok(BenchResult {
            latency_64,
            period_ps,
            runs,
        })
    }
}
