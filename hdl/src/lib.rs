//! ferroce RTL, written in rust-hdl and emitted as Verilog.
//!
//! Every block is generic over the datapath width `DW` (bits) and its keep width `KW = DW / 8`
//! (passed separately because derived const generics need nightly; constructors assert the
//! relation). The emitted Verilog, not rust-hdl's simulator, is the design: see `emit` and
//! the differential tests. The parameters each configuration builds them with are named in
//! [`config`].

pub mod cdc;
pub mod config;
pub mod crc;
pub mod designs;
pub mod emit;
pub mod host;
pub mod net;
pub mod nic;
pub mod nic_10g;
pub mod prelude;
pub mod rc;
pub mod stream;
pub mod util;

pub use emit::{emit, EmitError, Emitted, EmittedModule};
