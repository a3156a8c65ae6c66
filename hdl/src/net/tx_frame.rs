//! `TxFrame`: the TX framing path from a metadata record and a payload to a finished Ethernet
//! frame: `TxHeader` -> ICRC (an `Icrc` tap and a `TailWriter` filling the ICRC slot) ->
//! `MacTx` (padding and FCS).
//!
//! Ports: as `TxHeader` on the input side; `m_axis_*` the frame with ICRC and FCS;
//! `bad_len`, `bad_opcode` from the header builder; `self_check`: frames on which the ICRC
//! tap saw anything but the empty ICRC slot it expects (not RoCEv2, bad lengths, bad keep),
//! plus the MAC's `bad_keep`. It counts this block's own bugs, so it stays zero; the tests
//! assert it. About one beat per clock: the builder's idle cycle between frames, a cycle when
//! the FCS spills into a new beat, and the ICRC writer waiting for its tap before a frame's
//! last beat. The tap watches the frame `ICRC_LATENCY - 2` registers before the writer (a
//! delay line that moves when the writer takes a beat), which leaves the writer the same short
//! wait as when the tap answered in two cycles; `MacTx`'s FCS writer has a two-skid lead that
//! removes the wait (docs/ARCHITECTURE.md). The MAC's pause and PFC ports (`local_mac`, `paused`, `xoff`, `pfc_enable`,
//! `pfc_quanta` in; `q_ready` and its counters out; the credit ports `rsv_a`, `rsv_b`, `used`)
//! are `MacTx`'s. `s_pay_tuser` on the payload's last beat (its bytes are bad: a host memory
//! read failed) follows the frame to `MacTx`'s queues, which drop it before the wire
//! (`bad_frames`).

use crate::crc::{Icrc, ICRC_LATENCY};
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_header::META_W;
use crate::net::tx_queues::{RSV_W, USED_W};
use crate::net::{MacTx, TailWriter, TxHeader};
use crate::prelude::*;

/// Beats between the ICRC tap and its writer: the frame travels this many registers after the
/// tap has seen it, so the value is due about when the last beat reaches the writer (the two
/// cycles of lead the writer itself covers, as when the tap answered in two).
const LAG: usize = ICRC_LATENCY - 2;

#[derive(LogicBlock)]
pub struct TxFrame<
    const DW: usize,
    const KW: usize,
    const IW: usize,
    const SW: usize,
    const QA: usize,
    const RA: usize,
> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_meta_tdata: Signal<In, Bits<META_W>>,
    pub s_meta_tvalid: Signal<In, Bit>,
    pub s_meta_tready: Signal<Out, Bit>,
    pub s_pay_tdata: Signal<In, Bits<DW>>,
    pub s_pay_tkeep: Signal<In, Bits<KW>>,
    pub s_pay_tlast: Signal<In, Bit>,
    pub s_pay_tuser: Signal<In, Bit>,
    pub s_pay_tvalid: Signal<In, Bit>,
    pub s_pay_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub bad_opcode: Signal<Out, Bits<32>>,
    pub self_check: Signal<Out, Bits<32>>,
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
    n_check: DFF<Bits<32>>,
    /// The delay line between the tap and the writer; it moves when the writer takes a beat.
    lag_valid: [DFF<Bit>; LAG],
    lag_data: [DFF<Bits<DW>>; LAG],
    lag_keep: [DFF<Bits<KW>>; LAG],
    lag_last: [DFF<Bit>; LAG],
    lag_user: [DFF<Bit>; LAG],
    icrc_ok: Constant<Bits<8>>,
    hdr: TxHeader<DW, KW, IW>,
    icrc: Icrc<DW, KW, SW>,
    icrc_wr: TailWriter<DW, KW>,
    mac: MacTx<DW, KW, QA, RA>,
}

