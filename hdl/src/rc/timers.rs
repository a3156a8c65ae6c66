//! `Timers`: the RC requester's timers for every QP, without a counter per QP. Each QP has
//! one entry in a RAM: a mode and the time it was set. A free-running clock counts in
//! `spec::headers::TIMER_UNIT_NS` (256 ns) units, and a scanner visits one QP per cycle (256
//! QPs in 256 cycles, 1.6 us at 156.25 MHz), so a timer fires at most one scan after it
//! expires. The completer sets the entries and takes the expiries.
//!
//! Modes:
//! - `MODE_OFF`: nothing outstanding.
//! - `MODE_ACK`: the local ACK timer. It expires `2^(timeout + 4)` units (4.096 us x
//!   2^timeout) after it was set, `timeout` the QP's context field (0: never, IBA
//!   9.7.6.1.3).
//! - `MODE_RNR`: an RNR wait. It expires `rnr_wait_units(code)` units after it was set, for
//!   the RNR NAK's timer code (IBA table 45).
//! - `MODE_NOW`: a retry wanted at once (a NAK PSN sequence error): it fires at the next scan.
//!
//! Ports:
//! - `s_qpw_{en,index,data}`: BAR0's QP table write-through; the block keeps each QP's
//!   `timeout`. A write with `init_sq` (the QP reset, or connected anew) sets the QP's entry
//!   to `MODE_ACK` from now, after any set or take of that cycle (`iv`, held until the write
//!   port is free; a set for the QP meanwhile wins) and cancels a waiting expiry of the QP:
//!   requests of the QP's last life may still be on the completer's list, and the first of
//!   its next life is put behind them with no timer of its own (the completer arms one only
//!   for a new head); the timer retires the old ones as they come to the head. With an empty
//!   list the expiry finds nothing and the timer stays off.
//! - `s_set_{en,qpn,mode,code}`: set a QP's entry (its time: now). No back-pressure.
//! - `m_exp_{valid,qpn,mode}`, `s_exp_ready`: an expiry, held until taken. Taking it turns the
//!   QP's entry off (its taker sets it again). A set for the QP before it is taken cancels it,
//!   as the expiry no longer holds; one that the scanner has in flight is dropped likewise.
//!   An expiry found while one waits is found again at the next scan.
//!
//! The taker must not set an entry in the cycle it takes an expiry: the entry RAM has one
//! write port, and the set would win over the take's turning off.
//!
//! ```text
//!  [0: entry and timeout read at the scan index] -> [1: elapsed = now - start, the limit]
//!    -> [2: mode on and elapsed >= limit: the expiry register] -> m_exp
//! ```

use crate::host::{field_at, k};
use crate::prelude::*;
use ferroce_spec::headers::rnr_wait_units;
use ferroce_spec::queues::QP_CTX;

/// QP table address width and the width of a QP write.
pub const QA: usize = 8;
pub const QP_W: usize = crate::host::bar0::QP_W;
/// Time in units: the clock and each entry's start.
pub const T_W: usize = 36;
/// An entry: mode 0/2, RNR code 2/5, start 7/36.
const E_W: usize = 2 + 5 + T_W;
pub const MODE_OFF: u64 = 0;
pub const MODE_ACK: u64 = 1;
pub const MODE_RNR: u64 = 2;
pub const MODE_NOW: u64 = 3;
const _: () = assert!(rnr_wait_units(0) < 1 << 24);

#[derive(LogicBlock)]
pub struct Timers {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_qpw_en: Signal<In, Bit>,
    pub s_qpw_index: Signal<In, Bits<QA>>,
    pub s_qpw_data: Signal<In, Bits<QP_W>>,
    pub s_set_en: Signal<In, Bit>,
    pub s_set_qpn: Signal<In, Bits<QA>>,
    pub s_set_mode: Signal<In, Bits<2>>,
    pub s_set_code: Signal<In, Bits<5>>,
    pub m_exp_valid: Signal<Out, Bit>,
    pub m_exp_qpn: Signal<Out, Bits<QA>>,
    pub m_exp_mode: Signal<Out, Bits<2>>,
    pub s_exp_ready: Signal<In, Bit>,
    ent: RAM<Bits<E_W>, QA>,
    tmo: RAM<Bits<5>, QA>,
    div: DFF<Bits<16>>,
    now: DFF<Bits<T_W>>,
    si: DFF<Bits<QA>>,
    v1: DFF<Bit>,
    q1: DFF<Bits<QA>>,
    v2: DFF<Bit>,
    q2: DFF<Bits<QA>>,
    mode2: DFF<Bits<2>>,
    el2: DFF<Bits<T_W>>,
    lim2: DFF<Bits<T_W>>,
    never2: DFF<Bit>,
    exp_v: DFF<Bit>,
    exp_q: DFF<Bits<QA>>,
    exp_m: DFF<Bits<2>>,
    init: DFF<Bit>,
    iv: DFF<Bit>,
    iq: DFF<Bits<QA>>,
    qpw_init: Signal<Local, Bit>,
    e_mode: Signal<Local, Bits<2>>,
    e_code: Signal<Local, Bits<5>>,
    e_start: Signal<Local, Bits<T_W>>,
    t_out: Signal<Local, Bits<5>>,
    rnr_lim: Signal<Local, Bits<24>>,
    ack_lim: Signal<Local, Bits<T_W>>,
    hit: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    w_addr: Signal<Local, Bits<QA>>,
    w_en: Signal<Local, Bit>,
    unit_m1: Constant<Bits<16>>,
    x_tmo: Constant<Bits<10>>,
    x_init: Constant<Bits<10>>,
    rnr_rom: Vec<Constant<Bits<24>>>,
    codes: Vec<Constant<Bits<5>>>,
    one: Constant<Bits<T_W>>,
    four: Constant<Bits<8>>,
    m_off: Constant<Bits<2>>,
    m_ack: Constant<Bits<2>>,
    m_rnr: Constant<Bits<2>>,
}

