//! QPs as closed boxes: an error found by any engine fails the whole QP (its send queue and
//! its receive queue flush, requests to it are dropped, nothing after the error reaches the
//! wire), a failed payload read sends nothing it read and fails the QP, and a reset QP keeps
//! nothing of its last life.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, QpState, QueuePair, SendWr, Sge, WrOpcode};
use ferroce_sim::link::Fault;
use ferroce_sim::world::{Host, World, WorldConfig};
use ferroce_spec::queues::WQE_LEN;
use ferroce_tests::bth;
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

mod errors;
mod host_err;
mod payload;
mod reset;
mod soak;
mod stale;

/// Post `wr` by writing its WQE into the ring behind the driver's back (its keys unchecked),
/// and ring the doorbell.
fn post_raw(h: &mut Host, qp: &mut QueuePair, wr: &SendWr) -> Result<()> {
    let size = 1u64 << qp.sq_log_size;
    let slot = u64::from(qp.sq_pi) & (size - 1);
    h.dev
        .mem
        .write(qp.sq.addr + slot * WQE_LEN as u64, &wr.wqe())?;
    qp.sq_pi = qp.sq_pi.wrapping_add(1);
    h.dev.ring_sq_doorbell(qp.qpn, qp.sq_pi)?;
    Ok(())
}

/// Every RoCE frame on a wire from now on, as its BTH, through a fault hook that passes them
/// (or drops those `drop` says to).
fn watch(
    w: &World,
    ab: bool,
    mut drop: impl FnMut(&ferroce_tests::Bth) -> bool + 'static,
) -> Result<Rc<RefCell<Vec<ferroce_tests::Bth>>>> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s2 = seen.clone();
    let wire = if ab { &w.ab } else { &w.ba };
    wire.set_fault_hook(move |_, f| match bth(f) {
        Some(b) => {
            s2.borrow_mut().push(b);
            if drop(&b) {
                Fault::Drop
            } else {
                Fault::Pass
            }
        }
        None => Fault::Pass,
    })?;
    Ok(seen)
}

/// A WRITE of the first `len` bytes of `src` to the peer's `to` (under `rkey`), signaled.
fn write_wr(
    wr_id: u64,
    src: &ferroce_driver::MemoryRegion,
    len: u32,
    to: u64,
    rkey: u32,
) -> SendWr {
    SendWr {
        wr_id,
        opcode: WrOpcode::RdmaWrite,
        sg_list: vec![Sge {
            addr: src.addr,
            length: len,
            lkey: src.lkey,
        }],
        remote_addr: to,
        rkey,
        signaled: true,
        ..Default::default()
    }
}

/// A READ of `len` bytes from the peer's `from` (under `rkey`) into the start of `into`.
fn read_wr(
    wr_id: u64,
    into: &ferroce_driver::MemoryRegion,
    len: u32,
    from: u64,
    rkey: u32,
) -> SendWr {
    SendWr {
        opcode: WrOpcode::RdmaRead,
        ..write_wr(wr_id, into, len, from, rkey)
    }
}

/// a's QP `qa` failed and b completed nothing: `qa` reads ERR, b's CQ is empty.
fn failed_alone(w: &mut World, qa: &QueuePair) -> Result<()> {
    ensure!(w.b.dev.poll_cq(&mut w.b.cq, 8)?.is_empty(), "b completed");
    ensure!(
        w.a.dev.query_qp(qa)?.state == Some(QpState::Err),
        "a not ERR"
    );
    Ok(())
}

/// A world where three QPs of a stream `per` WRITEs of 256 KiB each to b, and a fourth QP
/// pair, connected, behind them; returns the world, the fourth pair, and a's source and b's
/// target regions.
fn three_streams(
    r: &mut impl Rng,
    per: u64,
) -> Result<(
    World,
    (QueuePair, QueuePair),
    ferroce_driver::MemoryRegion,
    ferroce_driver::MemoryRegion,
)> {
    let mut w = World::open(&WorldConfig::default())?;
    let big = 256 * 1024;
    let src = w.a.buffer(big, &vec![0x44; big])?;
    let dst = w.b.buffer(big, &vec![0; big])?;
    let mut busy = Vec::new();
    for _ in 0..3 {
        busy.push(w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?);
    }
    let pair = w.connect(4096, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    for (i, (q, _)) in busy.iter_mut().enumerate() {
        let wrs: Vec<SendWr> = (0..per)
            .map(|k| {
                write_wr(
                    1000 + 10 * i as u64 + k,
                    &src,
                    big as u32,
                    dst.addr,
                    dst.rkey,
                )
            })
            .collect();
        w.a.dev.post_send(q, &wrs)?;
    }
    Ok((w, pair, src, dst))
}
