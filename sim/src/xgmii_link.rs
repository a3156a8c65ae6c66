//! A 10G Ethernet link at the XGMII: one direction per [`XgmiiLink`], from one model's
//! transmit word (`xgmii_txd`, `xgmii_txc`) to another's receive word (`xgmii_rxd`,
//! `xgmii_rxc`), one 64-bit word per clock each way (10 Gb/s at 156.25 MHz).
//!
//! - **The wire**: the sender's words, read every clock, go out in 4-lane columns (a /S/ sits
//!   on lane 0 or 4, so columns keep every start legal). The words reach the receiver
//!   `propagation_ps` later, rounded up to whole clocks, and at least two (so the order in
//!   which the two models are stepped does not change the timing); [`XgmiiLink::config`]
//!   gives the delay as rounded.
//! - **Link up**: words before the sender's first all-idle word (its reset) go out as idles.
//! - **pcap tap** ([`XgmiiLink::tap`]): every frame on the wire, read back with
//!   [`crate::xgmii::WireReader`] (clause 46, nothing shared with the HDL), without its FCS,
//!   stamped with the time its first byte after the SFD was on the wire (nanoseconds of
//!   simulated time; a byte is 800 ps), the same instant the frame-level link stamps. Frames
//!   the sender broke (an /E/, a missing /T/) are counted in [`XgmiiStats::broken`], not
//!   written.
//! - **Traffic generator** ([`XgmiiLink::inject`]): frames of the test's own put on the wire
//!   at chosen times, FCS appended: at the first gap between the sender's frames (at least two
//!   idle columns into it) at or after the time asked, /S/ on lane 0 or 4, then three idle
//!   columns.
//!   Meanwhile the sender's words wait in an elastic buffer, which drains by deleting idle
//!   columns in later gaps, never leaving fewer than two idle columns (8 bytes) between
//!   frames: a PHY's rate matching. So an injected frame delays the sender's next frames by at
//!   most its own length, for a while.
//! - **Faults** ([`XgmiiLink::set_fault_hook`]): a hook sees each frame's index as its /S/
//!   goes by and returns a [`LaneFault`]: pass, drop (the frame's lanes become idles), corrupt
//!   a byte (XOR, offset counted from the first byte after the SFD), or a code error (/E/ in
//!   place of that byte). The tap records frames before the fault, as the sender sent them.
//! - Deterministic: everything follows from the two models and the hook.
//!
//! The two halves are [`Component`]s of the two testbenches, stepped in lockstep.

use crate::link::{LinkConfig, LinkStats};
use crate::model::{Model, Port};
use crate::pcap_tap::PcapTap;
use crate::tb::{Component, Tb};
use crate::xgmii::{lanes_of, word_of, Lane, WireReader};
use crate::{Result, SimError};
use ferroce_spec::xgmii::{ERROR, IDLE, PREAMBLE, SFD, START, TERMINATE};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

/// What happens to one frame on the XGMII link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneFault {
    Pass,
    /// The frame's lanes, /S/ to its end, become idles.
    Drop,
    /// XOR `mask` into the byte `offset` bytes after the SFD (none if the frame is shorter).
    Corrupt {
        offset: usize,
        mask: u8,
    },
    /// An /E/ in place of the byte `offset` bytes after the SFD.
    CodeError {
        offset: usize,
    },
}

/// What the XGMII link did, beyond [`LinkStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XgmiiStats {
    /// Frames the sender ended wrongly or framed wrongly (clause 46 broken on transmit).
    pub broken: u64,
    /// Frames given an /E/ by the fault hook.
    pub code_errors: u64,
    /// Frames injected by the traffic generator.
    pub injected: u64,
    /// Idle columns deleted to drain the elastic buffer.
    pub deleted_columns: u64,
    /// The elastic buffer's largest backlog, in columns.
    pub max_backlog: usize,
}

type Column = [Lane; 4];
type Hook = Box<dyn FnMut(u64) -> LaneFault>;

const IDLE_COL: Column = [(IDLE, true); 4];

