//! A cocotb-like testbench over a Verilator model.
//!
//! `Tb` owns the model and the clock. Each `rising_edge()` is one clock cycle:
//!
//! ```text
//!  eval if an input changed (inputs settle) -> components sample (handshakes seen before
//!  the edge) -> clk = 1, eval (registers update) -> components drive next inputs
//!  -> clk = 0, eval
//! ```
//!
//! so a component sees exactly what the flip-flops see at the edge, and what the test reads
//! after `rising_edge()` returns is the state after it (as after `await RisingEdge(dut.clk)`).

use crate::model::{Model, Port};
use crate::parallel::Helper;
use crate::{Result, SimError};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Something that takes part in every clock cycle (bus drivers and monitors).
pub trait Component {
    /// Look at the model just before the rising edge.
    fn sample(&mut self, model: &Model);
    /// Drive inputs for the next cycle, just after the rising edge.
    fn drive(&mut self, model: &mut Model) -> Result<()>;
}

pub struct Tb {
    model: Model,
    clk: Port,
    cycle: u64,
    period_ps: u64,
    components: Vec<Rc<RefCell<dyn Component>>>,
    /// Whether this testbench steps first in its cycle (see [`Tb::lead_flag`]).
    lead: Rc<Cell<bool>>,
    /// A window of cycles to trace ([`Tb::trace_window`]).
    wave: Option<Wave>,
}

/// A window of cycles written to a VCD: from cycle `from` until cycle `until`.
struct Wave {
    path: PathBuf,
    from: u64,
    until: u64,
    started: bool,
}

