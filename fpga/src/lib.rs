//! ferroce on FPGAs: the gates every design passes and the open flow that places it.
//!
//! - [`synth`]: the lint and synthesis gates (`verilator --lint-only -Wall`, Yosys
//!   `synth_ice40` / `synth_xilinx`), cached in `ferroce_sim`'s result cache.
//! - [`family`]: what the flow asks of an FPGA family (tools, cells, constraints); ECP5 is
//!   the one there is, a second is one module.
//! - [`pnr`]: place and route with the open flow (YoWASP Yosys and nextpnr), out of
//!   context in a wrapper that registers the ports; Fmax, critical path and resources, cached.
//! - [`path`]: a path through a routed netlist, its cells' names made readable.
//! - [`report`]: what place and route made of a design, cached as JSON, shown as tables.
//! - [`sta`]: timing analysis of a routed design's SDF: the worst paths, distinct by start or end.
//! - [`board`]: a board top (the ECP5-5G evaluation board with the 10G MAC looped back),
//!   placed and routed with the board's pins, and its bitstream.

pub mod board;
pub mod family;
pub mod path;
pub mod pnr;
pub mod report;
pub mod sta;
pub mod synth;
pub mod wrapper;

use std::path::PathBuf;

/// What can go wrong in the FPGA flow.
#[derive(Debug, thiserror::Error)]
pub enum FpgaError {
    #[error("could not run `{cmd}`: {source} (is it installed? `.ci/setup` installs the flow)")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{tool}` not found: {hint}")]
    NoTool { tool: String, hint: String },
    /// A design, constraint file, report or board that the flow cannot use.
    #[error("{0}")]
    Flow(String),
    /// Emitting a design, or the result cache.
    #[error(transparent)]
    Sim(#[from] ferroce_sim::SimError),
}

pub type Result<T> = std::result::Result<T, FpgaError>;

/// A `map_err` for an I/O error on `path`.
pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> FpgaError + '_ {
    move |source| FpgaError::Io {
        path: path.to_path_buf(),
        source,
    }
}
