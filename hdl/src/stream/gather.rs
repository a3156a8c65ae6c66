//! `Gather`: joins consecutive packets of a stream into one. A work request's scatter/gather
//! list makes one wire packet out of the bytes of several local buffers: the DMA engine reads
//! each piece as a packet of its own, first byte in lane 0, and this block packs them end to
//! end, so a piece that ends mid-beat is followed at once by the next piece's first byte.
//!
//! Ports:
//! - `s_t{data,keep,last,valid,ready}`: pieces, each following the stream convention (full
//!   beats, then a last beat with `tkeep` contiguous from lane 0; an empty last beat is a piece
//!   of no bytes). `s_tjoin`, read with a last beat: the next piece continues this packet.
//!   `s_tuser`, read with a last beat: the piece's bytes are bad (its read failed).
//! - `m_t{data,keep,last,valid,ready}`: the joined packets, following the convention (a packet
//!   of no bytes is one beat with `tkeep` 0; one whose last piece is empty may end with such a
//!   beat). `m_tuser`, with a packet's last beat: one of its pieces was bad (the packet must
//!   not be sent). Outputs and `s_tready` come from registers (a
//!   `Skid`), so the block composes by wiring.
//!
//! How: `acc` holds the `an` bytes (fewer than a beat) of the packet not yet sent. An incoming
//! beat of `c` bytes is rotated by `an` lanes: its first `KW - an` bytes complete `acc` into a
//! beat, the rest (the rotation's low lanes) start the next. When a packet's last piece ends
//! with more than a beat in hand, the tail goes out in the next cycle (one cycle of
//! back-pressure per packet at most). Otherwise one beat per clock in and out.
//!
//! The rotation is one mux level per lane, `KW` inputs wide: 8 at 64 bits. The input beat and
//! its byte count are registered first (one cycle of latency), and `an` is kept one-hot beside
//! its binary value, so the rotation selects straight from registers: 169 MHz on ECP5, held
//! to 156.25 by the timing gate. The 512-bit configuration (64 inputs per lane at 250 MHz)
//! registers the rotated beat before the merge.
//!
//! Lanes past `tkeep` on a last beat are zero. Contract: the bytes of a beat are its lanes up to the highest set bit of `tkeep` only on a
//! last beat; a last beat whose `tkeep` is not contiguous from lane 0 counts as no bytes (the
//! NIC's own DMA engine is the only source, and it never sends one).

use crate::host::k;
use crate::prelude::*;
use crate::stream::{data_of_count, keep_of_count, ones, Skid};

#[derive(LogicBlock)]
pub struct Gather<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<DW>>,
    pub s_tkeep: Signal<In, Bits<KW>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tjoin: Signal<In, Bit>,
    pub s_tuser: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_tdata: Signal<Out, Bits<DW>>,
    pub m_tkeep: Signal<Out, Bits<KW>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tuser: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    out: Skid<DW, KW>,
    acc: DFF<Bits<DW>>,
    an: DFF<Bits<8>>,
    p_valid: DFF<Bit>,
    p_data: DFF<Bits<DW>>,
    p_n: DFF<Bits<8>>,
    p_user: DFF<Bit>,
    /// A piece of the packet in hand was bad.
    bad: DFF<Bit>,
    bad_now: Signal<Local, Bit>,
    i_valid: DFF<Bit>,
    an_oh: DFF<Bits<KW>>,
    rest_oh: Signal<Local, Bits<KW>>,
    tot_oh: Signal<Local, Bits<KW>>,
    one_kw: Constant<Bits<KW>>,
    i_data: DFF<Bits<DW>>,
    i_c: DFF<Bits<8>>,
    i_last: DFF<Bit>,
    i_join: DFF<Bit>,
    i_user: DFF<Bit>,
    take: Signal<Local, Bit>,
    c: Signal<Local, Bits<8>>,
    tot: Signal<Local, Bits<8>>,
    rest: Signal<Local, Bits<8>>,
    fin: Signal<Local, Bit>,
    rot: Signal<Local, Bits<DW>>,
    low: Signal<Local, Bits<DW>>,
    comb: Signal<Local, Bits<DW>>,
    ovf: Signal<Local, Bits<DW>>,
    tot_keep: Signal<Local, Bits<KW>>,
    tot_mask: Signal<Local, Bits<DW>>,
    p_keep: Signal<Local, Bits<KW>>,
    p_mask: Signal<Local, Bits<DW>>,
    keepc: Vec<Constant<Bits<KW>>>,
    datac: Vec<Constant<Bits<DW>>>,
    cnt: Vec<Constant<Bits<8>>>,
    sh_l: Vec<Constant<Bits<16>>>,
    sh_r: Vec<Constant<Bits<16>>>,
    kw: Constant<Bits<8>>,
    full: Constant<Bits<KW>>,
    zero_kw: Constant<Bits<KW>>,
    sh_a: Vec<Constant<Bits<8>>>,
}

