//! Seeded random link faults ([`RandomFaults`]): a fault hook for [`Link`](crate::link::Link) drawing loss,
//! corruption, duplication, reordering and loss bursts, frame by frame.

use crate::fault::Fault;
use crate::{Result, SimError};

/// Seeded random faults on one direction of a link: each frame, independently, is lost,
/// corrupted (one byte flipped: the receiving MAC's FCS check drops it), duplicated or
/// reordered (held back 0.5-5 us, so the next frames overtake it) with these probabilities,
/// and starts a burst of `burst_len` lost frames with probability `burst`. A burst is an
/// outage: it also ends at the first frame that starts `burst_ps` or more after the burst's
/// first one (on a quiet link, twenty frames would be a QP's every retry, spread over
/// milliseconds). The same seed gives the same faults for the same frames at the same times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomFaults {
    pub loss: f64,
    pub corrupt: f64,
    pub duplicate: f64,
    pub reorder: f64,
    pub burst: f64,
    pub burst_len: u32,
    /// The longest a burst lasts, in ps of wire time from its first frame's start.
    pub burst_ps: u64,
    pub seed: u64,
}

impl Default for RandomFaults {
    /// No faults; bursts of 20 frames within 100 us when `burst` is set; seed 1.
    fn default() -> Self {
        RandomFaults {
            loss: 0.0,
            corrupt: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            burst: 0.0,
            burst_len: 20,
            burst_ps: 100_000_000,
            seed: 1,
        }
    }
}

impl RandomFaults {
    /// No fault can happen.
    pub fn is_clean(&self) -> bool {
        self.loss + self.corrupt + self.duplicate + self.reorder + self.burst == 0.0
    }

    /// Every probability in 0..=1, the four per-frame ones summing to at most 1, bursts of at
    /// least one frame and one ps.
    pub fn validate(&self) -> Result<()> {
        let p = [
            ("loss", self.loss),
            ("corrupt", self.corrupt),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
            ("burst", self.burst),
        ];
        for (name, v) in p {
            if !(0.0..=1.0).contains(&v) {
                return Err(SimError::Design(format!(
                    "link fault {name} = {v}: a probability is between 0 and 1"
                )));
            }
        }
        let sum = self.loss + self.corrupt + self.duplicate + self.reorder;
        if sum > 1.0 {
            return Err(SimError::Design(format!(
                "link faults loss + corrupt + duplicate + reorder = {sum}: at most 1 (one fault per frame)"
            )));
        }
        if self.burst > 0.0 && (self.burst_len == 0 || self.burst_ps == 0) {
            return Err(SimError::Design(
                "link fault bursts of 0 frames or 0 ps".into(),
            ));
        }
        Ok(())
    }

    /// The same faults with another seed (for the other direction of a link).
    pub fn reseeded(self, seed: u64) -> RandomFaults {
        RandomFaults { seed, ..self }
    }

