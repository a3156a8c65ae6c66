//! `RqMux`: two requester TLP streams onto one (`m_rq`), a whole TLP at a time. The NIC has
//! one PCIe requester interface and two engines on it (DMA read, DMA write); this is where
//! they meet.
//!
//! Ports:
//! - `s_a_*`, `s_b_*`: TLP streams (`hdr[127:0]` with every beat, `tdata`, `tkeep`, `tlast`,
//!   `tvalid`, `tready`), a TLP being the beats up to `tlast`.
//! - `m_rq_*`: the merged stream, each TLP's beats together, `hdr` as it came.
//!
//! Arbitration: round robin at TLP boundaries. The grant is a register: it moves to the other
//! input after a TLP ends when the other input is waiting, or when nothing is in progress and
//! only the other input is waiting (one idle cycle to turn). A TLP is never interleaved with
//! another. `s_*_tready` depend on registers only (the grant and the output `TlpSkid`), the
//! outputs come from registers: the block composes (docs/ARCHITECTURE.md, "Composition").
//! Throughput: one beat per clock; back-to-back TLPs from both inputs alternate with no idle
//! cycle.

use crate::host::TlpSkid;
use crate::prelude::*;

#[derive(LogicBlock)]
pub struct RqMux<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_a_hdr: Signal<In, Bits<128>>,
    pub s_a_tdata: Signal<In, Bits<DW>>,
    pub s_a_tkeep: Signal<In, Bits<KW>>,
    pub s_a_tlast: Signal<In, Bit>,
    pub s_a_tvalid: Signal<In, Bit>,
    pub s_a_tready: Signal<Out, Bit>,
    pub s_b_hdr: Signal<In, Bits<128>>,
    pub s_b_tdata: Signal<In, Bits<DW>>,
    pub s_b_tkeep: Signal<In, Bits<KW>>,
    pub s_b_tlast: Signal<In, Bit>,
    pub s_b_tvalid: Signal<In, Bit>,
    pub s_b_tready: Signal<Out, Bit>,
    pub m_rq_hdr: Signal<Out, Bits<128>>,
    pub m_rq_tdata: Signal<Out, Bits<DW>>,
    pub m_rq_tkeep: Signal<Out, Bits<KW>>,
    pub m_rq_tlast: Signal<Out, Bit>,
    pub m_rq_tvalid: Signal<Out, Bit>,
    pub m_rq_tready: Signal<In, Bit>,
    // Grant (false: a, true: b) and whether a TLP is under way on it.
    grant: DFF<Bit>,
    mid: DFF<Bit>,
    out: TlpSkid<DW, KW>,
    // Locals: the granted input's beat, whether it moves, whether the head moves.
    in_hdr: Signal<Local, Bits<128>>,
    in_data: Signal<Local, Bits<DW>>,
    in_keep: Signal<Local, Bits<KW>>,
    in_last: Signal<Local, Bit>,
    in_valid: Signal<Local, Bit>,
    other_valid: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
}

impl<const DW: usize, const KW: usize> RqMux<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_a_hdr: Default::default(),
            s_a_tdata: Default::default(),
            s_a_tkeep: Default::default(),
            s_a_tlast: Default::default(),
            s_a_tvalid: Default::default(),
            s_a_tready: Default::default(),
            s_b_hdr: Default::default(),
            s_b_tdata: Default::default(),
            s_b_tkeep: Default::default(),
            s_b_tlast: Default::default(),
            s_b_tvalid: Default::default(),
            s_b_tready: Default::default(),
            m_rq_hdr: Default::default(),
            m_rq_tdata: Default::default(),
            m_rq_tkeep: Default::default(),
            m_rq_tlast: Default::default(),
            m_rq_tvalid: Default::default(),
            m_rq_tready: Default::default(),
            grant: Default::default(),
            mid: Default::default(),
            out: TlpSkid::new(),
            in_hdr: Default::default(),
            in_data: Default::default(),
            in_keep: Default::default(),
            in_last: Default::default(),
            in_valid: Default::default(),
            other_valid: Default::default(),
            take: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for RqMux<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for RqMux<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, grant, mid);
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.m_rq_hdr.next = self.out.m_hdr.val();
        self.m_rq_tdata.next = self.out.m_tdata.val();
        self.m_rq_tkeep.next = self.out.m_tkeep.val();
        self.m_rq_tlast.next = self.out.m_tlast.val();
        self.m_rq_tvalid.next = self.out.m_tvalid.val();
        self.out.m_tready.next = self.m_rq_tready.val();

        // The granted input into the skid.
        self.in_hdr.next = self.s_a_hdr.val();
        self.in_data.next = self.s_a_tdata.val();
        self.in_keep.next = self.s_a_tkeep.val();
        self.in_last.next = self.s_a_tlast.val();
        self.in_valid.next = self.s_a_tvalid.val();
        self.other_valid.next = self.s_b_tvalid.val();
        if self.grant.q.val() {
            self.in_hdr.next = self.s_b_hdr.val();
            self.in_data.next = self.s_b_tdata.val();
            self.in_keep.next = self.s_b_tkeep.val();
            self.in_last.next = self.s_b_tlast.val();
            self.in_valid.next = self.s_b_tvalid.val();
            self.other_valid.next = self.s_a_tvalid.val();
        }
        self.out.s_hdr.next = self.in_hdr.val();
        self.out.s_tdata.next = self.in_data.val();
        self.out.s_tkeep.next = self.in_keep.val();
        self.out.s_tlast.next = self.in_last.val();
        self.out.s_tvalid.next = self.in_valid.val();
        self.s_a_tready.next = self.out.s_tready.val() & !self.grant.q.val();
        self.s_b_tready.next = self.out.s_tready.val() & self.grant.q.val();
        self.take.next = self.out.s_tready.val() & self.in_valid.val();

        // Grant: held through a TLP; after it, or while idle, to the other input if it waits.
        if self.take.val() {
            self.mid.d.next = !self.in_last.val();
            if self.in_last.val() & self.other_valid.val() {
                self.grant.d.next = !self.grant.q.val();
            }
        } else if !self.mid.q.val() & !self.in_valid.val() & self.other_valid.val() {
            self.grant.d.next = !self.grant.q.val();
        }
        if self.rst.val() {
            self.grant.d.next = false;
            self.mid.d.next = false;
        }
    }
}
