//! `TlpSkid`: the `Skid` of TLP streams: two entries of (header, data, keep, last), outputs
//! from registers, `s_tready` = second entry empty (a register), one beat per clock in steady
//! state. Blocks that send TLPs end in one so that they compose (docs/ARCHITECTURE.md,
//! "Composition").

use crate::prelude::*;

#[derive(LogicBlock)]
pub struct TlpSkid<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_hdr: Signal<In, Bits<128>>,
    pub s_tdata: Signal<In, Bits<DW>>,
    pub s_tkeep: Signal<In, Bits<KW>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_hdr: Signal<Out, Bits<128>>,
    pub m_tdata: Signal<Out, Bits<DW>>,
    pub m_tkeep: Signal<Out, Bits<KW>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    // Head (h_*) is the output, tail (t_*) the beat the head could not take.
    h_valid: DFF<Bit>,
    h_hdr: DFF<Bits<128>>,
    h_data: DFF<Bits<DW>>,
    h_keep: DFF<Bits<KW>>,
    h_last: DFF<Bit>,
    t_valid: DFF<Bit>,
    t_hdr: DFF<Bits<128>>,
    t_data: DFF<Bits<DW>>,
    t_keep: DFF<Bits<KW>>,
    t_last: DFF<Bit>,
    take: Signal<Local, Bit>,
}

impl<const DW: usize, const KW: usize> TlpSkid<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_hdr: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_hdr: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tlast: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            h_valid: Default::default(),
            h_hdr: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            h_last: Default::default(),
            t_valid: Default::default(),
            t_hdr: Default::default(),
            t_data: Default::default(),
            t_keep: Default::default(),
            t_last: Default::default(),
            take: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for TlpSkid<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for TlpSkid<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, h_valid, h_hdr, h_data, h_keep, h_last, t_valid, t_hdr, t_data, t_keep,
            t_last
        );
        self.m_hdr.next = self.h_hdr.q.val();
        self.m_tdata.next = self.h_data.q.val();
        self.m_tkeep.next = self.h_keep.q.val();
        self.m_tlast.next = self.h_last.q.val();
        self.m_tvalid.next = self.h_valid.q.val();
        self.s_tready.next = !self.t_valid.q.val();
        self.take.next = !self.t_valid.q.val() & self.s_tvalid.val();
        if (self.h_valid.q.val() & self.m_tready.val()) | !self.h_valid.q.val() {
            // The head moves on (or is empty): it refills from the tail, else the input.
            if self.t_valid.q.val() {
                self.h_valid.d.next = true;
                self.h_hdr.d.next = self.t_hdr.q.val();
                self.h_data.d.next = self.t_data.q.val();
                self.h_keep.d.next = self.t_keep.q.val();
                self.h_last.d.next = self.t_last.q.val();
                self.t_valid.d.next = false;
            } else {
                self.h_valid.d.next = self.take.val();
                self.h_hdr.d.next = self.s_hdr.val();
                self.h_data.d.next = self.s_tdata.val();
                self.h_keep.d.next = self.s_tkeep.val();
                self.h_last.d.next = self.s_tlast.val();
            }
        } else if self.take.val() {
            self.t_valid.d.next = true;
            self.t_hdr.d.next = self.s_hdr.val();
            self.t_data.d.next = self.s_tdata.val();
            self.t_keep.d.next = self.s_tkeep.val();
            self.t_last.d.next = self.s_tlast.val();
        }
        if self.rst.val() {
            self.h_valid.d.next = false;
            self.t_valid.d.next = false;
        }
    }
}
