//! ferroce's side of perftest 4.5's bandwidth tools (`ib_write_bw`, `ib_send_bw`,
//! `ib_read_bw`, `ib_atomic_bw`), in either role, over a [`Rig`].
//!
//! The socket protocol (perftest's `perftest_communication.c`, 4.5-0.17): one TCP connection;
//! the TCP client writes first and then reads in every exchange, the server the reverse; each
//! message has a fixed size. In order: the version (16 bytes, "6.06" NUL-padded; perftest
//! refuses below 5.70), page size and cache-line size (4 bytes each, big-endian; both take the
//! larger), the MTU (2 bytes: the IB MTU code as a digit and a NUL; both take the smaller),
//! then five hand-shakes of the 108-byte KEYS message (`lid:out_reads:qpn:psn:rkey:vaddr:` the
//! 16 GID bytes `:`-separated, `srqn:` and a NUL), always the same content. After H1 both QPs
//! connect; after H3 the client runs its traffic (for SEND, after H4: the server posts its
//! receives between H3 and H4); H4 follows the traffic; for WRITE, READ and atomics the
//! client then sends its report (size, iterations, peak and average MB/s, Mpps: 5 x 8 bytes
//! big-endian), the server sends 40 bytes that are ignored; H5; each side writes "done\0".
//!
//! What ferroce checks (perftest fills its buffers with random bytes and checks nothing):
//! - as the active side: its own bytes on the wire (WRITE and SEND payloads in its pcap equal
//!   its source buffer), READ data landed equal to the READ responses on the wire and equal
//!   for every READ of the same remote bytes, atomic results equal to the atomic ACKs on the
//!   wire and each a step of its slot's chain (FETCH_AND_ADD: +1 each time; CMP_AND_SWAP with
//!   compare 0, swap 0: never changes);
//! - as the passive side: its memory after WRITEs equal to the WRITE payloads on the wire
//!   replayed onto its initial bytes and every target byte written, each message received
//!   equal to its SEND payloads on the wire, READ responses equal to its memory, atomics
//!   applied exactly once (each slot its initial value plus its count of FETCH_AND_ADDs, the
//!   original values in the ACKs counting up from it; CMP_AND_SWAP changing nothing).

use super::oob::{self, gid_of_ipv4};
use super::wire::{first_copies, packets, Packet};
use super::{err, guest::HOST_ALIAS, Rig, Role, PUMP_CYCLES};
use crate::Result;
use ferroce_driver::{
    access, DmaBuf, DmaMemory, MemoryRegion, QpAttr, QpState, QueuePair, RecvWr, SendWr, Sge,
    WrOpcode,
};
use ferroce_spec::opcodes as op;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The verb a tool measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Write,
    Send,
    Read,
    FetchAdd,
    CmpSwap,
}

impl Verb {
    pub fn tool(self) -> &'static str {
        match self {
            Verb::Write => "ib_write_bw",
            Verb::Send => "ib_send_bw",
            Verb::Read => "ib_read_bw",
            Verb::FetchAdd | Verb::CmpSwap => "ib_atomic_bw",
        }
    }

    /// The tool with its verb-specific flags, as the results table names it.
    pub fn label(self) -> &'static str {
        match self {
            Verb::FetchAdd => "ib_atomic_bw -A FETCH_AND_ADD",
            Verb::CmpSwap => "ib_atomic_bw -A CMP_AND_SWAP",
            v => v.tool(),
        }
    }

    fn atomic(self) -> bool {
        matches!(self, Verb::FetchAdd | Verb::CmpSwap)
    }
}

/// One run.
#[derive(Clone, Copy, Debug)]
pub struct Perftest {
    pub verb: Verb,
    pub role: Role,
    /// Message size (atomics: 8, whatever is given).
    pub size: u32,
    pub iters: u32,
    pub mtu: u32,
    /// rxe's ACK timeout exponent (`-u`): 4.096 us x 2^u of wall-clock time.
    pub timeout: u32,
    pub seed: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct PerftestResult {
    pub guest_output: String,
    pub wall: Duration,
    /// ferroce's traffic in simulated time, when ferroce was the active side.
    pub gbps: Option<f64>,
    pub bytes_checked: u64,
}

const VERSION: &[u8] = b"6.06";
const KEYS_LEN: usize = 108;
const CYCLE_BUFFER: u32 = 4096;
const CACHE_LINE: u32 = 64;
/// READs and atomics ferroce serves at once (`max_dest_rd_atomic`).
const OUT_READS: u32 = ferroce_spec::queues::MAX_RD_ATOMIC as u32;
/// Work requests ferroce keeps outstanding as the active side.
const TX_DEPTH: u32 = 64;
/// Wall time without progress after which a run is stalled.
const STALL: Duration = Duration::from_secs(60);
/// Atomic slots: perftest's `vaddr + 64 * (k mod 64)`.
const SLOTS: u32 = 64;

/// perftest's KEYS message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    pub lid: u16,
    pub out_reads: u32,
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    pub gid: [u8; 16],
    pub srqn: u32,
}

