//! QP pairs doing real work, shared by the wire fuzzer and the isolation soak: each end's
//! regions and receive buffers, random WRs of every verb to its peer, and the completions
//! checked (protected QPs: every one SUCCESS with its bytes; the others: their first error
//! marks them failed, and no send completion after it may succeed).

use anyhow::{ensure, Context, Result};
use ferroce_driver::{
    access, CompletionQueue, DmaMemory, MemoryRegion, ProtectionDomain, QueuePair, RecvWr, SendWr,
    Sge, WrOpcode,
};
use ferroce_sim::world::{Host, World};
use ferroce_spec::queues::{WC_RECV, WC_SUCCESS};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Bytes of each QP's source and target regions.
pub(crate) const REGION: usize = 16 << 10;
/// Receive buffers per QP, and their size.
pub(crate) const SLOTS: usize = 8;
pub(crate) const SLOT: usize = 4 << 10;
/// WRs a QP keeps outstanding.
pub(crate) const OUTSTANDING: usize = 4;

/// One end of a QP pair: its regions, what its peer's regions are, what it expects.
pub(crate) struct End {
    pub(crate) qp: QueuePair,
    pub(crate) src: MemoryRegion,
    pub(crate) src_bytes: Vec<u8>,
    pub(crate) dst: MemoryRegion,
    pub(crate) slots: Vec<MemoryRegion>,
    /// The peer's source (READ) and target (WRITE) regions: (addr, rkey).
    pub(crate) peer_src: (u64, u32),
    pub(crate) peer_dst: (u64, u32),
    /// The SENDs the peer has posted to this end: (offset in the peer's source, length).
    pub(crate) incoming: VecDeque<(usize, usize)>,
    /// Bytes of `dst` some WRITE or READ has filled, by offset (every one from the peer's
    /// source at the same offset).
    pub(crate) filled: Vec<bool>,
    pub(crate) outstanding: usize,
    pub(crate) posted: u64,
    pub(crate) done: u64,
    pub(crate) failed: bool,
    /// (Victims.) Moved to ERR to be connected again once its WRs have flushed.
    pub(crate) draining: bool,
    /// WR ids below it were posted before the QP's last reset: none may complete after it.
    pub(crate) floor: u64,
    /// Times reconnected, and WRs done SUCCESS since the first time.
    pub(crate) lives: u32,
    pub(crate) done_later: u64,
    /// Receive WQEs are not posted again (a peer that stops posting receives).
    pub(crate) starve: bool,
    /// A send completion of this connection failed; send completions SUCCESS after it, and
    /// bytes of send completions SUCCESS.
    pub(crate) send_failed: bool,
    pub(crate) first_err: Option<u32>,
    pub(crate) ok_after_err: u64,
    pub(crate) bytes_done: u64,
}

/// A region of `len` bytes of `fill` in `pd`, open to every access.
pub(crate) fn region(h: &mut Host, pd: &ProtectionDomain, fill: &[u8]) -> Result<MemoryRegion> {
    let buf = h.dev.mem.alloc(fill.len(), 4096)?;
    h.dev.mem.write(buf.addr, fill)?;
    let all =
        access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
    Ok(h.dev.reg_mr(pd, buf.addr, fill.len() as u64, all)?)
}

