//! A QP modified, failed or reset while its peer and other QPs run.

use super::*;

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
