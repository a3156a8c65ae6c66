//! `MacCtrlRx`: MAC control receive, the pause half of 802.3x and 802.1Qbb. It watches the
//! wire beside `MacRx` (a tap: it never stalls or changes the stream), recognises MAC control
//! frames by the rule of `spec::mac_ctrl::parse`, and keeps one pause timer per priority.
//!
//! Ports:
//! - `s_axis_{tdata,tlast,tvalid}`: the wire, frames with FCS (the fields it reads are all in
//!   the first 34 bytes; a frame shorter than 64 bytes is a runt and never acted on).
//! - `good`: the owner's verdict on the frame whose last beat was two cycles before: FCS right
//!   and not a runt (`MacRx` computes both; only a good frame is ever acted on).
//! - `ctrl`: in the same cycle, whether that frame is a MAC control frame (EtherType 0x8808).
//!   A good one is consumed: `MacRx` drops it without counting it anywhere else.
//! - `pcp`: in the same cycle, the frame's priority: its VLAN PCP, 0 when untagged (what
//!   `MacRx` accounts its buffer by).
//! - `paused`: bit p set while priority p is paused (the transmit gate's input).
//! - counters: `pause_rx` (802.3x PAUSE frames acted on), `pfc_rx` (eight 32-bit counters,
//!   priority p at bits 32p: PFC frames acted on with bit p of the class-enable vector set),
//!   `paused_cycles` (same packing: clock cycles priority p was paused), and the malformed
//!   control frames dropped, by reason: `bad_dst`, `bad_opcode`, `bad_reserved` (the reasons
//!   of `spec::mac_ctrl::Malformed`; `Short` frames are runts, counted by `MacRx`).
//!
//! Timers count bit times, not cycles: a pause of q quanta loads q x 512 and each clock takes
//! `bits_per_cycle` off (64 at 10 Gb/s and 156.25 MHz, 400 at 100 Gb/s and 250 MHz, where a
//! quantum is 1.28 cycles). A priority is paused while its timer is not zero, so a pause lasts
//! ceil(q x 512 / bits_per_cycle) cycles from the cycle after the verdict, never less than q
//! quanta; a time of 0 (XON) clears the timer at once. 802.3x PAUSE loads all eight timers.
//!
//! ```text
//!  wire --> [image: the first 64 bytes, lane order] --last beat--> p1: decode the image
//!       --> p2: class, enable vector, eight times in bit times --good--> timers, counters
//! ```

use crate::host::k;
use crate::prelude::*;
use ferroce_spec::headers::{ETH, ETHERTYPE_VLAN, ETH_HDR_LEN};
use ferroce_spec::mac_ctrl::{
    ETHERTYPE_MAC_CTRL, MAC_CTRL_DST, OPCODE_PAUSE, OPCODE_PFC, PAUSE, PFC, PRIORITIES,
    QUANTUM_BITS,
};

/// Bits of the frame kept: 64 bytes (one 512-bit beat), more than the 34 a PFC frame's fields
/// take (synthesis trims the bits never read).
const IMG: usize = 512;
const P: usize = PRIORITIES;
/// Eight 32-bit counters side by side.
pub const PRIO_COUNTERS_W: usize = 32 * P;

/// Bits the line carries per core clock in a configuration with datapath width `dw`: 64 at
/// 10 Gb/s on the 156.25 MHz 64-bit datapath, 400 at 100 Gb/s on the 250 MHz 512-bit one.
pub fn line_bits_per_cycle(dw: usize) -> u64 {
    match dw {
        512 => 400,
        w => w as u64,
    }
}