impl Timers {
    /// `unit_cycles`: core clock cycles per timer unit (40 at 156.25 MHz, 64 at 250 MHz).
    pub fn new(unit_cycles: u64) -> Self {
        assert!((1..1 << 16).contains(&unit_cycles));
        assert_eq!(QP_CTX.field("timeout").width, 5);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_qpw_en: Default::default(),
            s_qpw_index: Default::default(),
            s_qpw_data: Default::default(),
            s_set_en: Default::default(),
            s_set_qpn: Default::default(),
            s_set_mode: Default::default(),
            s_set_code: Default::default(),
            m_exp_valid: Default::default(),
            m_exp_qpn: Default::default(),
            m_exp_mode: Default::default(),
            s_exp_ready: Default::default(),
            ent: RAM::default(),
            tmo: RAM::default(),
            div: Default::default(),
            now: Default::default(),
            si: Default::default(),
            v1: Default::default(),
            q1: Default::default(),
            v2: Default::default(),
            q2: Default::default(),
            mode2: Default::default(),
            el2: Default::default(),
            lim2: Default::default(),
            never2: Default::default(),
            exp_v: Default::default(),
            exp_q: Default::default(),
            exp_m: Default::default(),
            init: Default::default(),
            iv: Default::default(),
            iq: Default::default(),
            qpw_init: Default::default(),
            e_mode: Default::default(),
            e_code: Default::default(),
            e_start: Default::default(),
            t_out: Default::default(),
            rnr_lim: Default::default(),
            ack_lim: Default::default(),
            hit: Default::default(),
            take: Default::default(),
            w_addr: Default::default(),
            w_en: Default::default(),
            unit_m1: k(unit_cycles - 1),
            x_tmo: field_at(&QP_CTX, "timeout"),
            x_init: field_at(&QP_CTX, "init_sq"),
            rnr_rom: (0..32).map(|c| k(rnr_wait_units(c))).collect(),
            codes: (0..32).map(k).collect(),
            one: k(1),
            four: k(4),
            m_off: k(MODE_OFF),
            m_ack: k(MODE_ACK),
            m_rnr: k(MODE_RNR),
        }
    }
}

