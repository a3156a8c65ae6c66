//! Pause generators (cocotbext-axi's `set_pause_generator`): `true` means "pause this cycle".
//! A source pauses by holding `tvalid` low between beats; a sink by holding `tready` low.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Default)]
pub enum PauseGenerator {
    /// Never pause: full rate.
    #[default]
    Never,
    /// Pause each cycle with probability `p`, from a seeded generator (reproducible).
    Random { rng: Box<ChaCha8Rng>, p: f64 },
    /// Repeat a fixed pattern.
    Pattern { pattern: Vec<bool>, at: usize },
}

impl PauseGenerator {
    pub fn random(seed: u64, p: f64) -> Self {
        PauseGenerator::Random {
            rng: Box::new(ChaCha8Rng::seed_from_u64(seed)),
            p: p.clamp(0.0, 1.0),
        }
    }

    pub fn pattern(pattern: Vec<bool>) -> Self {
        PauseGenerator::Pattern { pattern, at: 0 }
    }

    /// Whether to pause this cycle.
    pub fn pause(&mut self) -> bool {
        match self {
            PauseGenerator::Never => false,
            PauseGenerator::Random { rng, p } => rng.gen_bool(*p),
            PauseGenerator::Pattern { pattern, at } => {
                if pattern.is_empty() {
                    return false;
                }
                let v = pattern[*at % pattern.len()];
                *at = (*at + 1) % pattern.len();
                v
            }
        }
    }
}
