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

/// Both targets at once, one thread each (the machine has two cores; Yosys uses one).
#[test]
fn every_design_synthesizes_for_ice40_and_xilinx() -> Result<()> {
    let scratch = verilog_dir().join("synth");
    let mut files = Vec::new();
    for d in DESIGNS {
        files.push(emit_to(d.name, &verilog_dir())?);
    }
    let files = &files;
    let scratch = &scratch;
    std::thread::scope(|s| -> Result<()> {
        let jobs: Vec<_> = [Target::Ice40, Target::Xilinx]
            .into_iter()
            .map(|target| {
                s.spawn(move || -> Result<()> {
                    for (d, files) in DESIGNS.iter().zip(files) {
                        let res = synth(d.name, files, target, scratch)
                            .with_context(|| format!("running yosys on {}", d.name))?
                            .unwrap_or_else(|e| {
                                panic!("yosys {} on {}:\n{e}", target.command(), d.name)
                            });
                        println!(
                            "{} {}: {} LUT, {} FF",
                            d.name,
                            target.command(),
                            res.luts(),
                            res.ffs()
                        );
                        assert!(res.luts() > 0 && res.ffs() > 0, "{}: empty netlist", d.name);
                    }
                    Ok(())
                })
            })
            .collect();
        for j in jobs {
            j.join()
                .map_err(|_| anyhow::anyhow!("a synthesis thread panicked"))??;
        }
        Ok(())
    })
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