impl Tb {
    /// Wrap `model`, clocked by port `clk` with the given period (for traces and time).
    pub fn new(model: Model, clk: &str, period_ps: u64) -> Result<Tb> {
        let clk = model.port(clk)?;
        let mut tb = Tb {
            model,
            clk,
            cycle: 0,
            period_ps,
            components: Vec::new(),
            lead: Rc::new(Cell::new(true)),
            wave: None,
        };
        tb.model.set(clk, 0)?;
        tb.model.eval();
        tb.model.trace_dump(0);
        Ok(tb)
    }

    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }

    pub fn model_ref(&self) -> &Model {
        &self.model
    }

    /// Cycles run so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Simulated time in picoseconds.
    pub fn time_ps(&self) -> u64 {
        self.cycle * self.period_ps
    }

    /// Clock period in picoseconds.
    pub fn period_ps(&self) -> u64 {
        self.period_ps
    }

    /// Whether this testbench steps first in the current cycle: true, except for the second of
    /// two stepped together ([`Tb::rising_edge_pair`]), whose components sample before the
    /// first's drive. A link from this testbench to another reads it to deliver a frame in
    /// the cycle a model stepped one after the other would ([`crate::Link`]).
    pub fn lead_flag(&self) -> Rc<Cell<bool>> {
        self.lead.clone()
    }

    /// Write a VCD of every signal of the model to `path` for `cycles` cycles from cycle
    /// `from_cycle` (now, if that has passed); the file is complete when the window closes or
    /// the testbench is dropped. The model must be built with trace support
    /// (`BuildOptions { trace: true, .. }`; the two-host world's `WorldConfig::trace`).
    pub fn trace_window(&mut self, path: &Path, from_cycle: u64, cycles: u64) -> Result<()> {
        if !self.model.traceable() {
            return Err(SimError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(
                    "the model was built without trace support (BuildOptions::trace)",
                ),
            });
        }
        self.model.trace_stop();
        self.wave = Some(Wave {
            path: path.to_path_buf(),
            from: from_cycle.max(self.cycle),
            until: from_cycle.max(self.cycle).saturating_add(cycles),
            started: false,
        });
        self.wave_edge()
    }

    /// Open or close the trace window's file at this cycle.
    fn wave_edge(&mut self) -> Result<()> {
        let Some(w) = &mut self.wave else {
            return Ok(());
        };
        if !w.started && self.cycle >= w.from {
            w.started = true;
            self.model.trace_to(&w.path)?;
        }
        if w.started && self.cycle >= w.until {
            self.model.trace_stop();
            self.wave = None;
        }
        Ok(())
    }

    /// Add a bus driver or monitor; it runs every cycle from now on.
    pub fn add<C: Component + 'static>(&mut self, c: Rc<RefCell<C>>) {
        self.components.push(c);
    }

    /// Set an input by name (up to 64 bits).
    pub fn set(&mut self, name: &str, value: u64) -> Result<()> {
        let p = self.model.port(name)?;
        self.model.set(p, value)
    }

    /// Read a port by name (up to 64 bits).
    pub fn get(&self, name: &str) -> Result<u64> {
        Ok(self.model.get(self.model.port(name)?))
    }

    /// One clock cycle.
    pub fn rising_edge(&mut self) -> Result<()> {
        self.model.settle();
        self.sample();
        self.model.clock(self.clk, true)?;
        self.drive()?;
        self.model.clock(self.clk, false)?;
        self.model.trace_dump(self.time_ps());
        Ok(())
    }

    /// One clock cycle of `first` and `second` (one clock period), as `first.rising_edge()`
    /// then `second.rising_edge()` would run it, `second`'s model evaluated on `helper`'s
    /// thread while `first`'s is on this one. Both sample, then both drive: `second` does not
    /// lead the cycle, which its links account for ([`Tb::lead_flag`]).
    pub(crate) fn rising_edge_pair(first: &mut Tb, second: &mut Tb, helper: &Helper) -> Result<()> {
        helper.both(first.model.settle_job(), second.model.settle_job());
        second.lead.set(false);
        first.sample();
        second.sample();
        let (j1, j2) = (
            first.model.clock_job(first.clk, true)?,
            second.model.clock_job(second.clk, true)?,
        );
        helper.both(Some(j1), Some(j2));
        let driven = first.drive().and_then(|()| second.drive());
        second.lead.set(true);
        driven?;
        let (j1, j2) = (
            first.model.clock_job(first.clk, false)?,
            second.model.clock_job(second.clk, false)?,
        );
        helper.both(Some(j1), Some(j2));
        for tb in [first, second] {
            tb.model.trace_dump(tb.time_ps());
        }
        Ok(())
    }

    fn sample(&mut self) {
        for c in &self.components {
            c.borrow_mut().sample(&self.model);
        }
    }

    /// After the rising edge's evaluation: the trace, the cycle count, the components' drive.
    fn drive(&mut self) -> Result<()> {
        let t = self.time_ps();
        self.model.trace_dump(t + self.period_ps / 2);
        self.cycle += 1;
        self.wave_edge()?;
        for c in &self.components {
            c.borrow_mut().drive(&mut self.model)?;
        }
        Ok(())
    }

    /// `n` clock cycles (cocotb's `ClockCycles`).
    pub fn clock_cycles(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.rising_edge()?;
        }
        Ok(())
    }

    /// Hold the active-high synchronous reset `rst` for `cycles` cycles.
    pub fn reset(&mut self, rst: &str, cycles: u64) -> Result<()> {
        self.set(rst, 1)?;
        self.clock_cycles(cycles)?;
        self.set(rst, 0)?;
        self.rising_edge()
    }

    /// Run until `done` holds, failing after `max_cycles` (a test never hangs).
    pub fn run_until(
        &mut self,
        max_cycles: u64,
        what: &str,
        mut done: impl FnMut(&Tb) -> bool,
    ) -> Result<u64> {
        let start = self.cycle;
        while !done(self) {
            if self.cycle - start >= max_cycles {
                return Err(SimError::Timeout {
                    cycles: max_cycles,
                    what: what.to_string(),
                });
            }
            self.rising_edge()?;
        }
        Ok(self.cycle - start)
    }
}
