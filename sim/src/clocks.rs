//! A testbench with several clocks of unrelated periods and phases.
//!
//! [`Clocks`] lists the edges of its clocks in time order; [`MultiTb`] steps a model through
//! them. Each clock has its own components ([`Component`]), which take part in that clock's
//! cycles only, as a [`Tb`](crate::tb::Tb)'s do in its one clock's:
//!
//! ```text
//!  per instant with a rising edge: eval if an input changed -> the rising clocks' components
//!  sample -> those clocks = 1, eval -> their components drive
//!  per instant with a falling edge: those clocks = 0, eval
//! ```
//!
//! Edges of two clocks at the same instant are one step: both domains sample before it and
//! drive after it (as flip-flops on both clocks would see it).

use crate::model::{Model, Port};
use crate::tb::Component;
use crate::{Result, SimError};
use std::cell::RefCell;
use std::rc::Rc;

/// One clock: its period and the time of its first rising edge, in picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct ClockSpec {
    pub period_ps: u64,
    pub phase_ps: u64,
}

/// The edges of a set of clocks, in time order. Each clock is high for the first half of its
/// period (rounded down) from each rising edge.
#[derive(Clone, Debug)]
pub struct Clocks {
    specs: Vec<ClockSpec>,
    /// Per clock: the time of its next edge and whether that edge rises.
    next: Vec<(u64, bool)>,
    now_ps: u64,
}

/// The clocks that change at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edges {
    pub time_ps: u64,
    pub rising: Vec<usize>,
    pub falling: Vec<usize>,
}

impl Clocks {
    /// Clocks with the given periods and phases; every period at least 2 ps.
    pub fn new(specs: &[ClockSpec]) -> Result<Clocks> {
        if let Some(s) = specs.iter().find(|s| s.period_ps < 2) {
            return Err(SimError::Design(format!(
                "a clock period of {} ps (at least 2)",
                s.period_ps
            )));
        }
        Ok(Clocks {
            specs: specs.to_vec(),
            next: specs.iter().map(|s| (s.phase_ps, true)).collect(),
            now_ps: 0,
        })
    }

    /// The time of the last edges returned.
    pub fn now_ps(&self) -> u64 {
        self.now_ps
    }

    /// The next instant at which any clock changes, and which change there.
    pub fn advance(&mut self) -> Edges {
        let t = self.next.iter().map(|n| n.0).min().unwrap_or(0);
        let mut e = Edges {
            time_ps: t,
            ..Edges::default()
        };
        for (i, (at, rise)) in self.next.iter_mut().enumerate() {
            if *at != t {
                continue;
            }
            let p = self.specs[i].period_ps;
            if *rise {
                e.rising.push(i);
                *at += p / 2;
            } else {
                e.falling.push(i);
                *at += p - p / 2;
            }
            *rise = !*rise;
        }
        self.now_ps = t;
        e
    }
}

/// A model stepped by several clocks, each with the components of its domain.
pub struct MultiTb {
    model: Model,
    ports: Vec<Port>,
    clocks: Clocks,
    cycles: Vec<u64>,
    components: Vec<Vec<Rc<RefCell<dyn Component>>>>,
}

impl MultiTb {
    /// Wrap `model`, clocked by the ports named in `clocks` with their periods and phases.
    /// Every clock starts low.
    pub fn new(mut model: Model, clocks: &[(&str, ClockSpec)]) -> Result<MultiTb> {
        let ports = clocks
            .iter()
            .map(|(n, _)| model.port(n))
            .collect::<Result<Vec<_>>>()?;
        for p in &ports {
            model.set(*p, 0)?;
        }
        model.eval();
        let specs: Vec<ClockSpec> = clocks.iter().map(|c| c.1).collect();
        Ok(MultiTb {
            model,
            ports,
            clocks: Clocks::new(&specs)?,
            cycles: vec![0; clocks.len()],
            components: vec![Vec::new(); clocks.len()],
        })
    }

    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }
    pub fn model_ref(&self) -> &Model {
        &self.model
    }
    /// Rising edges of clock `i` so far.
    pub fn cycle(&self, i: usize) -> u64 {
        self.cycles[i]
    }
    /// The time of the last step.
    pub fn time_ps(&self) -> u64 {
        self.clocks.now_ps()
    }

    /// Add a component to clock `i`'s domain.
    pub fn add<C: Component + 'static>(&mut self, clock: usize, c: Rc<RefCell<C>>) {
        self.components[clock].push(c);
    }

    pub fn set(&mut self, name: &str, value: u64) -> Result<()> {
        let p = self.model.port(name)?;
        self.model.set(p, value)
    }
    pub fn get(&self, name: &str) -> Result<u64> {
        Ok(self.model.get(self.model.port(name)?))
    }

    /// One instant at which clocks change; which changed there.
    pub fn step(&mut self) -> Result<Edges> {
        let e = self.clocks.advance();
        if !e.rising.is_empty() {
            self.model.settle();
            for &i in &e.rising {
                for c in &self.components[i] {
                    c.borrow_mut().sample(&self.model);
                }
            }
        }
        for &i in &e.rising {
            self.model.set(self.ports[i], 1)?;
        }
        for &i in &e.falling {
            self.model.set(self.ports[i], 0)?;
        }
        self.model.eval();
        for &i in &e.rising {
            self.cycles[i] += 1;
            for c in &self.components[i] {
                c.borrow_mut().drive(&mut self.model)?;
            }
        }
        Ok(e)
    }

    /// Step until clock `i` has risen `n` more times.
    pub fn cycles_of(&mut self, i: usize, n: u64) -> Result<()> {
        let until = self.cycles[i] + n;
        while self.cycles[i] < until {
            self.step()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_come_in_time_order_and_coincident_ones_together() -> Result<()> {
        let mut c = Clocks::new(&[
            ClockSpec {
                period_ps: 10,
                phase_ps: 0,
            },
            ClockSpec {
                period_ps: 15,
                phase_ps: 5,
            },
        ])?;
        let got: Vec<Edges> = (0..6).map(|_| c.advance()).collect();
        let e = |t, r: &[usize], f: &[usize]| Edges {
            time_ps: t,
            rising: r.to_vec(),
            falling: f.to_vec(),
        };
        assert_eq!(
            got,
            [
                e(0, &[0], &[]),
                e(5, &[1], &[0]),
                e(10, &[0], &[]),
                e(12, &[], &[1]),
                e(15, &[], &[0]),
                e(20, &[0, 1], &[]),
            ]
        );
        Ok(())
    }

    #[test]
    fn a_clock_of_under_two_picoseconds_is_refused() {
        let one = ClockSpec {
            period_ps: 1,
            phase_ps: 0,
        };
        assert!(Clocks::new(&[one]).is_err());
    }
}
