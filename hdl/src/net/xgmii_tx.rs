//! `XgmiiTx`: the transmit half of the 10G reconciliation sublayer. Frames (FCS included, as
//! `MacTx` sends them) in, a 64-bit XGMII word out every clock (`spec::xgmii`).
//!
//! Ports:
//! - `s_axis_*`: frames; `tkeep` all ones but on the last beat, contiguous from lane 0 there
//!   (a last beat whose `tkeep` is not of that form is sent whole). Once a frame has started
//!   its beats must come one per clock: the wire cannot wait.
//! - `xgmii_txd[63:0]`, `xgmii_txc[7:0]`: the XGMII word (lane i in bits 8i+7..8i, its control
//!   flag in bit i), from registers.
//! - counters `frames` (frames sent whole), `underrun` (frames whose next beat was missing:
//!   ended at once with /E/ then /T/, so every receiver drops them; the rest of the frame is
//!   taken and thrown away).
//!
//! On the wire: /S/ on lane 0 or 4, six 0x55, the SFD, the frame, /T/ after its last byte,
//! idles. The gap from /T/ to the next /S/ follows the deficit idle count
//! (`spec::xgmii::dic_next_start`): never under 9 bytes, 12 on average for frames back to back.
//! A start on lane 4 puts the frame 4 lanes off the input beats; a 4-byte carry realigns it.
//!
//! ```text
//!  Idle --(frame waiting, gap allows lane 0)--> preamble word ---------> Data (whole beats)
//!       --(gap allows lane 4 only)-----------> I I I I S 55 55 55 --> Data (carry 55 55 55 D5)
//!  Data --last beat--> /T/ in it, or Term (the bytes left and /T/) --> Idle
//!  Data --no beat--> /E/ x7 /T/ --> Discard (rest of the frame) --> Idle
//! ```

use crate::host::k;
use crate::prelude::*;
use crate::stream::{counts, data_of_count, keep_of_count};
use crate::util::bits_from_u64;
use ferroce_spec::xgmii::{
    ERROR, IDLE, IFG, IFG_MIN, LANES, PREAMBLE, PREAMBLE_LEN, SFD, START, TERMINATE,
};

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum XgmiiTxState {
    Idle,
    Data,
    Term,
    Discard,
}

/// The 64-bit value of eight lane bytes (lane 0 first).
pub fn word(bytes: [u8; LANES]) -> u64 {
    u64::from_le_bytes(bytes)
}

/// Gap counts saturate here (far above any gap the rule looks at).
const IFG_CAP: u64 = 200;

#[derive(LogicBlock)]
pub struct XgmiiTx {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub xgmii_txd: Signal<Out, Bits<64>>,
    pub xgmii_txc: Signal<Out, Bits<8>>,
    pub frames: Signal<Out, Bits<32>>,
    pub underrun: Signal<Out, Bits<32>>,
    state: DFF<XgmiiTxState>,
    sh: DFF<Bit>,
    carry: DFF<Bits<64>>,
    cn: DFF<Bits<4>>,
    ifg: DFF<Bits<8>>,
    dic: DFF<Bits<8>>,
    txd: DFF<Bits<64>>,
    txc: DFF<Bits<8>>,
    n_frames: DFF<Bits<32>>,
    n_underrun: DFF<Bits<32>>,
    n: Signal<Local, Bits<4>>,
    tcat: Signal<Local, Bits<4>>,
    cat: Signal<Local, Bits<64>>,
    take: Signal<Local, Bit>,
    need: Signal<Local, Bits<8>>,
    g4: Signal<Local, Bits<8>>,
    start0: Signal<Local, Bit>,
    start4: Signal<Local, Bit>,
    gsel: Signal<Local, Bits<8>>,
    dic_new: Signal<Local, Bits<8>>,
    keepc: Vec<Constant<Bits<8>>>,
    nc: Vec<Constant<Bits<4>>>,
    dmask: Vec<Constant<Bits<64>>>,
    tword: Vec<Constant<Bits<64>>>,
    tctl: Vec<Constant<Bits<8>>>,
    ifg_of: Vec<Constant<Bits<8>>>,
    idle_w: Constant<Bits<64>>,
    pre0: Constant<Bits<64>>,
    pre4: Constant<Bits<64>>,
    carry4: Constant<Bits<64>>,
    err_w: Constant<Bits<64>>,
    low32: Constant<Bits<64>>,
    ifg_min: Constant<Bits<8>>,
    ifg_nom: Constant<Bits<8>>,
    ifg_cap: Constant<Bits<8>>,
}

