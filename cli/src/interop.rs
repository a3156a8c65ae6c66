//! `ferroce interop`: a simulated ferroce host against Linux's Soft-RoCE in a QEMU guest, the
//! guest's rdma-core and perftest tools against ferroce's side of each; a results table.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
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
    /// Random seed of the simulated host and its link.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The guest's manifest (default: target/interop/guest/manifest.json).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Write the table to this file too.
    #[arg(long)]
    table: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let Args {
        quick,
        only,
        out,
        seed,
        manifest,
        table,
    } = a;
    use ferroce_interop::matrix;
    let manifest = manifest.unwrap_or_else(matrix::default_manifest);
    if let Some(why) = ferroce_interop::guest::unavailable(&manifest) {
        bail!("no guest to run against: {why}");
    }
    let cases: Vec<_> = matrix::cases(quick)
        .into_iter()
        .filter(|c| only.iter().all(|o| c.describe().contains(o.as_str())))
        .collect();
    if cases.is_empty() {
        bail!("no interop run matches --only {only:?}");
    }
    let outcomes = matrix::run(&cases, &manifest, &out, seed).context("interop")?;
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
