//! `Fifo`: a first-word-fall-through queue of `2^A` words of `W` bits in block RAM, for
//! records and small tokens (not for beats of a frame: those go through a `Skid` or a block's
//! own buffer). `P` is the pointer width, `A + 1` (derived const generics need nightly).
//!
//! Ports: `s_*` in, `m_*` out, ready/valid. `m_tdata` is the RAM's output register and
//! `m_tvalid`, `s_tready` come from registers only, so the block composes by wiring
//! (docs/ARCHITECTURE.md, "Composition").
//!
//! How: the RAM is read every cycle at the read pointer the cycle will end with, so its output
//! register holds the head entry; a written entry becomes visible two cycles after its write
//! (`wp_d`, the write pointer one cycle late, guards the read-after-write). One word in and one
//! out per clock; empty-to-valid latency 2 cycles.

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct Fifo<const W: usize, const A: usize, const P: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<W>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_tdata: Signal<Out, Bits<W>>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    ram: RAM<Bits<W>, A>,
    wp: DFF<Bits<P>>,
    wp_d: DFF<Bits<P>>,
    rp: DFF<Bits<P>>,
    depth: Constant<Bits<P>>,
    fill: Signal<Local, Bits<P>>,
    room: Signal<Local, Bits<P>>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    rp_next: Signal<Local, Bits<P>>,
}

impl<const W: usize, const A: usize, const P: usize> Fifo<W, A, P> {
    pub fn new() -> Self {
        assert_eq!(P, A + 1, "pointer width must be A + 1");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_tdata: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_tdata: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            ram: RAM::default(),
            wp: Default::default(),
            wp_d: Default::default(),
            rp: Default::default(),
            depth: Constant::new(crate::util::bits_from_u64(1u64 << A)),
            fill: Default::default(),
            room: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            rp_next: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize, const P: usize> Default for Fifo<W, A, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize, const P: usize> Logic for Fifo<W, A, P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, wp, wp_d, rp);
        self.ram.read_clock.next = self.clk.val();
        self.ram.write_clock.next = self.clk.val();
        self.fill.next = self.wp.q.val() - self.rp.q.val();
        self.s_tready.next = self.fill.val() != self.depth.val();
        self.m_tvalid.next = self.rp.q.val() != self.wp_d.q.val();
        self.m_tdata.next = self.ram.read_data.val();
        // `room` repeats `fill` so that no variable links `s_tvalid` to `s_tready`: Verilator
        // splits the always block only along independent variables (else UNOPTFLAT).
        self.room.next = self.wp.q.val() - self.rp.q.val();
        self.push.next = self.s_tvalid.val() & (self.room.val() != self.depth.val());
        self.pop.next = self.m_tready.val() & (self.rp.q.val() != self.wp_d.q.val());
        self.rp_next.next = self.rp.q.val();
        if self.pop.val() {
            self.rp_next.next = self.rp.q.val() + bits::<P>(1);
        }
        self.rp.d.next = self.rp_next.val();
        self.ram.read_address.next = self.rp_next.val().get_bits::<A>(0);
        self.ram.write_address.next = self.wp.q.val().get_bits::<A>(0);
        self.ram.write_data.next = self.s_tdata.val();
        self.ram.write_enable.next = self.push.val();
        if self.push.val() {
            self.wp.d.next = self.wp.q.val() + bits::<P>(1);
        }
        self.wp_d.d.next = self.wp.q.val();
        if self.rst.val() {
            self.wp.d.next = bits::<P>(0);
            self.wp_d.d.next = bits::<P>(0);
            self.rp.d.next = bits::<P>(0);
        }
    }
}
