//! The host's side of the NIC's requester streams: memory reads and writes from the NIC
//! (`m_rq_*`), read completions back (`s_rc_*`), both address-aligned (`spec::tlp`).
//!
//! Every request is checked against the PCIe rules and the link's parameters: a read longer
//! than the max read request size, a write longer than the max payload size, either crossing
//! a 4 KiB boundary, byte enables that are not contiguous, `tkeep` that disagrees with the
//! header, or an access outside the driver's buffers. What a check finds is a violation:
//! in strict mode (the default) it fails the run; otherwise it is recorded, a read gets an
//! Unsupported Request completion and a write is dropped.
//!
//! Reads complete after the configured latency, cut at read completion boundaries into
//! completions of at most the max payload size. With a reorder seed, completions of different
//! tags interleave at random and the cut points vary (still in order within a tag, as PCIe
//! requires), from a seeded generator: the same seed gives the same run.

use crate::model::{Model, Port};
use crate::pause::PauseGenerator;
use crate::pcie::config::PcieConfig;
use crate::pcie::memory::HostMemory;
use crate::Result;
use ferroce_spec::tlp::{self, Header, Kind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Counts of what the NIC did on its requester interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaStats {
    pub read_requests: u64,
    pub read_bytes: u64,
    pub completions: u64,
    pub write_requests: u64,
    pub write_bytes: u64,
}

/// A received payload beat: bytes and `tkeep`.
type RqBeat = (Vec<u8>, u64);

struct RcPorts {
    hdr: Port,
    tdata: Port,
    tkeep: Option<Port>,
    tlast: Port,
    tvalid: Port,
    tready: Port,
}

struct Cpl {
    due: u64,
    tag: u8,
    hdr: Header,
    /// Beats of `bytes` lanes each.
    beats: Vec<Vec<u8>>,
    keeps: Vec<u64>,
}

pub(crate) struct DmaSide {
    bytes: usize,
    latency_cycles: u64,
    rq_hdr: Port,
    rq_tdata: Port,
    rq_tkeep: Port,
    rq_tlast: Port,
    rq_tvalid: Port,
    rq_tready: Port,
    /// The completion stream; a write-only engine has none.
    rc: Option<RcPorts>,
    cycle: u64,
    /// The request being received: header, then (data, keep) per beat.
    got: Option<(u128, Vec<u8>, u64, bool)>,
    assembling: Option<(Header, Vec<RqBeat>)>,
    pending: VecDeque<Cpl>,
    out: Option<(Cpl, usize)>,
    presented: bool,
    rc_fire: bool,
    rng: Option<ChaCha8Rng>,
    pub(crate) rq_pause: Option<PauseGenerator>,
    pub(crate) rc_pause: Option<PauseGenerator>,
    /// Memory write bandwidth limit: (bytes per cycle, tokens now).
    pub(crate) write_limit: Option<(f64, f64)>,
    pub(crate) stats: DmaStats,
}

fn pow2_in(v: usize, lo: usize, hi: usize) -> bool {
    v.is_power_of_two() && (lo..=hi).contains(&v)
}

impl DmaSide {
    pub(crate) fn new(
        model: &Model,
        rq: &str,
        rc: &str,
        period_ps: u64,
        config: &PcieConfig,
    ) -> Result<DmaSide> {
        let p = |s: &str, n: &str| model.port(&format!("{s}_{n}"));
        let tdata = p(rq, "tdata")?;
        if !pow2_in(config.max_payload, 128, 4096)
            || !pow2_in(config.max_read_request, 128, 4096)
            || !pow2_in(config.rcb, 64, 128)
        {
            return Err(crate::SimError::Design(format!(
                "PCIe parameters out of range: {config:?}"
            )));
        }
        let keep_name = format!("{rc}_tkeep");
        let rc = if model.has_port(&format!("{rc}_tvalid")) {
            Some(RcPorts {
                hdr: p(rc, "hdr")?,
                tdata: p(rc, "tdata")?,
                tkeep: model
                    .has_port(&keep_name)
                    .then(|| model.port(&keep_name))
                    .transpose()?,
                tlast: p(rc, "tlast")?,
                tvalid: p(rc, "tvalid")?,
                tready: p(rc, "tready")?,
            })
        } else {
            None
        };
        Ok(DmaSide {
            bytes: tdata.width / 8,
            latency_cycles: config.read_latency_ps.div_ceil(period_ps.max(1)),
            rq_hdr: p(rq, "hdr")?,
            rq_tdata: tdata,
            rq_tkeep: p(rq, "tkeep")?,
            rq_tlast: p(rq, "tlast")?,
            rq_tvalid: p(rq, "tvalid")?,
            rq_tready: p(rq, "tready")?,
            rc,
            cycle: 0,
            got: None,
            assembling: None,
            pending: VecDeque::new(),
            out: None,
            presented: false,
            rc_fire: false,
            rng: config.cpl_reorder_seed.map(ChaCha8Rng::seed_from_u64),
            rq_pause: None,
            write_limit: None,
            rc_pause: None,
            stats: DmaStats::default(),
        })
    }

    /// Nothing in flight: no request half received, no completion waiting or on the bus.
    pub(crate) fn idle(&self) -> bool {
        self.assembling.is_none() && self.pending.is_empty() && self.out.is_none()
    }

    pub(crate) fn sample(&mut self, model: &Model) {
        self.got = (model.get(self.rq_tvalid) == 1 && model.get(self.rq_tready) == 1).then(|| {
            (
                model.get_u128(self.rq_hdr),
                model.get_bytes(self.rq_tdata),
                model.get(self.rq_tkeep),
                model.get(self.rq_tlast) == 1,
            )
        });
        self.rc_fire = self.presented && self.rc.as_ref().is_some_and(|c| model.get(c.tready) == 1);
    }

    pub(crate) fn drive(
        &mut self,
        model: &mut Model,
        mem: &mut HostMemory,
        config: &PcieConfig,
        violations: &mut Vec<String>,
    ) -> Result<()> {
        self.cycle += 1;
        if let Some((rate, tokens)) = &mut self.write_limit {
            // A token bucket one maximum payload deep: the host takes `rate` bytes a cycle.
            *tokens = (*tokens + *rate).min(config.max_payload as f64);
        }
        if let Some((hdr, data, keep, last)) = self.got.take() {
            let (h, beats) = self
                .assembling
                .get_or_insert_with(|| (Header::unpack(hdr), Vec::new()));
            let h = *h;
            if let (Kind::MemWrite, Some((_, tokens))) = (h.kind(), &mut self.write_limit) {
                *tokens -= f64::from(keep.count_ones());
            }
            beats.push((data, keep));
            if last {
                let beats = self.assembling.take().map(|a| a.1).unwrap_or_default();
                self.request(h, &beats, mem, config, violations);
            }
        }
        let pause = self.rq_pause.as_mut().is_some_and(|g| g.pause())
            || self.write_limit.is_some_and(|(_, t)| t < 0.0);
        model.set(self.rq_tready, u64::from(!pause))?;
        self.drive_completions(model)
    }

    fn request(
        &mut self,
        h: Header,
        beats: &[RqBeat],
        mem: &mut HostMemory,
        config: &PcieConfig,
        violations: &mut Vec<String>,
    ) {
        match h.kind() {
            Kind::MemRead if self.rc.is_none() => violations.push(format!(
                "memory read from a NIC with no completion stream: {h:?}"
            )),
            Kind::MemRead => self.read(h, beats, mem, config, violations),
            Kind::MemWrite => self.write(h, beats, mem, config, violations),
            _ => violations.push(format!(
                "NIC sent a request that is not a memory request: {h:?}"
            )),
        }
    }

    /// Bytes a request covers from its header: first byte address and length.
    fn span(h: &Header, violations: &mut Vec<String>) -> Option<(u64, usize)> {
        let (first, last) = (h.be & 0xF, h.be >> 4);
        let contiguous = |be: u8| be != 0 && ((be >> be.trailing_zeros()) + 1).is_power_of_two();
        // Leading zeros within a 4-bit nibble.
        let lz4 = |be: u8| u64::from(be.leading_zeros() - 4);
        let ok = if h.length == 1 {
            last == 0 && contiguous(first)
        } else {
            contiguous(first) && contiguous(last) && lz4(first) == 0 && last & 1 == 1
        };
        if h.addr & 3 != 0 || !ok {
            violations.push(format!("byte enables or address not valid for PCIe: {h:?}"));
            return None;
        }
        let start = h.addr + u64::from(first.trailing_zeros());
        let end = if h.length == 1 {
            h.addr + 4 - lz4(first)
        } else {
            h.addr + 4 * u64::from(h.length) - lz4(last)
        };
        Some((start, (end - start) as usize))
    }

    fn check_bounds(what: &str, h: &Header, limit: usize, violations: &mut Vec<String>) -> bool {
        let bytes = 4 * u64::from(h.length);
        if bytes > limit as u64 {
            violations.push(format!("{what} of {bytes} bytes exceeds {limit}: {h:?}"));
            return false;
        }
        if (h.addr % tlp::PAGE) + bytes > tlp::PAGE {
            violations.push(format!("{what} crosses a 4 KiB boundary: {h:?}"));
            return false;
        }
        if h.requester_id != tlp::NIC_REQUESTER_ID {
            violations.push(format!("{what} with requester ID {:#x}", h.requester_id));
            return false;
        }
        true
    }

    fn read(
        &mut self,
        h: Header,
        beats: &[RqBeat],
        mem: &mut HostMemory,
        config: &PcieConfig,
        violations: &mut Vec<String>,
    ) {
        self.stats.read_requests += 1;
        let due = self.cycle + self.latency_cycles;
        let before = violations.len();
        let ok = beats.len() == 1
            && beats[0].1 == 0
            && Self::check_bounds("memory read", &h, config.max_read_request, violations);
        if beats.len() != 1 || beats[0].1 != 0 {
            violations.push(format!("memory read with payload beats: {h:?}"));
        }
        let span = if ok { Self::span(&h, violations) } else { None };
        let span = span.filter(|&(start, len)| {
            let why = mem.dma_refused("memory read", start, len as u64);
            violations.extend(why.clone());
            why.is_none()
        });
        // A poisoned range: the read fails (not a violation: the NIC must cope).
        let poisoned = span.is_some_and(|(start, len)| mem.read_poisoned(start, len as u64));
        let data = span.filter(|_| !poisoned).and_then(|(start, len)| {
            let mut buf = vec![0u8; len];
            match mem.read(start, &mut buf) {
                Ok(()) => Some((start, buf)),
                Err(e) => {
                    violations.push(fault_text(e));
                    None
                }
            }
        });
        let Some((start, data)) = data else {
            debug_assert!(poisoned || violations.len() > before);
            let hdr = Header {
                fmt: tlp::FMT_3DW_NO_DATA,
                ty: tlp::TYPE_CPL,
                length: 0,
                requester_id: h.requester_id,
                tag: h.tag,
                completer_id: config.host_id,
                status: if poisoned { tlp::CPL_CA } else { tlp::CPL_UR },
                byte_count: 0,
                lower_addr: (h.addr & 0x7F) as u8,
                ..Header::default()
            };
            self.pending.push_back(Cpl {
                due,
                tag: h.tag,
                hdr,
                beats: vec![vec![0; self.bytes]],
                keeps: vec![0],
            });
            return;
        };
        self.stats.read_bytes += data.len() as u64;
        // Cut points: RCB boundaries, merged into pieces of at most max payload.
        let end = start + data.len() as u64;
        let rcb = config.rcb as u64;
        let mut at = start;
        while at < end {
            let mut stop = (at / rcb + 1) * rcb;
            let max_stop = (at & !3) + config.max_payload as u64;
            let mut grow = true;
            while grow && stop < end {
                let next = stop + rcb;
                grow = next <= max_stop
                    && match &mut self.rng {
                        Some(r) => r.gen_bool(0.7),
                        None => true,
                    };
                if grow {
                    stop = next;
                }
            }
            let stop = stop.min(end);
            self.pending.push_back(self.completion(
                due,
                &h,
                config.host_id,
                at,
                &data[(at - start) as usize..(stop - start) as usize],
                (end - at) as u16,
            ));
            at = stop;
        }
    }

    /// One completion with data for bytes at `addr`, address-aligned.
    fn completion(
        &self,
        due: u64,
        req: &Header,
        host_id: u16,
        addr: u64,
        bytes: &[u8],
        remaining: u16,
    ) -> Cpl {
        let dw_start = addr & !3;
        let dw_end = (addr + bytes.len() as u64).div_ceil(4) * 4;
        let lane0 = (dw_start % self.bytes as u64) as usize;
        let total = lane0 + (dw_end - dw_start) as usize;
        let nbeats = total.div_ceil(self.bytes);
        let mut beats = vec![vec![0u8; self.bytes]; nbeats];
        let mut keeps = vec![0u64; nbeats];
        let first = (addr - dw_start) as usize + lane0;
        for (i, b) in bytes.iter().enumerate() {
            let pos = first + i;
            beats[pos / self.bytes][pos % self.bytes] = *b;
            keeps[pos / self.bytes] |= 1 << (pos % self.bytes);
        }
        Cpl {
            due,
            tag: req.tag,
            hdr: Header {
                fmt: tlp::FMT_3DW_DATA,
                ty: tlp::TYPE_CPL,
                length: ((dw_end - dw_start) / 4) as u16,
                requester_id: req.requester_id,
                tag: req.tag,
                completer_id: host_id,
                status: tlp::CPL_SC,
                byte_count: remaining & 0xFFF,
                lower_addr: (addr & 0x7F) as u8,
                ..Header::default()
            },
            beats,
            keeps,
        }
    }

    fn write(
        &mut self,
        h: Header,
        beats: &[RqBeat],
        mem: &mut HostMemory,
        config: &PcieConfig,
        violations: &mut Vec<String>,
    ) {
        self.stats.write_requests += 1;
        if !Self::check_bounds("memory write", &h, config.max_payload, violations) {
            return;
        }
        let Some((start, len)) = Self::span(&h, violations) else {
            return;
        };
        // Where each payload byte sits: lane `addr mod bytes` of the first beat onwards.
        let lane0 = (h.addr % self.bytes as u64) as usize;
        let first = lane0 + (start - h.addr) as usize;
        let mut want_keep = vec![0u64; beats.len()];
        let mut data = Vec::with_capacity(len);
        for i in 0..len {
            let pos = first + i;
            let (b, l) = (pos / self.bytes, pos % self.bytes);
            if b >= beats.len() {
                violations.push(format!(
                    "memory write with {} beats, too few for {len} bytes: {h:?}",
                    beats.len()
                ));
                return;
            }
            want_keep[b] |= 1 << l;
            data.push(beats[b].0[l]);
        }
        let got_keep: Vec<u64> = beats.iter().map(|b| b.1).collect();
        if got_keep != want_keep {
            violations.push(format!(
                "memory write tkeep {got_keep:x?} disagrees with its header (want {want_keep:x?}): {h:?}"
            ));
            return;
        }
        if let Some(why) = mem.dma_refused("memory write", start, len as u64) {
            violations.push(why);
            return;
        }
        match mem.write(start, &data) {
            Ok(()) => self.stats.write_bytes += len as u64,
            Err(e) => violations.push(fault_text(e)),
        }
    }

    fn drive_completions(&mut self, model: &mut Model) -> Result<()> {
        let Some(rc) = &self.rc else {
            return Ok(());
        };
        let (hdr, tdata, tkeep, tlast, tvalid) = (rc.hdr, rc.tdata, rc.tkeep, rc.tlast, rc.tvalid);
        if self.rc_fire {
            if let Some((c, i)) = &mut self.out {
                *i += 1;
                if *i == c.beats.len() {
                    self.out = None;
                    self.stats.completions += 1;
                }
            }
            self.presented = false;
        }
        if self.out.is_none() {
            self.out = self.next_completion().map(|c| (c, 0));
        }
        if !self.presented {
            let pause = self.rc_pause.as_mut().is_some_and(|g| g.pause());
            self.presented = self.out.is_some() && !pause;
        }
        match (&self.out, self.presented) {
            (Some((c, i)), true) => {
                model.set_u128(hdr, c.hdr.pack())?;
                model.set_bytes(tdata, &c.beats[*i])?;
                if let Some(k) = tkeep {
                    model.set(k, c.keeps[*i])?;
                }
                model.set(tlast, u64::from(*i + 1 == c.beats.len()))?;
                model.set(tvalid, 1)?;
            }
            _ => model.set(tvalid, 0)?,
        }
        Ok(())
    }

    /// The next completion whose time has come: the oldest, or with a reorder seed the head of
    /// a random tag's queue.
    fn next_completion(&mut self) -> Option<Cpl> {
        let now = self.cycle;
        let ready: Vec<usize> = self
            .pending
            .iter()
            .enumerate()
            .filter(|(_, c)| c.due <= now)
            .map(|(i, _)| i)
            .collect();
        if ready.is_empty() {
            return None;
        }
        let pick = match &mut self.rng {
            None => ready[0],
            Some(r) => {
                // Heads of each tag's queue: the first ready entry of each tag.
                let mut heads: Vec<usize> = Vec::new();
                for &i in &ready {
                    let tag = self.pending[i].tag;
                    let earlier = self.pending.iter().take(i).any(|c| c.tag == tag);
                    if !earlier {
                        heads.push(i);
                    }
                }
                heads[r.gen_range(0..heads.len())]
            }
        };
        self.pending.remove(pick)
    }
}

fn fault_text(e: crate::SimError) -> String {
    match e {
        crate::SimError::Dma(m) => m,
        other => other.to_string(),
    }
}
