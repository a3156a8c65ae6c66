//! `SyncCount`: an `N`-bit count from the clock `s_clk` read in the clock `m_clk`.
//!
//! What it carries: a count that steps by at most one on each edge of `s_clk` and wraps at
//! 2^`N` (an event counter: frames, drops, pause quanta). The count is registered in Gray code
//! on `s_clk`, crosses through a [`SyncBits`] and is turned back into binary in a register of
//! `m_clk`. `m_count` is always a value the count held, never ahead of it, and never goes
//! back (modulo 2^`N`); it shows the count three `m_clk` edges after one `s_clk` edge, at any
//! ratio of the clocks. For a count that may step by more than one (bytes), cross its increments
//! through an [`crate::cdc::AsyncFifo`] instead.
//!
//! Ports: `s_clk`, `s_count` (the source's counter register), `m_clk`, `m_count`. No reset:
//! the output follows the count within four edges of each clock.

use crate::cdc::SyncBits;
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct SyncCount<const N: usize> {
    pub s_clk: Signal<In, Clock>,
    pub s_count: Signal<In, Bits<N>>,
    pub m_clk: Signal<In, Clock>,
    pub m_count: Signal<Out, Bits<N>>,
    /// The count in Gray code (s_clk).
    gray: DFF<Bits<N>>,
    sync: SyncBits<N>,
    /// The count again in binary (m_clk).
    bin: DFF<Bits<N>>,
    /// The shifts of the Gray-to-binary prefix XOR: 1 ..= N - 1.
    shifts: Vec<Constant<Bits<8>>>,
    prefix: Signal<Local, Bits<N>>,
}

impl<const N: usize> SyncCount<N> {
    pub fn new() -> Self {
        assert!((2..=255).contains(&N), "a count of 2 to 255 bits");
        Self {
            s_clk: Default::default(),
            s_count: Default::default(),
            m_clk: Default::default(),
            m_count: Default::default(),
            gray: Default::default(),
            sync: SyncBits::new(),
            bin: Default::default(),
            shifts: (1..N)
                .map(|i| Constant::new(crate::util::bits_from_u64(i as u64)))
                .collect(),
            prefix: Default::default(),
        }
    }
}

impl<const N: usize> Default for SyncCount<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Logic for SyncCount<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, s_clk, gray);
        dff_setup!(self, m_clk, bin);
        self.gray.d.next = self.s_count.val() ^ (self.s_count.val() >> 1);
        self.sync.clk.next = self.m_clk.val();
        self.sync.d.next = self.gray.q.val();
        // Binary bit i is the XOR of the Gray bits i and above.
        self.prefix.next = self.sync.q.val();
        for i in 0..self.shifts.len() {
            self.prefix.next = self.prefix.val() ^ (self.sync.q.val() >> self.shifts[i].val());
        }
        self.bin.d.next = self.prefix.val();
        self.m_count.next = self.bin.q.val();
    }
}
