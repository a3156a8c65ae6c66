//! Verilator builds of emitted Verilog, cached by content.
//!
//! A build runs `verilator --cc` on the filelist, then compiles the generated C++ with a small
//! generated shim (a C ABI listing every top-level port with its width, direction and address)
//! into a shared library, compiled for this CPU (`-march=native`). The cache key is a SHA-256
//! of the Verilog text, the top name, the options, the shim's version, the Verilator and g++
//! versions and what `-march=native` means here, so an unchanged design is never rebuilt; the cache is [`crate::cache`]'s `models/` (outside the clone by default).
//!
//! A model may also be optimised by the profile of a workload ([`Training`]): built with
//! counters, run, and built again with the counts (the two-host world's NIC is).
//!
//! The C++ files of one model compile in parallel, at most one compiler a core across all of
//! this process's threads ([`crate::cache::job`]), and Verilator's own runtime
//! (`verilated.cpp`, ...) is compiled once per Verilator version and options, not once per
//! model.

use crate::cache::{io_err, job, Cache, Key};
use crate::generated::{parse_ports, shim_source, skip_input_region_on_clock, slow_classes};
use crate::{Result, SimError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bump when the generated shim or the compile steps change, to invalidate cached libraries.
const SHIM_VERSION: u32 = 5;

#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Compile in VCD tracing support (enable it per model with `Model::trace_to`).
    pub trace: bool,
    /// C++ optimisation level of the model's evaluation code (`-O1` builds fast, `-O2` runs
    /// faster, `-O3` faster still on the whole NIC); its slow-path code is never optimised.
    pub opt: &'static str,
    /// Optimise the evaluation code by a profile of this workload (`None`: no profile).
    pub training: Option<Training>,
    /// Where cached builds live; default [`crate::cache::root`]`/models`, or
    /// `$FERROCE_VERILATOR_CACHE`.
    pub cache_dir: Option<PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            trace: false,
            opt: "-O2",
            training: None,
            cache_dir: None,
        }
    }
}

/// Profile-guided optimisation of a model's evaluation code (g++ `-fprofile-generate`, then
/// `-fprofile-use`): the model is built once with counters in it, the workload `run` runs on
/// that build, and the model is built again with the counts the run left, so the compiler lays
/// out and inlines for the branches the workload takes. The counts are cached like a model
/// (keyed by the model's own key and `name`); only the final library is used.
#[derive(Clone, Copy, Debug)]
pub struct Training {
    /// The workload and its version, part of the cache key: rename it when the workload
    /// changes.
    pub name: &'static str,
    /// Runs the workload on the instrumented model (the library given). Its models must be
    /// stepped on one thread, so that the counts are exact.
    pub run: fn(&ModelLibrary) -> Result<()>,
}

/// A build's part in profile-guided optimisation.
#[derive(Clone, Copy)]
enum Pgo<'a> {
    /// None.
    Off,
    /// Counters in the evaluation code, written beside its objects when the profile is dumped.
    Instrument,
    /// Use the counts in this directory (`<object>.gcda` files).
    Use(&'a Path),
}

impl Pgo<'_> {
    /// The compiler's arguments for the evaluation code.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Pgo::Off => &[],
            Pgo::Instrument => &["-fprofile-generate", "-fprofile-update=single"],
            // Code the workload never ran is optimised as usual, not for size; counts the
            // compiler finds inconsistent are repaired rather than refused.
            Pgo::Use(_) => &[
                "-fprofile-use",
                "-fprofile-partial-training",
                "-fprofile-correction",
                "-Wno-missing-profile",
            ],
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
    pgo: Pgo,
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
                    let fast = !slow.contains(&stem);
                    let mut cc = cxx(if fast { opts.opt } else { "-O0" }, opts, includes);
                    if fast {
                        cc.args(pgo.flags());
                    }
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
        compile_all(
            opts,
            &[&inc, &inc.join("vltstd")],
            &sources,
            &[],
            Pgo::Off,
            &tmp,
        )?;
        let dir = cache.publish(&tmp, &entry)?;
        Ok(objs(&dir))
    })
}

/// Build (or find in the cache) the Verilator model of `top` from `files`; with
/// `opts.training`, the model optimised by that workload's profile (its counts made first, or
/// found in the cache).
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
    let library = |dir: &Path| ModelLibrary {
        top: top.to_string(),
        path: dir.join(format!("lib{top}.so")),
        trace: opts.trace,
    };
    let (entry, counts) = match opts.training {
        None => (format!("{top}-{hash}"), None),
        Some(t) => {
            let trained = format!("{top}-{hash}-{}", Key::new("training").text(t.name).hex());
            let counts = profile(&cache, top, files, opts, t, &format!("{trained}-counts"))?;
            (trained, Some(counts))
        }
    };
    cache.once(&entry, || {
        let dir = cache.dir.join(&entry);
        if library(&dir).path.exists() {
            return Ok(library(&dir));
        }
        // Build in a scratch directory and rename, so a crashed build never looks cached.
        let tmp = cache.scratch(&entry)?;
        let pgo = counts.as_deref().map_or(Pgo::Off, Pgo::Use);
        compile_model(&cache, top, files, opts, pgo, &tmp)?;
        Ok(library(&cache.publish(&tmp, &entry)?))
    })
}

