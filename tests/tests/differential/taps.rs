//! The CRC-32 and ICRC taps at 64 and 512 bits: the same random stimulus on rust-hdl's simulator
//! and on the Verilator model of the emitted Verilog, every output compared after every clock
//! edge. This is the guard against the generator's silent miscompiles (`docs/rust-hdl.md`).

use anyhow::{Context, Result};
use ferroce_hdl::config::{hundred_g, ten_g};
use ferroce_hdl::crc::{Crc32, Icrc};
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_bools, bits_from_u64, bools_from_bytes};
use ferroce_sim::designs::open_tb;
use ferroce_sim::roce::RoceFrame;
use ferroce_sim::BuildOptions;
use ferroce_tests::diff::Outputs;
use ferroce_tests::{full_keep, hdl_edge, rng, seed, soak};
use rand::Rng;
use std::collections::VecDeque;

/// One cycle of input to a stream tap.
struct Stim {
    data: Vec<u8>,
    keep: u64,
    valid: bool,
    ready: bool,
    last: bool,
}

/// Frames chopped into beats, with random valid and ready, and now and then a keep that
/// breaks the convention.
struct Stimulus<R: Rng> {
    r: R,
    lanes: usize,
    beats: VecDeque<(Vec<u8>, bool)>,
    held: Option<Stim>,
}

impl<R: Rng> Stimulus<R> {
    fn next(&mut self, frame: impl FnOnce(&mut R) -> Vec<u8>) -> &Stim {
        // A presented beat stays until it is taken (valid and ready).
        if let Some(s) = &self.held {
            if s.valid && s.ready {
                self.held = None;
            }
        }
        if self.beats.is_empty() {
            let f = frame(&mut self.r);
            let n = f.len().div_ceil(self.lanes).max(1);
            for (i, chunk) in f.chunks(self.lanes).enumerate() {
                self.beats.push_back((chunk.to_vec(), i + 1 == n));
            }
            if f.is_empty() {
                self.beats.push_back((Vec::new(), true));
            }
        }
        let ready = self.r.gen_bool(0.8);
        match &mut self.held {
            Some(s) => {
                s.ready = ready;
                s.valid = true;
            }
            None if self.r.gen_bool(0.8) => {
                let (mut data, last) = self.beats.pop_front().unwrap_or_default();
                let mut keep = full_keep(data.len());
                if self.r.gen_ratio(1, 40) {
                    keep = self.r.gen::<u64>() & full_keep(self.lanes);
                }
                data.resize(self.lanes, 0);
                self.held = Some(Stim {
                    data,
                    keep,
                    valid: true,
                    ready,
                    last,
                });
            }
            None => {
                return self.held.insert(Stim {
                    data: (0..self.lanes).map(|_| self.r.gen()).collect(),
                    keep: self.r.gen::<u64>() & full_keep(self.lanes),
                    valid: false,
                    ready,
                    last: self.r.gen(),
                });
            }
        }
        self.held.as_ref().expect("just set")
    }
}

/// The stream-facing ports every tap has, for driving the rust-hdl side.
trait Tap: Block {
    fn drive(&mut self, s: &Stim);
    fn set_clk(&mut self, c: bool);
    fn set_rst(&mut self, r: bool);
    /// The result strobe (`m_crc_tvalid` / `m_icrc_tvalid`).
    fn result_valid(&self) -> bool;
}

macro_rules! tap {
    ($valid:ident) => {
        fn drive(&mut self, s: &Stim) {
            self.s_axis_tdata.next = bits_from_bools(&bools_from_bytes(&s.data));
            self.s_axis_tkeep.next = bits_from_u64(s.keep);
            self.s_axis_tvalid.next = s.valid;
            self.s_axis_tready.next = s.ready;
            self.s_axis_tlast.next = s.last;
        }
        fn set_clk(&mut self, c: bool) {
            self.clk.next = c.into();
        }
        fn set_rst(&mut self, r: bool) {
            self.rst.next = r;
        }
        fn result_valid(&self) -> bool {
            self.$valid.val()
        }
    };
}

impl<const DW: usize, const KW: usize> Tap for Crc32<DW, KW> {
    tap!(m_crc_tvalid);
}

impl<const DW: usize, const KW: usize, const SW: usize> Tap for Icrc<DW, KW, SW> {
    tap!(m_icrc_tvalid);
}

