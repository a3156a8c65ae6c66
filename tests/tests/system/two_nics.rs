//! Two `ferroce_nic_64` models on Verilator, each driven by the Rust driver through its own
//! simulated root complex (500 ns reads, completions split and reordered from the seed),
//! joined by a 10G link each way: RDMA WRITEs both ways land byte-exact in the peer's memory,
//! leave everything around them as it was, and complete once each, in order, with their
//! wr_id. Every frame on both links is dissected by tshark (two QP pairs send 802.1Q-tagged:
//! every frame carries its pair's priority and VLAN) and its ICRC checked by scapy.
//! Corrupted frames, bad keys, out-of-range addresses and foreign P_Keys change no byte of
//! memory.

use anyhow::{ensure, Context, Result};
use ferroce_driver::{
    DmaMemory, MemoryRegion, QpState, QueuePair, SendWr, Sge, Vlan, WorkCompletion, WrOpcode,
};
use ferroce_sim::host::SimMem;
use ferroce_sim::world::{step_until, Host, World, WorldConfig};
use ferroce_sim::Fault;
use ferroce_spec::opcodes::{
    RC_ACKNOWLEDGE, RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST, RC_RDMA_WRITE_MIDDLE,
    RC_RDMA_WRITE_ONLY,
};
use ferroce_spec::queues::{QP_CTX, WC_RDMA_WRITE, WC_REM_ACCESS_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR};
use ferroce_spec::regs::TABLE_QP;
use ferroce_tests::wire::{scapy_check, tshark_fields};
use ferroce_tests::{budget, guarded, rng, seed, soak};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;

const PMTUS: [u32; 4] = [256, 1024, 4096, 512];
const AREA: usize = 1280 << 10;
const GUARD: usize = 4096;
const SRC_LEN: usize = 2 << 20;
const MIB: usize = 1 << 20;

/// One direction's buffers: the sender's source bytes, the receiver's target region (inside
/// a larger buffer whose guard bytes lie outside the region), and the target's expected image.
struct Dir {
    src: MemoryRegion,
    src_bytes: Vec<u8>,
    tgt_buf: u64,
    tgt: MemoryRegion,
    expect: Vec<u8>,
    cursor: Vec<usize>,
}

fn dir(r: &mut ChaCha8Rng, from: &mut Host, to: &mut Host, qps: usize) -> Result<Dir> {
    let g = guarded(
        r,
        from,
        to,
        (SRC_LEN, qps * AREA, GUARD),
        ferroce_driver::access::REMOTE_WRITE,
    )?;
    Ok(Dir {
        src: g.src,
        src_bytes: g.src_bytes,
        tgt_buf: g.buf,
        tgt: g.region,
        expect: g.expect,
        cursor: vec![0; qps],
    })
}

/// A random WRITE on QP index `k` of direction `d`: its request, with the expected image
/// updated (per QP, writes land in order).
fn random_write(r: &mut ChaCha8Rng, d: &mut Dir, k: usize, pmtu: usize, wr_id: u64) -> SendWr {
    let len = match r.gen_range(0..100) {
        0..=4 => 0,
        5..=24 => r.gen_range(1..=64),
        25..=44 => pmtu - 1 + r.gen_range(0..3),
        45..=46 => MIB,
        47..=56 => 3 * pmtu + r.gen_range(0..pmtu),
        _ => r.gen_range(65..=16 << 10),
    };
    let mut at = d.cursor[k] + r.gen_range(0..64);
    if len > 1 && r.gen_bool(0.3) {
        // Across a 4 KiB page of the target.
        let page = (at / 4096 + 1) * 4096;
        at = page - r.gen_range(1..len.min(4096));
    }
    if at + len > AREA {
        at = r.gen_range(0..=(AREA - len).min(64));
    }
    d.cursor[k] = at + len;
    let src_off = r.gen_range(0..=SRC_LEN - len);
    let off = GUARD + k * AREA + at;
    d.expect[off..off + len].copy_from_slice(&d.src_bytes[src_off..src_off + len]);
    SendWr {
        wr_id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr + src_off as u64,
            length: len as u32,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA + at) as u64,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    }
}

fn num(s: &str) -> Result<u64> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.with_context(|| format!("tshark field {s:?}"))
}

/// Dissect one link's pcap: every frame RoCEv2, not malformed; requests per destination QP
/// in PSN order from `first_psn` with the opcode sequence of whole messages; returns
/// (request packets, ACKs) and checks scapy's ICRC verdict. Every frame, request or ACK,
/// carries the 802.1Q tag (priority, VLAN) of its destination QP's pair in `tags`.
fn check_pcap(
    pcap: &Path,
    first_psn: &HashMap<u64, u32>,
    tags: &HashMap<u64, Option<Vlan>>,
) -> Result<(usize, usize)> {
    let rows = tshark_fields(pcap)?;
    let mut next: HashMap<u64, (u32, bool)> =
        first_psn.iter().map(|(q, p)| (*q, (*p, false))).collect();
    let (mut reqs, mut acks) = (0, 0);
    for (i, row) in rows.iter().enumerate() {
        ensure!(
            row[0] == "RRoCE" && row[4].is_empty(),
            "{}: frame {i}: tshark says {row:?}",
            pcap.display()
        );
        let op = num(&row[1])? as u8;
        let qp = num(&row[2])?;
        let psn = num(&row[3])? as u32;
        let tag = match tags.get(&qp).copied().flatten() {
            Some(v) => [v.pcp.to_string(), v.vid.to_string()],
            None => [String::new(), String::new()],
        };
        ensure!(
            row.get(8..10) == Some(&tag[..]),
            "{}: frame {i} to QP {qp:#x}: 802.1Q {:?}, want {tag:?}",
            pcap.display(),
            row.get(8..10)
        );
        if op == RC_ACKNOWLEDGE {
            acks += 1;
            continue;
        }
        let (want, in_msg) = next
            .get_mut(&qp)
            .with_context(|| format!("frame {i}: request to QP {qp:#x}"))?;
        ensure!(psn == *want, "frame {i}: QP {qp:#x} PSN {psn}, want {want}");
        let ok = match op {
            RC_RDMA_WRITE_FIRST | RC_RDMA_WRITE_ONLY => !*in_msg,
            RC_RDMA_WRITE_MIDDLE | RC_RDMA_WRITE_LAST => *in_msg,
            _ => false,
        };
        ensure!(ok, "frame {i}: opcode {op:#x} out of message order");
        *in_msg = op == RC_RDMA_WRITE_FIRST || op == RC_RDMA_WRITE_MIDDLE;
        *want = (*want + 1) & 0xFF_FFFF;
        reqs += 1;
    }
    let ok = scapy_check(pcap)?;
    ensure!(ok.trim() == format!("ok {}", rows.len()), "scapy: {ok}");
    Ok((reqs, acks))
}

struct Qp {
    q: QueuePair,
    todo: VecDeque<SendWr>,
    out: VecDeque<SendWr>,
}

impl Qp {
    fn new(q: QueuePair) -> Qp {
        Qp {
            q,
            todo: VecDeque::new(),
            out: VecDeque::new(),
        }
    }
}

/// `per_qp` random WRITEs queued on each QP (pair `k` at `PMTUS[k]`), both ways, wr_ids in
/// one sequence: the number queued.
fn queue_writes(
    r: &mut ChaCha8Rng,
    (qa, qb): (&mut [Qp], &mut [Qp]),
    (dab, dba): (&mut Dir, &mut Dir),
    per_qp: usize,
) -> usize {
    let mut wr_id = 1u64;
    for _ in 0..per_qp {
        for (k, pmtu) in PMTUS.iter().enumerate() {
            let pmtu = *pmtu as usize;
            qa[k].todo.push_back(random_write(r, dab, k, pmtu, wr_id));
            qb[k]
                .todo
                .push_back(random_write(r, dba, k, pmtu, wr_id + 1));
            wr_id += 2;
        }
    }
    2 * per_qp * PMTUS.len()
}

