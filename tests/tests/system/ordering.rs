//! The order a QP's requests take effect in: a fenced request waits for the READs and
//! atomics before it (IBA 10.8.3.3), and a READ reads what the writes before it wrote (IBA
//! 9.5). Each failed before its fix.

use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::opcodes::{RC_RDMA_READ_REQUEST, RC_RDMA_READ_RESPONSE_LAST, RC_RDMA_WRITE_ONLY};
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{bth, budget, reap, rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// FENCE (IBA 10.8.3.3, `IBV_SEND_FENCE`): a WRITE posted with `fence` behind a READ of
/// 16-64 KiB leaves only after the READ's last response has come back; the same WRITE without
/// the fence leaves right behind the READ request, and a fenced WRITE with no READ before it
/// leaves at once. Both complete with every byte.
#[test]
fn a_fenced_write_waits_for_the_reads_before_it() -> Result<()> {
    let s = seed("a_fenced_write_waits_for_the_reads_before_it");
    let mut r = rng(s);
    for (fence, read) in [(false, true), (true, true), (true, false)] {
        let mut w = World::open(&WorldConfig::default())?;
        let pmtu = [256, 1024, 4096][r.gen_range(0..3)];
        let (mut qa, _qb) =
            w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
        let len = r.gen_range(16 << 10..=64 << 10);
        let src: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        let sb = w.b.buffer(len, &src)?;
        let da = w.a.buffer(len + 64, &vec![0; len + 64])?;
        let db = w.b.buffer(64, &[0; 64])?;
        // Frames both ways in wire order: (from a, opcode).
        let log = Rc::new(RefCell::new(Vec::<(bool, u8)>::new()));
        for (ab, wire) in [(true, &w.ab), (false, &w.ba)] {
            let l2 = log.clone();
            wire.set_fault_hook(move |_, f| {
                if let Some(b) = bth(f) {
                    l2.borrow_mut().push((ab, b.opcode));
                }
                Fault::Pass
            })?;
        }
        let mut wrs = Vec::new();
        if read {
            wrs.push(SendWr {
                wr_id: 1,
                opcode: WrOpcode::RdmaRead,
                sg_list: vec![Sge {
                    addr: da.addr,
                    length: len as u32,
                    lkey: da.lkey,
                }],
                remote_addr: sb.addr,
                rkey: sb.rkey,
                signaled: true,
                ..Default::default()
            });
        }
        wrs.push(SendWr {
            wr_id: 2,
            opcode: WrOpcode::RdmaWrite,
            sg_list: vec![Sge {
                addr: da.addr + len as u64,
                length: 64,
                lkey: da.lkey,
            }],
            remote_addr: db.addr,
            rkey: db.rkey,
            signaled: true,
            fence,
            ..Default::default()
        });
        w.a.dev.post_send(&mut qa, &wrs)?;
        let what = format!("seed {s}: fence {fence}, READ of {len} bytes {read}, PMTU {pmtu}");
        let got = reap(&mut w, 0, wrs.len(), budget(200_000), &what)?;
        ensure!(
            got.iter().all(|c| c.status == WC_SUCCESS),
            "{what}: {got:?}"
        );
        let mut mem = vec![0u8; len];
        w.a.dev.mem.read(da.addr, &mut mem)?;
        ensure!(!read || mem == src, "{what}: the READ's bytes");
        let log = log.borrow();
        let at = |from_a: bool, op: u8| log.iter().rposition(|&e| e == (from_a, op));
        let write = at(true, RC_RDMA_WRITE_ONLY).context("no WRITE on the wire")?;
        let request = at(true, RC_RDMA_READ_REQUEST);
        let last = at(false, RC_RDMA_READ_RESPONSE_LAST).or(at(false, 0x10));
        match (request, last) {
            (Some(q), Some(l)) if fence => ensure!(
                write > l && l > q,
                "{what}: the WRITE went out at {write}, the READ's last response came at {l}"
            ),
            (Some(q), Some(l)) => ensure!(
                write == q + 1 && write < l,
                "{what}: unfenced, the WRITE went out at {write}, READ at {q}, last response {l}"
            ),
            _ => ensure!(
                !read && write == 0,
                "{what}: the WRITE went out at {write} of {log:?}"
            ),
        }
    }
    Ok(())
}

/// A READ is served after the writes the responder took before it (IBA 9.5: requests of a QP
/// are executed in order; rxe reads after its earlier writes are done): WRITE 8 bytes to
/// 4 KiB, READ its first word back, sixteen pairs a round on one QP, with the responder's host
/// memory slow and its requests held back at random: each READ returns the WRITE just before
/// it.
#[test]
fn a_read_returns_what_the_write_before_it_wrote() -> Result<()> {
    let s = seed("a_read_returns_what_the_write_before_it_wrote");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        rq_pause: 0.5,
        write_gbps: [None, Some(r.gen_range(0.2..2.0))],
        ..WorldConfig::default()
    })?;
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
    let rounds = 16;
    let per = 16u64;
    let src =
        w.a.buffer(4096 * per as usize, &vec![0; 4096 * per as usize])?;
    let dst = w.a.buffer(8 * per as usize, &vec![0; 8 * per as usize])?;
    let target = w.b.buffer(2 * 4096, &[0; 2 * 4096])?;
    for round in 0..rounds {
        let mut values = Vec::new();
        let mut wrs = Vec::new();
        for i in 0..per {
            let v: u64 = r.gen();
            values.push(v);
            // A WRITE of 8 bytes to 4 KiB (16 TLPs at the host) starting with `v` at word i
            // (the earlier WRITEs of the round reach over it, the later ones start past it).
            let len = [8u64, 8, 1024, 4096][r.gen_range(0..4)];
            let at = target.addr + 8 * i;
            let from = src.addr + 4096 * i;
            w.a.dev.mem.write(from, &v.to_le_bytes())?;
            wrs.push(SendWr {
                wr_id: 2 * i,
                opcode: WrOpcode::RdmaWrite,
                sg_list: vec![Sge {
                    addr: from,
                    length: len as u32,
                    lkey: src.lkey,
                }],
                remote_addr: at,
                rkey: target.rkey,
                ..Default::default()
            });
            wrs.push(SendWr {
                wr_id: 2 * i + 1,
                opcode: WrOpcode::RdmaRead,
                sg_list: vec![Sge {
                    addr: dst.addr + 8 * i,
                    length: 8,
                    lkey: dst.lkey,
                }],
                remote_addr: at,
                rkey: target.rkey,
                signaled: true,
                ..Default::default()
            });
        }
        w.a.dev.post_send(&mut qa, &wrs)?;
        let what = format!("seed {s}: round {round}");
        let got = reap(&mut w, 0, per as usize, budget(400_000), &what)?;
        ensure!(
            got.iter().all(|c| c.status == WC_SUCCESS),
            "{what}: {got:?}"
        );
        for (i, v) in values.iter().enumerate() {
            let mut b = [0u8; 8];
            w.a.dev.mem.read(dst.addr + 8 * i as u64, &mut b)?;
            ensure!(
                u64::from_le_bytes(b) == *v,
                "{what}: READ {i} returned {:#x}, the WRITE before it wrote {v:#x}",
                u64::from_le_bytes(b)
            );
        }
    }
    Ok(())
}
