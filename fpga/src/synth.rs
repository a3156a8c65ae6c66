//! Lint and synthesis gates over emitted Verilog: Verilator `--lint-only -Wall` with the one
//! waiver file, Yosys' structural check, and Yosys `synth_ice40` / `synth_xilinx` with cell
//! counts.
//!
//! All remember their passing results in [`ferroce_sim::cache`] (`lint/`, `check/`, `synth/`), keyed by the
//! Verilog text, the waivers or script and the tool's version: an unchanged design is neither
//! linted nor synthesized again. Failures are never cached.

use crate::{FpgaError, Result};
use ferroce_sim::build::verilator_file_list;
use ferroce_sim::cache::{job, Cache, Key};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How Yosys reads the emitted files: the `yosys` entry of the filelists' header
/// (`ferroce_hdl::emit::FILELIST_FLAGS`).
pub fn yosys_read() -> &'static str {
    ferroce_hdl::emit::FILELIST_FLAGS
        .iter()
        .find(|(tool, _)| *tool == "yosys")
        .map_or("read_verilog -sv", |(_, flags)| flags)
}

/// The lint waiver file (`hdl/lint/waivers.vlt`): the only place lint is relaxed.
pub fn lint_waivers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("hdl")
        .join("lint")
        .join("waivers.vlt")
}

fn output(cmd: &mut Command) -> Result<std::process::Output> {
    let desc = format!("{cmd:?}");
    cmd.output()
        .map_err(|source| FpgaError::Spawn { cmd: desc, source })
}

/// Run `yosys -q` on `script`, written to `dir/script.ys` first: the whole NIC names more
/// files than one command-line argument may hold (128 KiB on Linux).
fn yosys_script(dir: &Path, script: &str) -> Result<std::process::Output> {
    let ys = dir.join("script.ys");
    std::fs::write(&ys, script).map_err(|source| FpgaError::Io {
        path: ys.clone(),
        source,
    })?;
    output(Command::new("yosys").arg("-q").arg("-s").arg(&ys))
}

/// Verilator's lint flags (part of every lint verdict's cache key).
const LINT_ARGS: [&str; 2] = ["--lint-only", "-Wall"];

/// `verilator --lint-only -Wall`; returns the diagnostics when it fails.
pub fn lint(top: &str, files: &[PathBuf]) -> Result<std::result::Result<(), String>> {
    let cache = Cache::open("lint")?;
    let entry = format!(
        "{top}-{}.ok",
        Key::new("verilator-lint")
            .text(&LINT_ARGS.join(" "))
            .text(top)
            .tool("verilator", "--version")?
            .file(&lint_waivers())?
            .files(files)?
            .hex()
    );
    if cache.get_text(&entry).is_some() {
        return Ok(Ok(()));
    }
    let tmp = cache.scratch(&entry)?;
    let out = job(|| {
        let list = verilator_file_list(&tmp, files)?;
        output(
            Command::new("verilator")
                .args(LINT_ARGS)
                .args(["--top-module", top])
                .arg(lint_waivers())
                .arg("-f")
                .arg(list),
        )
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let out = out?;
    if out.status.success() {
        cache.put_text(&entry, "lint clean\n")?;
        Ok(Ok(()))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).into_owned()))
    }
}

/// A Yosys synthesis target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Ice40,
    Xilinx,
}

impl Target {
    pub fn command(self) -> &'static str {
        match self {
            Target::Ice40 => "synth_ice40",
            Target::Xilinx => "synth_xilinx",
        }
    }
}

/// Cell counts from Yosys `stat` after a flattened synthesis.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    pub cells: BTreeMap<String, u64>,
}

impl Resources {
    fn sum(&self, pred: impl Fn(&str) -> bool) -> u64 {
        self.cells
            .iter()
            .filter(|(k, _)| pred(k))
            .map(|(_, v)| v)
            .sum()
    }
    /// LUTs (LUT1..LUT6 on Xilinx, SB_LUT4 on iCE40).
    pub fn luts(&self) -> u64 {
        self.sum(|k| k.starts_with("LUT") || k == "SB_LUT4")
    }
    /// Flip-flops (FD* on Xilinx, SB_DFF* on iCE40).
    pub fn ffs(&self) -> u64 {
        self.sum(|k| k.starts_with("FD") || k.starts_with("SB_DFF"))
    }
    /// Wide-function multiplexers (MUXF7/MUXF8, Xilinx only).
    pub fn muxf(&self) -> u64 {
        self.sum(|k| k.starts_with("MUXF"))
    }
    /// Block RAMs (RAMB* on Xilinx, SB_RAM40_4K on iCE40).
    pub fn brams(&self) -> u64 {
        self.sum(|k| k.starts_with("RAMB") || k.starts_with("SB_RAM"))
    }
}

