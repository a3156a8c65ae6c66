//! Work requests the NIC refuses: bad WQEs, forged lkeys, SGE lists it cannot take; each
//! completes with its error and reads nothing.

use super::*;

#[test]
fn bad_wqes_are_refused_and_reported_and_idle_qps_send_nothing() -> Result<()> {
    let s = seed("bad_wqes_are_refused_and_reported_and_idle_qps_send_nothing");
    let mut r = rng(s);
    let mut nic = open(s)?;
    let cq = nic.dev.create_cq(16)?;
    let pd = nic.dev.alloc_pd()?;
    let mut qp = rts_qp(&mut nic.dev, &pd, &cq, 1024, 0x200, 77)?;
    // A QP left in INIT: its doorbell is ignored.
    let mut idle = nic.dev.create_qp(&pd, &cq, 8)?;
    nic.dev
        .modify_qp(&mut idle, QpState::Init, QpAttr::default())?;
    let buf = nic.dev.mem.alloc(100, 64)?;
    let mr = nic.dev.reg_mr(&pd, buf.addr, 100, 0)?;
    let good = SendWr {
        wr_id: 1,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: buf.addr,
            length: 100,
            lkey: mr.lkey,
        }],
        remote_addr: 0x1000,
        rkey: 5,
        signaled: true,
        ..Default::default()
    };
    // A WQE with an opcode that names no work request (past the atomics), written behind
    // the driver's back, before two good ones: it completes at once with an error and fails
    // the QP (IBA 10.7.3.1), so the good ones flush and nothing goes out.
    let mut bad = good.wqe();
    bad[0] = [7, 8, 0x20, 0x80, 0xFF][r.gen_range(0..5)];
    bad[8] = 1;
    let slot = u64::from(qp.sq_pi) & ((1 << qp.sq_log_size) - 1);
    nic.dev
        .mem
        .write(qp.sq.addr + slot * WQE_LEN as u64, &bad)?;
    qp.sq_pi += 1;
    nic.dev.ring_sq_doorbell(qp.qpn, qp.sq_pi)?;
    nic.dev
        .post_send(&mut qp, &[good.clone(), SendWr { wr_id: 3, ..good }])?;
    nic.dev.ring_sq_doorbell(idle.qpn, 5)?;
    let mut cq = cq;
    let mut wcs = Vec::new();
    nic.sim.borrow_mut().run(5000)?;
    for _ in 0..40 {
        wcs.extend(nic.dev.poll_cq(&mut cq, 16)?);
        if wcs.len() >= 3 {
            break;
        }
        nic.sim.borrow_mut().run(5000)?;
    }
    let got: Vec<(u64, u32, u32)> = wcs.iter().map(|c| (c.wr_id, c.status, c.qpn)).collect();
    ensure!(
        got == [
            (1, WC_LOC_QP_OP_ERR, qp.qpn),
            (1, WC_WR_FLUSH_ERR, qp.qpn),
            (3, WC_WR_FLUSH_ERR, qp.qpn)
        ],
        "seed {s}: {wcs:?}"
    );
    // Nothing went out, no PSN was used, the QP reads ERR.
    nic.sim.borrow_mut().run(5000)?;
    ensure!(
        nic.wire.borrow().count() == 0,
        "seed {s}: {} frames",
        nic.wire.borrow().count()
    );
    let q = nic.dev.query_qp(&qp)?;
    ensure!(
        q.sq_psn == 77 && q.state == Some(QpState::Err),
        "seed {s}: {q:?}"
    );
    ensure!(nic.sim.borrow().tb.get("req_bad_wqe")? == 1);
    ensure!(nic.sim.borrow().tb.get("req_dma_err")? == 0);
    ensure!(nic.dev.query_qp(&idle)?.state == Some(QpState::Init));
    Ok(())
}

