//! ferroce host driver: a verbs-like API over [`Bar`] and [`DmaMemory`] traits.
//!
//! The core depends only on `spec` (register map, context and queue formats) and on the two
//! traits; the simulator backend lives in `ferroce-sim` (`ferroce_sim::host`), which depends on
//! this crate, so the driver itself knows nothing of any backend.
//!
//! What stands today: device open with BAR discovery (the register-block list is walked from
//! offset 0 and checked against the spec), completion queues and queue pairs created in the
//! NIC's context tables through the OBJECT block, the QP state machine RESET -> INIT -> RTR ->
//! RTS with the attributes each step needs, context query, protection domains and memory
//! regions (written into the NIC's MR table, which checks remote keys), posting RDMA WRITE
//! lists (`post_send`) and polling completions (`poll_cq`).

pub mod cq;
pub mod device;
pub mod error;
pub mod mr;
pub mod port;
pub mod qp;
pub mod wr;

pub use cq::{CompletionQueue, WorkCompletion};
pub use device::{Device, DeviceInfo};
pub use error::DriverError;
pub use ferroce_spec as spec;
pub use mr::{access, MemoryRegion, ProtectionDomain};
pub use port::{MacStats, PfcConfig, RcStats};
pub use qp::{QpAttr, QpContext, QpState, QueuePair, Vlan};
pub use wr::{RecvWr, SendWr, Sge, WrOpcode};

/// Result of driver calls.
pub type Result<T> = std::result::Result<T, DriverError>;

/// 32-bit register access to BAR0. Writes may be posted; a read returns after every earlier
/// write has reached the device (PCIe ordering), which the object commands rely on.
pub trait Bar {
    fn read32(&mut self, offset: u32) -> Result<u32>;
    fn write32(&mut self, offset: u32, value: u32) -> Result<()>;
}

/// A DMA-able buffer in host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaBuf {
    /// Bus address (what the NIC uses).
    pub addr: u64,
    pub len: usize,
}

/// Host memory the NIC can reach by DMA.
pub trait DmaMemory {
    /// Allocate `len` zeroed bytes aligned to `align`.
    fn alloc(&mut self, len: usize, align: u64) -> Result<DmaBuf>;
    fn free(&mut self, buf: DmaBuf) -> Result<()>;
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<()>;
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<()>;
    /// `[addr, addr + len)` is now a registered memory region the NIC may reach (a platform
    /// with an IOMMU maps it here). The default does nothing.
    fn region_registered(&mut self, _addr: u64, _len: u64) {}
    /// The region `[addr, addr + len)` is deregistered and the NIC has let go of it: no DMA
    /// of the NIC touches it from now on (an IOMMU unmaps it here; the simulated root complex
    /// refuses DMA writes into it). The default does nothing.
    fn region_deregistered(&mut self, _addr: u64, _len: u64) {}
}

/// Set field `name` of layout `l` in the image `img` (a context, a WQE, an SGE).
pub(crate) fn put(l: &ferroce_spec::layout::Layout, img: &mut [u8], name: &str, v: u128) {
    l.set(&l.field(name), img, v);
}