/// A QP pair in the given PDs and CQs, with its regions and receive buffers posted.
pub(crate) fn pair(
    w: &mut World,
    r: &mut ChaCha8Rng,
    pds: &[ProtectionDomain; 2],
    cqs: &[CompletionQueue; 2],
    psn: u32,
) -> Result<[End; 2]> {
    let (qa, qb) = w.connect_in(
        [&pds[0], &pds[1]],
        [&cqs[0], &cqs[1]],
        1024,
        psn,
        psn ^ 0x80_0000,
        16,
    )?;
    let mut ends = Vec::new();
    for (h, pd, qp) in [(&mut w.a, &pds[0], qa), (&mut w.b, &pds[1], qb)] {
        let mut src_bytes = vec![0; REGION];
        r.fill(&mut src_bytes[..]);
        let src = region(h, pd, &src_bytes)?;
        let dst = region(h, pd, &[0; REGION])?;
        // The receive buffers: one region (a NIC has 256), a slot each.
        let all = region(h, pd, &[0; SLOTS * SLOT])?;
        let slots: Vec<MemoryRegion> = (0..SLOTS)
            .map(|i| MemoryRegion {
                addr: all.addr + (i * SLOT) as u64,
                len: SLOT as u64,
                ..all
            })
            .collect();
        let mut qp = qp;
        let wrs: Vec<RecvWr> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| recv_wr(i, s))
            .collect();
        h.dev.post_recv(&mut qp, &wrs)?;
        ends.push(End {
            qp,
            src,
            src_bytes,
            dst,
            slots,
            peer_src: (0, 0),
            peer_dst: (0, 0),
            incoming: VecDeque::new(),
            filled: vec![false; REGION],
            outstanding: 0,
            posted: 0,
            done: 0,
            failed: false,
            draining: false,
            floor: 0,
            lives: 0,
            done_later: 0,
            starve: false,
            send_failed: false,
            first_err: None,
            ok_after_err: 0,
            bytes_done: 0,
        });
    }
    let (a, b) = ends.split_at_mut(1);
    a[0].peer_src = (b[0].src.addr, b[0].src.rkey);
    a[0].peer_dst = (b[0].dst.addr, b[0].dst.rkey);
    b[0].peer_src = (a[0].src.addr, a[0].src.rkey);
    b[0].peer_dst = (a[0].dst.addr, a[0].dst.rkey);
    let b = ends.pop().context("two ends")?;
    let a = ends.pop().context("two ends")?;
    Ok([a, b])
}

pub(crate) fn recv_wr(slot: usize, s: &MemoryRegion) -> RecvWr {
    RecvWr {
        wr_id: slot as u64,
        sg_list: vec![Sge {
            addr: s.addr,
            length: SLOT as u32,
            lkey: s.lkey,
        }],
    }
}

/// Post one random WR on `me` (to `peer`): a WRITE, READ or SEND of up to 8 KiB, or (victims
/// only) an atomic.
pub(crate) fn post_one(
    h: &mut Host,
    me: &mut End,
    peer: &mut End,
    r: &mut ChaCha8Rng,
    atomics: bool,
) -> Result<()> {
    let kind = r.gen_range(0..if atomics { 4 } else { 3 });
    let len = match r.gen_range(0..3) {
        0 => r.gen_range(1..64),
        1 => r.gen_range(1..SLOT),
        _ => r.gen_range(1..2 * SLOT),
    };
    let len = if kind == 2 { len.min(SLOT) } else { len };
    let off = r.gen_range(0..=REGION - len);
    let (opcode, local, remote) = match kind {
        0 => (WrOpcode::RdmaWrite, (&me.src, off), me.peer_dst.0),
        1 => (WrOpcode::RdmaRead, (&me.dst, off), me.peer_src.0),
        2 => (WrOpcode::Send, (&me.src, off), 0),
        _ => (
            WrOpcode::AtomicFetchAndAdd,
            (&me.dst, off & !7),
            me.peer_dst.0,
        ),
    };
    let (len, off) = if kind == 3 { (8, off & !7) } else { (len, off) };
    let wr = SendWr {
        wr_id: me.posted,
        opcode,
        sg_list: vec![Sge {
            addr: local.0.addr + local.1 as u64,
            length: len as u32,
            lkey: local.0.lkey,
        }],
        remote_addr: remote + off as u64,
        rkey: if kind == 1 {
            me.peer_src.1
        } else {
            me.peer_dst.1
        },
        compare_add: 1,
        signaled: true,
        ..Default::default()
    };
    h.dev.post_send(&mut me.qp, &[wr])?;
    match kind {
        0 => peer.filled[off..off + len].fill(true),
        1 => me.filled[off..off + len].fill(true),
        2 => peer.incoming.push_back((off, len)),
        _ => {}
    }
    me.posted += 1;
    me.outstanding += 1;
    Ok(())
}

