//! `CtxTable`: an object context table (QP or CQ contexts) in block RAM, `2^A` entries of
//! `W` bits, cleared after reset.
//!
//! Ports:
//! - `cmd_addr`, `cmd_we`, `cmd_wdata`: write one entry (the OBJECT block's WRITE command).
//! - `cmd_addr` -> `rdata`: the entry at `cmd_addr` one cycle later (block RAM read).
//! - `w_en`, `w_addr`, `w_data`: every write the table makes (commands and the clearing
//!   sweep), so an engine can keep a copy of the fields it needs that always equals the table.
//! - `ready`: low while the table clears itself after reset (one entry per cycle, `2^A`
//!   cycles); commands must wait for it. Block RAM has no reset, and a context left as
//!   power-up garbage could claim a QP is ready to send.
//!
//! Later ports (requester, responder, completer) read and update their own fields beside the
//! command port; the command port stays as it is.

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct CtxTable<const W: usize, const A: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub cmd_addr: Signal<In, Bits<A>>,
    pub cmd_we: Signal<In, Bit>,
    pub cmd_wdata: Signal<In, Bits<W>>,
    pub rdata: Signal<Out, Bits<W>>,
    pub ready: Signal<Out, Bit>,
    pub w_en: Signal<Out, Bit>,
    pub w_addr: Signal<Out, Bits<A>>,
    pub w_data: Signal<Out, Bits<W>>,
    ram: RAM<Bits<W>, A>,
    sweep: DFF<Bits<A>>,
    clearing: DFF<Bit>,
    last: Constant<Bits<A>>,
    zero_a: Constant<Bits<A>>,
    zero_w: Constant<Bits<W>>,
}

impl<const W: usize, const A: usize> CtxTable<W, A> {
    pub fn new() -> Self {
        let last = Bits::<A>::mask();
        Self {
            clk: Default::default(),
            rst: Default::default(),
            cmd_addr: Default::default(),
            cmd_we: Default::default(),
            cmd_wdata: Default::default(),
            rdata: Default::default(),
            ready: Default::default(),
            w_en: Default::default(),
            w_addr: Default::default(),
            w_data: Default::default(),
            ram: RAM::default(),
            sweep: Default::default(),
            clearing: DFF::default(),
            last: Constant::new(last),
            zero_a: Constant::new(0.into()),
            zero_w: Constant::new(Bits::<W>::default()),
        }
    }
}

impl<const W: usize, const A: usize> Default for CtxTable<W, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const W: usize, const A: usize> Logic for CtxTable<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, sweep, clearing);
        self.ram.read_clock.next = self.clk.val();
        self.ram.write_clock.next = self.clk.val();
        self.ram.read_address.next = self.cmd_addr.val();
        self.ram.write_address.next = self.cmd_addr.val();
        self.ram.write_data.next = self.cmd_wdata.val();
        self.ram.write_enable.next = self.cmd_we.val() & !self.clearing.q.val();
        self.w_addr.next = self.cmd_addr.val();
        self.w_data.next = self.cmd_wdata.val();
        self.w_en.next = self.cmd_we.val() & !self.clearing.q.val();
        self.rdata.next = self.ram.read_data.val();
        self.ready.next = !self.clearing.q.val();
        if self.clearing.q.val() {
            self.ram.write_address.next = self.sweep.q.val();
            self.ram.write_data.next = self.zero_w.val();
            self.ram.write_enable.next = true;
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
