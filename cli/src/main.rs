//! `ferroce`: the project's one command.
//!
//! - `verilog`: write every design's Verilog (one file per module, a filelist per design).
//! - `demo`: two simulated hosts, each with a whole NIC under Verilator, its PCIe root complex
//!   model and the Rust driver, exchanging RDMA WRITEs; every byte checked, figures printed.
//! - `perf`: the benchmarks (throughput against the goodput ceiling, latency, simulation
//!   speed, Yosys resources of every design); `--write` also writes `docs/performance.md`.
//! - `docs`: the generated pages (opcodes, registers, formats, designs and ports).
//! - `pnr`: synthesize, place and route designs on ECP5 with the open flow (YoWASP Yosys and
//!   nextpnr-ecp5), out of context; resources, Fmax per clock and the critical path.
//! - `board`: the ECP5-5G evaluation board's top (the 10G MAC looped back on itself), placed
//!   and routed with the board's pins, and its bitstream.
//! - `cache`: where the result cache is, how big, and `--clear` to empty it.
//! - `interop`: a simulated ferroce host against Linux's Soft-RoCE in a QEMU guest, running
//!   the guest's rdma-core tools against ferroce's side of each; a results table.
//!
//! The crate `ferroce-cli` is the only one that parses arguments, draws progress or reports
//! with `anyhow`; everything it runs is a library call into `ferroce-hdl` (Verilog, docs),
//! `ferroce-sim` (the simulation), `ferroce-fpga` (the gates and the ECP5 flow) or
//! `ferroce-interop` (the Soft-RoCE rig).

mod board;
mod cache;
mod demo;
mod docs;
mod interop;
mod perf;
mod pnr;
mod verilog;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ferroce",
    version,
    about = "ferroce: an open RoCEv2 NIC in Rust HDL"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write Verilog: one file per module with stable names, and a filelist per design.
    Verilog(verilog::Args),
    /// Emit and lint the Verilog, then run two simulated hosts with their NICs and drivers:
    /// RDMA WRITEs and SENDs of several sizes both ways, every byte checked; print throughput against
    /// the goodput ceiling, 64-byte latency, simulation speed and the pcap paths.
    Demo(demo::Args),
    /// Write the generated documentation pages (opcode table, register map, formats, designs
    /// and ports) from the spec tables and the design registry. A test fails when the
    /// checked-in pages are stale.
    Docs(docs::Args),
    /// Benchmark: throughput against one beat per clock, latency, simulation speed, and
    /// Yosys resources. Prints Markdown tables (the README's performance section).
    Perf(perf::Args),
    /// Place and route on ECP5 with Yosys and nextpnr (the YoWASP builds .ci/setup installs),
    /// out of context in a wrapper that registers every port; print resources, Fmax against
    /// the configuration's clock (constraints/<config>/clocks.lpf) and the critical path.
    /// Results are cached by the Verilog's hash.
    Pnr(pnr::Args),
    /// Build the ECP5-5G evaluation board's top (constraints/ecp5-5g-evn): the 10G MAC with
    /// its XGMII looped back, a frame generator and checker, LEDs; placed and routed with the
    /// board's LPF, then a bitstream by ecppack. Not tried on hardware by the project.
    Board(board::Args),
    /// The result cache (Verilator models, lint verdicts, Yosys results, keyed by the
    /// Verilog's hash): print its path and size, or empty it.
    Cache(cache::Args),
    /// Interop with Linux's RoCE stack: boot a QEMU guest with Soft-RoCE (build it first:
    /// `python3 tests/interop/guest.py build`), join its RoCE NIC to a simulated ferroce host
    /// and run the guest's real tools (ibv_rc_pingpong, ...) against ferroce's side of each,
    /// in both roles; every byte checked, every frame's ICRC checked by scapy and dissected by
    /// tshark; print the results table.
    Interop(interop::Args),
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Verilog(a) => verilog::run(a),
        Cmd::Demo(a) => demo::main(a),
        Cmd::Docs(a) => docs::run(a),
        Cmd::Perf(a) => perf::main(a),
        Cmd::Pnr(a) => pnr::run(a),
        Cmd::Board(a) => board::run(a),
        Cmd::Cache(a) => cache::run(a),
        Cmd::Interop(a) => interop::run(a),
    }
}