/// Post what fits, poll, check each completion against the oldest outstanding request.
fn pump(h: &mut Host, qps: &mut [Qp], r: &mut ChaCha8Rng) -> Result<usize> {
    for qp in qps.iter_mut() {
        let free = (1usize << qp.q.sq_log_size) - qp.out.len();
        let n = qp.todo.len().min(free).min(r.gen_range(1..=4));
        if n > 0 {
            let list: Vec<SendWr> = qp.todo.drain(..n).collect();
            h.dev.post_send(&mut qp.q, &list)?;
            qp.out.extend(list);
        }
    }
    let wcs = h.dev.poll_cq(&mut h.cq, 64)?;
    for wc in &wcs {
        let qp = qps
            .iter_mut()
            .find(|q| q.q.qpn == wc.qpn)
            .with_context(|| format!("completion for QP {}", wc.qpn))?;
        let wr = qp
            .out
            .pop_front()
            .context("completion with nothing outstanding")?;
        let want = WorkCompletion {
            wr_id: wr.wr_id,
            status: WC_SUCCESS,
            opcode: WC_RDMA_WRITE,
            byte_len: wr.length() as u32,
            qpn: wc.qpn,
            ..Default::default()
        };
        ensure!(*wc == want, "completion {wc:?}, want {want:?}");
    }
    Ok(wcs.len())
}

/// Polls a's CQ into `wcs` until it holds `n` completions, failing after `budget` cycles.
fn a_completions(
    w: &mut World,
    wcs: &mut Vec<WorkCompletion>,
    n: usize,
    budget: u64,
    what: &str,
) -> Result<()> {
    let (a, cq) = (&mut w.a.dev, &mut w.a.cq);
    step_until(&w.b.sim, budget, what, || {
        wcs.extend(a.poll_cq(cq, 16).unwrap_or_default());
        wcs.len() >= n
    })?;
    Ok(())
}

#[test]
fn writes_both_ways_land_byte_exact_and_complete_in_order() -> Result<()> {
    let s = seed("writes_both_ways_land_byte_exact_and_complete_in_order");
    let mut r = rng(s);
    // 9 Gb/s: at 10 Gb/s both ways, 4 KiB packets in both directions at once load the 10g
    // configuration's 64-bit host interface (payload writes, payload reads, CQEs and WQE
    // fetches on one requester stream at the core clock) to ~100%, and without PFC
    // or retransmission a receive buffer that overflows loses a packet for good. Seen with
    // seed 1795394295742246628 at 10 Gb/s: one `rx_overflow` after ~600 of 1040 WRITEs.
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        link: ferroce_sim::LinkConfig {
            rate_bps: 9_000_000_000,
            ..Default::default()
        },
        ..WorldConfig::default()
    })?;
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (pab, pba) = (tmp.join("two_nics_ab.pcap"), tmp.join("two_nics_ba.pcap"));
    w.ab.tap(&pab)?;
    w.ba.tap(&pba)?;
    let (mut qa, mut qb) = (Vec::new(), Vec::new());
    let (mut psn_ab, mut psn_ba) = (HashMap::new(), HashMap::new());
    let (mut tags_ab, mut tags_ba) = (HashMap::new(), HashMap::new());
    for (k, pmtu) in PMTUS.iter().enumerate() {
        // One pair starts just below the PSN wrap each way.
        let (p1, p2) = if k == 1 {
            (0xFF_FFF0, 0xFF_FFFA)
        } else {
            (r.gen_range(0..0x100_0000), r.gen_range(0..0x100_0000))
        };
        // Two pairs send 802.1Q-tagged (their PFC priority; VLAN 0 is a priority tag only).
        let vlan = match k {
            2 => Some(Vlan { pcp: 3, vid: 100 }),
            3 => Some(Vlan { pcp: 5, vid: 0 }),
            _ => None,
        };
        let (a, b) = w.connect_tagged(*pmtu, p1, p2, 32, vlan)?;
        psn_ab.insert(u64::from(b.qpn), p1);
        psn_ba.insert(u64::from(a.qpn), p2);
        tags_ab.insert(u64::from(b.qpn), vlan);
        tags_ba.insert(u64::from(a.qpn), vlan);
        qa.push(Qp::new(a));
        qb.push(Qp::new(b));
    }
    let mut dab = dir(&mut r, &mut w.a, &mut w.b, PMTUS.len())?;
    let mut dba = dir(&mut r, &mut w.b, &mut w.a, PMTUS.len())?;
    let total = queue_writes(&mut r, (&mut qa, &mut qb), (&mut dab, &mut dba), soak(130));
    let bytes: u64 = qa
        .iter()
        .chain(&qb)
        .flat_map(|q| q.todo.iter())
        .map(|wr| wr.length())
        .sum();
    let start = w.cycle();
    let max_cycles: u64 = std::env::var("FERROCE_MAX_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(budget(20_000_000));
    let mut done = 0;
    while done < total {
        done += pump(&mut w.a, &mut qa, &mut r).with_context(|| format!("seed {s}: host a"))?;
        done += pump(&mut w.b, &mut qb, &mut r).with_context(|| format!("seed {s}: host b"))?;
        w.run(2000)?;
        if w.cycle() - start >= max_cycles {
            let mut faults = Vec::new();
            for (n, h) in [("a", &w.a), ("b", &w.b)] {
                for (c, v) in h.faults()? {
                    if v != 0 {
                        faults.push(format!("{n}.{c}={v}"));
                    }
                }
            }
            let left: Vec<(usize, usize)> = qa
                .iter()
                .chain(&qb)
                .map(|q| (q.out.len(), q.todo.len()))
                .collect();
            anyhow::bail!(
                "seed {s}: {done} of {total} completions after {} cycles; counters {faults:?}; outstanding/to post per QP {left:?}",
                w.cycle() - start
            );
        }
    }
    let cycles = w.cycle() - start;
    w.run(5000)?;
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 8)?.is_empty(),
        "extra CQE on a"
    );
    ensure!(
        w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(),
        "extra CQE on b"
    );
    // Memory: every target byte as expected, the guards and the gaps untouched.
    for (d, h) in [(&dab, &mut w.b), (&dba, &mut w.a)] {
        let mut got = vec![0u8; d.expect.len()];
        h.dev.mem.read(d.tgt_buf, &mut got)?;
        if let Some(i) = (0..got.len()).find(|&i| got[i] != d.expect[i]) {
            anyhow::bail!(
                "seed {s}: target byte {i:#x} is {:#04x}, want {:#04x}",
                got[i],
                d.expect[i]
            );
        }
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    for h in [&w.a, &w.b] {
        for (c, v) in h.faults()? {
            ensure!(v == 0, "seed {s}: {c} = {v}");
        }
        ensure!(h.counter("cpl_cqes")? == (total / 2) as u64);
        // Every frame's transmit credits came back: the beats the requester and the
        // responder reserved (`spec::meta::tx_frame_len`) are exactly the frames' beats.
        ensure!(
            h.tx_used()? == [0; 8],
            "seed {s}: credits left {:?}",
            h.tx_used()?
        );
    }
    ensure!(w.ab.pcap_error().is_none() && w.ba.pcap_error().is_none());
    drop(w);
    let (rq_ab, ack_ab) = check_pcap(&pab, &psn_ab, &tags_ab)?;
    let (rq_ba, ack_ba) = check_pcap(&pba, &psn_ba, &tags_ba)?;
    // At most one ACK per message and one per 64 request packets: the requester asks on a
    // message's last packet and on every 64th PSN, and an ACK still waiting to be sent is
    // replaced by a newer one for its QP (ACKs are cumulative; the completions above show
    // every message was covered). b's ACKs travel b -> a (for a's requests, `rq_ab`).
    ensure!(
        (1..=total / 2 + rq_ab / 64 + 1).contains(&ack_ba)
            && (1..=total / 2 + rq_ba / 64 + 1).contains(&ack_ab),
        "ACKs {ack_ab} {ack_ba} for {} messages and {rq_ab} + {rq_ba} packets each way",
        total / 2
    );
    println!(
        "seed {s}: {total} WRITEs, {bytes} bytes, {} + {} packets, {cycles} cycles: {:.2} B/cycle both ways",
        rq_ab,
        rq_ba,
        bytes as f64 / cycles as f64
    );
    Ok(())
}