struct State {
    cfg: LinkConfig,
    txd: Port,
    txc: Port,
    rxd: Port,
    rxc: Port,
    period_ps: u64,
    lane_ps: u64,
    /// Simulated time at connection: lane and column times count from it.
    base_ps: u64,
    delay: u64,
    up: bool,
    /// Columns emitted so far (the wire's clock, in half words).
    tx_cols: u64,
    rx_cycle: u64,
    /// The sender's columns not yet on the wire.
    buf: VecDeque<Column>,
    /// An injected frame's columns still to go out.
    inj_cols: VecDeque<Column>,
    /// Frames to inject: (not before, bytes with FCS), in time order.
    inject: VecDeque<(u64, Vec<u8>)>,
    /// The wire is inside a frame after the last column emitted.
    in_frame: bool,
    /// All-idle columns emitted since the last frame ended.
    idle_cols: u32,
    reader: WireReader,
    hook: Option<Hook>,
    fault: LaneFault,
    /// Frames seen starting, and the current frame's byte count after its SFD (faults).
    starts: u64,
    data_at: Option<usize>,
    pre_left: usize,
    dropping: bool,
    line: VecDeque<(u64, u64, u64)>,
    pcap: Option<PcapTap>,
    stats: LinkStats,
    xstats: XgmiiStats,
}

/// One direction of an XGMII link.
#[derive(Clone)]
pub struct XgmiiLink(Rc<RefCell<State>>);

struct TxHalf(Rc<RefCell<State>>);
struct RxHalf(Rc<RefCell<State>>);

fn is_idle(c: &Column) -> bool {
    c.iter().all(|&(b, k)| k && b == IDLE)
}

impl XgmiiLink {
    /// Connect `a`'s `<from>d`/`<from>c` XGMII output (e.g. `xgmii_tx`) to `b`'s `<to>d`/
    /// `<to>c` input. Both testbenches must share one clock, whose period sets the rate (64
    /// bits a clock); `cfg.rate_bps` must agree with it.
    pub fn connect(
        a: &mut Tb,
        from: &str,
        b: &mut Tb,
        to: &str,
        cfg: LinkConfig,
    ) -> Result<XgmiiLink> {
        let period_ps = a.period_ps();
        if period_ps != b.period_ps() {
            return Err(SimError::Design(format!(
                "XGMII link between clocks of {} and {} ps: both ends must share one clock",
                period_ps,
                b.period_ps()
            )));
        }
        if 64 * 1_000_000_000_000 != cfg.rate_bps * period_ps {
            return Err(SimError::Design(format!(
                "an XGMII link carries 64 bits every {period_ps} ps, not {} b/s",
                cfg.rate_bps
            )));
        }
        let delay = cfg.propagation_ps.div_ceil(period_ps).max(2);
        let state = State {
            cfg: LinkConfig {
                propagation_ps: delay * period_ps,
                ..cfg
            },
            txd: a.model_ref().port(&format!("{from}d"))?,
            txc: a.model_ref().port(&format!("{from}c"))?,
            rxd: b.model_ref().port(&format!("{to}d"))?,
            rxc: b.model_ref().port(&format!("{to}c"))?,
            period_ps,
            lane_ps: period_ps / 8,
            base_ps: a.time_ps(),
            delay,
            up: false,
            tx_cols: 0,
            rx_cycle: 0,
            buf: VecDeque::new(),
            inj_cols: VecDeque::new(),
            inject: VecDeque::new(),
            in_frame: false,
            idle_cols: 0,
            reader: WireReader::new(),
            hook: None,
            fault: LaneFault::Pass,
            starts: 0,
            data_at: None,
            pre_left: 0,
            dropping: false,
            line: VecDeque::new(),
            pcap: None,
            stats: LinkStats::default(),
            xstats: XgmiiStats::default(),
        };
        let state = Rc::new(RefCell::new(state));
        let txh = Rc::new(RefCell::new(TxHalf(state.clone())));
        a.add(txh);
        let rxh = Rc::new(RefCell::new(RxHalf(state.clone())));
        rxh.borrow_mut().drive(b.model())?;
        b.add(rxh);
        Ok(XgmiiLink(state))
    }

    /// Decide each frame's fate with `hook(frame index)`, called as its /S/ goes by.
    pub fn set_fault_hook(&self, hook: impl FnMut(u64) -> LaneFault + 'static) {
        self.0.borrow_mut().hook = Some(Box::new(hook));
    }

