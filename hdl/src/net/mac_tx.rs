//! `MacTx`: the transmit side of the MAC at the frame level: the priority queues with
//! their pause-aware scheduler and MAC control frames (`TxQueues`, fed PFC records by
//! `PfcGen`), Ethernet padding to 60 bytes (`Pad`), then the FCS (a `Crc32` tap, two skids,
//! and a `TailWriter` appending it, least significant byte first), then a `StartGate`, so a
//! frame once started leaves one beat per clock while `m_axis_tready` holds: what a PHY that
//! cannot wait inside a frame needs (`XgmiiTx`, a hard MAC's packet interface). The interframe
//! gap, preamble and XGMII encoding are `XgmiiTx`'s, or the hard MAC's.
//!
//! ```text
//!  s_axis --> TxQueues (queues by priority, strict, paused gate) --> Pad -+-> Skid --> Skid --> TailWriter --> StartGate --> m_axis
//!  xoff ----> PfcGen --PFC records--^                    Crc32 tap <------+                        ^ FCS
//! ```
//!
//! The two skids give the tap a lead: a frame's last beat reaches the FCS writer no sooner
//! than the tap's FCS (two cycles after the tap saw the beat), so the writer never waits and
//! frames leave back to back at one beat per clock at every size (`ferroce perf`, "100G
//! MAC"; without them the writer lost a cycle per frame, one in nine at 512 bytes).
//!
//! Ports: `s_axis_*` a frame without FCS (any length, `tkeep` by the stream rule; priority
//! from its VLAN PCP); `m_axis_*` the padded frame with its FCS; `bad_keep`: frames whose
//! `tkeep` broke the stream rule (the CRC tap's flag), sent anyway with the FCS of what was
//! sent. Pause and PFC: `paused` in (`MacCtrlRx`'s), `xoff`, `pfc_enable`, `pfc_quanta` in
//! (`PfcGen`'s), `local_mac` in (the source of control frames); `s_axis_tuser` on a last beat
//! (the frame is bad: `TxQueues` drops it, `bad_frames` counts it); `q_ready`, `oversize`,
//! `ctrl_sent`, `frames_sent`, `xoff_sent`, `xon_sent` out; the credit ports `rsv_a`, `rsv_b`
//! in and `used` out (see the two blocks).

use crate::crc::Crc32;
use crate::net::mac_ctrl_rx::{line_bits_per_cycle, PRIO_COUNTERS_W};
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::net::{Pad, PfcGen, StartGate, TailWriter, TxQueues};
use crate::prelude::*;
use crate::stream::Skid;

