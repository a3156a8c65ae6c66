//! The RC transport: the requester (doorbells, WQE fetch, segmentation into packets), the
//! responder (received packets checked and written to host memory, ACKs), and the completer
//! (ACKs retire sent work requests, CQEs), the receive queues (receive WQEs fetched and
//! checked for the responder), and the key check every local buffer passes.

pub mod completer;
pub mod iface;
pub mod job_park;
pub mod key_check;
pub mod qp_fail;
pub mod recv_queue;
pub mod requester;
pub mod responder;
pub mod timers;

pub use completer::Completer;
pub use job_park::JobPark;
pub use key_check::KeyCheck;
pub use qp_fail::QpFail;
pub use recv_queue::RecvQueue;
pub use requester::Requester;
pub use responder::Responder;
pub use timers::Timers;
