//! The repository stands on its own: no file names a path outside it, every relative link in
//! the Markdown resolves to a file inside it, and the data the tests read is here. (`.ci/run`
//! also runs the whole suite with any sibling directories of the clone hidden.) And no HDL
//! source loops over an inclusive range, which rust-hdl emits one iteration short.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
}

/// Every file of the repository's own (not build output, the venv or generated files).
fn files() -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.as_deref().unwrap_or("");
            if matches!(
                name,
                "target" | ".git" | ".venv" | "out" | "__pycache__" | ".pytest_cache"
            ) {
                continue;
            }
            if p.is_dir() {
                walk(&p, out)?;
            } else {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(&root(), &mut out)?;
    Ok(out)
}

fn is_text(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("rs" | "md" | "toml" | "py" | "txt" | "sh" | "vlt" | "lpf" | "xdc" | "pcf" | "f")
    ) || p.file_name().is_some_and(|n| n == "run" || n == "setup")
}

#[test]
fn no_file_reaches_outside_the_repository() -> Result<()> {
    // Built from pieces so this file does not match itself.
    let outside = [
        format!("../{}/", "shared"),
        format!("{}/vectors", "shared"),
        format!("/{}/main", "work"),
    ];
    let mut bad = Vec::new();
    let files = files()?;
    assert!(files.len() > 100, "walked only {} files", files.len());
    for f in files.iter().filter(|f| is_text(f)) {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                bad.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "paths outside the repository:\n{}",
        bad.join("\n")
    );
    Ok(())
}

/// rust-hdl 0.46 emits `for i in a..=b` in a kernel as if it were `a..b`: its simulator runs
/// the last iteration, the Verilog does not (found in the responder's SGE mask). Bound the
/// loop with a `const` instead.
#[test]
fn no_hdl_loop_runs_over_an_inclusive_range() -> Result<()> {
    let mut bad = Vec::new();
    for f in files()?.iter().filter(|f| {
        f.starts_with(root().join("hdl/src")) && f.extension().is_some_and(|e| e == "rs")
    }) {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let Some(rest) = code.trim_start().strip_prefix("for ") else {
                continue;
            };
            // The loop's range itself (`for n in 1..=N`), not an inclusive slice in an
            // iterator expression (`for b in v[..=i].iter()`).
            let range = rest.split_once(" in ").and_then(|(_, r)| {
                r.split_once("..=").map(|(start, _)| {
                    start
                        .chars()
                        .all(|c| c.is_alphanumeric() || " _+-*()".contains(c))
                })
            });
            if range == Some(true) {
                bad.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "inclusive ranges in HDL loops:\n{}",
        bad.join("\n")
    );
    Ok(())
}

/// `[text](target)` links in Markdown whose target is a relative path.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !(target.contains("://") || target.starts_with('#') || target.starts_with("mailto:")) {
            let path = target.split('#').next().unwrap_or("");
            if !path.is_empty() {
                out.push(path.to_string());
            }
        }
    }
    out
}

#[test]
fn every_markdown_link_resolves_inside_the_repository() -> Result<()> {
    let root = root();
    let mut bad = Vec::new();
    let mut n = 0;
    for f in files()?
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(f)?;
        for link in relative_links(&text) {
            n += 1;
            let dir = f.parent().unwrap_or(&root);
            let target = dir.join(&link);
            let inside = target
                .canonicalize()
                .map(|t| t.starts_with(&root))
                .unwrap_or(false);
            if !inside {
                bad.push(format!("{}: {link}", f.display()));
            }
        }
    }
    assert!(
        n > 10,
        "only {n} relative links found: is the README linked to docs/?"
    );
    assert!(
        bad.is_empty(),
        "links that do not resolve inside the repository:\n{}",
        bad.join("\n")
    );
    Ok(())
}

#[test]
fn the_test_data_is_in_the_repository() -> Result<()> {
    let pcaps = ferroce_tests::rxe_pcaps()?;
    let frames: usize = pcaps
        .iter()
        .map(|p| ferroce_tests::read_pcap(p).map(|f| f.len()))
        .sum::<Result<usize>>()?;
    assert_eq!(frames, 957, "the Soft-RoCE captures changed");
    assert!(ferroce_tests::data_dir().join("scapy_roce.pcap").exists());
    for p in &pcaps {
        assert!(p.starts_with(ferroce_tests::data_dir()));
    }
    Ok(())
}

#[test]
fn the_readme_stays_short() -> Result<()> {
    let len = std::fs::metadata(root().join("README.md"))?.len();
    assert!(
        len <= 16 * 1024,
        "README.md is {len} bytes; keep it under 16 KiB (details go in docs/)"
    );
    Ok(())
}
