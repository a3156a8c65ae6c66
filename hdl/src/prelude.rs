//! The one place rust-hdl is imported from (pinned at =0.46.0, see RUST-HDL-NOTES).
pub use rust_hdl::prelude::*;