/// WQEs written into the ring behind the driver's back, each with a local buffer its lkey does
/// not cover, each on a QP of its own with a good WQE behind it: the NIC refuses every one with
/// LOC_PROT_ERR and fails its QP (the good one behind it flushes), reads none of their buffers
/// (the root complex sees only the WQE fetches) and sends nothing for them; the good WQE on
/// a QP of its own goes out, with its first PSN.
#[test]
fn forged_lkeys_complete_with_loc_prot_err_and_read_nothing() -> Result<()> {
    let s = seed("forged_lkeys_complete_with_loc_prot_err_and_read_nothing");
    let mut r = rng(s);
    let mut nic = open(s)?;
    let mut cq = nic.dev.create_cq(32)?;
    let (pd, other_pd) = (nic.dev.alloc_pd()?, nic.dev.alloc_pd()?);
    let psn = r.gen_range(0..1 << 24);
    let mut qp = rts_qp(&mut nic.dev, &pd, &cq, 1024, 0x400, psn)?;
    let buf = nic.dev.mem.alloc(8192, 4096)?;
    let mr = nic.dev.reg_mr(&pd, buf.addr + 64, 1024, 0)?;
    let foreign = nic.dev.reg_mr(&other_pd, buf.addr, 8192, 0)?;
    let gone = nic.dev.reg_mr(&pd, buf.addr, 8192, 0)?;
    nic.dev.dereg_mr(&gone)?;
    // A region the NIC would accept, to show its key alone is not enough.
    let len = r.gen_range(1..=1024u32);
    let good = SendWr {
        wr_id: 100,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: buf.addr + 64 + u64::from(1024 - len),
            length: len,
            lkey: mr.lkey,
        }],
        remote_addr: 0x1000,
        rkey: 5,
        signaled: true,
        ..Default::default()
    };
    let forged = [
        // Wrong tag: a stale or guessed key for the region's index.
        with_sge(&good, |s| s.lkey = mr.lkey ^ r.gen_range(1..=255)),
        // A key of another PD, covering the buffer.
        with_sge(&good, |s| s.lkey = foreign.lkey),
        // One byte past the region's end.
        with_sge(&good, |s| s.addr = buf.addr + 64 + u64::from(1025 - len)),
        // One byte before its start.
        with_sge(&good, |s| s.addr = buf.addr + 63),
        // A deregistered region's key.
        with_sge(&good, |s| s.lkey = gone.lkey),
        // Tag 0 at an index that was never used.
        with_sge(&good, |s| s.lkey = 200 << 8),
        // Host memory nobody registered or allocated.
        with_sge(&good, |s| s.addr = 0x7ead_0000_0000),
        // A length that wraps the address space.
        with_sge(&good, |s| {
            s.addr = u64::MAX - 10;
            s.length = 100;
        }),
    ];
    let before = nic.sim.borrow().rc.borrow().dma_stats();
    let images: Vec<[u8; WQE_LEN]> = forged.iter().map(|w| w.wqe()).collect();
    let want = each_on_its_own_qp(
        &mut nic,
        (&pd, &cq, psn),
        &images,
        &[WC_LOC_PROT_ERR; 8],
        &good,
    )?;
    nic.dev.post_send(&mut qp, &[good])?;
    let wire = nic.wire.clone();
    nic.sim
        .borrow_mut()
        .run_until(200_000, "the good WRITE", |_| wire.borrow().count() >= 1)?;
    nic.sim.borrow_mut().run(5000)?;
    let got = completions(&mut nic, &mut cq, want.len())?;
    ensure!(got == want, "seed {s}: completions {got:?}, want {want:?}");
    let after = nic.sim.borrow().rc.borrow().dma_stats();
    let wqes = ((2 * forged.len() + 1) * WQE_LEN) as u64;
    ensure!(
        after.read_bytes - before.read_bytes == wqes + u64::from(len),
        "seed {s}: the NIC read {} bytes, the WQEs are {wqes} and the good source {len}",
        after.read_bytes - before.read_bytes
    );
    let f = wire.borrow_mut().recv().context("frame")?.data;
    let body = strip_fcs(0, &f)?;
    let got_psn = u32::from_be_bytes([0, body[51], body[52], body[53]]);
    ensure!(
        (body[42], got_psn) == (RC_RDMA_WRITE_ONLY, psn),
        "seed {s}: opcode {:#x}, PSN {got_psn}, want WRITE ONLY with {psn}",
        body[42]
    );
    ensure!(wire.borrow().count() == 0, "more frames");
    ensure!(nic.sim.borrow().tb.get("req_prot_err")? == forged.len() as u64);
    ensure!(nic.sim.borrow().tb.get("req_bad_wqe")? == 0);
    ensure!(nic.sim.borrow().rc.borrow().violations.is_empty());
    Ok(())
}