impl XgmiiTx {
    pub fn new() -> Self {
        const { assert!(PREAMBLE_LEN == LANES, "the preamble is one word") };
        // Lane i holds /T/, the lanes above it idles; below it the frame's bytes.
        let term = |i: usize| -> u64 {
            let mut b = [IDLE; LANES];
            if i < LANES {
                b[i] = TERMINATE;
            }
            let mask = if i >= LANES { 0 } else { u64::MAX << (8 * i) };
            word(b) & mask
        };
        let mut pre = [PREAMBLE; LANES];
        pre[0] = START;
        pre[LANES - 1] = SFD;
        let pre4 = [IDLE, IDLE, IDLE, IDLE, START, PREAMBLE, PREAMBLE, PREAMBLE];
        let carry4 = [PREAMBLE, PREAMBLE, PREAMBLE, SFD, 0, 0, 0, 0];
        let mut err = [ERROR; LANES];
        err[LANES - 1] = TERMINATE;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            xgmii_txd: Default::default(),
            xgmii_txc: Default::default(),
            frames: Default::default(),
            underrun: Default::default(),
            state: Default::default(),
            sh: Default::default(),
            carry: Default::default(),
            cn: Default::default(),
            ifg: Default::default(),
            dic: Default::default(),
            txd: Default::default(),
            txc: Default::default(),
            n_frames: Default::default(),
            n_underrun: Default::default(),
            n: Default::default(),
            tcat: Default::default(),
            cat: Default::default(),
            take: Default::default(),
            need: Default::default(),
            g4: Default::default(),
            start0: Default::default(),
            start4: Default::default(),
            gsel: Default::default(),
            dic_new: Default::default(),
            keepc: keep_of_count::<8>(),
            nc: counts(LANES),
            dmask: data_of_count::<64>(),
            tword: (0..=LANES).map(|i| k(term(i))).collect(),
            tctl: (0..=LANES).map(|i| k((0xFFu64 << i) & 0xFF)).collect(),
            ifg_of: (0..=LANES).map(|i| k((LANES - i) as u64)).collect(),
            idle_w: k(word([IDLE; LANES])),
            pre0: k(word(pre)),
            pre4: k(word(pre4)),
            carry4: k(word(carry4)),
            err_w: k(word(err)),
            low32: Constant::new(bits_from_u64(0xFFFF_FFFF)),
            ifg_min: k(IFG_MIN as u64),
            ifg_nom: k(IFG as u64),
            ifg_cap: k(IFG_CAP),
        }
    }
}

