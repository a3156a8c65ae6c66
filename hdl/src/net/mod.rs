//! The network side: the TX framing path (header builder, ICRC insert, MAC transmit) and,
//! later, its receive mirror.

pub mod tx_header;

pub use tx_header::TxHeader;
