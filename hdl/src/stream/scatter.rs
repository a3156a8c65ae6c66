//! `Scatter`: cuts each packet of a stream into pieces, each realigned so its first byte is in
//! lane 0, the inverse of `Gather`. The responder writes a received SEND into the receive
//! buffer's scatter list: a packet's payload may end one buffer and start the next mid-beat,
//! and the DMA write engine takes each buffer's bytes as a packet of their own from lane 0.
//!
//! Ports:
//! - `s_cmd_{len,last,tvalid,tready}`: the pieces, in order: `len` bytes each (0 ..= 65535),
//!   `last` on a packet's last piece. A packet's pieces add up to its bytes. They wait in a
//!   4-entry queue.
//! - `s_t{data,keep,last,valid,ready}`: the packets, following the stream convention (full
//!   beats, then a last beat with `tkeep` contiguous from lane 0).
//! - `m_t{data,keep,last,valid,ready}`: one packet per piece, following the convention, lanes
//!   past `tkeep` zero; a piece of no bytes is one beat with `tkeep` 0. Outputs and `s_tready`
//!   come from registers (a `Skid`), so the block composes by wiring.
//! - `bad_len`: input beats the pieces did not account for (a packet longer than its pieces:
//!   its extra beats are dropped), plus pieces the packet was too short for (their missing
//!   bytes go out as zeros). A contract between NIC blocks: stays zero.
//!
//! How: `h` holds the input beat in hand, its lanes `o .. hv` not yet sent. An output beat
//! takes `n = min(bytes left of the piece, KW)` bytes: from `h` alone when it has them
//! (shifted down by `o` lanes), else `h`'s rest and the next input beat shifted up by the
//! bytes in hand, and that beat becomes `h`. One beat per clock in and out; a piece boundary
//! inside a beat costs nothing, and the next piece is taken as one ends (a packet of no
//! bytes costs two cycles more: its empty beat is dropped, then the next piece loads). The
//! two shifts are one mux level per lane, `KW` inputs wide.
//!
//! Clock: 138.9 MHz on ECP5 (`ferroce pnr`), not yet 156.25. `n`, `r <= KW` and `hv - o` are
//! registered beside the registers they come from; the worst paths left run from the input
//! beat's `tkeep` (its byte count) through the bytes-in-hand arithmetic to the counter and
//! to `hv - o`, and from `n` through the piece pop to the command queue's RAM.

use crate::host::k;
use crate::prelude::*;
use crate::stream::{data_of_count, keep_of_count, ones, Fifo, Skid};

#[derive(LogicBlock)]
pub struct Scatter<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_cmd_len: Signal<In, Bits<16>>,
    pub s_cmd_last: Signal<In, Bit>,
    pub s_cmd_tvalid: Signal<In, Bit>,
    pub s_cmd_tready: Signal<Out, Bit>,
    pub s_tdata: Signal<In, Bits<DW>>,
    pub s_tkeep: Signal<In, Bits<KW>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_tdata: Signal<Out, Bits<DW>>,
    pub m_tkeep: Signal<Out, Bits<KW>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    pub bad_len: Signal<Out, Bits<32>>,
    out: Skid<DW, KW>,
    cq: Fifo<17, 2, 3>,
    h: DFF<Bits<DW>>,
    o: DFF<Bits<8>>,
    hv: DFF<Bits<8>>,
    r: DFF<Bits<16>>,
    nr: DFF<Bits<8>>,
    av: DFF<Bits<8>>,
    er: DFF<Bit>,
    busy: DFF<Bit>,
    plast: DFF<Bit>,
    in_done: DFF<Bit>,
    drop: DFF<Bit>,
    n_bad: DFF<Bits<32>>,
    avail: Signal<Local, Bits<8>>,
    n: Signal<Local, Bits<8>>,
    short: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    c_in: Signal<Local, Bits<8>>,
    hs: Signal<Local, Bits<DW>>,
    ins: Signal<Local, Bits<DW>>,
    mask: Signal<Local, Bits<DW>>,
    amask: Signal<Local, Bits<DW>>,
    cmask: Signal<Local, Bits<DW>>,
    keep: Signal<Local, Bits<KW>>,
    go: Signal<Local, Bit>,
    ends: Signal<Local, Bit>,
    o_new: Signal<Local, Bits<8>>,
    hv_new: Signal<Local, Bits<8>>,
    done_new: Signal<Local, Bit>,
    bad: Signal<Local, Bit>,
    take_cmd: Signal<Local, Bit>,
    ld_len: Signal<Local, Bits<16>>,
    ld_n: Signal<Local, Bits<8>>,
    dec_r: Signal<Local, Bits<16>>,
    dec_n: Signal<Local, Bits<8>>,
    cmd_w: Signal<Local, Bits<17>>,
    last_bit: Constant<Bits<17>>,
    keepc: Vec<Constant<Bits<KW>>>,
    datac: Vec<Constant<Bits<DW>>>,
    cnt: Vec<Constant<Bits<8>>>,
    sh: Vec<Constant<Bits<16>>>,
    kw: Constant<Bits<8>>,
    kw16: Constant<Bits<16>>,
    full: Constant<Bits<DW>>,
}

