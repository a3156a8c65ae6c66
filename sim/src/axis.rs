//! AXI-stream bus models with cocotbext-axi's names: `AxisSource`, `AxisSink`, `AxisMonitor`.
//!
//! Ports are found by prefix: `<p>_tdata` and `<p>_tvalid` are required; `<p>_tkeep`,
//! `<p>_tlast`, `<p>_tuser` and `<p>_tready` are used when the model has them. Without
//! `tlast` every beat is a frame; without `tkeep` every byte of a beat is valid.
//!
//! A source whose `tready` is a model *input* is driving a tap (a block that watches a stream
//! without stalling it): the source then also plays the stream's consumer and drives `tready`
//! from its back-pressure generator.

use crate::model::{Direction, Model, Port};
use crate::pause::PauseGenerator;
use crate::tb::{Component, Tb};
use crate::{Result, SimError};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// A frame: its bytes and the `tuser` of its last beat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AxisFrame {
    pub data: Vec<u8>,
    pub user: u64,
}

impl From<Vec<u8>> for AxisFrame {
    fn from(data: Vec<u8>) -> Self {
        AxisFrame { data, user: 0 }
    }
}

struct Ports {
    tdata: Port,
    tvalid: Port,
    tkeep: Option<Port>,
    tlast: Option<Port>,
    tuser: Option<Port>,
    tready: Option<Port>,
    lanes: usize,
}

impl Ports {
    fn find(model: &Model, prefix: &str) -> Result<Ports> {
        let opt = |s: &str| {
            let n = format!("{prefix}_{s}");
            if model.has_port(&n) {
                model.port(&n).map(Some)
            } else {
                Ok(None)
            }
        };
        let tdata = model.port(&format!("{prefix}_tdata"))?;
        let tkeep = opt("tkeep")?;
        let lanes = tdata.width.div_ceil(8);
        if let Some(k) = tkeep {
            if k.width != lanes {
                return Err(SimError::Width {
                    port: format!("{prefix}_tkeep"),
                    width: k.width,
                    what: format!("tdata has {lanes} byte lanes"),
                });
            }
        }
        Ok(Ports {
            tdata,
            tvalid: model.port(&format!("{prefix}_tvalid"))?,
            tkeep,
            tlast: opt("tlast")?,
            tuser: opt("tuser")?,
            tready: opt("tready")?,
            lanes,
        })
    }
}

/// Drives frames into the model.
pub struct AxisSource {
    ports: Ports,
    queue: VecDeque<AxisFrame>,
    current: Option<(AxisFrame, usize)>,
    presenting: Option<usize>,
    pause: PauseGenerator,
    backpressure: PauseGenerator,
    ready_now: bool,
    frames_sent: u64,
    beats_sent: u64,
}

impl AxisSource {
    /// A source on the stream `<prefix>_*`, registered with `tb`.
    pub fn new(tb: &mut Tb, prefix: &str) -> Result<Rc<RefCell<AxisSource>>> {
        let ports = Ports::find(tb.model_ref(), prefix)?;
        if ports.tvalid.dir != Direction::Input {
            return Err(SimError::DriveOutput(format!("{prefix}_tvalid")));
        }
        let s = Rc::new(RefCell::new(AxisSource {
            ports,
            queue: VecDeque::new(),
            current: None,
            presenting: None,
            pause: PauseGenerator::Never,
            backpressure: PauseGenerator::Never,
            ready_now: true,
            frames_sent: 0,
            beats_sent: 0,
        }));
        s.borrow_mut().drive(tb.model())?;
        tb.add(s.clone());
        Ok(s)
    }

    /// Queue a frame (cocotb's `send_nowait`; the testbench clock does the sending).
    pub fn send(&mut self, frame: impl Into<AxisFrame>) {
        self.queue.push_back(frame.into());
    }

    /// Idle cycles between beats.
    pub fn set_pause_generator(&mut self, g: PauseGenerator) {
        self.pause = g;
    }

    /// Back-pressure on a tapped stream (only when `tready` is a model input).
    pub fn set_backpressure_generator(&mut self, g: PauseGenerator) {
        self.backpressure = g;
    }

    /// Nothing queued and nothing in flight.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.current.is_none()
    }

    pub fn frames_sent(&self) -> u64 {
        self.frames_sent
    }

    pub fn beats_sent(&self) -> u64 {
        self.beats_sent
    }

    fn tap(&self) -> bool {
        self.ports.tready.is_some_and(|p| p.dir == Direction::Input)
    }
}