/// A corrupted frame in the middle of a WRITE is dropped by the MAC (FCS); the responder NAKs
/// the gap once, the requester goes back to the lost PSN, and the WRITE lands whole and
/// completes once, with no timeout.
#[test]
fn a_corrupted_frame_is_dropped_and_the_write_recovers_by_one_sequence_nak() -> Result<()> {
    let s = seed("a_corrupted_frame_is_dropped_and_the_write_recovers_by_one_sequence_nak");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        rq_pause: 0.2,
        ..WorldConfig::default()
    })?;
    let mut qps = Vec::new();
    for _ in 0..4 {
        qps.push(w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?.0);
    }
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 4)?;
    // The fourth frame a sends (a middle packet of QP 0's 8 KiB WRITE) is corrupted.
    let hit = r.gen_range(100..1000);
    w.ab.set_fault_hook(move |i, _| {
        if i == 3 {
            Fault::Corrupt {
                offset: hit,
                mask: 0x10,
            }
        } else {
            Fault::Pass
        }
    })?;
    let wr = |k: usize, len: u32, remote: u64, rkey: u32, id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: len,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA) as u64 + remote,
        rkey,
        signaled: true,
        ..Default::default()
    };
    let rkey = d.tgt.rkey;
    w.a.dev.post_send(&mut qps[0], &[wr(0, 8192, 0, rkey, 1)])?;
    let a_naks = || w.a.counter("cpl_naks");
    w.run_until(200_000, "QP 0's packets and a NAK", || {
        a_naks().map(|n| n == 1).unwrap_or(true)
    })?;
    // The first three packets (3 KiB) landed; the corrupted one was dropped by the MAC, those
    // after it by the responder (PSN sequence error, one NAK); the NAK sends the requester
    // back to the corrupted packet's PSN, and the rest of the WRITE lands once.
    let mut wcs = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 200_000, "the WRITE sent again")?;
    w.run(5000)?;
    wcs.extend(w.a.dev.poll_cq(&mut w.a.cq, 8)?);
    ensure!(
        wcs.len() == 1 && (wcs[0].wr_id, wcs[0].status) == (1, WC_SUCCESS),
        "seed {s}: completions {wcs:?}"
    );
    d.expect[GUARD..GUARD + 8192].copy_from_slice(&d.src_bytes[..8192]);
    ensure!(w.b.counter("rx_fcs_err")? == 1, "FCS errors");
    let seq = w.b.counter("resp_seq_err")?;
    ensure!((1..=4).contains(&seq), "seed {s}: {seq} sequence errors");
    ensure!(w.a.counter("cpl_seq_naks")? == 1, "seed {s}: sequence NAKs");
    let again = w.a.counter("req_retrans")?;
    ensure!(
        (1..=5).contains(&again),
        "seed {s}: {again} packets sent again"
    );
    ensure!(w.a.counter("cpl_timeouts")? == 0, "seed {s}: a timeout");
    check_target(&w.b, &d, s)?;
    Ok(())
}

/// The target buffer of `d` on `h` is exactly the expected image; no DMA went astray.
fn check_target(h: &Host, d: &Dir, s: u64) -> Result<()> {
    let mut got = vec![0u8; d.expect.len()];
    SimMem(h.sim.clone()).read(d.tgt_buf, &mut got)?;
    if let Some(i) = (0..got.len()).find(|&i| got[i] != d.expect[i]) {
        anyhow::bail!(
            "seed {s}: target byte {i:#x} is {:#04x}, want {:#04x}",
            got[i],
            d.expect[i]
        );
    }
    ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    Ok(())
}

#[test]
fn bad_keys_and_bad_ranges_fail_with_remote_access_errors_and_write_nothing() -> Result<()> {
    let s = seed("bad_keys_and_bad_ranges_fail_with_remote_access_errors_and_write_nothing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        rq_pause: 0.2,
        ..WorldConfig::default()
    })?;
    let mut qps = Vec::new();
    for _ in 0..4 {
        qps.push(w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?.0);
    }
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 4)?;
    let wr = |k: usize, len: u32, remote: u64, rkey: u32, id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: len,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA) as u64 + remote,
        rkey,
        signaled: true,
        ..Default::default()
    };
    let rkey = d.tgt.rkey;
    // A stale key (same index, other tag) and a range past the region: NAK remote access
    // error, an error completion, nothing written. Another QP still works.
    w.a.dev
        .post_send(&mut qps[1], &[wr(1, 100, 0, rkey ^ 0x80, 2)])?;
    w.a.dev.post_send(
        &mut qps[2],
        &[wr(2, 2000, (3 * AREA - 1000) as u64, rkey, 3)],
    )?;
    w.a.dev
        .post_send(&mut qps[3], &[wr(3, 5000, 10, rkey, 4)])?;
    let off = GUARD + 3 * AREA + 10;
    d.expect[off..off + 5000].copy_from_slice(&d.src_bytes[..5000]);
    let mut wcs = Vec::new();
    a_completions(&mut w, &mut wcs, 3, 200_000, "three completions")?;
    wcs.sort_by_key(|c| c.wr_id);
    let got: Vec<(u64, u32)> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        got == [
            (2, WC_REM_ACCESS_ERR),
            (3, WC_REM_ACCESS_ERR),
            (4, WC_SUCCESS)
        ],
        "completions {got:?}"
    );
    ensure!(w.b.counter("resp_bad_rkey")? == 2);
    // The NAKed QPs are in the error state now, as the NIC reports them; the other is not.
    let states: Vec<_> = qps[1..]
        .iter()
        .map(|q| w.a.dev.query_qp(q).map(|c| c.state))
        .collect::<Result<_, _>>()?;
    ensure!(
        states == [Some(QpState::Err), Some(QpState::Err), Some(QpState::Rts)],
        "states {states:?}"
    );
    w.run(2000)?;
    check_target(&w.b, &d, s)
}

/// A request whose BTH P_Key does not match the port's one key (the default full member
/// 0xFFFF) is dropped silently and counted, and writes nothing; the same request carrying the
/// limited-member key 0x7FFF matches (IBA 10.9.3: the base values match and one side is a full
/// member) and lands. The frames are a's own WRITE, caught on the wire, its P_Key rewritten and
/// its ICRC recomputed (`spec::icrc`, checked against scapy and Soft-RoCE captures elsewhere).
#[test]
fn a_foreign_p_key_is_dropped_and_counted_and_the_default_key_matches() -> Result<()> {
    let s = seed("a_foreign_p_key_is_dropped_and_counted_and_the_default_key_matches");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut qp, _) = w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?;
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    let caught: Rc<RefCell<Option<Vec<u8>>>> = Rc::default();
    let c = caught.clone();
    w.ab.set_fault_hook(move |i, f| {
        if i == 0 {
            *c.borrow_mut() = Some(f[..f.len() - 4].to_vec());
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let len = r.gen_range(1..=1024usize);
    let wr = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: len as u32,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qp, &[wr])?;
    w.run_until(100_000, "a's WRITE on the wire", || {
        caught.borrow().is_some()
    })?;
    let frame = caught.borrow_mut().take().context("caught")?;
    let with_key = |key: u16| -> Result<Vec<u8>> {
        let mut f = frame.clone();
        f[44..46].copy_from_slice(&key.to_be_bytes());
        let (_, end) = ferroce_spec::icrc::parse(&f)?;
        let ic = ferroce_spec::icrc::icrc(&f)?;
        f[end..end + 4].copy_from_slice(&ic.to_le_bytes());
        Ok(f)
    };
    ensure!(frame[42] == RC_RDMA_WRITE_ONLY, "opcode {:#x}", frame[42]);
    ensure!(
        with_key(0xFFFF)? == frame,
        "the ICRC recomputed differs from the NIC's"
    );
    // Any base but 0x7FFF, full or limited member.
    let bad = r.gen_range(0..0x7FFFu16) | if r.gen_bool(0.5) { 0x8000 } else { 0 };
    w.ab.inject(0, &with_key(bad)?);
    w.run(3000)?;
    ensure!(
        w.b.counter("resp_bad_pkey")? == 1,
        "seed {s}: P_Key {bad:#06x} not counted"
    );
    ensure!(w.a.dev.poll_cq(&mut w.a.cq, 4)?.is_empty(), "a completed");
    check_target(&w.b, &d, s)?;
    w.ab.inject(0, &with_key(0x7FFF)?);
    let mut wcs = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 100_000, "the WRITE's completion")?;
    ensure!(
        (wcs[0].wr_id, wcs[0].status) == (1, WC_SUCCESS),
        "seed {s}: {wcs:?}"
    );
    ensure!(w.b.counter("resp_bad_pkey")? == 1);
    d.expect[GUARD..GUARD + len].copy_from_slice(&d.src_bytes[..len]);
    w.run(2000)?;
    check_target(&w.b, &d, s)
}

