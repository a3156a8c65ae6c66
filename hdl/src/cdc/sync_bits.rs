//! `SyncBits`: `N` bits taken into the clock `clk` through two flip-flops.
//!
//! What it may carry: a value driven by a flip-flop of the source domain that changes at most
//! one bit on each edge of its own clock (a Gray count stepping by one, a level), with its
//! bits' routes differing by less than a source period. An edge of `clk` then catches at most
//! one bit in change, which may resolve either way (the first stage may go metastable), so the
//! output is a value the source held, never a mix of two, however the two clocks compare.
//! Anything else (a binary count, a record) crosses through an [`crate::cdc::AsyncFifo`] or a
//! [`crate::cdc::SyncCount`].
//!
//! Ports: `d` (the source's register), `q` (the value two edges of `clk` later). No reset: the
//! output follows the input within two edges of any reset.

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct SyncBits<const N: usize> {
    pub clk: Signal<In, Clock>,
    pub d: Signal<In, Bits<N>>,
    pub q: Signal<Out, Bits<N>>,
    /// The stage that may go metastable; only `meta2` reads it.
    meta1: DFF<Bits<N>>,
    meta2: DFF<Bits<N>>,
}

impl<const N: usize> SyncBits<N> {
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            d: Default::default(),
            q: Default::default(),
            meta1: Default::default(),
            meta2: Default::default(),
        }
    }
}

impl<const N: usize> Default for SyncBits<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Logic for SyncBits<N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, meta1, meta2);
        self.meta1.d.next = self.d.val();
        self.meta2.d.next = self.meta1.q.val();
        self.q.next = self.meta2.q.val();
    }
}
