//! PCIe root complex model: host memory with driver-allocated buffers, and the host's side of
//! the NIC's TLP interface (cocotbext-pcie's `RootComplex` in spirit).
//!
//! - [`HostMemory`]: sparse host memory made only of buffers the driver allocated. Every access
//!   the NIC makes is checked against them: a DMA outside a buffer is an error that fails the
//!   run ([`SimError::Dma`]), never a silent write.
//! - [`RootComplex`]: a testbench component on the BAR0 request and completion streams
//!   (`s_req_*` in, `m_cpl_*` out, with 128-bit `hdr` beside the data). MMIO writes are posted;
//!   reads get a tag and complete when the NIC's completion arrives. Completions are checked:
//!   an unexpected tag, or a completion that is not successful, is recorded, never dropped.
//!
//! Parameters ([`PcieConfig`]) cover what the DMA side (next) needs: read latency, max payload
//! size, max read request size and read completion boundary.

use crate::model::{Model, Port};
use crate::pause::PauseGenerator;
use crate::tb::Component;
use crate::{Result, SimError};
use ferroce_spec::tlp::{self, Header, Kind};
use std::collections::{BTreeMap, VecDeque};

/// PCIe link parameters of the simulated host.
#[derive(Clone, Copy, Debug)]
pub struct PcieConfig {
    /// Latency from a memory read request to its first completion, in picoseconds.
    pub read_latency_ps: u64,
    /// Max payload size in bytes (128..=4096).
    pub max_payload: usize,
    /// Max read request size in bytes (128..=4096).
    pub max_read_request: usize,
    /// Read completion boundary in bytes (64 or 128).
    pub rcb: usize,
    /// Requester ID of the root port, completer ID of the NIC.
    pub host_id: u16,
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            read_latency_ps: 500_000,
            max_payload: 256,
            max_read_request: 512,
            rcb: 64,
            host_id: 0x0000,
        }
    }
}

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
        self.buffers
            .remove(&addr)
            .map(|_| ())
            .ok_or_else(|| SimError::Dma(format!("free of {addr:#x}, which is not a buffer")))
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

/// An MMIO request waiting to go to the NIC.
struct Mmio {
    hdr: Header,
    data: [u32; 2],
}

/// The outcome of an MMIO read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadResult {
    Pending,
    Done(u64),
    /// The NIC completed with a non-successful status (UR, CA).
    Failed(u8),
}

struct ReqPorts {
    hdr: Port,
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
}

struct CplPorts {
    hdr: Port,
    tdata: Port,
    tvalid: Port,
    tready: Port,
}

/// The host side of the NIC's BAR0 streams.
pub struct RootComplex {
    pub config: PcieConfig,
    pub mem: HostMemory,
    req: ReqPorts,
    cpl: CplPorts,
    queue: VecDeque<Mmio>,
    in_flight: Option<Mmio>,
    tags: BTreeMap<u8, ReadResult>,
    next_tag: u8,
    handshake: bool,
    got_cpl: Option<(u128, u64)>,
    cpl_pause: Option<PauseGenerator>,
    /// Protocol errors seen (unexpected completions); a test asserts this stays empty.
    pub errors: Vec<String>,
}

impl RootComplex {
    /// Attach to the model's `<req>_*` and `<cpl>_*` ports (e.g. `s_req`, `m_cpl`).
    pub fn new(model: &Model, req: &str, cpl: &str, config: PcieConfig) -> Result<RootComplex> {
        let p = |s: &str| model.port(s);
        Ok(RootComplex {
            config,
            mem: HostMemory::default(),
            req: ReqPorts {
                hdr: p(&format!("{req}_hdr"))?,
                tdata: p(&format!("{req}_tdata"))?,
                tkeep: p(&format!("{req}_tkeep"))?,
                tlast: p(&format!("{req}_tlast"))?,
                tvalid: p(&format!("{req}_tvalid"))?,
                tready: p(&format!("{req}_tready"))?,
            },
            cpl: CplPorts {
                hdr: p(&format!("{cpl}_hdr"))?,
                tdata: p(&format!("{cpl}_tdata"))?,
                tvalid: p(&format!("{cpl}_tvalid"))?,
                tready: p(&format!("{cpl}_tready"))?,
            },
            queue: VecDeque::new(),
            in_flight: None,
            tags: BTreeMap::new(),
            next_tag: 0,
            handshake: false,
            got_cpl: None,
            cpl_pause: None,
            errors: Vec::new(),
        })
    }

    fn request(&self, fmt: u8, dws: u16, addr: u64) -> Header {
        Header {
            fmt,
            ty: tlp::TYPE_MEM,
            length: dws,
            requester_id: self.config.host_id,
            be: if dws == 1 { 0x0F } else { 0xFF },
            addr,
            ..Header::default()
        }
    }

