//! The crates keep the architecture's shape: dependencies one way (`spec` <- `hdl` <- `sim` <-
//! {`fpga`, `interop`, `py`} <- `cli`), the command-line crates (clap, indicatif) only under
//! the `ferroce` command and `anyhow` only there and in the tests, and no import circle between
//! the files of any crate.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every library the applications (the command, the tests) may use.
const LIBRARIES: &[&str] = &[
    "ferroce-spec",
    "ferroce-hdl",
    "ferroce-driver",
    "ferroce-sim",
    "ferroce-fpga",
    "ferroce-interop",
];
/// What the simulation kit's users below the command (the rig, the Python module) may use.
const ON_SIM: &[&str] = &["ferroce-spec", "ferroce-sim", "ferroce-driver"];

/// The workspace's crates: directory, package name, and the workspace crates it may use.
const CRATES: [(&str, &str, &[&str]); 9] = [
    ("spec", "ferroce-spec", &[]),
    ("hdl", "ferroce-hdl", &["ferroce-spec"]),
    ("host-driver", "ferroce-driver", &["ferroce-spec"]),
    (
        "sim",
        "ferroce-sim",
        &["ferroce-spec", "ferroce-hdl", "ferroce-driver"],
    ),
    (
        "fpga",
        "ferroce-fpga",
        &["ferroce-spec", "ferroce-hdl", "ferroce-sim"],
    ),
    ("interop", "ferroce-interop", ON_SIM),
    ("py", "ferroce-py", ON_SIM),
    ("cli", "ferroce-cli", LIBRARIES),
    ("tests", "ferroce-tests", LIBRARIES),
];

/// The names of a crate's `[dependencies]` (not dev- or build-dependencies).
fn dependencies(dir: &str) -> Result<BTreeSet<String>> {
    let path = root().join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path:?}"))?;
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
        } else if inside {
            if let Some((name, _)) = line.split_once(['=', '.']) {
                let name = name.trim();
                if !name.is_empty() && !name.starts_with('#') {
                    out.insert(name.to_string());
                }
            }
        }
    }
    Ok(out)
}

#[test]
fn crates_depend_one_way_and_only_the_command_parses_arguments() -> Result<()> {
    let mut bad = Vec::new();
    for (dir, name, may) in CRATES {
        let deps = dependencies(dir)?;
        for d in deps.iter().filter(|d| d.starts_with("ferroce-")) {
            if !may.contains(&d.as_str()) {
                bad.push(format!("{name} depends on {d}"));
            }
        }
        for tool in ["clap", "indicatif"] {
            if deps.contains(tool) && name != "ferroce-cli" {
                bad.push(format!(
                    "{name} depends on {tool} (only the `ferroce` command may)"
                ));
            }
        }
        if deps.contains("anyhow") && !matches!(name, "ferroce-cli" | "ferroce-tests") {
            bad.push(format!(
                "{name} depends on anyhow (a library returns its own typed errors)"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));

    // And what cargo resolves: nothing of ours but the command pulls clap or indicatif in.
    for tool in ["clap", "indicatif"] {
        let out = Command::new(env!("CARGO"))
            .current_dir(root())
            .args([
                "tree",
                "--offline",
                "--workspace",
                "-e",
                "normal",
                "--prefix",
                "none",
            ])
            .args(["--depth", "1", "-i", tool])
            .output()
            .context("running cargo tree")?;
        if !out.status.success() {
            bail!("cargo tree: {}", String::from_utf8_lossy(&out.stderr));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let users: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("ferroce-"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(users, ["ferroce-cli"], "what uses {tool}:\n{text}");
    }
    Ok(())
}

/// A crate's modules, by path (`a::b`), with their source files.
fn modules(src: &Path) -> Result<BTreeMap<String, PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(src, &mut files)?;
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src)?.with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        out.insert(parts.join("::"), f);
    }
    Ok(out)
}

/// Source text with comments and string literals blanked, so only code is read.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            // A character literal with an escape: `'\''`, `'\\'`, `'\n'`.
            i += 3;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i..].starts_with(b"r#\"") {
            i += 3;
            while i < b.len() && !b[i..].starts_with(b"\"#") {
                i += 1;
            }
            i += 2;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Every path a module's code names that starts at `crate::` or `super::` (or, from a crate
/// root, a child module's name in a `use`), as a list of segments from the crate root.
fn paths_named(module: &str, code: &str, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let here: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(String::from).collect()
    };
    let mut out = Vec::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        // A path: identifiers joined by `::`, up to a brace (a `use` group opens there).
        let mut segs = Vec::new();
        loop {
            let s = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            segs.push(chars[s..i].iter().collect::<String>());
            if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
                i += 2;
                if chars.get(i).is_some_and(|&c| is_ident(c)) {
                    continue;
                }
                // `a::*`: the module itself.
                if chars.get(i) == Some(&'*') {
                    segs.push(String::new());
                }
                // `a::{b, c}`: each member of the group (one level; nested groups are rare).
                if chars.get(i) == Some(&'{') {
                    let close = chars[i..].iter().position(|&c| c == '}').map(|p| i + p);
                    if let Some(close) = close {
                        let group: String = chars[i + 1..close].iter().collect();
                        for m in group.split(',') {
                            let m = m.trim().split(" as ").next().unwrap_or("").trim();
                            let mut p = segs.clone();
                            p.extend(m.split("::").filter(|s| !s.is_empty()).map(String::from));
                            out.push(p);
                        }
                    }
                }
            }
            break;
        }
        if segs.len() > 1 {
            out.push(segs);
        }
    }
    out.into_iter()
        .filter_map(|p| {
            let mut abs = here.clone();
            let mut it = p.iter().peekable();
            match it.peek().map(|s| s.as_str()) {
                Some("crate") => {
                    abs.clear();
                    it.next();
                }
                Some("super") => {
                    while it.peek().is_some_and(|s| *s == "super") {
                        abs.pop();
                        it.next();
                    }
                }
                Some("self") => {
                    it.next();
                }
                // From the crate root, `child::x` names a child module.
                Some(s) if module.is_empty() && roots.contains(s) => {}
                _ => return None,
            }
            abs.extend(it.cloned());
            Some(abs)
        })
        .collect()
}

