//! Protection that holds while work is in flight: a region deregistered (or registered anew
//! at its index) takes no more of a peer's WRITE or a READ's responses (`landing`), and gives
//! no more to a peer's READ or a local WRITE (`reading`); a region the work does not touch
//! costs it nothing.

mod landing;
mod reading;

use anyhow::{ensure, Result};
use ferroce_sim::world::World;
use ferroce_tests::nonzero_counters;

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