impl Keys {
    pub fn encode(&self) -> [u8; KEYS_LEN] {
        let mut t = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}:",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        for b in self.gid {
            t += &format!("{b:02x}:");
        }
        t += &format!("{:08x}:", self.srqn);
        let mut out = [0u8; KEYS_LEN];
        out[..t.len()].copy_from_slice(t.as_bytes());
        out
    }

    pub fn decode(m: &[u8]) -> Result<Keys> {
        let text = std::str::from_utf8(m.split(|&b| b == 0).next().unwrap_or_default())
            .map_err(|_| err("perftest KEYS: not text"))?;
        let f: Vec<&str> = text.split(':').collect();
        let bad = || err(format!("perftest KEYS {text:?}: not in perftest's format"));
        if f.len() != 24 {
            return Err(bad());
        }
        let h = |s: &str| u64::from_str_radix(s, 16).map_err(|_| bad());
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = h(f[6 + i])? as u8;
        }
        Ok(Keys {
            lid: h(f[0])? as u16,
            out_reads: h(f[1])? as u32,
            qpn: h(f[2])? as u32,
            psn: h(f[3])? as u32,
            rkey: h(f[4])? as u32,
            vaddr: h(f[5])?,
            gid,
            srqn: h(f[22])? as u32,
        })
    }
}

fn mtu_code(mtu: u32) -> u8 {
    match mtu {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        _ => 5,
    }
}

/// The socket, lockstep: the TCP client writes first in every exchange.
struct Chan {
    s: TcpStream,
    client: bool,
    guest_done: Option<(i32, String)>,
}

impl Chan {
    /// Exchange `mine` for the peer's message of the same size, the NIC running meanwhile.
    fn xchg(&mut self, rig: &mut Rig, mine: &[u8], what: &str) -> Result<Vec<u8>> {
        if self.client {
            oob::write_all(&mut self.s, mine, what)?;
            self.read(rig, mine.len(), what)
        } else {
            let theirs = self.read(rig, mine.len(), what)?;
            oob::write_all(&mut self.s, mine, what)?;
            Ok(theirs)
        }
    }

    /// Read `n` bytes, running the NIC and watching the guest's tool while waiting.
    fn read(&mut self, rig: &mut Rig, n: usize, what: &str) -> Result<Vec<u8>> {
        self.s
            .set_nonblocking(true)
            .map_err(|e| err(format!("socket: {e}")))?;
        let mut buf = vec![0u8; n];
        let mut got = 0;
        let start = Instant::now();
        let mut ended_at = None;
        while got < n {
            match self.s.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(err(format!(
                        "reading {what}: the tool closed its socket{}",
                        self.said()
                    )))
                }
                Ok(k) => {
                    got += k;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(err(format!("reading {what}: {e}"))),
            }
            rig.run(4 * PUMP_CYCLES)?;
            if self.guest_done.is_none() {
                self.guest_done = rig.guest.poll()?;
            }
            if self.guest_done.is_some() {
                let t = *ended_at.get_or_insert_with(Instant::now);
                if t.elapsed() > Duration::from_secs(3) {
                    return Err(err(format!(
                        "reading {what}: the tool ended{}",
                        self.said()
                    )));
                }
            }
            if start.elapsed() > Duration::from_secs(600) {
                return Err(err(format!("reading {what}: nothing in 600 s")));
            }
        }
        self.s
            .set_nonblocking(false)
            .map_err(|e| err(format!("socket: {e}")))?;
        Ok(buf)
    }

    fn said(&self) -> String {
        match &self.guest_done {
            Some((rc, out)) => format!(" (exit {rc}):\n{out}"),
            None => String::new(),
        }
    }
}

