//! Gates over the emitted Verilog and the repository itself:
//! - every design lints clean under `verilator --lint-only -Wall` with only the listed waivers;
//! - every design passes Yosys' structural check (`hierarchy -check`, `check -assert`);
//! - every block (`Scope::Block` in the design registry) synthesizes with Yosys for iCE40 and
//!   Xilinx; the assemblies of those blocks (datapaths, whole MACs, whole NICs) are synthesized
//!   by `ferroce perf`, which prints their resources;
//! - every design is read by Icarus Verilog and Yosys with the flags its filelist names;
//! - the timing-critical leaf blocks, placed and routed on ECP5 with nextpnr, hold the Fmax
//!   recorded in `constraints/fmax-ecp5.txt` (`ferroce pnr` places any design on demand);
//! - the repository stands on its own (`repo`).
//!
//! Lint verdicts, checks, synthesis and P&R results are cached by the Verilog's hash (`ferroce_sim::cache`),
//! so an unchanged design costs nothing on the next run.

mod repo;
mod structure;

use anyhow::{Context, Result};
use ferroce_fpga::synth::{check, lint, synth, synth_cached, Target};
use ferroce_hdl::designs::{Design, Scope, DESIGNS};
use ferroce_sim::designs::{emit_to, verilog_dir};
use std::path::PathBuf;

/// Run `f` over `items` on the machine's cores (the tools themselves are single-threaded).
/// After a failure the workers stop taking items.
fn par<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    let slots = std::sync::Mutex::new(&mut out);
    std::thread::scope(|s| -> Result<()> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    loop {
                        if failed.load(std::sync::atomic::Ordering::Relaxed) {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return Ok(());
                        };
                        let r = f(item).inspect_err(|_| {
                            failed.store(true, std::sync::atomic::Ordering::Relaxed)
                        })?;
                        slots.lock().map_err(|_| anyhow::anyhow!("poisoned"))?[i] = Some(r);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join()
                .map_err(|_| anyhow::anyhow!("a gate thread panicked"))??;
        }
        Ok(())
    })?;
    out.into_iter()
        .map(|r| r.context("a gate result is missing"))
        .collect()
}

fn emitted() -> Result<Vec<(&'static Design, Vec<PathBuf>)>> {
    DESIGNS
        .iter()
        .map(|d| Ok((d, emit_to(d.name, &verilog_dir())?)))
        .collect()
}

#[test]
fn every_design_lints_clean() -> Result<()> {
    let designs = emitted()?;
    let verdicts = par(&designs, |(d, files)| Ok((d.name, lint(d.name, files)?)))?;
    let failed: Vec<String> = verdicts
        .into_iter()
        .filter_map(|(name, v)| v.err().map(|diag| format!("{name}:\n{diag}")))
        .collect();
    assert!(
        failed.is_empty(),
        "verilator --lint-only -Wall failed on {} designs:\n{}",
        failed.len(),
        failed.join("\n")
    );
    Ok(())
}

/// Every design, assemblies included, passes Yosys' structural check (a few seconds even for
/// the whole NIC, so the assemblies that only `ferroce perf` synthesizes are still read,
/// elaborated and checked by Yosys here).
#[test]
fn every_design_passes_yosys_check() -> Result<()> {
    let designs = emitted()?;
    let verdicts = par(&designs, |(d, files)| Ok((d.name, check(d.name, files)?)))?;
    let failed: Vec<String> = verdicts
        .into_iter()
        .filter_map(|(name, v)| v.err().map(|diag| format!("{name}:\n{diag}")))
        .collect();
    assert!(
        failed.is_empty(),
        "yosys check failed on {} designs:\n{}",
        failed.len(),
        failed.join("\n")
    );
    Ok(())
}

/// Every block for both targets, the longest first so the two cores finish together.
#[test]
fn every_block_synthesizes_for_ice40_and_xilinx() -> Result<()> {
    let designs = emitted()?;
    let mut jobs: Vec<(&Design, &Vec<PathBuf>, Target)> = designs
        .iter()
        .filter(|(d, _)| d.scope == Scope::Block)
        .flat_map(|(d, f)| [Target::Ice40, Target::Xilinx].map(|t| (*d, f, t)))
        .collect();
    // Wider datapaths take longest.
    jobs.sort_by_key(|(d, _, _)| std::cmp::Reverse(d.config.data_width()));
    let results = par(&jobs, |(d, files, target)| {
        let t0 = std::time::Instant::now();
        let res = synth(d.name, files, *target)
            .with_context(|| format!("running yosys on {}", d.name))?
            .map_err(|e| anyhow::anyhow!("yosys {} on {}:\n{e}", target.command(), d.name))?;
        Ok((d.name, target.command(), res, t0.elapsed().as_secs_f64()))
    })?;
    for (name, target, res, secs) in &results {
        println!(
            "{name} {target}: {} LUT, {} FF ({secs:.1} s, 0 when cached)",
            res.luts(),
            res.ffs()
        );
        assert!(res.luts() > 0 && res.ffs() > 0, "{name}: empty netlist");
    }
    let blocks = DESIGNS.iter().filter(|d| d.scope == Scope::Block).count();
    assert_eq!(results.len(), 2 * blocks);
    assert!(
        blocks >= DESIGNS.len() * 2 / 3,
        "most designs should be blocks gated here, not assemblies"
    );
    Ok(())
}

