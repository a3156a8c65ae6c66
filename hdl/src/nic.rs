//! `Nic`: the whole NIC as it stands, one PCIe function and one Ethernet port. Today it is the
//! send half: BAR0 (registers, QP/CQ tables, doorbells) -> `Requester` (scheduler, WQE fetch,
//! segmentation) with `DmaRead` for WQEs and payload -> `TxFrame` (headers, ICRC, pad, FCS)
//! -> the wire. The receive half, the responder, the completer and the DMA write engine join
//! it in the steps that follow (docs/ARCHITECTURE.md, "NIC top").
//!
//! Ports:
//! - `s_req_*` / `m_cpl_*`: BAR0 requests from the host and their completions.
//! - `m_rq_*` / `s_rc_*`: the NIC's memory requests and their completions (`spec::tlp`).
//! - `m_axis_*`: frames to the wire, with FCS.
//! - `m_sent_*`: the requester's `SENT` records (the completer's input, until it exists).
//! - counters: the requester's, the DMA read engine's, and the TX path's.
//!
//! ```text
//!  s_req -> Bar0 -> m_cpl
//!             |  m_db, m_qpw, local_mac/ipv4
//!             v
//!           Requester -- m_rd --> DmaRead -- m_rq -->
//!             ^   |  \--<-- m_data --/  <-- s_rc --
//!             |   meta + payload
//!             |   v
//!             |  TxFrame --> m_axis
//!             \--> m_sent
//! ```
//! Every block ends in registers with readies from registers, so this is wiring only.

use crate::host::{Bar0, Bar0Params, DmaRead};
use crate::net::TxFrame;
use crate::prelude::*;
use crate::rc::Requester;
use ferroce_spec::meta::SENT;

const SENT_W: usize = SENT.len * 8;

#[derive(LogicBlock)]
pub struct Nic<const DW: usize, const KW: usize, const BB: usize, const IW: usize, const SW: usize>
{
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_req_hdr: Signal<In, Bits<128>>,
    pub s_req_tdata: Signal<In, Bits<DW>>,
    pub s_req_tkeep: Signal<In, Bits<KW>>,
    pub s_req_tlast: Signal<In, Bit>,
    pub s_req_tvalid: Signal<In, Bit>,
    pub s_req_tready: Signal<Out, Bit>,
    pub m_cpl_hdr: Signal<Out, Bits<128>>,
    pub m_cpl_tdata: Signal<Out, Bits<DW>>,
    pub m_cpl_tkeep: Signal<Out, Bits<KW>>,
    pub m_cpl_tlast: Signal<Out, Bit>,
    pub m_cpl_tvalid: Signal<Out, Bit>,
    pub m_cpl_tready: Signal<In, Bit>,
    pub m_rq_hdr: Signal<Out, Bits<128>>,
    pub m_rq_tdata: Signal<Out, Bits<DW>>,
    pub m_rq_tkeep: Signal<Out, Bits<KW>>,
    pub m_rq_tlast: Signal<Out, Bit>,
    pub m_rq_tvalid: Signal<Out, Bit>,
    pub m_rq_tready: Signal<In, Bit>,
    pub s_rc_hdr: Signal<In, Bits<128>>,
    pub s_rc_tdata: Signal<In, Bits<DW>>,
    pub s_rc_tlast: Signal<In, Bit>,
    pub s_rc_tvalid: Signal<In, Bit>,
    pub s_rc_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub m_sent_tdata: Signal<Out, Bits<SENT_W>>,
    pub m_sent_tvalid: Signal<Out, Bit>,
    pub m_sent_tready: Signal<In, Bit>,
    pub req_bad_db: Signal<Out, Bits<32>>,
    pub req_bad_qp: Signal<Out, Bits<32>>,
    pub req_bad_wqe: Signal<Out, Bits<32>>,
    pub req_dma_err: Signal<Out, Bits<32>>,
    pub rd_bad_cpl: Signal<Out, Bits<32>>,
    pub rd_timeouts: Signal<Out, Bits<32>>,
    pub tx_bad_len: Signal<Out, Bits<32>>,
    pub tx_bad_opcode: Signal<Out, Bits<32>>,
    pub tx_self_check: Signal<Out, Bits<32>>,
    bar0: Bar0<DW, KW>,
    req: Requester<DW, KW>,
    rd: DmaRead<DW, KW, BB>,
    tx: TxFrame<DW, KW, IW, SW>,
}

