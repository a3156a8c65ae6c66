//! `ferroce`: the project's one command.
//!
//! - `verilog`: write every design's Verilog (one file per module, a filelist per design).
//! - `demo`: two simulated hosts, each with a whole NIC under Verilator, its PCIe root complex
//!   model and the Rust driver, exchanging RDMA WRITEs; every byte checked, figures printed.
//! - `perf`: the benchmarks (throughput against the goodput ceiling, latency, simulation
//!   speed, Yosys resources of every design); `--write` also writes `docs/performance.md`.
//! - `docs`: the generated pages (opcodes, registers, formats, designs and ports).
//! - `pnr`: synthesize, place and route designs on ECP5 with the open flow (YoWASP Yosys and
//!   nextpnr-ecp5), out of context; resources, Fmax per clock and the critical path.
//! - `board`: the ECP5-5G evaluation board's top (the 10G MAC looped back on itself), placed
//!   and routed with the board's pins, and its bitstream.
//! - `cache`: where the result cache is, how big, and `--clear` to empty it.
//! - `interop`: a simulated ferroce host against Linux's Soft-RoCE in a QEMU guest, running
//!   the guest's rdma-core tools against ferroce's side of each; a results table.
//!
//! It lives in `ferroce-sim` rather than `ferroce-hdl` because `demo` and `perf` run the
//! Verilator models and the driver; `verilog` and `docs` use only the HDL and spec crates.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use ferroce_hdl::designs::{emit_design, Config, DESIGNS};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "ferroce",
    version,
    about = "ferroce: an open RoCEv2 NIC in Rust HDL"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum ConfigArg {
    #[value(name = "10g")]
    TenG,
    #[value(name = "100g")]
    HundredG,
    /// Both configurations.
    All,
}

