//! Host memory made only of buffers the driver allocated: every access is checked against
//! them, and one outside them is a [`SimError::Dma`], never a silent read or write. It also
//! keeps the memory regions the driver has registered and deregistered, as an IOMMU would:
//! a DMA write into, or a read from, a range deregistered and not registered again is refused.
//! A test may poison a range, as an uncorrectable memory error would: a read that touches it
//! completes with Completer Abort and no data (not a violation: the NIC must cope with it).

use crate::{Result, SimError};
use std::collections::BTreeMap;

/// A driver-allocated buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub addr: u64,
    pub len: usize,
}

/// Host memory: only what the driver allocated exists.
#[derive(Debug)]
pub struct HostMemory {
    buffers: BTreeMap<u64, Vec<u8>>,
    next: u64,
    /// Registered memory regions `(addr, len)`, one entry per registration.
    regions: Vec<(u64, u64)>,
    /// Ranges of deregistered regions, until their buffer is freed.
    retired: Vec<(u64, u64)>,
    /// Poisoned ranges: reads touching them fail.
    poisoned: Vec<(u64, u64)>,
}

/// Where allocations start: above 4 GiB, so 32-bit address truncation shows up as a fault.
const HEAP_BASE: u64 = 0x1_0000_0000;
/// Unallocated space between buffers, so an overrun lands outside any buffer.
const GUARD: u64 = 4096;

impl Default for HostMemory {
    fn default() -> Self {
        HostMemory {
            buffers: BTreeMap::new(),
            next: HEAP_BASE,
            regions: Vec::new(),
            retired: Vec::new(),
            poisoned: Vec::new(),
        }
    }
}

impl HostMemory {
    /// Allocate `len` zeroed bytes aligned to `align` (a power of two).
    pub fn alloc(&mut self, len: usize, align: u64) -> Result<Buffer> {
        if !align.is_power_of_two() || len == 0 {
            return Err(SimError::Dma(format!(
                "alloc of {len} bytes aligned to {align}: length must be non-zero and alignment a power of two"
            )));
        }
        let addr = self.next.div_ceil(align) * align;
        self.next = addr + len as u64 + GUARD;
        self.buffers.insert(addr, vec![0; len]);
        Ok(Buffer { addr, len })
    }

    /// Free a buffer; later accesses to it are faults.
    pub fn free(&mut self, addr: u64) -> Result<()> {
        let buf = self
            .buffers
            .remove(&addr)
            .ok_or_else(|| SimError::Dma(format!("free of {addr:#x}, which is not a buffer")))?;
        let end = addr + buf.len() as u64;
        self.retired.retain(|&(a, _)| a < addr || a >= end);
        Ok(())
    }

    /// Poison `[addr, addr + len)`: from now on a DMA read touching it fails (Completer Abort,
    /// no data), as after an uncorrectable error in host memory.
    pub fn poison(&mut self, addr: u64, len: u64) {
        self.poisoned.push((addr, len));
    }

    /// Heal every poisoned range.
    pub fn heal(&mut self) {
        self.poisoned.clear();
    }

    /// Does a DMA read of `len` bytes at `addr` touch a poisoned range?
    pub fn read_poisoned(&self, addr: u64, len: u64) -> bool {
        let end = addr.saturating_add(len);
        self.poisoned
            .iter()
            .any(|&(a, l)| addr < a.saturating_add(l) && a < end)
    }

    /// `[addr, addr + len)` is registered as a memory region.
    pub fn region_registered(&mut self, addr: u64, len: u64) {
        self.regions.push((addr, len));
    }

    /// A region `[addr, addr + len)` is deregistered: from now on the NIC may not touch the
    /// part of it no other registered region covers.
    pub fn region_deregistered(&mut self, addr: u64, len: u64) {
        if let Some(i) = self.regions.iter().position(|&r| r == (addr, len)) {
            self.regions.swap_remove(i);
        }
        if len > 0 {
            self.retired.push((addr, len));
        }
    }

    /// Why a DMA `what` ("memory write", "memory read") of `len` bytes at `addr` may not
    /// happen, if it may not: it touches a deregistered region where no registered region
    /// covers it.
    pub fn dma_refused(&self, what: &str, addr: u64, len: u64) -> Option<String> {
        let end = addr.saturating_add(len);
        self.retired.iter().find_map(|&(ra, rl)| {
            let (lo, hi) = (addr.max(ra), end.min(ra.saturating_add(rl)));
            let covered = self
                .regions
                .iter()
                .any(|&(ga, gl)| ga <= lo && hi <= ga.saturating_add(gl));
            (lo < hi && !covered).then(|| {
                format!(
                    "{what} of {len} bytes at {addr:#x} in the region [{ra:#x}, +{rl}) \
                     after its deregistration"
                )
            })
        })
    }

    fn find(&self, addr: u64, len: usize) -> Option<(u64, usize)> {
        let (&base, buf) = self.buffers.range(..=addr).next_back()?;
        let off = (addr - base) as usize;
        (off + len <= buf.len()).then_some((base, off))
    }

    fn fault(&self, what: &str, addr: u64, len: usize) -> SimError {
        SimError::Dma(format!(
            "{what} of {len} bytes at {addr:#x} is outside every driver-allocated buffer"
        ))
    }

    /// Read `out.len()` bytes at `addr`, all inside one buffer.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        let (base, off) = self
            .find(addr, out.len())
            .ok_or_else(|| self.fault("read", addr, out.len()))?;
        out.copy_from_slice(&self.buffers[&base][off..off + out.len()]);
        Ok(())
    }

    /// Write `data` at `addr`, all inside one buffer.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        let (base, off) = self
            .find(addr, data.len())
            .ok_or_else(|| self.fault("write", addr, data.len()))?;
        if let Some(buf) = self.buffers.get_mut(&base) {
            buf[off..off + data.len()].copy_from_slice(data);
        }
        Ok(())
    }
}
