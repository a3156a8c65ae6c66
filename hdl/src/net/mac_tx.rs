//! `MacTx`: the transmit side of the MAC at the frame level: Ethernet padding to 60 bytes
//! (`Pad`), then the FCS (a `Crc32` tap and a `TailWriter` appending it, least significant
//! byte first). The interframe gap, preamble and XGMII encoding, and PFC/pause gating, come
//! with the MAC issue; until then the simulator's link accounts for the gap and preamble.
//!
//! Ports: `s_axis_*` a frame without FCS (any length, `tkeep` by the stream rule); `m_axis_*`
//! the padded frame with its FCS; `bad_keep`: frames whose `tkeep` broke the stream rule (the
//! CRC tap's flag), sent anyway with the FCS of what was sent.

use crate::crc::Crc32;
use crate::net::{Pad, TailWriter};
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct MacTx<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub bad_keep: Signal<Out, Bits<32>>,
    pad: Pad<DW, KW>,
    fcs: Crc32<DW, KW>,
    fcs_wr: TailWriter<DW, KW>,
    n_bad: DFF<Bits<32>>,
}

impl<const DW: usize, const KW: usize> MacTx<DW, KW> {
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            bad_keep: Default::default(),
            pad: Pad::new(),
            fcs: Crc32::new(),
            fcs_wr: TailWriter::new(true),
            n_bad: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for MacTx<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for MacTx<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, n_bad);
        self.pad.clk.next = self.clk.val();
        self.pad.rst.next = self.rst.val();
        self.fcs.clk.next = self.clk.val();
        self.fcs.rst.next = self.rst.val();
        self.fcs_wr.clk.next = self.clk.val();
        self.fcs_wr.rst.next = self.rst.val();
        self.bad_keep.next = self.n_bad.q.val();
        if self.fcs.m_crc_tvalid.val() & self.fcs.m_crc_tuser.val() {
            self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
        }
        if self.rst.val() {
            self.n_bad.d.next = bits::<32>(0);
        }
        self.pad.s_axis_tdata.next = self.s_axis_tdata.val();
        self.pad.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.pad.s_axis_tlast.next = self.s_axis_tlast.val();
        self.pad.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.pad.s_axis_tready.val();
        self.fcs.s_axis_tdata.next = self.pad.m_axis_tdata.val();
        self.fcs.s_axis_tkeep.next = self.pad.m_axis_tkeep.val();
        self.fcs.s_axis_tlast.next = self.pad.m_axis_tlast.val();
        self.fcs.s_axis_tvalid.next = self.pad.m_axis_tvalid.val();
        self.fcs.s_axis_tready.next = self.fcs_wr.s_axis_tready.val();
        self.fcs_wr.s_axis_tdata.next = self.pad.m_axis_tdata.val();
        self.fcs_wr.s_axis_tkeep.next = self.pad.m_axis_tkeep.val();
        self.fcs_wr.s_axis_tlast.next = self.pad.m_axis_tlast.val();
        self.fcs_wr.s_axis_tvalid.next = self.pad.m_axis_tvalid.val();
        self.pad.m_axis_tready.next = self.fcs_wr.s_axis_tready.val();
        self.fcs_wr.s_val_tdata.next = self.fcs.m_crc_tdata.val();
        self.fcs_wr.s_val_tvalid.next = self.fcs.m_crc_tvalid.val();
        self.m_axis_tdata.next = self.fcs_wr.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.fcs_wr.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.fcs_wr.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.fcs_wr.m_axis_tvalid.val();
        self.fcs_wr.m_axis_tready.next = self.m_axis_tready.val();
    }
}