#[derive(LogicBlock)]
pub struct MacCtrlRx<const DW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub good: Signal<In, Bit>,
    pub ctrl: Signal<Out, Bit>,
    pub pcp: Signal<Out, Bits<3>>,
    pub paused: Signal<Out, Bits<8>>,
    pub pause_rx: Signal<Out, Bits<32>>,
    pub pfc_rx: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub paused_cycles: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub bad_dst: Signal<Out, Bits<32>>,
    pub bad_opcode: Signal<Out, Bits<32>>,
    pub bad_reserved: Signal<Out, Bits<32>>,
    img: DFF<Bits<IMG>>,
    bi: DFF<Bits<8>>,
    p1_valid: DFF<Bit>,
    p2_valid: DFF<Bit>,
    p2_ctrl: DFF<Bit>,
    p2_dst_ok: DFF<Bit>,
    p2_pause: DFF<Bit>,
    p2_pfc: DFF<Bit>,
    p2_res_ok: DFF<Bit>,
    p2_enable: DFF<Bits<8>>,
    p2_pcp: DFF<Bits<3>>,
    p2_times: Vec<DFF<Bits<32>>>,
    left: Vec<DFF<Bits<32>>>,
    n_pfc: Vec<DFF<Bits<32>>>,
    n_cyc: Vec<DFF<Bits<32>>>,
    n_pause: DFF<Bits<32>>,
    n_dst: DFF<Bits<32>>,
    n_op: DFF<Bits<32>>,
    n_res: DFF<Bits<32>>,
    // Locals.
    beat: Signal<Local, Bits<IMG>>,
    opcode: Signal<Local, Bits<16>>,
    t_hi: Signal<Local, Bits<8>>,
    t_lo: Signal<Local, Bits<8>>,
    act: Signal<Local, Bit>,
    pv: Signal<Local, Bits<8>>,
    c32: Signal<Local, Bits<32>>,
    pack_pfc: Signal<Local, Bits<PRIO_COUNTERS_W>>,
    pack_cyc: Signal<Local, Bits<PRIO_COUNTERS_W>>,
    // Constants: the image's beat positions, then field positions (bit offsets in lane order).
    bc: Vec<Constant<Bits<8>>>,
    ipos: Vec<Constant<Bits<16>>>,
    nb: Constant<Bits<8>>,
    at_dst: Constant<Bits<9>>,
    at_type: Constant<Bits<9>>,
    at_op: Constant<Bits<9>>,
    at_res: Constant<Bits<9>>,
    at_en: Constant<Bits<9>>,
    at_ptime: Constant<Bits<9>>,
    at_ptime_lo: Constant<Bits<9>>,
    at_pcp: Constant<Bits<9>>,
    vlan_le: Constant<Bits<16>>,
    at_hi: Vec<Constant<Bits<9>>>,
    at_lo: Vec<Constant<Bits<9>>>,
    dst_le: Constant<Bits<48>>,
    type_le: Constant<Bits<16>>,
    op_pause_le: Constant<Bits<16>>,
    op_pfc_le: Constant<Bits<16>>,
    sh_hi: Constant<Bits<8>>,
    sh_lo: Constant<Bits<8>>,
    sh32: Vec<Constant<Bits<16>>>,
    onehot: Vec<Constant<Bits<8>>>,
    bpc: Constant<Bits<32>>,
}

/// A 16-bit big-endian value as it reads in lane order (first byte in the low bits).
fn le16(v: u16) -> u64 {
    u64::from(v.swap_bytes())
}

impl<const DW: usize> MacCtrlRx<DW> {
    /// `bits_per_cycle`: line bits per core clock ([`line_bits_per_cycle`]).
    pub fn new(bits_per_cycle: u64) -> Self {
        assert!(
            DW.is_multiple_of(64) && DW >= 64,
            "a whole number of 64-bit words"
        );
        assert!(bits_per_cycle > 0 && bits_per_cycle < 1 << 20);
        let nb = IMG.div_ceil(DW);
        let bit = |byte: usize| k::<9>((8 * byte) as u64);
        let pfc_at = |name: &str| ETH_HDR_LEN + PFC.field(name).byte();
        let dst = ETH.field("dst").byte();
        assert!(pfc_at("time7") + 2 <= IMG / 8);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            good: Default::default(),
            ctrl: Default::default(),
            pcp: Default::default(),
            paused: Default::default(),
            pause_rx: Default::default(),
            pfc_rx: Default::default(),
            paused_cycles: Default::default(),
            bad_dst: Default::default(),
            bad_opcode: Default::default(),
            bad_reserved: Default::default(),
            img: Default::default(),
            bi: Default::default(),
            p1_valid: Default::default(),
            p2_valid: Default::default(),
            p2_ctrl: Default::default(),
            p2_dst_ok: Default::default(),
            p2_pause: Default::default(),
            p2_pfc: Default::default(),
            p2_res_ok: Default::default(),
            p2_enable: Default::default(),
            p2_pcp: Default::default(),
            p2_times: (0..P).map(|_| Default::default()).collect(),
            left: (0..P).map(|_| Default::default()).collect(),
            n_pfc: (0..P).map(|_| Default::default()).collect(),
            n_cyc: (0..P).map(|_| Default::default()).collect(),
            n_pause: Default::default(),
            n_dst: Default::default(),
            n_op: Default::default(),
            n_res: Default::default(),
            beat: Default::default(),
            opcode: Default::default(),
            t_hi: Default::default(),
            t_lo: Default::default(),
            act: Default::default(),
            pv: Default::default(),
            c32: Default::default(),
            pack_pfc: Default::default(),
            pack_cyc: Default::default(),
            bc: (0..nb).map(|b| k(b as u64)).collect(),
            ipos: (0..nb).map(|b| k((b * DW) as u64)).collect(),
            nb: k(nb as u64),
            at_dst: bit(dst),
            at_type: bit(ETH.field("ethertype").byte()),
            at_op: bit(pfc_at("opcode")),
            at_res: bit(pfc_at("reserved")),
            at_en: bit(pfc_at("class_enable")),
            at_ptime: bit(ETH_HDR_LEN + PAUSE.field("time").byte()),
            at_ptime_lo: bit(ETH_HDR_LEN + PAUSE.field("time").byte() + 1),
            // PCP: the top three bits of the byte after a VLAN TPID.
            at_pcp: k::<9>((8 * (ETH.field("ethertype").byte() + 2) + 5) as u64),
            vlan_le: k(le16(ETHERTYPE_VLAN)),
            at_hi: (0..P).map(|p| bit(pfc_at(&format!("time{p}")))).collect(),
            at_lo: (0..P)
                .map(|p| bit(pfc_at(&format!("time{p}")) + 1))
                .collect(),
            dst_le: k(MAC_CTRL_DST
                .iter()
                .rev()
                .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))),
            type_le: k(le16(ETHERTYPE_MAC_CTRL)),
            op_pause_le: k(le16(OPCODE_PAUSE)),
            op_pfc_le: k(le16(OPCODE_PFC)),
            sh_hi: k(u64::from(8 + QUANTUM_BITS.trailing_zeros())),
            sh_lo: k(u64::from(QUANTUM_BITS.trailing_zeros())),
            sh32: (0..P).map(|p| k((32 * p) as u64)).collect(),
            onehot: (0..P).map(|p| k(1 << p)).collect(),
            bpc: k(bits_per_cycle),
        }
    }
}

