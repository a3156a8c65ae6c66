//! An Ethernet link between two simulated NICs: one direction per [`Link`], from one model's
//! frame output (`m_axis_*`, frames with FCS) to another's frame input (`s_axis_*`, no
//! `tready`: the wire does not wait).
//!
//! - **Timing**: the wire carries `rate_bps`; every frame also costs `overhead_bytes` (7 bytes
//!   preamble, 1 SFD, 12 inter-frame gap = 20 at 10GBASE-R), so the sender's `tready` drops
//!   after a frame until the wire is free again, and the receiver sees a frame `propagation_ps`
//!   after it started on the wire.
//! - **pcap tap** ([`Link::tap`]): every frame as the sender put it on the wire (before any
//!   fault), without FCS, stamped with its start time in nanoseconds of simulated time.
//! - **Faults** ([`Link::set_fault_hook`]): a hook sees each frame (index, bytes with FCS) and
//!   returns a [`Fault`]: pass, drop, corrupt (XOR a byte), a PHY error (the frame arrives
//!   with `tuser` on its last beat, as a hard MAC flags a frame its PCS saw broken), delay
//!   (frames behind a delayed frame wait for it: a link keeps order), duplicate (the frame
//!   arrives twice, back to back) or reorder (the frame arrives later and the frames behind it
//!   overtake it, as across the paths of a multipath fabric). [`RandomFaults`](crate::RandomFaults) makes a hook of
//!   seeded random loss, corruption, duplication, reordering and loss bursts.
//! - **Traffic generator** ([`Link::inject`]): frames of the test's own (PFC and PAUSE frames
//!   from `spec::mac_ctrl`, or anything else) put on the wire at chosen times, FCS appended,
//!   as if the sending MAC had sent them: at the first gap between its frames at or after the
//!   time asked, holding its next frame back while they are on the wire.
//! - Deterministic: everything follows from the two models and the hook; no wall clock.
//!
//! The two halves are [`Component`]s of the two testbenches, which the caller steps in lockstep
//! (same clock period), one cycle each in turn.
//!
//! A link may also have only one end on a model, for a wire to the world outside the
//! simulation (`crate::bridge`): [`Link::egress`] takes a model's frames off the wire into an
//! outbox ([`Link::take_frames`]), [`Link::ingress`] puts frames given to [`Link::inject`] on
//! a wire into a model. Timing, pcap tap and faults are those of a whole link.

pub use crate::fault::Fault;
use crate::model::{Model, Port};
use crate::pcap_tap::PcapTap;
use crate::tb::{Component, Tb};
use crate::{Result, SimError};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

/// Link parameters.
#[derive(Clone, Copy, Debug)]
pub struct LinkConfig {
    pub rate_bps: u64,
    /// Bytes on the wire per frame beyond the frame itself (preamble, SFD, inter-frame gap).
    pub overhead_bytes: u64,
    /// Time of flight: about 5 ns per metre of fibre or copper.
    pub propagation_ps: u64,
}

impl Default for LinkConfig {
    /// 10 Gb/s, 20 bytes per frame, 2 m of cable.
    fn default() -> Self {
        LinkConfig {
            rate_bps: 10_000_000_000,
            overhead_bytes: 20,
            propagation_ps: 10_000,
        }
    }
}

impl LinkConfig {
    /// Picoseconds the wire is busy with `bytes` bytes.
    pub fn wire_ps(&self, bytes: u64) -> u64 {
        (bytes * 8 * 1_000_000_000_000).div_ceil(self.rate_bps)
    }
}

/// Counts of what the link did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub frames: u64,
    /// Frame bytes including FCS, without preamble and gap.
    pub bytes: u64,
    pub dropped: u64,
    pub corrupted: u64,
    pub phy_errors: u64,
    pub delayed: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Frames dropped in bursts (also counted in `dropped`).
    pub burst_dropped: u64,
    /// Start time of the first frame and end time of the last one on the wire (ps).
    pub first_start_ps: Option<u64>,
    pub last_end_ps: u64,
}

/// (frame index, the frame's start on the wire in ps, bytes with FCS) -> its fate.
type Hook = Box<dyn FnMut(u64, u64, &[u8]) -> Fault>;

struct TxPorts {
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
}

