//! WRITE lists on four QPs leave as RoCEv2 frames the outside references accept.

use super::*;

#[test]
fn write_lists_on_four_qps_leave_as_checked_rocev2_frames() -> Result<()> {
    let s = seed("write_lists_on_four_qps_leave_as_checked_rocev2_frames");
    let mut r = rng(s);
    let mut nic = open(s)?;
    let cq = nic.dev.create_cq(256)?;
    let pd = nic.dev.alloc_pd()?;
    let pmtus = [256u32, 1024, 4096, 512];
    let mut qps = Vec::new();
    for (k, pmtu) in pmtus.iter().enumerate() {
        // One QP starts just below the PSN wrap.
        let psn = if k == 1 {
            0xFF_FFF0
        } else {
            r.gen_range(0..0x100_0000)
        };
        qps.push(rts_qp(
            &mut nic.dev,
            &pd,
            &cq,
            *pmtu,
            0x100 + k as u32,
            psn,
        )?);
    }
    let mut posted: Vec<Vec<Posted>> = (0..qps.len()).map(|_| Vec::new()).collect();
    let mut next_psn: Vec<u32> = qps
        .iter()
        .map(|q| nic.dev.query_qp(q).map(|c| c.sq_psn))
        .collect::<std::result::Result<_, _>>()?;
    let mut wr_id = 1000u64;
    let mut total = 0usize;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    // Two rounds of up to 4 requests on 4 QPs: at most 32 outstanding, what the completer
    // holds while no ACK comes (the requester waits beyond that).
    for round in 0..2 {
        for (k, qp) in qps.iter_mut().enumerate() {
            let pmtu = pmtus[k] as usize;
            let n = r.gen_range(1..=4);
            let mut list = Vec::new();
            for j in 0..n {
                // Each QP's first request is long: together they overfill the 16 KiB transmit
                // queue, so QPs run out of credit mid-message and yield.
                let len = match if round + j == 0 { 8 } else { r.gen_range(0..8) } {
                    8 => r.gen_range(8000..=12_000),
                    0 => 0,
                    1 => pmtu,
                    2 => pmtu - 1,
                    3 => pmtu + 1,
                    4 => r.gen_range(1..=64),
                    5 => 3 * pmtu + r.gen_range(0..pmtu),
                    _ => r.gen_range(1..=12_000),
                };
                // The message in 1 to 4 SGEs cut at random points (some empty), each in a
                // buffer of its own at a random offset in its page, so reads cross 4 KiB pages
                // and packets take bytes from several SGEs.
                let bytes: Vec<u8> = (0..len).map(|_| r.gen()).collect();
                let nsge = r.gen_range(1..=MAX_SGE);
                let mut cuts: Vec<usize> = (1..nsge).map(|_| r.gen_range(0..=len)).collect();
                cuts.sort_unstable();
                cuts.insert(0, 0);
                cuts.push(len);
                let mut sg_list = Vec::new();
                for w in cuts.windows(2) {
                    let piece = &bytes[w[0]..w[1]];
                    let off = r.gen_range(0..4096u64);
                    let buf = nic.dev.mem.alloc(piece.len() + 4096, 4096)?;
                    nic.dev.mem.write(buf.addr + off, piece)?;
                    let mr = nic.dev.reg_mr(&pd, buf.addr, buf.len as u64, 0)?;
                    sg_list.push(Sge {
                        addr: buf.addr + off,
                        length: piece.len() as u32,
                        lkey: mr.lkey,
                    });
                }
                // Every opcode that sends its SGEs' bytes (a READ's and an atomic's come back:
                // `read.rs`, `atomic.rs`), the immediate and the solicited bit at random.
                let sends = WrOpcode::ALL
                    .map(|o| o)
                    .into_iter()
                    .filter(|o| !o.writes_local());
                let sends: Vec<WrOpcode> = sends.collect();
                let opcode = sends[r.gen_range(0..sends.len())];
                let wr = SendWr {
                    wr_id,
                    opcode,
                    sg_list,
                    remote_addr: r.gen::<u64>() & !0xFFF | r.gen_range(0..4096),
                    rkey: r.gen(),
                    imm_data: r.gen(),
                    signaled: r.gen_bool(0.7),
                    solicited: r.gen_bool(0.5),
                    ..SendWr::default()
                };
                wr_id += 1;
                let packets = len.div_ceil(pmtu).max(1) as u32;
                list.push(Posted {
                    wr,
                    bytes,
                    first_psn: next_psn[k],
                    packets,
                });
                next_psn[k] = (next_psn[k] + packets) & 0xFF_FFFF;
            }
            let wrs: Vec<SendWr> = list.iter().map(|p| p.wr.clone()).collect();
            nic.dev.post_send(qp, &wrs)?;
            total += list.len();
            posted[k].extend(list);
        }
    }
    let mut wants: HashMap<u32, Vec<Want>> = HashMap::new();
    let mut frames_expected = 0;
    for (k, list) in posted.iter().enumerate() {
        let v: Vec<Want> = list.iter().flat_map(|p| packets_of(p, pmtus[k])).collect();
        frames_expected += v.len();
        wants.insert(0x100 + k as u32, v);
    }
    let wire = nic.wire.clone();
    nic.sim
        .borrow_mut()
        .run_until(20_000_000, "every frame", |_| {
            wire.borrow().count() >= frames_expected
        })
        .with_context(|| format!("seed {s}"))?;
    nic.sim.borrow_mut().run(2000)?;
    ensure!(
        wire.borrow().violations().is_empty(),
        "{:?}",
        wire.borrow().violations()
    );
    ensure!(
        wire.borrow().count() == frames_expected,
        "{} frames, expected {frames_expected}",
        wire.borrow().count()
    );
    // Every frame: FCS, headers, BTH/RETH, payload.
    let mut bodies = Vec::new();
    let mut order = Vec::new();
    for i in 0..frames_expected {
        let f = wire.borrow_mut().recv().context("frame")?.data;
        let body = strip_fcs(i, &f)?.to_vec();
        order.push(check_frame(i, &body, &mut wants).with_context(|| format!("seed {s}"))?);
        bodies.push(body);
    }
    ensure!(wants.values().all(|v| v.is_empty()), "packets missing");
    // Source ports: one per QP, from the spec's formula.
    for (i, body) in bodies.iter().enumerate() {
        let sport = u16::from_be_bytes([body[34], body[35]]);
        let k = (order[i] - 0x100) as usize;
        ensure!(
            sport == src_port(qps[k].qpn),
            "frame {i}: UDP source port {sport:#x}"
        );
    }
    // Outside references over a pcap: scapy's ICRC and tshark's dissection.
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nic_send.pcap");
    let refs: Vec<&[u8]> = bodies.iter().map(Vec::as_slice).collect();
    write_pcap(&pcap, &refs)?;
    let ok = scapy_check(&pcap)?;
    ensure!(ok.trim() == format!("ok {}", bodies.len()), "scapy: {ok}");
    let rows = tshark_fields(&pcap)?;
    ensure!(
        rows.len() == bodies.len(),
        "tshark saw {} frames",
        rows.len()
    );
    for (i, row) in rows.iter().enumerate() {
        ensure!(
            row[0] == "RRoCE" && row[4].is_empty(),
            "frame {i}: tshark says {row:?}"
        );
        ensure!(
            row[2] == format!("{:#08x}", order[i]),
            "frame {i}: tshark dest QP {row:?}"
        );
        // tshark's opcode, ImmDt and SE are the frame's (checked above against the WQE).
        let b = &bodies[i][42..];
        ensure!(
            row[1] == b[0].to_string(),
            "frame {i}: tshark opcode {row:?}"
        );
        let has_imm = [
            RC_SEND_LAST_WITH_IMMEDIATE,
            RC_SEND_ONLY_WITH_IMMEDIATE,
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        ]
        .contains(&b[0]);
        let at = if b[0] == RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE {
            28
        } else {
            12
        };
        let imm = if has_imm {
            hex(&b[at..at + 4])
        } else {
            String::new()
        };
        // (tshark 3.6 lists the ImmDt field twice.)
        ensure!(
            row[10].split(',').all(|x| x == imm),
            "frame {i}: tshark ImmDt {row:?}"
        );
        ensure!(
            (row[11] == "1" || row[11] == "True") == (b[1] & 0x80 != 0),
            "frame {i}: tshark SE {row:?}"
        );
    }
    for name in [
        "req_bad_db",
        "req_bad_qp",
        "req_bad_wqe",
        "req_dma_err",
        "rd_bad_cpl",
    ] {
        ensure!(nic.sim.borrow().tb.get(name)? == 0, "{name}");
    }
    for name in [
        "rd_timeouts",
        "tx_bad_len",
        "tx_bad_opcode",
        "tx_self_check",
    ] {
        ensure!(nic.sim.borrow().tb.get(name)? == 0, "{name}");
    }
    ensure!(nic.sim.borrow().rc.borrow().violations.is_empty());
    // The wire at 15% speed fills the transmit queue: QPs waited for credit and yielded to
    // each other mid-message, and every packet above is still the one the WQE asked for.
    let yields = nic.sim.borrow().tb.get("req_yields")?;
    ensure!(yields > 0, "no QP yielded: the resume path went untested");
    let used = {
        let sim = nic.sim.borrow();
        let m = sim.tb.model_ref();
        m.get_bytes(m.port("mac_tx_used")?)
    };
    ensure!(used.iter().all(|&b| b == 0), "credits left: {used:?}");
    ensure!(
        nic.sim.borrow().tb.get("mac_tx_held")? == 0,
        "queue input held"
    );
    println!("seed {s}: {yields} yields");
    println!(
        "seed {s}: {total} WRITEs on {} QPs, {} frames, scapy {}, tshark RRoCE",
        qps.len(),
        bodies.len(),
        ok.trim()
    );
    Ok(())
}
