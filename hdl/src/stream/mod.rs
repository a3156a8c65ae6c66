//! stream convention
