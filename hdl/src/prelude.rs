//! The one place rust-hdl is imported from (pinned at =0.46.0; its traps are in `docs/rust-hdl.md`).
pub use rust_hdl::prelude::*;
