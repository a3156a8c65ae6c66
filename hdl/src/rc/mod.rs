//! The RC transport: the requester (doorbells, WQE fetch, segmentation into packets), the
//! responder (received packets checked and written to host memory, ACKs), and the completer
//! (ACKs retire sent work requests, CQEs).

pub mod completer;
pub mod requester;
pub mod responder;

pub use completer::Completer;
pub use requester::Requester;
pub use responder::Responder;
