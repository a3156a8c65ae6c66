//! The READ job pool: a READ or atomic a NIC accepts is a job for its requester, held in a
//! pool every QP has a share of, so the receive path never waits for a job.
//! - A peer that ignores `max_dest_rd_atomic` holds only its QP's share: its READs past it are
//!   dropped (`resp_jobs_full`), and the packets of other QPs behind them go on at once.
//! - Stale jobs (a peer asked again from an earlier PSN) send one packet each, those still
//!   in the pool too.
//! - READs in both directions between two NICs, under PFC, with hosts that take memory writes
//!   slowly: neither NIC's receive path waits on its own transmit (through the jobs it hands
//!   the requester), which would let the two pause each other for ever.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::opcodes::RC_RDMA_READ_REQUEST;
use ferroce_spec::queues::{MAX_RD_ATOMIC, WC_SUCCESS};
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{budget, nonzero_counters, rng, seed};
use rand::Rng;

/// A QP's share of the job pool (`responder::JOB_SHARE`).
const SHARE: usize = 31;

/// Forty READ requests of 64 KiB, forged as from host a, arrive back to back at one of b's
/// QPs: more than the `MAX_RD_ATOMIC` a requester may keep outstanding. The first 31 (the QP's share)
/// become jobs, the next is dropped undone (`resp_jobs_full`, and RC_STATS' `jobs_full`),
/// the rest are past the expected PSN (a sequence error). A WRITE from a on another QP
/// pair, right behind them, completes within 100 us, while b's responses to the 31 go on
/// for 1.6 ms. (When the responder waited for room in a 20-job queue instead, the WRITE
/// waited behind the forged requests for a job each: over a millisecond.)
#[test]
fn a_peer_past_its_read_limit_holds_only_its_qps_share_of_jobs() -> Result<()> {
    let s = seed("a_peer_past_its_read_limit_holds_only_its_qps_share_of_jobs");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    const LEN: usize = 64 << 10;
    const N: usize = 40;
    let pmtu = [1024u32, 2048, 4096][r.gen_range(0..3)];
    let psn = r.gen_range(0..1u32 << 24);
    let (_qa, qb) = w.connect(pmtu, psn, r.gen_range(0..1 << 24), 16)?;
    let (mut ha, _hb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let bytes: Vec<u8> = (0..LEN).map(|_| r.gen()).collect();
    let src = w.b.buffer(LEN, &bytes)?;
    let dst = w.b.buffer(4096, &[0u8; 4096])?;
    let wsrc = w.a.buffer(4096, &bytes[..4096])?;
    let per = LEN as u32 / pmtu;
    for k in 0..N as u32 {
        let mut ext = Vec::new();
        ext.extend(src.addr.to_be_bytes());
        ext.extend(src.rkey.to_be_bytes());
        ext.extend((LEN as u32).to_be_bytes());
        let p = TxPacket {
            dst_mac: w.b.mac,
            src_mac: w.a.mac,
            src_ip: w.a.ip,
            dst_ip: w.b.ip,
            src_port: 0xC001,
            dscp: 0,
            ecn: 0,
            ttl: 64,
            opcode: RC_RDMA_READ_REQUEST,
            se: false,
            ack_req: true,
            pkey: 0xFFFF,
            dest_qp: qb.qpn,
            psn: psn.wrapping_add(k * per) & 0xFF_FFFF,
            vlan: None,
            ext,
            payload: Vec::new(),
        };
        w.ab.inject(0, &p.frame()?);
    }
    // The forty are on the wire (about 4 KB: 3 us); the WRITE goes behind them.
    w.run(1_000)?;
    let len = r.gen_range(1..=4096u32);
    w.a.dev.post_send(
        &mut ha,
        &[SendWr {
            wr_id: 7,
            opcode: WrOpcode::RdmaWrite,
            sg_list: vec![Sge {
                addr: wsrc.addr,
                length: len,
                lkey: wsrc.lkey,
            }],
            remote_addr: dst.addr,
            rkey: dst.rkey,
            signaled: true,
            ..Default::default()
        }],
    )?;
    let t0 = w.cycle();
    let mut done = Vec::new();
    while done.is_empty() && w.cycle() < t0 + 15_625 {
        w.run(200)?;
        done = w.a.dev.poll_cq(&mut w.a.cq, 4)?;
    }
    ensure!(
        done.len() == 1 && done[0].wr_id == 7 && done[0].status == WC_SUCCESS,
        "seed {s}: the WRITE behind the forged READs: {done:?} after {} cycles; b: {}",
        w.cycle() - t0,
        nonzero_counters(&w.b)
    );
    let mut got = vec![0u8; len as usize];
    w.b.dev.mem.read(dst.addr, &mut got)?;
    ensure!(got == bytes[..len as usize], "seed {s}: the WRITE's bytes");
    let (reads, full) = (w.b.counter("resp_reads")?, w.b.counter("resp_jobs_full")?);
    ensure!(
        (reads, full) == (SHARE as u64, 1)
            && u64::from(w.b.dev.rc_stats()?.jobs_full) == full
            && w.b.counter("resp_seq_err")? == (N - SHARE - 1) as u64,
        "seed {s}: b accepted {reads} READs, dropped {full} for want of a job; b: {}",
        nonzero_counters(&w.b)
    );
    println!(
        "seed {s}: PMTU {pmtu}: the WRITE completed {} cycles after it was posted",
        w.cycle() - t0
    );
    Ok(())
}

/// READs both ways under PFC with hosts that write slowly: eight QP pairs, each side keeping
/// 16 READs of 16-64 KiB posted (`MAX_RD_ATOMIC` in flight) on every QP toward the other, both hosts writing at
/// 2 Gb/s, for 5 ms (times the soak factor). A receive path that waits for room for a READ
/// job closes a loop through PFC: its receive buffer passes XOFF, the peer's transmit pauses,
/// the peer's receive path waits the same way, and this NIC's transmit (the only reader of
/// its job queue) is paused in turn. The job pool holds every QP's share, so no READ waits:
/// completions keep coming (never 1 ms without one on a side with READs out), every READ completes with
/// SUCCESS, none is dropped for want of a job, and afterwards no priority is paused and
/// `mac_tx_held` is 0.
#[test]
fn reads_both_ways_under_pfc_with_slow_hosts_keep_completing() -> Result<()> {
    let s = seed("reads_both_ways_under_pfc_with_slow_hosts_keep_completing");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        write_gbps: [Some(2.0), Some(2.0)],
        ..WorldConfig::default()
    })?;
    w.a.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    const QPS: usize = 8;
    const DEPTH: usize = 16;
    const MAX: usize = 64 << 10;
    let pmtu = [1024u32, 2048, 4096][r.gen_range(0..3)];
    let src: Vec<u8> = (0..MAX).map(|_| r.gen()).collect();
    let srcs = [w.a.buffer(MAX, &src)?, w.b.buffer(MAX, &src)?];
    let dsts = [
        w.a.buffer(QPS * DEPTH * MAX, &vec![0u8; QPS * DEPTH * MAX])?,
        w.b.buffer(QPS * DEPTH * MAX, &vec![0u8; QPS * DEPTH * MAX])?,
    ];
    let mut pairs = Vec::new();
    for _ in 0..QPS {
        pairs.push(w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?);
    }
    // Each side's READs of the other's source, one slot of its area per outstanding READ.
    let read = |k: usize,
                slot: usize,
                len: usize,
                dst: &ferroce_driver::MemoryRegion,
                rsrc: &ferroce_driver::MemoryRegion| SendWr {
        wr_id: (k * DEPTH + slot) as u64,
        opcode: WrOpcode::RdmaRead,
        sg_list: vec![Sge {
            addr: dst.addr + ((k * DEPTH + slot) * MAX) as u64,
            length: len as u32,
            lkey: dst.lkey,
        }],
        remote_addr: rsrc.addr,
        rkey: rsrc.rkey,
        signaled: true,
        ..Default::default()
    };
    for (k, (qa, qb)) in pairs.iter_mut().enumerate() {
        for side in 0..2 {
            let list: Vec<SendWr> = (0..DEPTH)
                .map(|slot| {
                    read(
                        k,
                        slot,
                        r.gen_range(16 << 10..=MAX),
                        &dsts[side],
                        &srcs[1 - side],
                    )
                })
                .collect();
            let (h, qp) = if side == 0 {
                (&mut w.a, &mut *qa)
            } else {
                (&mut w.b, &mut *qb)
            };
            h.dev.post_send(qp, &list)?;
        }
    }
    let end = w.cycle() + budget(781_250);
    let mut last = [w.cycle(); 2];
    let mut done = [0usize; 2];
    let mut out = [QPS * DEPTH; 2];
    while out[0] + out[1] > 0 {
        w.run(2_000)?;
        let now = w.cycle();
        for side in 0..2 {
            let h = if side == 0 { &mut w.a } else { &mut w.b };
            for c in h.dev.poll_cq(&mut h.cq, 64)? {
                ensure!(c.status == WC_SUCCESS, "seed {s}: host {side}: {c:?}");
                done[side] += 1;
                out[side] -= 1;
                last[side] = now;
                if now < end {
                    // The same slot again, at once.
                    let k = c.wr_id as usize / DEPTH;
                    let slot = c.wr_id as usize % DEPTH;
                    let wr = read(
                        k,
                        slot,
                        r.gen_range(16 << 10..=MAX),
                        &dsts[side],
                        &srcs[1 - side],
                    );
                    let qp = if side == 0 {
                        &mut pairs[k].0
                    } else {
                        &mut pairs[k].1
                    };
                    h.dev.post_send(qp, &[wr])?;
                    out[side] += 1;
                }
            }
            ensure!(
                out[side] == 0 || now - last[side] < 156_250,
                "seed {s}: host {side}: no completion for 1 ms ({} done, {} outstanding); \
                 a: {}; b: {}; paused a {} b {}",
                done[side],
                out[side],
                nonzero_counters(&w.a),
                nonzero_counters(&w.b),
                w.a.counter("mac_paused")?,
                w.b.counter("mac_paused")?
            );
        }
    }
    w.run(20_000)?;
    for (side, h) in [(0usize, &w.a), (1, &w.b)] {
        ensure!(
            h.counter("mac_paused")? == 0 && h.counter("mac_tx_held")? == 0,
            "seed {s}: host {side}: paused {}, tx held {}",
            h.counter("mac_paused")?,
            h.counter("mac_tx_held")?
        );
    }
    println!("seed {s}: {done:?} READs of 16-64 KiB both ways (PMTU {pmtu})");
    for (side, h) in [(0usize, &w.a), (1, &w.b)] {
        ensure!(
            h.counter("resp_jobs_full")? == 0,
            "seed {s}: host {side}: {} READs dropped for want of a job",
            h.counter("resp_jobs_full")?
        );
    }
    ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    ensure!(w.b.sim.borrow().rc.borrow().violations.is_empty());
    Ok(())
}

