//! ferroce on FPGAs: the gates every design passes and the open flow that places it.
//!
//! - [`synth`]: the lint and synthesis gates (`verilator --lint-only -Wall`, Yosys
//!   `synth_ice40` / `synth_xilinx`), cached in `ferroce_sim`'s result cache.
//! - [`pnr`]: ECP5 place and route with the open flow (YoWASP Yosys and nextpnr), out of
//!   context in a wrapper that registers the ports; Fmax, critical path and resources, cached.
//! - [`path`]: a path through a routed netlist, its cells' names made readable.
//! - [`report`]: what place and route made of a design, cached as JSON, shown as tables.
//! - [`sta`]: timing analysis of a routed design's SDF: the worst paths, distinct by start or end.
//! - [`board`]: a board top (the ECP5-5G evaluation board with the 10G MAC looped back),
//!   placed and routed with the board's pins, and its bitstream.

pub mod board;
pub mod path;
pub mod pnr;
pub mod report;
pub mod sta;
pub mod synth;