impl ConfigArg {
    fn includes(self, c: Config) -> bool {
        match self {
            ConfigArg::All => true,
            ConfigArg::TenG => c == Config::TenG,
            ConfigArg::HundredG => c == Config::HundredG,
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Write Verilog: one file per module with stable names, and a filelist per design.
    Verilog {
        /// Output directory (one subdirectory per design).
        #[arg(long)]
        out: PathBuf,
        /// Which configuration's designs to write.
        #[arg(long, value_enum, default_value = "all")]
        config: ConfigArg,
    },
    /// Emit and lint the Verilog, then run two simulated hosts with their NICs and drivers:
    /// RDMA WRITEs and SENDs of several sizes both ways, every byte checked; print throughput against
    /// the goodput ceiling, 64-byte latency, simulation speed and the pcap paths.
    Demo {
        /// Random seed (the run is reproducible from it).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Path MTU of the QP pair: 256, 512, 1024, 2048 or 4096.
        #[arg(long, default_value_t = 4096)]
        pmtu: u32,
        /// Output directory (Verilog in `verilog/`, pcap files in `pcap/`).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Interleave PCIe read completions across tags (a stress; costs throughput).
        #[arg(long)]
        reorder: bool,
    },
    /// Write the generated documentation pages (opcode table, register map, formats, designs
    /// and ports) from the spec tables and the design registry. A test fails when the
    /// checked-in pages are stale.
    Docs {
        /// Output directory.
        #[arg(long, default_value = "docs")]
        out: PathBuf,
    },
    /// Benchmark: throughput against one beat per clock, latency, simulation speed, and
    /// Yosys resources. Prints Markdown tables (the README's performance section).
    Perf {
        /// Skip Yosys synthesis (several minutes with the whole NIC).
        #[arg(long)]
        no_synth: bool,
        /// Skip the CRC-32/ICRC tap streams.
        #[arg(long)]
        no_taps: bool,
        /// Skip the two-NIC RDMA WRITE and SEND benchmark.
        #[arg(long)]
        no_nic: bool,
        /// Skip the many-QP benchmark (the same WRITEs on 1, 8 and 64 QPs).
        #[arg(long)]
        no_qps: bool,
        /// Skip the 100G MAC benchmark (beats per clock at 64 to 9,000-byte frames).
        #[arg(long)]
        no_mac: bool,
        /// Skip the lossy-link benchmark (64 KiB WRITEs at 0, 0.1% and 1% loss).
        #[arg(long)]
        no_lossy: bool,
        /// Also write the tables to this Markdown page (the repository's is
        /// `docs/performance.md`).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Place and route on ECP5 with Yosys and nextpnr (the YoWASP builds .ci/setup installs),
    /// out of context in a wrapper that registers every port; print resources, Fmax against
    /// the configuration's clock (constraints/<config>/clocks.lpf) and the critical path.
    /// Results are cached by the Verilog's hash.
    Pnr {
        /// A design name (`ferroce verilog` lists them), or `all`.
        #[arg(long)]
        design: String,
        #[command(flatten)]
        opts: PnrArgs,
        /// Also write the table to this Markdown file.
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Build the ECP5-5G evaluation board's top (constraints/ecp5-5g-evn): the 10G MAC with
    /// its XGMII looped back, a frame generator and checker, LEDs; placed and routed with the
    /// board's LPF, then a bitstream by ecppack. Not tried on hardware by the project.
    Board {
        /// Where to write the top's Verilog and the bitstream.
        #[arg(long, default_value = "out/board")]
        out: PathBuf,
    },
    /// The result cache (Verilator models, lint verdicts, Yosys results, keyed by the
    /// Verilog's hash): print its path and size, or empty it.
    Cache {
        /// Delete everything in it.
        #[arg(long)]
        clear: bool,
    },
    /// Interop with Linux's RoCE stack: boot a QEMU guest with Soft-RoCE (build it first:
    /// `python3 tests/interop/guest.py build`), join its RoCE NIC to a simulated ferroce host
    /// and run the guest's real tools (ibv_rc_pingpong, ...) against ferroce's side of each,
    /// in both roles; every byte checked, every frame's ICRC checked by scapy and dissected by
    /// tshark; print the results table.
    Interop {
        /// Only the short subset (what `cargo test` runs).
        #[arg(long)]
        quick: bool,
        /// Only the runs whose tool, role or MTU contains this text (e.g. `ib_read_bw`,
        /// `atomic`, `client`, `4096`); repeat to narrow further.
        #[arg(long)]
        only: Vec<String>,
        /// Pcaps, logs and the guest's sockets.
        #[arg(long, default_value = "out/interop")]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The guest's manifest (default: target/interop/guest/manifest.json).
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// Write the table to this file too.
        #[arg(long)]
        table: Option<PathBuf>,
    },
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Verilog { out, config } => {
            let mut n = 0;
            for d in DESIGNS.iter().filter(|d| config.includes(d.config)) {
                let e = emit_design(d.name).with_context(|| format!("emitting {}", d.name))?;
                let dir = out.join(d.name);
                let list = e
                    .write_to(&dir)
                    .with_context(|| format!("writing {}", dir.display()))?;
                println!(
                    "{:<22} {:>4} {:>3} modules  {}",
                    d.name,
                    d.config.name(),
                    e.modules.len(),
                    list.display()
                );
                n += 1;
            }
            if n == 0 {
                bail!("no designs in that configuration");
            }
            Ok(())
        }
        Cmd::Docs { out } => {
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            let ports = ferroce_hdl::designs::ports_page().context("emitting the designs")?;
            let pages = ferroce_spec::docs::pages()
                .into_iter()
                .chain([("ports.md", ports)]);
            for (name, text) in pages {
                let path = out.join(name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                println!("{}", path.display());
            }
            Ok(())
        }
        Cmd::Demo {
            seed,
            pmtu,
            out,
            reorder,
        } => ferroce_sim::demo::run(seed, pmtu, reorder, &out),
        Cmd::Perf {
            no_synth,
            no_taps,
            no_nic,
            no_qps,
            no_mac,
            no_lossy,
            write,
        } => ferroce_sim::perf::run(
            &ferroce_sim::perf::Parts {
                synth: !no_synth,
                taps: !no_taps,
                nic: !no_nic,
                qps: !no_qps,
                mac: !no_mac,
                lossy: !no_lossy,
            },
            write.as_deref(),
        ),
        Cmd::Pnr {
            design,
            opts,
            write,
        } => pnr(&design, &opts, write.as_deref()),
        Cmd::Board { out } => board(&out),
        Cmd::Interop {
            quick,
            only,
            out,
            seed,
            manifest,
            table,
        } => interop(quick, &only, &out, seed, manifest, table),

        Cmd::Cache { clear } => {
            let root = ferroce_sim::cache::root();
            let (bytes, entries) = ferroce_sim::cache::usage();
            println!(
                "{}: {entries} entries, {:.1} MiB (override with FERROCE_CACHE)",
                root.display(),
                bytes as f64 / (1 << 20) as f64
            );
            if clear {
                // Only the cache's own directories: the root may be a directory the user named.
                for sub in ferroce_sim::cache::DIRS {
                    let d = root.join(sub);
                    if d.exists() {
                        std::fs::remove_dir_all(&d)
                            .with_context(|| format!("removing {}", d.display()))?;
                    }
                }
                println!("cleared");
            }
            Ok(())
        }
    }
}

/// `ferroce pnr`'s part, clock and nextpnr options.
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
    #[arg(long, value_enum, default_value_t = ferroce_sim::sta::Distinct::End)]
    paths_by: ferroce_sim::sta::Distinct,
}

fn pnr(design: &str, opts: &PnrArgs, write: Option<&std::path::Path>) -> Result<()> {
    use ferroce_sim::pnr;
    let part = &pnr::Part {
        device: opts.device.clone(),
        package: opts.package.clone(),
        speed: opts.speed,
    };
    let (freq, seed, speed) = (opts.freq, opts.seed, opts.speed);
    let flow = &pnr::Flow {
        router: opts.router.clone(),
        placer: opts.placer.clone(),
        paths: opts.paths,
        paths_by: opts.paths_by,
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
            &(flow.paths_by == ferroce_sim::sta::Distinct::Start).then(|| "start".to_string())
        ),
    );
    let mut table = pnr::table(&results);
    for (name, r) in &results {
        if let Some(r) = r.as_ref().ok().filter(|r| !r.worst.is_empty()) {
            let per = match flow.paths_by {
                ferroce_sim::sta::Distinct::End => "endpoint",
                ferroce_sim::sta::Distinct::Start => "launching",
            };
            let _ = write!(
                table,
                "\nWorst paths of `{name}` (one per {per} register, from the routed design's SDF):\n\n{}",
                pnr::paths_table(r)
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

fn board(out: &std::path::Path) -> Result<()> {
    use ferroce_sim::board;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let top = out.join(format!("{}.v", board::TOP));
    std::fs::write(&top, board::top_verilog(board::CORE_MHZ)?)
        .with_context(|| format!("writing {}", top.display()))?;
    let (report, bit) = match board::build()? {
        Ok(r) => r,
        Err(e) => bail!("building the board top failed:\n{e}"),
    };
    let dst = out.join(format!("{}.bit", board::TOP));
    std::fs::copy(&bit, &dst).with_context(|| format!("copying {}", bit.display()))?;
    println!(
        "{}: {} LUT4, {} CCU2C, {} FF, {} EBR on the LFE5UM5G-85F",
        board::TOP,
        report.luts(),
        report.carries(),
        report.cells.get("TRELLIS_FF").copied().unwrap_or(0),
        report.ebrs()
    );
    for c in &report.clocks {
        println!(
            "  clock {}: {:.1} MHz (target {})",
            c.clock, c.achieved_mhz, c.constraint_mhz
        );
    }
    if let Some(p) = report.paths.first() {
        println!(
            "  critical path: {} -> {} ({} levels)",
            p.from, p.to, p.levels
        );
    }
    println!(
        "  {} ({} bytes), top {}",
        dst.display(),
        report.bitstream_bytes,
        top.display()
    );
    if !report.meets() {
        bail!("the board top does not meet its clock constraints");
    }
    Ok(())
}

fn interop(
    quick: bool,
    only: &[String],
    out: &std::path::Path,
    seed: u64,
    manifest: Option<PathBuf>,
    table: Option<PathBuf>,
) -> Result<()> {
    use ferroce_sim::interop::matrix;
    let manifest = manifest.unwrap_or_else(matrix::default_manifest);
    if let Some(why) = ferroce_sim::interop::guest::unavailable(&manifest) {
        bail!("no guest to run against: {why}");
    }
    let cases: Vec<_> = matrix::cases(quick)
        .into_iter()
        .filter(|c| only.iter().all(|o| c.describe().contains(o.as_str())))
        .collect();
    if cases.is_empty() {
        bail!("no interop run matches --only {only:?}");
    }
    let outcomes = matrix::run(&cases, &manifest, out, seed).context("interop")?;
    let t = matrix::table(&outcomes);
    println!("{t}");
    if let Some(path) = table {
        std::fs::write(&path, &t).with_context(|| format!("writing {}", path.display()))?;
    }
    let failed = outcomes.iter().filter(|o| o.result.is_err()).count();
    if failed > 0 {
        bail!("{failed} of {} interop runs failed", outcomes.len());
    }
    Ok(())
}