/// Requests no conforming requester sends, built here (etherparse, IBA's BTH/RETH layout, the
/// `spec` ICRC) and put on a's wire, to QP pair (a, b) at path MTU 256: a WRITE ONLY longer
/// than the PMTU, a WRITE FIRST whose RETH asks for more than 2^31 bytes, and a LAST longer
/// than the PMTU that carries exactly the rest of its message. Each gets a NAK invalid request
/// with its PSN (IBA 9.7.5.2.2), is counted, and writes nothing: only the good FIRST before
/// the bad LAST lands. And a FIRST asking exactly 2^31 bytes (the most a message may hold)
/// and a MIDDLE are taken and land, while a LAST of one PMTU after them is NAKed: 2^31 - 512
/// bytes were still to come. b's answers are caught on the wire, so a never sees them. Each request
/// goes to a QP pair of its own: the NAK moves b's QP to ERR (IBA 9.9.3), and a good request
/// sent to it afterwards is dropped, unanswered.
#[test]
fn oversize_packets_and_overlong_writes_are_naked_invalid_and_write_nothing() -> Result<()> {
    use ferroce_spec::headers::AETH_NAK_INV_REQ;
    use ferroce_tests::tx::TxPacket;
    let s = seed("oversize_packets_and_overlong_writes_are_naked_invalid_and_write_nothing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let psn = r.gen_range(0..0x100_0000);
    let mut qbs = Vec::new();
    for _ in 0..4 {
        qbs.push(w.connect(256, psn, 7, 16)?.1);
    }
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    // The 2 GiB message's target: a region of 2^31 bytes at b (zero pages until written).
    let huge = w.b.dev.mem.alloc(1 << 31, 4096)?;
    let huge_mr = w.b.dev.reg_mr(
        &w.b.pd,
        huge.addr,
        1 << 31,
        ferroce_driver::access::REMOTE_WRITE,
    )?;
    let answers: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let log = answers.clone();
    w.ba.set_fault_hook(move |_, f| {
        log.borrow_mut().push(f[..f.len() - 4].to_vec());
        Fault::Drop
    })?;
    let packet =
        |k: usize, opcode: u8, psn: u32, reth: Option<u32>, payload: Vec<u8>| -> Result<Vec<u8>> {
            let mut ext = Vec::new();
            if let Some(dlen) = reth {
                let (va, rkey) = if k == 3 {
                    (huge.addr, huge_mr.rkey)
                } else {
                    (d.tgt.addr, d.tgt.rkey)
                };
                ext.extend(va.to_be_bytes());
                ext.extend(rkey.to_be_bytes());
                ext.extend(dlen.to_be_bytes());
            }
            let p = TxPacket {
                dst_mac: w.b.mac,
                src_mac: w.a.mac,
                src_ip: w.a.ip,
                dst_ip: w.b.ip,
                src_port: 0xC001,
                dscp: 0,
                ecn: 0,
                ttl: 64,
                opcode,
                se: false,
                // AckReq on the last packet of a message, as a requester sets it.
                ack_req: opcode != RC_RDMA_WRITE_FIRST,
                pkey: 0xFFFF,
                dest_qp: qbs[k].qpn,
                psn: psn & 0xFF_FFFF,
                vlan: None,
                ext,
                payload,
            };
            Ok(p.frame()?)
        };
    let bytes = |n: usize| d.src_bytes[..n].to_vec();
    let only = r.gen_range(257..=1024usize);
    let rest = r.gen_range(257..=1024usize);
    let sends = [
        vec![packet(
            0,
            RC_RDMA_WRITE_ONLY,
            psn,
            Some(only as u32),
            bytes(only),
        )?],
        vec![packet(
            1,
            RC_RDMA_WRITE_FIRST,
            psn,
            Some((1u32 << 31) + r.gen_range(1..=256)),
            bytes(256),
        )?],
        vec![
            packet(
                2,
                RC_RDMA_WRITE_FIRST,
                psn,
                Some(256 + rest as u32),
                bytes(256),
            )?,
            packet(
                2,
                RC_RDMA_WRITE_LAST,
                psn + 1,
                None,
                d.src_bytes[256..256 + rest].to_vec(),
            )?,
        ],
        vec![
            packet(3, RC_RDMA_WRITE_FIRST, psn, Some(1 << 31), bytes(256))?,
            packet(
                3,
                RC_RDMA_WRITE_MIDDLE,
                psn + 1,
                None,
                d.src_bytes[256..512].to_vec(),
            )?,
            packet(3, RC_RDMA_WRITE_LAST, psn + 2, None, bytes(256))?,
        ],
    ];
    let mut naks = Vec::new();
    for (k, frames) in sends.iter().enumerate() {
        for f in frames {
            w.ab.inject(0, f);
        }
        let log = answers.clone();
        w.run_until(50_000, "b's answer", || !log.borrow().is_empty())?;
        w.run(2000)?;
        let got = std::mem::take(&mut *answers.borrow_mut());
        // One answer, the NAK; the 2 GiB message's MIDDLE may have its own ACK before it.
        ensure!(
            got.len() == 1 || (k == 3 && got.len() == 2),
            "seed {s}: request {k}: {} answers",
            got.len()
        );
        if got.len() == 2 {
            let f = &got[0];
            let p = u32::from_be_bytes([0, f[51], f[52], f[53]]);
            ensure!(
                (f[42], p, f[54] & 0x60) == (RC_ACKNOWLEDGE, (psn + 1) & 0xFF_FFFF, 0),
                "seed {s}: the MIDDLE's answer {:02x?}",
                (f[42], p, f[54])
            );
        }
        let f = &got[got.len() - 1];
        let (op, p, syn) = (f[42], u32::from_be_bytes([0, f[51], f[52], f[53]]), f[54]);
        naks.push((op, p, syn));
    }
    let bad = psn & 0xFF_FFFF;
    let want = [
        (RC_ACKNOWLEDGE, bad, AETH_NAK_INV_REQ),
        (RC_ACKNOWLEDGE, bad, AETH_NAK_INV_REQ),
        (RC_ACKNOWLEDGE, (psn + 1) & 0xFF_FFFF, AETH_NAK_INV_REQ),
        (RC_ACKNOWLEDGE, (psn + 2) & 0xFF_FFFF, AETH_NAK_INV_REQ),
    ];
    ensure!(
        naks == want,
        "seed {s}: answers (opcode, PSN, syndrome) {naks:02x?}, want {want:02x?}"
    );
    ensure!(w.b.counter("resp_bad_req")? == 4, "resp_bad_req");
    // b's first QP is in ERR: a good WRITE ONLY at the next PSN gets no answer.
    ensure!(
        w.b.dev.query_qp(&qbs[0])?.state == Some(QpState::Err),
        "seed {s}: b's QP after its NAK"
    );
    let dropped = w.b.counter("resp_bad_qp")?;
    w.ab.inject(0, &packet(0, RC_RDMA_WRITE_ONLY, psn, Some(16), bytes(16))?);
    w.run(5000)?;
    ensure!(
        answers.borrow().is_empty(),
        "seed {s}: b answered on a QP in ERR"
    );
    ensure!(
        w.b.counter("resp_bad_qp")? == dropped + 1,
        "seed {s}: resp_bad_qp"
    );
    // The good FIRST landed, and the 2 GiB message's FIRST and MIDDLE; nothing else did.
    d.expect[GUARD..GUARD + 256].copy_from_slice(&d.src_bytes[..256]);
    let mut landed = vec![0u8; 1024];
    w.b.dev.mem.read(huge.addr, &mut landed)?;
    ensure!(
        landed[..512] == d.src_bytes[..512] && landed[512..].iter().all(|&b| b == 0),
        "seed {s}: the 2 GiB message's first two packets"
    );
    check_target(&w.b, &d, s)
}

/// WRITEs both ways, then `modify_qp` RTS -> RTS on both QPs (one with a new 802.1Q tag),
/// then more WRITEs: the modify leaves the NIC's running state alone (PSNs, the send queue's
/// consumer index, the MSN), so the later WRITEs go on from where the first stopped (no
/// duplicate, no sequence error, no WQE run twice), and QUERY returns that running state
/// each time, counted here from the requests (packets per WRITE at the PMTU, IBA 9.7.1).
#[test]
fn modify_qp_on_a_live_qp_keeps_its_running_state_and_query_returns_it() -> Result<()> {
    let s = seed("modify_qp_on_a_live_qp_keeps_its_running_state_and_query_returns_it");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    let pmtu = 1024usize;
    let (psn_ab, psn_ba) = (r.gen_range(0..0x100_0000), r.gen_range(0..0x100_0000));
    let (mut qa, mut qb) = w.connect(pmtu as u32, psn_ab, psn_ba, 16)?;
    let mut ab = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    let mut ba = dir(&mut r, &mut w.b, &mut w.a, 1)?;
    let pkts = |wrs: &[SendWr]| -> u32 {
        wrs.iter()
            .map(|x| (x.length() as usize).div_ceil(pmtu).max(1) as u32)
            .sum()
    };
    // (packets, messages) sent a -> b and b -> a so far.
    let (mut n_ab, mut n_ba) = ((0u32, 0u32), (0u32, 0u32));
    let mut id = 0u64;
    for round in 0..2 {
        // Short runs: the sizes that matter are around the PMTU (a longer draw is undone).
        let mut small = |d: &mut Dir| loop {
            let saved = (d.expect.clone(), d.cursor.clone());
            id += 1;
            let x = random_write(&mut r, d, 0, pmtu, id);
            if x.length() <= 6000 {
                break x;
            }
            (d.expect, d.cursor) = saved;
        };
        let list_ab: Vec<SendWr> = (0..6).map(|_| small(&mut ab)).collect();
        let list_ba: Vec<SendWr> = (0..4).map(|_| small(&mut ba)).collect();
        w.a.dev.post_send(&mut qa, &list_ab)?;
        w.b.dev.post_send(&mut qb, &list_ba)?;
        let (mut wa, mut wb) = (Vec::new(), Vec::new());
        {
            let (a, acq, b, bcq) = (&mut w.a.dev, &mut w.a.cq, &mut w.b.dev, &mut w.b.cq);
            step_until(&w.b.sim, 400_000, "the WRITEs' completions", || {
                wa.extend(a.poll_cq(acq, 16).unwrap_or_default());
                wb.extend(b.poll_cq(bcq, 16).unwrap_or_default());
                wa.len() >= list_ab.len() && wb.len() >= list_ba.len()
            })?;
        }
        for (got, list) in [(&wa, &list_ab), (&wb, &list_ba)] {
            let ids: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
            let want: Vec<(u64, u32)> = list.iter().map(|x| (x.wr_id, WC_SUCCESS)).collect();
            ensure!(ids == want, "seed {s} round {round}: completions {ids:?}");
        }
        n_ab = (n_ab.0 + pkts(&list_ab), n_ab.1 + list_ab.len() as u32);
        n_ba = (n_ba.0 + pkts(&list_ba), n_ba.1 + list_ba.len() as u32);
        w.run(2000)?;
        // QUERY: the running state, on both sides of both directions.
        let (ca, cb) = (w.a.dev.query_qp(&qa)?, w.b.dev.query_qp(&qb)?);
        let m = 0xFF_FFFF;
        let want_a = (
            (psn_ab + n_ab.0) & m,
            (psn_ab + n_ab.0) & m,
            n_ab.1 as u16,
            (psn_ba + n_ba.0) & m,
            n_ba.1,
        );
        let got_a = (ca.sq_psn, ca.una_psn, ca.sq_ci, ca.epsn, ca.msn);
        ensure!(
            got_a == want_a,
            "seed {s} round {round}: a's (sq_psn, una, sq_ci, epsn, msn) {got_a:?}, want {want_a:?}"
        );
        let want_b = (
            (psn_ba + n_ba.0) & m,
            (psn_ba + n_ba.0) & m,
            n_ba.1 as u16,
            (psn_ab + n_ab.0) & m,
            n_ab.1,
        );
        let got_b = (cb.sq_psn, cb.una_psn, cb.sq_ci, cb.epsn, cb.msn);
        ensure!(
            got_b == want_b,
            "seed {s} round {round}: b's (sq_psn, una, sq_ci, epsn, msn) {got_b:?}, want {want_b:?}"
        );
        if round == 0 {
            let tag = Vlan { pcp: 2, vid: 100 };
            let attr = ferroce_driver::QpAttr {
                vlan: Some(tag),
                ..Default::default()
            };
            w.a.dev
                .modify_qp(&mut qa, ferroce_driver::QpState::Rts, attr)?;
            w.b.dev
                .modify_qp(&mut qb, ferroce_driver::QpState::Rts, Default::default())?;
            ensure!(w.a.dev.query_qp(&qa)?.vlan == Some(tag), "the new tag");
            // The PSNs are not the host's to change on a live QP.
            let psn = ferroce_driver::QpAttr {
                sq_psn: Some(0),
                ..Default::default()
            };
            ensure!(
                w.a.dev
                    .modify_qp(&mut qa, ferroce_driver::QpState::Rts, psn)
                    .is_err(),
                "sq_psn on RTS -> RTS"
            );
        }
    }
    for h in [&w.a, &w.b] {
        ensure!(h.counter("resp_dup")? == 0 && h.counter("resp_seq_err")? == 0);
    }
    check_target(&w.b, &ab, s)?;
    check_target(&w.a, &ba, s)
}

/// A fatal NAK fails QP 0: the WRITEs posted to it afterwards complete with WR_FLUSH_ERR and
/// put no frame on the wire. QP 1's WRITEs are all dropped on the wire, so it has work
/// outstanding that no ACK will ever retire, sent before QP 2's WRITE: QP 2's completes all
/// the same (the completer tracks each QP's outstanding work on its own). The host moves QP 1
/// to ERR: its outstanding and later WRITEs complete WR_FLUSH_ERR.
#[test]
fn a_qp_in_error_flushes_its_work_sends_nothing_and_holds_no_other_qp() -> Result<()> {
    let s = seed("a_qp_in_error_flushes_its_work_sends_nothing_and_holds_no_other_qp");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let mut qps = Vec::new();
    for _ in 0..3 {
        qps.push(w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?.0);
    }
    let d = dir(&mut r, &mut w.a, &mut w.b, 3)?;
    let (q0, q1) = (qps[0].qpn, qps[1].qpn);
    // Frames a sends, by destination QP at b; QP 1's are dropped.
    let sent: Rc<RefCell<HashMap<u32, usize>>> = Rc::default();
    let log = sent.clone();
    let peer1: Rc<RefCell<u32>> = Rc::default();
    let p1 = peer1.clone();
    w.ab.set_fault_hook(move |_, f| {
        let dq = u32::from_be_bytes([0, f[47], f[48], f[49]]);
        *log.borrow_mut().entry(dq).or_default() += 1;
        if dq == *p1.borrow() {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    *peer1.borrow_mut() = w.a.dev.query_qp(&qps[1])?.remote_qpn;
    let peer0 = w.a.dev.query_qp(&qps[0])?.remote_qpn;
    let wr = |k: usize, rkey: u32, id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: 3000,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA) as u64,
        rkey,
        signaled: true,
        ..Default::default()
    };
    let rkey = d.tgt.rkey;
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    let wait = |w: &mut World, wcs: &mut Vec<WorkCompletion>, n: usize, what: &str| {
        a_completions(w, wcs, n, 200_000, what)
    };
    // QP 0: a bad key, a fatal NAK.
    w.a.dev.post_send(&mut qps[0], &[wr(0, rkey ^ 0x80, 1)])?;
    wait(&mut w, &mut wcs, 1, "the NAKed WRITE")?;
    w.run(500)?;
    let before = sent.borrow().get(&peer0).copied().unwrap_or(0);
    w.a.dev
        .post_send(&mut qps[0], &[wr(0, rkey, 2), wr(0, rkey, 3)])?;
    wait(&mut w, &mut wcs, 3, "QP 0's flushed WRITEs")?;
    // QP 1: two WRITEs lost on the wire, then QP 2's.
    w.a.dev
        .post_send(&mut qps[1], &[wr(1, rkey, 10), wr(1, rkey, 11)])?;
    w.run(3000)?;
    w.a.dev.post_send(&mut qps[2], &[wr(2, rkey, 20)])?;
    wait(&mut w, &mut wcs, 4, "QP 2's WRITE, behind QP 1's lost ones")?;
    w.run(5_000)?;
    wcs.extend(w.a.dev.poll_cq(&mut w.a.cq, 16)?);
    ensure!(
        wcs.len() == 4,
        "seed {s}: QP 1's lost WRITEs completed: {wcs:?}"
    );
    w.a.dev
        .modify_qp(&mut qps[1], QpState::Err, Default::default())?;
    w.a.dev.post_send(&mut qps[1], &[wr(1, rkey, 12)])?;
    wait(&mut w, &mut wcs, 7, "QP 1's flushed WRITEs and QP 2's")?;
    let got: Vec<(u64, u32, u32)> = wcs.iter().map(|c| (c.wr_id, c.status, c.qpn)).collect();
    let q2 = qps[2].qpn;
    let want = vec![
        (1, WC_REM_ACCESS_ERR, q0),
        (2, WC_WR_FLUSH_ERR, q0),
        (3, WC_WR_FLUSH_ERR, q0),
        (20, WC_SUCCESS, q2),
        (10, WC_WR_FLUSH_ERR, q1),
        (11, WC_WR_FLUSH_ERR, q1),
        (12, WC_WR_FLUSH_ERR, q1),
    ];
    ensure!(got == want, "seed {s}: completions {got:?}");
    ensure!(
        sent.borrow().get(&peer0).copied().unwrap_or(0) == before,
        "seed {s}: QP 0 sent after its fatal NAK"
    );
    ensure!(w.a.dev.query_qp(&qps[0])?.state == Some(QpState::Err));
    Ok(())
}

/// QP 1's WRITEs are all dropped on the wire, so it has work outstanding sent before QP 2's
/// WRITE, which completes all the same; the host moves QP 1 to RESET: QP 1's lost ones leave
/// no completion (IBA: RESET discards the QP's work; the NIC drops them by epoch). QP 1, brought
/// back up with the PSN its peer still expects, sends again, and only its new WRITE completes.
#[test]
fn a_qp_reset_with_work_outstanding_leaves_no_completion_and_holds_no_other_qp() -> Result<()> {
    let s = seed("a_qp_reset_with_work_outstanding_leaves_no_completion_and_holds_no_other_qp");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let psn1 = r.gen_range(0..0x100_0000);
    let mut q1 = w.connect(1024, psn1, 7, 16)?.0;
    let mut q2 = w.connect(1024, r.gen_range(0..0x100_0000), 7, 16)?.0;
    let d = dir(&mut r, &mut w.a, &mut w.b, 2)?;
    let drop_to: Rc<RefCell<u32>> = Rc::default();
    let dt = drop_to.clone();
    w.ab.set_fault_hook(move |_, f| {
        let dq = u32::from_be_bytes([0, f[47], f[48], f[49]]);
        if dq == *dt.borrow() {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let peer1 = w.a.dev.query_qp(&q1)?.remote_qpn;
    *drop_to.borrow_mut() = peer1;
    let wr = |k: usize, id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: 3000,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr + (k * AREA) as u64,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut q1, &[wr(0, 10), wr(0, 11)])?;
    w.run(3000)?;
    w.a.dev.post_send(&mut q2, &[wr(1, 20)])?;
    let mut wcs = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 200_000, "QP 2's completion")?;
    let epoch = q1.epoch;
    w.a.dev
        .modify_qp(&mut q1, QpState::Reset, Default::default())?;
    ensure!(
        q1.epoch == epoch.wrapping_add(1),
        "a move to RESET starts an epoch"
    );
    w.run(5000)?;
    wcs.extend(w.a.dev.poll_cq(&mut w.a.cq, 16)?);
    let got: Vec<(u64, u32, u32)> = wcs.iter().map(|c| (c.wr_id, c.status, c.qpn)).collect();
    ensure!(
        got == [(20, WC_SUCCESS, q2.qpn)],
        "seed {s}: QP 2's WRITE beside QP 1's lost ones, then QP 1's RESET: {got:?}"
    );
    // Up again, the peer's expected PSN unchanged (nothing of QP 1 reached it).
    *drop_to.borrow_mut() = u32::MAX;
    let (mac_b, ip_b) = (w.b.mac, w.b.ip);
    w.a.dev
        .modify_qp(&mut q1, QpState::Init, Default::default())?;
    w.a.dev.modify_qp(
        &mut q1,
        QpState::Rtr,
        ferroce_driver::QpAttr {
            path_mtu: Some(1024),
            dest_qpn: Some(peer1),
            rq_psn: Some(7),
            remote_mac: Some(mac_b),
            remote_ipv4: Some(ip_b),
            ..Default::default()
        },
    )?;
    w.a.dev.modify_qp(
        &mut q1,
        QpState::Rts,
        ferroce_driver::QpAttr {
            sq_psn: Some(psn1),
            ..Default::default()
        },
    )?;
    w.a.dev.post_send(&mut q1, &[wr(0, 12)])?;
    wcs.clear();
    a_completions(&mut w, &mut wcs, 1, 200_000, "QP 1's new WRITE")?;
    w.run(5000)?;
    wcs.extend(w.a.dev.poll_cq(&mut w.a.cq, 16)?);
    let got: Vec<(u64, u32, u32)> = wcs.iter().map(|c| (c.wr_id, c.status, c.qpn)).collect();
    ensure!(
        got == [(12, WC_SUCCESS, q1.qpn)],
        "seed {s}: QP 1 after coming back: {got:?}"
    );
    let mut tgt = vec![0u8; 3000];
    w.b.dev.mem.read(d.tgt.addr, &mut tgt)?;
    ensure!(
        tgt == d.src_bytes[..3000],
        "seed {s}: QP 1's new WRITE landed wrong"
    );
    Ok(())
}

/// A 2 GiB RDMA WRITE at path MTU 256 is 2^23 packets, half the PSN space: the most one
/// message may span. Simulating all of them takes hours, so a's QP is set (a context write
/// with `init_sq`, as after a yield, and `una` at that point) to resume the message `K`
/// packets before its end, with the message's first PSN chosen so its last packets cross the
/// 24-bit PSN wrap. a's
/// requester sends those `K` packets (MIDDLE, then LAST) from the 2 GiB region's last bytes;
/// they are caught on the wire (b, which never saw the FIRST, would NAK them), and b's
/// answer is played by hand: an ACK one PSN short of the last leaves the request outstanding
/// (its 2^23 PSNs are not all acknowledged), the ACK of the last completes it with its byte
/// count, 2^31.
#[test]
fn a_2_gib_write_at_pmtu_256_resumed_near_its_end_completes_on_its_last_ack() -> Result<()> {
    const K: u32 = 200;
    const PKTS: u32 = 1 << 23;
    const LEN: u64 = 1 << 31;
    let s = seed("a_2_gib_write_at_pmtu_256_resumed_near_its_end_completes_on_its_last_ack");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    // The message's first PSN: its resume point below the wrap, its last packet past it.
    let first = (1 << 24) - PKTS + r.gen_range(1..K - 1);
    let (mut qp, _) = w.connect(256, first - 1, 7, 16)?;
    let d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    // One ordinary WRITE first: its ACK, caught on b's wire, is the template of the answers.
    let acks: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let log = acks.clone();
    w.ba.set_fault_hook(move |_, f| {
        log.borrow_mut().push(f[..f.len() - 4].to_vec());
        Fault::Pass
    })?;
    let small = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr,
            length: 64,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qp, &[small])?;
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 100_000, "the small WRITE")?;
    ensure!((wcs[0].wr_id, wcs[0].status) == (1, WC_SUCCESS), "{wcs:?}");
    let ack = acks.borrow().last().cloned().context("b's ACK")?;
    ensure!(
        ack[42] == RC_ACKNOWLEDGE,
        "b's answer, opcode {:#x}",
        ack[42]
    );
    // The 2 GiB region: untouched zero pages but for the tail the requester will send.
    let buf = w.a.dev.mem.alloc(LEN as usize, 4096)?;
    let tail_off = LEN - u64::from(K) * 256;
    let mut tail = vec![0u8; (K * 256) as usize];
    r.fill(&mut tail[..]);
    w.a.dev.mem.write(buf.addr + tail_off, &tail)?;
    let mr =
        w.a.dev
            .reg_mr(&w.a.pd, buf.addr, LEN, ferroce_driver::access::LOCAL_WRITE)?;
    // Resume the QP's next WQE `K` packets before its end.
    let mut img = w.a.dev.read_context(TABLE_QP, qp.qpn, QP_CTX.len)?;
    let put = |img: &mut Vec<u8>, name: &str, v: u128| QP_CTX.set(&QP_CTX.field(name), img, v);
    put(&mut img, "init_sq", 1);
    put(&mut img, "sq_psn", ((first + PKTS - K) & 0xFF_FFFF).into());
    put(&mut img, "sq_pkts", (PKTS - K).into());
    // (Everything before the resume point acknowledged: the requester's window, 1024 PSNs
    // past `una`, would hold a QP with 2^23 PSNs unacknowledged.)
    put(&mut img, "una_psn", ((first + PKTS - K) & 0xFF_FFFF).into());
    w.a.dev.write_context(TABLE_QP, qp.qpn, &img)?;
    // a's packets caught, none delivered.
    let caught: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let c = caught.clone();
    w.ab.set_fault_hook(move |_, f| {
        c.borrow_mut().push(f[..f.len() - 4].to_vec());
        Fault::Drop
    })?;
    let big = SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: buf.addr,
            length: LEN as u32,
            lkey: mr.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qp, &[big])?;
    w.run_until(budget(2_000_000), "the message's last packets", || {
        caught.borrow().len() >= K as usize
    })?;
    w.run(2000)?;
    let frames = caught.borrow().clone();
    ensure!(frames.len() == K as usize, "{} packets sent", frames.len());
    let last = (first + PKTS - 1) & 0xFF_FFFF;
    for (i, f) in frames.iter().enumerate() {
        let psn = (first + PKTS - K + i as u32) & 0xFF_FFFF;
        let op = if i + 1 == K as usize {
            RC_RDMA_WRITE_LAST
        } else {
            RC_RDMA_WRITE_MIDDLE
        };
        let got_psn = u32::from_be_bytes([0, f[51], f[52], f[53]]);
        ensure!(
            (f[42], got_psn) == (op, psn),
            "seed {s}: packet {i}: opcode {:#x} PSN {got_psn:#x}, want {op:#x} {psn:#x}",
            f[42]
        );
        // BTH, 256 bytes of payload, ICRC: the region's bytes at the packet's offset.
        let (_, end) = ferroce_spec::icrc::parse(f)?;
        ensure!(
            end == 54 + 256,
            "seed {s}: packet {i}: payload ends at {end}"
        );
        ensure!(
            f[54..end] == tail[i * 256..(i + 1) * 256],
            "seed {s}: packet {i}: payload"
        );
        let ic = ferroce_spec::icrc::icrc(f)?;
        ensure!(
            f[end..end + 4] == ic.to_le_bytes(),
            "seed {s}: packet {i}: ICRC"
        );
    }
    // b's answers, by hand: an ACK (syndrome ACK, MSN 2) for a PSN, its ICRC recomputed.
    let answer = |psn: u32| -> Result<Vec<u8>> {
        let mut f = ack.clone();
        f[51..54].copy_from_slice(&psn.to_be_bytes()[1..]);
        f[55..58].copy_from_slice(&2u32.to_be_bytes()[1..]);
        let (_, end) = ferroce_spec::icrc::parse(&f)?;
        let ic = ferroce_spec::icrc::icrc(&f)?;
        f[end..end + 4].copy_from_slice(&ic.to_le_bytes());
        Ok(f)
    };
    w.ba.inject(0, &answer((last + 0xFF_FFFF) & 0xFF_FFFF)?);
    w.run(5000)?;
    wcs = w.a.dev.poll_cq(&mut w.a.cq, 4)?;
    ensure!(
        wcs.is_empty(),
        "seed {s}: completed on the ACK one PSN short: {wcs:?}"
    );
    w.ba.inject(0, &answer(last)?);
    a_completions(&mut w, &mut wcs, 1, 100_000, "the 2 GiB WRITE's completion")?;
    let c = &wcs[0];
    ensure!(
        (c.wr_id, c.status, c.opcode, u64::from(c.byte_len)) == (2, WC_SUCCESS, WC_RDMA_WRITE, LEN),
        "seed {s}: {c:?}"
    );
    let q = w.a.dev.query_qp(&qp)?;
    ensure!(
        (q.sq_psn, q.una_psn) == ((last + 1) & 0xFF_FFFF, (last + 1) & 0xFF_FFFF),
        "seed {s}: after the message: {q:?}"
    );
    println!(
        "2 GiB WRITE at PMTU 256: PSNs {first:#08x}..={last:#08x}, the last {K} packets sent \
         and checked, completed with byte_len {}",
        c.byte_len
    );
    Ok(())
}