impl<const DW: usize, const KW: usize, const BB: usize, const IW: usize, const SW: usize>
    Nic<DW, KW, BB, IW, SW>
{
    pub fn new(params: Bar0Params) -> Self {
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_req_hdr: Default::default(),
            s_req_tdata: Default::default(),
            s_req_tkeep: Default::default(),
            s_req_tlast: Default::default(),
            s_req_tvalid: Default::default(),
            s_req_tready: Default::default(),
            m_cpl_hdr: Default::default(),
            m_cpl_tdata: Default::default(),
            m_cpl_tkeep: Default::default(),
            m_cpl_tlast: Default::default(),
            m_cpl_tvalid: Default::default(),
            m_cpl_tready: Default::default(),
            m_rq_hdr: Default::default(),
            m_rq_tdata: Default::default(),
            m_rq_tkeep: Default::default(),
            m_rq_tlast: Default::default(),
            m_rq_tvalid: Default::default(),
            m_rq_tready: Default::default(),
            s_rc_hdr: Default::default(),
            s_rc_tdata: Default::default(),
            s_rc_tlast: Default::default(),
            s_rc_tvalid: Default::default(),
            s_rc_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_sent_tdata: Default::default(),
            m_sent_tvalid: Default::default(),
            m_sent_tready: Default::default(),
            req_bad_db: Default::default(),
            req_bad_qp: Default::default(),
            req_bad_wqe: Default::default(),
            req_dma_err: Default::default(),
            rd_bad_cpl: Default::default(),
            rd_timeouts: Default::default(),
            tx_bad_len: Default::default(),
            tx_bad_opcode: Default::default(),
            tx_self_check: Default::default(),
            bar0: Bar0::new(params),
            req: Requester::new(),
            rd: DmaRead::new(),
            tx: TxFrame::new(),
        }
    }
}

