//! The host's side of the NIC's completer streams: MMIO requests to BAR0 out (`s_req_*` on
//! the NIC), their completions back (`m_cpl_*`). Writes are posted; a read gets a tag and
//! completes when the NIC's completion arrives. Completions are checked: an unexpected tag, or
//! a successful completion without data, is recorded, never dropped.

use crate::model::{Model, Port};
use crate::pause::PauseGenerator;
use crate::Result;
use ferroce_spec::tlp::{self, Header, Kind};
use std::collections::{BTreeMap, VecDeque};

/// An MMIO request waiting to go to the NIC.
struct Request {
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

pub(crate) struct MmioSide {
    host_id: u16,
    hdr: Port,
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
    c_hdr: Port,
    c_tdata: Port,
    c_tvalid: Port,
    c_tready: Port,
    queue: VecDeque<Request>,
    in_flight: Option<Request>,
    tags: BTreeMap<u8, ReadResult>,
    next_tag: u8,
    handshake: bool,
    got_cpl: Option<(u128, u64)>,
    pub(crate) cpl_pause: Option<PauseGenerator>,
}

impl MmioSide {
    pub(crate) fn new(model: &Model, req: &str, cpl: &str, host_id: u16) -> Result<MmioSide> {
        let p = |s: &str, n: &str| model.port(&format!("{s}_{n}"));
        Ok(MmioSide {
            host_id,
            hdr: p(req, "hdr")?,
            tdata: p(req, "tdata")?,
            tkeep: p(req, "tkeep")?,
            tlast: p(req, "tlast")?,
            tvalid: p(req, "tvalid")?,
            tready: p(req, "tready")?,
            c_hdr: p(cpl, "hdr")?,
            c_tdata: p(cpl, "tdata")?,
            c_tvalid: p(cpl, "tvalid")?,
            c_tready: p(cpl, "tready")?,
            queue: VecDeque::new(),
            in_flight: None,
            tags: BTreeMap::new(),
            next_tag: 0,
            handshake: false,
            got_cpl: None,
            cpl_pause: None,
        })
    }

    fn request(&self, fmt: u8, dws: u16, addr: u64) -> Header {
        Header {
            fmt,
            ty: tlp::TYPE_MEM,
            length: dws,
            requester_id: self.host_id,
            be: if dws == 1 { 0x0F } else { 0xFF },
            addr,
            ..Header::default()
        }
    }

    pub(crate) fn write(&mut self, offset: u32, dws: u16, value: u64) {
        let hdr = self.request(tlp::FMT_3DW_DATA, dws, offset.into());
        self.queue.push_back(Request {
            hdr,
            data: [value as u32, (value >> 32) as u32],
        });
    }

    pub(crate) fn raw(&mut self, hdr: Header, data: [u32; 2]) {
        if hdr.kind() == Kind::MemRead {
            self.tags.insert(hdr.tag, ReadResult::Pending);
        }
        self.queue.push_back(Request { hdr, data });
    }

    pub(crate) fn read(&mut self, offset: u32, dws: u16) -> u8 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        let mut hdr = self.request(tlp::FMT_3DW_NO_DATA, dws, offset.into());
        hdr.tag = tag;
        self.tags.insert(tag, ReadResult::Pending);
        self.queue.push_back(Request { hdr, data: [0; 2] });
        tag
    }

    pub(crate) fn result(&mut self, tag: u8) -> ReadResult {
        match self.tags.get(&tag).copied() {
            Some(ReadResult::Pending) | None => ReadResult::Pending,
            Some(r) => {
                self.tags.remove(&tag);
                r
            }
        }
    }

    pub(crate) fn idle(&self) -> bool {
        self.queue.is_empty() && self.in_flight.is_none()
    }

    fn complete(&mut self, hdr: u128, data: u64, errors: &mut Vec<String>) {
        let h = Header::unpack(hdr);
        match (h.kind(), self.tags.get(&h.tag)) {
            (Kind::CompletionData | Kind::Completion, Some(ReadResult::Pending)) => {
                let r = if h.status != tlp::CPL_SC {
                    ReadResult::Failed(h.status)
                } else if h.kind() == Kind::Completion {
                    errors.push(format!(
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
            _ => errors.push(format!("unexpected MMIO completion {h:?}")),
        }
    }

    pub(crate) fn sample(&mut self, model: &Model) {
        self.handshake =
            self.in_flight.is_some() && model.get(self.tready) == 1 && model.get(self.tvalid) == 1;
        if model.get(self.c_tvalid) == 1 && model.get(self.c_tready) == 1 {
            self.got_cpl = Some((model.get_u128(self.c_hdr), model.get(self.c_tdata)));
        }
    }

    pub(crate) fn drive(&mut self, model: &mut Model, errors: &mut Vec<String>) -> Result<()> {
        if let Some((hdr, data)) = self.got_cpl.take() {
            self.complete(hdr, data, errors);
        }
        if self.handshake {
            self.in_flight = None;
        }
        if self.in_flight.is_none() {
            self.in_flight = self.queue.pop_front();
        }
        let pause = self.cpl_pause.as_mut().is_some_and(|g| g.pause());
        model.set(self.c_tready, u64::from(!pause))?;
        match &self.in_flight {
            Some(m) => {
                model.set_u128(self.hdr, m.hdr.pack())?;
                model.set(
                    self.tdata,
                    u64::from(m.data[0]) | (u64::from(m.data[1]) << 32),
                )?;
                let keep = match (m.hdr.kind(), m.hdr.length) {
                    (Kind::MemWrite, 1) => 0x0F,
                    (Kind::MemWrite, _) => 0xFF,
                    _ => 0,
                };
                model.set(self.tkeep, keep)?;
                model.set(self.tlast, 1)?;
                model.set(self.tvalid, 1)?;
            }
            None => model.set(self.tvalid, 0)?,
        }
        Ok(())
    }
}
