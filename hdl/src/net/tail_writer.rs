//! `TailWriter`: puts a 32-bit value computed over a frame at the frame's end, the value
//! travelling least-significant byte first. Two modes, fixed at elaboration:
//! - overwrite: the frame already ends with four placeholder bytes; they become the value
//!   (the ICRC, after `TxHeader`).
//! - append: the value follows the frame's last byte, in the last beat or a new one (the FCS).
//!
//! Ports: `s_axis_*` the frame; `s_val_{tdata,tvalid}` the value of each frame, in frame order,
//! from a tap watching `s_axis` (it may arrive any time after the frame's last beat is taken);
//! `m_axis_*` the frame with its value. `tuser` (a frame marked bad) goes out with the frame's
//! last beat as it came with the last beat in.
//!
//! How: a two-entry buffer whose entries are both visible (head `h`, next `t`) and an
//! eight-entry value queue (a ring of registers: every frame between the tap and the head may
//! have its value waiting). The head leaves when the output skid has room and it does not need the value,
//! or the value is there: in overwrite mode a beat needs it when it is the last, or when the
//! next beat is the last and holds fewer than four bytes (the value straddles the two). Every
//! output is registered and `s_axis_tready` depends on registers only (docs/ARCHITECTURE.md,
//! "Composition").
//!
//! Throughput: one beat per clock when a frame's last beat reaches the head no sooner than its
//! value (`MacTx` puts two skids between the tap and this block for that); otherwise the last
//! beat waits for it. An appended value that spills into a new beat costs one cycle (a beat of
//! its own). A frame whose value never comes waits (the tap always answers); a value beyond
//! eight waiting would overwrite the oldest (its users cannot hold that many frames).

use crate::host::k;
use crate::prelude::*;
use crate::stream::{counts, data_of_count, keep_of_count, ones, Skid};

/// Values the queue holds: one per frame whose last beat the tap has seen and this block has
/// not yet sent. Eight covers every frame its user can hold between the two: `MacTx` has two
/// skids ahead of this block (four one-beat frames), this block's buffer two.
const VQ: usize = 8;

#[derive(LogicBlock)]
pub struct TailWriter<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub s_val_tdata: Signal<In, Bits<32>>,
    pub s_val_tvalid: Signal<In, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    out: Skid<DW, KW>,
    h_valid: DFF<Bit>,
    h_data: DFF<Bits<DW>>,
    h_keep: DFF<Bits<KW>>,
    h_last: DFF<Bit>,
    h_user: DFF<Bit>,
    h_n: DFF<Bits<8>>,
    t_valid: DFF<Bit>,
    t_data: DFF<Bits<DW>>,
    t_keep: DFF<Bits<KW>>,
    t_last: DFF<Bit>,
    t_user: DFF<Bit>,
    t_n: DFF<Bits<8>>,
    // The value queue: a ring of `VQ` values, `vn` of them held.
    vq: Vec<DFF<Bits<32>>>,
    vwp: DFF<Bits<3>>,
    vrp: DFF<Bits<3>>,
    vn: DFF<Bits<4>>,
    spilled: DFF<Bit>,
    // Locals.
    in_n: Signal<Local, Bits<8>>,
    vw: Signal<Local, Bits<DW>>,
    need_v: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    sh: Signal<Local, Bits<16>>,
    o_data: Signal<Local, Bits<DW>>,
    o_keep: Signal<Local, Bits<KW>>,
    o_last: Signal<Local, Bit>,
    n4: Signal<Local, Bits<8>>,
    spill_n: Signal<Local, Bits<8>>,
    v_have: Signal<Local, Bit>,
    v_head: Signal<Local, Bits<32>>,
    v_pop: Signal<Local, Bit>,
    vidx: Vec<Constant<Bits<3>>>,
    one4: Constant<Bits<4>>,
    // Constants.
    append: Constant<Bit>,
    keepc: Vec<Constant<Bits<KW>>>,
    dmask: Vec<Constant<Bits<DW>>>,
    nc: Vec<Constant<Bits<8>>>,
    m32: Constant<Bits<DW>>,
    kw: Constant<Bits<8>>,
    kw16: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
}

