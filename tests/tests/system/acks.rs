//! What a requester is told and when: the responder's ACK and NAK records, ranked and each
//! sent once, and the requester's window of unacknowledged PSNs. Each test failed before its
//! fix.

use anyhow::ensure;
use anyhow::Result;
use ferroce_driver::{DmaMemory, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::headers::AETH_NAK_PSN_SEQ;
use ferroce_spec::mac_ctrl;
use ferroce_spec::opcodes::RC_ACKNOWLEDGE;
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed, Bth};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// An RNR NAK waiting for the wire is not replaced by the sequence NAK the packets behind its
/// SEND earn, nor is any NAK sent twice (rxe keeps one response per QP and sends each once).
/// a READs from b, then SENDs (b has no receive WQE) and WRITEs three times, while a pauses b's
/// priority 0 with PFC: the READ's responses cannot leave, so b's NAKs for the QP wait behind
/// them (IBA 9.7.5.1, responses in PSN order). The SEND's RNR NAK must reach a first, and a
/// waits it out. With `retry_cnt` 0, a sequence NAK in its place fails a's QP with
/// RETRY_EXC_ERR.
#[test]
fn an_rnr_nak_waiting_for_the_wire_is_not_replaced_by_a_sequence_nak() -> Result<()> {
    let s = seed("an_rnr_nak_waiting_for_the_wire_is_not_replaced_by_a_sequence_nak");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.retry_cnt = Some(0);
    let psn = r.gen_range(0..1 << 24);
    let (mut qa, mut qb) = w.connect(1024, psn, r.gen_range(0..1 << 24), 16)?;
    let naks = Rc::new(RefCell::new(Vec::<Bth>::new()));
    let n2 = naks.clone();
    let dqpn = qa.qpn;
    w.ba.set_fault_hook(move |_, f| {
        if let Some(b) = bth(f).filter(|b| {
            b.dqpn == dqpn && b.opcode == RC_ACKNOWLEDGE && b.syndrome.is_some_and(|s| s >> 5 != 0)
        }) {
            n2.borrow_mut().push(b);
        }
        Fault::Pass
    })?;
    let pfc =
        |q: u16| mac_ctrl::pfc_frame([0x02, 0xfe, 0, 0, 0, 0x0a], 0x01, [q, 0, 0, 0, 0, 0, 0, 0]);
    let now = w.a.sim.borrow().tb.time_ps();
    w.ab.inject(now, &pfc(0xFFFF));
    w.run(200)?;
    let img: Vec<u8> = (0..8192).map(|_| r.gen()).collect();
    let sb = w.b.buffer(img.len(), &img)?;
    let da = w.a.buffer(img.len(), &vec![0; img.len()])?;
    let sa = w.a.buffer(4096, &vec![0x5A; 4096])?;
    let tb = w.b.buffer(4096, &vec![0; 4096])?;
    let read_len = r.gen_range(2049..=8192u32);
    let mut wrs = vec![SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaRead,
        sg_list: vec![Sge {
            addr: da.addr,
            length: read_len,
            lkey: da.lkey,
        }],
        remote_addr: sb.addr,
        rkey: sb.rkey,
        signaled: true,
        ..Default::default()
    }];
    let small = Sge {
        addr: sa.addr,
        length: 64,
        lkey: sa.lkey,
    };
    wrs.push(SendWr {
        wr_id: 2,
        opcode: WrOpcode::Send,
        sg_list: vec![small],
        signaled: true,
        ..Default::default()
    });
    for i in 0..3u64 {
        wrs.push(SendWr {
            wr_id: 3 + i,
            opcode: WrOpcode::RdmaWrite,
            remote_addr: tb.addr + 64 * i,
            rkey: tb.rkey,
            ..wrs[1].clone()
        });
    }
    w.a.dev.post_send(&mut qa, &wrs)?;
    w.run_until(200_000, "b's sequence NAK", || {
        w.b.counter("resp_seq_err").is_ok_and(|n| n >= 1)
    })?;
    w.run(r.gen_range(0..2000))?;
    let now = w.a.sim.borrow().tb.time_ps();
    w.ab.inject(now, &pfc(0));
    w.run_until(200_000, "a's first NAK", || !naks.borrow().is_empty())?;
    w.run(r.gen_range(0..20_000))?;
    let db = w.b.buffer(4096, &vec![0; 4096])?;
    w.b.dev.post_recv(
        &mut qb,
        &[RecvWr {
            wr_id: 7,
            sg_list: vec![Sge {
                addr: db.addr,
                length: 4096,
                lkey: db.lkey,
            }],
        }],
    )?;
    let got = reap(
        &mut w,
        0,
        5,
        budget(400_000),
        &format!("seed {s}: a's work"),
    )?;
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    let nk = naks.borrow().clone();
    ensure!(
        st.iter().all(|&(_, c)| c == WC_SUCCESS),
        "seed {s}: a's completions {st:?}; NAKs to a {nk:?}"
    );
    let mut mem = vec![0u8; read_len as usize];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    ensure!(
        mem[..] == img[..read_len as usize],
        "seed {s}: the READ's bytes"
    );
    ensure!(
        nk[0].syndrome.is_some_and(|s| s >> 5 == 1)
            && nk[0].psn == (psn + read_len.div_ceil(1024)) % (1 << 24),
        "seed {s}: the first NAK to a is not the SEND's RNR NAK: {nk:?}"
    );
    // Each NAK once: a sequence NAK is never followed by the same one (each round of a's
    // retries earns one RNR NAK and at most one sequence NAK).
    ensure!(
        nk.windows(2)
            .all(|p| p[0].syndrome != Some(AETH_NAK_PSN_SEQ) || p[0] != p[1]),
        "seed {s}: a NAK sent twice: {nk:?}"
    );
    ensure!(
        w.a.counter("cpl_rnr_naks")? >= 1,
        "seed {s}: {}",
        nonzero_counters(&w.a)
    );
    Ok(())
}

