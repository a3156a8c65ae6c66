//! `ferroce verilog`: every design's Verilog, one file per module with stable names, and a
//! filelist per design.

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use ferroce_hdl::designs::{emit_design, Config, DESIGNS};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Output directory (one subdirectory per design).
    #[arg(long)]
    out: PathBuf,
    /// Which configuration's designs to write.
    #[arg(long, value_enum, default_value = "all")]
    config: ConfigArg,
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

pub fn run(a: Args) -> Result<()> {
    let mut n = 0;
    for d in DESIGNS.iter().filter(|d| a.config.includes(d.config)) {
        let e = emit_design(d.name).with_context(|| format!("emitting {}", d.name))?;
        let dir = a.out.join(d.name);
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