#[test]
fn lint_catches_a_real_warning() -> Result<()> {
    // The gate is only worth something if it fails: a width mismatch must be reported (and a
    // failing verdict must never be cached as a pass).
    let dir = verilog_dir().join("lint-selftest");
    std::fs::create_dir_all(&dir)?;
    let f = dir.join("bad_width.v");
    std::fs::write(
        &f,
        "module bad_width(input wire [7:0] a, output wire [3:0] y);\nassign y = a;\nendmodule\n",
    )?;
    for _ in 0..2 {
        let r = lint("bad_width", std::slice::from_ref(&f))?;
        assert!(
            r.is_err_and(|d| d.contains("WIDTH")),
            "lint missed a WIDTH warning"
        );
    }
    Ok(())
}

/// A result is keyed by the Verilog, not by where it lies: the same design emitted into another
/// directory (another clone) is found in the cache.
#[test]
fn synthesis_results_are_reused_from_another_directory() -> Result<()> {
    let name = "ferroce_rq_mux_64";
    let here = emit_to(name, &verilog_dir().join("clone-a"))?;
    let there = emit_to(name, &verilog_dir().join("clone-b"))?;
    let first = synth(name, &here, Target::Ice40)?.map_err(anyhow::Error::msg)?;
    let second = synth_cached(name, &there, Target::Ice40)?
        .context("the same Verilog in another directory missed the cache")?;
    assert_eq!(first.cells, second.cells);
    Ok(())
}

#[test]
fn yosys_check_catches_two_drivers() -> Result<()> {
    let dir = verilog_dir().join("check-selftest");
    std::fs::create_dir_all(&dir)?;
    let f = dir.join("two_drivers.v");
    std::fs::write(
        &f,
        "module two_drivers(input wire a, input wire b, output wire y);\nassign y = a;\nassign y = b;\nendmodule\n",
    )?;
    for _ in 0..2 {
        let r = check("two_drivers", std::slice::from_ref(&f))?;
        assert!(r.is_err(), "yosys check passed a wire with two drivers");
    }
    Ok(())
}

/// The flags a filelist's header gives a tool (`// <tool>: <flags>`).
fn filelist_flags(list: &str, tool: &str) -> Option<String> {
    let tag = format!("// {tool}: ");
    list.lines()
        .find_map(|l| l.strip_prefix(&tag))
        .map(|f| f.trim().to_string())
}

