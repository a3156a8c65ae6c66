//! A world's host beyond its verbs: the driver opened on its NIC, buffers registered for
//! every access, the NIC's counters, fault report and waveform.

use crate::host::{SimBar, SimMem, SimNic};
use crate::world::{Host, FAULT_COUNTERS, XGMII_FAULT_COUNTERS};
use crate::Result;
use ferroce_driver::{access, Device, DmaMemory, MemoryRegion};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

impl Host {
    /// The driver opened on `sim`, the port's addresses set, a PD and a CQ of `cq_depth`.
    pub fn open(
        sim: Rc<RefCell<SimNic>>,
        mac: [u8; 6],
        ip: [u8; 4],
        cq_depth: u32,
    ) -> Result<Host> {
        let mut dev = Device::open(SimBar(sim.clone()), SimMem(sim.clone()))?;
        dev.set_port(mac, ip)?;
        let pd = dev.alloc_pd()?;
        let cq = dev.create_cq(cq_depth)?;
        Ok(Host {
            dev,
            sim,
            pd,
            cq,
            mac,
            ip,
        })
    }

    /// A buffer of `len` bytes registered for local and remote writes, remote reads and
    /// atomics, filled with `fill`.
    pub fn buffer(&mut self, len: usize, fill: &[u8]) -> Result<MemoryRegion> {
        let buf = self.dev.mem.alloc(len, 4096)?;
        self.dev.mem.write(buf.addr, &fill[..len])?;
        Ok(self.dev.reg_mr(
            &self.pd,
            buf.addr,
            len as u64,
            access::LOCAL_WRITE
                | access::REMOTE_WRITE
                | access::REMOTE_READ
                | access::REMOTE_ATOMIC,
        )?)
    }

    /// A counter of the NIC model by port name.
    pub fn counter(&self, name: &str) -> Result<u64> {
        self.sim.borrow().tb.get(name)
    }

    /// A per-priority counter bus (`mac_pfc_rx`, `mac_xoff_sent`, ...: eight 32-bit counters,
    /// priority p at bits 32p), as eight values.
    pub fn prio_counters(&self, name: &str) -> Result<[u64; 8]> {
        let sim = self.sim.borrow();
        let m = sim.tb.model_ref();
        let bytes = m.get_bytes(m.port(name)?);
        let mut out = [0u64; 8];
        for (p, c) in out.iter_mut().enumerate() {
            let b = bytes.get(4 * p..4 * p + 4).unwrap_or(&[0; 4]);
            *c = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        Ok(out)
    }
}

impl Host {
    /// Write a VCD of this host's NIC (every signal, named by the design's hierarchy) to
    /// `path` for `cycles` cycles from cycle `from_cycle` of its clock (now, if that has
    /// passed); GTKWave opens it. The world must be built with [`WorldConfig::trace`].
    pub fn wave(&self, path: &Path, from_cycle: u64, cycles: u64) -> Result<()> {
        self.sim
            .borrow_mut()
            .tb
            .trace_window(path, from_cycle, cycles)
    }

    /// Transmit credits in use per priority (`mac_tx_used`: beats reserved in the MAC's
    /// transmit queues and not yet sent); all zero when the NIC has nothing to send.
    pub fn tx_used(&self) -> Result<[u64; 8]> {
        let sim = self.sim.borrow();
        let m = sim.tb.model_ref();
        let bytes = m.get_bytes(m.port("mac_tx_used")?);
        let mut out = [0u64; 8];
        for (p, c) in out.iter_mut().enumerate() {
            let b = bytes.get(2 * p..2 * p + 2).unwrap_or(&[0; 2]);
            *c = u64::from(u16::from_le_bytes([b[0], b[1]]));
        }
        Ok(out)
    }
}

impl Host {
    /// Every fault counter of this NIC ([`FAULT_COUNTERS`], and [`XGMII_FAULT_COUNTERS`] on
    /// `ferroce_nic_10g`) with its value: all must stay zero in clean traffic.
    pub fn faults(&self) -> Result<Vec<(&'static str, u64)>> {
        let sim = self.sim.borrow();
        let m = sim.tb.model_ref();
        FAULT_COUNTERS
            .iter()
            .chain(XGMII_FAULT_COUNTERS.iter().filter(|c| m.has_port(c)))
            .map(|&c| Ok((c, sim.tb.get(c)?)))
            .collect()
    }
}
