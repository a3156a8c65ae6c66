//! `PfcGen`: PFC generation, the sending half of 802.1Qbb. It turns the receive buffers' wish
//! (`xoff`, one bit per priority: above its high watermark) into PFC frame records for
//! `TxQueues`, which sends them ahead of all data.
//!
//! Ports:
//! - `xoff`: bit p set while priority p wants its sender stopped (a level, from the receive
//!   buffering's watermarks).
//! - `enable`: the priorities PFC runs on (others are never paused: lossy classes).
//! - `quanta`: the pause time XOFF frames carry, in quanta of 512 bit times; below
//!   `spec::mac_ctrl::PFC_MIN_QUANTA` it is raised to that (the refresh must outrun a frame).
//! - `m_ctrl_{tdata,tvalid,tready}`: PFC parameter records (`spec::mac_ctrl::PFC`, lane order:
//!   `TxQueues`'s `s_ctrl`).
//! - counters, eight 32-bit counters side by side (priority p at bits 32p), counted when the
//!   record is taken: `xoff_sent` (frames that paused p: XOFF or its refresh), `xon_sent`
//!   (frames that resumed p).
//!
//! Rule: the advertised state `sent` follows `want = xoff & enable`. When they differ, one
//! frame goes out naming every priority in `want` (time `quanta`) and every one leaving it
//! (time 0, XON). While `want` is not empty the frame is repeated when half the pause time has
//! passed (a timer in bit times, `bits_per_cycle` off per clock), so the peer never resumes
//! while we are still above the mark. One record is held at a time; a change while it waits
//! is folded into the next one.

use crate::host::k;
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::tx_queues::CTRL_W;
use crate::prelude::*;
use ferroce_spec::mac_ctrl::{OPCODE_PFC, PFC, PFC_MIN_QUANTA, PRIORITIES, QUANTUM_BITS};

const P: usize = PRIORITIES;

#[derive(LogicBlock)]
pub struct PfcGen {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub xoff: Signal<In, Bits<8>>,
    pub enable: Signal<In, Bits<8>>,
    pub quanta: Signal<In, Bits<16>>,
    pub m_ctrl_tdata: Signal<Out, Bits<CTRL_W>>,
    pub m_ctrl_tvalid: Signal<Out, Bit>,
    pub m_ctrl_tready: Signal<In, Bit>,
    pub xoff_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub xon_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    sent: DFF<Bits<8>>,
    left: DFF<Bits<32>>,
    c_valid: DFF<Bit>,
    c_data: DFF<Bits<CTRL_W>>,
    c_off: DFF<Bits<8>>,
    c_on: DFF<Bits<8>>,
    n_xoff: Vec<DFF<Bits<32>>>,
    n_xon: Vec<DFF<Bits<32>>>,
    want: Signal<Local, Bits<8>>,
    qv: Signal<Local, Bits<16>>,
    named: Signal<Local, Bits<8>>,
    go: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
    rec: Signal<Local, Bits<CTRL_W>>,
    q_hi: Signal<Local, Bits<CTRL_W>>,
    q_lo: Signal<Local, Bits<CTRL_W>>,
    c32: Signal<Local, Bits<32>>,
    pack_off: Signal<Local, Bits<PRIO_COUNTERS_W>>,
    pack_on: Signal<Local, Bits<PRIO_COUNTERS_W>>,
    op_le: Constant<Bits<CTRL_W>>,
    sh_en: Constant<Bits<16>>,
    sh_hi: Vec<Constant<Bits<16>>>,
    sh_lo: Vec<Constant<Bits<16>>>,
    sh_half: Constant<Bits<8>>,
    min_q: Constant<Bits<16>>,
    onehot: Vec<Constant<Bits<8>>>,
    sh32: Vec<Constant<Bits<16>>>,
    bpc: Constant<Bits<32>>,
}

impl PfcGen {
    /// `bits_per_cycle`: line bits per core clock (`mac_ctrl_rx::line_bits_per_cycle`).
    pub fn new(bits_per_cycle: u64) -> Self {
        let at = |name: &str| (8 * PFC.field(name).byte()) as u64;
        let op = PFC.field("opcode").byte();
        let mut op_bytes = vec![0u8; CTRL_W / 8];
        op_bytes[op..op + 2].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        Self {
            clk: Default::default(),
            rst: Default::default(),
            xoff: Default::default(),
            enable: Default::default(),
            quanta: Default::default(),
            m_ctrl_tdata: Default::default(),
            m_ctrl_tvalid: Default::default(),
            m_ctrl_tready: Default::default(),
            xoff_sent: Default::default(),
            xon_sent: Default::default(),
            sent: Default::default(),
            left: Default::default(),
            c_valid: Default::default(),
            c_data: Default::default(),
            c_off: Default::default(),
            c_on: Default::default(),
            n_xoff: (0..P).map(|_| Default::default()).collect(),
            n_xon: (0..P).map(|_| Default::default()).collect(),
            want: Default::default(),
            qv: Default::default(),
            named: Default::default(),
            go: Default::default(),
            taken: Default::default(),
            rec: Default::default(),
            q_hi: Default::default(),
            q_lo: Default::default(),
            c32: Default::default(),
            pack_off: Default::default(),
            pack_on: Default::default(),
            op_le: Constant::new(crate::util::bits_from_bools::<CTRL_W>(
                &crate::util::bools_from_bytes(&op_bytes),
            )),
            sh_en: k(at("class_enable")),
            sh_hi: (0..P).map(|p| k(at(&format!("time{p}")))).collect(),
            sh_lo: (0..P).map(|p| k(at(&format!("time{p}")) + 8)).collect(),
            // Half the pause time: quanta x 512 / 2 bit times.
            sh_half: k(u64::from(QUANTUM_BITS.trailing_zeros() - 1)),
            min_q: k(PFC_MIN_QUANTA.into()),
            onehot: (0..P).map(|p| k(1 << p)).collect(),
            sh32: (0..P).map(|p| k((32 * p) as u64)).collect(),
            bpc: k(bits_per_cycle),
        }
    }
}