/// Scatter/gather lists the NIC refuses, written into the ring behind the driver's back, each
/// on a QP of its own with a good WQE behind it: a forged key on the last of four SGEs and one
/// SGE a byte past its region (LOC_PROT_ERR), five SGEs (LOC_QP_OP_ERR), SGEs that add up to
/// more than 2^31 bytes (LOC_LEN_ERR). None reads a byte of its buffers or sends a packet, and
/// each fails its QP (the WQE behind it flushes); a good four-SGE WQE (an empty SGE in the
/// middle) on a QP of its own goes out as one packet of its SGEs' bytes in order.
#[test]
fn sge_lists_the_nic_refuses_complete_with_their_error_and_read_nothing() -> Result<()> {
    let s = seed("sge_lists_the_nic_refuses_complete_with_their_error_and_read_nothing");
    let mut r = rng(s);
    let mut nic = open(s)?;
    let mut cq = nic.dev.create_cq(32)?;
    let pd = nic.dev.alloc_pd()?;
    let psn = r.gen_range(0..1 << 24);
    let mut qp = rts_qp(&mut nic.dev, &pd, &cq, 4096, 0x400, psn)?;
    let buf = nic.dev.mem.alloc(8192, 4096)?;
    let mr = nic.dev.reg_mr(&pd, buf.addr, 8192, 0)?;
    // A region of 2^31 + 4 KiB that no memory backs: the NIC must refuse before reading it.
    let huge = nic.dev.reg_mr(&pd, 0x7e00_0000_0000, (1 << 31) + 4096, 0)?;
    let bytes: Vec<u8> = (0..8192).map(|_| r.gen()).collect();
    nic.dev.mem.write(buf.addr, &bytes)?;
    let sge = |off: u64, len: u32| Sge {
        addr: buf.addr + off,
        length: len,
        lkey: mr.lkey,
    };
    // Four pieces from all over the buffer, crossing its page boundary; one empty.
    let pieces = [
        (r.gen_range(0..100u64), r.gen_range(1..=300u32)),
        (4000 + r.gen_range(0..50u64), r.gen_range(100..=900u32)),
        (r.gen_range(0..8000u64), 0),
        (r.gen_range(5000..7000u64), r.gen_range(1..=1000u32)),
    ];
    let good = SendWr {
        wr_id: 100,
        opcode: WrOpcode::RdmaWrite,
        sg_list: pieces.iter().map(|&(o, l)| sge(o, l)).collect(),
        remote_addr: 0x1000,
        rkey: 5,
        signaled: true,
        ..Default::default()
    };
    let want: Vec<u8> = pieces
        .iter()
        .flat_map(|&(o, l)| bytes[o as usize..(o as usize + l as usize)].to_vec())
        .collect();
    let mut forged_key = good.clone();
    forged_key.sg_list[3].lkey ^= r.gen_range(1..=255);
    let mut past_end = good.clone();
    past_end.sg_list[1] = sge(8000, 193);
    let mut too_long = good.clone();
    let half = (1u32 << 30) + 1;
    too_long.sg_list = vec![
        Sge {
            addr: huge.addr,
            length: half,
            lkey: huge.lkey,
        },
        Sge {
            addr: huge.addr + u64::from(half),
            length: half,
            lkey: huge.lkey,
        },
    ];
    let mut five = good.wqe();
    WQE.set(&WQE.field("num_sge"), &mut five, MAX_SGE as u128 + 1);
    let images = [forged_key.wqe(), past_end.wqe(), five, too_long.wqe()];
    let before = nic.sim.borrow().rc.borrow().dma_stats();
    let want_wcs = each_on_its_own_qp(
        &mut nic,
        (&pd, &cq, psn),
        &images,
        &[
            WC_LOC_PROT_ERR,
            WC_LOC_PROT_ERR,
            WC_LOC_QP_OP_ERR,
            WC_LOC_LEN_ERR,
        ],
        &good,
    )?;
    let size = 1u64 << qp.sq_log_size;
    let slot = u64::from(qp.sq_pi) & (size - 1);
    nic.dev
        .mem
        .write(qp.sq.addr + slot * WQE_LEN as u64, &good.wqe())?;
    qp.sq_pi += 1;
    nic.dev.ring_sq_doorbell(qp.qpn, qp.sq_pi)?;
    let wire = nic.wire.clone();
    nic.sim
        .borrow_mut()
        .run_until(200_000, "the good WRITE", |_| wire.borrow().count() >= 1)?;
    nic.sim.borrow_mut().run(5000)?;
    let got = completions(&mut nic, &mut cq, want_wcs.len())?;
    ensure!(
        got == want_wcs,
        "seed {s}: completions {got:?}, want {want_wcs:?}"
    );
    let after = nic.sim.borrow().rc.borrow().dma_stats();
    let wqes = ((2 * images.len() + 1) * WQE_LEN) as u64;
    ensure!(
        after.read_bytes - before.read_bytes == wqes + want.len() as u64,
        "seed {s}: the NIC read {} bytes, the WQEs are {wqes} and the good sources {}",
        after.read_bytes - before.read_bytes,
        want.len()
    );
    let f = wire.borrow_mut().recv().context("frame")?.data;
    let body = strip_fcs(0, &f)?;
    let got_psn = u32::from_be_bytes([0, body[51], body[52], body[53]]);
    ensure!(
        (body[42], got_psn) == (RC_RDMA_WRITE_ONLY, psn),
        "seed {s}: opcode {:#x}, PSN {got_psn}, want WRITE ONLY with {psn}",
        body[42]
    );
    // BTH 12 + RETH 16 after the 42 header bytes; then the payload, pad and ICRC.
    let pay = &body[42 + 12 + 16..];
    ensure!(
        pay.len() >= want.len() && pay[..want.len()] == want[..],
        "seed {s}: the payload is not the SGEs' bytes in order"
    );
    let dlen = u32::from_be_bytes([body[66], body[67], body[68], body[69]]);
    ensure!(dlen as usize == want.len(), "seed {s}: RETH length {dlen}");
    ensure!(wire.borrow().count() == 0, "more frames");
    ensure!(nic.sim.borrow().tb.get("req_prot_err")? == 2);
    ensure!(nic.sim.borrow().tb.get("req_bad_wqe")? == 2);
    ensure!(nic.sim.borrow().rc.borrow().violations.is_empty());
    Ok(())
}
