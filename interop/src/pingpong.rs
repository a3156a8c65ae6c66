//! ferroce's side of rdma-core's `ibv_rc_pingpong` (libibverbs/examples/rc_pingpong.c), in
//! either role, over a [`Rig`].
//!
//! The tool's protocol: both sides post receives of `size` bytes; they exchange
//! `LID:QPN:PSN:GID` (the client first, then the server, then the client's `"done"`); the
//! client SENDs first; each side SENDs again once its last SEND completed and a message
//! arrived, `iters` times each. Both sides SEND from the buffer they receive into, so the
//! tool echoes: ferroce sends a different pattern every iteration and checks every byte that
//! comes back (as server: the tool's first message is its initial buffer, all 0x7b, and each
//! next one is ferroce's last; as client: each answer is ferroce's last message).

use super::oob::{self, PpDest};
use super::{err, guest::HOST_ALIAS, Rig, Role};
use crate::Result;
use ferroce_driver::{access, DmaMemory, QpAttr, QpState, RecvWr, SendWr, Sge, WrOpcode};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// One pingpong run.
#[derive(Clone, Copy, Debug)]
pub struct PingPong {
    pub role: Role,
    pub size: u32,
    pub iters: u32,
    /// IB path MTU (1024 or 4096; the guest's port must allow it).
    pub mtu: u32,
    pub seed: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct PingPongResult {
    pub guest_output: String,
    /// Wall time of the run, and simulated cycles of ferroce's side from its QP to the end.
    pub wall: Duration,
    pub sim_cycles: u64,
    pub bytes_checked: u64,
}

/// The guest tool's buffer before anything arrives (`pp_init_ctx` fills it with 0x7b).
const TOOL_FILL: u8 = 0x7b;
/// Cycles ferroce waits for its last ACK after the tool has ended (1 ms simulated).
const TAIL_CYCLES: u64 = 156_250;
/// Receives ferroce keeps posted (the tool has at most one message in flight).
const RX_SLOTS: u32 = 4;

/// ferroce's message of iteration `k`.
fn pattern(seed: u64, k: u32, size: u32) -> Vec<u8> {
    let s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(k).wrapping_mul(0x2545_f491);
    (0..size)
        .map(|i| (s.wrapping_add(u64::from(i) * 131) >> 3 ^ u64::from(i >> 8)) as u8)
        .collect()
}

fn check(got: &[u8], want: &[u8], what: &str) -> Result<()> {
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        return Err(err(format!(
            "{what}: byte {i} is {:#04x}, expected {:#04x}",
            got[i], want[i]
        )));
    }
    if got.len() != want.len() {
        return Err(err(format!(
            "{what}: {} bytes, expected {}",
            got.len(),
            want.len()
        )));
    }
    Ok(())
}

