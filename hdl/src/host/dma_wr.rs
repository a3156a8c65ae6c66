//! `DmaWrite`: the DMA write engine. Takes write commands (host address, length) and a byte
//! stream of their data, and sends memory write requests cut at boundaries aligned to the
//! write payload size (`DMA_WRITE_PAYLOAD`, so never across 4 KiB), with the data
//! address-aligned (`spec::tlp`).
//!
//! Ports:
//! - `s_cmd_{addr,len,tvalid,tready}`: a write of `len` bytes (0..=`DMA_MAX_LEN`) at `addr`.
//! - `s_data_*`: the bytes of each command in order, as one packet (`tlast` on its last beat,
//!   every beat but the last full). A zero-length command takes one empty beat. No `tkeep`:
//!   the command's length says how many bytes the packet carries.
//! - `m_rq_*`: memory write requests; `hdr` beside the first beat of each.
//! - `bad_len`: commands whose data packet was not `len` bytes long.
//! - `idle`: no command in hand and every request it made has left `m_rq` (a client that
//!   must order something after its writes by another path waits for this: the responder's
//!   receive completions, written by the completer's own engine).
//!
//! ```text
//!  s_data --> shift by addr mod (DW/8), carrying the high bytes of each beat into the next
//!         --> cut where the address crosses a payload-size boundary --> m_rq (MWr)
//! ```
//!
//! Writes are posted: PCIe keeps them in order with each other and ahead of later reads and
//! writes of the same requester, so a client that writes data, then a completion entry, needs
//! no wait between the two.
//!
//! Bad inputs: the data packet must be exactly `len` bytes, a contract between NIC blocks.
//! A packet that ends early has the rest of the command's bytes written as zeros; a longer one
//! has its extra beats dropped; either is counted in `bad_len` and the engine stays in step
//! with both streams. A command longer than `DMA_MAX_LEN` writes nothing, its data is
//! dropped, and it is counted.
//!
//! Throughput: one beat per clock, one idle cycle between commands (plus one beat when the
//! data shifts across one more beat than it arrived in). Requests leave through a `TlpSkid`,
//! so `s_*_tready` depend on registers only and the engine composes.

use crate::host::k;
use crate::host::req_header::ReqHeader;
use crate::host::TlpSkid;
use crate::prelude::*;
use crate::stream::ones;
use crate::util::log2_exact;
use ferroce_spec::tlp::{DMA_MAX_LEN, DMA_WRITE_PAYLOAD};

pub use crate::host::dma_rd::LEN_W;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum DmaWriteState {
    Idle,
    Run,
    Drain,
}

