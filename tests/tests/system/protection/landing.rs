//! Regions written no more: a peer's WRITE into a region deregistered mid-message, a READ's
//! responses landing in a local region deregistered mid-READ.

use super::{accepted, deregister, first_bytes_only, start, two_completions, Round};
use anyhow::{ensure, Context, Result};
use ferroce_driver::{access, DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_spec::queues::{WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR, WC_WR_FLUSH_ERR};
use ferroce_tests::{lossless_world, rng, seed};
use rand::Rng;

/// A 32-64 KiB WRITE at PMTU 256-1024 (64 packets or more) into a region of host b; after 2
/// to 12 of its packets have reached b, b deregisters the region (or, every other round,
/// deregisters it and registers the same range again: a new tag at the same index). The rest
/// of the message is refused: the WRITE completes REM_ACCESS_ERR at a (the QP fails, the
/// WRITE behind it flushes), b counts one bad rkey, the bytes that landed are the message's
/// first ones only, and a canary b writes into the range once the packets checked before the
/// deregistration have landed is never overwritten. Each packet of a WRITE is checked against
/// the region as rxe's `check_rkey` does; before, the rest landed and the WRITE succeeded.
#[test]
fn a_region_deregistered_mid_write_takes_no_more_of_it() -> Result<()> {
    let s = seed("a_region_deregistered_mid_write_takes_no_more_of_it");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    for round in 0..4 {
        let Round {
            pmtu,
            len,
            mut qa,
            qb: _,
            data,
        } = start(&mut w, &mut r)?;
        let src = w.a.buffer(len, &data)?;
        let dst = w.b.dev.mem.alloc(len, 4096)?;
        w.b.dev.mem.write(dst.addr, &vec![0u8; len])?;
        let mr =
            w.b.dev
                .reg_mr(&w.b.pd, dst.addr, len as u64, access::REMOTE_WRITE)?;
        let bad0 = w.b.counter("resp_bad_rkey")?;
        let reg0 = w.b.dev.rc_stats()?.key_refused;
        let rx0 = w.b.counter("rx_accepted")?;
        let write = |wr_id: u64, length: u32| SendWr {
            wr_id,
            sg_list: vec![Sge {
                addr: src.addr,
                length,
                lkey: src.lkey,
            }],
            remote_addr: dst.addr,
            rkey: mr.rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev
            .post_send(&mut qa, &[write(1, len as u32), write(2, 64)])?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, true, rx0 + after, &format!("seed {s}: round {round}"))?;
        let again = round % 2 == 1;
        let new = deregister(&mut w.b, &mr, again)?;
        if let Some(m) = new {
            ensure!(
                m.rkey >> 8 == mr.rkey >> 8 && m.rkey != mr.rkey,
                "seed {s}: the new registration takes the index with a new tag"
            );
        }
        // The packets checked before the deregistration land; then a canary.
        w.run(2000)?;
        let mut landed = vec![0u8; len];
        w.b.dev.mem.read(dst.addr, &mut landed)?;
        // (In order: the message's first bytes, then nothing.)
        let n = first_bytes_only(&landed, &data)
            .with_context(|| format!("seed {s}: round {round}: b holds bytes past a prefix"))?;
        let canary: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        w.b.dev.mem.write(dst.addr, &canary)?;
        let st = two_completions(&mut w, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [(1, WC_REM_ACCESS_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B, deregistered after {after} \
             packets{}): {st:?}",
            if again { ", registered again" } else { "" }
        );
        ensure!(
            w.b.counter("resp_bad_rkey")? == bad0 + 1,
            "seed {s}: round {round}: b refused one packet"
        );
        ensure!(
            w.b.dev.rc_stats()?.key_refused == reg0 + 1,
            "seed {s}: round {round}: BAR0's KEY_REFUSED did not count the refusal"
        );
        let mut end = vec![0u8; len];
        w.b.dev.mem.read(dst.addr, &mut end)?;
        ensure!(
            end == canary,
            "seed {s}: round {round}: the region was written after its deregistration"
        );
        println!(
            "seed {s}: round {round}: PMTU {pmtu}, {len} B WRITE, deregistered{} after {after} \
             packets: {n} B landed before, none after, REM_ACCESS_ERR",
            if again { " and registered again" } else { "" }
        );
        if let Some(m) = new {
            w.b.dev.dereg_mr(&m)?;
        }
    }
    Ok(())
}

/// A 32-64 KiB READ at PMTU 256-1024 (32 responses or more) into a local region of host a;
/// after 2 to 12 of its responses have reached a, a deregisters the region (or, every other
/// round, deregisters it and registers the same range again). The rest of the responses land
/// nowhere: the READ completes LOC_PROT_ERR (the QP fails, the WR behind it flushes), the
/// bytes that landed are the READ's first ones only, a canary a writes into the range once
/// the responses checked before are in is never overwritten, and the root complex sees no
/// write into the range once deregistered (it fails the run on one). The READ's SGEs are
/// checked again after an MR table write, as rxe checks the MR of each response it copies;
/// before, the rest landed and the READ succeeded.
#[test]
fn a_local_region_deregistered_mid_read_takes_no_more_of_it() -> Result<()> {
    let s = seed("a_local_region_deregistered_mid_read_takes_no_more_of_it");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    for round in 0..4 {
        let Round {
            pmtu,
            len,
            mut qa,
            qb: _,
            data,
        } = start(&mut w, &mut r)?;
        let src = w.b.buffer(len, &data)?;
        let dst = w.a.dev.mem.alloc(len, 4096)?;
        w.a.dev.mem.write(dst.addr, &vec![0u8; len])?;
        let mr =
            w.a.dev
                .reg_mr(&w.a.pd, dst.addr, len as u64, access::LOCAL_WRITE)?;
        let small = w.a.buffer(64, &[0u8; 64])?;
        let bad0 = w.a.counter("resp_bad_resp")?;
        let rx0 = w.a.counter("rx_accepted")?;
        let read = |wr_id: u64, length: u32, addr: u64, lkey: u32| SendWr {
            wr_id,
            opcode: WrOpcode::RdmaRead,
            sg_list: vec![Sge { addr, length, lkey }],
            remote_addr: src.addr,
            rkey: src.rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev.post_send(
            &mut qa,
            &[
                read(1, len as u32, dst.addr, mr.lkey),
                read(2, 64, small.addr, small.lkey),
            ],
        )?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, false, rx0 + after, &format!("seed {s}: round {round}"))?;
        let again = round % 2 == 1;
        let new = deregister(&mut w.a, &mr, again)?;
        // The responses checked before the deregistration land; then a canary.
        w.run(2000)?;
        let mut landed = vec![0u8; len];
        w.a.dev.mem.read(dst.addr, &mut landed)?;
        let n = first_bytes_only(&landed, &data)
            .with_context(|| format!("seed {s}: round {round}: a holds bytes past a prefix"))?;
        let canary: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        w.a.dev.mem.write(dst.addr, &canary)?;
        let st = two_completions(&mut w, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [(1, WC_LOC_PROT_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B, deregistered after {after} \
             responses{}): {st:?}",
            if again { ", registered again" } else { "" }
        );
        ensure!(
            w.a.counter("resp_bad_resp")? > bad0,
            "seed {s}: round {round}: a refused the READ's rest"
        );
        w.run(5000)?;
        let mut end = vec![0u8; len];
        w.a.dev.mem.read(dst.addr, &mut end)?;
        ensure!(
            end == canary,
            "seed {s}: round {round}: the region was written after its deregistration"
        );
        println!(
            "seed {s}: round {round}: PMTU {pmtu}, {len} B READ, deregistered{} after {after} \
             responses: {n} B landed before, none after, LOC_PROT_ERR",
            if again { " and registered again" } else { "" }
        );
        if let Some(m) = new {
            w.a.dev.dereg_mr(&m)?;
        }
    }
    Ok(())
}
