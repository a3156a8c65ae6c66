//! Verilator builds of emitted Verilog, cached by content.
//!
//! A build runs `verilator --cc` on the filelist, then compiles the generated C++ with a small
//! generated shim (a C ABI listing every top-level port with its width, direction and address)
//! into a shared library, compiled for this CPU (`-march=native`). The cache key is a SHA-256
//! of the Verilog text, the top name, the options, the shim's version, the Verilator and g++
//! versions and what `-march=native` means here, so an unchanged design is never rebuilt; the cache is [`crate::cache`]'s `models/` (outside the clone by default).
//!
//! The C++ files of one model compile in parallel, at most one compiler a core across all of
//! this process's threads ([`crate::cache::job`]), and Verilator's own runtime
//! (`verilated.cpp`, ...) is compiled once per Verilator version and options, not once per
//! model.

use crate::cache::{io_err, job, Cache, Key};
use crate::{Result, SimError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when the generated shim or the compile steps change, to invalidate cached libraries.
const SHIM_VERSION: u32 = 4;

#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Compile in VCD tracing support (enable it per model with `Model::trace_to`).
    pub trace: bool,
    /// C++ optimisation level of the model's evaluation code (`-O1` builds fast, `-O2` runs
    /// faster, `-O3` faster still on the whole NIC); its slow-path code is never optimised.
    pub opt: &'static str,
    /// Where cached builds live; default [`crate::cache::root`]`/models`, or
    /// `$FERROCE_VERILATOR_CACHE`.
    pub cache_dir: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            trace: false,
            opt: "-O2",
            cache_dir: None,
        }
    }
}

/// A compiled model: the shared library and what it was built from.
#[derive(Clone, Debug)]
pub struct ModelLibrary {
    pub top: String,
    pub path: PathBuf,
    pub trace: bool,
}

/// Where `opts`' models are cached: `opts.cache_dir`, `$FERROCE_VERILATOR_CACHE`, or
/// [`crate::cache::root`]`/models`.
pub(crate) fn model_dir(opts: &BuildOptions) -> PathBuf {
    if let Some(d) = &opts.cache_dir {
        return d.clone();
    }
    if let Some(d) = std::env::var_os("FERROCE_VERILATOR_CACHE") {
        return PathBuf::from(d);
    }
    crate::cache::root().join("models")
}

fn model_cache(opts: &BuildOptions) -> Result<Cache> {
    Cache::at(model_dir(opts))
}

fn run(cmd: &mut Command, log: &Path) -> Result<()> {
    let desc = format!("{cmd:?}");
    let out = job(|| cmd.output()).map_err(|source| SimError::Spawn {
        cmd: desc.clone(),
        source,
    })?;
    let mut text = out.stdout;
    text.extend_from_slice(&out.stderr);
    std::fs::write(log, &text).map_err(io_err(log))?;
    if !out.status.success() {
        return Err(SimError::Tool {
            cmd: desc,
            status: out.status.to_string(),
            log: log.to_path_buf(),
        });
    }
    Ok(())
}

fn verilator_root() -> PathBuf {
    std::env::var_os("VERILATOR_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/verilator"))
}

