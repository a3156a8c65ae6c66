//! Differential tests: the same random stimulus on rust-hdl's simulator and on the Verilator
//! model of the emitted Verilog, every output compared after every clock edge. This is the
//! guard against the generator's silent miscompiles (RUST-HDL-NOTES).

use anyhow::Result;
use ferroce_hdl::crc::Crc32;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_bools, bits_from_u64, bools_from_bytes};
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_tests::{rng, seed};
use rand::Rng;

/// Settle the rust-hdl design, then give it one rising edge.
fn hdl_edge<B: Block>(b: &mut B, set_clk: impl Fn(&mut B, bool)) {
    set_clk(b, false);
    assert!(simulate(b, 200), "rust-hdl model did not settle");
    set_clk(b, true);
    assert!(simulate(b, 200), "rust-hdl model did not settle");
}

/// A random keep: usually legal (full, or contiguous on a last beat), sometimes garbage.
fn random_keep(r: &mut impl Rng, lanes: usize, last: bool) -> u64 {
    let full = if lanes == 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    };
    match r.gen_range(0..10) {
        0 => r.gen::<u64>() & full,
        _ if last => {
            let n = r.gen_range(0..=lanes);
            if n == 64 {
                u64::MAX
            } else {
                (1u64 << n) - 1
            }
        }
        _ => full,
    }
}

fn crc32_differential<const DW: usize, const KW: usize>(name: &str, cycles: usize) -> Result<()> {
    let seed = seed(name);
    let mut r = rng(seed);
    let mut hdl = Crc32::<DW, KW>::new();
    hdl.connect_all();
    let mut tb = open_tb(name, &BuildOptions::default())?;
    let m = tb.model_ref();
    let (p_data, p_keep) = (m.port("s_axis_tdata")?, m.port("s_axis_tkeep")?);
    let (p_out, p_valid, p_user) = (
        m.port("m_crc_tdata")?,
        m.port("m_crc_tvalid")?,
        m.port("m_crc_tuser")?,
    );
    // Same reset on both: open_tb already reset the Verilator model; reset rust-hdl's too.
    hdl.rst.next = true;
    for _ in 0..3 {
        hdl_edge(&mut hdl, |b, c| b.clk.next = c.into());
    }
    hdl.rst.next = false;
    let mut results = 0;
    for cycle in 0..cycles {
        let valid = r.gen_bool(0.8);
        let ready = r.gen_bool(0.8);
        let last = r.gen_bool(0.25);
        let keep = random_keep(&mut r, KW, last);
        let data: Vec<u8> = (0..KW).map(|_| r.gen()).collect();
        // rust-hdl
        hdl.s_axis_tdata.next = bits_from_bools::<DW>(&bools_from_bytes(&data));
        hdl.s_axis_tkeep.next = bits_from_u64::<KW>(keep);
        hdl.s_axis_tvalid.next = valid;
        hdl.s_axis_tready.next = ready;
        hdl.s_axis_tlast.next = last;
        hdl_edge(&mut hdl, |b, c| b.clk.next = c.into());
        // Verilator
        let model = tb.model();
        model.set_bytes(p_data, &data)?;
        model.set_bytes(p_keep, &keep.to_le_bytes()[..KW.div_ceil(8)])?;
        tb.set("s_axis_tvalid", u64::from(valid))?;
        tb.set("s_axis_tready", u64::from(ready))?;
        tb.set("s_axis_tlast", u64::from(last))?;
        tb.rising_edge()?;
        let m = tb.model_ref();
        let want = (
            hdl.m_crc_tdata.val().index() as u64,
            u64::from(hdl.m_crc_tvalid.val()),
            u64::from(hdl.m_crc_tuser.val()),
        );
        let got = (m.get(p_out), m.get(p_valid), m.get(p_user));
        assert_eq!(
            got, want,
            "{name} cycle {cycle}: Verilator vs rust-hdl (crc, valid, user)"
        );
        results += usize::from(want.1 == 1);
    }
    assert!(
        results > cycles / 10,
        "{name}: too few results ({results}) to mean anything"
    );
    println!("{name}: {cycles} cycles, {results} results, all equal");
    Ok(())
}

#[test]
fn crc32_64_rust_hdl_matches_verilator() -> Result<()> {
    crc32_differential::<64, 8>("ferroce_crc32_64", 3000)
}

#[test]
fn crc32_512_rust_hdl_matches_verilator() -> Result<()> {
    crc32_differential::<512, 64>("ferroce_crc32_512", 1500)
}
