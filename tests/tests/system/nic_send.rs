//! The NIC's send half on Verilator (`ferroce_nic_64`), driven by the Rust driver through the
//! simulated BAR and root complex (500 ns read latency, completions split and reordered at
//! random): RDMA WRITE lists posted on four QPs with different path MTUs come out as RoCEv2
//! frames. Each frame is checked by outside references: the FCS by zlib's CRC-32 (`crc`), the
//! Ethernet/IPv4/UDP headers by etherparse, the ICRC by scapy, the dissection by tshark; the
//! BTH/RETH fields and the payload bytes against the work requests (IBTA 9.2, 9.3.3 byte
//! offsets written out here). Random back-pressure on the wire (85% of the cycles), so the
//! transmit queue fills and QPs yield to each other mid-message and resume (checked: the
//! packets are the same). No peer answers here, so no
//! request completes but those the NIC refuses (error CQEs); the two-NIC tests
//! (`tests/two_nics.rs`) check completions.

use anyhow::{ensure, Context, Result};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use ferroce_driver::{
    access, CompletionQueue, Device, DmaMemory, DriverError, ProtectionDomain, QpAttr, QpState,
    QueuePair, RecvWr, SendWr, Sge, WrOpcode,
};
use ferroce_sim::host::{SimBar, SimMem, SimNic};
use ferroce_sim::pcie::PcieConfig;
use ferroce_sim::{world::nic_build, AxisSink, PauseGenerator};
use ferroce_spec::headers::ACKREQ_PSN_MASK;
use ferroce_spec::meta::src_port;
use ferroce_spec::opcodes::{
    RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_ONLY, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_SEND_FIRST,
    RC_SEND_LAST, RC_SEND_LAST_WITH_IMMEDIATE, RC_SEND_MIDDLE, RC_SEND_ONLY,
    RC_SEND_ONLY_WITH_IMMEDIATE,
};
use ferroce_spec::queues::{
    MAX_SGE, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR, WC_LOC_QP_OP_ERR, WC_WR_FLUSH_ERR, WQE, WQE_LEN,
};
use ferroce_tests::wire::{scapy_check, strip_fcs, tshark_fields, write_pcap};
use ferroce_tests::{rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

const LOCAL_MAC: [u8; 6] = [0x02, 0xfe, 0x00, 0x00, 0x00, 0x01];
const LOCAL_IP: [u8; 4] = [10, 0, 0, 1];
const REMOTE_MAC: [u8; 6] = [0x02, 0xfe, 0x00, 0x00, 0x00, 0x02];
const REMOTE_IP: [u8; 4] = [10, 0, 0, 2];

type Dev = Device<SimBar, SimMem>;

struct Nic {
    dev: Dev,
    sim: Rc<RefCell<SimNic>>,
    wire: Rc<RefCell<AxisSink>>,
}

fn open(s: u64) -> Result<Nic> {
    let mut tb = ferroce_sim::designs::open_tb("ferroce_nic_64", &nic_build(false))?;
    let wire = AxisSink::new(&mut tb, "m_axis")?;
    wire.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 11, 0.85));
    let config = PcieConfig {
        cpl_reorder_seed: Some(s ^ 13),
        ..PcieConfig::default()
    };
    let sim = SimNic::new(tb, config)?;
    let mut dev = Device::open(SimBar(sim.clone()), SimMem(sim.clone()))?;
    dev.set_port(LOCAL_MAC, LOCAL_IP)?;
    Ok(Nic { dev, sim, wire })
}

/// A QP taken to RTS with `pmtu`, sending to `dest_qpn` from `sq_psn`.
fn rts_qp(
    dev: &mut Dev,
    pd: &ProtectionDomain,
    cq: &CompletionQueue,
    pmtu: u32,
    dest_qpn: u32,
    sq_psn: u32,
) -> Result<QueuePair> {
    let mut qp = dev.create_qp(pd, cq, 64)?;
    dev.modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
    let rtr = QpAttr {
        path_mtu: Some(pmtu),
        dest_qpn: Some(dest_qpn),
        rq_psn: Some(0),
        remote_mac: Some(REMOTE_MAC),
        remote_ipv4: Some(REMOTE_IP),
        ..QpAttr::default()
    };
    dev.modify_qp(&mut qp, QpState::Rtr, rtr)?;
    let rts = QpAttr {
        sq_psn: Some(sq_psn),
        ..QpAttr::default()
    };
    dev.modify_qp(&mut qp, QpState::Rts, rts)?;
    Ok(qp)
}

