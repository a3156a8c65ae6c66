//! Protection that holds while work is in flight: a region deregistered (or registered anew
//! at its index) takes no more of a peer's WRITE or a READ's responses (`landing`), and gives
//! no more to a peer's READ or a local WRITE (`reading`); a region the work does not touch
//! costs it nothing.

mod landing;
mod reading;

use anyhow::{ensure, Result};
use ferroce_driver::{MemoryRegion, QueuePair};
use ferroce_sim::world::{Host, World};
use ferroce_tests::nonzero_counters;
use rand::Rng;

/// A round's QP pair (PMTU 256-1024, random first PSNs) and its message (32-64 KiB of random
/// bytes).
pub(super) struct Round {
    pub pmtu: u32,
    pub len: usize,
    pub qa: QueuePair,
    pub qb: QueuePair,
    pub data: Vec<u8>,
}

/// A new round on `w`.
pub(super) fn start(w: &mut World, r: &mut impl Rng) -> Result<Round> {
    let pmtu = 256u32 << r.gen_range(0..3);
    let len = r.gen_range(32 << 10..=64 << 10);
    let (qa, qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let data: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    Ok(Round {
        pmtu,
        len,
        qa,
        qb,
        data,
    })
}

/// Deregister `mr` of host `h` and, if `again`, register the same range with the same rights
/// anew (a new tag at the index): the new region.
pub(super) fn deregister(
    h: &mut Host,
    mr: &MemoryRegion,
    again: bool,
) -> Result<Option<MemoryRegion>> {
    h.dev.dereg_mr(mr)?;
    Ok(if again {
        Some(h.dev.reg_mr(&h.pd, mr.addr, mr.len, mr.access)?)
    } else {
        None
    })
}

/// Run `w` until host b's (`on_b`) or a's parser has accepted `goal` frames in all.
pub(super) fn accepted(w: &World, on_b: bool, goal: u64, ctx: &str) -> Result<()> {
    let h = if on_b { &w.b } else { &w.a };
    let mut waited = 0;
    while h.counter("rx_accepted")? < goal {
        w.run(10)?;
        waited += 10;
        ensure!(waited < 100_000, "{ctx}: nothing reached the host");
    }
    Ok(())
}

/// How many of `data`'s first bytes `landed` holds, when it holds nothing else (zeros past
/// them) and not all of them.
pub(super) fn first_bytes_only(landed: &[u8], data: &[u8]) -> Option<usize> {
    let n = landed
        .iter()
        .zip(data)
        .position(|(a, b)| a != b)
        .unwrap_or(data.len());
    (n < data.len() && landed[n..].iter().all(|&b| b == 0)).then_some(n)
}

/// The next two completions on host a's CQ, as (wr_id, status).
pub(super) fn two_completions(w: &mut World, ctx: &str) -> Result<Vec<(u64, u32)>> {
    completions(w, 2, ctx)
}

/// The next `n` completions on host a's CQ, as (wr_id, status).
pub(super) fn completions(w: &mut World, n: usize, ctx: &str) -> Result<Vec<(u64, u32)>> {
    let mut got = Vec::new();
    let mut cycles = 0;
    while got.len() < n {
        w.run(1000)?;
        cycles += 1000;
        got.extend(w.a.dev.poll_cq(&mut w.a.cq, 8)?);
        ensure!(
            cycles < 400_000,
            "{ctx}: {got:?}; a: {}; b: {}",
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    Ok(got.iter().map(|c| (c.wr_id, c.status)).collect())
}
