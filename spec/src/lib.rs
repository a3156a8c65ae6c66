//! ferroce truth tables: the facts that the HDL, the simulator, the driver and the docs all
//! derive from. Pure data and functions, no I/O.
//!
//! - [`crc`]: CRC-32 (IEEE 802.3, reflected) as a byte-step function, the reference for the
//!   Ethernet FCS and the RoCEv2 ICRC, and the linear map the HDL's XOR matrices are built from.
//! - [`headers`]: header lengths and field offsets (Ethernet, 802.1Q, IPv4, IPv6, UDP, BTH).
//! - [`icrc`]: the RoCEv2 invariant CRC (IBA Annex A17.3.3): which fields are masked, the layout
//!   of a frame, and the reference ICRC of a frame.

pub mod crc;
pub mod headers;
pub mod icrc;
pub mod opcodes;

pub use icrc::{icrc, IcrcError, IcrcLayout};
