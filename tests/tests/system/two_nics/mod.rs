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

mod long_writes;
mod qp_state;
mod refusals;
mod writes;

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
