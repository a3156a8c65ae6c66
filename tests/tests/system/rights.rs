//! What a QP's attributes allow its peer: at most `max_rd_atomic` READs and atomics
//! outstanding, and only the remote operations its own access flags (`qp_access_flags`) grant,
//! whatever its regions allow.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, MemoryRegion, QpAttr, QpState, QueuePair, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::opcodes::{RC_FETCH_ADD, RC_RDMA_READ_REQUEST};
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed};
use rand::Rng;
use std::rc::Rc;

/// A QP keeps at most its `max_rd_atomic` READs outstanding (`modify_qp` at RTR -> RTS: the
/// peer's `max_dest_rd_atomic`, which may be as low as 1 on hardware); it was always 16, so a
/// peer with fewer responder resources was over-subscribed. Every third request is a
/// FETCH_AND_ADD, which takes a responder resource as a READ does. Counted on the wires:
/// requests sent less those answered (a READ's LAST or ONLY response, an ATOMIC ACKNOWLEDGE)
/// never pass the limit, and reach it; each add is done once.
#[test]
fn a_qp_keeps_at_most_its_max_rd_atomic_reads_outstanding() -> Result<()> {
    let s = seed("a_qp_keeps_at_most_its_max_rd_atomic_reads_outstanding");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let limit = r.gen_range(1..=6u8);
    w.retry.max_rd_atomic = Some(limit);
    let (mut qa, _qb) = w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
    let n = 16u64;
    let size = 8192u64;
    let src: Vec<u8> = (0..n * size).map(|_| r.gen()).collect();
    let sb = w.b.buffer(src.len(), &src)?;
    let da = w.a.buffer(src.len(), &vec![0; src.len()])?;
    // Every third is a FETCH_AND_ADD of 1 to a word of its own (they count as READs do).
    let atomic = |i: u64| i % 3 == 2;
    let words: Vec<u8> = (0..8 * n).map(|_| r.gen()).collect();
    let tb = w.b.buffer(words.len(), &words)?;
    let word = |b: &[u8], i: u64| {
        let i = i as usize;
        u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"))
    };
    let out = Rc::new(std::cell::Cell::new((0i64, 0i64)));
    let (o1, o2) = (out.clone(), out.clone());
    w.ab.set_fault_hook(move |_, f| {
        if bth(f).is_some_and(|b| b.opcode == RC_RDMA_READ_REQUEST || b.opcode == RC_FETCH_ADD) {
            let (now, most) = o1.get();
            o1.set((now + 1, most.max(now + 1)));
        }
        Fault::Pass
    })?;
    w.ba.set_fault_hook(move |_, f| {
        // READ RESPONSE LAST (0x0F) or ONLY (0x10), ATOMIC ACKNOWLEDGE (0x12): one answered.
        if bth(f).is_some_and(|b| b.opcode == 0x0F || b.opcode == 0x10 || b.opcode == 0x12) {
            let (now, most) = o2.get();
            o2.set((now - 1, most));
        }
        Fault::Pass
    })?;
    let wrs: Vec<SendWr> = (0..n)
        .map(|i| {
            let read = SendWr {
                wr_id: i,
                opcode: WrOpcode::RdmaRead,
                sg_list: vec![Sge {
                    addr: da.addr + size * i,
                    length: size as u32,
                    lkey: da.lkey,
                }],
                remote_addr: sb.addr + size * i,
                rkey: sb.rkey,
                signaled: true,
                ..Default::default()
            };
            if !atomic(i) {
                return read;
            }
            let mut add = SendWr {
                opcode: WrOpcode::AtomicFetchAndAdd,
                remote_addr: tb.addr + 8 * i,
                rkey: tb.rkey,
                compare_add: 1,
                ..read
            };
            add.sg_list[0].length = 8;
            add
        })
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    let got = reap(
        &mut w,
        0,
        n as usize,
        budget(300_000),
        &format!("seed {s}: the READs"),
    )?;
    ensure!(
        got.iter().all(|c| c.status == WC_SUCCESS),
        "seed {s}: {got:?}"
    );
    let mut want = src.clone();
    for i in (0..n).filter(|&i| atomic(i)) {
        let at = (size * i) as usize;
        want[at..at + size as usize].fill(0);
        want[at..at + 8].copy_from_slice(&words[8 * i as usize..8 * i as usize + 8]);
    }
    let mut mem = vec![0u8; src.len()];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    ensure!(mem == want, "seed {s}: bytes");
    let mut end = vec![0u8; words.len()];
    w.b.dev.mem.read(tb.addr, &mut end)?;
    for i in 0..n {
        let add = u64::from(atomic(i));
        ensure!(
            word(&end, i) == word(&words, i).wrapping_add(add),
            "seed {s}: word {i}"
        );
    }
    let (now, most) = out.get();
    ensure!(
        now == 0 && most == i64::from(limit),
        "seed {s}: at most {most} READs and atomics outstanding with max_rd_atomic {limit} \
         ({now} left)"
    );
    Ok(())
}

/// A QP pair whose b end grants only `rights` (its regions grant everything): b's region
/// `tb` of random bytes `img`, a's source `sa` (0xEE) and landing buffer `da` (zeros).
struct Restricted {
    qa: QueuePair,
    img: Vec<u8>,
    tb: MemoryRegion,
    sa: MemoryRegion,
    da: MemoryRegion,
}