struct Tx {
    /// Whether the sending model steps first in its cycle ([`Tb::lead_flag`]).
    lead: Rc<std::cell::Cell<bool>>,
    /// The sending model's ports; `None` on an ingress link (only injected frames).
    ports: Option<TxPorts>,
    lanes: usize,
    period_ps: u64,
    now_ps: u64,
    ready: bool,
    wire_free_ps: u64,
    frame: Vec<u8>,
    start_ps: u64,
}

struct Rx {
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    /// `<to>_tuser`, where the receiver has it.
    tuser: Option<Port>,
    lanes: usize,
    period_ps: u64,
    now_ps: u64,
    /// (arrival time, bytes, PHY error), in wire order.
    queue: VecDeque<(u64, Vec<u8>, bool)>,
    /// Frames the sender finished in a cycle's sampling, not yet in `queue`: (the cycle's
    /// start, arrival time, bytes, PHY error). See [`Link`], "Frames finished while the
    /// sender samples".
    staged: Vec<(u64, u64, Vec<u8>, bool)>,
    current: Option<(Vec<u8>, usize, bool)>,
}

struct State {
    cfg: LinkConfig,
    tx: Tx,
    /// The receiving model; `None` on an egress link (frames go to `outbox`).
    rx: Option<Rx>,
    /// Frames (with FCS) that left an egress link, with their arrival times, in arrival order.
    outbox: VecDeque<(u64, Vec<u8>)>,
    /// The arrival time of the last frame that keeps its place (not reordered): no frame
    /// behind it arrives earlier.
    in_order_ps: u64,
    hook: Option<Hook>,
    pcap: Option<PcapTap>,
    stats: LinkStats,
    /// Frames to inject: (not before, bytes with FCS), in time order.
    inject: VecDeque<(u64, Vec<u8>)>,
    /// Set while the sender's sampling puts a frame on the wire: the cycle's start.
    staging: Option<u64>,
}

/// One direction of a link.
///
/// # Frames finished while the sender samples
/// Stepped one after the other, the first model drives before the second samples: the
/// second's frames reach the first a cycle later than the other way round. Stepped together
/// (both sample, then both drive: [`crate::host::SimNic`]), a frame finished in a sampling is
/// staged; the receiver takes it that cycle only if the sender leads ([`Tb::lead_flag`]),
/// otherwise the next.
#[derive(Clone)]
pub struct Link(Rc<RefCell<State>>);

struct TxHalf(Rc<RefCell<State>>);
struct RxHalf(Rc<RefCell<State>>);

fn stream_ports(m: &Model, prefix: &str) -> Result<(Port, Port, Port, Port)> {
    Ok((
        m.port(&format!("{prefix}_tdata"))?,
        m.port(&format!("{prefix}_tkeep"))?,
        m.port(&format!("{prefix}_tlast"))?,
        m.port(&format!("{prefix}_tvalid"))?,
    ))
}

fn rx_end(b: &Tb, to: &str) -> Result<Rx> {
    let (tdata, tkeep, tlast, tvalid) = stream_ports(b.model_ref(), to)?;
    let user = format!("{to}_tuser");
    let tuser = if b.model_ref().has_port(&user) {
        Some(b.model_ref().port(&user)?)
    } else {
        None
    };
    Ok(Rx {
        tdata,
        tkeep,
        tlast,
        tvalid,
        tuser,
        lanes: tdata.width / 8,
        period_ps: b.period_ps(),
        now_ps: b.time_ps(),
        queue: VecDeque::new(),
        staged: Vec::new(),
        current: None,
    })
}

fn tx_end(a: &Tb, from: Option<&str>) -> Result<Tx> {
    let (ports, lanes) = match from {
        Some(from) => {
            let (tdata, tkeep, tlast, tvalid) = stream_ports(a.model_ref(), from)?;
            let tready = a.model_ref().port(&format!("{from}_tready"))?;
            let lanes = tdata.width / 8;
            let p = TxPorts {
                tdata,
                tkeep,
                tlast,
                tvalid,
                tready,
            };
            (Some(p), lanes)
        }
        None => (None, 0),
    };
    Ok(Tx {
        lead: a.lead_flag(),
        ports,
        lanes,
        period_ps: a.period_ps(),
        now_ps: a.time_ps(),
        ready: true,
        wire_free_ps: 0,
        frame: Vec::new(),
        start_ps: 0,
    })
}

