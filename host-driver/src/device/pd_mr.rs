//! Protection domains and memory regions on the device: `alloc_pd`, `reg_mr`, `dereg_mr`, and
//! the key checks a posted work request's local buffers pass.

use crate::device::Device;
use crate::mr::{access, MemoryRegion, ProtectionDomain};
use crate::put;
use crate::wr::Sge;
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::queues::{self, MR_CTX, QP_CTX};
use ferroce_spec::regs;

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Allocate a protection domain (`ibv_alloc_pd`).
    pub fn alloc_pd(&mut self) -> Result<ProtectionDomain> {
        let max = 1 << QP_CTX.field("pdn").width;
        if self.next_pdn + 1 >= max {
            return Err(DriverError::Exhausted {
                what: "protection domains",
                max: max - 1,
            });
        }
        self.next_pdn += 1;
        Ok(ProtectionDomain { pdn: self.next_pdn })
    }

    /// Register `[addr, addr + len)` of host memory in `pd` with `access` rights
    /// (`ibv_reg_mr`). The range must be DMA memory this driver allocated.
    pub fn reg_mr(
        &mut self,
        pd: &ProtectionDomain,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<MemoryRegion> {
        if addr.checked_add(len).is_none() {
            return Err(DriverError::Invalid(format!(
                "memory region at {addr:#x} of {len} bytes wraps"
            )));
        }
        let known = access::LOCAL_WRITE
            | access::REMOTE_WRITE
            | access::REMOTE_READ
            | access::REMOTE_ATOMIC;
        if access & !known != 0 {
            return Err(DriverError::Invalid(format!("access flags {access:#x}")));
        }
        let index = match self.mrs.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.mrs.push(None);
                self.mrs.len() - 1
            }
        };
        if index >= self.info.num_mrs as usize {
            return Err(DriverError::Exhausted {
                what: "memory regions",
                max: self.info.num_mrs,
            });
        }
        // A fresh tag per registration (1..=255: key 0 is never valid), so a key kept past
        // its region's deregistration does not name the next region at that index.
        self.mr_gen = self.mr_gen % 255 + 1;
        let key = (index as u32) << 8 | self.mr_gen;
        let mr = MemoryRegion {
            pdn: pd.pdn,
            addr,
            len,
            access,
            lkey: key,
            rkey: key,
        };
        let mut img = vec![0u8; MR_CTX.len];
        put(&MR_CTX, &mut img, "va", addr.into());
        put(&MR_CTX, &mut img, "len", len.into());
        put(&MR_CTX, &mut img, "key", key.into());
        put(&MR_CTX, &mut img, "pdn", pd.pdn.into());
        put(&MR_CTX, &mut img, "access", access.into());
        self.write_context(regs::TABLE_MR, index as u32, &img)?;
        self.mrs[index] = Some(mr);
        self.mem.region_registered(addr, len);
        Ok(mr)
    }

    /// Deregister a memory region (`ibv_dereg_mr`): its keys stop working, and once this
    /// returns the NIC writes nothing more into the region (remote packets to it are refused,
    /// those checked before have landed).
    pub fn dereg_mr(&mut self, mr: &MemoryRegion) -> Result<()> {
        let index = (mr.lkey >> 8) as usize;
        match self.mrs.get_mut(index) {
            Some(slot) if *slot == Some(*mr) => {
                *slot = None;
                // A cleared entry has no access rights: the NIC refuses the key from now on.
                // The command ends (its STATUS read returns) only once every packet checked
                // against the old entry has had its writes sent to the host, so from here on
                // the NIC writes nothing into the region.
                self.write_context(regs::TABLE_MR, index as u32, &[0u8; MR_CTX.len])?;
                self.mem.region_deregistered(mr.addr, mr.len);
                Ok(())
            }
            _ => Err(DriverError::Invalid(format!(
                "memory region with lkey {:#x} is not registered",
                mr.lkey
            ))),
        }
    }

    /// The registered region a local key names, if it covers the range and is in `pdn`.
    /// A work request's scatter/gather list: at most `MAX_SGE` elements, 2^31 bytes in all,
    /// each non-empty one inside a region of PD `pdn` its `lkey` names, with the access
    /// rights `need` (`ACCESS_*`; 0 for a buffer the NIC only reads).
    pub(crate) fn check_sg_list(
        &self,
        pdn: u32,
        wr_id: u64,
        sg_list: &[Sge],
        need: u32,
    ) -> Result<()> {
        if sg_list.len() > queues::MAX_SGE {
            return Err(DriverError::Invalid(format!(
                "wr_id {wr_id}: {} SGEs, at most {}",
                sg_list.len(),
                queues::MAX_SGE
            )));
        }
        let total: u64 = sg_list.iter().map(|s| u64::from(s.length)).sum();
        if total > u64::from(queues::MAX_MSG_LEN) {
            return Err(DriverError::Invalid(format!(
                "wr_id {wr_id}: length {total} is over 2^31"
            )));
        }
        for sge in sg_list.iter().filter(|s| s.length > 0) {
            self.check_local(pdn, sge.lkey, sge.addr, sge.length.into(), need)?;
        }
        Ok(())
    }

    pub(crate) fn check_local(
        &self,
        pdn: u32,
        lkey: u32,
        addr: u64,
        len: u64,
        need: u32,
    ) -> Result<()> {
        let mr = self
            .mrs
            .get((lkey >> 8) as usize)
            .copied()
            .flatten()
            .filter(|m| m.lkey == lkey);
        match mr {
            None => Err(DriverError::BadKey { lkey }),
            Some(m) if m.pdn != pdn => Err(DriverError::Invalid(format!(
                "lkey {lkey:#x} is in PD {}, the QP in PD {pdn}",
                m.pdn
            ))),
            Some(m) if !m.covers(addr, len) => Err(DriverError::OutOfRegion { lkey, addr, len }),
            Some(m) if m.access & need != need => Err(DriverError::Invalid(format!(
                "lkey {lkey:#x} lacks access {need:#x} (region has {:#x})",
                m.access
            ))),
            Some(_) => Ok(()),
        }
    }
}