/// Run the guest's `ibv_rc_pingpong` against ferroce.
pub fn run(rig: &mut Rig, p: &PingPong, listen_port: u16) -> Result<PingPongResult> {
    let wall = Instant::now();
    let start_cycle = rig.station.cycle();
    let h = &mut rig.station.host;
    let mut qp = h.dev.create_qp(&h.pd, &h.cq, 16)?;
    h.dev.modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
    let size = p.size as usize;
    let send_buf = h.dev.mem.alloc(size.max(1), 4096)?;
    let recv_buf = h.dev.mem.alloc(size.max(1) * RX_SLOTS as usize, 4096)?;
    let smr = h.dev.reg_mr(
        &h.pd,
        send_buf.addr,
        send_buf.len as u64,
        access::LOCAL_WRITE,
    )?;
    let rmr = h.dev.reg_mr(
        &h.pd,
        recv_buf.addr,
        recv_buf.len as u64,
        access::LOCAL_WRITE,
    )?;
    let slot = |k: u32| recv_buf.addr + u64::from(k % RX_SLOTS) * u64::from(p.size);
    let recv_wr = |k: u32| RecvWr {
        wr_id: u64::from(k),
        sg_list: vec![Sge {
            addr: slot(k),
            length: p.size,
            lkey: rmr.lkey,
        }],
    };
    for k in 0..RX_SLOTS {
        h.dev.post_recv(&mut qp, &[recv_wr(k)])?;
    }
    let my = PpDest {
        lid: 0,
        qpn: qp.qpn,
        psn: (p.seed as u32 ^ 0x5a5a5a) & 0xff_ffff,
        gid: oob::gid_of_ipv4(h.ip),
    };
    let tool = format!(
        "ibv_rc_pingpong -d rxe0 -g 1 -m {} -s {} -n {}",
        p.mtu, p.size, p.iters
    );
    let timeout = Duration::from_secs(60);
    match p.role {
        Role::Server => {
            let listener = TcpListener::bind(("127.0.0.1", listen_port))
                .map_err(|e| err(format!("listening on 127.0.0.1:{listen_port}: {e}")))?;
            rig.guest.start(&format!("{tool} {HOST_ALIAS}"))?;
            let mut s = oob::accept(&listener, timeout)?;
            let peer = PpDest::decode(&oob::read_n(&mut s, oob::PP_MSG_LEN, "client address")?)?;
            rig.connect_qp(&mut qp, p.mtu, peer.qpn, peer.psn, &peer.gid, my.psn)?;
            oob::write_all(&mut s, &my.encode(), "server address")?;
            let done = oob::read_n(&mut s, 5, "the client's \"done\"")?;
            if done != b"done\0" {
                return Err(err(format!("expected \"done\", got {done:?}")));
            }
        }
        Role::Client => {
            rig.guest.start(&tool)?;
            let peer = exchange_as_client(rig, listen_port, &my, timeout)?;
            rig.connect_qp(&mut qp, p.mtu, peer.qpn, peer.psn, &peer.gid, my.psn)?;
        }
    }

    // The loop of rc_pingpong.c's main(), ferroce's side.
    let h = &mut rig.station.host;
    let send = |k: u32| SendWr {
        wr_id: 1 << 32 | u64::from(k),
        opcode: WrOpcode::Send,
        sg_list: vec![Sge {
            addr: send_buf.addr,
            length: p.size,
            lkey: smr.lkey,
        }],
        signaled: true,
        ..SendWr::default()
    };
    let (mut scnt, mut rcnt) = (0u32, 0u32);
    let mut send_pending = false;
    let mut recv_pending = true;
    let mut checked = 0u64;
    let mut guest_done = None;
    let post_ping = |h: &mut ferroce_sim::world::Host, qp: &mut _, k: u32| -> Result<()> {
        h.dev
            .mem
            .write(send_buf.addr, &pattern(p.seed, k, p.size))?;
        h.dev.post_send(qp, &[send(k)])?;
        Ok(())
    };
    if p.role == Role::Client {
        post_ping(h, &mut qp, 0)?;
        send_pending = true;
    }
    let deadline =
        Instant::now() + Duration::from_secs(120 + u64::from(p.iters) * p.size as u64 / 50_000);
    while scnt < p.iters || rcnt < p.iters {
        if Instant::now() > deadline {
            return Err(err(format!(
                "pingpong stalled: {scnt} sent, {rcnt} received of {}",
                p.iters
            )));
        }
        rig.run(super::PUMP_CYCLES)?;
        // The tool may finish first: it has ferroce's last message before ferroce has the
        // ACK of it. Then the ACK must still come (rxe sent it before the tool saw the data).
        if guest_done.is_none() {
            guest_done = rig.guest.poll()?.map(|r| (r, rig.station.cycle()));
        }
        if let Some(((rc, out), at)) = &guest_done {
            if *rc != 0 || rig.station.cycle() - at > TAIL_CYCLES {
                return Err(err(format!(
                    "the guest's tool ended (exit {rc}) with ferroce at {scnt} sent, {rcnt} \
                     received:\n{out}"
                )));
            }
        }
        let h = &mut rig.station.host;
        let cq = &mut h.cq;
        for wc in h.dev.poll_cq(cq, 16)? {
            if wc.status != 0 {
                return Err(err(format!("completion {wc:?} failed")));
            }
            if wc.wr_id >> 32 == 1 {
                scnt += 1;
                send_pending = false;
                continue;
            }
            // A message arrived: check it against what the tool had in its buffer.
            let k = wc.wr_id as u32;
            if wc.byte_len != p.size {
                return Err(err(format!(
                    "message {k}: {} bytes, expected {}",
                    wc.byte_len, p.size
                )));
            }
            let mut got = vec![0u8; size];
            h.dev.mem.read(slot(k), &mut got)?;
            let want = match (p.role, k) {
                (Role::Server, 0) => vec![TOOL_FILL; size],
                (Role::Server, k) => pattern(p.seed, k - 1, p.size),
                (Role::Client, k) => pattern(p.seed, k, p.size),
            };
            check(&got, &want, &format!("message {k} from the guest"))?;
            checked += p.size as u64;
            rcnt += 1;
            recv_pending = false;
            h.dev.post_recv(&mut qp, &[recv_wr(k + RX_SLOTS)])?;
        }
        if scnt < p.iters && !send_pending && !recv_pending {
            let h = &mut rig.station.host;
            post_ping(h, &mut qp, scnt)?;
            send_pending = true;
            recv_pending = true;
        }
    }
    let sim_cycles = rig.station.cycle() - start_cycle;
    let (rc, out) = match guest_done {
        Some((r, _)) => r,
        None => rig.finish_guest("ibv_rc_pingpong", Duration::from_secs(60))?,
    };
    if rc != 0 || !out.contains("iters in") {
        return Err(err(format!("ibv_rc_pingpong failed (exit {rc}):\n{out}")));
    }
    Ok(PingPongResult {
        guest_output: out,
        wall: wall.elapsed(),
        sim_cycles,
        bytes_checked: checked,
    })
}

/// Connect to the guest's listening tool (through QEMU's hostfwd on `port`): send ferroce's
/// address, read the tool's, send `"done"`. Retried until the tool listens.
fn exchange_as_client(rig: &mut Rig, port: u16, my: &PpDest, timeout: Duration) -> Result<PpDest> {
    let start = Instant::now();
    loop {
        let mut s = oob::connect(port, timeout)?;
        oob::write_all(&mut s, &my.encode(), "client address")?;
        match oob::read_n(&mut s, oob::PP_MSG_LEN, "server address") {
            Ok(m) => {
                let peer = PpDest::decode(&m)?;
                oob::write_all(&mut s, b"done\0", "\"done\"")?;
                return Ok(peer);
            }
            Err(e) if start.elapsed() < timeout => {
                if let Some((rc, out)) = rig.guest.poll()? {
                    return Err(err(format!("the guest's tool ended (exit {rc}): {out}")));
                }
                let _ = e;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e),
        }
    }
}
