//! `XgmiiRx`: the receive half of the 10G reconciliation sublayer. A 64-bit XGMII word in every
//! clock (`spec::xgmii`), frames out (FCS included, for `MacRx`).
//!
//! Ports:
//! - `xgmii_rxd[63:0]`, `xgmii_rxc[7:0]`: the XGMII word (lane i in bits 8i+7..8i, control
//!   flag in bit i).
//! - `m_axis_{tdata,tkeep,tlast,tvalid,tuser}`: frames, no `tready` (the wire does not wait);
//!   `tkeep` all ones but on the last beat, contiguous from lane 0 there; `tuser` on a last
//!   beat: the frame broke the XGMII rules and must be dropped (`MacRx` counts it).
//! - counters `frames` (frames delivered clean), `code_err` (frames delivered with `tuser`: an
//!   /E/ inside, a control character other than /T/ ending it, a bad preamble or SFD, or no
//!   byte at all between /S/ and /T/).
//!
//! How: an aligner first moves a frame that started on lane 4 by four lanes (the previous
//! word's upper half with this word's lower half), so /S/ is always on lane 0 for the decoder;
//! it switches on /S/ (lane 0 at once, lane 4 from the next word). The decoder holds one beat,
//! so it knows whether the next word begins with /T/ (then the held beat is the last); a word
//! with /T/ inside leaves its bytes as a last beat one clock later. A frame ends at its /T/, or
//! at the first control character in it that is not /E/ (an idle; a new /S/, which also starts
//! the next frame): never a hang on a link that stops mid-frame, and an /E/ never hides the
//! /T/ behind it. Bytes between frames (idles, ordered sets) are ignored.

use crate::host::k;
use crate::net::xgmii_tx::word;
use crate::prelude::*;
use crate::stream::{counts, data_of_count, keep_of_count};
use ferroce_spec::xgmii::{ERROR, LANES, PREAMBLE, SFD, START, TERMINATE};

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum XgmiiRxState {
    Idle,
    Frame,
}

#[derive(LogicBlock)]
pub struct XgmiiRx {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub xgmii_rxd: Signal<In, Bits<64>>,
    pub xgmii_rxc: Signal<In, Bits<8>>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub frames: Signal<Out, Bits<32>>,
    pub code_err: Signal<Out, Bits<32>>,
    prev_d: DFF<Bits<64>>,
    prev_c: DFF<Bits<8>>,
    shift: DFF<Bit>,
    state: DFF<XgmiiRxState>,
    err: DFF<Bit>,
    h_valid: DFF<Bit>,
    h_last: DFF<Bit>,
    h_user: DFF<Bit>,
    h_data: DFF<Bits<64>>,
    h_keep: DFF<Bits<8>>,
    o_valid: DFF<Bit>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    n_frames: DFF<Bits<32>>,
    n_err: DFF<Bits<32>>,
    raw_s0: Signal<Local, Bit>,
    prev_s4: Signal<Local, Bit>,
    shift_now: Signal<Local, Bit>,
    ad: Signal<Local, Bits<64>>,
    ac: Signal<Local, Bits<8>>,
    fc: Signal<Local, Bits<4>>,
    fchar: Signal<Local, Bits<64>>,
    is_s: Signal<Local, Bit>,
    pre_ok: Signal<Local, Bit>,
    ends: Signal<Local, Bit>,
    e_before: Signal<Local, Bit>,
    bad: Signal<Local, Bit>,
    nc: Vec<Constant<Bits<4>>>,
    keepc: Vec<Constant<Bits<8>>>,
    dmask: Vec<Constant<Bits<64>>>,
    onehot: Vec<Constant<Bits<8>>>,
    lane_sh: Vec<Constant<Bits<8>>>,
    byte0: Constant<Bits<64>>,
    c_start: Constant<Bits<64>>,
    c_term: Constant<Bits<64>>,
    c_err: Constant<Bits<64>>,
    pre_val: Constant<Bits<64>>,
}

