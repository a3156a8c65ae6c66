//! Clock-domain crossings: the only blocks with two clocks, and the only places where a value
//! made in one clock domain is used in another (docs/ARCHITECTURE.md, "Clock domains").
//!
//! - [`SyncBits`]: a value that changes at most one bit at a time between samples (a Gray
//!   count, a level), taken into the destination clock through two flip-flops.
//! - [`AsyncFifo`]: words from one clock to the other through a dual-clock RAM, its pointers
//!   crossing as Gray counts through [`SyncBits`].
//! - [`SyncCount`]: an event count (steps of at most one) read in the other clock, as a Gray
//!   count through [`SyncBits`]: the MAC's counters, read by the host side.
//!
//! Each crossing is registered on its source side, so no logic of the source domain reaches
//! the first synchronizer flip-flop, and a tool's timing analysis may cut every path between
//! the two clocks (the constraints name the clocks as unrelated).

pub mod async_fifo;
pub mod sync_bits;
pub mod sync_count;

pub use async_fifo::AsyncFifo;
pub use sync_bits::SyncBits;
pub use sync_count::SyncCount;