fn restricted(w: &mut World, r: &mut impl Rng, rights: u32) -> Result<Restricted> {
    let (qa, mut qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    w.b.dev.modify_qp(
        &mut qb,
        QpState::Rts,
        QpAttr {
            access: Some(rights),
            ..QpAttr::default()
        },
    )?;
    let img: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    Ok(Restricted {
        qa,
        tb: w.b.buffer(4096, &img)?,
        img,
        sa: w.a.buffer(4096, &vec![0xEE; 4096])?,
        da: w.a.buffer(4096, &vec![0; 4096])?,
    })
}

/// A QP's own remote access rights (`qp_access_flags`, rxe's `check_op_valid`) bound what a
/// request may do besides the region's: a QP that allows remote READ but not WRITE serves a
/// READ of a region that allows both, and refuses a WRITE to it with NAK remote access error,
/// writing nothing (every QP in the PD reached any region before).
#[test]
fn a_qp_without_remote_write_refuses_writes_its_regions_allow() -> Result<()> {
    use ferroce_driver::access;
    use ferroce_spec::queues::WC_REM_ACCESS_ERR;
    let s = seed("a_qp_without_remote_write_refuses_writes_its_regions_allow");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let Restricted {
        mut qa,
        img,
        tb,
        sa,
        da,
    } = restricted(&mut w, &mut r, access::REMOTE_READ)?;
    let len = r.gen_range(1..=2048u32);
    let read = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaRead,
        sg_list: vec![Sge {
            addr: da.addr,
            length: len,
            lkey: da.lkey,
        }],
        remote_addr: tb.addr,
        rkey: tb.rkey,
        signaled: true,
        ..Default::default()
    };
    let write = SendWr {
        wr_id: 2,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: sa.addr,
            length: r.gen_range(0..=2048),
            lkey: sa.lkey,
        }],
        ..read.clone()
    };
    w.a.dev.post_send(&mut qa, &[read, write])?;
    let mut got = Vec::new();
    for _ in 0..100 {
        w.run(1000)?;
        got.extend(w.a.dev.poll_cq(&mut w.a.cq, 8)?);
        if got.len() >= 2 {
            break;
        }
    }
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [(1, WC_SUCCESS), (2, WC_REM_ACCESS_ERR)],
        "seed {s}: {st:?}"
    );
    let mut mem = vec![0u8; 4096];
    w.b.dev.mem.read(tb.addr, &mut mem)?;
    ensure!(mem == img, "seed {s}: b's region was written");
    w.a.dev.mem.read(da.addr, &mut mem)?;
    ensure!(
        mem[..len as usize] == img[..len as usize],
        "seed {s}: the READ's bytes"
    );
    ensure!(
        w.b.counter("resp_bad_rkey")? == 1,
        "seed {s}: {}",
        nonzero_counters(&w.b)
    );
    Ok(())
}

/// The same for READs and atomics: a QP that allows remote WRITE only (`qp_access_flags`)
/// refuses a READ and a FETCH_AND_ADD to a region that allows everything, each on a QP pair
/// of its own: the WRITE before it lands, it completes REM_ACCESS_ERR, nothing is read back
/// and the word is unchanged.
#[test]
fn a_qp_without_remote_read_or_atomic_refuses_them_where_its_regions_allow() -> Result<()> {
    use ferroce_driver::access;
    use ferroce_spec::queues::WC_REM_ACCESS_ERR;
    let s = seed("a_qp_without_remote_read_or_atomic_refuses_them_where_its_regions_allow");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    for atomic in [false, true] {
        let Restricted {
            mut qa,
            img,
            tb,
            sa,
            da,
        } = restricted(&mut w, &mut r, access::REMOTE_WRITE)?;
        let len = r.gen_range(1..=2048u32);
        let write = SendWr {
            wr_id: 1,
            opcode: WrOpcode::RdmaWrite,
            sg_list: vec![Sge {
                addr: sa.addr,
                length: len,
                lkey: sa.lkey,
            }],
            remote_addr: tb.addr + 2048,
            rkey: tb.rkey,
            signaled: true,
            ..Default::default()
        };
        let asked = SendWr {
            wr_id: 2,
            opcode: if atomic {
                WrOpcode::AtomicFetchAndAdd
            } else {
                WrOpcode::RdmaRead
            },
            sg_list: vec![Sge {
                addr: da.addr,
                length: if atomic { 8 } else { len },
                lkey: da.lkey,
            }],
            remote_addr: tb.addr,
            compare_add: 1,
            ..write.clone()
        };
        let bad0 = w.b.dev.rc_stats()?.key_refused;
        w.a.dev.post_send(&mut qa, &[write, asked])?;
        let got = reap(&mut w, 0, 2, budget(100_000), &format!("seed {s}"))?;
        let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
        let what = if atomic { "FETCH_AND_ADD" } else { "READ" };
        ensure!(
            st == [(1, WC_SUCCESS), (2, WC_REM_ACCESS_ERR)],
            "seed {s}: {what}: {st:?}"
        );
        let mut mem = vec![0u8; 4096];
        w.b.dev.mem.read(tb.addr, &mut mem)?;
        ensure!(
            mem[..2048] == img[..2048] && mem[2048..2048 + len as usize].iter().all(|&b| b == 0xEE),
            "seed {s}: {what}: b's region is not the WRITE alone"
        );
        w.a.dev.mem.read(da.addr, &mut mem)?;
        ensure!(
            mem.iter().all(|&b| b == 0),
            "seed {s}: {what}: bytes came back"
        );
        ensure!(
            w.b.dev.rc_stats()?.key_refused == bad0 + 1,
            "seed {s}: {what}: {}",
            nonzero_counters(&w.b)
        );
    }
    Ok(())
}