/// ferroce's buffers for a run.
struct Bufs {
    /// The source of WRITEs and SENDs, or the target region exposed to the peer.
    main: DmaBuf,
    mr: MemoryRegion,
    /// Where READ data, atomic results and received messages land, one slot each.
    land: DmaBuf,
    land_mr: MemoryRegion,
    slots: u32,
    slot_len: u32,
}

/// ferroce's initial bytes at offset `i` of its main buffer.
fn fill(seed: u64, len: usize) -> Vec<u8> {
    let s = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    (0..len)
        .map(|i| {
            let x = s ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (x >> 29 ^ x >> 7) as u8 | 1
        })
        .collect()
}

/// Run the guest's perftest tool against ferroce.
pub fn run(rig: &mut Rig, p: &Perftest, port: u16) -> Result<PerftestResult> {
    let wall = Instant::now();
    let size = if p.verb.atomic() { 8 } else { p.size };
    let h = &mut rig.station.host;
    let depth = if p.verb == Verb::Send { 512 } else { TX_DEPTH };
    let mut qp = h.dev.create_qp(&h.pd, &h.cq, depth)?;
    h.dev.modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
    // The exposed region: max(size, page) bytes, as perftest's server exposes.
    let region = size.max(CYCLE_BUFFER) as usize;
    let main = h.dev.mem.alloc(region, 4096)?;
    let init = fill(p.seed, region);
    h.dev.mem.write(main.addr, &init)?;
    let all =
        access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
    let mr = h.dev.reg_mr(&h.pd, main.addr, region as u64, all)?;
    let (slots, slot_len) = match p.verb {
        Verb::FetchAdd | Verb::CmpSwap => (p.iters, 8),
        Verb::Read => (TX_DEPTH, size),
        Verb::Send => (depth, size),
        Verb::Write => (1, 8),
    };
    let land = h.dev.mem.alloc((slots * slot_len) as usize, 4096)?;
    let land_mr = h
        .dev
        .reg_mr(&h.pd, land.addr, land.len as u64, access::LOCAL_WRITE)?;
    let b = Bufs {
        main,
        mr,
        land,
        land_mr,
        slots,
        slot_len,
    };
    let my = Keys {
        lid: 0,
        out_reads: if matches!(p.verb, Verb::Write | Verb::Send) {
            1
        } else {
            OUT_READS
        },
        qpn: qp.qpn,
        psn: (p.seed as u32).wrapping_mul(2_654_435_761) & 0xff_ffff,
        rkey: b.mr.rkey,
        vaddr: b.main.addr,
        gid: gid_of_ipv4(h.ip),
        srqn: 0,
    };
    let mut tool = format!(
        "{} -d rxe0 -x 1 -F -n {} -m {} -u {}",
        p.verb.tool(),
        p.iters,
        p.mtu,
        p.timeout
    );
    match p.verb {
        Verb::FetchAdd => tool += " -A FETCH_AND_ADD",
        Verb::CmpSwap => tool += " -A CMP_AND_SWAP",
        _ => tool += &format!(" -s {size}"),
    }
    // Version, page and cache line, MTU.
    let mut v = [0u8; 16];
    v[..VERSION.len()].copy_from_slice(VERSION);
    let (mut ch, theirs) = match p.role {
        Role::Server => {
            let listener = TcpListener::bind(("127.0.0.1", port))
                .map_err(|e| err(format!("listening on 127.0.0.1:{port}: {e}")))?;
            rig.guest.start(&format!("{tool} {HOST_ALIAS}"))?;
            let mut ch = Chan {
                s: oob::accept(&listener, Duration::from_secs(60))?,
                client: false,
                guest_done: None,
            };
            let theirs = ch.xchg(rig, &v, "perftest's version")?;
            (ch, theirs)
        }
        Role::Client => {
            rig.guest.start(&tool)?;
            // QEMU takes the connection before the tool listens and drops it if the guest
            // refuses it: retry until the tool answers.
            let start = Instant::now();
            loop {
                let mut ch = Chan {
                    s: oob::connect(port, Duration::from_secs(60))?,
                    client: true,
                    guest_done: None,
                };
                match ch.xchg(rig, &v, "perftest's version") {
                    Ok(t) => break (ch, t),
                    Err(e)
                        if ch.guest_done.is_some() || start.elapsed() > Duration::from_secs(60) =>
                    {
                        return Err(e)
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(200)),
                }
            }
        }
    };
    let tv =
        String::from_utf8_lossy(theirs.split(|&b| b == 0).next().unwrap_or_default()).to_string();
    if tv.parse::<f64>().map_or(true, |x| x < 5.70) {
        return Err(err(format!(
            "perftest version {tv:?}: expected 5.70 or newer"
        )));
    }
    ch.xchg(rig, &CYCLE_BUFFER.to_be_bytes(), "page size")?;
    ch.xchg(rig, &CACHE_LINE.to_be_bytes(), "cache line size")?;
    let m = ch.xchg(rig, &[b'0' + mtu_code(p.mtu), 0], "MTU")?;
    let their_mtu = u32::from(m[0].wrapping_sub(b'0'));
    let mtu = if (1..=5).contains(&their_mtu) && their_mtu < u32::from(mtu_code(p.mtu)) {
        256 << (their_mtu - 1)
    } else {
        p.mtu
    };
    // H1, connect, H2, H3.
    let peer = Keys::decode(&ch.xchg(rig, &my.encode(), "KEYS (H1)")?)?;
    rig.connect_qp(&mut qp, mtu, peer.qpn, peer.psn, &peer.gid, my.psn)?;
    ch.xchg(rig, &my.encode(), "KEYS (H2)")?;
    ch.xchg(rig, &my.encode(), "KEYS (H3)")?;
    let mut received = Vec::new();
    let mut gbps = None;
    let mut results = Vec::new();
    let active = p.role == Role::Client;
    if p.verb == Verb::Send && !active {
        // Receives before H4; the tool sends after it.
        let n = p.iters.min(b.slots);
        for k in 0..n {
            post_slot_recv(rig, &mut qp, &b, k)?;
        }
        ch.xchg(rig, &my.encode(), "KEYS (H4)")?;
        received = receive_all(rig, &mut qp, &b, p.iters, n)?;
    } else if active {
        if p.verb == Verb::Send {
            ch.xchg(rig, &my.encode(), "KEYS (H4)")?;
        }
        let (g, r) = drive(rig, &mut qp, &b, p, &peer, size)?;
        gbps = Some(g);
        results = r;
        if p.verb != Verb::Send {
            ch.xchg(rig, &my.encode(), "KEYS (H4)")?;
        }
    } else {
        // Passive WRITE, READ or atomics: the tool's traffic runs until its H4.
        ch.xchg(rig, &my.encode(), "KEYS (H4)")?;
    }
    if p.verb != Verb::Send {
        let report: [f64; 3] = match gbps {
            Some(g) => {
                let mbs = g * 1e9 / 8.0 / f64::from(1u32 << 20);
                [
                    mbs,
                    mbs,
                    mbs * f64::from(1u32 << 20) / f64::from(size) / 1e6,
                ]
            }
            None => [0.0; 3],
        };
        ch.xchg(rig, &u64::from(size).to_be_bytes(), "report: size")?;
        ch.xchg(rig, &u64::from(p.iters).to_be_bytes(), "report: iterations")?;
        for (i, x) in report.iter().enumerate() {
            ch.xchg(
                rig,
                &x.to_bits().to_be_bytes(),
                &format!("report field {}", i + 3),
            )?;
        }
    }
    ch.xchg(rig, &my.encode(), "KEYS (H5)")?;
    let _ = ch.s.write_all(b"done\0");
    let (rc, out) = match ch.guest_done.take() {
        Some(r) => r,
        None => rig.finish_guest(p.verb.tool(), Duration::from_secs(60))?,
    };
    if rc != 0 || !out.contains("#bytes") {
        return Err(err(format!("{} failed (exit {rc}):\n{out}", p.verb.tool())));
    }
    let checked = check(rig, p, &b, &init, &received, &results, size, mtu)?;
    Ok(PerftestResult {
        guest_output: out,
        wall: wall.elapsed(),
        gbps,
        bytes_checked: checked,
    })
}