/// Run `cycles` of the same stimulus through both simulators and compare every output after
/// every edge. `frame` makes the next frame to send.
fn differential<T: Tap, R: Rng>(
    name: &str,
    mut hdl: T,
    cycles: usize,
    r: R,
    mut frame: impl FnMut(&mut R) -> Vec<u8>,
) -> Result<()> {
    hdl.connect_all();
    let mut tb = open_tb(name, &BuildOptions::default())?;
    let m = tb.model_ref();
    let (p_data, p_keep) = (m.port("s_axis_tdata")?, m.port("s_axis_tkeep")?);
    let outs = Outputs::new(&hdl, m)?;
    let lanes = p_keep.width;
    // Same reset on both: open_tb already reset the Verilator model; reset rust-hdl's too.
    hdl.set_rst(true);
    for _ in 0..3 {
        hdl_edge(&mut hdl, |b, c| b.set_clk(c));
    }
    hdl.set_rst(false);
    let mut stim = Stimulus {
        r,
        lanes,
        beats: VecDeque::new(),
        held: None,
    };
    let mut results = 0;
    for cycle in 0..cycles {
        let s = stim.next(&mut frame);
        hdl.drive(s);
        hdl_edge(&mut hdl, |b, c| b.set_clk(c));
        let model = tb.model();
        model.set_bytes(p_data, &s.data)?;
        model.set_bytes(p_keep, &s.keep.to_le_bytes()[..lanes.div_ceil(8)])?;
        tb.set("s_axis_tvalid", u64::from(s.valid))?;
        tb.set("s_axis_tready", u64::from(s.ready))?;
        tb.set("s_axis_tlast", u64::from(s.last))?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle as u64)
            .with_context(|| format!("{name}: Verilator vs rust-hdl"))?;
        results += usize::from(hdl.result_valid());
    }
    assert!(
        results > cycles / 40,
        "{name}: too few results ({results}) to mean anything"
    );
    println!(
        "{name}: {cycles} cycles, {results} results, all {} outputs equal",
        outs.len()
    );
    Ok(())
}

/// Random bytes of random length, for the CRC-32 tap.
fn random_bytes(r: &mut impl Rng, max: usize) -> Vec<u8> {
    let n = r.gen_range(0..=max);
    (0..n).map(|_| r.gen()).collect()
}

/// RoCEv2 frames, a tenth of them with a random byte spoiled (so every flag path is taken).
fn roce_or_spoiled(r: &mut impl Rng) -> Vec<u8> {
    let mut f = RoceFrame::random(r, 120).build();
    if r.gen_ratio(1, 10) {
        let o = r.gen_range(0..f.len().min(80));
        f[o] = r.gen();
    }
    if r.gen_ratio(1, 20) {
        f.truncate(r.gen_range(1..f.len()));
    }
    f
}

#[test]
fn crc32_64_rust_hdl_matches_verilator() -> Result<()> {
    let r = rng(seed("crc32_64_rust_hdl_matches_verilator"));
    differential(
        "ferroce_crc32_64",
        ten_g::Crc32::new(),
        soak(3000),
        r,
        |r| random_bytes(r, 40),
    )
}

#[test]
fn crc32_512_rust_hdl_matches_verilator() -> Result<()> {
    let r = rng(seed("crc32_512_rust_hdl_matches_verilator"));
    differential(
        "ferroce_crc32_512",
        hundred_g::Crc32::new(),
        soak(1500),
        r,
        |r| random_bytes(r, 200),
    )
}

#[test]
fn icrc_64_rust_hdl_matches_verilator() -> Result<()> {
    let r = rng(seed("icrc_64_rust_hdl_matches_verilator"));
    differential(
        "ferroce_icrc_64",
        ten_g::Icrc::new(),
        soak(3000),
        r,
        roce_or_spoiled,
    )
}

#[test]
fn icrc_512_rust_hdl_matches_verilator() -> Result<()> {
    let r = rng(seed("icrc_512_rust_hdl_matches_verilator"));
    differential(
        "ferroce_icrc_512",
        hundred_g::Icrc::new(),
        soak(1500),
        r,
        roce_or_spoiled,
    )
}

/// The comparer is only worth something if it fails: a block paired with another design's
/// model is refused, and a difference on any output is reported with the output's name.
#[test]
fn the_comparer_refuses_other_ports_and_catches_a_difference() -> Result<()> {
    let mut crc = ten_g::Crc32::new();
    crc.connect_all();
    let icrc_tb = open_tb("ferroce_icrc_64", &BuildOptions::default())?;
    let refused = Outputs::new(&crc, icrc_tb.model_ref());
    assert!(
        refused.is_err_and(|e| e.to_string().contains("m_crc_tdata")),
        "a CRC-32 block was paired with the ICRC model"
    );
    // Same design, but only the Verilator side gets a frame: the CRC result must differ.
    let mut tb = open_tb("ferroce_crc32_64", &BuildOptions::default())?;
    let outs = Outputs::new(&crc, tb.model_ref())?;
    crc.rst.next = true;
    for _ in 0..3 {
        hdl_edge(&mut crc, |b, c| b.clk.next = c.into());
    }
    crc.rst.next = false;
    hdl_edge(&mut crc, |b, c| b.clk.next = c.into());
    outs.check(&crc, tb.model_ref(), 0)?;
    ferroce_tests::beat(&mut tb, &[0x5a; 8], 0xff, true)?;
    hdl_edge(&mut crc, |b, c| b.clk.next = c.into());
    let mut caught = None;
    for cycle in 1..6 {
        tb.rising_edge()?;
        hdl_edge(&mut crc, |b, c| b.clk.next = c.into());
        if let Err(e) = outs.check(&crc, tb.model_ref(), cycle) {
            caught = Some(e.to_string());
            break;
        }
    }
    let msg = caught.expect("a frame seen by one side only went unnoticed");
    assert!(msg.contains("m_crc_tvalid"), "{msg}");
    Ok(())
}
