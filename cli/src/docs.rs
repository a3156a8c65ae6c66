//! `ferroce docs`: the generated pages (opcodes, registers, formats, designs and ports) from the
//! spec tables and the design registry.

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Output directory.
    #[arg(long, default_value = "docs")]
    out: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let out = a.out;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let ports = ferroce_hdl::designs::ports_page().context("emitting the designs")?;
    let pages = ferroce_spec::docs::pages()
        .into_iter()
        .chain([("ports.md", ports)]);
    for (name, text) in pages {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}