/// The same WRITEs both ways over links that lose, corrupt, duplicate and reorder frames
/// (both directions, from the seed): go-back-N retransmission on timeouts and sequence NAKs
/// delivers every WRITE exactly once, byte-exact, and completes each once, in order; the
/// retries show in the counters.
#[test]
fn writes_both_ways_survive_loss_corruption_duplication_and_reordering() -> Result<()> {
    let s = seed("writes_both_ways_survive_loss_corruption_duplication_and_reordering");
    let mut r = rng(s);
    let mut w = ferroce_tests::lossy_world(s, 0.02)?;
    let (mut qa, mut qb) = (Vec::new(), Vec::new());
    for pmtu in PMTUS {
        let (a, b) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
        qa.push(Qp::new(a));
        qb.push(Qp::new(b));
    }
    let mut dab = dir(&mut r, &mut w.a, &mut w.b, PMTUS.len())?;
    let mut dba = dir(&mut r, &mut w.b, &mut w.a, PMTUS.len())?;
    let total = queue_writes(&mut r, (&mut qa, &mut qb), (&mut dab, &mut dba), soak(16));
    let start = w.cycle();
    let max_cycles = budget(30_000_000);
    let mut done = 0;
    while done < total {
        done += pump(&mut w.a, &mut qa, &mut r).with_context(|| format!("seed {s}: host a"))?;
        done += pump(&mut w.b, &mut qb, &mut r).with_context(|| format!("seed {s}: host b"))?;
        w.run(2000)?;
        if w.cycle() - start >= max_cycles {
            let left: Vec<(usize, usize)> = qa
                .iter()
                .chain(&qb)
                .map(|q| (q.out.len(), q.todo.len()))
                .collect();
            anyhow::bail!(
                "seed {s}: {done} of {total} completions after {} cycles; a: {}; b: {}; outstanding/to post per QP {left:?}",
                w.cycle() - start,
                ferroce_tests::nonzero_counters(&w.a),
                ferroce_tests::nonzero_counters(&w.b),
            );
        }
    }
    let cycles = w.cycle() - start;
    w.run(5000)?;
    for h in [&mut w.a, &mut w.b] {
        ensure!(
            h.dev.poll_cq(&mut h.cq, 8)?.is_empty(),
            "seed {s}: a completion too many"
        );
    }
    check_target(&w.b, &dab, s)?;
    check_target(&w.a, &dba, s)?;
    let (sab, sba) = (w.ab.stats(), w.ba.stats());
    let count = |n: &str| -> Result<u64> { Ok(w.a.counter(n)? + w.b.counter(n)?) };
    let (retrans, timeouts, seq) = (
        count("req_retrans")?,
        count("cpl_timeouts")?,
        count("cpl_seq_naks")?,
    );
    println!(
        "seed {s}: {total} WRITEs in {cycles} cycles; links a->b {sab:?}, b->a {sba:?}; \
         {retrans} packets sent again, {timeouts} timeouts, {seq} sequence NAKs"
    );
    ensure!(
        retrans > 0 && seq > 0,
        "seed {s}: no retry seen ({retrans} retransmitted, {seq} sequence NAKs)"
    );
    for h in [&w.a, &w.b] {
        ensure!(h.counter("cpl_retry_exc")? == 0, "seed {s}: a QP gave up");
        ensure!(h.counter("cpl_cqes")? == (total / 2) as u64);
        ensure!(h.sim.borrow().rc.borrow().violations.is_empty());
    }
    // The drivers read the same through BAR0's RC_STATS block; the NAKs one side decided
    // and the other received agree, but for those the link lost (or a newer ACK replaced).
    let st = [w.a.dev.rc_stats()?, w.b.dev.rc_stats()?];
    for (h, st) in [&w.a, &w.b].into_iter().zip(&st) {
        let want = [
            h.counter("req_retrans")?,
            h.counter("cpl_timeouts")?,
            h.counter("cpl_seq_naks")?,
            h.counter("cpl_rnr_naks")?,
            h.counter("resp_rnr")?,
            h.counter("resp_dup")?,
            h.counter("cpl_retry_exc")?,
            h.counter("cpl_ghosts")?,
            h.counter("fail_local")?,
            h.counter("req_pool_waits")?,
            h.counter("req_rsp_refused")?,
            h.counter("resp_jobs_full")?,
            h.counter("resp_bad_rkey")?,
        ];
        let got = [
            st.retrans,
            st.timeouts,
            st.seq_nak_rx,
            st.rnr_nak_rx,
            st.rnr_nak_tx,
            st.dup_rx,
            st.retry_exc,
            st.ghost_rx,
            st.local_fail,
            st.pool_wait,
            st.rsp_refused,
            st.jobs_full,
            st.key_refused,
        ]
        .map(u64::from);
        ensure!(
            got == want,
            "seed {s}: RC_STATS {st:?}, the NIC's ports {want:?}"
        );
        ensure!(
            u64::from(st.seq_nak_tx) <= h.counter("resp_seq_err")?,
            "seed {s}: more gaps NAKed than packets past a gap"
        );
    }
    // (A NAK the link duplicated is received twice.)
    for (tx, rx, link) in [(&st[1], &st[0], &sba), (&st[0], &st[1], &sab)] {
        ensure!(
            u64::from(rx.seq_nak_rx) <= u64::from(tx.seq_nak_tx) + link.duplicated
                && tx.seq_nak_tx > 0,
            "seed {s}: {} sequence NAKs decided, {} received",
            tx.seq_nak_tx,
            rx.seq_nak_rx
        );
    }
    println!("seed {s}: RC_STATS a {:?}; b {:?}", st[0], st[1]);
    Ok(())
}

