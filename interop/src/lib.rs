//! Interop with Linux's RoCE stack: one simulated ferroce host (NIC under Verilator, the Rust
//! driver, the root complex model) on a link whose other end is a QEMU guest running Soft-RoCE
//! (`rdma_rxe`) and rdma-core's tools; ferroce's side of each tool is a host program here.
//!
//! - [`guest`]: the VM, its sockets, its control shell and its monitor.
//! - [`Rig`]: a `Station` (the simulated host), the guest, and the `Bridge` between the
//!   NIC's port and the guest's RoCE NIC, with a pcap of each direction.
//! - [`hold`]: the guest's clock stopped while its requests wait on ferroce.
//! - [`oob`]: the tools' out-of-band exchange (QPN, PSN, GID over TCP port 18515).
//! - [`pingpong`]: `ibv_rc_pingpong`'s peer, in both roles.
//! - [`perftest`]: the peer of perftest's `ib_{write,send,read,atomic}_bw`, in both roles.
//! - [`wire`]: the RoCE packets of a pcap, to check memory against the wire.
//! - [`matrix`]: the runs `ferroce interop` makes and their results table.

pub mod guest;
pub mod hold;
pub mod matrix;
pub mod oob;
pub mod perftest;
pub mod pingpong;
pub mod wire;

mod rig;

pub use rig::{Rig, RigConfig, Role};

use ferroce_sim::SimError;

/// What can go wrong in the rig.
#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    /// The guest, its tools, the exchange with them, or what they printed or left in memory.
    #[error("interop: {0}")]
    Rig(String),
    /// The simulated host: its model, its links, its root complex, its driver.
    #[error(transparent)]
    Sim(#[from] SimError),
}

impl From<ferroce_driver::DriverError> for InteropError {
    fn from(e: ferroce_driver::DriverError) -> Self {
        InteropError::Sim(SimError::Driver(e))
    }
}

pub type Result<T> = std::result::Result<T, InteropError>;

/// The simulated host's addresses on the RoCE link.
pub const NIC_MAC: [u8; 6] = [0x02, 0xfe, 0x00, 0x00, 0x00, 0x0a];
pub const NIC_IP: [u8; 4] = [10, 0, 0, 10];
/// The guest's RoCE port.
pub const GUEST_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0xfe, 0x00, 0x14];
pub const GUEST_IP: [u8; 4] = [10, 0, 0, 20];
/// Cycles the NIC runs between two pumps of the bridge.
pub const PUMP_CYCLES: u64 = 256;

pub(crate) fn err(what: impl Into<String>) -> InteropError {
    InteropError::Rig(what.into())
}
