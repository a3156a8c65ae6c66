//! The RC transport: the requester (doorbells, WQE fetch, segmentation into packets), and in
//! the steps that follow, the responder and the completer.

pub mod requester;

pub use requester::Requester;