impl Link {
    /// Connect `a`'s `<from>_*` frame output to `b`'s `<to>_*` frame input.
    pub fn connect(a: &mut Tb, from: &str, b: &mut Tb, to: &str, cfg: LinkConfig) -> Result<Link> {
        if a.period_ps() != b.period_ps() {
            return Err(SimError::Design(format!(
                "link between clocks of {} and {} ps: both ends must share one clock period",
                a.period_ps(),
                b.period_ps()
            )));
        }
        let tx = tx_end(a, Some(from))?;
        let rx = rx_end(b, to)?;
        let link = Link::new(cfg, tx, Some(rx));
        link.attach_tx(a)?;
        link.attach_rx(b)?;
        Ok(link)
    }

    /// A link from `a`'s `<from>_*` frame output to the outside: its frames (with FCS) wait
    /// in an outbox for [`Link::take_frames`].
    pub fn egress(a: &mut Tb, from: &str, cfg: LinkConfig) -> Result<Link> {
        let link = Link::new(cfg, tx_end(a, Some(from))?, None);
        link.attach_tx(a)?;
        Ok(link)
    }

    /// A link from the outside into `b`'s `<to>_*` frame input: it carries the frames given
    /// to [`Link::inject`].
    pub fn ingress(b: &mut Tb, to: &str, cfg: LinkConfig) -> Result<Link> {
        let link = Link::new(cfg, tx_end(b, None)?, Some(rx_end(b, to)?));
        link.attach_tx(b)?;
        link.attach_rx(b)?;
        Ok(link)
    }

    fn new(cfg: LinkConfig, tx: Tx, rx: Option<Rx>) -> Link {
        Link(Rc::new(RefCell::new(State {
            cfg,
            tx,
            rx,
            outbox: VecDeque::new(),
            in_order_ps: 0,
            hook: None,
            pcap: None,
            stats: LinkStats::default(),
            inject: VecDeque::new(),
            staging: None,
        })))
    }

    fn attach_tx(&self, a: &mut Tb) -> Result<()> {
        let txh = Rc::new(RefCell::new(TxHalf(self.0.clone())));
        txh.borrow_mut().drive(a.model())?;
        a.add(txh);
        Ok(())
    }

    fn attach_rx(&self, b: &mut Tb) -> Result<()> {
        let rxh = Rc::new(RefCell::new(RxHalf(self.0.clone())));
        rxh.borrow_mut().drive(b.model())?;
        b.add(rxh);
        Ok(())
    }

    /// The frames (with FCS) that reached the far end of an egress link since the last call,
    /// in arrival order.
    pub fn take_frames(&self) -> Vec<Vec<u8>> {
        let mut s = self.0.borrow_mut();
        let now = s.tx.now_ps;
        let n = s.outbox.iter().take_while(|(t, _)| *t <= now).count();
        s.outbox.drain(..n).map(|(_, f)| f).collect()
    }

    /// The sending end's simulated time (ps).
    pub fn now_ps(&self) -> u64 {
        self.0.borrow().tx.now_ps
    }

    /// Frames given to [`Link::inject`] and not on the wire yet.
    pub fn inject_backlog(&self) -> usize {
        self.0.borrow().inject.len()
    }

    /// Decide each frame's fate with `hook(frame index, frame bytes with FCS)`.
    pub fn set_fault_hook(&self, mut hook: impl FnMut(u64, &[u8]) -> Fault + 'static) {
        self.set_timed_fault_hook(move |i, _, f| hook(i, f));
    }

    /// Decide each frame's fate with `hook(frame index, start on the wire in ps, frame bytes
    /// with FCS)`.
    pub fn set_timed_fault_hook(&self, hook: impl FnMut(u64, u64, &[u8]) -> Fault + 'static) {
        self.0.borrow_mut().hook = Some(Box::new(hook));
    }

    /// Write every frame to a pcap at `path` (nanosecond timestamps, no FCS).
    pub fn tap(&self, path: &Path) -> Result<()> {
        self.0.borrow_mut().pcap = Some(PcapTap::create(path)?);
        Ok(())
    }