impl Default for XgmiiTx {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for XgmiiTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, state, sh, carry, cn, ifg, dic, txd, txc, n_frames, n_underrun);
        self.xgmii_txd.next = self.txd.q.val();
        self.xgmii_txc.next = self.txc.q.val();
        self.frames.next = self.n_frames.q.val();
        self.underrun.next = self.n_underrun.q.val();

        // Bytes in the input beat; the carry's 4 bytes with the beat's first 4 behind them.
        self.n.next = bits::<4>(8);
        if self.s_axis_tlast.val() {
            for i in 0..(LANES + 1) {
                if self.s_axis_tkeep.val() == self.keepc[i].val() {
                    self.n.next = self.nc[i].val();
                }
            }
        }
        self.tcat.next = self.n.val() + bits::<4>(4);
        self.cat.next = (self.carry.q.val() & self.low32.val()) | (self.s_axis_tdata.val() << 32);
        self.s_axis_tready.next = (self.state.q.val() == XgmiiTxState::Data)
            | (self.state.q.val() == XgmiiTxState::Discard);
        self.take.next = self.s_axis_tready.val() & self.s_axis_tvalid.val();

        // A start on lane 0 of this word has a gap of `ifg` bytes, on lane 4 `ifg + 4`; the
        // first with at least 9 + DIC goes, and the count moves by the gap's distance from 12.
        self.need.next = self.ifg_min.val() + self.dic.q.val();
        self.g4.next = self.ifg.q.val() + bits::<8>(4);
        self.start0.next = (self.state.q.val() == XgmiiTxState::Idle)
            & self.s_axis_tvalid.val()
            & (self.ifg.q.val() >= self.need.val());
        self.start4.next = (self.state.q.val() == XgmiiTxState::Idle)
            & self.s_axis_tvalid.val()
            & !self.start0.val()
            & (self.g4.val() >= self.need.val());
        self.gsel.next = self.ifg.q.val();
        if self.start4.val() {
            self.gsel.next = self.g4.val();
        }
        if self.gsel.val() < self.ifg_nom.val() {
            self.dic_new.next = self.dic.q.val() + (self.ifg_nom.val() - self.gsel.val());
        } else if (self.gsel.val() - self.ifg_nom.val()) < self.dic.q.val() {
            self.dic_new.next = self.dic.q.val() - (self.gsel.val() - self.ifg_nom.val());
        } else {
            self.dic_new.next = bits::<8>(0);
        }

        self.txd.d.next = self.idle_w.val();
        self.txc.d.next = bits::<8>(0xFF);
        match self.state.q.val() {
            XgmiiTxState::Idle => {
                if self.ifg.q.val() < self.ifg_cap.val() {
                    self.ifg.d.next = self.ifg.q.val() + bits::<8>(8);
                }
                if self.start0.val() {
                    self.txd.d.next = self.pre0.val();
                    self.txc.d.next = bits::<8>(0x01);
                    self.sh.d.next = false;
                    self.dic.d.next = self.dic_new.val();
                    self.state.d.next = XgmiiTxState::Data;
                } else if self.start4.val() {
                    self.txd.d.next = self.pre4.val();
                    self.txc.d.next = bits::<8>(0x1F);
                    self.sh.d.next = true;
                    self.carry.d.next = self.carry4.val();
                    self.dic.d.next = self.dic_new.val();
                    self.state.d.next = XgmiiTxState::Data;
                }
            }
            XgmiiTxState::Data => {
                if !self.s_axis_tvalid.val() {
                    // Underrun: end the frame with errors so no receiver keeps it.
                    self.txd.d.next = self.err_w.val();
                    self.ifg.d.next = bits::<8>(1);
                    self.n_underrun.d.next = self.n_underrun.q.val() + bits::<32>(1);
                    self.state.d.next = XgmiiTxState::Discard;
                } else if !self.sh.q.val() {
                    self.txd.d.next = self.s_axis_tdata.val();
                    self.txc.d.next = bits::<8>(0);
                    if self.s_axis_tlast.val() {
                        self.cn.d.next = bits::<4>(0);
                        self.carry.d.next = bits::<64>(0);
                        self.state.d.next = XgmiiTxState::Term;
                        for i in 0..LANES {
                            if self.n.val() == self.nc[i].val() {
                                self.txd.d.next = (self.s_axis_tdata.val() & self.dmask[i].val())
                                    | self.tword[i].val();
                                self.txc.d.next = self.tctl[i].val();
                                self.ifg.d.next = self.ifg_of[i].val();
                                self.n_frames.d.next = self.n_frames.q.val() + bits::<32>(1);
                                self.state.d.next = XgmiiTxState::Idle;
                            }
                        }
                    }
                } else {
                    self.txd.d.next = self.cat.val();
                    self.txc.d.next = bits::<8>(0);
                    self.carry.d.next = self.s_axis_tdata.val() >> 32;
                    if self.s_axis_tlast.val() {
                        self.cn.d.next = self.n.val() - bits::<4>(4);
                        self.state.d.next = XgmiiTxState::Term;
                        for i in 4..LANES {
                            if self.tcat.val() == self.nc[i].val() {
                                self.txd.d.next =
                                    (self.cat.val() & self.dmask[i].val()) | self.tword[i].val();
                                self.txc.d.next = self.tctl[i].val();
                                self.ifg.d.next = self.ifg_of[i].val();
                                self.n_frames.d.next = self.n_frames.q.val() + bits::<32>(1);
                                self.state.d.next = XgmiiTxState::Idle;
                            }
                        }
                    }
                }
            }
            XgmiiTxState::Term => {
                // The bytes left in the carry (0 to 4), then /T/.
                for i in 0..5 {
                    if self.cn.q.val() == self.nc[i].val() {
                        self.txd.d.next =
                            (self.carry.q.val() & self.dmask[i].val()) | self.tword[i].val();
                        self.txc.d.next = self.tctl[i].val();
                        self.ifg.d.next = self.ifg_of[i].val();
                    }
                }
                self.n_frames.d.next = self.n_frames.q.val() + bits::<32>(1);
                self.state.d.next = XgmiiTxState::Idle;
            }
            XgmiiTxState::Discard => {
                if self.ifg.q.val() < self.ifg_cap.val() {
                    self.ifg.d.next = self.ifg.q.val() + bits::<8>(8);
                }
                if self.take.val() & self.s_axis_tlast.val() {
                    self.state.d.next = XgmiiTxState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = XgmiiTxState::Idle;
            self.ifg.d.next = self.ifg_cap.val();
            self.dic.d.next = bits::<8>(0);
            self.txd.d.next = self.idle_w.val();
            self.txc.d.next = bits::<8>(0xFF);
            self.n_frames.d.next = bits::<32>(0);
            self.n_underrun.d.next = bits::<32>(0);
        }
    }
}
