//! The network side: the TX framing path (header builder, ICRC insert, padding, FCS) and the
//! receive path (MAC receive with FCS and ICRC checks, the RX parser), and the XGMII faces.

pub mod mac;
pub mod mac_10g;
pub mod mac_ctrl_rx;
pub mod mac_rx;
pub mod mac_tx;
pub mod pad;
pub mod pfc_gen;
pub mod rx_frame;
pub mod rx_parser;
pub mod start_gate;
pub mod tail_writer;
pub mod tx_arb;
pub mod tx_frame;
pub mod tx_header;
pub mod tx_queues;
pub mod vlan_tag;
pub mod xgmii_face;
pub mod xgmii_rx;
pub mod xgmii_tx;

pub use mac::Mac;
pub use mac_10g::Mac10g;
pub use mac_ctrl_rx::MacCtrlRx;
pub use mac_rx::MacRx;
pub use mac_tx::MacTx;
pub use pad::Pad;
pub use pfc_gen::PfcGen;
pub use rx_frame::RxFrame;
pub use rx_parser::RxParser;
pub use start_gate::StartGate;
pub use tail_writer::TailWriter;
pub use tx_arb::TxArb;
pub use tx_frame::TxFrame;
pub use tx_header::TxHeader;
pub use tx_queues::TxQueues;
pub use xgmii_rx::XgmiiRx;
pub use xgmii_tx::XgmiiTx;