#[derive(LogicBlock)]
pub struct MacTx<const DW: usize, const KW: usize, const QA: usize, const RA: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
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
    pub bad_keep: Signal<Out, Bits<32>>,
    pub local_mac: Signal<In, Bits<48>>,
    pub paused: Signal<In, Bits<8>>,
    pub xoff: Signal<In, Bits<8>>,
    pub pfc_enable: Signal<In, Bits<8>>,
    pub pfc_quanta: Signal<In, Bits<16>>,
    pub q_ready: Signal<Out, Bits<8>>,
    pub rsv_a: Signal<In, Bits<RSV_W>>,
    pub rsv_b: Signal<In, Bits<RSV_W>>,
    pub used: Signal<Out, Bits<USED_W>>,
    pub held: Signal<Out, Bits<32>>,
    pub oversize: Signal<Out, Bits<32>>,
    pub bad_frames: Signal<Out, Bits<32>>,
    pub ctrl_sent: Signal<Out, Bits<32>>,
    pub frames_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub xoff_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub xon_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    queues: TxQueues<DW, KW, QA, RA>,
    pfc: PfcGen,
    pad: Pad<DW, KW>,
    fcs: Crc32<DW, KW>,
    lag_a: Skid<DW, KW>,
    lag_b: Skid<DW, KW>,
    fcs_wr: TailWriter<DW, KW>,
    gate: StartGate<DW, KW>,
    n_bad: DFF<Bits<32>>,
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> MacTx<DW, KW, QA, RA> {
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
            bad_keep: Default::default(),
            local_mac: Default::default(),
            paused: Default::default(),
            xoff: Default::default(),
            pfc_enable: Default::default(),
            pfc_quanta: Default::default(),
            q_ready: Default::default(),
            rsv_a: Default::default(),
            rsv_b: Default::default(),
            used: Default::default(),
            held: Default::default(),
            oversize: Default::default(),
            bad_frames: Default::default(),
            ctrl_sent: Default::default(),
            frames_sent: Default::default(),
            xoff_sent: Default::default(),
            xon_sent: Default::default(),
            queues: TxQueues::new(),
            pfc: PfcGen::new(line_bits_per_cycle(DW)),
            pad: Pad::new(),
            fcs: Crc32::new(),
            lag_a: Skid::new(),
            lag_b: Skid::new(),
            fcs_wr: TailWriter::new(true),
            gate: StartGate::new(),
            n_bad: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Default
    for MacTx<DW, KW, QA, RA>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Logic
    for MacTx<DW, KW, QA, RA>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, n_bad);
        self.pad.clk.next = self.clk.val();
        self.pad.rst.next = self.rst.val();
        self.fcs.clk.next = self.clk.val();
        self.fcs.rst.next = self.rst.val();
        self.lag_a.clk.next = self.clk.val();
        self.lag_a.rst.next = self.rst.val();
        self.lag_a.s_axis_tuser.next = false;
        self.lag_b.clk.next = self.clk.val();
        self.lag_b.rst.next = self.rst.val();
        self.lag_b.s_axis_tuser.next = false;
        self.fcs_wr.clk.next = self.clk.val();
        self.fcs_wr.rst.next = self.rst.val();
        self.gate.clk.next = self.clk.val();
        self.gate.rst.next = self.rst.val();
        self.bad_keep.next = self.n_bad.q.val();
        if self.fcs.m_crc_tvalid.val() & self.fcs.m_crc_tuser.val() {
            self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
        }
        if self.rst.val() {
            self.n_bad.d.next = bits::<32>(0);
        }
        self.queues.clk.next = self.clk.val();
        self.queues.rst.next = self.rst.val();
        self.pfc.clk.next = self.clk.val();
        self.pfc.rst.next = self.rst.val();
        self.pfc.xoff.next = self.xoff.val();
        self.pfc.enable.next = self.pfc_enable.val();
        self.pfc.quanta.next = self.pfc_quanta.val();
        self.queues.s_ctrl_tdata.next = self.pfc.m_ctrl_tdata.val();
        self.queues.s_ctrl_tvalid.next = self.pfc.m_ctrl_tvalid.val();
        self.pfc.m_ctrl_tready.next = self.queues.s_ctrl_tready.val();
        self.queues.local_mac.next = self.local_mac.val();
        self.queues.paused.next = self.paused.val();
        self.q_ready.next = self.queues.q_ready.val();
        self.queues.rsv_a.next = self.rsv_a.val();
        self.queues.rsv_b.next = self.rsv_b.val();
        self.used.next = self.queues.used.val();
        self.held.next = self.queues.held.val();
        self.oversize.next = self.queues.oversize.val();
        self.bad_frames.next = self.queues.bad_frames.val();
        self.ctrl_sent.next = self.queues.ctrl_sent.val();
        self.frames_sent.next = self.queues.frames_sent.val();
        self.xoff_sent.next = self.pfc.xoff_sent.val();
        self.xon_sent.next = self.pfc.xon_sent.val();
        self.queues.s_axis_tdata.next = self.s_axis_tdata.val();
        self.queues.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.queues.s_axis_tlast.next = self.s_axis_tlast.val();
        self.queues.s_axis_tuser.next = self.s_axis_tuser.val();
        self.queues.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.queues.s_axis_tready.val();
        self.pad.s_axis_tdata.next = self.queues.m_axis_tdata.val();
        self.pad.s_axis_tkeep.next = self.queues.m_axis_tkeep.val();
        self.pad.s_axis_tlast.next = self.queues.m_axis_tlast.val();
        self.pad.s_axis_tvalid.next = self.queues.m_axis_tvalid.val();
        self.queues.m_axis_tready.next = self.pad.s_axis_tready.val();
        self.fcs.s_axis_tdata.next = self.pad.m_axis_tdata.val();
        self.fcs.s_axis_tkeep.next = self.pad.m_axis_tkeep.val();
        self.fcs.s_axis_tlast.next = self.pad.m_axis_tlast.val();
        self.fcs.s_axis_tvalid.next = self.pad.m_axis_tvalid.val();
        self.fcs.s_axis_tready.next = self.lag_a.s_axis_tready.val();
        // Two register stages between the tap and the FCS writer: a frame's last beat reaches
        // the writer no sooner than its FCS does, so the writer never waits.
        self.lag_a.s_axis_tdata.next = self.pad.m_axis_tdata.val();
        self.lag_a.s_axis_tkeep.next = self.pad.m_axis_tkeep.val();
        self.lag_a.s_axis_tlast.next = self.pad.m_axis_tlast.val();
        self.lag_a.s_axis_tvalid.next = self.pad.m_axis_tvalid.val();
        self.pad.m_axis_tready.next = self.lag_a.s_axis_tready.val();
        self.lag_b.s_axis_tdata.next = self.lag_a.m_axis_tdata.val();
        self.lag_b.s_axis_tkeep.next = self.lag_a.m_axis_tkeep.val();
        self.lag_b.s_axis_tlast.next = self.lag_a.m_axis_tlast.val();
        self.lag_b.s_axis_tvalid.next = self.lag_a.m_axis_tvalid.val();
        self.lag_a.m_axis_tready.next = self.lag_b.s_axis_tready.val();
        self.fcs_wr.s_axis_tdata.next = self.lag_b.m_axis_tdata.val();
        self.fcs_wr.s_axis_tkeep.next = self.lag_b.m_axis_tkeep.val();
        self.fcs_wr.s_axis_tlast.next = self.lag_b.m_axis_tlast.val();
        self.fcs_wr.s_axis_tuser.next = false;
        self.fcs_wr.s_axis_tvalid.next = self.lag_b.m_axis_tvalid.val();
        self.lag_b.m_axis_tready.next = self.fcs_wr.s_axis_tready.val();
        self.fcs_wr.s_val_tdata.next = self.fcs.m_crc_tdata.val();
        self.fcs_wr.s_val_tvalid.next = self.fcs.m_crc_tvalid.val();
        self.gate.s_axis_tdata.next = self.fcs_wr.m_axis_tdata.val();
        self.gate.s_axis_tkeep.next = self.fcs_wr.m_axis_tkeep.val();
        self.gate.s_axis_tlast.next = self.fcs_wr.m_axis_tlast.val();
        self.gate.s_axis_tvalid.next = self.fcs_wr.m_axis_tvalid.val();
        self.fcs_wr.m_axis_tready.next = self.gate.s_axis_tready.val();
        self.m_axis_tdata.next = self.gate.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.gate.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.gate.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.gate.m_axis_tvalid.val();
        self.gate.m_axis_tready.next = self.m_axis_tready.val();
    }
}
