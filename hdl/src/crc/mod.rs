//! CRC-32 engines: the Ethernet FCS and the RoCEv2 ICRC share one parallel core.
//!
//! ```text
//!  s_axis (tap) --> lane masking / start state / end lane --> CrcCore --> m_crc / m_icrc
//!                      (Crc32: from tkeep; Icrc: from header tables)
//! ```

pub mod crc32;
pub mod crc_core;
pub mod gf2;
pub mod icrc;
pub mod unshift;
pub mod xor_matrix;

pub use crc32::Crc32;
pub use crc_core::CrcCore;
pub use icrc::{Icrc, ICRC_LATENCY};