/// What `-march=native` means on this machine (g++'s target options, the instruction sets
/// of this CPU among them): part of every cache key, so a cache moved to another CPU rebuilds
/// rather than loads code for instructions that CPU may lack. `-march=native` measured about
/// 1.25x on the whole NIC's model against the default target.
fn native_target() -> Result<&'static str> {
    static TARGET: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(t) = TARGET.get() {
        return Ok(t);
    }
    let desc = "g++ -march=native -Q --help=target".to_string();
    let out = Command::new("g++")
        .args(["-march=native", "-Q", "--help=target"])
        .output()
        .map_err(|source| SimError::Spawn {
            cmd: desc.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(SimError::Design(format!("{desc} failed: {}", out.status)));
    }
    Ok(TARGET.get_or_init(|| String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The compiler flags every object of a model shares; `opt` is the optimisation level.
fn cxx(opt: &str, opts: &BuildOptions, includes: &[&Path]) -> Command {
    let mut cc = Command::new("g++");
    cc.args(["-fPIC", "-std=c++17", opt, "-march=native", "-w"])
        .args(["-DVM_COVERAGE=0", "-DVM_SC=0"])
        .arg(format!("-DVM_TRACE={}", u8::from(opts.trace)));
    for i in includes {
        cc.arg("-I").arg(i);
    }
    cc
}

/// Compile `sources` to objects in `dir`, in parallel (one compiler a core): those `slow`
/// names unoptimised, the rest at `opts.opt`.
fn compile_all(
    opts: &BuildOptions,
    includes: &[&Path],
    sources: &[PathBuf],
    slow: &[String],
    dir: &Path,
) -> Result<Vec<PathBuf>> {
    std::thread::scope(|s| {
        let jobs: Vec<_> = sources
            .iter()
            .map(|src| {
                s.spawn(move || -> Result<PathBuf> {
                    let stem = src
                        .file_stem()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let obj = dir.join(format!("{stem}.o"));
                    let opt = if slow.contains(&stem) {
                        "-O0"
                    } else {
                        opts.opt
                    };
                    let mut cc = cxx(opt, opts, includes);
                    cc.arg("-c").arg(src).arg("-o").arg(&obj);
                    run(&mut cc, &dir.join(format!("{stem}.log")))?;
                    Ok(obj)
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| {
                j.join()
                    .map_err(|_| SimError::Design("a compile thread panicked".into()))?
            })
            .collect()
    })
}

/// Verilator's runtime (`verilated.cpp`, `verilated_threads.cpp`, and the VCD writer when
/// tracing) as objects, compiled once per Verilator version and options.
fn runtime_objects(cache: &Cache, opts: &BuildOptions) -> Result<Vec<PathBuf>> {
    let inc = verilator_root().join("include");
    let mut names = vec!["verilated", "verilated_threads"];
    if opts.trace {
        names.push("verilated_vcd_c");
    }
    let key = Key::new("verilator-runtime")
        .text(&format!("{}\0{}\0{SHIM_VERSION}", opts.trace, opts.opt))
        .tool("verilator", "--version")?
        .tool("g++", "--version")?
        .text(native_target()?)
        .hex();
    let entry = format!("runtime-{key}");
    let objs =
        |dir: &Path| -> Vec<PathBuf> { names.iter().map(|n| dir.join(format!("{n}.o"))).collect() };
    cache.once(&entry, || {
        let dir = cache.dir.join(&entry);
        if dir.exists() {
            return Ok(objs(&dir));
        }
        let tmp = cache.scratch(&entry)?;
        let sources: Vec<PathBuf> = names.iter().map(|n| inc.join(format!("{n}.cpp"))).collect();
        compile_all(opts, &[&inc, &inc.join("vltstd")], &sources, &[], &tmp)?;
        let dir = cache.publish(&tmp, &entry)?;
        Ok(objs(&dir))
    })
}

/// Build (or find in the cache) the Verilator model of `top` from `files`.
pub fn build(top: &str, files: &[PathBuf], opts: &BuildOptions) -> Result<ModelLibrary> {
    let hash = Key::new("verilator-model")
        .text(&format!(
            "{top}\0{}\0{}\0{SHIM_VERSION}",
            opts.trace, opts.opt
        ))
        .tool("verilator", "--version")?
        .tool("g++", "--version")?
        .text(native_target()?)
        .files(files)?
        .hex();
    let cache = model_cache(opts)?;
    let entry = format!("{top}-{hash}");
    let found = |dir: &Path| ModelLibrary {
        top: top.to_string(),
        path: dir.join(format!("lib{top}.so")),
        trace: opts.trace,
    };
    cache.once(&entry, || {
        let dir = cache.dir.join(&entry);
        if dir.join(format!("lib{top}.so")).exists() {
            return Ok(found(&dir));
        }
        // Build in a scratch directory and rename, so a crashed build never looks cached.
        let tmp = cache.scratch(&entry)?;
        let mut v = Command::new("verilator");
        v.args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast"])
            .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"])
            .arg("--top-module")
            .arg(top)
            .arg("-Mdir")
            .arg(&tmp);
        if opts.trace {
            v.arg("--trace");
        }
        v.arg("-f").arg(verilator_file_list(&tmp, files)?);
        run(&mut v, &tmp.join("verilator.log"))?;
        let header = tmp.join(format!("V{top}.h"));
        let ports = parse_ports(&std::fs::read_to_string(&header).map_err(io_err(&header))?);
        if ports.is_empty() {
            return Err(SimError::NoPorts(header));
        }
        let skips = skip_input_region_on_clock(&tmp, top)?;
        let shim = tmp.join("ferroce_shim.cpp");
        std::fs::write(&shim, shim_source(top, &ports, opts.trace, skips))
            .map_err(io_err(&shim))?;
        let inc = verilator_root().join("include");
        let mut sources: Vec<PathBuf> = std::fs::read_dir(&tmp)
            .map_err(io_err(&tmp))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "cpp")
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('V'))
            })
            .collect();
        sources.sort();
        sources.push(shim);
        let runtime = runtime_objects(&cache, opts)?;
        let mk = tmp.join(format!("V{top}_classes.mk"));
        let slow = slow_classes(&std::fs::read_to_string(&mk).map_err(io_err(&mk))?);
        let objs = compile_all(
            opts,
            &[&tmp, &inc, &inc.join("vltstd")],
            &sources,
            &slow,
            &tmp,
        )?;
        let out = tmp.join(format!("lib{top}.so"));
        let mut ld = Command::new("g++");
        ld.arg("-shared")
            .args(&objs)
            .args(&runtime)
            .arg("-o")
            .arg(&out)
            .arg("-lpthread");
        run(&mut ld, &tmp.join("link.log"))?;
        // Keep the library and the logs; the objects and generated C++ are only build inputs.
        for p in objs.iter().chain(sources.iter()) {
            let _ = std::fs::remove_file(p);
        }
        let dir = cache.publish(&tmp, &entry)?;
        Ok(found(&dir))
    })
}

/// The generated files Verilator's makefile compiles as slow-path code (`VM_CLASSES_SLOW`,
/// `VM_SUPPORT_SLOW` in `V<top>_classes.mk`: constructors, the initial and settle passes, the
/// constant pool, the symbol table), which it builds without optimisation (`OPT_SLOW`); so
/// does this build. They run once per model, and are about a third of the whole NIC's C++:
/// the NIC's model builds in about 20% less time and runs no slower.
fn slow_classes(classes_mk: &str) -> Vec<String> {
    let mut slow = Vec::new();
    let mut in_slow = false;
    for line in classes_mk.lines() {
        if let Some((var, _)) = line.split_once("+=") {
            let var = var.trim();
            in_slow = var == "VM_CLASSES_SLOW" || var == "VM_SUPPORT_SLOW";
        } else if !line.starts_with(char::is_whitespace) {
            in_slow = false;
        } else if in_slow {
            let name = line.trim().trim_end_matches('\\').trim();
            if !name.is_empty() {
                slow.push(name.to_string());
            }
        }
    }
    slow
}

/// Let `fe_eval_clock` skip the input-combinational region.
///
/// Verilator 5.0xx runs the logic driven combinationally from top-level inputs (its `ico`
/// region) on every `eval()`, changed inputs or not; the region after a clock edge recomputes
/// what the edge changes. When only the clock moved since the last full evaluation, the `ico`
/// pass computes from the same inputs and the same state what the last pass did, so the
/// testbench's clock evaluations (`Model::clock`) skip it: the `_eval` function starts its
/// `ico` loop only when the shim's thread-local `fe_skip_ico` is false. Two passes of the
/// region a cycle fewer, about 1.5x on the whole NIC. A Verilator whose `_eval` does not have
/// the expected shape is left alone (every evaluation then runs the region, as before).
fn skip_input_region_on_clock(dir: &Path, top: &str) -> Result<bool> {
    let head = format!("void V{top}___024root___eval(V{top}___024root* vlSelf) {{");
    const START: &str = "    __VicoContinue = 1U;\n";
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        if path.extension().is_none_or(|x| x != "cpp") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        let Some(at) = text.find(&head) else {
            continue;
        };
        let body_end = text[at..].find("\n}\n").map_or(text.len(), |e| at + e);
        let Some(rel) = text[at..body_end].find(START) else {
            return Ok(false);
        };
        let mut patched = String::with_capacity(text.len() + 64);
        patched.push_str("extern thread_local bool fe_skip_ico;\n");
        patched.push_str(&text[..at + rel]);
        patched.push_str("    __VicoContinue = !fe_skip_ico;\n");
        patched.push_str(&text[at + rel + START.len()..]);
        std::fs::write(&path, patched).map_err(io_err(&path))?;
        return Ok(true);
    }
    Ok(false)
}

/// A top-level port as Verilator declares it in `V<top>.h`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PortDecl {
    pub name: String,
    pub width: usize,
    pub input: bool,
}