#[derive(LogicBlock)]
pub struct DmaWrite<const DW: usize, const KW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_cmd_addr: Signal<In, Bits<64>>,
    pub s_cmd_len: Signal<In, Bits<LEN_W>>,
    pub s_cmd_tvalid: Signal<In, Bit>,
    pub s_cmd_tready: Signal<Out, Bit>,
    pub s_data_tdata: Signal<In, Bits<DW>>,
    pub s_data_tlast: Signal<In, Bit>,
    pub s_data_tvalid: Signal<In, Bit>,
    pub s_data_tready: Signal<Out, Bit>,
    pub m_rq_hdr: Signal<Out, Bits<128>>,
    pub m_rq_tdata: Signal<Out, Bits<DW>>,
    pub m_rq_tkeep: Signal<Out, Bits<KW>>,
    pub m_rq_tlast: Signal<Out, Bit>,
    pub m_rq_tvalid: Signal<Out, Bit>,
    pub m_rq_tready: Signal<In, Bit>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub idle: Signal<Out, Bit>,
    rqh: ReqHeader,
    out: TlpSkid<DW, KW>,
    state: DFF<DmaWriteState>,
    // The command: window address (aligned to the beat), bytes left to send, first lane of
    // the next beat, input bytes still expected, shift, carried bytes.
    w: DFF<Bits<64>>,
    orem: DFF<Bits<16>>,
    lo: DFF<Bits<16>>,
    irem: DFF<Bits<16>>,
    s: DFF<Bits<16>>,
    carry: DFF<Bits<DW>>,
    starved: DFF<Bit>,
    too_long: DFF<Bit>,
    tfirst: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<DW>>,
    o_keep: DFF<Bits<KW>>,
    o_last: DFF<Bit>,
    n_bad: DFF<Bits<32>>,
    // Locals.
    o_free: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    take_in: Signal<Local, Bit>,
    long: Signal<Local, Bit>,
    din: Signal<Local, Bits<DW>>,
    sh: Signal<Local, Bits<16>>,
    shi: Signal<Local, Bits<16>>,
    room: Signal<Local, Bits<16>>,
    nb: Signal<Local, Bits<16>>,
    orem_after: Signal<Local, Bits<16>>,
    irem_after: Signal<Local, Bits<16>>,
    start: Signal<Local, Bits<64>>,
    t_off: Signal<Local, Bits<16>>,
    t_room: Signal<Local, Bits<16>>,
    t_bytes: Signal<Local, Bits<16>>,
    w_next: Signal<Local, Bits<64>>,
    keep_n: Signal<Local, Bits<KW>>,
    lane0: Signal<Local, Bits<16>>,
    // Constants.
    keepc: Vec<Constant<Bits<KW>>>,
    nc: Vec<Constant<Bits<16>>>,
    kw: Constant<Bits<16>>,
    kw64: Constant<Bits<64>>,
    lane_m1_64: Constant<Bits<64>>,
    beat_mask: Constant<Bits<64>>,
    mps: Constant<Bits<16>>,
    mps_m1_64: Constant<Bits<64>>,
    dw: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
    max_len: Constant<Bits<LEN_W>>,
}

impl<const DW: usize, const KW: usize> DmaWrite<DW, KW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        log2_exact(KW);
        log2_exact(DMA_WRITE_PAYLOAD);
        assert!(
            DMA_WRITE_PAYLOAD.is_multiple_of(KW),
            "payload boundaries must fall between beats"
        );
        const { assert!(DMA_MAX_LEN < 1 << LEN_W) };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_cmd_addr: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_tvalid: Default::default(),
            s_cmd_tready: Default::default(),
            s_data_tdata: Default::default(),
            s_data_tlast: Default::default(),
            s_data_tvalid: Default::default(),
            s_data_tready: Default::default(),
            m_rq_hdr: Default::default(),
            m_rq_tdata: Default::default(),
            m_rq_tkeep: Default::default(),
            m_rq_tlast: Default::default(),
            m_rq_tvalid: Default::default(),
            m_rq_tready: Default::default(),
            bad_len: Default::default(),
            idle: Default::default(),
            rqh: ReqHeader::default(),
            out: TlpSkid::new(),
            state: Default::default(),
            w: Default::default(),
            orem: Default::default(),
            lo: Default::default(),
            irem: Default::default(),
            s: Default::default(),
            carry: Default::default(),
            starved: Default::default(),
            too_long: Default::default(),
            long: Default::default(),
            tfirst: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            n_bad: Default::default(),
            o_free: Default::default(),
            need_in: Default::default(),
            go: Default::default(),
            take_in: Default::default(),
            din: Default::default(),
            sh: Default::default(),
            shi: Default::default(),
            room: Default::default(),
            nb: Default::default(),
            orem_after: Default::default(),
            irem_after: Default::default(),
            start: Default::default(),
            t_off: Default::default(),
            t_room: Default::default(),
            t_bytes: Default::default(),
            w_next: Default::default(),
            keep_n: Default::default(),
            lane0: Default::default(),
            keepc: (0..KW)
                .map(|n| k(if n == 0 { 0 } else { u64::MAX >> (64 - n) }))
                .collect(),
            nc: (0..KW).map(|n| k(n as u64)).collect(),
            kw: k(KW as u64),
            kw64: k(KW as u64),
            lane_m1_64: k(KW as u64 - 1),
            beat_mask: k(!(KW as u64 - 1)),
            mps: k(DMA_WRITE_PAYLOAD as u64),
            mps_m1_64: k(DMA_WRITE_PAYLOAD as u64 - 1),
            dw: k(DW as u64),
            full_keep: ones::<KW>(),
            max_len: k(DMA_MAX_LEN as u64),
        }
    }
}

