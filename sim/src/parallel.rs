//! A second thread for model evaluations: two NICs joined on one clock evaluate their models at
//! once, one on the caller's thread and one here, while everything else (bus models, links,
//! root complexes, the driver) stays on the caller's thread.
//!
//! A model evaluation is a call into the model's library on its own memory; the two models of
//! a world share nothing, so evaluating them at once changes no result. The handoff is a spin
//! on one atomic (an evaluation takes microseconds, a futex wake as long again); the helper
//! parks after a millisecond without work, so an idle world costs no core.
//!
//! A world steps in parallel only while it is the only world with a helper in the process
//! ([`Helper::alone`]): when tests run two worlds on two cores at once, a helper thread each
//! would only take turns with them.

use crate::model::EvalJob;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const IDLE: u8 = 0;
const POSTED: u8 = 1;
const QUIT: u8 = 2;

/// Helpers alive in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

struct Shared {
    state: AtomicU8,
    job: std::sync::Mutex<Option<EvalJob>>,
    parked: AtomicBool,
}

/// The helper thread of one world.
pub(crate) struct Helper {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Helper {
    /// A helper thread, or `None` where the machine has one core (or `FERROCE_SIM_THREADS=1`).
    pub(crate) fn new() -> Option<Helper> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let wanted = std::env::var("FERROCE_SIM_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(2);
        if cores < 2 || wanted < 2 {
            return None;
        }
        let shared = Arc::new(Shared {
            state: AtomicU8::new(IDLE),
            job: std::sync::Mutex::new(None),
            parked: AtomicBool::new(false),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ferroce-eval".into())
            .spawn(move || worker(&s))
            .ok()?;
        LIVE.fetch_add(1, Ordering::SeqCst);
        Some(Helper {
            shared,
            thread: Some(thread),
        })
    }

    /// Whether this is the only helper in the process (its world may step in parallel).
    pub(crate) fn alone(&self) -> bool {
        LIVE.load(Ordering::Relaxed) == 1
    }

    /// Run `here` on this thread and `there` on the helper's, and return when both are done.
    pub(crate) fn both(&self, here: Option<EvalJob>, there: Option<EvalJob>) {
        let Some(there) = there else {
            if let Some(j) = here {
                j.run();
            }
            return;
        };
        if let Ok(mut slot) = self.shared.job.lock() {
            *slot = Some(there);
        }
        self.shared.state.store(POSTED, Ordering::SeqCst);
        if self.shared.parked.load(Ordering::SeqCst) {
            if let Some(t) = &self.thread {
                t.thread().unpark();
            }
        }
        if let Some(j) = here {
            j.run();
        }
        let mut spins = 0u32;
        while self.shared.state.load(Ordering::Acquire) == POSTED {
            spins += 1;
            if spins < 1 << 16 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        self.shared.state.store(QUIT, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn worker(s: &Shared) {
    let mut last_work = Instant::now();
    loop {
        match s.state.load(Ordering::Acquire) {
            POSTED => {
                let job = s.job.lock().ok().and_then(|mut j| j.take());
                if let Some(j) = job {
                    j.run();
                }
                s.state.store(IDLE, Ordering::Release);
                last_work = Instant::now();
            }
            QUIT => return,
            _ => {
                if last_work.elapsed() < Duration::from_millis(1) {
                    std::hint::spin_loop();
                } else {
                    s.parked.store(true, Ordering::SeqCst);
                    if s.state.load(Ordering::SeqCst) == IDLE {
                        std::thread::park_timeout(Duration::from_millis(50));
                    }
                    s.parked.store(false, Ordering::Release);
                    last_work = Instant::now();
                }
            }
        }
    }
}