/// Parse `VL_IN8(&clk,0,0);`, `VL_OUTW(&data,511,0,16);` and friends.
pub(crate) fn parse_ports(header: &str) -> Vec<PortDecl> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (kind, rest) = line.split_once('(')?;
            let input = match kind {
                k if k.starts_with("VL_IN") => true,
                k if k.starts_with("VL_OUT") => false,
                _ => return None,
            };
            let args: Vec<&str> = rest.trim_end_matches(");").split(',').collect();
            let name = args.first()?.trim().trim_start_matches('&').to_string();
            let msb: usize = args.get(1)?.trim().parse().ok()?;
            let lsb: usize = args.get(2)?.trim().parse().ok()?;
            Some(PortDecl {
                name,
                width: msb - lsb + 1,
                input,
            })
        })
        .collect()
}

fn shim_source(top: &str, ports: &[PortDecl], trace: bool, skips: bool) -> String {
    let n = ports.len();
    let names: String = ports.iter().map(|p| format!("\"{}\",", p.name)).collect();
    let widths: String = ports.iter().map(|p| format!("{},", p.width)).collect();
    let dirs: String = ports
        .iter()
        .map(|p| format!("{},", u8::from(p.input)))
        .collect();
    let ptrs: String = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.width > 64 {
                format!(
                    "        case {i}: return (void*)m->model->{}.data();\n",
                    p.name
                )
            } else {
                format!("        case {i}: return (void*)&m->model->{};\n", p.name)
            }
        })
        .collect();
    let (trace_inc, trace_fns) = if trace {
        (
            "#include \"verilated_vcd_c.h\"\n",
            r#"
int fe_trace_open(Fe* m, const char* path) {
    if (m->tfp) return 1;
    m->tfp = new VerilatedVcdC;
    m->model->trace(m->tfp, 99);
    m->tfp->open(path);
    return 0;
}
void fe_trace_dump(Fe* m, uint64_t t) { if (m->tfp) m->tfp->dump(t); }
void fe_trace_close(Fe* m) { if (m->tfp) { m->tfp->close(); delete m->tfp; m->tfp = nullptr; } }
"#,
        )
    } else {
        (
            "",
            r#"
int fe_trace_open(Fe*, const char*) { return 2; }
void fe_trace_dump(Fe*, uint64_t) {}
void fe_trace_close(Fe*) {}
"#,
        )
    };
    let tfp_decl = if trace {
        "    VerilatedVcdC* tfp = nullptr;\n"
    } else {
        "    void* tfp = nullptr;\n"
    };
    format!(
        r#"// Generated by ferroce-sim: C ABI over the Verilator model V{top}.
#include "V{top}.h"
#include "verilated.h"
{trace_inc}#include <cstdint>

struct Fe {{
    VerilatedContext* ctx;
    V{top}* model;
{tfp_decl}}};

thread_local bool fe_skip_ico = false;

static const char* NAMES[{n}] = {{{names}}};
static const int WIDTHS[{n}] = {{{widths}}};
static const int INPUTS[{n}] = {{{dirs}}};

extern "C" {{
void fe_trace_close(Fe* m);
int fe_port_count() {{ return {n}; }}
const char* fe_port_name(int i) {{ return NAMES[i]; }}
int fe_port_width(int i) {{ return WIDTHS[i]; }}
int fe_port_input(int i) {{ return INPUTS[i]; }}
Fe* fe_new() {{
    Fe* m = new Fe;
    m->ctx = new VerilatedContext;
    m->ctx->traceEverOn({trace_on});
    m->model = new V{top}(m->ctx, "{top}");
    return m;
}}
void* fe_port_ptr(Fe* m, int i) {{
    switch (i) {{
{ptrs}        default: return nullptr;
    }}
}}
void fe_eval(Fe* m) {{ m->model->eval(); }}
void fe_eval_clock(Fe* m) {{ fe_skip_ico = true; m->model->eval(); fe_skip_ico = false; }}
int fe_clock_skips_inputs() {{ return {skips}; }}
void fe_delete(Fe* m) {{
    fe_trace_close(m);
    m->model->final();
    delete m->model;
    delete m->ctx;
    delete m;
}}
{trace_fns}}}
"#,
        trace_on = if trace { "true" } else { "false" },
        skips = u8::from(skips),
    )
}

