//! The host interface: BAR0 completer with register blocks and object commands, and the
//! context tables behind it.

pub mod bar0;
pub mod ctx_table;

pub use bar0::{Bar0, Bar0Params};
pub use ctx_table::CtxTable;
