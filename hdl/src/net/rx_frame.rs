//! `RxFrame`: the receive path from the wire to the transport: `MacRx` (store and forward,
//! FCS and ICRC checked, bad frames dropped) -> `RxParser` (record + realigned payload).
//! Wiring only; the parser's `s_axis_tready` depends on its registers, `MacRx`'s output is a
//! `Skid`, so the two compose (docs/ARCHITECTURE.md, "Composition").
//!
//! Ports: `s_axis_*` the wire (FCS included, `tuser` a PHY code error, no `tready`: the wire
//! does not wait);
//! `local_mac`, `local_ip`, `m_meta_*`, `m_axis_*` as `RxParser`. Counters of dropped frames,
//! first those of `MacRx` (`code_err`, `fcs_err`, `runt`, `too_long`, `not_roce`,
//! `frame_len_err` (its `bad_len`),
//! `icrc_err`, `overflow`, `self_check`), then those of the parser (`accepted`,
//! `unsupported`, `bad_csum`, `bad_mac`, `bad_ip`, `bad_opcode`, `bad_len`, `truncated`).
//! A frame is counted once, by the first stage that drops it. MAC control: `paused` and the
//! counters of `MacRx`'s `MacCtrlRx` (`pause_rx`, `pfc_rx`, `paused_cycles`, `ctrl_bad_*`);
//! PFC generation's `xoff_bytes`, `xon_bytes` in and `xoff` out, and `pfc_enable` in (the
//! lossy priorities' admission limit) (`MacRx`'s).

use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::rx_parser::RX_META_W;
use crate::net::{MacRx, RxParser};
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct RxFrame<
    const DW: usize,
    const KW: usize,
    const SW: usize,
    const AW: usize,
    const IW: usize,
> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,
    pub m_meta_tdata: Signal<Out, Bits<RX_META_W>>,
    pub m_meta_tvalid: Signal<Out, Bit>,
    pub m_meta_tready: Signal<In, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub fcs_err: Signal<Out, Bits<32>>,
    pub code_err: Signal<Out, Bits<32>>,
    pub too_long: Signal<Out, Bits<32>>,
    pub runt: Signal<Out, Bits<32>>,
    pub not_roce: Signal<Out, Bits<32>>,
    pub frame_len_err: Signal<Out, Bits<32>>,
    pub icrc_err: Signal<Out, Bits<32>>,
    pub overflow: Signal<Out, Bits<32>>,
    pub self_check: Signal<Out, Bits<32>>,
    pub accepted: Signal<Out, Bits<32>>,
    pub unsupported: Signal<Out, Bits<32>>,
    pub bad_csum: Signal<Out, Bits<32>>,
    pub bad_mac: Signal<Out, Bits<32>>,
    pub bad_ip: Signal<Out, Bits<32>>,
    pub bad_opcode: Signal<Out, Bits<32>>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub truncated: Signal<Out, Bits<32>>,
    pub paused: Signal<Out, Bits<8>>,
    pub pause_rx: Signal<Out, Bits<32>>,
    pub pfc_rx: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub paused_cycles: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub ctrl_bad_dst: Signal<Out, Bits<32>>,
    pub ctrl_bad_opcode: Signal<Out, Bits<32>>,
    pub ctrl_bad_reserved: Signal<Out, Bits<32>>,
    pub xoff_bytes: Signal<In, Bits<16>>,
    pub xon_bytes: Signal<In, Bits<16>>,
    pub pfc_enable: Signal<In, Bits<8>>,
    pub xoff: Signal<Out, Bits<8>>,
    mac: MacRx<DW, KW, SW, AW>,
    parser: RxParser<DW, KW, IW>,
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize, const IW: usize>
    RxFrame<DW, KW, SW, AW, IW>
{
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            m_meta_tdata: Default::default(),
            m_meta_tvalid: Default::default(),
            m_meta_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            fcs_err: Default::default(),
            code_err: Default::default(),
            too_long: Default::default(),
            runt: Default::default(),
            not_roce: Default::default(),
            frame_len_err: Default::default(),
            icrc_err: Default::default(),
            overflow: Default::default(),
            self_check: Default::default(),
            accepted: Default::default(),
            unsupported: Default::default(),
            bad_csum: Default::default(),
            bad_mac: Default::default(),
            bad_ip: Default::default(),
            bad_opcode: Default::default(),
            bad_len: Default::default(),
            truncated: Default::default(),
            paused: Default::default(),
            pause_rx: Default::default(),
            pfc_rx: Default::default(),
            paused_cycles: Default::default(),
            ctrl_bad_dst: Default::default(),
            ctrl_bad_opcode: Default::default(),
            ctrl_bad_reserved: Default::default(),
            xoff_bytes: Default::default(),
            xon_bytes: Default::default(),
            pfc_enable: Default::default(),
            xoff: Default::default(),
            mac: MacRx::new(),
            parser: RxParser::new(),
        }
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize, const IW: usize> Default
    for RxFrame<DW, KW, SW, AW, IW>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize, const IW: usize> Logic
    for RxFrame<DW, KW, SW, AW, IW>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.mac.clk.next = self.clk.val();
        self.mac.rst.next = self.rst.val();
        self.parser.clk.next = self.clk.val();
        self.parser.rst.next = self.rst.val();
        self.mac.s_axis_tdata.next = self.s_axis_tdata.val();
        self.mac.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.mac.s_axis_tlast.next = self.s_axis_tlast.val();
        self.mac.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.mac.s_axis_tuser.next = self.s_axis_tuser.val();
        self.parser.s_axis_tdata.next = self.mac.m_axis_tdata.val();
        self.parser.s_axis_tkeep.next = self.mac.m_axis_tkeep.val();
        self.parser.s_axis_tlast.next = self.mac.m_axis_tlast.val();
        self.parser.s_axis_tvalid.next = self.mac.m_axis_tvalid.val();
        self.mac.m_axis_tready.next = self.parser.s_axis_tready.val();
        self.parser.local_mac.next = self.local_mac.val();
        self.parser.local_ip.next = self.local_ip.val();
        self.m_meta_tdata.next = self.parser.m_meta_tdata.val();
        self.m_meta_tvalid.next = self.parser.m_meta_tvalid.val();
        self.parser.m_meta_tready.next = self.m_meta_tready.val();
        self.m_axis_tdata.next = self.parser.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.parser.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.parser.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.parser.m_axis_tvalid.val();
        self.parser.m_axis_tready.next = self.m_axis_tready.val();
        self.fcs_err.next = self.mac.fcs_err.val();
        self.code_err.next = self.mac.code_err.val();
        self.too_long.next = self.mac.too_long.val();
        self.runt.next = self.mac.runt.val();
        self.not_roce.next = self.mac.not_roce.val();
        self.frame_len_err.next = self.mac.bad_len.val();
        self.icrc_err.next = self.mac.icrc_err.val();
        self.overflow.next = self.mac.overflow.val();
        self.self_check.next = self.mac.self_check.val();
        self.accepted.next = self.parser.accepted.val();
        self.unsupported.next = self.parser.unsupported.val();
        self.bad_csum.next = self.parser.bad_csum.val();
        self.bad_mac.next = self.parser.bad_mac.val();
        self.bad_ip.next = self.parser.bad_ip.val();
        self.bad_opcode.next = self.parser.bad_opcode.val();
        self.bad_len.next = self.parser.bad_len.val();
        self.truncated.next = self.parser.truncated.val();
        self.paused.next = self.mac.paused.val();
        self.pause_rx.next = self.mac.pause_rx.val();
        self.pfc_rx.next = self.mac.pfc_rx.val();
        self.paused_cycles.next = self.mac.paused_cycles.val();
        self.ctrl_bad_dst.next = self.mac.ctrl_bad_dst.val();
        self.ctrl_bad_opcode.next = self.mac.ctrl_bad_opcode.val();
        self.ctrl_bad_reserved.next = self.mac.ctrl_bad_reserved.val();
        self.mac.xoff_bytes.next = self.xoff_bytes.val();
        self.mac.xon_bytes.next = self.xon_bytes.val();
        self.mac.pfc_enable.next = self.pfc_enable.val();
        self.xoff.next = self.mac.xoff.val();
    }
}