impl<const DW: usize, const KW: usize> Scatter<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(KW < 128, "byte counts are 8 bits");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_last: Default::default(),
            s_cmd_tvalid: Default::default(),
            s_cmd_tready: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tlast: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            bad_len: Default::default(),
            out: Skid::new(),
            cq: Fifo::new(),
            h: Default::default(),
            o: Default::default(),
            hv: Default::default(),
            r: Default::default(),
            nr: Default::default(),
            av: Default::default(),
            er: Default::default(),
            busy: Default::default(),
            plast: Default::default(),
            in_done: Default::default(),
            drop: Default::default(),
            n_bad: Default::default(),
            avail: Default::default(),
            n: Default::default(),
            short: Default::default(),
            need_in: Default::default(),
            c_in: Default::default(),
            hs: Default::default(),
            ins: Default::default(),
            mask: Default::default(),
            amask: Default::default(),
            cmask: Default::default(),
            keep: Default::default(),
            go: Default::default(),
            ends: Default::default(),
            o_new: Default::default(),
            hv_new: Default::default(),
            done_new: Default::default(),
            bad: Default::default(),
            take_cmd: Default::default(),
            ld_len: Default::default(),
            ld_n: Default::default(),
            dec_r: Default::default(),
            dec_n: Default::default(),
            cmd_w: Default::default(),
            last_bit: k(1 << 16),
            keepc: keep_of_count::<KW>(),
            datac: data_of_count::<DW>(),
            cnt: (0..=KW).map(|v| k::<8>(v as u64)).collect(),
            sh: (0..KW).map(|a| k::<16>(8 * a as u64)).collect(),
            kw: k(KW as u64),
            kw16: k(KW as u64),
            full: ones::<DW>(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Scatter<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Scatter<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, h, o, hv, r, nr, av, er, busy, plast, in_done, drop, n_bad);
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.cq.clk.next = self.clk.val();
        self.cq.rst.next = self.rst.val();
        // Pieces wait in a small queue (its `s_tready` is a register).
        self.cmd_w.next = bit_cast::<17, 16>(self.s_cmd_len.val());
        if self.s_cmd_last.val() {
            self.cmd_w.next = self.cmd_w.val() | self.last_bit.val();
        }
        self.cq.s_tdata.next = self.cmd_w.val();
        self.cq.s_tvalid.next = self.s_cmd_tvalid.val();
        self.s_cmd_tready.next = self.cq.s_tready.val();
        self.m_tdata.next = self.out.m_axis_tdata.val();
        self.m_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_tlast.next = self.out.m_axis_tlast.val();
        self.m_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_tready.val();
        self.bad_len.next = self.n_bad.q.val();

        // This output beat: `n` bytes, `avail` of them in hand.
        // `hv - o`, registered beside them.
        self.avail.next = self.av.q.val();
        // `n` and whether the piece ends with this beat are registered beside `r`.
        self.n.next = self.nr.q.val();
        self.ends.next = self.er.q.val();
        // Their next values: for a piece loaded, and for `r` less this beat.
        self.ld_len.next = self.cq.m_tdata.val().get_bits::<16>(0);
        self.ld_n.next = self.kw.val();
        if self.ld_len.val() < self.kw16.val() {
            self.ld_n.next = self.ld_len.val().get_bits::<8>(0);
        }
        self.dec_r.next = self.r.q.val() - bit_cast::<16, 8>(self.nr.q.val());
        self.dec_n.next = self.kw.val();
        if self.dec_r.val() < self.kw16.val() {
            self.dec_n.next = self.dec_r.val().get_bits::<8>(0);
        }
        self.short.next = self.avail.val() < self.n.val();
        self.need_in.next = self.short.val() & !self.in_done.q.val();
        // Bytes of the input beat.
        self.c_in.next = self.kw.val();
        self.cmask.next = self.full.val();
        if self.s_tlast.val() {
            self.c_in.next = bits::<8>(0);
            self.cmask.next = self.datac[0].val();
            for m in 0..KW {
                if self.s_tkeep.val() == self.keepc[m + 1].val() {
                    self.c_in.next = self.cnt[m + 1].val();
                    self.cmask.next = self.datac[m + 1].val();
                }
            }
        }
        // `h` down by `o` lanes, the input beat up by `avail` lanes.
        self.hs.next = self.h.q.val();
        self.ins.next = self.s_tdata.val() & self.cmask.val();
        for a in 1..KW {
            if self.o.q.val() == self.cnt[a].val() {
                self.hs.next = self.h.q.val() >> self.sh[a].val();
            }
            if self.avail.val() == self.cnt[a].val() {
                self.ins.next = (self.s_tdata.val() & self.cmask.val()) << self.sh[a].val();
            }
        }
        self.mask.next = self.datac[0].val();
        self.keep.next = self.keepc[0].val();
        self.amask.next = self.datac[0].val();
        for m in 0..KW {
            if self.avail.val() == self.cnt[m + 1].val() {
                self.amask.next = self.datac[m + 1].val();
            }
            if self.n.val() == self.cnt[m + 1].val() {
                self.mask.next = self.datac[m + 1].val();
                self.keep.next = self.keepc[m + 1].val();
            }
        }
        self.out.s_axis_tdata.next = self.hs.val() & self.amask.val() & self.mask.val();
        if self.need_in.val() {
            self.out.s_axis_tdata.next =
                ((self.hs.val() & self.amask.val()) | self.ins.val()) & self.mask.val();
        }
        self.out.s_axis_tkeep.next = self.keep.val();
        self.out.s_axis_tlast.next = self.ends.val();
        self.go.next = self.busy.q.val()
            & !self.drop.q.val()
            & self.out.s_axis_tready.val()
            & (!self.need_in.val() | self.s_tvalid.val());
        self.out.s_axis_tvalid.next = self.go.val();
        // `s_tready` and `go` repeat the expression on purpose (no shared local joins the
        // input's valid to its ready).
        self.s_tready.next = self.drop.q.val()
            | (self.busy.q.val() & self.need_in.val() & self.out.s_axis_tready.val());

        // What is in hand after this beat.
        self.o_new.next = self.o.q.val() + self.n.val();
        self.hv_new.next = self.hv.q.val();
        self.done_new.next = self.in_done.q.val();
        self.bad.next = false;
        if self.need_in.val() {
            self.o_new.next = self.n.val() - self.avail.val();
            self.hv_new.next = self.c_in.val();
            self.done_new.next = self.s_tlast.val();
            if self.c_in.val() < self.o_new.val() {
                self.bad.next = true;
                self.o_new.next = self.c_in.val();
            }
        } else if self.short.val() {
            // The packet ended before the piece: the rest of it goes out as zeros.
            self.bad.next = true;
            self.o_new.next = self.hv.q.val();
        }

        // The next piece loads as this one ends (unless the packet has beats to drop), or
        // when idle.
        self.take_cmd.next = (!self.busy.q.val() & !self.drop.q.val())
            | (self.go.val() & self.ends.val() & (!self.plast.q.val() | self.done_new.val()));
        self.cq.m_tready.next = self.take_cmd.val();
        if !self.busy.q.val() & !self.drop.q.val() {
            if self.cq.m_tvalid.val() {
                self.busy.d.next = true;
                self.r.d.next = self.ld_len.val();
                self.nr.d.next = self.ld_n.val();
                self.er.d.next = self.ld_len.val() <= self.kw16.val();
                self.plast.d.next = self.cq.m_tdata.val().get_bit(16);
            }
        } else if self.drop.q.val() {
            // Beats of the packet past its pieces.
            if self.s_tvalid.val() {
                if self.c_in.val() != bits::<8>(0) {
                    self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                }
                if self.s_tlast.val() {
                    self.drop.d.next = false;
                }
            }
        } else if self.go.val() {
            if self.need_in.val() {
                self.h.d.next = self.s_tdata.val();
            }
            self.o.d.next = self.o_new.val();
            self.hv.d.next = self.hv_new.val();
            self.av.d.next = self.hv_new.val() - self.o_new.val();
            self.in_done.d.next = self.done_new.val();
            if self.o_new.val() >= self.hv_new.val() {
                self.o.d.next = bits::<8>(0);
                self.hv.d.next = bits::<8>(0);
                self.av.d.next = bits::<8>(0);
            }
            if self.bad.val() {
                self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
            }
            self.r.d.next = self.dec_r.val();
            self.nr.d.next = self.dec_n.val();
            self.er.d.next = self.dec_r.val() <= self.kw16.val();
            if self.ends.val() {
                self.busy.d.next = false;
                if self.cq.m_tvalid.val() & self.take_cmd.val() {
                    self.busy.d.next = true;
                    self.r.d.next = self.ld_len.val();
                    self.nr.d.next = self.ld_n.val();
                    self.er.d.next = self.ld_len.val() <= self.kw16.val();
                    self.plast.d.next = self.cq.m_tdata.val().get_bit(16);
                }
                if self.plast.q.val() {
                    // The packet's last piece: nothing of it may be left.
                    self.o.d.next = bits::<8>(0);
                    self.hv.d.next = bits::<8>(0);
                    self.av.d.next = bits::<8>(0);
                    self.in_done.d.next = false;
                    if self.o_new.val() < self.hv_new.val() {
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                    }
                    if !self.done_new.val() {
                        self.drop.d.next = true;
                    }
                }
            }
        }
        if self.rst.val() {
            self.busy.d.next = false;
            self.drop.d.next = false;
            self.o.d.next = bits::<8>(0);
            self.hv.d.next = bits::<8>(0);
            self.av.d.next = bits::<8>(0);
            self.in_done.d.next = false;
            self.n_bad.d.next = bits::<32>(0);
        }
    }
}
