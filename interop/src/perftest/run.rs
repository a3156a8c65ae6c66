//! A run of one tool: the hand-shakes, the QP connected, the traffic driven or received, and
//! the result checked against the wire.

use super::check::check;
use super::tool::{
    fill, mtu_code, Bufs, Chan, Keys, Perftest, PerftestResult, Verb, CACHE_LINE, CYCLE_BUFFER,
    OUT_READS, SLOTS, STALL, TX_DEPTH, VERSION,
};
use crate::oob::{self, gid_of_ipv4};
use crate::Result;
use crate::{err, guest::HOST_ALIAS, Rig, Role, PUMP_CYCLES};
use ferroce_driver::{
    access, DmaMemory, QpAttr, QpState, QueuePair, RecvWr, SendWr, Sge, WrOpcode,
};
use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, Instant};

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

pub(super) fn post_slot_recv(rig: &mut Rig, qp: &mut QueuePair, b: &Bufs, k: u32) -> Result<()> {
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
pub(super) fn receive_all(
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
pub(super) fn drive(
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
