//! What a link does to one frame ([`Fault`]): a fault hook's verdict, which the links apply
//! and count, and which [`RandomFaults`](crate::RandomFaults) draws.

/// What happens to one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Pass,
    Drop,
    /// Dropped in a burst of losses (counted in `dropped` and `burst_dropped`).
    BurstDrop,
    /// XOR `mask` into byte `offset` (taken modulo the frame length).
    Corrupt {
        offset: usize,
        mask: u8,
    },
    /// Arrive whole, flagged: `<to>_tuser` high on its last beat (the receiver must have it).
    PhyError,
    /// Arrive `ps` later; the frames behind it wait.
    Delay {
        ps: u64,
    },
    /// Arrive twice, the copy right behind the frame.
    Duplicate,
    /// Arrive `ps` later; the frames behind it do not wait.
    Reorder {
        ps: u64,
    },
}
