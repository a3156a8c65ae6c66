//! `ferroce pnr`: place and route designs on ECP5 with the open flow, out of context; a table of
//! resources and Fmax per clock, and with `--paths` the worst paths from the routed SDF.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use ferroce_hdl::designs::DESIGNS;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// A design name (`ferroce verilog` lists them), or `all`.
    #[arg(long)]
    design: String,
    #[command(flatten)]
    opts: PnrArgs,
    /// Also write the table to this Markdown file.
    #[arg(long)]
    write: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    place(&a.design, &a.opts, a.write.as_deref())
}

// `ferroce pnr`'s part, clock and nextpnr options (flattened into `pnr`; `board` fixes its own).
#[derive(clap::Args)]
struct PnrArgs {
    /// nextpnr's ECP5 device (`um5g-85k` is the LFE5UM5G-85F).
    #[arg(long, default_value = "um5g-85k")]
    device: String,
    /// Package.
    #[arg(long, default_value = "CABGA381")]
    package: String,
    /// Speed grade (6, 7 or 8).
    #[arg(long, default_value_t = 8)]
    speed: u8,
    /// Target clock in MHz (default: the configuration's LPF, 156.25 at 10g, 250 at 100g).
    #[arg(long)]
    freq: Option<f64>,
    /// nextpnr's placement seed.
    #[arg(long, default_value_t = 1)]
    seed: u32,
    /// nextpnr's router: `router1` or `router2` (faster, but it does not finish the whole
    /// NICs). Default: nextpnr's own, `router1`.
    #[arg(long)]
    router: Option<String>,
    /// nextpnr's placer: `heap`, `sa` or `static` (spreads cells). Default: `static` for the
    /// whole NICs and the 100G MAC (they route only from it), nextpnr's own (`heap`) for the
    /// rest.
    #[arg(long)]
    placer: Option<String>,
    /// Also list this many worst paths (distinct registers, `--paths-by`), from a timing analysis of the
    /// routed design's delays (SDF); nextpnr reports one per clock.
    #[arg(long, default_value_t = 0)]
    paths: usize,
    /// Tell those paths apart by their end register (`end`: each register's worst input) or
    /// by their start register (`start`: one path per launching register, so a cone that
    /// reaches many registers shows once).
    #[arg(long, value_enum, default_value = "end")]
    paths_by: PathsBy,
    /// Also list each design's block RAMs by the memory they hold (a design with more than
    /// the device has fails before nextpnr with this list).
    #[arg(long)]
    memories: bool,
}

/// `--paths-by`: [`ferroce_fpga::sta::Distinct`] on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum PathsBy {
    /// One path per endpoint register: its worst.
    End,
    /// One path per launching register.
    Start,
}

impl From<PathsBy> for ferroce_fpga::sta::Distinct {
    fn from(p: PathsBy) -> Self {
        match p {
            PathsBy::End => Self::End,
            PathsBy::Start => Self::Start,
        }
    }
}

fn place(design: &str, opts: &PnrArgs, write: Option<&Path>) -> Result<()> {
    use ferroce_fpga::pnr;
    let part = &pnr::Part {
        device: opts.device.clone(),
        family: &ferroce_fpga::family::ecp5::ECP5,
        package: opts.package.clone(),
        speed: opts.speed,
    };
    let (freq, seed, speed) = (opts.freq, opts.seed, opts.speed);
    let flow = &pnr::Flow {
        router: opts.router.clone(),
        placer: opts.placer.clone(),
        paths: opts.paths,
        paths_by: opts.paths_by.into(),
    };
    let names: Vec<&str> = if design == "all" {
        DESIGNS.iter().map(|d| d.name).collect()
    } else {
        let d = ferroce_hdl::designs::find(design).with_context(|| {
            let known: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
            format!("no design {design:?}; known: all, {}", known.join(", "))
        })?;
        vec![d.name]
    };
    if !(6..=8).contains(&speed) {
        bail!("--speed {speed}: ECP5 speed grades are 6, 7 and 8");
    }
    // Designs run side by side (the cache's job limit keeps to the cores); each is printed
    // when it finishes, and the table at the end keeps the registry's order.
    let results: Vec<(String, std::result::Result<pnr::PnrReport, String>)> =
        std::thread::scope(|s| {
            let handles: Vec<_> = names
                .iter()
                .map(|&name| {
                    s.spawn(move || {
                        let r = pnr::design(name, part, freq, seed, flow);
                        let r = match r {
                            Ok(r) => r,
                            Err(e) => Err(format!("{e}")),
                        };
                        match &r {
                            Ok(rep) => eprintln!(
                                "{name}: {:.1} MHz, {} LUT4, {} FF ({:.0} s)",
                                rep.fmax().unwrap_or(0.0),
                                rep.luts(),
                                rep.ffs(),
                                rep.seconds
                            ),
                            Err(e) => eprintln!("{name}: FAILED\n{e}"),
                        }
                        (name.to_string(), r)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| ("?".into(), Err("thread panicked".into())))
                })
                .collect()
        });
    let opt = |name: &str, v: &Option<String>| {
        v.as_ref()
            .map_or(String::new(), |v| format!(" --{name} {v}"))
    };
    let cmd = format!(
        "cargo run --release --bin ferroce -- pnr --design {design} --device {} --package {} --speed {speed}{}{}{}{}{}",
        part.device,
        part.package,
        opt("freq", &freq.map(|f| f.to_string())),
        opt("router", &flow.router),
        opt("placer", &flow.placer),
        opt("paths", &(flow.paths > 0).then(|| flow.paths.to_string())),
        opt(
            "paths-by",
            &(flow.paths_by == ferroce_fpga::sta::Distinct::Start).then(|| "start".to_string())
        ),
    ) + if opts.memories { " --memories" } else { "" };
    let mut table = pnr::table(&results);
    for (name, r) in &results {
        if let Some(r) = r.as_ref().ok().filter(|r| !r.worst.is_empty()) {
            let per = match flow.paths_by {
                ferroce_fpga::sta::Distinct::End => "endpoint",
                ferroce_fpga::sta::Distinct::Start => "launching",
            };
            let _ = write!(
                table,
                "\nWorst paths of `{name}` (one per {per} register, from the routed design's SDF):\n\n{}",
                pnr::paths_table(r)
            );
        }
        if let Some(r) = r
            .as_ref()
            .ok()
            .filter(|r| opts.memories && !r.memories.is_empty())
        {
            let cell = part.family.block_ram();
            let _ = write!(
                table,
                "\nBlock RAMs of `{name}` by memory (Yosys' {cell} cells):\n\n{}",
                pnr::memories_table(&r.memories, cell)
            );
        }
    }
    println!("{table}\nReproduce: `{cmd}` (seed {seed}).");
    if let Some(path) = write {
        let text = format!(
            "<!-- Written by `{cmd}`; do not edit. -->\n\n{table}\nReproduce: `{cmd}` (seed {seed}).\n"
        );
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.is_err())
        .map(|(n, _)| n.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("place and route failed for {}", failed.join(", "));
    }
    Ok(())
}