/// Take the completions of one host's CQ for its `side` of `pairs`: protected QPs must see
/// SUCCESS and their SENDs' bytes; a victim's first error stops its posting.
pub(crate) fn reap(
    h: &mut Host,
    cq: &mut CompletionQueue,
    pairs: &mut [[End; 2]],
    side: usize,
    protected: bool,
) -> Result<()> {
    for wc in h.dev.poll_cq(cq, 64)? {
        let k = pairs
            .iter()
            .position(|p| p[side].qp.qpn == wc.qpn)
            .with_context(|| format!("a completion for QP {} of no pair: {wc:?}", wc.qpn))?;
        let [me, peer] = {
            let [a, b] = &mut pairs[k];
            if side == 0 {
                [a, b]
            } else {
                [b, a]
            }
        };
        if protected {
            ensure!(wc.status == WC_SUCCESS, "protected QP {}: {wc:?}", wc.qpn);
        } else if wc.status != WC_SUCCESS {
            me.failed = true;
        }
        if wc.opcode & WC_RECV == 0 {
            ensure!(
                me.outstanding > 0 && wc.wr_id >= me.floor,
                "QP {}: a completion for no WR posted in this connection: {wc:?}",
                wc.qpn
            );
            if wc.status == WC_SUCCESS && me.lives > 0 {
                me.done_later += 1;
            }
            if wc.status == WC_SUCCESS {
                me.bytes_done += u64::from(wc.byte_len);
                me.ok_after_err += u64::from(me.send_failed);
            } else if !me.send_failed {
                me.send_failed = true;
                me.first_err = Some(wc.status);
            }
            me.outstanding -= 1;
            me.done += 1;
            continue;
        }
        // A receive completion (a victim's may be a forged SEND's or WRITE with immediate's).
        if wc.status != WC_SUCCESS {
            continue;
        }
        let slot = wc.wr_id as usize;
        ensure!(slot < SLOTS, "QP {}: {wc:?} names no receive WR", wc.qpn);
        let sent = me.incoming.pop_front();
        if protected {
            let (off, len) = sent.context("a receive completion unasked")?;
            ensure!(
                wc.opcode == WC_RECV && wc.byte_len as usize == len,
                "QP {}: {wc:?}, sent {len}",
                wc.qpn
            );
            let mut got = vec![0; len];
            h.dev.mem.read(me.slots[slot].addr, &mut got)?;
            ensure!(
                got == peer.src_bytes[off..off + len],
                "QP {}: a SEND of {len} bytes received wrong",
                wc.qpn
            );
        }
        if !me.starve {
            let wr = recv_wr(slot, &me.slots[slot]);
            h.dev.post_recv(&mut me.qp, &[wr])?;
        }
    }
    Ok(())
}

/// Reset a pair's QPs and connect them again with new PSNs from `psn` (path MTU 1024), as an
/// application would once its failed QPs have flushed: the ends' next life begins (nothing of
/// the last may complete after it), their receive buffers posted again.
pub(crate) fn reconnect(w: &mut World, a: &mut End, b: &mut End, psn: u32) -> Result<()> {
    w.reconnect(&mut a.qp, &mut b.qp, 1024, psn, psn ^ 0x80_0000)?;
    for (h, e) in [(&mut w.a, a), (&mut w.b, b)] {
        e.floor = e.posted;
        e.lives += 1;
        (e.failed, e.draining, e.send_failed) = (false, false, false);
        e.incoming.clear();
        let wrs: Vec<RecvWr> = e
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| recv_wr(i, s))
            .collect();
        h.dev.post_recv(&mut e.qp, &wrs)?;
    }
    Ok(())
}