/// Every emitted design is read by Icarus Verilog and by Yosys with exactly the flags its
/// filelist's header names (Verilator, with none, is the lint gate above). Icarus elaborates
/// the whole hierarchy (`-s <top>`), so a module missing from the filelist fails here too.
#[test]
fn every_design_reads_in_icarus_and_yosys_with_its_filelists_flags() -> Result<()> {
    let designs = emitted()?;
    let results = par(&designs, |(d, _)| {
        let dir = verilog_dir().join(d.name);
        let list_path = dir.join(format!("{}.f", d.name));
        let list = std::fs::read_to_string(&list_path)
            .with_context(|| format!("reading {}", list_path.display()))?;
        let iverilog = filelist_flags(&list, "iverilog")
            .with_context(|| format!("{}: no `// iverilog:` line", list_path.display()))?;
        let yosys = filelist_flags(&list, "yosys")
            .with_context(|| format!("{}: no `// yosys:` line", list_path.display()))?;
        // The Yosys check gate reads every design with this command.
        anyhow::ensure!(
            yosys == ferroce_fpga::synth::yosys_read(),
            "{}: the filelist says `{yosys}`, the Yosys gates use `{}`",
            d.name,
            ferroce_fpga::synth::yosys_read()
        );
        let out = std::process::Command::new("iverilog")
            .args(iverilog.split_whitespace())
            .args(["-s", d.name, "-o", "/dev/null", "-c"])
            .arg(format!("{}.f", d.name))
            .current_dir(&dir)
            .output()
            .context("running iverilog (.ci/setup installs it)")?;
        Ok((
            d.name,
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    })?;
    let failed: Vec<String> = results
        .iter()
        .filter(|(_, ok, _)| !ok)
        .map(|(n, _, e)| {
            format!(
                "{n}:\n{}",
                e.lines().take(10).collect::<Vec<_>>().join("\n")
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "iverilog rejected {} designs:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(results.len(), DESIGNS.len());
    Ok(())
}

/// The recorded Fmax table: `<design> <recorded MHz> <floor MHz>` per line.
fn fmax_table() -> Result<Vec<(String, f64, f64)>> {
    let path = ferroce_sim::cache::workspace()
        .join("constraints")
        .join("fmax-ecp5.txt");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            anyhow::ensure!(f.len() == 3, "{}: bad line {l:?}", path.display());
            Ok((f[0].to_string(), f[1].parse()?, f[2].parse()?))
        })
        .collect()
}

/// The timing-critical leaf blocks, placed and routed on the LFE5UM5G-85F (speed 8) out of
/// context, each hold the Fmax floor recorded in `constraints/fmax-ecp5.txt`: the CRC-32 and
/// ICRC taps and the key check their clock, the others what they reached when recorded (less
/// placement noise). Cached by the Verilog's hash, so an unchanged block costs nothing.
#[test]
fn timing_critical_blocks_hold_their_recorded_fmax() -> Result<()> {
    let table = fmax_table()?;
    for must in [
        "ferroce_crc32_64",
        "ferroce_icrc_64",
        "ferroce_key_check",
        "ferroce_async_fifo_64",
        "ferroce_sync_count_32",
        "ferroce_mac_tx_64",
        "ferroce_mac_rx_64",
    ] {
        assert!(
            table.iter().any(|(n, _, _)| n == must),
            "{must} is not in constraints/fmax-ecp5.txt"
        );
    }
    let part = ferroce_fpga::pnr::Part::default();
    // Ten worst paths too: the timing analysis of the SDF is held to nextpnr's own.
    let flow = ferroce_fpga::pnr::Flow {
        paths: 10,
        ..ferroce_fpga::pnr::Flow::DEFAULT
    };
    let results = par(&table, |(name, recorded, floor)| {
        let r = ferroce_fpga::pnr::design(name, &part, None, 1, &flow)
            .with_context(|| format!("place and route of {name}"))?
            .map_err(|e| anyhow::anyhow!("place and route of {name}:\n{e}"))?;
        Ok((name.clone(), *recorded, *floor, r))
    })?;
    let mut low = Vec::new();
    for (name, recorded, floor, r) in &results {
        let fmax = r.fmax().context("no clock in the report")?;
        let path = r.paths.first().map_or(String::new(), |p| {
            format!("{} -> {} ({} levels)", p.from, p.to, p.levels)
        });
        println!(
            "{name}: {fmax:.1} MHz (recorded {recorded}, floor {floor}), {} LUT4, {} FF; {path}",
            r.luts(),
            r.ffs()
        );
        if let Some(why) = r.under_floor(*floor) {
            low.push(format!("{name}: {why}"));
        }
        // The SDF analysis finds nextpnr's critical path as its worst, with the same delay.
        let (ours, theirs) = (r.worst.first(), r.paths.first());
        let (Some(ours), Some(theirs)) = (ours, theirs) else {
            anyhow::bail!("{name}: no path from the SDF analysis or from nextpnr");
        };
        let (d_ours, d_theirs) = (
            ours.logic_ns + ours.routing_ns,
            theirs.logic_ns + theirs.routing_ns,
        );
        assert!(
            (d_ours - d_theirs).abs() < 0.01,
            "{name}: SDF analysis {ours:?} ({d_ours:.3} ns) against nextpnr's {theirs:?} ({d_theirs:.3} ns)"
        );
        // Ten, or as many as a small design has endpoint registers (the count crossing: 6).
        assert!(
            (6..=10).contains(&r.worst.len()),
            "{name}: {} worst paths",
            r.worst.len()
        );
    }
    assert!(low.is_empty(), "Fmax fell:\n{}", low.join("\n"));
    Ok(())
}

/// The ECP5-5G evaluation board's top (the 10G MAC looped back, `ferroce board`) synthesizes,
/// places and routes with the board's LPF, meets its clocks, and `ecppack` writes a bitstream.
/// Cached like every P&R result.
#[test]
fn board_top_builds_to_a_bitstream() -> Result<()> {
    let (report, bit) = ferroce_fpga::board::build()
        .context("building the board top")?
        .map_err(|e| anyhow::anyhow!("board top:\n{e}"))?;
    for c in &report.clocks {
        println!(
            "{}: {:.1} MHz (target {})",
            c.clock, c.achieved_mhz, c.constraint_mhz
        );
    }
    assert!(
        report.meets(),
        "the board top misses a clock: {:?}",
        report.clocks
    );
    assert!(
        report
            .clocks
            .iter()
            .any(|c| c.constraint_mhz >= ferroce_fpga::board::CORE_MHZ),
        "no clock constrained at the core clock: {:?}",
        report.clocks
    );
    let len = std::fs::metadata(&bit)
        .with_context(|| format!("{}", bit.display()))?
        .len();
    assert!(
        len > 10_000 && len == report.bitstream_bytes,
        "bitstream of {len} bytes"
    );
    Ok(())
}