    /// Write every frame to a pcap at `path` (nanosecond timestamps, no FCS).
    pub fn tap(&self, path: &Path) -> Result<()> {
        self.0.borrow_mut().pcap = Some(PcapTap::create(path)?);
        Ok(())
    }

    /// Put `frame` (no FCS: it is appended) on the wire at `at_ps` of simulated time, or at
    /// the first gap between the sender's frames after that; in the order given.
    pub fn inject(&self, at_ps: u64, frame: &[u8]) {
        let mut f = frame.to_vec();
        f.extend(ferroce_spec::crc::crc32(frame).to_le_bytes());
        self.0.borrow_mut().inject.push_back((at_ps, f));
    }

    /// Frames given to [`XgmiiLink::inject`] and not on the wire yet.
    pub fn inject_backlog(&self) -> usize {
        self.0.borrow().inject.len()
    }

    /// The link's parameters, `propagation_ps` the delay it really has (whole clocks).
    pub fn config(&self) -> LinkConfig {
        self.0.borrow().cfg
    }

    pub fn stats(&self) -> LinkStats {
        self.0.borrow().stats
    }

    pub fn xgmii_stats(&self) -> XgmiiStats {
        self.0.borrow().xstats
    }

    /// No frame on the wire, waiting to go on it, or in flight.
    pub fn idle(&self) -> bool {
        let s = self.0.borrow();
        !s.in_frame
            && s.inj_cols.is_empty()
            && s.buf.iter().all(is_idle)
            && s.line
                .iter()
                .all(|&(_, d, c)| lanes_of(d, c).iter().all(|&(b, k)| k && b == IDLE))
    }

    pub fn pcap_error(&self) -> Option<String> {
        self.0.borrow().pcap.as_ref().and_then(|p| p.error())
    }
}