/// The counts of `training` run on `top` built with counters (cached as `entry`, a directory
/// of `<object>.gcda` files).
fn profile(
    cache: &Cache,
    top: &str,
    files: &[PathBuf],
    opts: &BuildOptions,
    training: Training,
    entry: &str,
) -> Result<PathBuf> {
    cache.once(entry, || {
        let dir = cache.dir.join(entry);
        if dir.exists() {
            return Ok(dir);
        }
        let tmp = cache.scratch(entry)?;
        let lib = ModelLibrary {
            top: top.to_string(),
            path: compile_model(cache, top, files, opts, Pgo::Instrument, &tmp)?,
            trace: opts.trace,
        };
        {
            // Held loaded across the run, so that the counts stay in memory until dumped here
            // (a library unloaded between the run's models would start again from zero).
            // SAFETY: the library is the one just built; loading runs its constructors only.
            let held = unsafe { libloading::Library::new(&lib.path) }
                .map_err(|e| SimError::Design(format!("loading {}: {e}", lib.path.display())))?;
            (training.run)(&lib)?;
            // SAFETY: fe_profile_dump takes no arguments and only writes the counts.
            unsafe {
                let dump: libloading::Symbol<unsafe extern "C" fn()> = held
                    .get(b"fe_profile_dump\0")
                    .map_err(|e| SimError::Design(format!("fe_profile_dump: {e}")))?;
                dump();
            }
        }
        // Keep the counts and the logs; the instrumented library is not needed again.
        for e in std::fs::read_dir(&tmp).map_err(io_err(&tmp))? {
            let p = e.map_err(io_err(&tmp))?.path();
            if p.extension().is_some_and(|x| x == "so") {
                std::fs::remove_file(&p).map_err(io_err(&p))?;
            }
        }
        cache.publish(&tmp, entry)
    })
}

/// Verilator and g++ on `files` in the scratch directory `tmp`: the library `lib<top>.so`
/// there (its path returned), with the logs; the generated C++ and the objects are removed.
fn compile_model(
    cache: &Cache,
    top: &str,
    files: &[PathBuf],
    opts: &BuildOptions,
    pgo: Pgo,
    tmp: &Path,
) -> Result<PathBuf> {
    let mut v = Command::new("verilator");
    v.args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast"])
        .args(["-Wno-fatal", "-Wno-lint", "-Wno-style"])
        .arg("--top-module")
        .arg(top)
        .arg("-Mdir")
        .arg(tmp);
    if opts.trace {
        v.arg("--trace");
    }
    v.arg("-f").arg(verilator_file_list(tmp, files)?);
    run(&mut v, &tmp.join("verilator.log"))?;
    let header = tmp.join(format!("V{top}.h"));
    let ports = parse_ports(&std::fs::read_to_string(&header).map_err(io_err(&header))?);
    if ports.is_empty() {
        return Err(SimError::NoPorts(header));
    }
    let skips = skip_input_region_on_clock(tmp, top)?;
    let shim = tmp.join("ferroce_shim.cpp");
    std::fs::write(&shim, shim_source(top, &ports, opts.trace, skips)).map_err(io_err(&shim))?;
    let inc = verilator_root().join("include");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(tmp)
        .map_err(io_err(tmp))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "cpp")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('V'))
        })
        .collect();
    sources.sort();
    sources.push(shim);
    let runtime = runtime_objects(cache, opts)?;
    let mk = tmp.join(format!("V{top}_classes.mk"));
    let slow = slow_classes(&std::fs::read_to_string(&mk).map_err(io_err(&mk))?);
    // The counts beside the objects they belong to, where g++ looks for them.
    let mut counts = Vec::new();
    if let Pgo::Use(dir) = pgo {
        for e in std::fs::read_dir(dir).map_err(io_err(dir))? {
            let p = e.map_err(io_err(dir))?.path();
            if let (Some(name), Some("gcda")) =
                (p.file_name(), p.extension().and_then(|x| x.to_str()))
            {
                let to = tmp.join(name);
                std::fs::copy(&p, &to).map_err(io_err(&p))?;
                counts.push(to);
            }
        }
    }
    let objs = compile_all(
        opts,
        &[tmp, &inc, &inc.join("vltstd")],
        &sources,
        &slow,
        pgo,
        tmp,
    )?;
    let out = tmp.join(format!("lib{top}.so"));
    let mut ld = Command::new("g++");
    ld.arg("-shared");
    if let Pgo::Instrument = pgo {
        // The counters' runtime, and in it the dump the shim calls (a weak reference alone
        // would not pull it from the archive).
        ld.args(["-fprofile-generate", "-Wl,-u,__gcov_dump"]);
    }
    ld.args(&objs)
        .args(&runtime)
        .arg("-o")
        .arg(&out)
        .arg("-lpthread");
    run(&mut ld, &tmp.join("link.log"))?;
    // Keep the library and the logs; the objects, counts and generated C++ are only build
    // inputs (an instrumented build writes its counts beside the objects, by name).
    for p in objs.iter().chain(&sources).chain(&counts) {
        let _ = std::fs::remove_file(p);
    }
    Ok(out)
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
