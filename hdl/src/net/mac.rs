//! `Mac`: the whole MAC at the frame level, both directions, as the `100g` configuration puts
//! it in front of a hard 100G MAC's AXI-stream packet interface (512 bits, one beat per
//! clock): `MacTx` (eight priority queues, pause-aware strict priority, PFC generation,
//! padding, FCS, the start gate) and `MacRx` (store and forward, FCS and ICRC checks, MAC
//! control receive, per-priority watermarks), with the two joined as in the NIC: the peer's
//! PAUSE/PFC (`MacRx`'s `paused`) holds the transmit queues, and the receive buffer's XOFF
//! wish (`MacRx`'s `xoff`) makes `MacTx` send PFC frames.
//!
//! ```text
//!  s_axis  --> MacTx --> tx_axis   (to the hard MAC / the wire, FCS appended)
//!               ^ paused, xoff
//!  m_axis  <-- MacRx <-- rx_axis   (from the wire, FCS last; tuser: PHY error)
//! ```
//!
//! Ports: the transport's faces `s_axis_*` (frames without FCS, priority from the VLAN PCP;
//! `tuser` on a last beat marks the frame bad: dropped before the wire, `bad_frames`)
//! and `m_axis_*` (good RoCEv2 frames without FCS); the wire's faces `tx_axis_*` (`tready`
//! from the wire: it may drop between frames, never inside one once the frame has started, as
//! `MacTx` promises one beat per clock from first beat to last while it holds) and `rx_axis_*`
//! (no `tready`: the wire does not wait). Configuration in (BAR0's, in the NIC): `local_mac`,
//! `pfc_enable`, `pfc_quanta`, `xoff_bytes`, `xon_bytes`; the transmit credit ports `rsv_a`,
//! `rsv_b` (tie low when no sender reserves) and `used`. Every counter of `MacTx` and `MacRx`
//! under its own name (see those blocks), plus `paused` and `xoff` for observation.

use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::net::{MacRx, MacTx};
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct Mac<
    const DW: usize,
    const KW: usize,
    const QA: usize,
    const RA: usize,
    const SW: usize,
    const AW: usize,
> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    // Transport side.
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    // Wire side.
    pub tx_axis_tdata: Signal<Out, Bits<DW>>,
    pub tx_axis_tkeep: Signal<Out, Bits<KW>>,
    pub tx_axis_tlast: Signal<Out, Bit>,
    pub tx_axis_tvalid: Signal<Out, Bit>,
    pub tx_axis_tready: Signal<In, Bit>,
    pub rx_axis_tdata: Signal<In, Bits<DW>>,
    pub rx_axis_tkeep: Signal<In, Bits<KW>>,
    pub rx_axis_tlast: Signal<In, Bit>,
    pub rx_axis_tvalid: Signal<In, Bit>,
    pub rx_axis_tuser: Signal<In, Bit>,
    // Configuration.
    pub local_mac: Signal<In, Bits<48>>,
    pub pfc_enable: Signal<In, Bits<8>>,
    pub pfc_quanta: Signal<In, Bits<16>>,
    pub xoff_bytes: Signal<In, Bits<16>>,
    pub xon_bytes: Signal<In, Bits<16>>,
    pub rsv_a: Signal<In, Bits<RSV_W>>,
    pub rsv_b: Signal<In, Bits<RSV_W>>,
    pub used: Signal<Out, Bits<USED_W>>,
    // Transmit state and counters.
    pub q_ready: Signal<Out, Bits<8>>,
    pub bad_keep: Signal<Out, Bits<32>>,
    pub held: Signal<Out, Bits<32>>,
    pub oversize: Signal<Out, Bits<32>>,
    pub bad_frames: Signal<Out, Bits<32>>,
    pub ctrl_sent: Signal<Out, Bits<32>>,
    pub frames_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub xoff_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub xon_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    // Receive state and counters.
    pub paused: Signal<Out, Bits<8>>,
    pub xoff: Signal<Out, Bits<8>>,
    pub fcs_err: Signal<Out, Bits<32>>,
    pub runt: Signal<Out, Bits<32>>,
    pub not_roce: Signal<Out, Bits<32>>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub icrc_err: Signal<Out, Bits<32>>,
    pub overflow: Signal<Out, Bits<32>>,
    pub self_check: Signal<Out, Bits<32>>,
    pub code_err: Signal<Out, Bits<32>>,
    pub too_long: Signal<Out, Bits<32>>,
    pub pause_rx: Signal<Out, Bits<32>>,
    pub pfc_rx: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub paused_cycles: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub ctrl_bad_dst: Signal<Out, Bits<32>>,
    pub ctrl_bad_opcode: Signal<Out, Bits<32>>,
    pub ctrl_bad_reserved: Signal<Out, Bits<32>>,
    tx: MacTx<DW, KW, QA, RA>,
    rx: MacRx<DW, KW, SW, AW>,
}

