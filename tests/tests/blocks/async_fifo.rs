//! The dual-clock FIFO (`ferroce_async_fifo_64`) on its Verilator model, stepped by two clocks
//! of unrelated periods and phases (the reader's slower and faster than the writer's, equal
//! with coincident edges, equal out of phase, and random), with random idle cycles on the
//! write side and back-pressure on the read side; rust-hdl's simulator beside it on the same
//! edges, every output compared after every edge (the differential test). Every word written
//! must come out once, in order; a reader that stops sees the writer stopped at exactly the
//! FIFO's depth; with both sides always willing one word moves per cycle of the slower clock.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::ten_g::{self, CDC_A, CDC_W};
use ferroce_hdl::prelude::*;
use ferroce_sim::clocks::{ClockSpec, Edges, MultiTb};
use ferroce_sim::designs::open_model;
use ferroce_sim::{BuildOptions, Component, Model};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edges, rng, seed, soak, wide};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::rc::Rc;

const DESIGN: &str = "ferroce_async_fifo_64";
const DEPTH: usize = 1 << CDC_A;
const MASK: u128 = (1u128 << CDC_W) - 1;
const WRITE: usize = 0;
const READ: usize = 1;

/// The write side: offers `left` random words, each after a random idle time.
struct Writer {
    r: ChaCha8Rng,
    p_valid: f64,
    left: usize,
    valid: bool,
    data: u128,
    sent: Vec<u128>,
}

impl Component for Writer {
    fn sample(&mut self, m: &Model) {
        let get = |n: &str| m.port(n).map(|p| m.get(p)).unwrap_or(0);
        if self.valid && get("s_tready") == 1 {
            self.sent.push(self.data);
            self.valid = false;
        }
    }
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        if !self.valid && self.left > 0 && self.r.gen_bool(self.p_valid) {
            self.valid = true;
            self.data = self.r.gen::<u128>() & MASK;
            self.left -= 1;
        }
        let (v, d) = (m.port("s_tvalid")?, m.port("s_tdata")?);
        m.set(v, u64::from(self.valid))?;
        m.set_u128(d, self.data)
    }
}

/// The read side: ready on a random share of its cycles.
struct Reader {
    r: ChaCha8Rng,
    p_ready: f64,
    ready: bool,
    got: Vec<u128>,
}

impl Component for Reader {
    fn sample(&mut self, m: &Model) {
        let get = |n: &str| m.port(n).map(|p| m.get_u128(p)).unwrap_or(0);
        if self.ready && get("m_tvalid") == 1 {
            self.got.push(get("m_tdata"));
        }
    }
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        self.ready = self.r.gen_bool(self.p_ready);
        let p = m.port("m_tready")?;
        m.set(p, u64::from(self.ready))
    }
}

/// The FIFO's model between two clocks, its two sides, and (for the differential runs)
/// rust-hdl's simulation of the same block on the same edges.
struct Bench {
    tb: MultiTb,
    w: Rc<RefCell<Writer>>,
    r: Rc<RefCell<Reader>>,
    hdl: Option<(ten_g::AsyncFifo, Outputs)>,
    what: String,
}

impl Bench {
    fn open(
        clocks: [ClockSpec; 2],
        r: &mut ChaCha8Rng,
        p: (f64, f64),
        words: usize,
        diff: bool,
    ) -> Result<Bench> {
        let model = open_model(DESIGN, &BuildOptions::default())?;
        let tb = MultiTb::new(model, &[("s_clk", clocks[0]), ("m_clk", clocks[1])])?;
        let w = Rc::new(RefCell::new(Writer {
            r: rng(r.gen()),
            p_valid: p.0,
            left: words,
            valid: false,
            data: 0,
            sent: Vec::new(),
        }));
        let rd = Rc::new(RefCell::new(Reader {
            r: rng(r.gen()),
            p_ready: p.1,
            ready: false,
            got: Vec::new(),
        }));
        let hdl = if diff {
            let mut h = ten_g::AsyncFifo::new();
            h.connect_all();
            let outs = Outputs::new(&h, tb.model_ref())?;
            Some((h, outs))
        } else {
            None
        };
        let mut b = Bench {
            tb,
            w: w.clone(),
            r: rd.clone(),
            hdl,
            what: format!(
                "write clock {} ps, read clock {} ps (phase {}), valid {:.2}, ready {:.2}",
                clocks[0].period_ps, clocks[1].period_ps, clocks[1].phase_ps, p.0, p.1
            ),
        };
        // Both resets for four edges of each clock, then the sides start.
        b.tb.set("s_rst", 1)?;
        b.tb.set("m_rst", 1)?;
        b.copy_inputs();
        while b.tb.cycle(WRITE) < 4 || b.tb.cycle(READ) < 4 {
            b.step()?;
        }
        b.tb.set("s_rst", 0)?;
        b.tb.set("m_rst", 0)?;
        b.copy_inputs();
        b.tb.add(WRITE, w);
        b.tb.add(READ, rd);
        Ok(b)
    }

    /// The model's inputs into rust-hdl's block.
    fn copy_inputs(&mut self) {
        let Some((h, _)) = &mut self.hdl else { return };
        let m = self.tb.model_ref();
        let get = |n: &str| m.port(n).map(|p| m.get_u128(p)).unwrap_or(0);
        h.s_rst.next = get("s_rst") == 1;
        h.m_rst.next = get("m_rst") == 1;
        h.s_tvalid.next = get("s_tvalid") == 1;
        h.s_tdata.next = wide::<CDC_W>(&get("s_tdata").to_le_bytes()[..CDC_W.div_ceil(8)]);
        h.m_tready.next = get("m_tready") == 1;
    }

