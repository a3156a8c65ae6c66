//! Protection domains and memory regions (`ibv_alloc_pd`, `ibv_reg_mr`): what a region
//! is and the access rights it grants.

/// A protection domain (`ibv_alloc_pd`): QPs and memory regions of one PD work together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtectionDomain {
    pub pdn: u32,
}

/// Access rights of a memory region (`IBV_ACCESS_*` values, `spec::queues::ACCESS_*`).
pub mod access {
    pub use ferroce_spec::queues::{
        ACCESS_LOCAL_WRITE as LOCAL_WRITE, ACCESS_REMOTE_ATOMIC as REMOTE_ATOMIC,
        ACCESS_REMOTE_READ as REMOTE_READ, ACCESS_REMOTE_WRITE as REMOTE_WRITE,
    };
}

/// A registered memory region (`ibv_reg_mr`): a host buffer the NIC may use, named by its keys.
/// Keys are `index << 8 | tag`: a region registered again at the same index gets a new tag, so
/// a stale key is refused. The driver checks local keys when work is posted (a clear error
/// before anything is written); the NIC checks them again, and every remote key, against its
/// MR table (`spec::queues::MR_CTX`), which `reg_mr` and `dereg_mr` keep equal to the driver's
/// list, so a WQE written behind the driver's back gets LOC_PROT_ERR and no DMA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRegion {
    pub pdn: u32,
    pub addr: u64,
    pub len: u64,
    pub access: u32,
    pub lkey: u32,
    pub rkey: u32,
}

impl MemoryRegion {
    /// Whether `[addr, addr + len)` lies inside the region.
    pub fn covers(&self, addr: u64, len: u64) -> bool {
        addr >= self.addr
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.addr + self.len)
    }
}