/// Write `files` one a line to `dir/files.f`, for Verilator's `-f`: the whole NIC names more
/// files than one command-line argument may hold (Verilator's wrapper passes them on as one).
pub fn verilator_file_list(dir: &Path, files: &[PathBuf]) -> Result<PathBuf> {
    let list = dir.join("files.f");
    let text: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
    std::fs::write(&list, text).map_err(|source| SimError::Io {
        path: list.clone(),
        source,
    })?;
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_slow_path_classes_of_a_verilator_makefile() {
        let mk =
            "VM_TRACE = 0\nVM_CLASSES_FAST += \\\n\tVtop \\\n\tVtop___024root__DepSet_h1__0 \\\n\
                  VM_CLASSES_SLOW += \\\n\tVtop__ConstPool_0 \\\n\tVtop___024root__Slow \\\n\
                  VM_SUPPORT_FAST += \\\nVM_SUPPORT_SLOW += \\\n\tVtop__Syms \\\n\
                  VM_GLOBAL_FAST += \\\n\tverilated \\\n";
        assert_eq!(
            slow_classes(mk),
            ["Vtop__ConstPool_0", "Vtop___024root__Slow", "Vtop__Syms"]
        );
    }

    #[test]
    fn parses_verilator_port_macros() {
        let h = "    VL_IN8(&clk,0,0);\n    VL_OUT(&m_crc_tdata,31,0);\n    VL_INW(&s_axis_tdata,511,0,16);\n    VL_IN64(&x,63,0);\n";
        let p = parse_ports(h);
        assert_eq!(p.len(), 4);
        assert_eq!(
            p[2],
            PortDecl {
                name: "s_axis_tdata".into(),
                width: 512,
                input: true
            }
        );
        assert!(!p[1].input);
    }
}
