//! Protocol corners of the RC transport found by a read against IBA and rxe: each test names
//! the rule, and each failed before its fix.

use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, QpState, QueuePair, RecvWr, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::headers::AETH_NAK_INV_REQ;
use ferroce_spec::opcodes::RC_SEND_ONLY;
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
