//! Protocol corners of the RC transport found by a read against IBA and rxe: each test names
//! the rule, and each failed before its fix.

use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, QpState, QueuePair, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::headers::AETH_NAK_INV_REQ;
use ferroce_spec::opcodes::{RC_FETCH_ADD, RC_RDMA_READ_REQUEST, RC_SEND_ONLY};
use ferroce_spec::queues::{WC_REM_INV_REQ_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR};
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{bth, budget, nonzero_counters, reap, rng, seed, Bth};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// Where a test that forges requests from a real SEND starts: a QP pair at `pmtu`, receive
/// WQEs 1 and 2 of `recv_len` bytes each posted at b, a SEND of `len` bytes from a that
/// completed into the first, caught on the wire as the model, and b's NAKs as they pass.
struct SendModel {
    qb: QueuePair,
    model: TxPacket,
    naks: Rc<RefCell<Vec<Bth>>>,
}

fn send_model(
    w: &mut World,
    r: &mut ChaCha8Rng,
    pmtu: u32,
    recv_len: u32,
    len: u32,
) -> Result<SendModel> {
    let (mut qa, mut qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let sa = w.a.buffer(4096, &vec![0x55; 4096])?;
    let db =
        w.b.buffer(2 * recv_len as usize, &vec![0; 2 * recv_len as usize])?;
    let recv = |id: u64| RecvWr {
        wr_id: id,
        sg_list: vec![Sge {
            addr: db.addr + (id - 1) * u64::from(recv_len),
            length: recv_len,
            lkey: db.lkey,
        }],
    };
    w.b.dev.post_recv(&mut qb, &[recv(1), recv(2)])?;
    let caught = ferroce_tests::catch_first(&w.ab, RC_SEND_ONLY)?;
    let naks = Rc::new(RefCell::new(Vec::<Bth>::new()));
    let n2 = naks.clone();
    w.ba.set_fault_hook(move |_, f| {
        if let Some(b) = bth(f).filter(|b| b.syndrome.is_some_and(|s| s >> 5 == 3)) {
            n2.borrow_mut().push(b);
        }
        Fault::Pass
    })?;
    let send = SendWr {
        wr_id: 9,
        opcode: WrOpcode::Send,
        sg_list: vec![Sge {
            addr: sa.addr,
            length: len,
            lkey: sa.lkey,
        }],
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[send])?;
    w.run_until(200_000, "the SEND's completions", || {
        w.b.counter("cpl_cqes").is_ok_and(|n| n == 1)
    })?;
    let model = TxPacket::parse(&caught.borrow().clone().context("no SEND caught")?)?;
    Ok(SendModel { qb, model, naks })
}

/// b sent one NAK, invalid request at `psn`, and its QP is in ERR: the status of its receive
/// WQE 2.
fn naked_invalid_request(
    w: &mut World,
    qb: &QueuePair,
    naks: &Rc<RefCell<Vec<Bth>>>,
    psn: u32,
) -> Result<u32> {
    let nk = naks.borrow().clone();
    ensure!(
        nk.len() == 1 && nk[0].syndrome == Some(AETH_NAK_INV_REQ) && nk[0].psn == psn,
        "NAKs on the wire {nk:?}"
    );
    ensure!(
        w.b.dev.query_qp(qb)?.state == Some(QpState::Err),
        "b's QP is not in ERR"
    );
    let mut wcs = w.b.dev.poll_cq(&mut w.b.cq, 8)?;
    wcs.retain(|c| c.wr_id == 2);
    ensure!(wcs.len() == 1, "b's second receive: {wcs:?}");
    Ok(wcs[0].status)
}

/// A gap NAKed once is closed by any request at the expected PSN, a READ too (rxe clears
/// `sent_psn_nak` in `check_psn`): a peer that only READs and loses two requests far apart gets
/// a sequence NAK for each, and never waits for its ACK timer.
#[test]
fn a_read_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too() -> Result<()> {
    each_gap_naked(
        "a_read_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too",
        false,
    )
}

/// The same for atomics: a peer that only sends FETCH_AND_ADDs and loses two far apart gets a
/// sequence NAK for each; every atomic is done once (the results count up by one).
#[test]
fn an_atomic_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too() -> Result<()> {
    each_gap_naked(
        "an_atomic_at_the_expected_psn_ends_a_gap_so_the_next_gap_is_naked_too",
        true,
    )
}

/// Forty READs of 64 bytes (or FETCH_AND_ADDs of 1 to one word), two of them lost the first
/// time they go, far apart: all complete SUCCESS with the right bytes, b NAKs two gaps and a
/// never times out.
fn each_gap_naked(test: &str, atomic: bool) -> Result<()> {
    let s = seed(test);
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(8);
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 64)?;
    let src: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    let sb = w.b.buffer(4096, &src)?;
    let da = w.a.buffer(64 * 64, &vec![0; 64 * 64])?;
    let op = if atomic {
        RC_FETCH_ADD
    } else {
        RC_RDMA_READ_REQUEST
    };
    // The requests a sends, counted as they first go: the two by plan are lost.
    let (first, second) = (r.gen_range(2..8usize), r.gen_range(20..28usize));
    let seen = Rc::new(RefCell::new(Vec::<u32>::new()));
    let s2 = seen.clone();
    w.ab.set_fault_hook(move |_, f| {
        let Some(b) = bth(f) else { return Fault::Pass };
        if b.opcode != op {
            return Fault::Pass;
        }
        // (The k-th request is the k-th PSN seen; a retransmission passes.)
        let mut v = s2.borrow_mut();
        if v.contains(&b.psn) {
            return Fault::Pass;
        }
        let k = v.len();
        v.push(b.psn);
        if k == first || k == second {
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let n = 40u64;
    let wrs: Vec<SendWr> = (0..n)
        .map(|i| SendWr {
            wr_id: i,
            opcode: if atomic {
                WrOpcode::AtomicFetchAndAdd
            } else {
                WrOpcode::RdmaRead
            },
            sg_list: vec![Sge {
                addr: da.addr + 64 * i,
                length: if atomic { 8 } else { 64 },
                lkey: da.lkey,
            }],
            remote_addr: sb.addr + if atomic { 0 } else { 64 * i },
            rkey: sb.rkey,
            compare_add: 1,
            signaled: true,
            ..Default::default()
        })
        .collect();
    w.a.dev.post_send(&mut qa, &wrs)?;
    let got = reap(
        &mut w,
        0,
        n as usize,
        budget(400_000),
        &format!("seed {s}: the requests"),
    )?;
    for (i, c) in got.iter().enumerate() {
        ensure!(
            c.wr_id == i as u64 && c.status == WC_SUCCESS,
            "seed {s}: {c:?}"
        );
    }
    let mut mem = vec![0u8; 64 * 64];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    if atomic {
        // Done once each, in order: the k-th saw the word plus k.
        let word = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let at0 = word(&src);
        for i in 0..n as usize {
            let got = word(&mem[64 * i..]);
            ensure!(
                got == at0.wrapping_add(i as u64),
                "seed {s}: atomic {i} returned {got:#x}, not {:#x}",
                at0.wrapping_add(i as u64)
            );
        }
        let mut end = [0u8; 8];
        w.b.dev.mem.read(sb.addr, &mut end)?;
        ensure!(
            u64::from_le_bytes(end) == at0.wrapping_add(n),
            "seed {s}: the word ends at {:#x}",
            u64::from_le_bytes(end)
        );
    } else {
        ensure!(
            mem[..64 * n as usize] == src[..64 * n as usize],
            "seed {s}: bytes"
        );
    }
    let (sa, sb) = (w.a.dev.rc_stats()?, w.b.dev.rc_stats()?);
    ensure!(
        sb.seq_nak_tx == 2 && sa.timeouts == 0,
        "seed {s}: requests {first} and {second} lost: b NAKed {} gaps, a timed out {} times",
        sb.seq_nak_tx,
        sa.timeouts
    );
    Ok(())
}

/// An RC opcode the NIC does not implement (SEND with Invalidate, as NFS/RDMA servers send)
/// at the expected PSN is answered NAK invalid request (IBA 9.7.5.2.2; rxe's
/// `check_op_valid`), which fails the QP: its receive WQEs flush. (It was dropped silently:
/// the sender retried the same packet until it ran out of retries.) The NAK, caught on the
/// wire, names the packet's PSN; at a, which never sent that PSN, it is a ghost and dropped.
#[test]
fn an_unsupported_opcode_at_the_expected_psn_is_naked_invalid_request() -> Result<()> {
    let s = seed("an_unsupported_opcode_at_the_expected_psn_is_naked_invalid_request");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let SendModel { qb, model, naks } = send_model(&mut w, &mut r, 1024, 4096, 100)?;
    // SEND ONLY with Invalidate (0x17): IETH (the rkey to invalidate) before the payload,
    // at the PSN b expects next.
    let mut p = model.clone();
    p.opcode = 0x17;
    p.psn = (model.psn + 1) & 0xFF_FFFF;
    p.ext = r.gen::<u32>().to_be_bytes().to_vec();
    p.payload = (0..r.gen_range(0..=64)).map(|_| r.gen()).collect();
    w.ab.inject(0, &p.frame()?);
    w.run(20_000)?;
    ensure!(
        w.b.counter("resp_unsupported")? == 1,
        "seed {s}: b: {}",
        nonzero_counters(&w.b)
    );
    // b's receive WQE 2 flushes; a drops the NAK for a PSN it never sent.
    let second =
        naked_invalid_request(&mut w, &qb, &naks, p.psn).with_context(|| format!("seed {s}"))?;
    ensure!(
        second == WC_WR_FLUSH_ERR,
        "seed {s}: b's second receive {second}"
    );
    ensure!(
        w.a.counter("cpl_ghosts")? == 1,
        "seed {s}: a: {}",
        nonzero_counters(&w.a)
    );
    Ok(())
}

/// A SEND's LAST packet carries at least one byte (rxe's `check_length`: a FIRST or MIDDLE
/// is exactly one PMTU, so a message of whole PMTUs ends with a full LAST, never an empty
/// one): a SEND FIRST and an empty LAST forged from a real SEND at the expected PSNs, at a
/// random PMTU, get NAK invalid request at the LAST's PSN, `bad_req` counts it, the QP fails
/// and the receive WQE the FIRST began completes REM_INV_REQ_ERR, the error itself (as rxe
/// completes the WQE in use), not SUCCESS with a PMTU of bytes, nor WR_FLUSH_ERR.
#[test]
fn an_empty_send_last_is_naked_invalid_request() -> Result<()> {
    use ferroce_spec::opcodes::{RC_SEND_FIRST, RC_SEND_LAST};
    let s = seed("an_empty_send_last_is_naked_invalid_request");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let pmtu = 256u32 << r.gen_range(0..5);
    let len = r.gen_range(1..=pmtu);
    let SendModel { qb, model, naks } = send_model(&mut w, &mut r, pmtu, 8192, len)?;
    let bad0 = w.b.counter("resp_bad_req")?;
    let mut first = model.clone();
    first.opcode = RC_SEND_FIRST;
    first.ack_req = false;
    first.psn = (model.psn + 1) & 0xFF_FFFF;
    first.payload = (0..pmtu).map(|_| r.gen()).collect();
    let mut last = model.clone();
    last.opcode = RC_SEND_LAST;
    last.psn = (model.psn + 2) & 0xFF_FFFF;
    last.payload = Vec::new();
    w.ab.inject(0, &first.frame()?);
    w.run(5_000)?;
    // (58 bytes: padded to Ethernet's 60 before the FCS, as a MAC sends it.)
    let mut f = last.frame()?;
    f.resize(f.len().max(60), 0);
    w.ab.inject(0, &f);
    w.run(20_000)?;
    ensure!(
        w.b.counter("resp_bad_req")? == bad0 + 1,
        "seed {s}: PMTU {pmtu}: b: {}",
        nonzero_counters(&w.b)
    );
    let second = naked_invalid_request(&mut w, &qb, &naks, last.psn)
        .with_context(|| format!("seed {s}: PMTU {pmtu}"))?;
    ensure!(
        second == WC_REM_INV_REQ_ERR,
        "seed {s}: PMTU {pmtu}: the receive the FIRST began completed {second}, not \
         REM_INV_REQ_ERR"
    );
    println!(
        "seed {s}: PMTU {pmtu}: an empty SEND LAST NAKed invalid request, the receive {second}"
    );
    Ok(())
}

/// A NAK with a code IBA reserves (syndrome 011 with a code above 3, or the reserved 010) is
/// a refusal that does not say why: the request it names completes REM_OP_ERR and the QP
/// fails, as rxe does (it used to move `una` and nothing else: with `timeout` 0 the WRITE
/// waited for ever).
#[test]
fn a_nak_with_a_reserved_code_fails_the_request_as_a_remote_operational_error() -> Result<()> {
    use ferroce_spec::queues::WC_REM_OP_ERR;
    let s = seed("a_nak_with_a_reserved_code_fails_the_request_as_a_remote_operational_error");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    w.retry.timeout = Some(0);
    let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let sa = w.a.buffer(4096, &vec![0x21; 4096])?;
    let db = w.b.buffer(4096, &vec![0; 4096])?;
    // b's ACKs are lost; the first is kept as the model of the forged NAK (which passes).
    let caught: Rc<RefCell<Option<Vec<u8>>>> = Rc::default();
    let c = caught.clone();
    let forged = Rc::new(std::cell::Cell::new(false));
    let fg = forged.clone();
    w.ba.set_fault_hook(move |_, f| {
        if bth(f).is_some_and(|b| b.opcode == 0x11) && !fg.get() {
            c.borrow_mut()
                .get_or_insert_with(|| f[..f.len() - 4].to_vec());
            Fault::Drop
        } else {
            Fault::Pass
        }
    })?;
    let wr = |id: u64| SendWr {
        wr_id: id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: sa.addr,
            length: 200,
            lkey: sa.lkey,
        }],
        remote_addr: db.addr,
        rkey: db.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[wr(1), wr(2)])?;
    w.run_until(100_000, "b's ACK", || caught.borrow().is_some())?;
    w.run(5_000)?;
    ensure!(
        w.a.dev.poll_cq(&mut w.a.cq, 8)?.is_empty(),
        "seed {s}: completed unACKed"
    );
    let mut nak = TxPacket::parse(&caught.borrow().clone().context("no ACK")?)?;
    // (The ACK names the first WRITE's PSN; the NAK names it too.)
    nak.ext[0] = if r.gen_bool(0.5) {
        0x60 | r.gen_range(4..32)
    } else {
        0x40 | r.gen_range(0..32)
    };
    forged.set(true);
    w.ba.inject(0, &nak.frame()?);
    let mut got = Vec::new();
    for _ in 0..40 {
        w.run(1_000)?;
        got.extend(w.a.dev.poll_cq(&mut w.a.cq, 8)?);
        if got.len() >= 2 {
            break;
        }
    }
    let st: Vec<(u64, u32)> = got.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(
        st == [(1, WC_REM_OP_ERR), (2, WC_WR_FLUSH_ERR)],
        "seed {s}: syndrome {:#x}: {st:?}",
        nak.ext[0]
    );
    ensure!(
        w.a.dev.query_qp(&qa)?.state == Some(QpState::Err),
        "seed {s}: a's QP is not in ERR"
    );
    Ok(())
}

/// A QP keeps at most its `max_rd_atomic` READs outstanding (`modify_qp` at RTR -> RTS: the
/// peer's `max_dest_rd_atomic`, which may be as low as 1 on hardware); it was always 16, so a
/// peer with fewer responder resources was over-subscribed. Counted on the wires: READ
/// requests sent less READs answered (their LAST or ONLY response) never pass the limit, and
/// reach it.
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
    let out = Rc::new(std::cell::Cell::new((0i64, 0i64)));
    let (o1, o2) = (out.clone(), out.clone());
    w.ab.set_fault_hook(move |_, f| {
        if bth(f).is_some_and(|b| b.opcode == RC_RDMA_READ_REQUEST) {
            let (now, most) = o1.get();
            o1.set((now + 1, most.max(now + 1)));
        }
        Fault::Pass
    })?;
    w.ba.set_fault_hook(move |_, f| {
        // READ RESPONSE LAST (0x0F) or ONLY (0x10): a READ answered.
        if bth(f).is_some_and(|b| b.opcode == 0x0F || b.opcode == 0x10) {
            let (now, most) = o2.get();
            o2.set((now - 1, most));
        }
        Fault::Pass
    })?;
    let wrs: Vec<SendWr> = (0..n)
        .map(|i| SendWr {
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
    let mut mem = vec![0u8; src.len()];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    ensure!(mem == src, "seed {s}: bytes");
    let (now, most) = out.get();
    ensure!(
        now == 0 && most == i64::from(limit),
        "seed {s}: at most {most} READs outstanding with max_rd_atomic {limit} ({now} left)"
    );
    Ok(())
}

/// A QP's own remote access rights (`qp_access_flags`, rxe's `check_op_valid`) bound what a
/// request may do besides the region's: a QP that allows remote READ but not WRITE serves a
/// READ of a region that allows both, and refuses a WRITE to it with NAK remote access error,
/// writing nothing (every QP in the PD reached any region before).
#[test]
fn a_qp_without_remote_write_refuses_writes_its_regions_allow() -> Result<()> {
    use ferroce_driver::{access, QpAttr};
    use ferroce_spec::queues::WC_REM_ACCESS_ERR;
    let s = seed("a_qp_without_remote_write_refuses_writes_its_regions_allow");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut qa, mut qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    w.b.dev.modify_qp(
        &mut qb,
        QpState::Rts,
        QpAttr {
            access: Some(access::REMOTE_READ),
            ..QpAttr::default()
        },
    )?;
    let img: Vec<u8> = (0..4096).map(|_| r.gen()).collect();
    let tb = w.b.buffer(4096, &img)?;
    let sa = w.a.buffer(4096, &vec![0xEE; 4096])?;
    let da = w.a.buffer(4096, &vec![0; 4096])?;
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

/// BTH's PadCnt makes a packet's payload whole words (IBA 9.2; rxe checks a WRITE's pad
/// against the bytes it has left). A WRITE ONLY forged from a real one at the expected PSN,
/// its payload a random length not a multiple of 4 with PadCnt 0 and no pad bytes (lengths,
/// checksum and ICRC right), is dropped and counted by the parser (`rx_bad_len`): no byte
/// written, no NAK, the QP in RTS. The same WRITE with its pad lands.
#[test]
fn a_write_whose_pad_count_leaves_its_payload_unaligned_is_dropped() -> Result<()> {
    use ferroce_spec::opcodes::RC_RDMA_WRITE_ONLY;
    let s = seed("a_write_whose_pad_count_leaves_its_payload_unaligned_is_dropped");
    let mut r = rng(s);
    let mut w = World::open(&WorldConfig::default())?;
    let (mut qa, qb) = w.connect(1024, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let sa = w.a.buffer(64, &[0x11; 64])?;
    let tb = w.b.buffer(4096, &vec![0; 4096])?;
    let caught = ferroce_tests::catch_first(&w.ab, RC_RDMA_WRITE_ONLY)?;
    let write = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: sa.addr,
            length: 64,
            lkey: sa.lkey,
        }],
        remote_addr: tb.addr,
        rkey: tb.rkey,
        signaled: true,
        ..Default::default()
    };
    w.a.dev.post_send(&mut qa, &[write])?;
    let got = reap(&mut w, 0, 1, budget(50_000), &format!("seed {s}"))?;
    ensure!(got[0].status == WC_SUCCESS, "seed {s}: {:?}", got[0]);
    let model = TxPacket::parse(&caught.borrow().clone().context("no WRITE caught")?)?;
    let naks = watch_naks(&w)?;
    // At the PSN b expects next, 1 KiB into b's region.
    let len = 4 * r.gen_range(1..200usize) + r.gen_range(1..=3usize);
    let mut p = model.clone();
    p.psn = (model.psn + 1) & 0xFF_FFFF;
    p.payload = (0..len).map(|_| r.gen()).collect();
    p.ext[..8].copy_from_slice(&(tb.addr + 1024).to_be_bytes());
    p.ext[12..16].copy_from_slice(&(len as u32).to_be_bytes());
    let bad = without_pad(&p)?;
    let bad0 = w.b.counter("rx_bad_len")?;
    w.ab.inject(0, &bad);
    w.run(20_000)?;
    ensure!(
        w.b.counter("rx_bad_len")? == bad0 + 1,
        "seed {s}: {len} B, PadCnt 0: b: {}",
        nonzero_counters(&w.b)
    );
    let mut mem = vec![0u8; 4096];
    w.b.dev.mem.read(tb.addr, &mut mem)?;
    ensure!(
        mem[64..].iter().all(|&b| b == 0),
        "seed {s}: {len} B, PadCnt 0: written"
    );
    ensure!(
        naks.borrow().is_empty(),
        "seed {s}: NAKs {:?}",
        naks.borrow()
    );
    ensure!(
        w.b.dev.query_qp(&qb)?.state == Some(QpState::Rts),
        "seed {s}: b's QP left RTS"
    );
    // The same WRITE with its pad: it lands.
    w.ab.inject(0, &p.frame()?);
    w.run(20_000)?;
    w.b.dev.mem.read(tb.addr, &mut mem)?;
    ensure!(
        mem[1024..1024 + len] == p.payload[..],
        "seed {s}: {len} B with its pad: not landed"
    );
    println!("seed {s}: a {len} B WRITE ONLY with PadCnt 0 dropped, with its pad landed");
    Ok(())
}

/// NAKs b sends from now on.
fn watch_naks(w: &World) -> Result<Rc<RefCell<Vec<Bth>>>> {
    let naks = Rc::new(RefCell::new(Vec::<Bth>::new()));
    let n2 = naks.clone();
    w.ba.set_fault_hook(move |_, f| {
        if let Some(b) = bth(f).filter(|b| b.syndrome.is_some_and(|s| s >> 5 != 0)) {
            n2.borrow_mut().push(b);
        }
        Fault::Pass
    })?;
    Ok(naks)
}

/// `p`'s frame with PadCnt 0 and its pad bytes taken out: the IPv4 and UDP lengths, the IPv4
/// checksum and the ICRC made right for what is left.
fn without_pad(p: &TxPacket) -> Result<Vec<u8>> {
    let mut f = p.frame_without_icrc();
    let pad = (4 - p.payload.len() % 4) % 4;
    let ip = p.l3_offset();
    let n = f.len();
    f.drain(n - 4 - pad..n - 4);
    f[ip + 28 + 1] &= !0x30;
    for at in [ip + 2, ip + 24] {
        let l = u16::from_be_bytes([f[at], f[at + 1]]) - pad as u16;
        f[at..at + 2].copy_from_slice(&l.to_be_bytes());
    }
    f[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let sum: u32 = f[ip..ip + 20]
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    let sum = (sum & 0xFFFF) + (sum >> 16);
    let ck = !((sum & 0xFFFF) + (sum >> 16)) as u16;
    f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
    let (_, end) = ferroce_spec::icrc::parse(&f)?;
    let ic = ferroce_spec::icrc::icrc(&f)?;
    f[end..end + 4].copy_from_slice(&ic.to_le_bytes());
    Ok(f)
}
