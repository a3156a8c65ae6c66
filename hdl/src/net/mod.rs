//! The network side: the TX framing path (header builder, ICRC insert, padding, FCS) and,
//! later, its receive mirror.

pub mod mac_tx;
pub mod pad;
pub mod tail_writer;
pub mod tx_frame;
pub mod tx_header;

pub use mac_tx::MacTx;
pub use pad::Pad;
pub use tail_writer::TailWriter;
pub use tx_frame::TxFrame;
pub use tx_header::TxHeader;