impl XgmiiRx {
    pub fn new() -> Self {
        let mut pre = [PREAMBLE; LANES];
        pre[0] = START;
        pre[LANES - 1] = SFD;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            xgmii_rxd: Default::default(),
            xgmii_rxc: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tuser: Default::default(),
            frames: Default::default(),
            code_err: Default::default(),
            prev_d: Default::default(),
            prev_c: Default::default(),
            shift: Default::default(),
            state: Default::default(),
            err: Default::default(),
            h_valid: Default::default(),
            h_last: Default::default(),
            h_user: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            o_valid: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            n_frames: Default::default(),
            n_err: Default::default(),
            raw_s0: Default::default(),
            prev_s4: Default::default(),
            shift_now: Default::default(),
            ad: Default::default(),
            ac: Default::default(),
            fc: Default::default(),
            fchar: Default::default(),
            is_s: Default::default(),
            pre_ok: Default::default(),
            ends: Default::default(),
            e_before: Default::default(),
            bad: Default::default(),
            nc: counts(LANES),
            keepc: keep_of_count::<8>(),
            dmask: data_of_count::<64>(),
            onehot: (0..LANES).map(|i| k(1 << i)).collect(),
            lane_sh: (0..LANES).map(|i| k(8 * i as u64)).collect(),
            byte0: k(0xFF),
            c_start: k(START.into()),
            c_term: k(TERMINATE.into()),
            c_err: k(ERROR.into()),
            pre_val: k(word(pre)),
        }
    }
}

