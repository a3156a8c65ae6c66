//! The Python harness's tests (`tests/py`, pytest): rebuild the pyo3 extension into `.venv`
//! (maturin; a no-op when nothing changed) and run them, so the README's one test command
//! covers the Python side too. `.ci/setup` creates the venv.

use anyhow::{ensure, Context, Result};
use std::path::PathBuf;
use std::process::Command;

#[test]
fn pytest_suite_passes() -> Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = root.join(".venv");
    let python = venv.join("bin/python");
    ensure!(
        python.exists(),
        "{} is missing: run `bash .ci/setup` first (it creates the venv and builds the extension)",
        python.display()
    );
    let maturin = Command::new(venv.join("bin/maturin"))
        .args(["develop", "-q", "-m", "py/Cargo.toml"])
        .env("VIRTUAL_ENV", &venv)
        .current_dir(&root)
        .output()
        .context("running maturin from .venv")?;
    ensure!(
        maturin.status.success(),
        "maturin develop failed:\n{}",
        String::from_utf8_lossy(&maturin.stderr)
    );
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-rA", "tests/py"])
        .current_dir(&root)
        .output()
        .context("running pytest")?;
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    ensure!(
        out.status.success(),
        "pytest failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}