impl<const DW: usize, const KW: usize> Gather<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(KW < 128, "byte counts are 8 bits");
        let k8 = |v: usize| k::<8>(v as u64);
        let k16 = |v: usize| k::<16>(v as u64);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tjoin: Default::default(),
            s_tuser: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tlast: Default::default(),
            m_tuser: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            out: Skid::new(),
            acc: Default::default(),
            an: Default::default(),
            p_valid: Default::default(),
            p_data: Default::default(),
            p_n: Default::default(),
            p_user: Default::default(),
            bad: Default::default(),
            bad_now: Default::default(),
            i_valid: Default::default(),
            an_oh: Default::default(),
            rest_oh: Default::default(),
            tot_oh: Default::default(),
            one_kw: k(1),
            i_data: Default::default(),
            i_c: Default::default(),
            i_last: Default::default(),
            i_join: Default::default(),
            i_user: Default::default(),
            take: Default::default(),
            c: Default::default(),
            tot: Default::default(),
            rest: Default::default(),
            fin: Default::default(),
            rot: Default::default(),
            low: Default::default(),
            comb: Default::default(),
            ovf: Default::default(),
            tot_keep: Default::default(),
            tot_mask: Default::default(),
            p_keep: Default::default(),
            p_mask: Default::default(),
            keepc: keep_of_count::<KW>(),
            datac: data_of_count::<DW>(),
            cnt: (0..=KW).map(k8).collect(),
            sh_l: (0..KW).map(|a| k16(8 * a)).collect(),
            sh_r: (0..KW).map(|a| k16(DW - 8 * a)).collect(),
            kw: k8(KW),
            full: ones::<KW>(),
            zero_kw: k(0),
            sh_a: (0..KW).map(k8).collect(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for Gather<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for Gather<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, acc, an, an_oh, p_valid, p_data, p_n, p_user, bad, i_valid, i_data, i_c,
            i_last, i_join, i_user
        );
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.m_tdata.next = self.out.m_axis_tdata.val();
        self.m_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_tlast.next = self.out.m_axis_tlast.val();
        self.m_tuser.next = self.out.m_axis_tuser.val();
        self.m_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_tready.val();
        // The input stage: a beat and its byte count, registered.
        self.take.next =
            self.i_valid.q.val() & self.out.s_axis_tready.val() & !self.p_valid.q.val();
        self.s_tready.next =
            !self.i_valid.q.val() | (self.out.s_axis_tready.val() & !self.p_valid.q.val());
        if self.take.val() {
            self.i_valid.d.next = false;
        }

        // Bytes of the incoming beat; the packet's bytes in hand after the staged one.
        self.c.next = self.kw.val();
        if self.s_tlast.val() {
            self.c.next = bits::<8>(0);
            for n in 0..KW {
                if self.s_tkeep.val() == self.keepc[n + 1].val() {
                    self.c.next = self.cnt[n + 1].val();
                }
            }
        }
        if self.s_tvalid.val()
            & (!self.i_valid.q.val() | (self.out.s_axis_tready.val() & !self.p_valid.q.val()))
        {
            self.i_valid.d.next = true;
            self.i_data.d.next = self.s_tdata.val();
            self.i_c.d.next = self.c.val();
            self.i_last.d.next = self.s_tlast.val();
            self.i_join.d.next = self.s_tjoin.val();
            self.i_user.d.next = self.s_tlast.val() & self.s_tuser.val();
        }
        self.tot.next = self.an.q.val() + self.i_c.q.val();
        self.rest.next = self.tot.val() - self.kw.val();
        self.fin.next = self.i_last.q.val() & !self.i_join.q.val();
        // The packet is bad if any piece so far, this one included, was.
        self.bad_now.next = self.bad.q.val() | self.i_user.q.val();
        // `an` is kept one-hot too (bit a: `an` == a), so the rotation selects from a register.
        self.rest_oh.next = self.zero_kw.val();
        self.tot_oh.next = self.zero_kw.val();
        for a in 0..KW {
            if self.rest.val() == self.cnt[a].val() {
                self.rest_oh.next = self.one_kw.val() << self.sh_a[a].val();
            }
            if self.tot.val() == self.cnt[a].val() {
                self.tot_oh.next = self.one_kw.val() << self.sh_a[a].val();
            }
        }
        // The beat rotated by `an` lanes; `low` selects lanes below `an`.
        self.rot.next = self.i_data.q.val();
        self.low.next = self.datac[0].val();
        for a in 1..KW {
            if (self.an_oh.q.val() & (self.one_kw.val() << self.sh_a[a].val()))
                != self.zero_kw.val()
            {
                self.rot.next = (self.i_data.q.val() << self.sh_l[a].val())
                    | (self.i_data.q.val() >> self.sh_r[a].val());
                self.low.next = self.datac[a].val();
            }
        }
        self.comb.next = (self.acc.q.val() & self.low.val()) | (self.rot.val() & !self.low.val());
        self.ovf.next = self.rot.val() & self.low.val();
        self.tot_keep.next = self.keepc[0].val();
        self.tot_mask.next = self.datac[0].val();
        self.p_keep.next = self.keepc[0].val();
        self.p_mask.next = self.datac[0].val();
        for n in 0..KW {
            if self.tot.val() == self.cnt[n + 1].val() {
                self.tot_keep.next = self.keepc[n + 1].val();
                self.tot_mask.next = self.datac[n + 1].val();
            }
            if self.p_n.q.val() == self.cnt[n + 1].val() {
                self.p_keep.next = self.keepc[n + 1].val();
                self.p_mask.next = self.datac[n + 1].val();
            }
        }

        self.out.s_axis_tdata.next = self.comb.val();
        self.out.s_axis_tkeep.next = self.full.val();
        self.out.s_axis_tlast.next = false;
        self.out.s_axis_tuser.next = false;
        self.out.s_axis_tvalid.next = false;
        if self.p_valid.q.val() {
            // The tail of a packet that ended with more than a beat in hand.
            self.out.s_axis_tdata.next = self.p_data.q.val() & self.p_mask.val();
            self.out.s_axis_tkeep.next = self.p_keep.val();
            self.out.s_axis_tlast.next = true;
            self.out.s_axis_tuser.next = self.p_user.q.val();
            self.out.s_axis_tvalid.next = true;
            if self.out.s_axis_tready.val() {
                self.p_valid.d.next = false;
            }
        } else if self.take.val() {
            self.bad.d.next = self.bad_now.val() & !self.fin.val();
            if self.tot.val() >= self.kw.val() {
                self.out.s_axis_tvalid.next = true;
                self.out.s_axis_tlast.next = self.fin.val() & (self.rest.val() == bits::<8>(0));
                self.out.s_axis_tuser.next =
                    self.bad_now.val() & self.fin.val() & (self.rest.val() == bits::<8>(0));
                self.acc.d.next = self.ovf.val();
                self.an.d.next = self.rest.val();
                self.an_oh.d.next = self.rest_oh.val();
                if self.fin.val() {
                    self.an.d.next = bits::<8>(0);
                    self.an_oh.d.next = self.one_kw.val();
                    if self.rest.val() != bits::<8>(0) {
                        self.p_valid.d.next = true;
                        self.p_data.d.next = self.ovf.val();
                        self.p_n.d.next = self.rest.val();
                        self.p_user.d.next = self.bad_now.val();
                    }
                }
            } else if self.fin.val() {
                self.out.s_axis_tvalid.next = true;
                self.out.s_axis_tlast.next = true;
                self.out.s_axis_tuser.next = self.bad_now.val();
                self.out.s_axis_tkeep.next = self.tot_keep.val();
                self.out.s_axis_tdata.next = self.comb.val() & self.tot_mask.val();
                self.an.d.next = bits::<8>(0);
                self.an_oh.d.next = self.one_kw.val();
            } else {
                self.acc.d.next = self.comb.val();
                self.an.d.next = self.tot.val();
                self.an_oh.d.next = self.tot_oh.val();
            }
        }
        if self.rst.val() {
            self.i_valid.d.next = false;
            self.an.d.next = bits::<8>(0);
            self.an_oh.d.next = self.one_kw.val();
            self.p_valid.d.next = false;
            self.bad.d.next = false;
        }
    }
}
