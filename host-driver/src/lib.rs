//! ferroce host driver: a verbs-like API over `Bar` and `DmaMemory` traits.
//!
//! Its content arrives with the first-light issue (RC RDMA WRITE between two simulated NICs);
//! this crate exists now so the workspace layout and dependency direction are fixed
//! (the driver core depends on `spec` only).

pub use ferroce_spec as spec;
