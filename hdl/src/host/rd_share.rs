//! `RdShare`: two clients on one DMA read engine. The requester reads WQEs and payload, the
//! receive queues read receive WQEs; `DmaRead` returns each command's bytes in command order,
//! so a queue of which client issued each command is all the routing needs.
//!
//! Ports:
//! - `s_a_{addr,len,tvalid,tready}`, `s_b_*`: read commands of clients A (the requester) and
//!   B (the receive queues), as `DmaRead` takes them; each waits in a 2-entry queue.
//! - `m_cmd_*`: the commands to `DmaRead`, from a register. B's go first when both wait (it
//!   issues one read at a time, so A is never starved; B's reads are the responder's wait).
//! - `s_t{data,keep,last,user,valid,ready}`: `DmaRead`'s bytes, one packet per command.
//! - `m_a_t*`, `m_b_t*`: each client's packets, in its command order, through a `Skid` (the
//!   beat with its `tuser` filling one more lane, data and keep: `SW` = `DW` + 8, `SK` =
//!   `KW` + 1).
//!
//! Every output and every `tready` comes from registers, so the block composes by wiring. A
//! client that stops taking its bytes holds the other's behind it (one engine, one order):
//! the requester takes payload only for packets whose transmit-queue room it has reserved,
//! and the receive queues always take theirs, so neither waits on the wire.
//!
//! ```text
//!  s_a -> FIFO \                                   / Skid -> m_a
//!               > B first -> cmd reg -> m_cmd     <  (the client queue's head routes s_t*)
//!  s_b -> FIFO /      \-> client queue (64)  -> s_t* \ Skid -> m_b
//! ```

use crate::prelude::*;
use crate::stream::{Fifo, Skid};

/// A command in a client queue: address 0/64, length 64/13.
const CMD_W: usize = 77;

#[derive(LogicBlock)]
pub struct RdShare<const DW: usize, const KW: usize, const SW: usize, const SK: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_a_addr: Signal<In, Bits<64>>,
    pub s_a_len: Signal<In, Bits<13>>,
    pub s_a_tvalid: Signal<In, Bit>,
    pub s_a_tready: Signal<Out, Bit>,
    pub s_b_addr: Signal<In, Bits<64>>,
    pub s_b_len: Signal<In, Bits<13>>,
    pub s_b_tvalid: Signal<In, Bit>,
    pub s_b_tready: Signal<Out, Bit>,
    pub m_cmd_addr: Signal<Out, Bits<64>>,
    pub m_cmd_len: Signal<Out, Bits<13>>,
    pub m_cmd_tvalid: Signal<Out, Bit>,
    pub m_cmd_tready: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<DW>>,
    pub s_tkeep: Signal<In, Bits<KW>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tuser: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_a_tdata: Signal<Out, Bits<DW>>,
    pub m_a_tkeep: Signal<Out, Bits<KW>>,
    pub m_a_tlast: Signal<Out, Bit>,
    pub m_a_tuser: Signal<Out, Bit>,
    pub m_a_tvalid: Signal<Out, Bit>,
    pub m_a_tready: Signal<In, Bit>,
    pub m_b_tdata: Signal<Out, Bits<DW>>,
    pub m_b_tkeep: Signal<Out, Bits<KW>>,
    pub m_b_tlast: Signal<Out, Bit>,
    pub m_b_tuser: Signal<Out, Bit>,
    pub m_b_tvalid: Signal<Out, Bit>,
    pub m_b_tready: Signal<In, Bit>,
    qa: Fifo<CMD_W, 1, 2>,
    qb: Fifo<CMD_W, 1, 2>,
    who: Fifo<1, 6, 7>,
    out_a: Skid<SW, SK>,
    out_b: Skid<SW, SK>,
    cmd: DFF<Bits<CMD_W>>,
    cmd_valid: DFF<Bit>,
    cmd_b: DFF<Bit>,
    free: Signal<Local, Bit>,
    to_b: Signal<Local, Bit>,
    beat: Signal<Local, Bits<SW>>,
    bkeep: Signal<Local, Bits<SK>>,
    go: Signal<Local, Bit>,
    user_lane: Constant<Bits<SW>>,
    user_keep: Constant<Bits<SK>>,
}