impl Component for AxisSource {
    fn sample(&mut self, model: &Model) {
        let Some(offset) = self.presenting else {
            return;
        };
        let ready = match self.ports.tready {
            None => true,
            Some(_) if self.tap() => self.ready_now,
            Some(p) => model.get(p) != 0,
        };
        if !ready {
            return;
        }
        self.beats_sent += 1;
        self.presenting = None;
        if let Some((frame, _)) = &self.current {
            let next = offset + self.ports.lanes;
            if next >= frame.data.len() || self.ports.tlast.is_none() {
                self.current = None;
                self.frames_sent += 1;
            } else {
                self.current = self.current.take().map(|(f, _)| (f, next));
            }
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        if self.tap() {
            self.ready_now = !self.backpressure.pause();
            if let Some(p) = self.ports.tready {
                model.set(p, u64::from(self.ready_now))?;
            }
        }
        // A presented beat stays until accepted (the stream contract).
        if self.presenting.is_some() {
            return Ok(());
        }
        if self.current.is_none() {
            self.current = self.queue.pop_front().map(|f| (f, 0));
        }
        let Some((frame, offset)) = &self.current else {
            model.set(self.ports.tvalid, 0)?;
            return Ok(());
        };
        if self.pause.pause() {
            model.set(self.ports.tvalid, 0)?;
            return Ok(());
        }
        let lanes = self.ports.lanes;
        let end = (offset + lanes).min(frame.data.len());
        let chunk = &frame.data[*offset..end];
        let last = end >= frame.data.len();
        model.set_bytes(self.ports.tdata, chunk)?;
        if let Some(k) = self.ports.tkeep {
            let keep: Vec<u8> = (0..lanes.div_ceil(8))
                .map(|i| {
                    (0..8)
                        .filter(|b| i * 8 + b < chunk.len())
                        .fold(0u8, |acc, b| acc | (1 << b))
                })
                .collect();
            model.set_bytes(k, &keep)?;
        }
        if let Some(l) = self.ports.tlast {
            model.set(l, u64::from(last))?;
        }
        if let Some(u) = self.ports.tuser {
            model.set(u, if last { frame.user } else { 0 })?;
        }
        model.set(self.ports.tvalid, 1)?;
        self.presenting = Some(*offset);
        Ok(())
    }
}

/// Receives frames from the model (or, as a monitor, watches a stream without driving it).
pub struct AxisSink {
    ports: Ports,
    monitor: bool,
    frames: VecDeque<AxisFrame>,
    partial: Vec<u8>,
    backpressure: PauseGenerator,
    held: Option<(Vec<u8>, u64, u64, u64)>,
    violations: Vec<String>,
    cycle: u64,
    beats: u64,
}

/// A sink that never drives `tready`.
pub type AxisMonitor = AxisSink;

impl AxisSink {
    /// A sink on `<prefix>_*` that drives `tready` (if the model has it as an input).
    pub fn new(tb: &mut Tb, prefix: &str) -> Result<Rc<RefCell<AxisSink>>> {
        Self::make(tb, prefix, false)
    }

    /// A monitor on `<prefix>_*`: records accepted beats, drives nothing.
    pub fn monitor(tb: &mut Tb, prefix: &str) -> Result<Rc<RefCell<AxisSink>>> {
        Self::make(tb, prefix, true)
    }

    fn make(tb: &mut Tb, prefix: &str, monitor: bool) -> Result<Rc<RefCell<AxisSink>>> {
        let ports = Ports::find(tb.model_ref(), prefix)?;
        let s = Rc::new(RefCell::new(AxisSink {
            ports,
            monitor,
            frames: VecDeque::new(),
            partial: Vec::new(),
            backpressure: PauseGenerator::Never,
            held: None,
            violations: Vec::new(),
            cycle: 0,
            beats: 0,
        }));
        s.borrow_mut().drive(tb.model())?;
        tb.add(s.clone());
        Ok(s)
    }

    /// Cycles with `tready` low (cocotbext's `set_pause_generator` on a sink).
    pub fn set_pause_generator(&mut self, g: PauseGenerator) {
        self.backpressure = g;
    }

    /// Take the next received frame (cocotb's `recv_nowait`).
    pub fn recv(&mut self) -> Option<AxisFrame> {
        self.frames.pop_front()
    }

    pub fn count(&self) -> usize {
        self.frames.len()
    }

    pub fn beats(&self) -> u64 {
        self.beats
    }

    /// Breaches of the stream contract seen so far (valid dropped or data changed before
    /// acceptance). Tests assert this is empty.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl Component for AxisSink {
    fn sample(&mut self, model: &Model) {
        self.cycle += 1;
        let valid = model.get(self.ports.tvalid) != 0;
        let ready = self.ports.tready.is_none_or(|p| model.get(p) != 0);
        let data = model.get_bytes(self.ports.tdata);
        let keep = self.ports.tkeep.map_or(u64::MAX, |k| model.get(k));
        let last = self.ports.tlast.is_none_or(|l| model.get(l) != 0);
        let user = self.ports.tuser.map_or(0, |u| model.get(u));
        if let Some((d, k, l, u)) = self.held.take() {
            if !valid {
                self.violations.push(format!(
                    "cycle {}: tvalid fell before the beat was accepted",
                    self.cycle
                ));
            } else if d != data || k != keep || l != u64::from(last) || u != user {
                self.violations.push(format!(
                    "cycle {}: beat changed before it was accepted",
                    self.cycle
                ));
            }
        }
        if !valid {
            return;
        }
        if !ready {
            self.held = Some((data, keep, u64::from(last), user));
            return;
        }
        self.beats += 1;
        if let Some(k) = self.ports.tkeep {
            let keep_bytes = model.get_bytes(k);
            for (i, b) in data.iter().enumerate().take(self.ports.lanes) {
                if keep_bytes[i / 8] >> (i % 8) & 1 == 1 {
                    self.partial.push(*b);
                }
            }
        } else {
            self.partial.extend_from_slice(&data[..self.ports.lanes]);
        }
        if last {
            self.frames.push_back(AxisFrame {
                data: std::mem::take(&mut self.partial),
                user,
            });
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        if self.monitor {
            return Ok(());
        }
        if let Some(p) = self.ports.tready.filter(|p| p.dir == Direction::Input) {
            model.set(p, u64::from(!self.backpressure.pause()))?;
        }
        Ok(())
    }
}