    /// A fault hook drawing these faults ([`Link::set_timed_fault_hook`](crate::link::Link::set_timed_fault_hook)).
    pub fn hook(&self) -> impl FnMut(u64, u64, &[u8]) -> Fault + 'static {
        use rand::{Rng, SeedableRng};
        let f = *self;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(f.seed);
        let (mut burst_left, mut burst_start) = (0u32, 0u64);
        move |_, start, frame| {
            // Draw the same numbers for every frame, whatever happens to it.
            let start_burst = rng.gen_bool(f.burst);
            let r: f64 = rng.gen();
            let offset = rng.gen_range(0..frame.len().max(1));
            let mask = rng.gen_range(1..=255u8);
            let delay = rng.gen_range(500_000..=5_000_000u64);
            if burst_left > 0 && start.saturating_sub(burst_start) >= f.burst_ps {
                burst_left = 0;
            }
            if burst_left == 0 && start_burst {
                burst_left = f.burst_len;
                burst_start = start;
            }
            if burst_left > 0 {
                burst_left -= 1;
                return Fault::BurstDrop;
            }
            if r < f.loss {
                Fault::Drop
            } else if r < f.loss + f.corrupt {
                Fault::Corrupt { offset, mask }
            } else if r < f.loss + f.corrupt + f.duplicate {
                Fault::Duplicate
            } else if r < f.loss + f.corrupt + f.duplicate + f.reorder {
                Fault::Reorder { ps: delay }
            } else {
                Fault::Pass
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_on_a_quiet_link_ends_after_its_time() {
        // Frames 40 us apart: a burst of at most 100 us takes the frames at 0, 40 and 80 us
        // of its start (runs of 3, or 6, 9 when one starts as one ends); without the bound,
        // its 20 frames (800 us, a QP's every retry at a short ACK timeout).
        let runs = |f: RandomFaults| {
            let mut h = f.hook();
            let (mut runs, mut run) = (Vec::new(), 0);
            for i in 0..100_000u64 {
                if h(i, i * 40_000_000, &[0u8; 64]) == Fault::BurstDrop {
                    run += 1;
                } else if run > 0 {
                    runs.push(run);
                    run = 0;
                }
            }
            runs
        };
        let f = RandomFaults {
            burst: 0.01,
            burst_len: 20,
            burst_ps: 100_000_000,
            seed: 11,
            ..RandomFaults::default()
        };
        f.validate().expect("valid");
        let bounded = runs(f);
        assert!(bounded.len() > 500, "{} bursts", bounded.len());
        assert!(bounded.iter().all(|r| r % 3 == 0), "{bounded:?}");
        let unbounded = runs(RandomFaults {
            burst_ps: u64::MAX,
            ..f
        });
        assert!(unbounded.iter().all(|r| r % 20 == 0), "{unbounded:?}");
        let zero = RandomFaults { burst_ps: 0, ..f };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn random_faults_follow_their_rates_and_their_seed() {
        let f = RandomFaults {
            loss: 0.01,
            corrupt: 0.001,
            duplicate: 0.005,
            reorder: 0.01,
            burst: 0.0005,
            burst_len: 20,
            burst_ps: 100_000_000,
            seed: 7,
        };
        f.validate().expect("valid");
        // Back to back: a frame a microsecond, so every burst runs its 20 frames.
        let draw = |f: RandomFaults| {
            let mut h = f.hook();
            (0..200_000u64)
                .map(|i| h(i, i * 1_000_000, &[0u8; 64]))
                .collect::<Vec<_>>()
        };
        let v = draw(f);
        assert_eq!(v, draw(f), "the same seed gives the same faults");
        assert_ne!(v, draw(f.reseeded(8)));
        let n = v.len() as f64;
        let share = |p: &dyn Fn(&Fault) -> bool| v.iter().filter(|x| p(x)).count() as f64 / n;
        // Bursts take their frames first; the others' rates are of the rest (99%).
        let rest = 1.0 - share(&|x| *x == Fault::BurstDrop);
        for (name, want, got) in [
            ("loss", f.loss, share(&|x| *x == Fault::Drop)),
            (
                "corrupt",
                f.corrupt,
                share(&|x| matches!(x, Fault::Corrupt { .. })),
            ),
            ("duplicate", f.duplicate, share(&|x| *x == Fault::Duplicate)),
            (
                "reorder",
                f.reorder,
                share(&|x| matches!(x, Fault::Reorder { .. })),
            ),
        ] {
            let want = want * rest;
            // Five standard deviations of a binomial count.
            let tol = 5.0 * (want * (1.0 - want) / n).sqrt();
            assert!((got - want).abs() < tol, "{name}: {got} against {want}");
        }
        // Bursts: runs of exactly 20 (two may join into 40 when one starts as one ends).
        let mut runs = Vec::new();
        let mut run = 0;
        for x in &v {
            if *x == Fault::BurstDrop {
                run += 1;
            } else if run > 0 {
                runs.push(run);
                run = 0;
            }
        }
        assert!(runs.len() > 50, "{} bursts", runs.len());
        assert!(runs.iter().all(|r| r % 20 == 0), "burst lengths {runs:?}");
        let bad = RandomFaults {
            loss: 0.6,
            reorder: 0.6,
            ..RandomFaults::default()
        };
        assert!(bad.validate().is_err());
        assert!(RandomFaults {
            loss: -0.1,
            ..RandomFaults::default()
        }
        .validate()
        .is_err());
    }
}