/// Stale jobs in the pool are cut short too. Host a keeps `MAX_RD_ATOMIC` READs of 64 KiB
/// outstanding on each of 4 QPs toward b, so b's pool holds most of them, the QPs'
/// interleaved. One response of the second QP's first READ is lost: a asks again from there (a
/// duplicate READ), and b's jobs of that QP ahead of the duplicate are stale. The responder
/// says so as the duplicate's job goes into its pool, so each of them sends one packet
/// (`req_cuts`, all but three of that QP's `MAX_RD_ATOMIC - 1` later READs at least) instead
/// of 64 KiB the peer would drop. (Marked only as the
/// duplicate reached the requester's 16-job queue, most of them had gone whole by then.)
/// Every READ completes SUCCESS with its bytes.
#[test]
fn stale_read_jobs_in_the_pool_are_cut_short() -> Result<()> {
    use ferroce_sim::link::Fault;
    use std::cell::Cell;
    use std::rc::Rc;
    let s = seed("stale_read_jobs_in_the_pool_are_cut_short");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    const QPS: usize = 4;
    const DEPTH: usize = MAX_RD_ATOMIC;
    const LEN: usize = 64 << 10;
    let pmtu = [1024u32, 2048, 4096][r.gen_range(0..3)];
    let src: Vec<u8> = (0..LEN).map(|_| r.gen()).collect();
    let sb = w.b.buffer(LEN, &src)?;
    let da =
        w.a.buffer(QPS * DEPTH * LEN, &vec![0u8; QPS * DEPTH * LEN])?;
    let mut qps = Vec::new();
    for _ in 0..QPS {
        qps.push(
            w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?
                .0,
        );
    }
    // The third response packet to the second QP is lost, once.
    let (victim, seen) = (qps[1].qpn, Rc::new(Cell::new(0u32)));
    let s2 = seen.clone();
    w.ba.set_fault_hook(move |_, f| {
        let hit = ferroce_tests::bth(f)
            .is_some_and(|b| b.dqpn == victim && (0x0D..=0x10).contains(&b.opcode));
        if hit {
            s2.set(s2.get() + 1);
            if s2.get() == 3 {
                return Fault::Drop;
            }
        }
        Fault::Pass
    })?;
    for (k, qp) in qps.iter_mut().enumerate() {
        let list: Vec<SendWr> = (0..DEPTH)
            .map(|i| SendWr {
                wr_id: (k * DEPTH + i) as u64,
                opcode: WrOpcode::RdmaRead,
                sg_list: vec![Sge {
                    addr: da.addr + ((k * DEPTH + i) * LEN) as u64,
                    length: LEN as u32,
                    lkey: da.lkey,
                }],
                remote_addr: sb.addr,
                rkey: sb.rkey,
                signaled: true,
                ..Default::default()
            })
            .collect();
        w.a.dev.post_send(qp, &list)?;
    }
    let mut done = 0;
    let t0 = w.cycle();
    while done < QPS * DEPTH {
        w.run(2_000)?;
        for c in w.a.dev.poll_cq(&mut w.a.cq, 64)? {
            ensure!(c.status == WC_SUCCESS, "seed {s}: {c:?}");
            done += 1;
        }
        ensure!(
            w.cycle() - t0 < budget(2_000_000),
            "seed {s}: {done} of {} READs done; a: {}; b: {}",
            QPS * DEPTH,
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    let mut got = vec![0u8; QPS * DEPTH * LEN];
    w.a.dev.mem.read(da.addr, &mut got)?;
    for (i, chunk) in got.chunks(LEN).enumerate() {
        ensure!(chunk == &src[..], "seed {s}: READ {i}'s bytes");
    }
    let cuts = w.b.counter("req_cuts")?;
    println!(
        "seed {s}: PMTU {pmtu}: {} READs in {} cycles, {cuts} stale jobs cut; b: {}",
        QPS * DEPTH,
        w.cycle() - t0,
        nonzero_counters(&w.b)
    );
    ensure!(
        cuts as usize >= DEPTH - 4,
        "seed {s}: {cuts} stale jobs cut short; b: {}",
        nonzero_counters(&w.b)
    );
    Ok(())
}
