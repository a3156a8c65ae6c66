//! PCIe root complex model (cocotbext-pcie's `RootComplex` in spirit): the host's memory and
//! the host's side of the NIC's TLP streams.
//!
//! - [`HostMemory`]: sparse host memory made only of buffers the driver allocated. Every access
//!   the NIC makes is checked against them: a DMA outside a buffer fails the run
//!   ([`SimError::Dma`](crate::SimError::Dma)), never a silent write.
//! - [`RootComplex`]: a testbench component with up to two sides:
//!   - the completer side ([`RootComplex::with_bar`]): MMIO to BAR0 (`s_req_*` in, `m_cpl_*`
//!     out on the NIC, 128-bit `hdr` beside the data);
//!   - the requester side ([`RootComplex::with_dma`]): the NIC's memory reads and writes
//!     (`m_rq_*`) and the read completions (`s_rc_*`), with the read latency, max payload
//!     size, max read request size and read completion boundary of [`PcieConfig`].

mod config;
mod dma;
mod memory;
mod mmio;

pub use config::PcieConfig;
pub use dma::DmaStats;
pub use memory::{Buffer, HostMemory};
pub use mmio::ReadResult;

use crate::model::Model;
use crate::pause::PauseGenerator;
use crate::tb::Component;
use crate::{Result, SimError};
use dma::DmaSide;
use ferroce_spec::tlp::Header;
use mmio::MmioSide;

/// The host side of a NIC's PCIe interface.
pub struct RootComplex {
    pub config: PcieConfig,
    pub mem: HostMemory,
    mmio: Option<MmioSide>,
    dma: Option<DmaSide>,
    /// Protocol errors on the completer side (unexpected completions); a test asserts this
    /// stays empty.
    pub errors: Vec<String>,
    /// DMA faults and protocol violations by the NIC's requester side (only collected when
    /// `config.strict` is off: in strict mode the first one fails the run).
    pub violations: Vec<String>,
}

impl RootComplex {
    pub fn new(config: PcieConfig) -> RootComplex {
        RootComplex {
            config,
            mem: HostMemory::default(),
            mmio: None,
            dma: None,
            errors: Vec::new(),
            violations: Vec::new(),
        }
    }

    /// Attach to the NIC's BAR0 request stream `<req>_*` and completion stream `<cpl>_*`.
    pub fn with_bar(mut self, model: &Model, req: &str, cpl: &str) -> Result<RootComplex> {
        self.mmio = Some(MmioSide::new(model, req, cpl, self.config.host_id)?);
        Ok(self)
    }

    /// Attach to the NIC's DMA request stream `<rq>_*` and completion stream `<rc>_*`, for a
    /// NIC clocked with period `period_ps`.
    pub fn with_dma(mut self, model: &Model, rq: &str, rc: &str, period_ps: u64) -> Result<Self> {
        self.dma = Some(DmaSide::new(model, rq, rc, period_ps, &self.config)?);
        Ok(self)
    }

    fn mmio(&mut self) -> Option<&mut MmioSide> {
        if self.mmio.is_none() {
            self.errors
                .push("MMIO on a root complex without a BAR side".into());
        }
        self.mmio.as_mut()
    }

    /// Hold `m_cpl_tready` low on the cycles the generator pauses (cocotbext's
    /// `set_pause_generator` on a sink).
    pub fn set_backpressure_generator(&mut self, g: PauseGenerator) {
        if let Some(m) = self.mmio() {
            m.cpl_pause = Some(g);
        }
    }

    /// Hold the NIC's `m_rq_tready` low on the cycles the generator pauses.
    pub fn set_rq_backpressure_generator(&mut self, g: PauseGenerator) {
        if let Some(d) = &mut self.dma {
            d.rq_pause = Some(g);
        }
    }

    /// Limit the NIC's memory writes to `bytes_per_cycle` on average (a slow host: the NIC's
    /// requests wait, `m_rq_tready` low, while the write budget is spent; reads wait too, as
    /// they share the request interface).
    pub fn set_write_bandwidth(&mut self, bytes_per_cycle: f64) {
        if let Some(d) = &mut self.dma {
            d.write_limit = Some((bytes_per_cycle, 0.0));
        }
    }

    /// Leave idle cycles between completion beats on the cycles the generator pauses.
    pub fn set_completion_pause_generator(&mut self, g: PauseGenerator) {
        if let Some(d) = &mut self.dma {
            d.rc_pause = Some(g);
        }
    }

    /// Post a 32-bit write to BAR0 offset `offset`.
    pub fn write32(&mut self, offset: u32, value: u32) {
        if let Some(m) = self.mmio() {
            m.write(offset, 1, value.into());
        }
    }

    /// Post a 64-bit write (two registers, low word first).
    pub fn write64(&mut self, offset: u32, value: u64) {
        if let Some(m) = self.mmio() {
            m.write(offset, 2, value);
        }
    }

    /// Post a raw request (tests of bad requests): header and up to 2 DW of data.
    pub fn raw(&mut self, hdr: Header, data: [u32; 2]) {
        if let Some(m) = self.mmio() {
            m.raw(hdr, data);
        }
    }

    /// Start a read of `dws` (1 or 2) DWs; returns the tag to poll with [`Self::result`].
    pub fn read(&mut self, offset: u32, dws: u16) -> u8 {
        self.mmio().map_or(0, |m| m.read(offset, dws))
    }

    /// The state of the read with `tag`; a finished result is handed out once.
    pub fn result(&mut self, tag: u8) -> ReadResult {
        match &mut self.mmio {
            Some(m) => m.result(tag),
            None => ReadResult::Failed(ferroce_spec::tlp::CPL_UR),
        }
    }

    /// No MMIO queued or on the bus.
    pub fn idle(&self) -> bool {
        self.mmio.as_ref().is_none_or(|m| m.idle())
    }

    /// No DMA request half received and no completion waiting or on the bus.
    pub fn dma_idle(&self) -> bool {
        self.dma.as_ref().is_none_or(|d| d.idle())
    }

    /// What the NIC has done on its requester side.
    pub fn dma_stats(&self) -> DmaStats {
        self.dma.as_ref().map(|d| d.stats).unwrap_or_default()
    }
}

impl Component for RootComplex {
    fn sample(&mut self, model: &Model) {
        if let Some(m) = &mut self.mmio {
            m.sample(model);
        }
        if let Some(d) = &mut self.dma {
            d.sample(model);
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        if let Some(m) = &mut self.mmio {
            m.drive(model, &mut self.errors)?;
        }
        if let Some(d) = &mut self.dma {
            let before = self.violations.len();
            d.drive(model, &mut self.mem, &self.config, &mut self.violations)?;
            if self.config.strict && self.violations.len() > before {
                return Err(SimError::Dma(self.violations[before..].join("; ")));
            }
        }
        Ok(())
    }
}