fn post_slot_recv(rig: &mut Rig, qp: &mut QueuePair, b: &Bufs, k: u32) -> Result<()> {
    let h = &mut rig.station.host;
    let wr = RecvWr {
        wr_id: u64::from(k),
        sg_list: vec![Sge {
            addr: b.land.addr + u64::from((k % b.slots) * b.slot_len),
            length: b.slot_len,
            lkey: b.land_mr.lkey,
        }],
    };
    Ok(h.dev.post_recv(qp, &[wr])?)
}

/// Take `iters` SENDs, reposting receives; each message's bytes in order.
fn receive_all(
    rig: &mut Rig,
    qp: &mut QueuePair,
    b: &Bufs,
    iters: u32,
    posted: u32,
) -> Result<Vec<Vec<u8>>> {
    let mut got = Vec::new();
    let mut posted = posted;
    let (mut last, mut progress) = (0, Instant::now());
    while (got.len() as u32) < iters {
        rig.run(PUMP_CYCLES)?;
        let h = &mut rig.station.host;
        let wcs = h.dev.poll_cq(&mut h.cq, 32)?;
        for wc in wcs {
            if wc.status != 0 {
                return Err(err(format!("receive completion {wc:?} failed")));
            }
            let k = wc.wr_id as u32;
            let mut m = vec![0u8; wc.byte_len as usize];
            let h = &mut rig.station.host;
            h.dev
                .mem
                .read(b.land.addr + u64::from((k % b.slots) * b.slot_len), &mut m)?;
            got.push(m);
            if posted < iters {
                post_slot_recv(rig, qp, b, posted)?;
                posted += 1;
            }
        }
        if got.len() > last {
            last = got.len();
            progress = Instant::now();
        }
        if progress.elapsed() > STALL {
            return Err(err(format!(
                "stalled: {} of {iters} SENDs arrived, none in {STALL:?}",
                got.len()
            )));
        }
    }
    Ok(got)
}