impl<
        const DW: usize,
        const KW: usize,
        const IW: usize,
        const SW: usize,
        const QA: usize,
        const RA: usize,
    > TxFrame<DW, KW, IW, SW, QA, RA>
{
    pub fn new() -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_meta_tdata: Default::default(),
            s_meta_tvalid: Default::default(),
            s_meta_tready: Default::default(),
            s_pay_tdata: Default::default(),
            s_pay_tkeep: Default::default(),
            s_pay_tlast: Default::default(),
            s_pay_tuser: Default::default(),
            s_pay_tvalid: Default::default(),
            s_pay_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            bad_len: Default::default(),
            bad_opcode: Default::default(),
            self_check: Default::default(),
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
            n_check: Default::default(),
            lag_valid: Default::default(),
            lag_data: Default::default(),
            lag_keep: Default::default(),
            lag_last: Default::default(),
            lag_user: Default::default(),
            icrc_ok: Constant::new(crate::util::bits_from_u64(
                ferroce_spec::icrc::flags::MISMATCH.into(),
            )),
            hdr: TxHeader::new(),
            icrc: Icrc::new(),
            icrc_wr: TailWriter::new(false),
            mac: MacTx::new(),
        }
    }
}

impl<
        const DW: usize,
        const KW: usize,
        const IW: usize,
        const SW: usize,
        const QA: usize,
        const RA: usize,
    > Default for TxFrame<DW, KW, IW, SW, QA, RA>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<
        const DW: usize,
        const KW: usize,
        const IW: usize,
        const SW: usize,
        const QA: usize,
        const RA: usize,
    > Logic for TxFrame<DW, KW, IW, SW, QA, RA>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, n_check);
        self.self_check.next = self.n_check.q.val() + self.mac.bad_keep.val();
        if self.icrc.m_icrc_tvalid.val()
            & ((self.icrc.m_icrc_tuser.val() & !self.icrc_ok.val()) != bits::<8>(0))
        {
            self.n_check.d.next = self.n_check.q.val() + bits::<32>(1);
        }
        if self.rst.val() {
            self.n_check.d.next = bits::<32>(0);
        }
        self.hdr.clk.next = self.clk.val();
        self.hdr.rst.next = self.rst.val();
        self.icrc.clk.next = self.clk.val();
        self.icrc.rst.next = self.rst.val();
        self.icrc_wr.clk.next = self.clk.val();
        self.icrc_wr.rst.next = self.rst.val();
        self.mac.clk.next = self.clk.val();
        self.mac.rst.next = self.rst.val();
        // Inputs to the header builder.
        self.hdr.s_meta_tdata.next = self.s_meta_tdata.val();
        self.hdr.s_meta_tvalid.next = self.s_meta_tvalid.val();
        self.s_meta_tready.next = self.hdr.s_meta_tready.val();
        self.hdr.s_pay_tdata.next = self.s_pay_tdata.val();
        self.hdr.s_pay_tkeep.next = self.s_pay_tkeep.val();
        self.hdr.s_pay_tlast.next = self.s_pay_tlast.val();
        self.hdr.s_pay_tuser.next = self.s_pay_tuser.val();
        self.hdr.s_pay_tvalid.next = self.s_pay_tvalid.val();
        self.s_pay_tready.next = self.hdr.s_pay_tready.val();
        self.bad_len.next = self.hdr.bad_len.val();
        self.bad_opcode.next = self.hdr.bad_opcode.val();
        // ICRC: the tap watches what enters the delay line, which moves when the writer takes
        // a beat (its `s_axis_tready` is a register), so the value meets the frame's end.
        self.icrc.s_axis_tdata.next = self.hdr.m_axis_tdata.val();
        self.icrc.s_axis_tkeep.next = self.hdr.m_axis_tkeep.val();
        self.icrc.s_axis_tlast.next = self.hdr.m_axis_tlast.val();
        self.icrc.s_axis_tvalid.next = self.hdr.m_axis_tvalid.val();
        self.icrc.s_axis_tready.next = self.icrc_wr.s_axis_tready.val();
        self.hdr.m_axis_tready.next = self.icrc_wr.s_axis_tready.val();
        for i in 0..LAG {
            self.lag_valid[i].clock.next = self.clk.val();
            self.lag_data[i].clock.next = self.clk.val();
            self.lag_keep[i].clock.next = self.clk.val();
            self.lag_last[i].clock.next = self.clk.val();
            self.lag_user[i].clock.next = self.clk.val();
            self.lag_valid[i].d.next = self.lag_valid[i].q.val();
            self.lag_data[i].d.next = self.lag_data[i].q.val();
            self.lag_keep[i].d.next = self.lag_keep[i].q.val();
            self.lag_last[i].d.next = self.lag_last[i].q.val();
            self.lag_user[i].d.next = self.lag_user[i].q.val();
        }
        if self.icrc_wr.s_axis_tready.val() {
            self.lag_valid[0].d.next = self.hdr.m_axis_tvalid.val();
            self.lag_data[0].d.next = self.hdr.m_axis_tdata.val();
            self.lag_keep[0].d.next = self.hdr.m_axis_tkeep.val();
            self.lag_last[0].d.next = self.hdr.m_axis_tlast.val();
            self.lag_user[0].d.next = self.hdr.m_axis_tuser.val();
            for i in 1..LAG {
                self.lag_valid[i].d.next = self.lag_valid[i - 1].q.val();
                self.lag_data[i].d.next = self.lag_data[i - 1].q.val();
                self.lag_keep[i].d.next = self.lag_keep[i - 1].q.val();
                self.lag_last[i].d.next = self.lag_last[i - 1].q.val();
                self.lag_user[i].d.next = self.lag_user[i - 1].q.val();
            }
        }
        if self.rst.val() {
            for i in 0..LAG {
                self.lag_valid[i].d.next = false;
            }
        }
        // The last stage. hdl_gen indexes arrays with literals and loop variables only, so a
        // one-pass loop names `LAG - 1`.
        for i in (LAG - 1)..LAG {
            self.icrc_wr.s_axis_tdata.next = self.lag_data[i].q.val();
            self.icrc_wr.s_axis_tkeep.next = self.lag_keep[i].q.val();
            self.icrc_wr.s_axis_tlast.next = self.lag_last[i].q.val();
            self.icrc_wr.s_axis_tuser.next = self.lag_user[i].q.val();
            self.icrc_wr.s_axis_tvalid.next = self.lag_valid[i].q.val();
        }
        self.icrc_wr.s_val_tdata.next = self.icrc.m_icrc_tdata.val();
        self.icrc_wr.s_val_tvalid.next = self.icrc.m_icrc_tvalid.val();
        // MAC: padding and FCS.
        self.mac.s_axis_tdata.next = self.icrc_wr.m_axis_tdata.val();
        self.mac.s_axis_tkeep.next = self.icrc_wr.m_axis_tkeep.val();
        self.mac.s_axis_tlast.next = self.icrc_wr.m_axis_tlast.val();
        self.mac.s_axis_tuser.next = self.icrc_wr.m_axis_tuser.val();
        self.mac.s_axis_tvalid.next = self.icrc_wr.m_axis_tvalid.val();
        self.icrc_wr.m_axis_tready.next = self.mac.s_axis_tready.val();
        self.m_axis_tdata.next = self.mac.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.mac.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.mac.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.mac.m_axis_tvalid.val();
        self.mac.m_axis_tready.next = self.m_axis_tready.val();
        self.mac.local_mac.next = self.local_mac.val();
        self.mac.paused.next = self.paused.val();
        self.mac.xoff.next = self.xoff.val();
        self.mac.pfc_enable.next = self.pfc_enable.val();
        self.mac.pfc_quanta.next = self.pfc_quanta.val();
        self.q_ready.next = self.mac.q_ready.val();
        self.mac.rsv_a.next = self.rsv_a.val();
        self.mac.rsv_b.next = self.rsv_b.val();
        self.used.next = self.mac.used.val();
        self.held.next = self.mac.held.val();
        self.oversize.next = self.mac.oversize.val();
        self.bad_frames.next = self.mac.bad_frames.val();
        self.ctrl_sent.next = self.mac.ctrl_sent.val();
        self.frames_sent.next = self.mac.frames_sent.val();
        self.xoff_sent.next = self.mac.xoff_sent.val();
        self.xon_sent.next = self.mac.xon_sent.val();
    }
}