    /// Put `frame` (no FCS: it is appended) on the wire at `at_ps` of simulated time, or at
    /// the first gap between the sender's frames after that. Frames are injected in the order
    /// given.
    pub fn inject(&self, at_ps: u64, frame: &[u8]) {
        let mut f = frame.to_vec();
        f.extend(ferroce_spec::crc::crc32(frame).to_le_bytes());
        self.0.borrow_mut().inject.push_back((at_ps, f));
    }

    /// The link's parameters.
    pub fn config(&self) -> LinkConfig {
        self.0.borrow().cfg
    }

    pub fn stats(&self) -> LinkStats {
        self.0.borrow().stats
    }

    /// No frame on the wire or in flight.
    pub fn idle(&self) -> bool {
        let s = self.0.borrow();
        s.tx.frame.is_empty()
            && s.inject.is_empty()
            && s.outbox.is_empty()
            && s.rx
                .as_ref()
                .is_none_or(|r| r.queue.is_empty() && r.staged.is_empty() && r.current.is_none())
    }

    /// A pcap write that failed, if any (the simulation goes on; the test should fail).
    pub fn pcap_error(&self) -> Option<String> {
        self.0.borrow().pcap.as_ref().and_then(|p| p.error())
    }
}

impl State {
    /// The sending end's clock edge: time moves on, a due injected frame takes the wire.
    fn tx_cycle(&mut self) {
        let t = &mut self.tx;
        t.now_ps += t.period_ps;
        // An injected frame takes the wire between the MAC's frames once it is due.
        let (now, free, between) = (t.now_ps, t.wire_free_ps, t.frame.is_empty());
        if between && now >= free && self.inject.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, f)) = self.inject.pop_front() {
                self.on_wire(f, now);
            }
        }
        let t = &mut self.tx;
        // Take beats while the wire has room: within a frame the MAC's beats are the wire's
        // bytes; between frames, wait out the frame's time and the gap.
        t.ready = !t.frame.is_empty() || t.now_ps >= t.wire_free_ps;
    }

    fn frame_done(&mut self) {
        let frame = std::mem::take(&mut self.tx.frame);
        let start = self.tx.start_ps;
        self.staging = Some(self.tx.now_ps);
        self.on_wire(frame, start);
        self.staging = None;
    }

    /// A frame (with FCS) that started on the wire at `start`: time, pcap, fault, receiver.
    fn on_wire(&mut self, frame: Vec<u8>, start: u64) {
        let len = frame.len() as u64;
        let end = start + self.cfg.wire_ps(len);
        self.tx.wire_free_ps = end + self.cfg.wire_ps(self.cfg.overhead_bytes);
        let index = self.stats.frames;
        self.stats.frames += 1;
        self.stats.bytes += len;
        self.stats.first_start_ps.get_or_insert(start);
        self.stats.last_end_ps = end;
        if let Some(p) = &mut self.pcap {
            p.write(start, &frame[..frame.len().saturating_sub(4)]);
        }
        let fault = match &mut self.hook {
            Some(h) => h(index, start, &frame),
            None => Fault::Pass,
        };
        let mut frame = frame;
        let mut arrive = start + self.cfg.propagation_ps;
        let mut phy_error = false;
        let mut in_order = true;
        let mut copies = 1;
        match fault {
            Fault::Pass => {}
            Fault::Drop => {
                self.stats.dropped += 1;
                return;
            }
            Fault::BurstDrop => {
                self.stats.dropped += 1;
                self.stats.burst_dropped += 1;
                return;
            }
            Fault::Corrupt { offset, mask } => {
                if !frame.is_empty() {
                    let n = frame.len();
                    frame[offset % n] ^= mask;
                }
                self.stats.corrupted += 1;
            }
            Fault::PhyError => {
                phy_error = true;
                self.stats.phy_errors += 1;
            }
            Fault::Delay { ps } => {
                arrive += ps;
                self.stats.delayed += 1;
            }
            Fault::Duplicate => {
                copies = 2;
                self.stats.duplicated += 1;
            }
            Fault::Reorder { ps } => {
                arrive += ps;
                in_order = false;
                self.stats.reordered += 1;
            }
        }
        // Outside, a frame its PCS saw broken is dropped by the receiving MAC.
        if self.rx.is_none() && phy_error {
            return;
        }
        for copy in 0..copies {
            if copy > 0 {
                arrive += self.cfg.wire_ps(len + self.cfg.overhead_bytes);
            }
            if in_order {
                arrive = arrive.max(self.in_order_ps);
                self.in_order_ps = arrive;
            }
            let f = frame.clone();
            match &mut self.rx {
                Some(rx) => match self.staging {
                    Some(cycle) => rx.staged.push((cycle, arrive, f, phy_error)),
                    None => rx.queue_frame(arrive, f, phy_error),
                },
                None => {
                    let at = arrival_slot(self.outbox.iter().map(|(t, _)| *t), arrive);
                    self.outbox.insert(at, (arrive, f));
                }
            }
        }
    }
}