impl<const DW: usize, const KW: usize, const BB: usize, const IW: usize, const SW: usize> Logic
    for Nic<DW, KW, BB, IW, SW>
{
    #[hdl_gen]
    fn update(&mut self) {
        self.bar0.clk.next = self.clk.val();
        self.bar0.rst.next = self.rst.val();
        self.req.clk.next = self.clk.val();
        self.req.rst.next = self.rst.val();
        self.rd.clk.next = self.clk.val();
        self.rd.rst.next = self.rst.val();
        self.tx.clk.next = self.clk.val();
        self.tx.rst.next = self.rst.val();
        // BAR0.
        self.bar0.s_req_hdr.next = self.s_req_hdr.val();
        self.bar0.s_req_tdata.next = self.s_req_tdata.val();
        self.bar0.s_req_tkeep.next = self.s_req_tkeep.val();
        self.bar0.s_req_tlast.next = self.s_req_tlast.val();
        self.bar0.s_req_tvalid.next = self.s_req_tvalid.val();
        self.s_req_tready.next = self.bar0.s_req_tready.val();
        self.m_cpl_hdr.next = self.bar0.m_cpl_hdr.val();
        self.m_cpl_tdata.next = self.bar0.m_cpl_tdata.val();
        self.m_cpl_tkeep.next = self.bar0.m_cpl_tkeep.val();
        self.m_cpl_tlast.next = self.bar0.m_cpl_tlast.val();
        self.m_cpl_tvalid.next = self.bar0.m_cpl_tvalid.val();
        self.bar0.m_cpl_tready.next = self.m_cpl_tready.val();
        // Doorbells and the QP table's write-through to the requester.
        self.req.s_db_qpn.next = self.bar0.m_db_qpn.val();
        self.req.s_db_pi.next = self.bar0.m_db_pi.val();
        self.req.s_db_tvalid.next = self.bar0.m_db_tvalid.val();
        self.bar0.m_db_tready.next = self.req.s_db_tready.val();
        self.req.s_qpw_en.next = self.bar0.m_qpw_en.val();
        self.req.s_qpw_index.next = self.bar0.m_qpw_index.val();
        self.req.s_qpw_data.next = self.bar0.m_qpw_data.val();
        self.req.local_mac.next = self.bar0.local_mac.val();
        self.req.local_ipv4.next = self.bar0.local_ipv4.val();
        // DMA reads for the requester.
        self.rd.s_cmd_addr.next = self.req.m_rd_addr.val();
        self.rd.s_cmd_len.next = self.req.m_rd_len.val();
        self.rd.s_cmd_tvalid.next = self.req.m_rd_tvalid.val();
        self.req.m_rd_tready.next = self.rd.s_cmd_tready.val();
        self.req.s_rd_tdata.next = self.rd.m_data_tdata.val();
        self.req.s_rd_tkeep.next = self.rd.m_data_tkeep.val();
        self.req.s_rd_tlast.next = self.rd.m_data_tlast.val();
        self.req.s_rd_tuser.next = self.rd.m_data_tuser.val();
        self.req.s_rd_tvalid.next = self.rd.m_data_tvalid.val();
        self.rd.m_data_tready.next = self.req.s_rd_tready.val();
        self.m_rq_hdr.next = self.rd.m_rq_hdr.val();
        self.m_rq_tdata.next = self.rd.m_rq_tdata.val();
        self.m_rq_tkeep.next = self.rd.m_rq_tkeep.val();
        self.m_rq_tlast.next = self.rd.m_rq_tlast.val();
        self.m_rq_tvalid.next = self.rd.m_rq_tvalid.val();
        self.rd.m_rq_tready.next = self.m_rq_tready.val();
        self.rd.s_rc_hdr.next = self.s_rc_hdr.val();
        self.rd.s_rc_tdata.next = self.s_rc_tdata.val();
        self.rd.s_rc_tlast.next = self.s_rc_tlast.val();
        self.rd.s_rc_tvalid.next = self.s_rc_tvalid.val();
        self.s_rc_tready.next = self.rd.s_rc_tready.val();
        // Packets to the TX path and the wire.
        self.tx.s_meta_tdata.next = self.req.m_meta_tdata.val();
        self.tx.s_meta_tvalid.next = self.req.m_meta_tvalid.val();
        self.req.m_meta_tready.next = self.tx.s_meta_tready.val();
        self.tx.s_pay_tdata.next = self.req.m_pay_tdata.val();
        self.tx.s_pay_tkeep.next = self.req.m_pay_tkeep.val();
        self.tx.s_pay_tlast.next = self.req.m_pay_tlast.val();
        self.tx.s_pay_tvalid.next = self.req.m_pay_tvalid.val();
        self.req.m_pay_tready.next = self.tx.s_pay_tready.val();
        self.m_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.tx.m_axis_tready.next = self.m_axis_tready.val();
        self.m_sent_tdata.next = self.req.m_sent_tdata.val();
        self.m_sent_tvalid.next = self.req.m_sent_tvalid.val();
        self.req.m_sent_tready.next = self.m_sent_tready.val();
        // Counters.
        self.req_bad_db.next = self.req.bad_db.val();
        self.req_bad_qp.next = self.req.bad_qp.val();
        self.req_bad_wqe.next = self.req.bad_wqe.val();
        self.req_dma_err.next = self.req.dma_err.val();
        self.rd_bad_cpl.next = self.rd.bad_cpl.val();
        self.rd_timeouts.next = self.rd.timeouts.val();
        self.tx_bad_len.next = self.tx.bad_len.val();
        self.tx_bad_opcode.next = self.tx.bad_opcode.val();
        self.tx_self_check.next = self.tx.self_check.val();
    }
}