/// One packet the NIC must send.
#[derive(Debug)]
struct Want {
    opcode: u8,
    psn: u32,
    ack_req: bool,
    se: bool,
    reth: Option<(u64, u32, u32)>,
    imm: Option<u32>,
    payload: Vec<u8>,
}

/// `wr` with its (first and only) SGE changed by `f`.
/// Each of `images` (WQEs written behind the driver's back) on a QP of its own from `psn`,
/// with `behind` after it: the refused one fails its QP, so the one behind flushes. Returns
/// the completions to expect, (wr_id, status, QP): the image's `wr_id` is 2i + 1 with
/// `statuses[i]`, the one behind 2i + 2 with WR_FLUSH_ERR.
fn each_on_its_own_qp(
    nic: &mut Nic,
    (pd, cq, psn): (&ProtectionDomain, &CompletionQueue, u32),
    images: &[[u8; WQE_LEN]],
    statuses: &[u32],
    behind: &SendWr,
) -> Result<Vec<(u64, u32, u32)>> {
    let mut want = Vec::new();
    for (i, (img, &st)) in images.iter().zip(statuses).enumerate() {
        let mut q = rts_qp(&mut nic.dev, pd, cq, 4096, 0x400, psn)?;
        let size = 1u64 << q.sq_log_size;
        let id = 2 * i as u64 + 1;
        let mut first = *img;
        WQE.set(&WQE.field("wr_id"), &mut first, id.into());
        let second = SendWr {
            wr_id: id + 1,
            ..behind.clone()
        }
        .wqe();
        for w in [first, second] {
            let slot = u64::from(q.sq_pi) & (size - 1);
            nic.dev.mem.write(q.sq.addr + slot * WQE_LEN as u64, &w)?;
            q.sq_pi += 1;
        }
        nic.dev.ring_sq_doorbell(q.qpn, q.sq_pi)?;
        want.push((id, st, q.qpn));
        want.push((id + 1, WC_WR_FLUSH_ERR, q.qpn));
    }
    Ok(want)
}

/// Every completion of `cq` until `n` have come, sorted by wr_id, as (wr_id, status, QP).
fn completions(nic: &mut Nic, cq: &mut CompletionQueue, n: usize) -> Result<Vec<(u64, u32, u32)>> {
    let mut got = Vec::new();
    for _ in 0..100 {
        got.extend(
            nic.dev
                .poll_cq(cq, 64)?
                .iter()
                .map(|c| (c.wr_id, c.status, c.qpn)),
        );
        if got.len() >= n {
            break;
        }
        nic.sim.borrow_mut().run(2000)?;
    }
    got.sort();
    Ok(got)
}

fn with_sge(wr: &SendWr, f: impl FnOnce(&mut Sge)) -> SendWr {
    let mut w = wr.clone();
    f(&mut w.sg_list[0]);
    w
}

/// A posted work request with its source bytes.
struct Posted {
    wr: SendWr,
    bytes: Vec<u8>,
    first_psn: u32,
    packets: u32,
}

fn packets_of(p: &Posted, pmtu: u32) -> Vec<Want> {
    let len = p.wr.length() as usize;
    let n = p.packets as usize;
    (0..n)
        .map(|i| {
            let first = i == 0;
            let last = i == n - 1;
            let op = p.wr.opcode;
            let imm = op.has_imm() && last;
            // IBA table 38, written out.
            let opcode = match (op.is_send(), first, last, imm) {
                (false, true, true, false) => RC_RDMA_WRITE_ONLY,
                (false, true, true, true) => RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
                (false, true, false, _) => RC_RDMA_WRITE_FIRST,
                (false, false, true, false) => RC_RDMA_WRITE_LAST,
                (false, false, true, true) => RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
                (false, false, false, _) => RC_RDMA_WRITE_MIDDLE,
                (true, true, true, false) => RC_SEND_ONLY,
                (true, true, true, true) => RC_SEND_ONLY_WITH_IMMEDIATE,
                (true, true, false, _) => RC_SEND_FIRST,
                (true, false, true, false) => RC_SEND_LAST,
                (true, false, true, true) => RC_SEND_LAST_WITH_IMMEDIATE,
                (true, false, false, _) => RC_SEND_MIDDLE,
            };
            let lo = (i * pmtu as usize).min(len);
            let hi = ((i + 1) * pmtu as usize).min(len);
            Want {
                opcode,
                psn: (p.first_psn + i as u32) & 0xFF_FFFF,
                ack_req: last || (p.first_psn + i as u32) & ACKREQ_PSN_MASK == ACKREQ_PSN_MASK,
                se: last && p.wr.solicited && (op.is_send() || op.has_imm()),
                reth: (first && !op.is_send()).then_some((
                    p.wr.remote_addr,
                    p.wr.rkey,
                    p.wr.length() as u32,
                )),
                imm: imm.then_some(p.wr.imm_data),
                payload: p.bytes[lo..hi].to_vec(),
            }
        })
        .collect()
}

