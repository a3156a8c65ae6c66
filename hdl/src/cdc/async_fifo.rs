//! `AsyncFifo`: a first-word-fall-through queue of `2^A` words of `W` bits from the clock
//! `s_clk` to the clock `m_clk`, which may be unrelated (either faster, any ratio, any
//! phase). `P` is the pointer width, `A + 1`.
//!
//! Ports: the write side `s_*` (clock `s_clk`, reset `s_rst`), the read side `m_*` (clock
//! `m_clk`, reset `m_rst`), ready/valid as a stream. Each side's outputs come from its own
//! registers and the RAM's output register only.
//!
//! How (the usual dual-clock FIFO, e.g. Cummings, "Simulation and Synthesis Techniques for
//! Asynchronous FIFO Design", SNUG 2002): each side keeps its pointer in binary and, in a
//! register of its own, in Gray code; the Gray pointer crosses to the other side through a
//! [`SyncBits`] (a Gray count changes one bit per step, so a late sample is the old or the new
//! value, never a third). The reader sees a word once the writer's Gray pointer has crossed,
//! two `m_clk` edges after the edge that wrote it; the writer sees a slot free once the
//! reader's has crossed. Both views are late, never early: the FIFO may look fuller or emptier
//! than it is for a few cycles, and never lets a word be read before it is written or
//! overwritten before it is read. Full: the Gray pointers differ in exactly their two top bits.
//! The RAM is written on `s_clk` and read on `m_clk`, its output registered; it is read every
//! `m_clk` cycle at the pointer that cycle ends with, so its output register holds the head
//! (as in [`crate::stream::Fifo`]).
//!
//! Bad inputs: none on the streams. Reset: hold `s_rst` and `m_rst` together for at least
//! three edges of the slower clock (so the synchronizers hold the reset pointers too); words
//! in the queue are lost. A reset of one side alone is not supported: the other side's view of
//! its pointer would be stale.
//!
//! Latency, empty to valid: one `s_clk` edge (the Gray register) and two or three `m_clk`
//! edges. Throughput: one word per cycle of the slower clock, once the queue is deeper than
//! the round trip of the two synchronizers (about 4 + 4 edges; 16 words is plenty).

use crate::cdc::SyncBits;
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct AsyncFifo<const W: usize, const A: usize, const P: usize> {
    pub s_clk: Signal<In, Clock>,
    pub s_rst: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<W>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_clk: Signal<In, Clock>,
    pub m_rst: Signal<In, Bit>,
    pub m_tdata: Signal<Out, Bits<W>>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    ram: RAM<Bits<W>, A>,
    // The write side (s_clk).
    wp: DFF<Bits<P>>,
    wg: DFF<Bits<P>>,
    rg_sync: SyncBits<P>,
    // The read side (m_clk).
    rp: DFF<Bits<P>>,
    rg: DFF<Bits<P>>,
    wg_sync: SyncBits<P>,
    /// The two top bits of a pointer: set in the reader's Gray pointer when the queue is full.
    top2: Constant<Bits<P>>,
    full_at: Signal<Local, Bits<P>>,
    push: Signal<Local, Bit>,
    wp_next: Signal<Local, Bits<P>>,
    pop: Signal<Local, Bit>,
    rp_next: Signal<Local, Bits<P>>,
    rp_step: Signal<Local, Bits<P>>,
}

impl<const W: usize, const A: usize, const P: usize> AsyncFifo<W, A, P> {
    pub fn new() -> Self {
        assert_eq!(P, A + 1, "pointer width must be A + 1");
        assert!(A >= 1, "a dual-clock FIFO holds at least two words");
        Self {
            s_clk: Default::default(),
            s_rst: Default::default(),
            s_tdata: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_clk: Default::default(),
            m_rst: Default::default(),
            m_tdata: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            ram: RAM::default(),
            wp: Default::default(),
            wg: Default::default(),
            rg_sync: SyncBits::new(),
            rp: Default::default(),
            rg: Default::default(),
            wg_sync: SyncBits::new(),
            top2: Constant::new(crate::util::bits_from_u64(3u64 << (P - 2))),
            full_at: Default::default(),
            push: Default::default(),
            wp_next: Default::default(),
            pop: Default::default(),
            rp_next: Default::default(),
            rp_step: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize, const P: usize> Default for AsyncFifo<W, A, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize, const P: usize> Logic for AsyncFifo<W, A, P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, s_clk, wp, wg);
        dff_setup!(self, m_clk, rp, rg);
        self.ram.write_clock.next = self.s_clk.val();
        self.ram.read_clock.next = self.m_clk.val();
        // The write side.
        self.rg_sync.clk.next = self.s_clk.val();
        self.rg_sync.d.next = self.rg.q.val();
        self.full_at.next = self.rg_sync.q.val() ^ self.top2.val();
        self.s_tready.next = self.wg.q.val() != self.full_at.val();
        self.push.next = self.s_tvalid.val() & (self.wg.q.val() != self.full_at.val());
        self.wp_next.next = self.wp.q.val() + bits::<P>(1);
        self.ram.write_address.next = self.wp.q.val().get_bits::<A>(0);
        self.ram.write_data.next = self.s_tdata.val();
        self.ram.write_enable.next = self.push.val();
        if self.push.val() {
            self.wp.d.next = self.wp_next.val();
            self.wg.d.next = self.wp_next.val() ^ (self.wp_next.val() >> 1);
        }
        if self.s_rst.val() {
            self.wp.d.next = bits::<P>(0);
            self.wg.d.next = bits::<P>(0);
        }
        // The read side.
        self.wg_sync.clk.next = self.m_clk.val();
        self.wg_sync.d.next = self.wg.q.val();
        self.m_tvalid.next = self.rg.q.val() != self.wg_sync.q.val();
        self.m_tdata.next = self.ram.read_data.val();
        self.pop.next = self.m_tready.val() & (self.rg.q.val() != self.wg_sync.q.val());
        self.rp_step.next = self.rp.q.val() + bits::<P>(1);
        self.rp_next.next = self.rp.q.val();
        if self.pop.val() {
            self.rp_next.next = self.rp_step.val();
        }
        self.rp.d.next = self.rp_next.val();
        self.rg.d.next = self.rp_next.val() ^ (self.rp_next.val() >> 1);
        self.ram.read_address.next = self.rp_next.val().get_bits::<A>(0);
        if self.m_rst.val() {
            self.rp.d.next = bits::<P>(0);
            self.rg.d.next = bits::<P>(0);
        }
    }
}