impl<
        const DW: usize,
        const KW: usize,
        const QA: usize,
        const RA: usize,
        const SW: usize,
        const AW: usize,
    > Mac<DW, KW, QA, RA, SW, AW>
{
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            tx_axis_tdata: Default::default(),
            tx_axis_tkeep: Default::default(),
            tx_axis_tlast: Default::default(),
            tx_axis_tvalid: Default::default(),
            tx_axis_tready: Default::default(),
            rx_axis_tdata: Default::default(),
            rx_axis_tkeep: Default::default(),
            rx_axis_tlast: Default::default(),
            rx_axis_tvalid: Default::default(),
            rx_axis_tuser: Default::default(),
            local_mac: Default::default(),
            pfc_enable: Default::default(),
            pfc_quanta: Default::default(),
            xoff_bytes: Default::default(),
            xon_bytes: Default::default(),
            rsv_a: Default::default(),
            rsv_b: Default::default(),
            used: Default::default(),
            q_ready: Default::default(),
            bad_keep: Default::default(),
            held: Default::default(),
            oversize: Default::default(),
            bad_frames: Default::default(),
            ctrl_sent: Default::default(),
            frames_sent: Default::default(),
            xoff_sent: Default::default(),
            xon_sent: Default::default(),
            paused: Default::default(),
            xoff: Default::default(),
            fcs_err: Default::default(),
            runt: Default::default(),
            not_roce: Default::default(),
            bad_len: Default::default(),
            icrc_err: Default::default(),
            overflow: Default::default(),
            self_check: Default::default(),
            code_err: Default::default(),
            too_long: Default::default(),
            pause_rx: Default::default(),
            pfc_rx: Default::default(),
            paused_cycles: Default::default(),
            ctrl_bad_dst: Default::default(),
            ctrl_bad_opcode: Default::default(),
            ctrl_bad_reserved: Default::default(),
            tx: MacTx::new(),
            rx: MacRx::new(),
        }
    }
}

impl<
        const DW: usize,
        const KW: usize,
        const QA: usize,
        const RA: usize,
        const SW: usize,
        const AW: usize,
    > Default for Mac<DW, KW, QA, RA, SW, AW>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<
        const DW: usize,
        const KW: usize,
        const QA: usize,
        const RA: usize,
        const SW: usize,
        const AW: usize,
    > Logic for Mac<DW, KW, QA, RA, SW, AW>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.tx.clk.next = self.clk.val();
        self.tx.rst.next = self.rst.val();
        self.rx.clk.next = self.clk.val();
        self.rx.rst.next = self.rst.val();
        // Transmit.
        self.tx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.tx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.tx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.tx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.tx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.tx.s_axis_tready.val();
        self.tx_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.tx_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.tx_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.tx_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.tx.m_axis_tready.next = self.tx_axis_tready.val();
        // Receive.
        self.rx.s_axis_tdata.next = self.rx_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.rx_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.rx_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.rx_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.rx_axis_tuser.val();
        self.m_axis_tdata.next = self.rx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.rx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.rx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.rx.m_axis_tvalid.val();
        self.rx.m_axis_tready.next = self.m_axis_tready.val();
        // The two directions joined: the peer's pause holds our queues, our buffer's
        // watermarks make our PFC frames.
        self.tx.paused.next = self.rx.paused.val();
        self.tx.xoff.next = self.rx.xoff.val();
        self.paused.next = self.rx.paused.val();
        self.xoff.next = self.rx.xoff.val();
        // Configuration.
        self.tx.local_mac.next = self.local_mac.val();
        self.tx.pfc_enable.next = self.pfc_enable.val();
        self.rx.pfc_enable.next = self.pfc_enable.val();
        self.tx.pfc_quanta.next = self.pfc_quanta.val();
        self.rx.xoff_bytes.next = self.xoff_bytes.val();
        self.rx.xon_bytes.next = self.xon_bytes.val();
        self.tx.rsv_a.next = self.rsv_a.val();
        self.tx.rsv_b.next = self.rsv_b.val();
        self.used.next = self.tx.used.val();
        // Counters.
        self.q_ready.next = self.tx.q_ready.val();
        self.bad_keep.next = self.tx.bad_keep.val();
        self.held.next = self.tx.held.val();
        self.oversize.next = self.tx.oversize.val();
        self.bad_frames.next = self.tx.bad_frames.val();
        self.ctrl_sent.next = self.tx.ctrl_sent.val();
        self.frames_sent.next = self.tx.frames_sent.val();
        self.xoff_sent.next = self.tx.xoff_sent.val();
        self.xon_sent.next = self.tx.xon_sent.val();
        self.fcs_err.next = self.rx.fcs_err.val();
        self.runt.next = self.rx.runt.val();
        self.not_roce.next = self.rx.not_roce.val();
        self.bad_len.next = self.rx.bad_len.val();
        self.icrc_err.next = self.rx.icrc_err.val();
        self.overflow.next = self.rx.overflow.val();
        self.self_check.next = self.rx.self_check.val();
        self.code_err.next = self.rx.code_err.val();
        self.too_long.next = self.rx.too_long.val();
        self.pause_rx.next = self.rx.pause_rx.val();
        self.pfc_rx.next = self.rx.pfc_rx.val();
        self.paused_cycles.next = self.rx.paused_cycles.val();
        self.ctrl_bad_dst.next = self.rx.ctrl_bad_dst.val();
        self.ctrl_bad_opcode.next = self.rx.ctrl_bad_opcode.val();
        self.ctrl_bad_reserved.next = self.rx.ctrl_bad_reserved.val();
    }
}