/// ferroce as the active side: `iters` work requests, at most `TX_DEPTH` outstanding, every
/// one signaled. Returns the rate (simulated) and what landed per request (READ data, atomic
/// results).
fn drive(
    rig: &mut Rig,
    qp: &mut QueuePair,
    b: &Bufs,
    p: &Perftest,
    peer: &Keys,
    size: u32,
) -> Result<(f64, Vec<Vec<u8>>)> {
    let start_cycle = rig.station.cycle();
    let (mut posted, mut done) = (0u32, 0u32);
    let mut landed = vec![Vec::new(); p.iters as usize];
    let (mut last_done, mut progress) = (0, Instant::now());
    let outstanding = match p.verb {
        Verb::Read | Verb::FetchAdd | Verb::CmpSwap => TX_DEPTH.min(peer.out_reads.max(1)),
        _ => TX_DEPTH,
    };
    while done < p.iters {
        let h = &mut rig.station.host;
        let mut wrs = Vec::new();
        while posted < p.iters && posted - done < outstanding && wrs.len() < 16 {
            let k = posted;
            let slot = b.land.addr + u64::from((k % b.slots) * b.slot_len);
            let wr = match p.verb {
                Verb::Write | Verb::Send => SendWr {
                    wr_id: u64::from(k),
                    opcode: if p.verb == Verb::Write {
                        WrOpcode::RdmaWrite
                    } else {
                        WrOpcode::Send
                    },
                    sg_list: vec![Sge {
                        addr: b.main.addr,
                        length: size,
                        lkey: b.mr.lkey,
                    }],
                    remote_addr: peer.vaddr,
                    rkey: peer.rkey,
                    signaled: true,
                    ..SendWr::default()
                },
                Verb::Read => SendWr {
                    wr_id: u64::from(k),
                    opcode: WrOpcode::RdmaRead,
                    sg_list: vec![Sge {
                        addr: slot,
                        length: size,
                        lkey: b.land_mr.lkey,
                    }],
                    remote_addr: peer.vaddr,
                    rkey: peer.rkey,
                    signaled: true,
                    ..SendWr::default()
                },
                Verb::FetchAdd | Verb::CmpSwap => SendWr {
                    wr_id: u64::from(k),
                    opcode: if p.verb == Verb::FetchAdd {
                        WrOpcode::AtomicFetchAndAdd
                    } else {
                        WrOpcode::AtomicCmpAndSwp
                    },
                    sg_list: vec![Sge {
                        addr: slot,
                        length: 8,
                        lkey: b.land_mr.lkey,
                    }],
                    remote_addr: peer.vaddr + 64 * u64::from(k % SLOTS),
                    rkey: peer.rkey,
                    compare_add: u64::from(p.verb == Verb::FetchAdd),
                    swap: 0,
                    signaled: true,
                    ..SendWr::default()
                },
            };
            wrs.push(wr);
            posted += 1;
        }
        if !wrs.is_empty() {
            h.dev.post_send(qp, &wrs)?;
        }
        rig.run(PUMP_CYCLES)?;
        let h = &mut rig.station.host;
        for wc in h.dev.poll_cq(&mut h.cq, 64)? {
            if wc.status != 0 {
                return Err(err(format!(
                    "work request {} completed with status {} (after {done} of {})",
                    wc.wr_id, wc.status, p.iters
                )));
            }
            let k = wc.wr_id as u32;
            if matches!(p.verb, Verb::Read | Verb::FetchAdd | Verb::CmpSwap) {
                let mut m = vec![0u8; b.slot_len as usize];
                h.dev
                    .mem
                    .read(b.land.addr + u64::from((k % b.slots) * b.slot_len), &mut m)?;
                landed[k as usize] = m;
            }
            done += 1;
        }
        if done > last_done {
            last_done = done;
            progress = Instant::now();
        }
        if progress.elapsed() > STALL {
            return Err(err(format!(
                "stalled: {done} of {} requests done, {posted} posted, none completed in \
                 {STALL:?} (a lost response? ferroce does not retransmit yet); NIC faults: {}",
                p.iters,
                rig.faults()
            )));
        }
    }
    let cycles = rig.station.cycle() - start_cycle;
    let secs = cycles as f64 * rig.station.host.sim.borrow().tb.period_ps() as f64 * 1e-12;
    let gbps = f64::from(size) * f64::from(p.iters) * 8.0 / secs / 1e9;
    Ok((gbps, landed))
}

