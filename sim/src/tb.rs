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
use crate::{Result, SimError};
use std::cell::RefCell;
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
        for c in &self.components {
            c.borrow_mut().sample(&self.model);
        }
        self.model.clock(self.clk, true)?;
        let t = self.time_ps();
        self.model.trace_dump(t + self.period_ps / 2);
        self.cycle += 1;
        for c in &self.components {
            c.borrow_mut().drive(&mut self.model)?;
        }
        self.model.clock(self.clk, false)?;
        self.model.trace_dump(self.time_ps());
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
