//! What the driver refuses before the NIC sees it: bad send and receive lists.

use super::*;

#[test]
fn post_send_refuses_bad_lists_whole_and_rings_no_doorbell() -> Result<()> {
    let s = seed("post_send_refuses_bad_lists_whole_and_rings_no_doorbell");
    let mut nic = open(s)?;
    let cq = nic.dev.create_cq(16)?;
    let (pd, other_pd) = (nic.dev.alloc_pd()?, nic.dev.alloc_pd()?);
    let mut qp = rts_qp(&mut nic.dev, &pd, &cq, 256, 0x300, 0)?;
    let buf = nic.dev.mem.alloc(4096, 4096)?;
    let mr = nic.dev.reg_mr(&pd, buf.addr + 64, 1024, 0)?;
    let foreign = nic.dev.reg_mr(&other_pd, buf.addr, 4096, 0)?;
    let good = SendWr {
        wr_id: 9,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: buf.addr + 64,
            length: 1024,
            lkey: mr.lkey,
        }],
        remote_addr: 0,
        rkey: 1,
        signaled: true,
        ..Default::default()
    };
    let cases: Vec<(SendWr, &str)> = vec![
        (with_sge(&good, |s| s.lkey = 0), "BadKey"),
        (with_sge(&good, |s| s.lkey = mr.lkey ^ 0x100), "BadKey"),
        (with_sge(&good, |s| s.addr = buf.addr), "OutOfRegion"),
        (with_sge(&good, |s| s.length = 1025), "OutOfRegion"),
        (with_sge(&good, |s| s.lkey = foreign.lkey), "Invalid"),
        (with_sge(&good, |s| s.length = (1 << 31) + 1), "Invalid"),
    ];
    for (bad, what) in &cases {
        // The bad request last in a list: nothing of the list is posted.
        let r = nic.dev.post_send(&mut qp, &[good.clone(), bad.clone()]);
        let name = match &r {
            Err(DriverError::BadKey { .. }) => "BadKey",
            Err(DriverError::OutOfRegion { .. }) => "OutOfRegion",
            Err(DriverError::Invalid(_)) => "Invalid",
            other => anyhow::bail!("{bad:?}: {other:?}"),
        };
        ensure!(name == *what, "{bad:?}: {name}, want {what}");
        ensure!(qp.sq_pi == 0, "a refused list moved the producer index");
    }
    // A deregistered region's key stops working; the ring has 64 entries.
    nic.dev.dereg_mr(&foreign)?;
    ensure!(matches!(
        nic.dev
            .post_send(&mut qp, &[with_sge(&good, |s| s.lkey = foreign.lkey)]),
        Err(DriverError::BadKey { .. })
    ));
    ensure!(matches!(
        nic.dev.post_send(&mut qp, &vec![good.clone(); 65]),
        Err(DriverError::QueueFull {
            free: 64,
            asked: 65,
            ..
        })
    ));
    let mut init = nic.dev.create_qp(&pd, &cq, 4)?;
    ensure!(
        nic.dev
            .post_send(&mut init, std::slice::from_ref(&good))
            .is_err(),
        "post_send in RESET"
    );
    nic.sim.borrow_mut().run(3000)?;
    ensure!(nic.wire.borrow().count() == 0);
    // Zero-length requests need no region (verbs allows an empty SGE).
    nic.dev.post_send(
        &mut qp,
        &[with_sge(&good, |s| {
            s.length = 0;
            s.lkey = 0;
        })],
    )?;
    let wire = nic.wire.clone();
    nic.sim
        .borrow_mut()
        .run_until(100_000, "one frame", |_| wire.borrow().count() == 1)?;
    Ok(())
}