/// The columns of an injected frame (bytes with FCS): /S/ first, preamble, SFD, the
/// bytes, /T/, idles to the column's end, then three idle columns (a 12-byte gap at least).
fn frame_columns(frame: &[u8]) -> VecDeque<Column> {
    let mut l: Vec<Lane> = vec![(START, true)];
    l.extend(std::iter::repeat_n((PREAMBLE, false), 6));
    l.push((SFD, false));
    l.extend(frame.iter().map(|&b| (b, false)));
    l.push((TERMINATE, true));
    while !l.len().is_multiple_of(4) {
        l.push((IDLE, true));
    }
    l.extend(std::iter::repeat_n((IDLE, true), 12));
    l.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

impl State {
    /// The next column on the wire, from an injection, or the sender's elastic buffer.
    fn next_column(&mut self, now_ps: u64) -> Column {
        if let Some(c) = self.inj_cols.pop_front() {
            return c;
        }
        let due = self.inject.front().is_some_and(|(at, _)| *at <= now_ps);
        if due && !self.in_frame && self.idle_cols >= 2 {
            if let Some((_, f)) = self.inject.pop_front() {
                self.xstats.injected += 1;
                self.inj_cols = frame_columns(&f);
                if let Some(c) = self.inj_cols.pop_front() {
                    return c;
                }
            }
        }
        // Drain a backlog by deleting idle columns deep enough into a gap.
        while self.buf.len() > 2
            && !self.in_frame
            && self.idle_cols >= 2
            && self.buf.front().is_some_and(is_idle)
        {
            self.buf.pop_front();
            self.xstats.deleted_columns += 1;
        }
        self.buf.pop_front().unwrap_or(IDLE_COL)
    }

    /// Follow the wire's framing: a frame from /S/ to the first other control lane but /E/.
    fn track(&mut self, c: &Column) {
        if is_idle(c) {
            self.idle_cols = self.idle_cols.saturating_add(1);
        }
        for &(b, k) in c {
            if !k {
                continue;
            }
            if b == START {
                self.in_frame = true;
                self.idle_cols = 0;
            } else if b != ERROR && self.in_frame {
                self.in_frame = false;
                self.idle_cols = 0;
            }
        }
    }

    /// Tap the column (frames as sent), then apply this frame's fault to it.
    fn read_and_fault(&mut self, c: &mut Column) {
        for lane in c.iter_mut() {
            let pos = self.reader.position() as u64;
            match self.reader.push(*lane) {
                Ok(Some(f)) => {
                    let first = self.base_ps + (f.start as u64 + 8) * self.lane_ps;
                    let len = f.bytes.len() as u64;
                    self.stats.frames += 1;
                    self.stats.bytes += len;
                    self.stats.first_start_ps.get_or_insert(first);
                    self.stats.last_end_ps = self.base_ps + (pos + 1) * self.lane_ps;
                    if let Some(p) = &mut self.pcap {
                        p.write(first, &f.bytes[..f.bytes.len().saturating_sub(4)]);
                    }
                }
                Ok(None) => {}
                Err(_) => self.xstats.broken += 1,
            }
            self.fault_lane(lane);
        }
    }

    fn fault_lane(&mut self, lane: &mut Lane) {
        let (b, k) = *lane;
        if k && b == START {
            self.fault = match &mut self.hook {
                Some(h) => h(self.starts),
                None => LaneFault::Pass,
            };
            self.starts += 1;
            self.pre_left = 7;
            self.data_at = None;
            self.dropping = self.fault == LaneFault::Drop;
            if self.dropping {
                self.stats.dropped += 1;
                *lane = (IDLE, true);
            }
            return;
        }
        if self.dropping {
            // Idles up to and including the lane that ends the frame.
            if k && b != ERROR {
                self.dropping = false;
            }
            *lane = (IDLE, true);
            return;
        }
        if self.pre_left > 0 {
            self.pre_left -= 1;
            if self.pre_left == 0 {
                self.data_at = Some(0);
            }
            return;
        }
        let Some(at) = self.data_at else {
            return;
        };
        if k {
            self.data_at = None;
            return;
        }
        match self.fault {
            LaneFault::Corrupt { offset, mask } if offset == at => {
                lane.0 ^= mask;
                self.stats.corrupted += 1;
            }
            LaneFault::CodeError { offset } if offset == at => {
                *lane = (ERROR, true);
                self.xstats.code_errors += 1;
            }
            _ => {}
        }
        self.data_at = Some(at + 1);
    }
}

impl Component for TxHalf {
    fn sample(&mut self, model: &Model) {
        let mut s = self.0.borrow_mut();
        let lanes = lanes_of(model.get(s.txd), model.get(s.txc));
        let all_idle = lanes.iter().all(|&(b, k)| k && b == IDLE);
        s.up |= all_idle;
        let lanes = if s.up { lanes } else { [(IDLE, true); 8] };
        s.buf.push_back([lanes[0], lanes[1], lanes[2], lanes[3]]);
        s.buf.push_back([lanes[4], lanes[5], lanes[6], lanes[7]]);
        s.xstats.max_backlog = s.xstats.max_backlog.max(s.buf.len() - 2);
        let mut word = [(IDLE, true); 8];
        for half in 0..2 {
            let now = s.base_ps + s.tx_cols * s.period_ps / 2;
            let mut c = s.next_column(now);
            s.track(&c);
            s.read_and_fault(&mut c);
            word[4 * half..4 * half + 4].copy_from_slice(&c);
            s.tx_cols += 1;
        }
        let (d, c) = word_of(&word);
        let arrive = s.tx_cols / 2 + s.delay;
        s.line.push_back((arrive, d, c));
    }

    fn drive(&mut self, _model: &mut Model) -> Result<()> {
        Ok(())
    }
}

impl Component for RxHalf {
    fn sample(&mut self, _model: &Model) {}

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        let mut s = self.0.borrow_mut();
        s.rx_cycle += 1;
        let now = s.rx_cycle;
        let (mut d, mut c) = word_of(&[(IDLE, true); 8]);
        if s.line.front().is_some_and(|(t, _, _)| *t <= now) {
            if let Some((_, wd, wc)) = s.line.pop_front() {
                (d, c) = (wd, wc);
            }
        }
        let (rxd, rxc) = (s.rxd, s.rxc);
        model.set(rxd, d)?;
        model.set(rxc, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xgmii::check_wire;

    #[test]
    fn injected_frames_are_legal_columns() {
        let cols = frame_columns(&[0xaa; 64]);
        let lanes: Vec<Lane> = cols.iter().flatten().copied().collect();
        let got = check_wire(&lanes).expect("legal");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].bytes, vec![0xaa; 64]);
        assert!(is_idle(cols.back().expect("columns")));
    }
}
