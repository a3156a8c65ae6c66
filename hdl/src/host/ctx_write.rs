//! `CtxWrite`: one object table's writes (QP, CQ or MR contexts, `2^A` entries of `W` bits) as
//! BAR0 hands them to the table's owners. BAR0 keeps no copy: each engine keeps the fields it
//! uses, written through this port, and the driver keeps what it wrote.
//!
//! Ports:
//! - `cmd_addr`, `cmd_we`, `cmd_wdata`: write one entry (the OBJECT block's WRITE command).
//! - `w_en`, `w_addr`, `w_data`: every write of the table (commands and the clearing sweep),
//!   one a cycle, no handshake: the owners take one per cycle.
//! - `ready`: low while the table clears after reset (one zero entry per cycle, `2^A` cycles);
//!   commands wait for it. The owners' block RAM has no reset, and a context left as power-up
//!   garbage could claim a QP is ready to send.
//!
//! Bad inputs: a command write during the sweep is dropped (BAR0 waits for `ready`).

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct CtxWrite<const W: usize, const A: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub cmd_addr: Signal<In, Bits<A>>,
    pub cmd_we: Signal<In, Bit>,
    pub cmd_wdata: Signal<In, Bits<W>>,
    pub ready: Signal<Out, Bit>,
    pub w_en: Signal<Out, Bit>,
    pub w_addr: Signal<Out, Bits<A>>,
    pub w_data: Signal<Out, Bits<W>>,
    sweep: DFF<Bits<A>>,
    clearing: DFF<Bit>,
    last: Constant<Bits<A>>,
    zero_a: Constant<Bits<A>>,
    zero_w: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize> CtxWrite<W, A> {
    pub fn new() -> Self {
        let last = Bits::<A>::mask();
        Self {
            clk: Default::default(),
            rst: Default::default(),
            cmd_addr: Default::default(),
            cmd_we: Default::default(),
            cmd_wdata: Default::default(),
            ready: Default::default(),
            w_en: Default::default(),
            w_addr: Default::default(),
            w_data: Default::default(),
            sweep: Default::default(),
            clearing: DFF::default(),
            last: Constant::new(last),
            zero_a: Constant::new(0.into()),
            zero_w: Constant::new(Bits::<W>::default()),
        }
    }
}

impl<const W: usize, const A: usize> Default for CtxWrite<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for CtxWrite<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, sweep, clearing);
        self.w_addr.next = self.cmd_addr.val();
        self.w_data.next = self.cmd_wdata.val();
        self.w_en.next = self.cmd_we.val() & !self.clearing.q.val();
        self.ready.next = !self.clearing.q.val();
        if self.clearing.q.val() {
            self.w_addr.next = self.sweep.q.val();
            self.w_data.next = self.zero_w.val();
            self.w_en.next = true;
            self.sweep.d.next = self.sweep.q.val() + bits::<A>(1);
            if self.sweep.q.val() == self.last.val() {
                self.clearing.d.next = false;
            }
        }
        if self.rst.val() {
            self.sweep.d.next = self.zero_a.val();
            self.clearing.d.next = true;
        }
    }
}