impl<const DW: usize, const KW: usize, const SW: usize, const SK: usize> RdShare<DW, KW, SW, SK> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert_eq!(
            (SW, SK),
            (DW + 8, KW + 1),
            "the skids carry a beat and its tuser"
        );
        let mut lane = vec![false; SW];
        lane[DW..].fill(true);
        let mut keep = vec![false; SK];
        keep[KW] = true;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_a_addr: Default::default(),
            s_a_len: Default::default(),
            s_a_tvalid: Default::default(),
            s_a_tready: Default::default(),
            s_b_addr: Default::default(),
            s_b_len: Default::default(),
            s_b_tvalid: Default::default(),
            s_b_tready: Default::default(),
            m_cmd_addr: Default::default(),
            m_cmd_len: Default::default(),
            m_cmd_tvalid: Default::default(),
            m_cmd_tready: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_a_tdata: Default::default(),
            m_a_tkeep: Default::default(),
            m_a_tlast: Default::default(),
            m_a_tuser: Default::default(),
            m_a_tvalid: Default::default(),
            m_a_tready: Default::default(),
            m_b_tdata: Default::default(),
            m_b_tkeep: Default::default(),
            m_b_tlast: Default::default(),
            m_b_tuser: Default::default(),
            m_b_tvalid: Default::default(),
            m_b_tready: Default::default(),
            qa: Fifo::new(),
            qb: Fifo::new(),
            who: Fifo::new(),
            out_a: Skid::new(),
            out_b: Skid::new(),
            cmd: Default::default(),
            cmd_valid: Default::default(),
            cmd_b: Default::default(),
            free: Default::default(),
            to_b: Default::default(),
            beat: Default::default(),
            bkeep: Default::default(),
            go: Default::default(),
            user_lane: Constant::new(crate::util::bits_from_bools(&lane)),
            user_keep: Constant::new(crate::util::bits_from_bools(&keep)),
        }
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const SK: usize> Default
    for RdShare<DW, KW, SW, SK>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const SK: usize> Logic
    for RdShare<DW, KW, SW, SK>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, cmd, cmd_valid, cmd_b);
        self.qa.clk.next = self.clk.val();
        self.qa.rst.next = self.rst.val();
        self.qb.clk.next = self.clk.val();
        self.qb.rst.next = self.rst.val();
        self.who.clk.next = self.clk.val();
        self.who.rst.next = self.rst.val();
        self.out_a.clk.next = self.clk.val();
        self.out_a.rst.next = self.rst.val();
        self.out_a.s_axis_tuser.next = false;
        self.out_b.clk.next = self.clk.val();
        self.out_b.rst.next = self.rst.val();
        self.out_b.s_axis_tuser.next = false;

        // Commands: each client's queue, B first, into the command register; the issuer's
        // name goes into the client queue as the command leaves.
        self.qa.s_tdata.next = bit_cast::<CMD_W, 64>(self.s_a_addr.val())
            | (bit_cast::<CMD_W, 13>(self.s_a_len.val()) << 64);
        self.qa.s_tvalid.next = self.s_a_tvalid.val();
        self.s_a_tready.next = self.qa.s_tready.val();
        self.qb.s_tdata.next = bit_cast::<CMD_W, 64>(self.s_b_addr.val())
            | (bit_cast::<CMD_W, 13>(self.s_b_len.val()) << 64);
        self.qb.s_tvalid.next = self.s_b_tvalid.val();
        self.s_b_tready.next = self.qb.s_tready.val();
        self.m_cmd_addr.next = self.cmd.q.val().get_bits::<64>(0);
        self.m_cmd_len.next = self.cmd.q.val().get_bits::<13>(64);
        // A command leaves only when the client queue has room for its name.
        self.m_cmd_tvalid.next = self.cmd_valid.q.val() & self.who.s_tready.val();
        self.who.s_tdata.next = bits::<1>(0);
        if self.cmd_b.q.val() {
            self.who.s_tdata.next = bits::<1>(1);
        }
        self.go.next = self.cmd_valid.q.val() & self.who.s_tready.val() & self.m_cmd_tready.val();
        self.who.s_tvalid.next = self.go.val();
        // The register is free when empty or leaving.
        self.free.next = !self.cmd_valid.q.val() | self.go.val();
        if self.go.val() {
            self.cmd_valid.d.next = false;
        }
        self.qa.m_tready.next = false;
        self.qb.m_tready.next = false;
        if self.free.val() {
            if self.qb.m_tvalid.val() {
                self.qb.m_tready.next = true;
                self.cmd.d.next = self.qb.m_tdata.val();
                self.cmd_b.d.next = true;
                self.cmd_valid.d.next = true;
            } else if self.qa.m_tvalid.val() {
                self.qa.m_tready.next = true;
                self.cmd.d.next = self.qa.m_tdata.val();
                self.cmd_b.d.next = false;
                self.cmd_valid.d.next = true;
            }
        }

        // Bytes: to the client at the head of the queue, the beat and its tuser into its skid.
        self.to_b.next = self.who.m_tdata.val() == bits::<1>(1);
        self.beat.next = bit_cast::<SW, DW>(self.s_tdata.val());
        self.bkeep.next = bit_cast::<SK, KW>(self.s_tkeep.val());
        if self.s_tuser.val() {
            self.beat.next = self.beat.val() | self.user_lane.val();
            self.bkeep.next = self.bkeep.val() | self.user_keep.val();
        }
        self.out_a.s_axis_tdata.next = self.beat.val();
        self.out_a.s_axis_tkeep.next = self.bkeep.val();
        self.out_a.s_axis_tlast.next = self.s_tlast.val();
        self.out_a.s_axis_tvalid.next =
            self.s_tvalid.val() & self.who.m_tvalid.val() & !self.to_b.val();
        self.out_b.s_axis_tdata.next = self.beat.val();
        self.out_b.s_axis_tkeep.next = self.bkeep.val();
        self.out_b.s_axis_tlast.next = self.s_tlast.val();
        self.out_b.s_axis_tvalid.next =
            self.s_tvalid.val() & self.who.m_tvalid.val() & self.to_b.val();
        self.s_tready.next = self.who.m_tvalid.val()
            & ((self.out_a.s_axis_tready.val() & !self.to_b.val())
                | (self.out_b.s_axis_tready.val() & self.to_b.val()));
        self.who.m_tready.next = self.s_tvalid.val()
            & self.s_tlast.val()
            & self.who.m_tvalid.val()
            & ((self.out_a.s_axis_tready.val() & !self.to_b.val())
                | (self.out_b.s_axis_tready.val() & self.to_b.val()));
        self.m_a_tdata.next = self.out_a.m_axis_tdata.val().get_bits::<DW>(0);
        self.m_a_tkeep.next = self.out_a.m_axis_tkeep.val().get_bits::<KW>(0);
        self.m_a_tuser.next = ((self.out_a.m_axis_tdata.val() & self.user_lane.val())
            != bits::<SW>(0))
            | ((self.out_a.m_axis_tkeep.val() & self.user_keep.val()) != bits::<SK>(0));
        self.m_a_tlast.next = self.out_a.m_axis_tlast.val();
        self.m_a_tvalid.next = self.out_a.m_axis_tvalid.val();
        self.out_a.m_axis_tready.next = self.m_a_tready.val();
        self.m_b_tdata.next = self.out_b.m_axis_tdata.val().get_bits::<DW>(0);
        self.m_b_tkeep.next = self.out_b.m_axis_tkeep.val().get_bits::<KW>(0);
        self.m_b_tuser.next = ((self.out_b.m_axis_tdata.val() & self.user_lane.val())
            != bits::<SW>(0))
            | ((self.out_b.m_axis_tkeep.val() & self.user_keep.val()) != bits::<SK>(0));
        self.m_b_tlast.next = self.out_b.m_axis_tlast.val();
        self.m_b_tvalid.next = self.out_b.m_axis_tvalid.val();
        self.out_b.m_axis_tready.next = self.m_b_tready.val();
        if self.rst.val() {
            self.cmd_valid.d.next = false;
        }
    }
}