/// Receive queues, the host side: `post_recv` writes each receive WQE into the QP's receive
/// ring (checked at the byte offsets `RECV_WQE` gives, written out here) and rings the
/// receive doorbell, and a move to RESET discards what was posted (the context's `rq_ci`
/// catches up with the producer index). The NIC does not take receive WQEs yet. Lists the
/// driver refuses (a region without local write access, a key that does not cover its
/// buffer, five SGEs, more than the ring holds, RESET) post nothing.
#[test]
fn post_recv_fills_the_receive_ring_and_refuses_bad_lists_whole() -> Result<()> {
    let s = seed("post_recv_fills_the_receive_ring_and_refuses_bad_lists_whole");
    let mut r = rng(s);
    let mut nic = open(s)?;
    let cq = nic.dev.create_cq(64)?;
    let pd = nic.dev.alloc_pd()?;
    let mut qp = nic.dev.create_qp(&pd, &cq, 8)?;
    let buf = nic.dev.mem.alloc(64 * 1024, 4096)?;
    let mr = nic
        .dev
        .reg_mr(&pd, buf.addr, buf.len as u64, access::LOCAL_WRITE)?;
    let ro = nic.dev.reg_mr(&pd, buf.addr, buf.len as u64, 0)?;
    let wr = |id: u64, n: usize, r: &mut rand_chacha::ChaCha8Rng| RecvWr {
        wr_id: id,
        sg_list: (0..n)
            .map(|_| Sge {
                addr: buf.addr + r.gen_range(0..32 * 1024),
                length: r.gen_range(0..4096),
                lkey: mr.lkey,
            })
            .collect(),
    };
    let good = wr(1, 1, &mut r);
    ensure!(
        nic.dev
            .post_recv(&mut qp, std::slice::from_ref(&good))
            .is_err(),
        "post_recv in RESET"
    );
    nic.dev
        .modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
    let list: Vec<RecvWr> = (0..5)
        .map(|i| wr(100 + i, 1 + i as usize % MAX_SGE, &mut r))
        .collect();
    nic.dev.post_recv(&mut qp, &list)?;
    let mut bad = vec![
        RecvWr {
            sg_list: vec![
                Sge {
                    lkey: ro.lkey,
                    ..good.sg_list[0]
                };
                1
            ],
            ..good.clone()
        },
        RecvWr {
            sg_list: vec![
                Sge {
                    length: 64 * 1024,
                    ..good.sg_list[0]
                };
                1
            ],
            ..good.clone()
        },
    ];
    bad.push(RecvWr {
        sg_list: vec![good.sg_list[0]; 5],
        ..good.clone()
    });
    for b in &bad {
        ensure!(
            nic.dev
                .post_recv(&mut qp, &[good.clone(), b.clone()])
                .is_err(),
            "refused: {b:?}"
        );
    }
    // Eight entries, five posted: four more do not fit.
    ensure!(matches!(
        nic.dev.post_recv(&mut qp, &vec![good.clone(); 4]),
        Err(DriverError::QueueFull { free: 3, .. })
    ));
    ensure!(
        qp.rq_pi == 5,
        "refused lists posted nothing: pi {}",
        qp.rq_pi
    );
    // The ring, at the offsets of the receive WQE: num_sge byte 2, wr_id bytes 8..16, SGE i
    // at 64 + 16 i (address, length, lkey, little-endian).
    for (i, w) in list.iter().enumerate() {
        let mut e = [0u8; 128];
        nic.dev.mem.read(qp.rq.addr + 128 * i as u64, &mut e)?;
        ensure!(usize::from(e[2]) == w.sg_list.len(), "entry {i}: num_sge");
        ensure!(
            u64::from_le_bytes(e[8..16].try_into()?) == w.wr_id,
            "entry {i}: wr_id"
        );
        for (j, g) in w.sg_list.iter().enumerate() {
            let at = 64 + 16 * j;
            let got = (
                u64::from_le_bytes(e[at..at + 8].try_into()?),
                u32::from_le_bytes(e[at + 8..at + 12].try_into()?),
                u32::from_le_bytes(e[at + 12..at + 16].try_into()?),
            );
            ensure!(
                got == (g.addr, g.length, g.lkey),
                "entry {i} SGE {j}: {got:x?}"
            );
        }
    }
    nic.dev
        .modify_qp(&mut qp, QpState::Reset, QpAttr::default())?;
    ensure!(qp.rq_done == 5, "RESET discards what was posted");
    println!("seed {s}: 5 receive WQEs checked, 4 refused lists posted nothing");
    Ok(())
}
