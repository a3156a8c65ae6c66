//! Gates for every emitted design: Verilator lint with only the listed waivers, and Yosys
//! synthesis for iCE40 and Xilinx without errors.

use anyhow::{Context, Result};
use ferroce_hdl::designs::DESIGNS;
use ferroce_sim::designs::{emit_to, verilog_dir};
use ferroce_sim::synth::{lint, synth, Target};

#[test]
fn every_design_lints_clean() -> Result<()> {
    for d in DESIGNS {
        let files = emit_to(d.name, &verilog_dir())?;
        if let Err(diag) = lint(d.name, &files)? {
            panic!("verilator --lint-only -Wall on {}:\n{diag}", d.name);
        }
    }
    Ok(())
}

#[test]
fn every_design_synthesizes_for_ice40_and_xilinx() -> Result<()> {
    let scratch = verilog_dir().join("synth");
    for d in DESIGNS {
        let files = emit_to(d.name, &verilog_dir())?;
        for target in [Target::Ice40, Target::Xilinx] {
            let res = synth(d.name, &files, target, &scratch)
                .with_context(|| format!("running yosys on {}", d.name))?
                .unwrap_or_else(|e| panic!("yosys {} on {}:\n{e}", target.command(), d.name));
            println!(
                "{} {}: {} LUT, {} FF",
                d.name,
                target.command(),
                res.luts(),
                res.ffs()
            );
            assert!(res.luts() > 0 && res.ffs() > 0, "{}: empty netlist", d.name);
        }
    }
    Ok(())
}

#[test]
fn lint_catches_a_real_warning() -> Result<()> {
    // The gate is only worth something if it fails: a width mismatch must be reported.
    let dir = verilog_dir().join("lint-selftest");
    std::fs::create_dir_all(&dir)?;
    let f = dir.join("bad_width.v");
    std::fs::write(
        &f,
        "module bad_width(input wire [7:0] a, output wire [3:0] y);\nassign y = a;\nendmodule\n",
    )?;
    let r = lint("bad_width", &[f])?;
    assert!(
        r.is_err_and(|d| d.contains("WIDTH")),
        "lint missed a WIDTH warning"
    );
    Ok(())
}