/// Check one frame (FCS stripped) by etherparse and the IBTA layout; returns its QP.
fn check_frame(i: usize, body: &[u8], wants: &mut HashMap<u32, Vec<Want>>) -> Result<u32> {
    let p = SlicedPacket::from_ethernet(body).with_context(|| format!("frame {i}: etherparse"))?;
    let eth = p.link.as_ref().context("no Ethernet")?;
    let etherparse::LinkSlice::Ethernet2(eth) = eth else {
        anyhow::bail!("frame {i}: not Ethernet II");
    };
    ensure!(eth.destination() == REMOTE_MAC && eth.source() == LOCAL_MAC);
    let Some(NetSlice::Ipv4(ip)) = &p.net else {
        anyhow::bail!("frame {i}: not IPv4");
    };
    let h = ip.header();
    ensure!(h.source() == LOCAL_IP && h.destination() == REMOTE_IP);
    ensure!(h.ttl() == 64 && h.dont_fragment(), "frame {i}: TTL/DF");
    ensure!(
        h.to_header().calc_header_checksum() == h.header_checksum(),
        "frame {i}: IPv4 checksum"
    );
    let Some(TransportSlice::Udp(udp)) = &p.transport else {
        anyhow::bail!("frame {i}: not UDP");
    };
    ensure!(udp.destination_port() == 4791, "frame {i}: UDP port");
    let b = udp.payload();
    // BTH (IBTA 9.2): opcode, SE/M/pad/tver, P_Key, reserved, dest QP, A + reserved, PSN.
    let opcode = b[0];
    let se = b[1] & 0x80 != 0;
    ensure!(b[1] & 0x40 == 0, "frame {i}: MigReq");
    let pad = usize::from((b[1] >> 4) & 3);
    ensure!(b[1] & 0x0F == 0, "frame {i}: TVer");
    ensure!(b[2..4] == [0xFF, 0xFF], "frame {i}: P_Key");
    let dqp = u32::from_be_bytes([0, b[5], b[6], b[7]]);
    let ack_req = b[8] & 0x80 != 0;
    let psn = u32::from_be_bytes([0, b[9], b[10], b[11]]);
    let qp_wants = wants
        .get_mut(&dqp)
        .with_context(|| format!("frame {i}: unexpected dest QP {dqp:#x}"))?;
    ensure!(
        !qp_wants.is_empty(),
        "frame {i}: extra packet for QP {dqp:#x}"
    );
    let w = qp_wants.remove(0);
    ensure!(
        (opcode, psn, ack_req, se) == (w.opcode, w.psn, w.ack_req, w.se),
        "frame {i}: opcode/PSN/AckReq/SE {:?}, want {w:?}",
        (opcode, psn, ack_req, se)
    );
    let mut at = 12;
    if let Some((va, rkey, len)) = w.reth {
        // RETH (IBTA 9.3.3): VA, R_Key, DMA length.
        let got = (
            u64::from_be_bytes(b[12..20].try_into()?),
            u32::from_be_bytes(b[20..24].try_into()?),
            u32::from_be_bytes(b[24..28].try_into()?),
        );
        ensure!(got == (va, rkey, len), "frame {i}: RETH {got:x?}");
        at = 28;
    }
    if let Some(imm) = w.imm {
        // ImmDt (IBTA 9.3.4), after the RETH if there is one.
        let got = u32::from_be_bytes(b[at..at + 4].try_into()?);
        ensure!(got == imm, "frame {i}: ImmDt {got:#x}, want {imm:#x}");
        at += 4;
    }
    let pay = &b[at..b.len() - 4 - pad];
    ensure!(
        pay == w.payload.as_slice(),
        "frame {i}: payload differs ({} bytes, want {})",
        pay.len(),
        w.payload.len()
    );
    ensure!(
        (w.payload.len() + pad) % 4 == 0,
        "frame {i}: pad {pad} for {} bytes",
        w.payload.len()
    );
    Ok(dqp)
}

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