impl<const DW: usize, const KW: usize> Default for DmaWrite<DW, KW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize> Logic for DmaWrite<DW, KW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, state, w, orem, lo, irem, s, carry, starved, too_long, tfirst, o_valid,
            o_data, o_keep, o_last, n_bad
        );
        // The output register feeds a TlpSkid, so `s_data_tready` never follows `m_rq_tready`.
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_hdr.next = self.rqh.hdr.val();
        self.out.s_tdata.next = self.o_data.q.val();
        self.out.s_tkeep.next = self.o_keep.q.val();
        self.out.s_tlast.next = self.o_last.q.val();
        self.out.s_tvalid.next = self.o_valid.q.val();
        self.m_rq_hdr.next = self.out.m_hdr.val();
        self.m_rq_tdata.next = self.out.m_tdata.val();
        self.m_rq_tkeep.next = self.out.m_tkeep.val();
        self.m_rq_tlast.next = self.out.m_tlast.val();
        self.m_rq_tvalid.next = self.out.m_tvalid.val();
        self.out.m_tready.next = self.m_rq_tready.val();
        self.rqh.clk.next = self.clk.val();
        self.rqh.load.next = false;
        self.bad_len.next = self.n_bad.q.val();
        self.idle.next = (self.state.q.val() == DmaWriteState::Idle)
            & !self.o_valid.q.val()
            & !self.out.m_tvalid.val();
        if self.o_valid.q.val() & self.out.s_tready.val() {
            self.o_valid.d.next = false;
        }
        self.o_free.next = !self.o_valid.q.val() | self.out.s_tready.val();

        // This beat: bytes `lo..lo+nb` of the window at `w`, the input beat if one is due.
        self.room.next = self.kw.val() - self.lo.q.val();
        self.nb.next = self.room.val();
        if self.orem.q.val() < self.room.val() {
            self.nb.next = self.orem.q.val();
        }
        self.orem_after.next = self.orem.q.val() - self.nb.val();
        self.irem_after.next = bits::<16>(0);
        if self.irem.q.val() > self.kw.val() {
            self.irem_after.next = self.irem.q.val() - self.kw.val();
        }
        self.need_in.next = (self.irem.q.val() != bits::<16>(0)) & !self.starved.q.val();
        self.go.next = (self.state.q.val() == DmaWriteState::Run)
            & self.o_free.val()
            & (!self.need_in.val() | self.s_data_tvalid.val());
        self.take_in.next = self.go.val() & self.need_in.val();
        self.s_data_tready.next =
            ((self.state.q.val() == DmaWriteState::Run) & self.o_free.val() & self.need_in.val())
                | (self.state.q.val() == DmaWriteState::Drain);
        self.din.next = bits::<DW>(0);
        if self.take_in.val() {
            self.din.next = self.s_data_tdata.val();
        }
        self.sh.next = self.s.q.val() << 3;
        self.shi.next = self.dw.val() - self.sh.val();
        self.keep_n.next = self.full_keep.val();
        for i in 0..KW {
            if self.nb.val() == self.nc[i].val() {
                self.keep_n.next = self.keepc[i].val();
            }
        }
        // The request this beat starts, if it starts one.
        self.start.next = self.w.q.val() | bit_cast::<64, 16>(self.lo.q.val());
        self.t_off.next = bit_cast::<16, 64>(self.start.val() & self.mps_m1_64.val());
        self.t_room.next = self.mps.val() - self.t_off.val();
        self.t_bytes.next = self.t_room.val();
        if self.orem.q.val() < self.t_room.val() {
            self.t_bytes.next = self.orem.q.val();
        }
        self.rqh.addr.next = self.start.val();
        self.rqh.bytes.next = self.t_bytes.val();
        self.rqh.write.next = true;
        self.rqh.tag.next = bits::<8>(0);
        self.w_next.next = self.w.q.val() + self.kw64.val();
        self.lane0.next = bit_cast::<16, 64>(self.s_cmd_addr.val() & self.lane_m1_64.val());

        self.s_cmd_tready.next = false;
        self.long.next = self.take_in.val()
            & !self.s_data_tlast.val()
            & (self.irem_after.val() == bits::<16>(0));
        match self.state.q.val() {
            DmaWriteState::Idle => {
                self.s_cmd_tready.next = true;
                if self.s_cmd_tvalid.val() {
                    self.w.d.next = self.s_cmd_addr.val() & self.beat_mask.val();
                    self.lo.d.next = self.lane0.val();
                    self.s.d.next = self.lane0.val();
                    self.orem.d.next = bit_cast::<16, LEN_W>(self.s_cmd_len.val());
                    self.irem.d.next = bit_cast::<16, LEN_W>(self.s_cmd_len.val());
                    self.carry.d.next = bits::<DW>(0);
                    self.starved.d.next = false;
                    self.too_long.d.next = false;
                    self.tfirst.d.next = true;
                    self.state.d.next = DmaWriteState::Run;
                    if self.s_cmd_len.val() == bits::<LEN_W>(0) {
                        // No request: take the empty data beat.
                        self.state.d.next = DmaWriteState::Drain;
                    }
                    if self.s_cmd_len.val() > self.max_len.val() {
                        self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                        self.state.d.next = DmaWriteState::Drain;
                    }
                }
            }
            DmaWriteState::Run => {
                if self.go.val() {
                    self.o_valid.d.next = true;
                    self.o_keep.d.next = self.keep_n.val() << self.lo.q.val();
                    self.o_data.d.next = self.din.val() | self.carry.q.val();
                    if self.s.q.val() != bits::<16>(0) {
                        self.o_data.d.next = (self.din.val() << self.sh.val()) | self.carry.q.val();
                        self.carry.d.next = self.din.val() >> self.shi.val();
                    }
                    self.rqh.load.next = self.tfirst.q.val();
                    // A request ends at the command's end or a payload-size boundary.
                    self.o_last.d.next = (self.orem_after.val() == bits::<16>(0))
                        | ((self.w_next.val() & self.mps_m1_64.val()) == bits::<64>(0));
                    self.tfirst.d.next = (self.orem_after.val() == bits::<16>(0))
                        | ((self.w_next.val() & self.mps_m1_64.val()) == bits::<64>(0));
                    self.w.d.next = self.w_next.val();
                    self.lo.d.next = bits::<16>(0);
                    self.orem.d.next = self.orem_after.val();
                    if self.take_in.val() {
                        self.irem.d.next = self.irem_after.val();
                        if self.s_data_tlast.val() & (self.irem_after.val() != bits::<16>(0)) {
                            // Short packet: the rest is written as zeros.
                            self.starved.d.next = true;
                            self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                        }
                        if self.long.val() {
                            // Long packet: the extra beats are dropped after the command.
                            self.too_long.d.next = true;
                            self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                        }
                    }
                    if self.orem_after.val() == bits::<16>(0) {
                        self.state.d.next = DmaWriteState::Idle;
                        if self.long.val() | self.too_long.q.val() {
                            self.state.d.next = DmaWriteState::Drain;
                        }
                    }
                }
            }
            DmaWriteState::Drain => {
                if self.s_data_tvalid.val() & self.s_data_tlast.val() {
                    self.state.d.next = DmaWriteState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.state.d.next = DmaWriteState::Idle;
            self.o_valid.d.next = false;
            self.n_bad.d.next = bits::<32>(0);
        }
    }
}
