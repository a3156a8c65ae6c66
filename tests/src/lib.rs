//! Shared helpers for ferroce's tests.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The seed for a random test: `$FERROCE_SEED` if set, else fresh. Printed so that any run
/// can be repeated with `FERROCE_SEED=<seed> cargo test <name>`.
pub fn seed(test: &str) -> u64 {
    let seed = std::env::var("FERROCE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("{test}: seed {seed} (rerun with FERROCE_SEED={seed})");
    seed
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}