    /// One instant of the two clocks, on both sides; every output compared after it.
    fn step(&mut self) -> Result<Edges> {
        let e = self.tb.step()?;
        if let Some((h, outs)) = &mut self.hdl {
            hdl_edges(h, &e, |h, i, level| match i {
                WRITE => h.s_clk.next = level.into(),
                _ => h.m_clk.next = level.into(),
            });
            outs.check(h, self.tb.model_ref(), e.time_ps)
                .with_context(|| self.what.clone())?;
        }
        self.copy_inputs();
        Ok(e)
    }

    /// Step until the reader has every word the writer was to send, and then some more:
    /// nothing more may come.
    fn drain(&mut self, budget: u64) -> Result<()> {
        let start = self.tb.cycle(READ);
        loop {
            let (w, r) = (self.w.borrow(), self.r.borrow());
            if w.left == 0 && !w.valid && r.got.len() >= w.sent.len() {
                break;
            }
            ensure!(
                self.tb.cycle(READ) - start < budget,
                "{}: {} of {} words out after {budget} read cycles",
                self.what,
                r.got.len(),
                w.sent.len()
            );
            drop((w, r));
            self.step()?;
        }
        let end = self.tb.cycle(READ) + 16;
        while self.tb.cycle(READ) < end {
            self.step()?;
        }
        let (w, r) = (self.w.borrow(), self.r.borrow());
        ensure!(
            r.got == w.sent,
            "{}: {} words in, {} out; first difference at word {:?}",
            self.what,
            w.sent.len(),
            r.got.len(),
            w.sent.iter().zip(&r.got).position(|(a, b)| a != b)
        );
        Ok(())
    }
}

fn spec(period_ps: u64, phase_ps: u64) -> ClockSpec {
    ClockSpec {
        period_ps,
        phase_ps,
    }
}

/// Every word once and in order, at fixed ratios and at random ones, with rust-hdl beside the
/// model on the fixed ones.
#[test]
fn words_cross_between_unrelated_clocks_once_and_in_order() -> Result<()> {
    let s = seed("words_cross_between_unrelated_clocks_once_and_in_order");
    let mut r = rng(s);
    let line = 6_400;
    let mut cases = vec![
        ([spec(line, 0), spec(9_700, 1_300)], true),
        ([spec(line, 0), spec(4_100, 2_900)], true),
        ([spec(line, 0), spec(line, 0)], true),
        ([spec(line, 0), spec(line, line / 4)], true),
    ];
    for _ in 0..4 {
        let (a, b) = (r.gen_range(2_000..12_000), r.gen_range(2_000..12_000));
        cases.push((
            [spec(a, r.gen_range(0..a)), spec(b, r.gen_range(0..b))],
            false,
        ));
    }
    for (clocks, diff) in cases {
        let p = (r.gen_range(0.2..=1.0), r.gen_range(0.2..=1.0));
        let words = soak(if diff { 300 } else { 3_000 });
        let mut b = Bench::open(clocks, &mut r, p, words, diff)?;
        b.drain(100 * words as u64)?;
        println!("seed {s}: {}: {words} words in order", b.what);
    }
    Ok(())
}

/// A reader that takes nothing stops the writer at exactly the depth; then every word comes
/// out in order. With both sides always willing, one word per cycle of the slower clock (at
/// least 95% of them, over 2,000 of its cycles).
#[test]
fn the_fifo_holds_its_depth_and_moves_a_word_per_slower_cycle() -> Result<()> {
    let s = seed("the_fifo_holds_its_depth_and_moves_a_word_per_slower_cycle");
    let mut r = rng(s);
    for _ in 0..3 {
        let (a, b) = (r.gen_range(2_000..12_000u64), r.gen_range(2_000..12_000u64));
        let clocks = [spec(a, r.gen_range(0..a)), spec(b, r.gen_range(0..b))];
        // Full: the reader never ready.
        let mut f = Bench::open(clocks, &mut r, (1.0, 0.0), 4 * DEPTH, false)?;
        f.tb.cycles_of(WRITE, 200)?;
        f.tb.cycles_of(READ, 50)?;
        let taken = f.w.borrow().sent.len();
        ensure!(
            taken == DEPTH,
            "seed {s}: {}: {taken} words taken by a FIFO of {DEPTH} nobody reads",
            f.what
        );
        f.r.borrow_mut().p_ready = 1.0;
        f.drain(100 * DEPTH as u64)?;
        // Rate: both sides always willing.
        let words = 3_000;
        let mut t = Bench::open(clocks, &mut r, (1.0, 1.0), words, false)?;
        let slow = if a >= b { WRITE } else { READ };
        t.tb.cycles_of(slow, 100)?;
        let before = t.r.borrow().got.len();
        t.tb.cycles_of(slow, 2_000)?;
        let moved = t.r.borrow().got.len() - before;
        ensure!(
            moved >= 1_900,
            "seed {s}: {}: {moved} words in 2,000 cycles of the slower clock",
            t.what
        );
        t.drain(100 * words as u64)?;
        println!(
            "seed {s}: {}: full at {taken}, {moved} words per 2,000 slower cycles",
            t.what
        );
    }
    Ok(())
}