    /// Hold `m_cpl_tready` low on the cycles the generator pauses (cocotbext's
    /// `set_pause_generator` on a sink).
    pub fn set_backpressure_generator(&mut self, g: PauseGenerator) {
        self.cpl_pause = Some(g);
    }

    /// Post a 32-bit write to BAR0 offset `offset`.
    pub fn write32(&mut self, offset: u32, value: u32) {
        let hdr = self.request(tlp::FMT_3DW_DATA, 1, offset.into());
        self.queue.push_back(Mmio {
            hdr,
            data: [value, 0],
        });
    }

    /// Post a 64-bit write (two registers, low word first).
    pub fn write64(&mut self, offset: u32, value: u64) {
        let hdr = self.request(tlp::FMT_3DW_DATA, 2, offset.into());
        self.queue.push_back(Mmio {
            hdr,
            data: [value as u32, (value >> 32) as u32],
        });
    }

    /// Post a raw request (tests of bad requests): header and up to 2 DW of data.
    pub fn raw(&mut self, hdr: Header, data: [u32; 2]) {
        if hdr.kind() == Kind::MemRead {
            self.tags.insert(hdr.tag, ReadResult::Pending);
        }
        self.queue.push_back(Mmio { hdr, data });
    }

    /// Start a read of `dws` (1 or 2) DWs; returns the tag to poll with [`Self::result`].
    pub fn read(&mut self, offset: u32, dws: u16) -> u8 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        let mut hdr = self.request(tlp::FMT_3DW_NO_DATA, dws, offset.into());
        hdr.tag = tag;
        self.tags.insert(tag, ReadResult::Pending);
        self.queue.push_back(Mmio { hdr, data: [0; 2] });
        tag
    }

    /// The state of the read with `tag`; a finished result is handed out once.
    pub fn result(&mut self, tag: u8) -> ReadResult {
        match self.tags.get(&tag).copied() {
            Some(ReadResult::Pending) | None => ReadResult::Pending,
            Some(r) => {
                self.tags.remove(&tag);
                r
            }
        }
    }

    /// Nothing queued or on the bus.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.in_flight.is_none()
    }

    fn complete(&mut self, hdr: u128, data: u64) {
        let h = Header::unpack(hdr);
        match (h.kind(), self.tags.get(&h.tag)) {
            (Kind::CompletionData | Kind::Completion, Some(ReadResult::Pending)) => {
                let r = if h.status != tlp::CPL_SC {
                    ReadResult::Failed(h.status)
                } else if h.kind() == Kind::Completion {
                    self.errors.push(format!(
                        "successful completion without data for tag {}",
                        h.tag
                    ));
                    ReadResult::Failed(h.status)
                } else {
                    let mask = if h.length >= 2 { u64::MAX } else { 0xFFFF_FFFF };
                    ReadResult::Done(data & mask)
                };
                self.tags.insert(h.tag, r);
            }
            _ => self.errors.push(format!("unexpected completion {h:?}")),
        }
    }
}

fn words128(v: u128) -> [u32; 4] {
    [
        v as u32,
        (v >> 32) as u32,
        (v >> 64) as u32,
        (v >> 96) as u32,
    ]
}

impl Component for RootComplex {
    fn sample(&mut self, model: &Model) {
        self.handshake = self.in_flight.is_some()
            && model.get(self.req.tready) == 1
            && model.get(self.req.tvalid) == 1;
        if model.get(self.cpl.tvalid) == 1 && model.get(self.cpl.tready) == 1 {
            let w = model.get_words(self.cpl.hdr);
            let hdr = w
                .iter()
                .enumerate()
                .fold(0u128, |acc, (i, x)| acc | (u128::from(*x) << (32 * i)));
            self.got_cpl = Some((hdr, model.get(self.cpl.tdata)));
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        if let Some((hdr, data)) = self.got_cpl.take() {
            self.complete(hdr, data);
        }
        if self.handshake {
            self.in_flight = None;
        }
        if self.in_flight.is_none() {
            self.in_flight = self.queue.pop_front();
        }
        let pause = self.cpl_pause.as_mut().is_some_and(|g| g.pause());
        model.set(self.cpl.tready, u64::from(!pause))?;
        match &self.in_flight {
            Some(m) => {
                model.set_words(self.req.hdr, &words128(m.hdr.pack()))?;
                model.set(
                    self.req.tdata,
                    u64::from(m.data[0]) | (u64::from(m.data[1]) << 32),
                )?;
                let keep = match (m.hdr.kind(), m.hdr.length) {
                    (Kind::MemWrite, 1) => 0x0F,
                    (Kind::MemWrite, _) => 0xFF,
                    _ => 0,
                };
                model.set(self.req.tkeep, keep)?;
                model.set(self.req.tlast, 1)?;
                model.set(self.req.tvalid, 1)?;
            }
            None => model.set(self.req.tvalid, 0)?,
        }
        Ok(())
    }
}
