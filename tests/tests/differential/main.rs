//! Differential tests: the same random stimulus on rust-hdl's simulator and on the Verilator
//! model of the emitted Verilog, every output compared by name after every clock edge
//! (`ferroce_tests::diff::Outputs`). They guard against the Verilog generator's silent
//! miscompiles, where the emitted Verilog means something other than the Rust it came from.
//!
//! Run one with `cargo test -p ferroce-tests --test differential <module>`.

mod bar0;
mod dma;
mod job_park;
mod mac;
mod net;
mod qp_fail;
mod rc;
mod taps;
mod transport;