impl Logic for PfcGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, sent, left, c_valid, c_data, c_off, c_on);
        for p in 0..P {
            self.n_xoff[p].clock.next = self.clk.val();
            self.n_xon[p].clock.next = self.clk.val();
            self.n_xoff[p].d.next = self.n_xoff[p].q.val();
            self.n_xon[p].d.next = self.n_xon[p].q.val();
        }
        self.want.next = self.xoff.val() & self.enable.val();
        self.named.next = self.want.val() | (self.sent.q.val() & !self.want.val());
        self.go.next = !self.c_valid.q.val()
            & ((self.want.val() != self.sent.q.val())
                | ((self.want.val() != bits::<8>(0)) & (self.left.q.val() == bits::<32>(0))));

        // The record: PFC opcode, class-enable vector, a big-endian time per priority.
        self.qv.next = self.quanta.val();
        if self.quanta.val() < self.min_q.val() {
            self.qv.next = self.min_q.val();
        }
        self.q_hi.next = bit_cast::<CTRL_W, 8>(self.qv.val().get_bits::<8>(8));
        self.q_lo.next = bit_cast::<CTRL_W, 8>(self.qv.val().get_bits::<8>(0));
        self.rec.next =
            self.op_le.val() | (bit_cast::<CTRL_W, 8>(self.named.val()) << self.sh_en.val());
        for p in 0..P {
            if (self.want.val() & self.onehot[p].val()) != bits::<8>(0) {
                self.rec.next = self.rec.val()
                    | (self.q_hi.val() << self.sh_hi[p].val())
                    | (self.q_lo.val() << self.sh_lo[p].val());
            }
        }

        if self.left.q.val() > self.bpc.val() {
            self.left.d.next = self.left.q.val() - self.bpc.val();
        } else {
            self.left.d.next = bits::<32>(0);
        }
        self.taken.next = self.c_valid.q.val() & self.m_ctrl_tready.val();
        if self.taken.val() {
            self.c_valid.d.next = false;
        }
        if self.go.val() {
            self.c_valid.d.next = true;
            self.c_data.d.next = self.rec.val();
            self.c_off.d.next = self.want.val();
            self.c_on.d.next = self.named.val() & !self.want.val();
            self.sent.d.next = self.want.val();
            self.left.d.next = bit_cast::<32, 16>(self.qv.val()) << self.sh_half.val();
        }
        self.m_ctrl_tdata.next = self.c_data.q.val();
        self.m_ctrl_tvalid.next = self.c_valid.q.val();

        self.pack_off.next = bits::<PRIO_COUNTERS_W>(0);
        self.pack_on.next = bits::<PRIO_COUNTERS_W>(0);
        for p in 0..P {
            // Counted when `TxQueues` takes the record.
            if self.taken.val() & ((self.c_off.q.val() & self.onehot[p].val()) != bits::<8>(0)) {
                self.n_xoff[p].d.next = self.n_xoff[p].q.val() + bits::<32>(1);
            }
            if self.taken.val() & ((self.c_on.q.val() & self.onehot[p].val()) != bits::<8>(0)) {
                self.n_xon[p].d.next = self.n_xon[p].q.val() + bits::<32>(1);
            }
            self.c32.next = self.n_xoff[p].q.val();
            self.pack_off.next = self.pack_off.val()
                | (bit_cast::<PRIO_COUNTERS_W, 32>(self.c32.val()) << self.sh32[p].val());
            self.c32.next = self.n_xon[p].q.val();
            self.pack_on.next = self.pack_on.val()
                | (bit_cast::<PRIO_COUNTERS_W, 32>(self.c32.val()) << self.sh32[p].val());
        }
        self.xoff_sent.next = self.pack_off.val();
        self.xon_sent.next = self.pack_on.val();

        if self.rst.val() {
            self.sent.d.next = bits::<8>(0);
            self.left.d.next = bits::<32>(0);
            self.c_valid.d.next = false;
            for p in 0..P {
                self.n_xoff[p].d.next = bits::<32>(0);
                self.n_xon[p].d.next = bits::<32>(0);
            }
        }
    }
}
