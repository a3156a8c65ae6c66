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
//! (`two_nics/`) check completions.

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

mod frames;
mod posting;
mod refusals;

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
