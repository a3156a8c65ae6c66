//! Block tests: each block's Verilator model against references from outside the project
//! (the `crc` crate, etherparse, scapy, tshark, the Soft-RoCE captures, the driver and the root
//! complex model), with random idle cycles and back-pressure. Some also run rust-hdl's simulator
//! beside the model (see `differential` for the rest of those).
//!
//! One test binary for all of them, so the suite links rust-hdl once per group and both cores
//! stay busy; run one block's tests with `cargo test -p ferroce-tests --test blocks <module>`.

mod async_fifo;
mod bar0_fence;
mod board;
mod build_limits;
mod completer;
mod crc32;
mod dma_rd;
mod dma_wr;
mod gather;
mod host_bar0;
mod icrc;
mod key_check;
mod mac;
mod mac_ctrl_rx;
mod mac_rx;
mod object_commands;
mod pfc_gen;
mod rd_share;
mod recv_queue;
mod rq_mux;
mod rx_parser;
mod rxe_vectors;
mod scatter;
mod sync_count;
mod tx_frame;
mod tx_header;
mod tx_queues;
mod xgmii;