impl<const DW: usize> Logic for MacCtrlRx<DW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, img, bi, p1_valid, p2_valid, p2_ctrl, p2_dst_ok, p2_pause, p2_pfc,
            p2_res_ok, p2_enable, p2_pcp, n_pause, n_dst, n_op, n_res
        );
        for p in 0..P {
            self.p2_times[p].clock.next = self.clk.val();
            self.left[p].clock.next = self.clk.val();
            self.n_pfc[p].clock.next = self.clk.val();
            self.n_cyc[p].clock.next = self.clk.val();
            self.p2_times[p].d.next = self.p2_times[p].q.val();
            self.left[p].d.next = self.left[p].q.val();
            self.n_pfc[p].d.next = self.n_pfc[p].q.val();
            self.n_cyc[p].d.next = self.n_cyc[p].q.val();
        }

        // The image: the frame's first beats in lane order (first byte in the low bits).
        self.beat.next = bit_cast::<IMG, DW>(self.s_axis_tdata.val());
        if self.s_axis_tvalid.val() {
            for b in 0..self.bc.len() {
                if self.bi.q.val() == self.bc[b].val() {
                    self.img.d.next = self.img.q.val() | (self.beat.val() << self.ipos[b].val());
                }
            }
            if self.bi.q.val() == bits::<8>(0) {
                self.img.d.next = self.beat.val();
            }
            if self.bi.q.val() != self.nb.val() {
                self.bi.d.next = self.bi.q.val() + bits::<8>(1);
            }
            if self.s_axis_tlast.val() {
                self.bi.d.next = bits::<8>(0);
            }
        }
        self.p1_valid.d.next = self.s_axis_tvalid.val() & self.s_axis_tlast.val();

        // p1: decode the finished image (the next frame's first beat lands a cycle later).
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_ctrl.d.next =
            self.img.q.val().get_bits::<16>(self.at_type.val().index()) == self.type_le.val();
        self.p2_dst_ok.d.next =
            self.img.q.val().get_bits::<48>(self.at_dst.val().index()) == self.dst_le.val();
        self.opcode.next = self.img.q.val().get_bits::<16>(self.at_op.val().index());
        self.p2_pause.d.next = self.opcode.val() == self.op_pause_le.val();
        self.p2_pfc.d.next = self.opcode.val() == self.op_pfc_le.val();
        self.p2_res_ok.d.next =
            self.img.q.val().get_bits::<8>(self.at_res.val().index()) == bits::<8>(0);
        self.p2_enable.d.next = self.img.q.val().get_bits::<8>(self.at_en.val().index());
        self.p2_pcp.d.next = bits::<3>(0);
        if self.img.q.val().get_bits::<16>(self.at_type.val().index()) == self.vlan_le.val() {
            self.p2_pcp.d.next = self.img.q.val().get_bits::<3>(self.at_pcp.val().index());
        }
        if self.opcode.val() == self.op_pause_le.val() {
            self.p2_enable.d.next = bits::<8>(0xff);
        }
        for p in 0..P {
            self.t_hi.next = self.img.q.val().get_bits::<8>(self.at_hi[p].val().index());
            self.t_lo.next = self.img.q.val().get_bits::<8>(self.at_lo[p].val().index());
            if self.opcode.val() == self.op_pause_le.val() {
                self.t_hi.next = self.img.q.val().get_bits::<8>(self.at_ptime.val().index());
                self.t_lo.next = self
                    .img
                    .q
                    .val()
                    .get_bits::<8>(self.at_ptime_lo.val().index());
            }
            self.p2_times[p].d.next = (bit_cast::<32, 8>(self.t_hi.val()) << self.sh_hi.val())
                | (bit_cast::<32, 8>(self.t_lo.val()) << self.sh_lo.val());
        }

        // p2: act on a good control frame; count the malformed ones.
        self.ctrl.next = self.p2_ctrl.q.val();
        self.pcp.next = self.p2_pcp.q.val();
        self.act.next = self.p2_valid.q.val()
            & self.good.val()
            & self.p2_ctrl.q.val()
            & self.p2_dst_ok.q.val()
            & (self.p2_pause.q.val() | (self.p2_pfc.q.val() & self.p2_res_ok.q.val()));
        if self.p2_valid.q.val() & self.good.val() & self.p2_ctrl.q.val() {
            if !self.p2_dst_ok.q.val() {
                self.n_dst.d.next = self.n_dst.q.val() + bits::<32>(1);
            } else if !(self.p2_pause.q.val() | self.p2_pfc.q.val()) {
                self.n_op.d.next = self.n_op.q.val() + bits::<32>(1);
            } else if self.p2_pfc.q.val() & !self.p2_res_ok.q.val() {
                self.n_res.d.next = self.n_res.q.val() + bits::<32>(1);
            } else if self.p2_pause.q.val() {
                self.n_pause.d.next = self.n_pause.q.val() + bits::<32>(1);
            }
        }

        // Timers in bit times; paused while not zero.
        self.pv.next = bits::<8>(0);
        self.pack_pfc.next = bits::<PRIO_COUNTERS_W>(0);
        self.pack_cyc.next = bits::<PRIO_COUNTERS_W>(0);
        for p in 0..P {
            if self.left[p].q.val() != bits::<32>(0) {
                self.pv.next = self.pv.val() | self.onehot[p].val();
                self.n_cyc[p].d.next = self.n_cyc[p].q.val() + bits::<32>(1);
            }
            if self.left[p].q.val() > self.bpc.val() {
                self.left[p].d.next = self.left[p].q.val() - self.bpc.val();
            } else {
                self.left[p].d.next = bits::<32>(0);
            }
            if self.act.val() & ((self.p2_enable.q.val() & self.onehot[p].val()) != bits::<8>(0)) {
                self.left[p].d.next = self.p2_times[p].q.val();
                if self.p2_pfc.q.val() {
                    self.n_pfc[p].d.next = self.n_pfc[p].q.val() + bits::<32>(1);
                }
            }
            self.c32.next = self.n_pfc[p].q.val();
            self.pack_pfc.next = self.pack_pfc.val()
                | (bit_cast::<PRIO_COUNTERS_W, 32>(self.c32.val()) << self.sh32[p].val());
            self.c32.next = self.n_cyc[p].q.val();
            self.pack_cyc.next = self.pack_cyc.val()
                | (bit_cast::<PRIO_COUNTERS_W, 32>(self.c32.val()) << self.sh32[p].val());
        }
        self.paused.next = self.pv.val();
        self.pfc_rx.next = self.pack_pfc.val();
        self.paused_cycles.next = self.pack_cyc.val();
        self.pause_rx.next = self.n_pause.q.val();
        self.bad_dst.next = self.n_dst.q.val();
        self.bad_opcode.next = self.n_op.q.val();
        self.bad_reserved.next = self.n_res.q.val();

        if self.rst.val() {
            self.bi.d.next = bits::<8>(0);
            self.p1_valid.d.next = false;
            self.p2_valid.d.next = false;
            self.n_pause.d.next = bits::<32>(0);
            self.n_dst.d.next = bits::<32>(0);
            self.n_op.d.next = bits::<32>(0);
            self.n_res.d.next = bits::<32>(0);
            for p in 0..P {
                self.left[p].d.next = bits::<32>(0);
                self.n_pfc[p].d.next = bits::<32>(0);
                self.n_cyc[p].d.next = bits::<32>(0);
            }
        }
    }
}