/// The import graph of one crate: module -> the modules its code names.
fn import_graph(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let mods = modules(src)?;
    let roots: BTreeSet<String> = mods
        .keys()
        .filter(|m| !m.is_empty() && !m.contains("::"))
        .cloned()
        .collect();
    // Re-exports (`pub use a::B;`) seen through: a path to `m::B` is a path to `a`.
    let mut codes = BTreeMap::new();
    for (m, f) in &mods {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {f:?}"))?;
        codes.insert(m.clone(), code_only(&text));
    }
    let mut reexport: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (m, code) in &codes {
        for stmt in code.split(';') {
            let stmt = stmt.trim();
            let Some(rest) = stmt.strip_prefix("pub use ") else {
                continue;
            };
            for p in paths_named(m, &format!("{rest};"), &roots) {
                if let Some(name) = p.last() {
                    reexport.insert((m.clone(), name.clone()), p.clone());
                }
            }
            // `pub use child::Item` from a module names its child directly.
            let first = rest.split("::").next().unwrap_or("");
            let child = if m.is_empty() {
                first.to_string()
            } else {
                format!("{m}::{first}")
            };
            if mods.contains_key(&child) {
                let p: Vec<String> = child
                    .split("::")
                    .map(String::from)
                    .chain(rest.split("::").skip(1).map(|s| s.trim().to_string()))
                    .collect();
                if let Some(name) = p.last() {
                    reexport.insert((m.clone(), name.clone()), p);
                }
            }
        }
    }
    let resolve = |p: &[String]| -> Option<String> {
        let mut p = p.to_vec();
        for _ in 0..8 {
            // The longest module the path begins with.
            let k = (0..=p.len())
                .rev()
                .find(|&k| mods.contains_key(&p[..k].join("::")))?;
            let m = p[..k].join("::");
            if let Some(to) = p
                .get(k)
                .and_then(|item| reexport.get(&(m.clone(), item.clone())))
            {
                if to != &p {
                    let mut q = to.clone();
                    q.extend(p[k + 1..].iter().cloned());
                    p = q;
                    continue;
                }
            }
            return Some(m);
        }
        None
    };
    let mut graph = BTreeMap::new();
    for (m, code) in &codes {
        // The crate root's `pub use` lines are its facade, seen through above, not imports.
        let code = if m.is_empty() {
            code.split_inclusive(';')
                .filter(|s| !s.trim_start().starts_with("pub use "))
                .collect()
        } else {
            code.clone()
        };
        let mut to = BTreeSet::new();
        for p in paths_named(m, &code, &roots) {
            if let Some(t) = resolve(&p) {
                if &t != m {
                    to.insert(t);
                }
            }
        }
        graph.insert(m.clone(), to);
    }
    Ok(graph)
}

/// The strongly connected groups of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct S<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.g.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = S {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn no_import_circle_in_any_crate() -> Result<()> {
    let mut found = Vec::new();
    for (dir, name, _) in CRATES {
        let src = root().join(dir).join("src");
        let graph = import_graph(&src)?;
        assert!(!graph.is_empty(), "{name}: no modules under {src:?}");
        for c in circles(&graph) {
            let show: Vec<String> = c
                .iter()
                .map(|m| {
                    let to: Vec<&str> = graph[m]
                        .iter()
                        .filter(|t| c.contains(t))
                        .map(String::as_str)
                        .collect();
                    format!("  {m} -> {}", to.join(", "))
                })
                .collect();
            found.push(format!("{name}:\n{}", show.join("\n")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
    Ok(())
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(circles(&g), vec![vec!["a", "b", "c"]]);
    let code = code_only(
        "use crate::x::{Y, z::W};\n// crate::q::R\nlet s = \"crate::s::T\"; super::p::f();",
    );
    let roots = BTreeSet::new();
    let p = paths_named("m::n", &code, &roots);
    assert!(p.contains(&vec!["x".to_string(), "Y".into()]), "{p:?}");
    assert!(
        p.contains(&vec!["x".to_string(), "z".into(), "W".into()]),
        "{p:?}"
    );
    assert!(
        p.contains(&vec!["m".to_string(), "p".into(), "f".into()]),
        "{p:?}"
    );
    assert!(!p.iter().any(|p| p[0] == "q" || p[0] == "s"), "{p:?}");
}

/// No source file of the simulation kit, the FPGA flow, the interop rig, the command or the
/// driver over 600 lines (the house limit; the RC engines in `hdl` are still being split).
#[test]
fn no_file_of_the_kit_the_flow_or_the_command_is_over_600_lines() -> Result<()> {
    let mut long = Vec::new();
    for dir in ["sim", "fpga", "interop", "cli", "py", "host-driver"] {
        let src = root().join(dir).join("src");
        for f in modules(&src)?.values() {
            let n = std::fs::read_to_string(f)
                .with_context(|| format!("reading {f:?}"))?
                .lines()
                .count();
            if n > 600 {
                long.push(format!("{}: {n} lines", f.display()));
            }
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
    Ok(())
}
