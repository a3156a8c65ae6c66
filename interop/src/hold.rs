//! The guest's clock held while ferroce answers it.
//!
//! The simulated NIC runs about 3,000 times slower than the real one (50-60k cycles per second
//! of wall time beside a TCG guest), while the guest's clock keeps wall time. Left alone, the
//! guest would see every answer from ferroce take milliseconds, and a requester's timers would
//! fire on answers that a real ferroce sends within microseconds. Linux 6.1's rxe fires such
//! timers even after the answer came: its retransmit timer, armed with the QP's `timeout` at a
//! request and not pushed back by later ones, retries whatever is outstanding when it expires
//! (`ibv_rc_pingpong` sets timeout 14: 67 ms).
//!
//! So the guest's clock stops while it waits on ferroce: when a request of the guest that asks
//! for an answer (RC, AckReq set: the last packet of a message, every READ and atomic) reaches
//! the bridge, [`Hold`] stops the guest (QMP `stop`: under TCG its TSC and timers stop with
//! its CPU), and when ferroce's answer covering it (an ACK or NAK, an atomic ACK, the last
//! READ response) has been handed to the guest's socket, it lets the guest run on (`cont`).
//! The guest then sees ferroce answer within the time QEMU takes to stop (well under a
//! millisecond) plus its own. Simulated time is untouched: the NIC, its timers and every
//! figure it reports run on the simulation's clock.
//!
//! The monitor is driven by a thread of its own ([`Hold::new`]): the bridge's reader thread
//! only says what it wants and reads on. (Waiting for QEMU's answer there deadlocked: QEMU's
//! main loop, which answers the monitor, blocks writing a guest's burst into a full socket that
//! only the reader empties.)
//!
//! A request is matched to its answer by QP: the guest's requests name ferroce's QP, ferroce's
//! answers the guest's, so the rig pairs them ([`Hold::pair`]); requests on an unpaired QP do
//! not hold. A hold that no answer ends within [`HOLD_MAX_PS`] of simulated time is let go
//! and counted (`expired`): the guest must never wait on a bug here.

use super::guest::Qmp;
use super::wire;
use crate::Result;
use ferroce_sim::bridge::Watch;
use ferroce_spec::psn;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest hold, in simulated picoseconds (1.6 ms: the time to drain [`ferroce_sim::bridge::READ_AHEAD`]
/// jumbo frames and a socket's worth more at 10 Gb/s, with room to spare).
pub const HOLD_MAX_PS: u64 = 1_600_000_000;

/// What the hold did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldStats {
    /// Times the guest was stopped.
    pub holds: u64,
    /// Holds let go after [`HOLD_MAX_PS`] with no answer.
    pub expired: u64,
    /// Wall time the guest spent stopped.
    pub held: Duration,
}

#[derive(Default)]
struct State {
    /// ferroce's QPN → the guest's.
    pairs: HashMap<u32, u32>,
    /// The guest's QPN → the last PSN of its that waits for an answer.
    waiting: HashMap<u32, u32>,
    /// Whether the guest should be stopped, and whether the monitor has done it.
    want: bool,
    done: bool,
    since: Option<Instant>,
    since_ps: Option<u64>,
    quit: bool,
    /// The first monitor failure, reported by [`Hold::tick`].
    error: Option<String>,
    stats: HoldStats,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while the lock was held leaves the state usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Stops the guest while its requests wait on ferroce (a [`Watch`] on the bridge).
pub struct Hold {
    shared: Arc<Shared>,
    monitor: Option<JoinHandle<()>>,
}

/// The monitor thread: make the guest's run state follow `want`.
fn follow(shared: &Shared, qmp: &Mutex<Qmp>) {
    let mut st = shared.lock();
    loop {
        while st.want == st.done && !st.quit {
            st = shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        // Told to quit, the thread first makes the guest run (`want` is false by then).
        if st.quit && st.want == st.done {
            return;
        }
        let want = st.want;
        drop(st);
        let r = qmp
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .execute(if want { "stop" } else { "cont" });
        st = shared.lock();
        st.done = want;
        if let Err(e) = r {
            st.error.get_or_insert(e.to_string());
        }
    }
}

/// An RC request with AckReq set: the guest now waits for an answer.
fn asks(p: &wire::Packet) -> bool {
    p.opcode < 0x20 && wire::is_request(p.opcode) && p.ack_req
}

impl Hold {
    /// A hold on the guest behind `qmp`, with its monitor thread.
    pub fn new(qmp: Arc<Mutex<Qmp>>) -> Result<Hold> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let monitor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("guest-clock".into())
                .spawn(move || follow(&shared, &qmp))
                .map_err(|e| super::err(format!("starting the guest-clock thread: {e}")))?
        };
        Ok(Hold {
            shared,
            monitor: Some(monitor),
        })
    }

