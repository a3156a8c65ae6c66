//! ferroce's side of perftest 4.5's bandwidth tools (`ib_write_bw`, `ib_send_bw`,
//! `ib_read_bw`, `ib_atomic_bw`), in either role, over a [`Rig`].
//!
//! The socket protocol (perftest's `perftest_communication.c`, 4.5-0.17): one TCP connection;
//! the TCP client writes first and then reads in every exchange, the server the reverse; each
//! message has a fixed size. In order: the version (16 bytes, "6.06" NUL-padded; perftest
//! refuses below 5.70), page size and cache-line size (4 bytes each, big-endian; both take the
//! larger), the MTU (2 bytes: the IB MTU code as a digit and a NUL; both take the smaller),
//! then five hand-shakes of the 108-byte KEYS message (`lid:out_reads:qpn:psn:rkey:vaddr:` the
//! 16 GID bytes `:`-separated, `srqn:` and a NUL), always the same content. After H1 both QPs
//! connect; after H3 the client runs its traffic (for SEND, after H4: the server posts its
//! receives between H3 and H4); H4 follows the traffic; for WRITE, READ and atomics the
//! client then sends its report (size, iterations, peak and average MB/s, Mpps: 5 x 8 bytes
//! big-endian), the server sends 40 bytes that are ignored; H5; each side writes "done\0".
//!
//! What ferroce checks (perftest fills its buffers with random bytes and checks nothing):
//! - as the active side: its own bytes on the wire (WRITE and SEND payloads in its pcap equal
//!   its source buffer), READ data landed equal to the READ responses on the wire and equal
//!   for every READ of the same remote bytes, atomic results equal to the atomic ACKs on the
//!   wire and each a step of its slot's chain (FETCH_AND_ADD: +1 each time; CMP_AND_SWAP with
//!   compare 0, swap 0: never changes);
//! - as the passive side: its memory after WRITEs equal to the WRITE payloads on the wire
//!   replayed onto its initial bytes and every target byte written, each message received
//!   equal to its SEND payloads on the wire, READ responses equal to its memory, atomics
//!   applied exactly once (each slot its initial value plus its count of FETCH_AND_ADDs, the
//!   original values in the ACKs counting up from it; CMP_AND_SWAP changing nothing).

mod check;
mod run;
mod tool;

pub use run::run;
pub use tool::{Keys, Perftest, PerftestResult, Verb};
