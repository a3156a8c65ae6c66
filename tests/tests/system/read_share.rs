//! A long READ response takes turns with the QPs that send: the NIC serving a READ of a
//! megabyte or two sets its response aside after each quantum while a QP of its own has work
//! (a WRITE, a SEND), so the QP's work requests complete in microseconds, not after the
//! response's last byte (1.7 ms for 2 MiB at 10 Gb/s: every local QP waited for it). The
//! responses of one QP stay in order: a second READ behind the long one, on the same QP, lands
//! after it.

use anyhow::{ensure, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_spec::queues::{WC_RDMA_READ, WC_SUCCESS};
use ferroce_tests::{budget, nonzero_counters, rng, seed};
use rand::Rng;

/// 400 us at 156.25 MHz. The requester serves one work request a visit, and a QP's WQE
/// fetch waits behind the payload reads already issued (the response's last 13 KiB or so),
/// so each WRITE costs about a response quantum (16 KiB, 13 us) and a fetch (11 us): nine
/// WRITEs take about 230 us. Before responses yielded, no WRITE went before the response's
/// last byte, 0.85 ms or more after it began.
const PROMPT: u64 = 62_500;

#[test]
fn a_long_read_response_takes_turns_with_the_qps_that_send() -> Result<()> {
    let s = seed("a_long_read_response_takes_turns_with_the_qps_that_send");
    let mut r = rng(s);
    // Read completions interleaved across tags; hosts that keep up (the wire is the limit).
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(s),
        ..WorldConfig::default()
    })?;
    let pmtu = [1024u32, 2048, 4096][r.gen_range(0..3)];
    let long = r.gen_range(1 << 20..=2 << 20);
    let short = r.gen_range(1..=64 << 10);
    let senders = r.gen_range(1..=3usize);
    // Host a reads b's source (the long READ, then the short one on the same QP); b's QPs
    // write into a's target meanwhile.
    let src: Vec<u8> = (0..long + short).map(|_| r.gen()).collect();
    let sb = w.b.buffer(src.len(), &src)?;
    let da = w.a.buffer(src.len(), &vec![0u8; src.len()])?;
    let wsrc: Vec<u8> = (0..senders * 4 * 4096).map(|_| r.gen()).collect();
    let sw = w.b.buffer(wsrc.len(), &wsrc)?;
    let dw = w.a.buffer(wsrc.len(), &vec![0u8; wsrc.len()])?;
    let (mut qa, _qb) = w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
    let mut others = Vec::new();
    for _ in 0..senders {
        others.push(w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?);
    }
    let reads: Vec<SendWr> = [(0usize, long), (long, short)]
        .iter()
        .enumerate()
        .map(|(i, &(off, len))| SendWr {
            wr_id: i as u64,
            opcode: WrOpcode::RdmaRead,
            sg_list: vec![Sge {
                addr: da.addr + off as u64,
                length: len as u32,
                lkey: da.lkey,
            }],
            remote_addr: sb.addr + off as u64,
            rkey: sb.rkey,
            signaled: true,
            ..Default::default()
        })
        .collect();
    w.a.dev.post_send(&mut qa, &reads)?;
    // The response under way (a tenth of it or so), then each of b's QPs posts 1 to 3 WRITEs.
    w.run(r.gen_range(10_000..25_000))?;
    let mut want = Vec::new();
    for (k, (_, qb)) in others.iter_mut().enumerate() {
        let n = r.gen_range(1..=3usize);
        let list: Vec<SendWr> = (0..n)
            .map(|i| {
                let off = ((k * 4 + i) * 4096) as u64;
                let len = r.gen_range(1..=4096u32);
                want.push((qb.qpn, (k * 4 + i) as u64, off, len as usize));
                SendWr {
                    wr_id: (k * 4 + i) as u64,
                    opcode: WrOpcode::RdmaWrite,
                    sg_list: vec![Sge {
                        addr: sw.addr + off,
                        length: len,
                        lkey: sw.lkey,
                    }],
                    remote_addr: dw.addr + off,
                    rkey: dw.rkey,
                    signaled: true,
                    ..Default::default()
                }
            })
            .collect();
        w.b.dev.post_send(qb, &list)?;
    }
    let t0 = w.cycle();
    let mut done = 0;
    while done < want.len() {
        w.run(200)?;
        for c in w.b.dev.poll_cq(&mut w.b.cq, 64)? {
            ensure!(c.status == WC_SUCCESS, "seed {s}: {c:?}");
            done += 1;
        }
        ensure!(
            w.cycle() - t0 < PROMPT,
            "seed {s}: {done} of {} WRITEs complete {} cycles after they were posted while \
             a {long}-byte READ response goes out; a: {}; b: {}",
            want.len(),
            w.cycle() - t0,
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    let dt = w.cycle() - t0;
    // The READs have not completed yet: the WRITEs went between the response's packets.
    let early = w.a.dev.poll_cq(&mut w.a.cq, 4)?;
    ensure!(
        early.is_empty(),
        "seed {s}: the READs completed before the WRITEs: {early:?}"
    );
    let mut got = Vec::new();
    let mut idle = 0;
    while got.len() < 2 {
        w.run(2_000)?;
        let more = w.a.dev.poll_cq(&mut w.a.cq, 4)?;
        idle = if more.is_empty() { idle + 2_000 } else { 0 };
        got.extend(more);
        ensure!(
            idle < budget(1_000_000),
            "seed {s}: {} of 2 READs complete; a: {}; b: {}; faults a {:?} b {:?}",
            got.len(),
            nonzero_counters(&w.a),
            nonzero_counters(&w.b),
            w.a.faults()?
                .into_iter()
                .filter(|f| f.1 != 0)
                .collect::<Vec<_>>(),
            w.b.faults()?
                .into_iter()
                .filter(|f| f.1 != 0)
                .collect::<Vec<_>>()
        );
    }
    for (i, c) in got.iter().enumerate() {
        ensure!(
            c.wr_id == i as u64 && c.status == WC_SUCCESS && c.opcode == WC_RDMA_READ,
            "seed {s}: READ {i}: {c:?}"
        );
    }
    let mut mem = vec![0u8; src.len()];
    w.a.dev.mem.read(da.addr, &mut mem)?;
    ensure!(mem == src, "seed {s}: the READs' bytes");
    let mut mem = vec![0u8; wsrc.len()];
    w.a.dev.mem.read(dw.addr, &mut mem)?;
    for &(_, _, off, len) in &want {
        let o = off as usize;
        ensure!(
            mem[o..o + len] == wsrc[o..o + len],
            "seed {s}: the WRITE at {off}"
        );
    }
    ensure!(w.a.sim.borrow().rc.borrow().violations.is_empty());
    ensure!(w.b.sim.borrow().rc.borrow().violations.is_empty());
    println!(
        "seed {s}: {} WRITEs on {senders} QPs done in {dt} cycles beside a {long}-byte READ \
         response (PMTU {pmtu})",
        want.len()
    );
    Ok(())
}