impl Default for XgmiiRx {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for XgmiiRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, prev_d, prev_c, shift, state, err, h_valid, h_last, h_user, h_data, h_keep,
            o_valid, o_last, o_user, o_data, o_keep, n_frames, n_err
        );
        self.m_axis_tdata.next = self.o_data.q.val();
        self.m_axis_tkeep.next = self.o_keep.q.val();
        self.m_axis_tlast.next = self.o_last.q.val();
        self.m_axis_tvalid.next = self.o_valid.q.val();
        self.m_axis_tuser.next = self.o_user.q.val();
        self.frames.next = self.n_frames.q.val();
        self.code_err.next = self.n_err.q.val();

        // Aligner: /S/ on lane 0 now, or on lane 4 of the previous word.
        self.prev_d.d.next = self.xgmii_rxd.val();
        self.prev_c.d.next = self.xgmii_rxc.val();
        self.raw_s0.next = ((self.xgmii_rxc.val() & bits::<8>(0x01)) != bits::<8>(0))
            & ((self.xgmii_rxd.val() & self.byte0.val()) == self.c_start.val());
        self.prev_s4.next = ((self.prev_c.q.val() & bits::<8>(0x10)) != bits::<8>(0))
            & (((self.prev_d.q.val() >> 32) & self.byte0.val()) == self.c_start.val());
        self.shift_now.next = self.shift.q.val();
        if self.raw_s0.val() {
            self.shift_now.next = false;
        } else if self.prev_s4.val() {
            self.shift_now.next = true;
        }
        self.shift.d.next = self.shift_now.val();
        self.ad.next = self.xgmii_rxd.val();
        self.ac.next = self.xgmii_rxc.val();
        if self.shift_now.val() {
            self.ad.next = (self.prev_d.q.val() >> 32) | (self.xgmii_rxd.val() << 32);
            self.ac.next = (self.prev_c.q.val() >> 4) | (self.xgmii_rxc.val() << 4);
        }

        // The first control lane of the aligned word that is not /E/ (8: none), its
        // character, and whether an /E/ comes before it.
        self.fc.next = bits::<4>(8);
        self.fchar.next = bits::<64>(0);
        for j in 0..LANES {
            if (self.fc.val() == bits::<4>(8))
                & ((self.ac.val() & self.onehot[j].val()) != bits::<8>(0))
                & (((self.ad.val() >> self.lane_sh[j].val()) & self.byte0.val())
                    != self.c_err.val())
            {
                self.fc.next = self.nc[j].val();
                self.fchar.next = (self.ad.val() >> self.lane_sh[j].val()) & self.byte0.val();
            }
        }
        self.e_before.next = false;
        for j in 0..(LANES + 1) {
            if self.fc.val() == self.nc[j].val() {
                self.e_before.next = (self.ac.val() & self.keepc[j].val()) != bits::<8>(0);
            }
        }
        self.is_s.next = (self.fc.val() == bits::<4>(0)) & (self.fchar.val() == self.c_start.val());
        self.pre_ok.next = self.is_s.val()
            & (self.ac.val() == bits::<8>(0x01))
            & (self.ad.val() == self.pre_val.val());
        self.ends.next = self.fc.val() != bits::<4>(8);
        self.bad.next =
            self.err.q.val() | self.e_before.val() | (self.fchar.val() != self.c_term.val());

        // The held beat goes out when the next word shows it is not the frame's end, or that
        // it is (/T/ on lane 0), or when it is a last beat already.
        self.o_valid.d.next = false;
        self.o_data.d.next = self.h_data.q.val();
        self.o_keep.d.next = self.h_keep.q.val();
        self.o_last.d.next = self.h_last.q.val();
        self.o_user.d.next = self.h_user.q.val();
        match self.state.q.val() {
            XgmiiRxState::Idle => {
                if self.h_valid.q.val() {
                    self.o_valid.d.next = true;
                    self.h_valid.d.next = false;
                }
                if self.is_s.val() {
                    self.state.d.next = XgmiiRxState::Frame;
                    self.err.d.next = !self.pre_ok.val();
                }
            }
            XgmiiRxState::Frame => {
                self.o_valid.d.next = self.h_valid.q.val();
                if !self.ends.val() {
                    // Bytes only (an /E/ marks the frame bad and counts as a byte).
                    if self.e_before.val() {
                        self.err.d.next = true;
                    }
                    self.h_valid.d.next = true;
                    self.h_data.d.next = self.ad.val();
                    self.h_keep.d.next = bits::<8>(0xFF);
                    self.h_last.d.next = false;
                    self.h_user.d.next = false;
                } else {
                    self.state.d.next = XgmiiRxState::Idle;
                    if self.is_s.val() {
                        // A new /S/ ends this frame (flagged) and starts the next one.
                        self.state.d.next = XgmiiRxState::Frame;
                        self.err.d.next = !self.pre_ok.val();
                    }
                    if self.fc.val() == bits::<4>(0) {
                        // The held beat was the last one (or there was none: a frame of no
                        // bytes, counted).
                        self.o_last.d.next = true;
                        self.o_user.d.next = self.bad.val();
                        self.h_valid.d.next = false;
                        if !self.h_valid.q.val() | self.bad.val() {
                            self.n_err.d.next = self.n_err.q.val() + bits::<32>(1);
                        } else {
                            self.n_frames.d.next = self.n_frames.q.val() + bits::<32>(1);
                        }
                    } else {
                        self.h_valid.d.next = true;
                        self.h_last.d.next = true;
                        self.h_user.d.next = self.bad.val();
                        for j in 1..LANES {
                            if self.fc.val() == self.nc[j].val() {
                                self.h_data.d.next = self.ad.val() & self.dmask[j].val();
                                self.h_keep.d.next = self.keepc[j].val();
                            }
                        }
                        if self.bad.val() {
                            self.n_err.d.next = self.n_err.q.val() + bits::<32>(1);
                        } else {
                            self.n_frames.d.next = self.n_frames.q.val() + bits::<32>(1);
                        }
                    }
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = XgmiiRxState::Idle;
            self.shift.d.next = false;
            self.h_valid.d.next = false;
            self.o_valid.d.next = false;
            self.n_frames.d.next = bits::<32>(0);
            self.n_err.d.next = bits::<32>(0);
        }
    }
}