impl<const DW: usize, const KW: usize> TailWriter<DW, KW> {
    /// `append`: add the value after the frame; otherwise overwrite its last four bytes.
    pub fn new(append: bool) -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!((4..=128).contains(&KW), "a beat holds the whole value");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_val_tdata: Default::default(),
            s_val_tvalid: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            out: Skid::new(),
            h_valid: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            h_last: Default::default(),
            h_user: Default::default(),
            h_n: Default::default(),
            t_valid: Default::default(),
            t_data: Default::default(),
            t_keep: Default::default(),
            t_last: Default::default(),
            t_user: Default::default(),
            t_n: Default::default(),
            vq: (0..VQ).map(|_| Default::default()).collect(),
            vwp: Default::default(),
            vrp: Default::default(),
            vn: Default::default(),
            spilled: Default::default(),
            in_n: Default::default(),
            vw: Default::default(),
            need_v: Default::default(),
            go: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            sh: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            n4: Default::default(),
            spill_n: Default::default(),
            v_have: Default::default(),
            v_head: Default::default(),
            v_pop: Default::default(),
            vidx: (0..VQ as u64).map(k).collect(),
            one4: k(1),
            append: Constant::new(append),
            keepc: keep_of_count::<KW>(),
            dmask: data_of_count::<DW>(),
            nc: counts(KW),
            m32: k(0xFFFF_FFFF),
            kw: k(KW as u64),
            kw16: k(KW as u64),
            full_keep: ones::<KW>(),
        }
    }
}

