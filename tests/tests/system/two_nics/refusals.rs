//! What a NIC refuses: bad keys and ranges, a foreign P_Key, oversize packets and overlong
//! writes; none writes a byte.

use super::*;

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