/// A whole message: its first PSN, the RETH of its first packet, its bytes.
type Message = (u32, Option<(u64, u32, u32)>, Vec<u8>);

/// Whole messages of the given kind, from the first copies of their packets.
fn messages(pkts: &[&Packet], first: &[u8], rest: &[u8], last: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    let mut cur: Option<Message> = None;
    for p in pkts {
        if first.contains(&p.opcode) {
            cur = Some((p.psn, p.reth, p.payload.clone()));
        } else if rest.contains(&p.opcode) {
            if let Some(c) = &mut cur {
                c.2.extend_from_slice(&p.payload);
            }
        } else {
            continue;
        }
        if last.contains(&p.opcode) {
            if let Some(c) = cur.take() {
                out.push(c);
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn check(
    rig: &mut Rig,
    p: &Perftest,
    b: &Bufs,
    init: &[u8],
    received: &[Vec<u8>],
    landed: &[Vec<u8>],
    size: u32,
    mtu: u32,
) -> Result<u64> {
    let tx = packets(&rig.pcaps[0])?;
    let rx = packets(&rig.pcaps[1])?;
    let (txf, rxf) = (first_copies(&tx), first_copies(&rx));
    let h = &mut rig.station.host;
    let mut mem = vec![0u8; init.len()];
    h.dev.mem.read(b.main.addr, &mut mem)?;
    let src = &init[..size as usize];
    let fail = |what: String| Err(err(what));
    let write_ops = [op::RC_RDMA_WRITE_FIRST, op::RC_RDMA_WRITE_ONLY];
    let write_rest = [op::RC_RDMA_WRITE_MIDDLE, op::RC_RDMA_WRITE_LAST];
    let write_last = [op::RC_RDMA_WRITE_ONLY, op::RC_RDMA_WRITE_LAST];
    let send_first = [op::RC_SEND_FIRST, op::RC_SEND_ONLY];
    let send_rest = [op::RC_SEND_MIDDLE, op::RC_SEND_LAST];
    let send_last = [op::RC_SEND_ONLY, op::RC_SEND_LAST];
    let mut checked = 0u64;
    match (p.verb, p.role) {
        (Verb::Write, Role::Server) => {
            // The guest's WRITEs replayed onto ferroce's initial bytes.
            let mut want = init.to_vec();
            let mut touched = vec![false; init.len()];
            let msgs = messages(&rxf, &write_ops, &write_rest, &write_last);
            if msgs.len() != p.iters as usize {
                return fail(format!(
                    "{} WRITEs on the wire, expected {}",
                    msgs.len(),
                    p.iters
                ));
            }
            for (_, reth, data) in &msgs {
                let Some((va, _, len)) = reth else { continue };
                let off = va.wrapping_sub(b.main.addr) as usize;
                if off + data.len() > want.len() || data.len() != *len as usize {
                    return fail(format!(
                        "a WRITE of {len} bytes at {va:#x}: outside or short"
                    ));
                }
                want[off..off + data.len()].copy_from_slice(data);
                touched[off..off + data.len()]
                    .iter_mut()
                    .for_each(|t| *t = true);
            }
            if let Some(i) = mem.iter().zip(&want).position(|(a, b)| a != b) {
                return fail(format!(
                    "memory byte {i} is {:#04x}; the WRITEs on the wire put {:#04x}",
                    mem[i], want[i]
                ));
            }
            if touched.iter().filter(|t| **t).count() < size as usize {
                return fail("the WRITEs did not cover the message".into());
            }
            checked += u64::from(size) * u64::from(p.iters);
        }
        (Verb::Write, Role::Client) | (Verb::Send, Role::Client) => {
            let (f, r, l) = if p.verb == Verb::Write {
                (&write_ops[..], &write_rest[..], &write_last[..])
            } else {
                (&send_first[..], &send_rest[..], &send_last[..])
            };
            let msgs = messages(&txf, f, r, l);
            if msgs.len() != p.iters as usize {
                return fail(format!(
                    "ferroce sent {} messages, expected {}",
                    msgs.len(),
                    p.iters
                ));
            }
            for (psn, _, data) in &msgs {
                if data.as_slice() != src {
                    return fail(format!(
                        "message at PSN {psn:#x} does not carry ferroce's bytes"
                    ));
                }
            }
            checked += u64::from(size) * u64::from(p.iters);
            if mem != init {
                return fail("ferroce's source buffer changed".into());
            }
        }
        (Verb::Send, Role::Server) => {
            let msgs = messages(&rxf, &send_first, &send_rest, &send_last);
            if msgs.len() != received.len() {
                return fail(format!(
                    "{} SENDs on the wire, {} received",
                    msgs.len(),
                    received.len()
                ));
            }
            for (i, ((psn, _, data), got)) in msgs.iter().zip(received).enumerate() {
                if data != got {
                    return fail(format!(
                        "message {i} (PSN {psn:#x}): received bytes differ from the wire's"
                    ));
                }
                checked += got.len() as u64;
            }
        }
        (Verb::Read, Role::Server) => {
            // Every READ response carries ferroce's bytes at the address it answers.
            let reqs: Vec<_> = rxf
                .iter()
                .filter(|p| p.opcode == op::RC_RDMA_READ_REQUEST)
                .collect();
            let mut at = std::collections::HashMap::new();
            for r in &reqs {
                let Some((va, _, len)) = r.reth else { continue };
                let n = len.div_ceil(mtu).max(1);
                for i in 0..n {
                    at.insert((r.psn + i) & 0xff_ffff, va + u64::from(i * mtu));
                }
            }
            let resp = [
                op::RC_RDMA_READ_RESPONSE_FIRST,
                op::RC_RDMA_READ_RESPONSE_MIDDLE,
                op::RC_RDMA_READ_RESPONSE_LAST,
                op::RC_RDMA_READ_RESPONSE_ONLY,
            ];
            for r in txf.iter().filter(|p| resp.contains(&p.opcode)) {
                let Some(va) = at.get(&r.psn) else {
                    return fail(format!("READ response PSN {:#x} answers no request", r.psn));
                };
                let off = va.wrapping_sub(b.main.addr) as usize;
                if mem.get(off..off + r.payload.len()) != Some(&r.payload[..]) {
                    return fail(format!(
                        "READ response PSN {:#x} does not carry ferroce's bytes",
                        r.psn
                    ));
                }
                checked += r.payload.len() as u64;
            }
            if mem != init {
                return fail("ferroce's memory changed under READs".into());
            }
        }
        (Verb::Read, Role::Client) => {
            let resp_first = [
                op::RC_RDMA_READ_RESPONSE_FIRST,
                op::RC_RDMA_READ_RESPONSE_ONLY,
            ];
            let resp_rest = [
                op::RC_RDMA_READ_RESPONSE_MIDDLE,
                op::RC_RDMA_READ_RESPONSE_LAST,
            ];
            let resp_last = [
                op::RC_RDMA_READ_RESPONSE_ONLY,
                op::RC_RDMA_READ_RESPONSE_LAST,
            ];
            let msgs = messages(&rxf, &resp_first, &resp_rest, &resp_last);
            let first = landed.first().cloned().unwrap_or_default();
            for (k, got) in landed.iter().enumerate() {
                if *got != first {
                    return fail(format!(
                        "READ {k} landed other bytes than READ 0 (same remote bytes)"
                    ));
                }
                checked += got.len() as u64;
            }
            if msgs.iter().any(|(_, _, d)| *d != first) {
                return fail("a READ response on the wire differs from what landed".into());
            }
        }
        (Verb::FetchAdd | Verb::CmpSwap, Role::Client) => {
            let acks: Vec<u64> = rxf
                .iter()
                .filter(|p| p.opcode == op::RC_ATOMIC_ACKNOWLEDGE)
                .filter_map(|p| p.atomic_orig)
                .collect();
            let got: Vec<u64> = landed
                .iter()
                .map(|m| u64::from_le_bytes(m[..8].try_into().unwrap_or_default()))
                .collect();
            if acks != got {
                return fail(format!(
                    "atomic results differ from the atomic ACKs on the wire ({} results, {} ACKs)",
                    got.len(),
                    acks.len()
                ));
            }
            let step = u64::from(p.verb == Verb::FetchAdd);
            for k in SLOTS as usize..got.len() {
                if got[k] != got[k - SLOTS as usize].wrapping_add(step) {
                    return fail(format!(
                        "atomic {k}: original {:#x}, expected {:#x} (slot {})",
                        got[k],
                        got[k - SLOTS as usize].wrapping_add(step),
                        k % SLOTS as usize
                    ));
                }
            }
            checked += 8 * got.len() as u64;
        }
        (Verb::FetchAdd | Verb::CmpSwap, Role::Server) => {
            let q = |m: &[u8], off: usize| {
                u64::from_le_bytes(m[off..off + 8].try_into().unwrap_or_default())
            };
            let reqs: Vec<_> = rxf
                .iter()
                .filter_map(|p| p.atomic.map(|a| (p.psn, a)))
                .collect();
            // Per slot: the atomics applied so far and the sum of their adds.
            let mut count = std::collections::HashMap::new();
            let mut want_orig = std::collections::HashMap::new();
            for (psn, (va, add, cmp)) in &reqs {
                let off = va.wrapping_sub(b.main.addr) as usize;
                if off + 8 > init.len() {
                    return fail(format!("an atomic at {va:#x}, outside the region"));
                }
                let (n, sum) = count.entry(off).or_insert((0u64, 0u64));
                if p.verb == Verb::CmpSwap && (*cmp != 0 || q(init, off) == 0) {
                    return fail(
                        "a CMP_AND_SWAP that could change memory (compare not 0, or slot 0)".into(),
                    );
                }
                want_orig.insert(*psn, q(init, off).wrapping_add(*sum));
                *n += 1;
                if p.verb == Verb::FetchAdd {
                    *sum = sum.wrapping_add(*add);
                }
            }
            if reqs.len() != p.iters as usize {
                return fail(format!(
                    "{} atomics on the wire, expected {}",
                    reqs.len(),
                    p.iters
                ));
            }
            for (off, (n, sum)) in &count {
                let want = q(init, *off).wrapping_add(*sum);
                if q(&mem, *off) != want {
                    return fail(format!(
                        "slot at {off}: {:#x}, expected {want:#x} after {n} atomics",
                        q(&mem, *off)
                    ));
                }
            }
            for a in txf.iter().filter(|p| p.opcode == op::RC_ATOMIC_ACKNOWLEDGE) {
                if want_orig.get(&a.psn) != a.atomic_orig.as_ref() {
                    return fail(format!(
                        "atomic ACK PSN {:#x} carries {:?}, expected {:?}",
                        a.psn,
                        a.atomic_orig,
                        want_orig.get(&a.psn)
                    ));
                }
            }
            checked += 8 * reqs.len() as u64;
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_in_perftests_108_byte_format() {
        let k = Keys {
            lid: 0,
            out_reads: 1,
            qpn: 0x11,
            psn: 0x3a5b7c,
            rkey: 0x1234,
            vaddr: 0x7f12_438b_c000,
            gid: gid_of_ipv4([192, 168, 1, 10]),
            srqn: 0,
        };
        let m = k.encode();
        let want = "0000:0001:000011:3a5b7c:00001234:00007f12438bc000:\
                    00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:01:0a:00000000:";
        assert_eq!(&m[..107], want.as_bytes());
        assert_eq!(m[107], 0);
        assert_eq!(Keys::decode(&m).unwrap(), k);
        assert!(Keys::decode(b"0000:0001").is_err());
    }
}
