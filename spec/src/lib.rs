//! ferroce truth tables: the facts that the HDL, the simulator, the driver and the docs all
//! derive from. Pure data and functions, no I/O.
//!
//! - [`layout`]: bit-field layouts (network or host order) with accessors and checks.
//! - [`headers`]: wire header layouts (Ethernet, 802.1Q, IPv4, IPv6, UDP, BTH and the extended
//!   transport headers) and the offsets derived from them.
//! - [`mac_ctrl`]: 802.3x PAUSE and 802.1Qbb PFC frames, the receive rule, pause quanta.
//! - [`opcodes`]: every RC and UD BTH opcode with its extended headers.
//! - [`psn`]: 24-bit PSN arithmetic.
//! - [`tlp`]: PCIe TLP headers as the host interface carries them.
//! - [`regs`]: the BAR0 register map.
//! - [`meta`]: records that travel between NIC blocks beside a payload stream.
//! - [`queues`]: WQE, CQE, QP and CQ context formats and the verbs codes in them.
//! - [`crc`]: CRC-32 (IEEE 802.3, reflected), the reference for the FCS and the ICRC.
//! - [`icrc`]: the RoCEv2 invariant CRC (IBA Annex A17.3.3).
//! - [`docs`]: the generated documentation pages.
//! - [`wire`]: what a WRITE costs on the wire; the goodput ceiling.
//! - [`xgmii`]: XGMII control characters, preamble, the inter-frame gap and its deficit count.

pub mod crc;
pub mod docs;
pub mod headers;
pub mod icrc;
pub mod layout;
pub mod mac_ctrl;
pub mod meta;
pub mod opcodes;
pub mod psn;
pub mod queues;
pub mod regs;
pub mod tlp;
pub mod wire;
pub mod xgmii;

pub use icrc::{icrc, IcrcError, IcrcLayout};
