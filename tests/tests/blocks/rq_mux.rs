//! The requester TLP mux on its Verilator model, with the rust-hdl simulator run beside it on
//! the same stimulus and every output compared every cycle (the differential test). Two
//! inputs send TLPs of 1..6 beats with random headers and data, random idle cycles between
//! beats, random back-pressure on the output; every TLP must come out whole (never
//! interleaved), with its header on every beat, each input's in order. With both inputs full
//! and no back-pressure the mux must move one beat per clock.

use anyhow::{ensure, Result};
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_u128, bits_from_u64};
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_tests::diff::Outputs;
use ferroce_tests::{budget, hdl_edge, rng, seed, soak};
use rand::Rng;
use std::collections::VecDeque;

/// One beat: header, data, keep, last.
type Beat = (u128, u64, u64, bool);
type Tlp = Vec<Beat>;

fn random_tlp(r: &mut impl Rng) -> Tlp {
    let hdr: u128 = r.gen();
    let n = r.gen_range(1..=6);
    (0..n)
        .map(|i| {
            let last = i + 1 == n;
            let keep = if last {
                (1u64 << r.gen_range(1..=8)) - 1
            } else {
                0xFF
            };
            (hdr, r.gen(), keep, last)
        })
        .collect()
}

struct Outcome {
    cycles: u64,
    beats: u64,
}

/// Run `n` TLPs per input; `idle` and `stall` are the chances of an idle input cycle and of
/// a cycle without `m_rq_tready`.
fn run(name: &str, n: usize, idle: f64, stall: f64) -> Result<Outcome> {
    let s = seed(name);
    let mut r = rng(s);
    let mut tb = open_tb("ferroce_rq_mux_64", &BuildOptions::default())?;
    let mut hdl = ten_g::RqMux::new();
    hdl.connect_all();
    let edge = |b: &mut ten_g::RqMux| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    for _ in 0..3 {
        edge(&mut hdl);
    }
    hdl.rst.next = false;
    edge(&mut hdl);
    let outs = Outputs::new(&hdl, tb.model_ref())?;

    let tlps: [Vec<Tlp>; 2] = [
        (0..n).map(|_| random_tlp(&mut r)).collect(),
        (0..n).map(|_| random_tlp(&mut r)).collect(),
    ];
    let mut queues: [VecDeque<Beat>; 2] = [
        tlps[0].iter().flatten().copied().collect(),
        tlps[1].iter().flatten().copied().collect(),
    ];
    // What must come out next from each input.
    let mut expect: [VecDeque<Tlp>; 2] = [
        tlps[0].iter().cloned().collect(),
        tlps[1].iter().cloned().collect(),
    ];
    let mut cur: [Option<Beat>; 2] = [None, None];
    let mut partial: Tlp = Vec::new();
    let (mut cycles, mut beats) = (0u64, 0u64);
    let names = ["s_a", "s_b"];
    while expect.iter().any(|e| !e.is_empty()) {
        ensure!(
            cycles < budget(100_000),
            "stuck: {} and {} TLPs left",
            expect[0].len(),
            expect[1].len()
        );
        // Readies and outputs come from registers: this cycle's, before any input is set.
        let m = tb.model_ref();
        let ready = [tb.get("s_a_tready")? == 1, tb.get("s_b_tready")? == 1];
        let out: Beat = (
            m.get_u128(m.port("m_rq_hdr")?),
            tb.get("m_rq_tdata")?,
            tb.get("m_rq_tkeep")?,
            tb.get("m_rq_tlast")? == 1,
        );
        let out_valid = tb.get("m_rq_tvalid")? == 1;
        for x in 0..2 {
            if cur[x].is_none() && !r.gen_bool(idle) {
                cur[x] = queues[x].pop_front();
            }
        }
        let out_ready = !r.gen_bool(stall);
        for (x, p) in names.iter().enumerate() {
            let (h, d, k, l) = cur[x].unwrap_or_default();
            let hp = tb.model_ref().port(&format!("{p}_hdr"))?;
            tb.model().set_u128(hp, h)?;
            tb.set(&format!("{p}_tdata"), d)?;
            tb.set(&format!("{p}_tkeep"), k)?;
            tb.set(&format!("{p}_tlast"), l.into())?;
            tb.set(&format!("{p}_tvalid"), cur[x].is_some().into())?;
        }
        tb.set("m_rq_tready", out_ready.into())?;
        {
            let (h, d, k, l) = cur[0].unwrap_or_default();
            hdl.s_a_hdr.next = bits_from_u128(h);
            hdl.s_a_tdata.next = bits_from_u64(d);
            hdl.s_a_tkeep.next = bits_from_u64(k);
            hdl.s_a_tlast.next = l;
            hdl.s_a_tvalid.next = cur[0].is_some();
            let (h, d, k, l) = cur[1].unwrap_or_default();
            hdl.s_b_hdr.next = bits_from_u128(h);
            hdl.s_b_tdata.next = bits_from_u64(d);
            hdl.s_b_tkeep.next = bits_from_u64(k);
            hdl.s_b_tlast.next = l;
            hdl.s_b_tvalid.next = cur[1].is_some();
            hdl.m_rq_tready.next = out_ready;
        }
        tb.rising_edge()?;
        edge(&mut hdl);
        cycles += 1;
        for x in 0..2 {
            if cur[x].is_some() && ready[x] {
                cur[x] = None;
            }
        }
        if out_valid && out_ready {
            beats += 1;
            partial.push(out);
            if out.3 {
                let tlp = std::mem::take(&mut partial);
                let from = (0..2).find(|&x| expect[x].front() == Some(&tlp));
                ensure!(
                    from.is_some(),
                    "cycle {cycles}: a TLP of {} beats that is neither input's next whole TLP",
                    tlp.len()
                );
                if let Some(x) = from {
                    expect[x].pop_front();
                }
            }
        }
        // Every output of the two simulators, every cycle.
        outs.check(&hdl, tb.model_ref(), cycles)?;
    }
    ensure!(partial.is_empty(), "a TLP left half out");
    println!(
        "{name}: {n} TLPs per input, {beats} beats in {cycles} cycles, all {} outputs equal",
        outs.len()
    );
    Ok(Outcome { cycles, beats })
}

#[test]
fn tlps_come_out_whole_and_in_order_under_idle_and_backpressure() -> Result<()> {
    run(
        "tlps_come_out_whole_and_in_order_under_idle_and_backpressure",
        soak(400),
        0.3,
        0.3,
    )?;
    Ok(())
}

#[test]
fn two_busy_inputs_share_one_beat_per_clock() -> Result<()> {
    let o = run("two_busy_inputs_share_one_beat_per_clock", 300, 0.0, 0.0)?;
    ensure!(
        o.cycles <= o.beats + 4,
        "{} beats took {} cycles",
        o.beats,
        o.cycles
    );
    Ok(())
}