/// Where a frame arriving at `t` goes in a queue of arrival times kept in order: after every
/// frame arriving at or before `t`.
fn arrival_slot(times: impl DoubleEndedIterator<Item = u64> + ExactSizeIterator, t: u64) -> usize {
    let n = times.len();
    n - times.rev().take_while(|&x| x > t).count()
}

impl Component for TxHalf {
    fn sample(&mut self, model: &Model) {
        let mut s = self.0.borrow_mut();
        let t = &mut s.tx;
        let Some(p) = &t.ports else {
            return;
        };
        if !(t.ready && model.get(p.tvalid) == 1) {
            return;
        }
        if t.frame.is_empty() {
            t.start_ps = t.now_ps.max(t.wire_free_ps);
        }
        let data = model.get_bytes(p.tdata);
        let keep = model.get_bytes(p.tkeep);
        let last = model.get(p.tlast) == 1;
        for (l, b) in data.iter().enumerate().take(t.lanes) {
            if keep[l / 8] >> (l % 8) & 1 == 1 {
                t.frame.push(*b);
            }
        }
        if last {
            s.frame_done();
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        let mut s = self.0.borrow_mut();
        s.tx_cycle();
        let t = &s.tx;
        match &t.ports {
            Some(p) => model.set(p.tready, u64::from(t.ready)),
            None => Ok(()),
        }
    }
}

impl Rx {
    fn queue_frame(&mut self, arrive: u64, f: Vec<u8>, phy_error: bool) {
        let at = arrival_slot(self.queue.iter().map(|(t, _, _)| *t), arrive);
        self.queue.insert(at, (arrive, f, phy_error));
    }
}

impl Component for RxHalf {
    fn sample(&mut self, _model: &Model) {}

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        let mut s = self.0.borrow_mut();
        let lead = s.tx.lead.get();
        let Some(r) = &mut s.rx else {
            return Ok(());
        };
        // See "Frames finished while the sender samples" on Link: a frame finished in this cycle's sampling
        // is seen now only if the sender's model steps first.
        if !r.staged.is_empty() {
            let this_cycle = r.now_ps;
            for (cycle, arrive, f, e) in std::mem::take(&mut r.staged) {
                if lead || cycle < this_cycle {
                    r.queue_frame(arrive, f, e);
                } else {
                    r.staged.push((cycle, arrive, f, e));
                }
            }
        }
        r.now_ps += r.period_ps;
        if r.current.is_none() && r.queue.front().is_some_and(|(t, _, _)| *t <= r.now_ps) {
            r.current = r.queue.pop_front().map(|(_, f, e)| (f, 0, e));
        }
        let Some((frame, at, err)) = &mut r.current else {
            if let Some(u) = r.tuser {
                model.set(u, 0)?;
            }
            return model.set(r.tvalid, 0);
        };
        let end = (*at + r.lanes).min(frame.len());
        let chunk = &frame[*at..end];
        let mut keep = vec![0u8; r.lanes.div_ceil(8)];
        for l in 0..chunk.len() {
            keep[l / 8] |= 1 << (l % 8);
        }
        model.set_bytes(r.tdata, chunk)?;
        model.set_bytes(r.tkeep, &keep)?;
        model.set(r.tlast, u64::from(end == frame.len()))?;
        model.set(r.tvalid, 1)?;
        match r.tuser {
            Some(u) => model.set(u, u64::from(*err && end == frame.len()))?,
            None if *err => {
                return Err(SimError::Design(
                    "a PhyError fault needs the receiver's tuser input".into(),
                ))
            }
            None => {}
        }
        *at = end;
        if end == frame.len() {
            r.current = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
