//! ferroce simulation, the test-bench kit: Verilator models of the emitted Verilog, the models
//! around them (AXI streams, Ethernet and XGMII links, a PCIe root complex with host memory),
//! the driver's simulator backend and the two-host world. The FPGA flow is `ferroce-fpga`, the
//! Soft-RoCE rig `ferroce-interop`, the `ferroce` command `ferroce-cli`.
//!
//! Building and checking the Verilog:
//! - [`designs`]: emit a design from the registry and open its model or testbench in one call.
//! - [`build`]: compile a Verilog filelist with Verilator into a shared library, in parallel,
//!   cached by content in [`cache`].
//! - [`cache`]: the result cache outside the clone (models, and the FPGA flow's lint verdicts and Yosys results),
//!   keyed by a hash of everything that decides each entry.
//! - [`model`]: load a model; set and get ports by name at any width, evaluate, trace to VCD.
//!
//! Driving it, cocotb-style:
//! - [`tb`]: a testbench: a clock, rising edges, N cycles, and components that sample and
//!   drive at each edge.
//! - [`axis`]: AXI-stream `AxisSource` / `AxisSink` / `AxisMonitor`; [`pause`]: their pause
//!   generators; [`record`]: ready/valid streams of named fields (commands, doorbells).
//! - [`roce`]: RoCEv2 frames for stimulus (headers, payload, ICRC from `spec`).
//!
//! The world around a NIC:
//! - [`link`]: an Ethernet link between two models' frame faces at a line rate, with a pcap
//!   tap, fault injection and a traffic generator for MAC control frames; [`xgmii`] and
//!   [`xgmii_link`]: the same at the XGMII (clause 46 encoder and checker, lane faults).
//! - [`pcie`]: the PCIe root complex: host memory of driver-allocated buffers, MMIO to BAR0, the
//!   NIC's DMA reads and writes with latency, MPS/MRRS/RCB rules and fault checks.
//! - [`host`]: the driver's simulator backend: `Bar` and `DmaMemory` over a NIC model and its
//!   root complex; NICs joined to step together.
//! - [`world`]: two hosts, each with a whole NIC and the driver, joined by a link each way;
//!   [`traffic`]: streams of RDMA WRITEs between them, checked and timed; [`bench`]: the
//!   benchmark's setting, one QP pair on a default world.
//! - [`bridge`]: a NIC's Ethernet port on a socket to the world outside (a QEMU guest's NIC).
//! - [`many_qps`]: many QP pairs on one world, for the benchmarks.

pub mod axis;
pub mod bench;
pub mod bridge;
pub mod build;
pub mod cache;
pub mod clocks;
pub mod designs;
pub mod fault;
mod generated;
pub mod host;
pub mod link;
pub mod many_qps;
pub mod model;
mod parallel;
pub mod pause;
mod pcap_tap;
pub mod pcie;
pub mod random_faults;
pub mod record;
pub mod roce;
pub mod tb;
pub mod traffic;
pub mod wire;
pub mod world;
mod world_host;
pub mod xgmii;
pub mod xgmii_link;

pub use axis::{AxisFrame, AxisMonitor, AxisSink, AxisSource};
pub use build::{BuildOptions, ModelLibrary, Training};
pub use fault::Fault;
pub use link::{Link, LinkConfig, LinkStats};
pub use model::{Direction, Model, Port};
pub use pause::PauseGenerator;
pub use random_faults::RandomFaults;
pub use record::{RecordSink, RecordSource};
pub use tb::{Component, Tb};
pub use xgmii_link::{LaneFault, XgmiiLink, XgmiiStats};

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    #[error("`{cmd}` failed ({status}); its output is in {log}")]
    Tool {
        cmd: String,
        status: String,
        log: PathBuf,
    },
    #[error("could not run `{cmd}`: {source} (is it installed? .ci/run installs verilator)")]
    Spawn { cmd: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("loading model library {path}: {source}")]
    Load {
        path: PathBuf,
        source: libloading::Error,
    },
    #[error("the Verilator header {0} lists no ports")]
    NoPorts(PathBuf),
    #[error("model {model} has no port named {port:?} (ports: {known})")]
    NoSuchPort {
        model: String,
        port: String,
        known: String,
    },
    #[error("port {port} is {width} bits wide; {what}")]
    Width {
        port: String,
        width: usize,
        what: String,
    },
    #[error("port {0} is an output and cannot be driven")]
    DriveOutput(String),
    #[error("design: {0}")]
    Design(String),
    #[error("`{tool}` not found: {hint}")]
    NoTool { tool: String, hint: String },
    #[error("XGMII lane {lane}: {what}")]
    Xgmii { lane: usize, what: String },
    #[error("DMA fault: {0}")]
    Dma(String),
    #[error("timed out after {cycles} cycles waiting for {what}")]
    Timeout { cycles: u64, what: String },
    #[error("driver: {0}")]
    Driver(#[from] ferroce_driver::DriverError),
}

pub type Result<T> = std::result::Result<T, SimError>;
