//! The count crossing (`ferroce_sync_count_32`) on its Verilator model between two clocks of
//! fixed and random ratios, with rust-hdl's simulation beside it on the fixed ones (every
//! output after every edge). A source counter steps by one on a random share of its clock's
//! edges, from just below the 2^32 wrap; on every edge of the reading clock the count read
//! must be one the source held, never behind what it held a source period and four reader
//! periods ago, never ahead of it now and never going back; once the source stops, the reader
//! has its last value within a source period and four of its own.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_sim::clocks::{ClockSpec, MultiTb};
use ferroce_sim::designs::open_model;
use ferroce_sim::{BuildOptions, Component, Model};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edges, rng, seed, soak};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::rc::Rc;

const DESIGN: &str = "ferroce_sync_count_32";
const SOURCE: usize = 0;
const READER: usize = 1;

/// The source's counter: steps by one on a random share of its edges while `on`.
struct Counter {
    r: ChaCha8Rng,
    p: f64,
    on: bool,
    count: u32,
}

impl Component for Counter {
    fn sample(&mut self, _: &Model) {}
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        if self.on && self.r.gen_bool(self.p) {
            self.count = self.count.wrapping_add(1);
        }
        let p = m.port("s_count")?;
        m.set(p, self.count.into())
    }
}

fn spec(period_ps: u64, phase_ps: u64) -> ClockSpec {
    ClockSpec {
        period_ps,
        phase_ps,
    }
}

/// One run: `edges` reader edges with the counter stepping, then it stops.
fn run(s: u64, r: &mut ChaCha8Rng, clocks: [ClockSpec; 2], diff: bool, edges: u64) -> Result<()> {
    let model = open_model(DESIGN, &BuildOptions::default())?;
    let mut tb = MultiTb::new(model, &[("s_clk", clocks[0]), ("m_clk", clocks[1])])?;
    let start = u32::MAX - r.gen_range(0..100);
    let p = r.gen_range(0.1..=1.0);
    let src = Rc::new(RefCell::new(Counter {
        r: rng(r.gen()),
        p,
        on: false,
        count: start,
    }));
    tb.set("s_count", start.into())?;
    let mut hdl = diff.then(ten_g::SyncCount::new);
    let outs = match &mut hdl {
        Some(h) => {
            h.connect_all();
            h.s_count.next = bits::<32>(start.into());
            Some(Outputs::new(h, tb.model_ref())?)
        }
        None => None,
    };
    let what = format!(
        "seed {s}: source clock {} ps, reader {} ps (phase {}), p {p:.2}",
        clocks[0].period_ps, clocks[1].period_ps, clocks[1].phase_ps
    );
    // Settle at the start value: both synchronizers and the registers hold it.
    tb.add(SOURCE, src.clone());
    let lag = clocks[0].period_ps + 4 * clocks[1].period_ps;
    // (time driven, count) of every value the source has held.
    let mut held: Vec<(u64, u32)> = vec![(0, start)];
    let mut last_read = start;
    let mut quiet_edges = 0u64;
    while tb.cycle(READER) < 3 * edges {
        let reading = tb.cycle(READER);
        if reading == 8 {
            src.borrow_mut().on = true;
        }
        if reading == 2 * edges {
            src.borrow_mut().on = false;
        }
        let e = tb.step()?;
        if let (Some(h), Some(outs)) = (&mut hdl, &outs) {
            hdl_edges(h, &e, |h, i, level| match i {
                SOURCE => h.s_clk.next = level.into(),
                _ => h.m_clk.next = level.into(),
            });
            outs.check(h, tb.model_ref(), e.time_ps)
                .with_context(|| what.clone())?;
            h.s_count.next = bits::<32>(tb.get("s_count")?);
        }
        let now = src.borrow().count;
        if e.rising.contains(&SOURCE) && held.last().is_some_and(|h| h.1 != now) {
            held.push((e.time_ps, now));
        }
        if !e.rising.contains(&READER) || tb.cycle(READER) < 8 {
            continue;
        }
        let v = tb.get("m_count")? as u32;
        let since = |x: u32| v.wrapping_sub(x);
        let floor = held
            .iter()
            .rev()
            .find(|h| h.0 + lag <= e.time_ps)
            .map_or(start, |h| h.1);
        ensure!(
            since(floor) <= now.wrapping_sub(floor),
            "{what}: at {} ps read {v:#x}: the count was {now:#x}, {floor:#x} {lag} ps before",
            e.time_ps
        );
        ensure!(
            since(last_read) <= now.wrapping_sub(last_read),
            "{what}: at {} ps read {v:#x} after {last_read:#x}",
            e.time_ps
        );
        last_read = v;
        if !src.borrow().on && tb.cycle(READER) > 2 * edges {
            quiet_edges = if v == now {
                quiet_edges
            } else {
                quiet_edges + 1
            };
        }
    }
    let now = src.borrow().count;
    let allowed = lag.div_ceil(clocks[1].period_ps);
    ensure!(
        last_read == now && quiet_edges <= allowed,
        "{what}: read {last_read:#x} at the end, the count {now:#x}; {quiet_edges} edges behind \
         after it stopped ({allowed} allowed)"
    );
    println!(
        "{what}: {} steps from {start:#x} across the wrap read in order",
        now.wrapping_sub(start)
    );
    Ok(())
}

#[test]
fn a_count_crosses_between_unrelated_clocks_in_order_and_on_time() -> Result<()> {
    let s = seed("a_count_crosses_between_unrelated_clocks_in_order_and_on_time");
    let mut r = rng(s);
    let line = 6_400;
    let fixed = [
        [spec(line, 0), spec(9_700, 1_300)],
        [spec(line, 0), spec(2_900, 700)],
        [spec(line, 0), spec(line, 0)],
    ];
    for clocks in fixed {
        run(s, &mut r, clocks, true, soak(400) as u64)?;
    }
    for _ in 0..4 {
        let (a, b) = (r.gen_range(2_000..12_000), r.gen_range(2_000..12_000));
        let clocks = [spec(a, r.gen_range(0..a)), spec(b, r.gen_range(0..b))];
        run(s, &mut r, clocks, false, soak(3_000) as u64)?;
    }
    Ok(())
}
