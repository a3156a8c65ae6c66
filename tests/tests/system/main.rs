//! System tests: whole NICs on Verilator, each driven by the Rust driver through the simulated
//! BAR and root complex, joined by link models; frames judged from the wire's pcap by outside
//! tools. Run one with `cargo test -p ferroce-tests --test system <module>`.

mod acks;
mod atomic;
mod fuzz;
mod isolation;
mod loopback;
mod nic_send;
mod ordering;
mod pairs;
mod pfc;
mod pfc_classes;
mod pfc_timing;
mod protection;
mod protocol;
mod read;
mod read_jobs;
mod read_share;
mod read_slots;
mod rights;
mod send_recv;
mod seq_naks;
mod stepping;
mod throughput;
mod two_nics;
mod waves;
mod xgmii_nic;