impl<const DW: usize, const KW: usize> Logic for TailWriter<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, h_valid, h_data, h_keep, h_last, h_user, h_n, t_valid, t_data, t_keep,
            t_last, t_user, t_n, vwp, vrp, vn, spilled
        );
        for i in 0..self.vq.len() {
            self.vq[i].clock.next = self.clk.val();
            self.vq[i].d.next = self.vq[i].q.val();
        }
        self.v_have.next = self.vn.q.val() >= self.one4.val();
        self.v_head.next = self.vq[0].q.val();
        for i in 0..self.vq.len() {
            if self.vrp.q.val() == self.vidx[i].val() {
                self.v_head.next = self.vq[i].q.val();
            }
        }
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tuser.next = self.out.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();

        // Bytes in the incoming beat (all lanes unless it is the last).
        self.in_n.next = self.kw.val();
        if self.s_axis_tlast.val() {
            self.in_n.next = bits::<8>(0);
            for i in 0..(KW + 1) {
                if self.s_axis_tkeep.val() == self.keepc[i].val() {
                    self.in_n.next = self.nc[i].val();
                }
            }
        }
        self.vw.next = bit_cast::<DW, 32>(self.v_head.val());

        // Does the head beat need the value, and where does it go?
        self.need_v.next = self.h_last.q.val();
        self.n4.next = self.h_n.q.val() + bits::<8>(4);
        self.sh.next = bit_cast::<16, 8>(self.h_n.q.val()) << 3;
        self.o_data.next = self.h_data.q.val();
        self.o_keep.next = self.h_keep.q.val();
        self.o_last.next = self.h_last.q.val();
        self.spill_n.next = self.n4.val() - self.kw.val();
        if self.append.val() {
            // The value follows byte h_n of the last beat; past the beat it spills.
            if self.h_last.q.val() {
                for i in 0..(KW + 1) {
                    if self.h_n.q.val() == self.nc[i].val() {
                        self.o_data.next = (self.h_data.q.val() & self.dmask[i].val())
                            | (self.vw.val() << self.sh.val());
                    }
                }
                for i in 0..(KW + 1) {
                    if self.n4.val() == self.nc[i].val() {
                        self.o_keep.next = self.keepc[i].val();
                    }
                }
                if self.n4.val() > self.kw.val() {
                    self.o_keep.next = self.full_keep.val();
                    self.o_last.next = false;
                    if self.spilled.q.val() {
                        // The second beat: the value's bytes that did not fit.
                        self.sh.next = (self.kw16.val() - bit_cast::<16, 8>(self.h_n.q.val())) << 3;
                        self.o_data.next = self.vw.val() >> self.sh.val();
                        self.o_last.next = true;
                        for i in 0..(KW + 1) {
                            if self.spill_n.val() == self.nc[i].val() {
                                self.o_keep.next = self.keepc[i].val();
                            }
                        }
                    }
                }
            }
        } else {
            // Overwrite: the value is the last four bytes of the frame.
            if self.h_last.q.val() {
                if self.h_n.q.val() < bits::<8>(4) {
                    self.sh.next = (bits::<16>(4) - bit_cast::<16, 8>(self.h_n.q.val())) << 3;
                    self.o_data.next = (self.h_data.q.val() & !(self.m32.val() >> self.sh.val()))
                        | (self.vw.val() >> self.sh.val());
                } else {
                    self.sh.next = (bit_cast::<16, 8>(self.h_n.q.val()) - bits::<16>(4)) << 3;
                    self.o_data.next = (self.h_data.q.val() & !(self.m32.val() << self.sh.val()))
                        | (self.vw.val() << self.sh.val());
                }
            } else if self.t_valid.q.val() & self.t_last.q.val() & (self.t_n.q.val() < bits::<8>(4))
            {
                self.need_v.next = true;
                self.sh.next =
                    (self.kw16.val() - bits::<16>(4) + bit_cast::<16, 8>(self.t_n.q.val())) << 3;
                self.o_data.next = (self.h_data.q.val() & !(self.m32.val() << self.sh.val()))
                    | (self.vw.val() << self.sh.val());
            }
        }
        // A non-last head waits for the beat behind it in overwrite mode (it may be the short
        // last one).
        self.go.next = self.h_valid.q.val()
            & self.out.s_axis_tready.val()
            & (!self.need_v.val() | self.v_have.val())
            & (self.append.val() | self.h_last.q.val() | self.t_valid.q.val());
        self.out.s_axis_tvalid.next = self.go.val();
        self.out.s_axis_tdata.next = self.o_data.val();
        self.out.s_axis_tkeep.next = self.o_keep.val();
        self.out.s_axis_tlast.next = self.o_last.val();
        self.out.s_axis_tuser.next = self.o_last.val() & self.h_user.q.val();
        self.pop.next = self.go.val();
        if self.append.val() & self.h_last.q.val() & (self.n4.val() > self.kw.val()) {
            self.pop.next = self.go.val() & self.spilled.q.val();
            if self.go.val() {
                self.spilled.d.next = !self.spilled.q.val();
            }
        }

        // The buffer: the head leaves, a beat comes in when the next slot is or becomes free.
        self.s_axis_tready.next = !self.t_valid.q.val() | self.pop.val();
        self.push.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();
        if self.pop.val() {
            if self.t_valid.q.val() {
                self.h_data.d.next = self.t_data.q.val();
                self.h_keep.d.next = self.t_keep.q.val();
                self.h_last.d.next = self.t_last.q.val();
                self.h_user.d.next = self.t_user.q.val();
                self.h_n.d.next = self.t_n.q.val();
                self.t_valid.d.next = self.push.val();
                self.t_data.d.next = self.s_axis_tdata.val();
                self.t_keep.d.next = self.s_axis_tkeep.val();
                self.t_last.d.next = self.s_axis_tlast.val();
                self.t_user.d.next = self.s_axis_tuser.val();
                self.t_n.d.next = self.in_n.val();
            } else {
                self.h_valid.d.next = self.push.val();
                self.h_data.d.next = self.s_axis_tdata.val();
                self.h_keep.d.next = self.s_axis_tkeep.val();
                self.h_last.d.next = self.s_axis_tlast.val();
                self.h_user.d.next = self.s_axis_tuser.val();
                self.h_n.d.next = self.in_n.val();
            }
        } else if self.push.val() {
            if self.h_valid.q.val() {
                self.t_valid.d.next = true;
                self.t_data.d.next = self.s_axis_tdata.val();
                self.t_keep.d.next = self.s_axis_tkeep.val();
                self.t_last.d.next = self.s_axis_tlast.val();
                self.t_user.d.next = self.s_axis_tuser.val();
                self.t_n.d.next = self.in_n.val();
            } else {
                self.h_valid.d.next = true;
                self.h_data.d.next = self.s_axis_tdata.val();
                self.h_keep.d.next = self.s_axis_tkeep.val();
                self.h_last.d.next = self.s_axis_tlast.val();
                self.h_user.d.next = self.s_axis_tuser.val();
                self.h_n.d.next = self.in_n.val();
            }
        }

        // The value queue: a frame's value is used up when its last beat leaves.
        self.v_pop.next = self.pop.val() & self.h_last.q.val();
        if self.s_val_tvalid.val() {
            for i in 0..self.vq.len() {
                if self.vwp.q.val() == self.vidx[i].val() {
                    self.vq[i].d.next = self.s_val_tdata.val();
                }
            }
            self.vwp.d.next = self.vwp.q.val() + bits::<3>(1);
        }
        if self.v_pop.val() {
            self.vrp.d.next = self.vrp.q.val() + bits::<3>(1);
        }
        if self.s_val_tvalid.val() & !self.v_pop.val() {
            self.vn.d.next = self.vn.q.val() + bits::<4>(1);
        }
        if !self.s_val_tvalid.val() & self.v_pop.val() {
            self.vn.d.next = self.vn.q.val() - bits::<4>(1);
        }
        if self.rst.val() {
            self.h_valid.d.next = false;
            self.t_valid.d.next = false;
            self.vwp.d.next = bits::<3>(0);
            self.vrp.d.next = bits::<3>(0);
            self.vn.d.next = bits::<4>(0);
            self.spilled.d.next = false;
        }
    }
}
