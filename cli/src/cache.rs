//! `ferroce cache`: where the result cache is and how big, or empty it.

use anyhow::{Context, Result};

#[derive(clap::Args)]
pub struct Args {
    /// Delete everything in it.
    #[arg(long)]
    clear: bool,
}

pub fn run(a: Args) -> Result<()> {
    let root = ferroce_sim::cache::root();
    let (bytes, entries) = ferroce_sim::cache::usage();
    println!(
        "{}: {entries} entries, {:.1} MiB (override with FERROCE_CACHE)",
        root.display(),
        bytes as f64 / (1 << 20) as f64
    );
    if a.clear {
        // Only the cache's own directories: the root may be a directory the user named.
        for sub in ferroce_sim::cache::DIRS {
            let d = root.join(sub);
            if d.exists() {
                std::fs::remove_dir_all(&d).with_context(|| format!("removing {}", d.display()))?;
            }
        }
        println!("cleared");
    }
    Ok(())
}