/// Yosys' structural check, cheap enough for every design, assemblies included: read the
/// files, `hierarchy -check` (every module found, ports matching), `proc`, `flatten` and
/// `check -assert` (no multiple drivers, no undriven wires used, no logic loops). Cached like
/// the rest; returns Yosys' complaint when it fails.
pub fn check(top: &str, files: &[PathBuf]) -> Result<std::result::Result<(), String>> {
    let cache = Cache::open("check")?;
    let steps = format!("hierarchy -check -top {top}; proc; flatten; opt_clean; check -assert");
    let entry = format!(
        "{top}-{}.ok",
        Key::new("yosys-check")
            .text(&steps)
            .tool("yosys", "-V")?
            .files(files)?
            .hex()
    );
    cache.once(&entry, || {
        if cache.get_text(&entry).is_some() {
            return Ok(Ok(()));
        }
        let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let script = format!("{} {}; {steps}", yosys_read(), list.join(" "));
        let tmp = cache.scratch(&entry)?;
        let out = job(|| yosys_script(&tmp, &script));
        let _ = std::fs::remove_dir_all(&tmp);
        let out = out?;
        if out.status.success() {
            cache.put_text(&entry, "yosys check clean\n")?;
            Ok(Ok(()))
        } else {
            let mut msg = String::from_utf8_lossy(&out.stdout).into_owned();
            msg.push_str(&String::from_utf8_lossy(&out.stderr));
            Ok(Err(msg))
        }
    })
}

/// The cache entry of a synthesis. The key names the files by their base names: the same
/// Verilog in another clone (another directory) is the same design.
fn synth_entry(top: &str, files: &[PathBuf], target: Target) -> Result<String> {
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            f.file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned())
        })
        .collect();
    Ok(format!(
        "{top}.{}-{}.stat",
        target.command(),
        Key::new("yosys-synth")
            .text(&format!(
                "{} {}; {} -flatten -top {top}; stat",
                yosys_read(),
                names.join(" "),
                target.command()
            ))
            .tool("yosys", "-V")?
            .files(files)?
            .hex()
    ))
}

/// The resources of an earlier synthesis of the same Verilog, if the cache has them (Yosys is
/// not run).
pub fn synth_cached(top: &str, files: &[PathBuf], target: Target) -> Result<Option<Resources>> {
    let entry = synth_entry(top, files, target)?;
    Ok(Cache::open("synth")?
        .get_text(&entry)
        .map(|t| parse_stat(&t)))
}

/// Synthesize `top` for `target` (flattened) and return its resources, or Yosys' complaint.
/// A design synthesized before with the same Verilog and Yosys version is read from the cache.
pub fn synth(
    top: &str,
    files: &[PathBuf],
    target: Target,
) -> Result<std::result::Result<Resources, String>> {
    let cache = Cache::open("synth")?;
    let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let script = |stat: &Path| {
        format!(
            "{} {}; {} -flatten -top {top}; tee -q -o {} stat",
            yosys_read(),
            list.join(" "),
            target.command(),
            stat.display()
        )
    };
    let entry = synth_entry(top, files, target)?;
    // One Yosys per entry in this process; each run writes its report in its own scratch
    // directory, so two runs never read each other's half-written file.
    cache.once(&entry, || {
        if let Some(text) = cache.get_text(&entry) {
            return Ok(Ok(parse_stat(&text)));
        }
        let tmp = cache.scratch(&entry)?;
        let stat = tmp.join("stat.txt");
        let out = job(|| yosys_script(&tmp, &script(&stat)))?;
        let text = std::fs::read_to_string(&stat).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&tmp);
        let res = parse_stat(&text);
        if !out.status.success() || !text.contains("Number of cells") || res.cells.is_empty() {
            let mut msg = String::from_utf8_lossy(&out.stdout).into_owned();
            msg.push_str(&String::from_utf8_lossy(&out.stderr));
            if out.status.success() {
                msg.push_str("\n(Yosys succeeded but wrote no cell counts)");
            }
            return Ok(Err(msg));
        }
        cache.put_text(&entry, &text)?;
        Ok(Ok(res))
    })
}

/// Cell counts from Yosys' `stat` report.
fn parse_stat(text: &str) -> Resources {
    Resources {
        cells: stat_cells(text),
    }
}

/// The `<cell> <count>` lines of a Yosys `stat` report (Yosys 0.23 writes the name first,
/// later versions the count first; both are read).
pub(crate) fn stat_cells(text: &str) -> BTreeMap<String, u64> {
    let mut cells = BTreeMap::new();
    // Cell types are upper case (LUT4, SB_LUT4, FDRE); `wires`, `cells`, `ports` are totals.
    let is_name = |s: &str| {
        s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s.chars().any(|c| c.is_ascii_uppercase())
    };
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) {
            let pair = match (a.parse::<u64>(), b.parse::<u64>()) {
                (Err(_), Ok(n)) if is_name(a) => Some((a, n)),
                (Ok(n), Err(_)) if is_name(b) => Some((b, n)),
                _ => None,
            };
            if let Some((name, n)) = pair {
                cells.insert(name.to_string(), n);
            }
        }
    }
    cells
}