/// The requester's window holds after a READ of 2^23 PSNs (2^31 bytes at PMTU 256): the PSN
/// after it is 2^23 past `una`, which its top bit alone read as behind `una` (a retry), so the
/// window stayed open. WRITEs posted behind the READ (after 0-7 before it) must wait for its
/// responses: none reaches the wire while the READ is 2^23 - a few thousand PSNs from done.
#[test]
fn the_window_holds_after_a_read_of_two_to_the_23_psns() -> Result<()> {
    use ferroce_driver::access;
    use ferroce_spec::opcodes::{RC_RDMA_READ_REQUEST, RC_RDMA_WRITE_ONLY};
    let s = seed("the_window_holds_after_a_read_of_two_to_the_23_psns");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut qa, _qb) = w.connect(256, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 32)?;
    let big = 1usize << 31;
    let rb = w.b.dev.mem.alloc(big, 4096)?;
    let mb =
        w.b.dev
            .reg_mr(&w.b.pd, rb.addr, big as u64, access::REMOTE_READ)?;
    let ra = w.a.dev.mem.alloc(big, 4096)?;
    let ma =
        w.a.dev
            .reg_mr(&w.a.pd, ra.addr, big as u64, access::LOCAL_WRITE)?;
    let tb = w.b.buffer(4096, &[0; 4096])?;
    let sa = w.a.buffer(64, &[0x77; 64])?;
    let seen = Rc::new(RefCell::new((false, 0u32)));
    let s2 = seen.clone();
    w.ab.set_fault_hook(move |_, f| {
        if let Some(b) = bth(f) {
            let mut v = s2.borrow_mut();
            if b.opcode == RC_RDMA_READ_REQUEST {
                v.0 = true;
            } else if b.opcode == RC_RDMA_WRITE_ONLY && v.0 {
                v.1 += 1;
            }
        }
        Fault::Pass
    })?;
    let write = |i: u64| SendWr {
        wr_id: 10 + i,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: sa.addr,
            length: 64,
            lkey: sa.lkey,
        }],
        remote_addr: tb.addr + 64 * (i % 64),
        rkey: tb.rkey,
        ..Default::default()
    };
    let before = r.gen_range(0..8u64);
    let mut wrs: Vec<SendWr> = (0..before).map(write).collect();
    wrs.push(SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaRead,
        sg_list: vec![Sge {
            addr: ra.addr,
            length: big as u32,
            lkey: ma.lkey,
        }],
        remote_addr: rb.addr,
        rkey: mb.rkey,
        ..Default::default()
    });
    wrs.extend((before..before + 16).map(write));
    w.a.dev.post_send(&mut qa, &wrs)?;
    w.run(30_000)?;
    let (read_seen, after) = *seen.borrow();
    ensure!(read_seen, "seed {s}: the READ request was not sent");
    ensure!(
        after == 0,
        "seed {s}: {after} WRITEs sent behind a READ of 2^23 PSNs ({before} before it): \
         the window did not hold"
    );
    Ok(())
}