impl Logic for Timers {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, div, now, si, v1, q1, v2, q2, mode2, el2, lim2, never2, exp_v, exp_q, exp_m,
            init, iv, iq
        );
        self.ent.read_clock.next = self.clk.val();
        self.ent.write_clock.next = self.clk.val();
        self.tmo.read_clock.next = self.clk.val();
        self.tmo.write_clock.next = self.clk.val();
        // The clock, in units.
        self.div.d.next = self.div.q.val() + bits::<16>(1);
        if self.div.q.val() == self.unit_m1.val() {
            self.div.d.next = bits::<16>(0);
            self.now.d.next = self.now.q.val() + bits::<T_W>(1);
        }
        // Each QP's timeout, from the table's writes.
        self.tmo.write_address.next = self.s_qpw_index.val();
        self.tmo.write_data.next = self
            .s_qpw_data
            .val()
            .get_bits::<5>(self.x_tmo.val().index());
        self.tmo.write_enable.next = self.s_qpw_en.val();
        // The entries: a set, else a take turning its QP off.
        self.take.next = self.exp_v.q.val() & self.s_exp_ready.val();
        self.w_addr.next = self.exp_q.q.val();
        self.ent.write_data.next = bits::<E_W>(0);
        self.w_en.next = self.take.val();
        if self.s_set_en.val() {
            self.w_addr.next = self.s_set_qpn.val();
            self.ent.write_data.next = bit_cast::<E_W, 2>(self.s_set_mode.val())
                | (bit_cast::<E_W, 5>(self.s_set_code.val()) << 2)
                | (bit_cast::<E_W, T_W>(self.now.q.val()) << 7);
            self.w_en.next = true;
        }
        // A reset QP's entry: the ACK timer from now, when the port is free.
        if self.iv.q.val() & !self.w_en.val() & !self.init.q.val() {
            self.w_addr.next = self.iq.q.val();
            self.ent.write_data.next = bit_cast::<E_W, 2>(self.m_ack.val())
                | (bit_cast::<E_W, T_W>(self.now.q.val()) << 7);
            self.w_en.next = true;
            self.iv.d.next = false;
        }
        if self.s_set_en.val() & (self.s_set_qpn.val() == self.iq.q.val()) {
            self.iv.d.next = false;
        }
        self.qpw_init.next =
            self.s_qpw_en.val() & self.s_qpw_data.val().get_bit(self.x_init.val().index());
        if self.qpw_init.val() {
            self.iv.d.next = true;
            self.iq.d.next = self.s_qpw_index.val();
        }
        // After reset, every entry is turned off (256 cycles), the scan index sweeping them.
        if self.init.q.val() {
            self.w_addr.next = self.si.q.val();
            self.ent.write_data.next = bits::<E_W>(0);
            self.w_en.next = true;
            if self.si.q.val() == bits::<QA>(255) {
                self.init.d.next = false;
            }
        }
        self.ent.write_address.next = self.w_addr.val();
        self.ent.write_enable.next = self.w_en.val();
        // Stage 0: the scan index reads its QP.
        self.si.d.next = self.si.q.val() + bits::<QA>(1);
        self.ent.read_address.next = self.si.q.val();
        self.tmo.read_address.next = self.si.q.val();
        self.q1.d.next = self.si.q.val();
        // (A write to the QP read this cycle: the read may predate it.)
        self.v1.d.next =
            !(self.w_en.val() & (self.w_addr.val() == self.si.q.val())) & !self.init.q.val();
        // Stage 1: elapsed time and the limit of the entry's mode.
        self.e_mode.next = self.ent.read_data.val().get_bits::<2>(0);
        self.e_code.next = self.ent.read_data.val().get_bits::<5>(2);
        self.e_start.next = self.ent.read_data.val().get_bits::<T_W>(7);
        self.t_out.next = self.tmo.read_data.val();
        self.rnr_lim.next = bits::<24>(0);
        for c in 0..32 {
            if self.e_code.val() == self.codes[c].val() {
                self.rnr_lim.next = self.rnr_rom[c].val();
            }
        }
        self.ack_lim.next =
            self.one.val() << (bit_cast::<8, 5>(self.t_out.val()) + self.four.val());
        self.el2.d.next = self.now.q.val() - self.e_start.val();
        self.mode2.d.next = self.e_mode.val();
        self.q2.d.next = self.q1.q.val();
        self.v2.d.next = self.v1.q.val()
            & !(self.w_en.val() & (self.w_addr.val() == self.q1.q.val()))
            & (self.e_mode.val() != self.m_off.val());
        self.never2.d.next = false;
        self.lim2.d.next = bits::<T_W>(0);
        if self.e_mode.val() == self.m_ack.val() {
            self.lim2.d.next = self.ack_lim.val();
            self.never2.d.next = self.t_out.val() == bits::<5>(0);
        } else if self.e_mode.val() == self.m_rnr.val() {
            self.lim2.d.next = bit_cast::<T_W, 24>(self.rnr_lim.val());
        }
        // Stage 2: expired? Into the expiry register when it is free.
        self.hit.next = self.v2.q.val()
            & !(self.w_en.val() & (self.w_addr.val() == self.q2.q.val()))
            & !self.never2.q.val()
            & (self.el2.q.val() >= self.lim2.q.val());
        if self.take.val() {
            self.exp_v.d.next = false;
        }
        if self.s_set_en.val() & (self.s_set_qpn.val() == self.exp_q.q.val()) {
            self.exp_v.d.next = false;
        }
        if self.qpw_init.val() & (self.s_qpw_index.val() == self.exp_q.q.val()) {
            self.exp_v.d.next = false;
        }
        if self.hit.val() & (!self.exp_v.q.val() | self.take.val()) {
            self.exp_v.d.next = true;
            self.exp_q.d.next = self.q2.q.val();
            self.exp_m.d.next = self.mode2.q.val();
        }
        self.m_exp_valid.next = self.exp_v.q.val();
        self.m_exp_qpn.next = self.exp_q.q.val();
        self.m_exp_mode.next = self.exp_m.q.val();
        if self.rst.val() {
            self.div.d.next = bits::<16>(0);
            self.now.d.next = bits::<T_W>(0);
            self.si.d.next = bits::<QA>(0);
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.exp_v.d.next = false;
            self.iv.d.next = false;
            self.init.d.next = true;
        }
    }
}

/// Core clock cycles per timer unit at a clock of `clock_khz` (a whole number at the NIC's
/// clocks: 40 at 156.25 MHz, 64 at 250 MHz).
pub fn timer_unit_cycles(clock_khz: u32) -> u64 {
    let x = u64::from(clock_khz) * ferroce_spec::headers::TIMER_UNIT_NS;
    assert_eq!(
        x % 1_000_000,
        0,
        "{clock_khz} kHz: not a whole number of cycles per unit"
    );
    x / 1_000_000
}