    fn stop(&self, st: &mut State) {
        if !st.want {
            st.want = true;
            st.since = Some(Instant::now());
            st.since_ps = None;
            st.stats.holds += 1;
            self.shared.changed.notify_all();
        }
    }

    fn go(&self, st: &mut State) {
        st.waiting.clear();
        if st.want {
            st.want = false;
            if let Some(t) = st.since.take() {
                st.stats.held += t.elapsed();
            }
            self.shared.changed.notify_all();
        }
    }

    /// ferroce's QP `ours` talks to the guest's QP `theirs`.
    pub fn pair(&self, ours: u32, theirs: u32) {
        self.shared.lock().pairs.insert(ours, theirs);
    }

    /// Let the guest run, whatever it waits for (before a new tool, or to end a run).
    pub fn release(&self) {
        let mut st = self.shared.lock();
        self.go(&mut st);
    }

    /// Called as simulated time passes (`now_ps`): lets go a hold older than
    /// [`HOLD_MAX_PS`]; reports a monitor failure.
    pub fn tick(&self, now_ps: u64) -> Result<()> {
        let mut st = self.shared.lock();
        if let Some(e) = st.error.take() {
            return Err(super::err(format!("holding the guest's clock: {e}")));
        }
        if st.want {
            let since = *st.since_ps.get_or_insert(now_ps);
            if now_ps.saturating_sub(since) > HOLD_MAX_PS {
                st.stats.expired += 1;
                self.go(&mut st);
            }
        }
        Ok(())
    }

    pub fn stats(&self) -> HoldStats {
        self.shared.lock().stats
    }
}

impl Drop for Hold {
    /// The guest runs on; the monitor thread ends once it has said so.
    fn drop(&mut self) {
        {
            let mut st = self.shared.lock();
            st.want = false;
            st.quit = true;
        }
        self.shared.changed.notify_all();
        if let Some(t) = self.monitor.take() {
            let _ = t.join();
        }
    }
}

impl Watch for Hold {
    fn inbound(&self, frame: &[u8]) {
        let Ok(Some(p)) = wire::parse(frame) else {
            return;
        };
        if !asks(&p) {
            return;
        }
        let mut st = self.shared.lock();
        let Some(&theirs) = st.pairs.get(&p.dest_qp) else {
            return;
        };
        let last = st.waiting.entry(theirs).or_insert(p.psn);
        if psn::before(*last, p.psn) {
            *last = p.psn;
        }
        self.stop(&mut st);
    }

    fn outbound(&self, frame: &[u8]) {
        let Ok(Some(p)) = wire::parse(frame) else {
            return;
        };
        if !wire::ends_wait(p.opcode) {
            return;
        }
        let mut st = self.shared.lock();
        let Some(&last) = st.waiting.get(&p.dest_qp) else {
            return;
        };
        // A NAK ends the wait too: the guest must act on it.
        let nak = p.syndrome.is_some_and(wire::is_nak);
        if nak || !psn::before(p.psn, last) {
            st.waiting.remove(&p.dest_qp);
        }
        if st.waiting.is_empty() {
            self.go(&mut st);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroce_spec::opcodes::{
        RC_ACKNOWLEDGE, RC_RDMA_READ_REQUEST, RC_RDMA_READ_RESPONSE_FIRST,
        RC_RDMA_READ_RESPONSE_LAST, RC_RDMA_READ_RESPONSE_ONLY, RC_RDMA_WRITE_MIDDLE, RC_SEND_ONLY,
    };

    fn pk(opcode: u8, psn: u32, ack_req: bool) -> wire::Packet {
        wire::Packet {
            opcode,
            psn,
            ack_req,
            ..wire::Packet::default()
        }
    }

    #[test]
    fn which_packets_ask_and_answer() {
        assert!(asks(&pk(RC_SEND_ONLY, 1, true)));
        assert!(!asks(&pk(RC_SEND_ONLY, 1, false)));
        assert!(!asks(&pk(RC_RDMA_WRITE_MIDDLE, 1, false)));
        assert!(asks(&pk(RC_RDMA_READ_REQUEST, 1, true)));
        assert!(!asks(&pk(RC_ACKNOWLEDGE, 1, true)));
        assert!(!asks(&pk(RC_RDMA_READ_RESPONSE_LAST, 1, true)));
        assert!(wire::ends_wait(RC_ACKNOWLEDGE));
        assert!(wire::ends_wait(RC_RDMA_READ_RESPONSE_ONLY));
        assert!(!wire::ends_wait(RC_RDMA_READ_RESPONSE_FIRST));
        assert!(!wire::ends_wait(RC_SEND_ONLY));
        assert!(wire::is_nak(0x60) && wire::is_nak(0x21) && !wire::is_nak(0x1F));
    }
}
