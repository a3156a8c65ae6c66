//! `ferroce board`: the ECP5-5G evaluation board's top, placed and routed with the board's pins,
//! and its bitstream.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the top's Verilog and the bitstream.
    #[arg(long, default_value = "out/board")]
    out: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let out = a.out.as_path();
    use ferroce_fpga::board;
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
