//! The host interface: BAR0 completer with register blocks and object commands, the context
//! tables behind it, the DMA engines that read and write host memory, and the mux that puts
//! both engines' requests on the one requester interface.

pub mod bar0;
pub mod ctx_write;
pub mod dma_rd;
pub mod dma_wr;
pub mod rd_share;
pub mod req_header;
pub mod rq_mux;
pub mod tlp_skid;

pub use bar0::{Bar0, Bar0Params};
pub use ctx_write::CtxWrite;
pub use dma_rd::DmaRead;
pub use dma_wr::DmaWrite;
pub use rd_share::RdShare;
pub use rq_mux::RqMux;
pub use tlp_skid::TlpSkid;

use crate::prelude::*;
use crate::util::bits_from_u64;

/// Bit position of a layout field (`Layout::lsb`) as an `N`-bit constant to shift by or to
/// index with (`N` = the clog2 of the record's width, as Verilator wants an index).
pub(crate) fn field_at<const N: usize>(
    l: &ferroce_spec::layout::Layout,
    name: &str,
) -> Constant<Bits<N>> {
    let f = l
        .find(name)
        .unwrap_or_else(|| panic!("{} has no field {name}", l.name));
    Constant::new(bits_from_u64(l.lsb(f) as u64))
}

/// Bit position of a header field in its packed 128-bit form.
pub(crate) fn lsb(l: &ferroce_spec::layout::Layout, name: &str) -> Constant<Bits<7>> {
    field_at(l, name)
}

/// A constant of any width from a `u64`.
pub(crate) fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(bits_from_u64(v))
}
