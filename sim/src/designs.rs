//! Emit a design's Verilog and open its Verilator model in one call.

use crate::build::{build, model_dir, BuildOptions, ModelLibrary};
use crate::cache::poisoned;
use crate::model::Model;
use crate::tb::Tb;
use crate::{Result, SimError};
use ferroce_hdl::designs::{emit_design, find};
use ferroce_hdl::emit::PortDecl;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where emitted Verilog for tests and the demo goes: `<workspace>/target/ferroce-verilog`.
pub fn verilog_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        })
        .join("ferroce-verilog")
}

/// Emit `name` into `dir/<name>/` and return its files, leaves first.
pub fn emit_to(name: &str, dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(emit_with_ports(name, dir)?.0)
}

/// Emit `name` into `dir/<name>/`; its files (leaves first) and its top module's ports.
pub fn emit_with_ports(name: &str, dir: &Path) -> Result<(Vec<PathBuf>, Vec<PortDecl>)> {
    let emitted = emit_design(name).map_err(|e| SimError::Design(e.to_string()))?;
    let out = dir.join(name);
    emitted
        .write_to(&out)
        .map_err(|e| SimError::Design(e.to_string()))?;
    let files = emitted
        .modules
        .iter()
        .map(|m| out.join(format!("{}.{}", m.name, ferroce_hdl::emit::EXT)))
        .collect();
    Ok((files, emitted.ports()))
}

/// Emit, build (cached) and load the Verilator model of design `name`.
pub fn open_model(name: &str, opts: &BuildOptions) -> Result<Model> {
    Model::load(&library(name, opts)?)
}

/// The model library of design `name`, emitted and built (or found in the cache) once per
/// process. Emitting the whole NIC and hashing its files (over a thousand) for the cache key
/// takes seconds, and every two-host world opens two NICs; the Verilog this binary emits for a
/// name cannot change while it runs, so the library found first is the one a second open would
/// find (unless it was removed from the cache since: then it is made again).
pub(crate) fn library(name: &str, opts: &BuildOptions) -> Result<ModelLibrary> {
    type Options = (bool, &'static str, Option<&'static str>, PathBuf);
    type Found = Mutex<HashMap<(String, Options), ModelLibrary>>;
    static FOUND: OnceLock<Found> = OnceLock::new();
    let found = FOUND.get_or_init(Default::default);
    let training = opts.training.map(|t| t.name);
    let key = (
        name.to_string(),
        (opts.trace, opts.opt, training, model_dir(opts)),
    );
    let known = found.lock().map_err(|_| poisoned())?.get(&key).cloned();
    if let Some(lib) = known.filter(|l| l.path.exists()) {
        return Ok(lib);
    }
    let files = emit_to(name, &verilog_dir())?;
    let lib = build(name, &files, opts)?;
    found
        .lock()
        .map_err(|_| poisoned())?
        .insert(key, lib.clone());
    Ok(lib)
}

/// A testbench on design `name`, clocked at its configuration's clock, reset done.
pub fn open_tb(name: &str, opts: &BuildOptions) -> Result<Tb> {
    open_tb_on(name, &library(name, opts)?)
}

/// [`open_tb`] on a model library of design `name` already built.
pub(crate) fn open_tb_on(name: &str, lib: &ModelLibrary) -> Result<Tb> {
    let design = find(name).ok_or_else(|| SimError::Design(format!("no design named {name}")))?;
    let model = Model::load(lib)?;
    let mut tb = Tb::new(model, "clk", design.config.clock_period_ps())?;
    if tb.model_ref().has_port("rst") {
        tb.reset("rst", 2)?;
    }
    Ok(tb)
}

/// Names of every design that can be opened.
pub fn names() -> Vec<&'static str> {
    ferroce_hdl::designs::DESIGNS
        .iter()
        .map(|d| d.name)
        .collect()
}