/// A long WRITE (`MAX_UNACKED_PSNS` + 500 packets at PMTU 256) whose packets from the 150th
/// on are lost until the first retry, so b never hears of them and never NAKs. b's ACKs of the
/// packets a asked for (AckReq on every PSN that is 63 mod 64) move a's `una` to the last
/// such PSN before the loss, plus one. a sends on until `MAX_UNACKED_PSNS` PSNs past `una` are
/// out and stops there (its window); its ACK timer then goes back to `una`, inside the
/// message, not to its start: every packet from `una` on is sent a second time (a MIDDLE at
/// its own PSN; `req_retrans` counts exactly the window), the ones before it once; b ACKs
/// those it had again without writing them (`resp_dup`), sees no gap (no sequence NAK), and
/// the WRITE lands byte-exact and completes once.
#[test]
fn a_timeout_inside_a_long_write_goes_back_to_its_last_ack_and_the_window_stops_it() -> Result<()> {
    use ferroce_spec::headers::{ACKREQ_PSN_MASK, MAX_UNACKED_PSNS};
    use std::collections::HashSet;
    const LOSE: u32 = 150;
    let s = seed("a_timeout_inside_a_long_write_goes_back_to_its_last_ack_and_the_window_stops_it");
    let mut r = rng(s);
    // Memory requests held back at random on both sides (PFC on: no loss but the test's).
    let mut w = ferroce_tests::lossless_world(s)?;
    // 524 us: longer than the window takes to send (~0.3 ms at 10G).
    w.retry.timeout = Some(7);
    let psn0: u32 = r.gen_range(0..1 << 24);
    let (mut qa, _qb) = w.connect(256, psn0, r.gen_range(0..1 << 24), 16)?;
    let mut d = dir(&mut r, &mut w.a, &mut w.b, 1)?;
    let n = MAX_UNACKED_PSNS + 500;
    let len = n as usize * 256 - r.gen_range(0..200);
    let src_off = r.gen_range(0..=SRC_LEN - len);
    d.expect[GUARD..GUARD + len].copy_from_slice(&d.src_bytes[src_off..src_off + len]);
    // a's packets as they pass: (offset from the first PSN, opcode); from offset LOSE on, all
    // lost until one is sent a second time.
    let sent: Rc<RefCell<Vec<(u32, u8)>>> = Rc::default();
    let log = sent.clone();
    let (mut seen, mut retrying) = (HashSet::new(), false);
    w.ab.set_fault_hook(move |_, f| {
        let off = u32::from_be_bytes([0, f[51], f[52], f[53]]).wrapping_sub(psn0) & 0xFF_FFFF;
        log.borrow_mut().push((off, f[42]));
        retrying |= !seen.insert(off);
        if !retrying && off >= LOSE {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let wr = SendWr {
        wr_id: 7,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: d.src.addr + src_off as u64,
            length: len as u32,
            lkey: d.src.lkey,
        }],
        remote_addr: d.tgt.addr,
        rkey: d.tgt.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[wr])?;
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    a_completions(&mut w, &mut wcs, 1, 3_000_000, "the long WRITE")?;
    ensure!(
        (wcs[0].wr_id, wcs[0].status, wcs[0].byte_len as usize) == (7, WC_SUCCESS, len),
        "seed {s}: {:?}",
        wcs[0]
    );
    w.run(2000)?;
    check_target(&w.b, &d, s)?;
    // `una` when the packets stopped coming: one past the last AckReq PSN before the loss.
    let every = ACKREQ_PSN_MASK + 1;
    let una = ((psn0 + LOSE) & 0xFF_FFFF) / every * every;
    let u = una.wrapping_sub(psn0) & 0xFF_FFFF;
    let log = sent.borrow().clone();
    // The first pass sends offsets 0, 1, 2, ... in order; the retry starts where that ends.
    let again = log
        .iter()
        .enumerate()
        .position(|(i, x)| x.0 != i as u32)
        .context("no packet sent twice")?;
    let top = again as u32 - 1;
    ensure!(
        top == u + MAX_UNACKED_PSNS - 1,
        "seed {s}: sent to offset {top} before the timeout, want {} (una at offset {u}, window \
         {MAX_UNACKED_PSNS})",
        u + MAX_UNACKED_PSNS - 1
    );
    ensure!(
        log[again] == (u, RC_RDMA_WRITE_MIDDLE),
        "seed {s}: the retry starts with {:?}, want offset {u} (MIDDLE)",
        log[again]
    );
    let rest: Vec<u32> = log[again..].iter().map(|x| x.0).collect();
    let jumps: Vec<(u32, u32)> = rest
        .windows(2)
        .filter(|p| p[1] != p[0] + 1)
        .map(|p| (p[0], p[1]))
        .collect();
    ensure!(
        rest == (u..n).collect::<Vec<u32>>(),
        "seed {s}: the retry sends offsets {}..{} ({} packets, jumps {jumps:?}), want {u}..{n}; \
         counters: {}",
        rest.first().copied().unwrap_or(0),
        rest.last().copied().unwrap_or(0),
        rest.len(),
        ferroce_tests::nonzero_counters(&w.a)
    );
    let counts = [
        ("req_win_stops", w.a.counter("req_win_stops")?),
        ("req_retrans", w.a.counter("req_retrans")?),
        ("cpl_timeouts", w.a.counter("cpl_timeouts")?),
        ("cpl_seq_naks", w.a.counter("cpl_seq_naks")?),
        ("resp_dup", w.b.counter("resp_dup")?),
        ("resp_seq_err", w.b.counter("resp_seq_err")?),
    ];
    ensure!(
        counts[0].1 >= 1
            && counts[1].1 == u64::from(MAX_UNACKED_PSNS)
            && counts[2].1 == 1
            && counts[3].1 == 0
            && counts[4].1 == u64::from(LOSE - u)
            && counts[5].1 == 0,
        "seed {s}: counters {counts:?} (una at offset {u})"
    );
    println!(
        "seed {s}: {n} packets, lost from {LOSE}: stopped at offset {top} (una {u} + window \
         {MAX_UNACKED_PSNS} - 1), timed out once, went on from offset {u}; {counts:?}"
    );
    Ok(())
}
