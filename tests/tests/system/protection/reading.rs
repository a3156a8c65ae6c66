//! Regions read no more: a READ this NIC serves from a region deregistered mid-READ, one
//! queued behind it, a local WRITE's source deregistered mid-message; and a READ that goes on
//! whole when regions it does not touch are deregistered.

use super::{accepted, completions, deregister, first_bytes_only, start, two_completions, Round};
use anyhow::{ensure, Context, Result};
use ferroce_driver::{access, DmaMemory, QpState, SendWr, Sge, WrOpcode};
use ferroce_spec::queues::{WC_LOC_PROT_ERR, WC_REM_ACCESS_ERR, WC_SUCCESS, WC_WR_FLUSH_ERR};
use ferroce_tests::{lossless_world, rng, seed};
use rand::Rng;

/// A 32-64 KiB READ at PMTU 256-1024 (32 responses or more) from a region of host b; after 2
/// to 12 of its responses have reached a, b deregisters the region (or, every other round,
/// deregisters it and registers the same range again). b serves none of the rest: its root
/// complex sees no read of the range once deregistered (it fails the run on one), and in
/// place of the next response b sends a NAK remote access error, as rxe does when the MR of
/// a READ it serves is gone: the READ completes REM_ACCESS_ERR at a (the WR behind it
/// flushes), the bytes that landed are the READ's first ones only, b counts one refused
/// response and b's QP is in ERR. Before, b read the region to the end and the READ succeeded.
#[test]
fn a_served_region_deregistered_mid_read_gives_no_more_of_it() -> Result<()> {
    let s = seed("a_served_region_deregistered_mid_read_gives_no_more_of_it");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    for round in 0..4 {
        let Round {
            pmtu,
            len,
            mut qa,
            qb,
            data,
        } = start(&mut w, &mut r)?;
        let src = w.b.dev.mem.alloc(len, 4096)?;
        w.b.dev.mem.write(src.addr, &data)?;
        let mr =
            w.b.dev
                .reg_mr(&w.b.pd, src.addr, len as u64, access::REMOTE_READ)?;
        let dst = w.a.buffer(len, &vec![0u8; len])?;
        let refused0 = w.b.counter("req_rsp_refused")?;
        let rx0 = w.a.counter("rx_accepted")?;
        let read = |wr_id: u64, length: u32| SendWr {
            wr_id,
            opcode: WrOpcode::RdmaRead,
            sg_list: vec![Sge {
                addr: dst.addr,
                length,
                lkey: dst.lkey,
            }],
            remote_addr: src.addr,
            rkey: mr.rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev
            .post_send(&mut qa, &[read(1, len as u32), read(2, 64)])?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, false, rx0 + after, &format!("seed {s}: round {round}"))?;
        let again = round % 2 == 1;
        let new = deregister(&mut w.b, &mr, again)?;
        let st = two_completions(&mut w, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [(1, WC_REM_ACCESS_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B, deregistered after {after} \
             responses{}): {st:?}",
            if again { ", registered again" } else { "" }
        );
        let mut landed = vec![0u8; len];
        w.a.dev.mem.read(dst.addr, &mut landed)?;
        let n = first_bytes_only(&landed, &data)
            .with_context(|| format!("seed {s}: round {round}: a holds bytes past a prefix"))?;
        ensure!(
            w.b.counter("req_rsp_refused")? == refused0 + 1
                && u64::from(w.b.dev.rc_stats()?.rsp_refused) == refused0 + 1,
            "seed {s}: round {round}: b refused one response (BAR0's RC_STATS says so too)"
        );
        let state = w.b.dev.query_qp(&qb)?.state;
        ensure!(
            state == Some(QpState::Err),
            "seed {s}: round {round}: b's QP is {state:?}, not in ERR"
        );
        println!(
            "seed {s}: round {round}: PMTU {pmtu}, {len} B READ served, deregistered{} after \
             {after} responses: {n} B sent before, none after, REM_ACCESS_ERR",
            if again { " and registered again" } else { "" }
        );
        if let Some(m) = new {
            w.b.dev.dereg_mr(&m)?;
        }
    }
    Ok(())
}

/// Two READs from host b, the second of another region of b: while the first is being
/// served, b deregisters the second's region (so the first's job is checked again, its region
/// untouched, and the second's job waits in b's queue, its region checked when the rkey was
/// read). The first completes SUCCESS with every byte; the second is refused before b reads a
/// byte of it (NAK remote access error at its first PSN: REM_ACCESS_ERR), the WR behind flushes.
#[test]
fn a_queued_read_of_a_region_deregistered_is_refused_whole() -> Result<()> {
    let s = seed("a_queued_read_of_a_region_deregistered_is_refused_whole");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    for round in 0..3 {
        let pmtu = 256u32 << r.gen_range(0..3);
        let len = r.gen_range(32 << 10..=64 << 10);
        let len2 = r.gen_range(1..=8 << 10);
        let (mut qa, _qb) =
            w.connect(pmtu, r.gen_range(0..1 << 24), r.gen_range(0..1 << 24), 16)?;
        let data: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        let one = w.b.buffer(len, &data)?;
        let two = w.b.dev.mem.alloc(len2, 4096)?;
        let mr2 =
            w.b.dev
                .reg_mr(&w.b.pd, two.addr, len2 as u64, access::REMOTE_READ)?;
        let dst = w.a.buffer(len + len2, &vec![0u8; len + len2])?;
        let rx0 = w.a.counter("rx_accepted")?;
        let refused0 = w.b.counter("req_rsp_refused")?;
        let read = |wr_id: u64, at: usize, length: usize, raddr: u64, rkey: u32| SendWr {
            wr_id,
            opcode: WrOpcode::RdmaRead,
            sg_list: vec![Sge {
                addr: dst.addr + at as u64,
                length: length as u32,
                lkey: dst.lkey,
            }],
            remote_addr: raddr,
            rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev.post_send(
            &mut qa,
            &[
                read(1, 0, len, one.addr, one.rkey),
                read(2, len, len2, two.addr, mr2.rkey),
                read(3, 0, 64, one.addr, one.rkey),
            ],
        )?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, false, rx0 + after, &format!("seed {s}: round {round}"))?;
        w.b.dev.dereg_mr(&mr2)?;
        let st = completions(&mut w, 3, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [
                (1, WC_SUCCESS),
                (2, WC_REM_ACCESS_ERR),
                (3, WC_WR_FLUSH_ERR)
            ],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B then {len2} B, deregistered after \
             {after} responses): {st:?}"
        );
        let mut landed = vec![0u8; len + len2];
        w.a.dev.mem.read(dst.addr, &mut landed)?;
        ensure!(
            landed[..len] == data[..] && landed[len..].iter().all(|&b| b == 0),
            "seed {s}: round {round}: the first READ's bytes, and none of the second's"
        );
        ensure!(
            w.b.counter("req_rsp_refused")? == refused0 + 1,
            "seed {s}: round {round}: b refused one response"
        );
        println!(
            "seed {s}: round {round}: PMTU {pmtu}: {len} B READ served whole, the {len2} B \
             READ behind it refused (its region deregistered after {after} responses)"
        );
    }
    Ok(())
}

/// A 32-64 KiB READ at PMTU 256-1024; after 2 to 12 of its responses have reached a, each
/// host deregisters a region the READ does not touch. Both checks run again (a's of the
/// READ's local SGEs, b's of the region it serves) and both pass: the READ completes SUCCESS
/// with every byte, and nothing is refused. A table write costs a READ in progress a check,
/// not its data.
#[test]
fn a_read_goes_on_whole_when_other_regions_are_deregistered() -> Result<()> {
    let s = seed("a_read_goes_on_whole_when_other_regions_are_deregistered");
    let mut r = rng(s);
    let mut w = lossless_world(s)?;
    for round in 0..3 {
        let Round {
            pmtu,
            len,
            mut qa,
            qb: _,
            data,
        } = start(&mut w, &mut r)?;
        let src = w.b.buffer(len, &data)?;
        let dst = w.a.buffer(len, &vec![0u8; len])?;
        let other_a = w.a.buffer(4096, &[1u8; 4096])?;
        let other_b = w.b.buffer(4096, &[2u8; 4096])?;
        let rx0 = w.a.counter("rx_accepted")?;
        let (bad0, refused0) = (
            w.a.counter("resp_bad_resp")?,
            w.b.counter("req_rsp_refused")?,
        );
        w.a.dev.post_send(
            &mut qa,
            &[SendWr {
                wr_id: 1,
                opcode: WrOpcode::RdmaRead,
                sg_list: vec![Sge {
                    addr: dst.addr,
                    length: len as u32,
                    lkey: dst.lkey,
                }],
                remote_addr: src.addr,
                rkey: src.rkey,
                signaled: true,
                ..Default::default()
            }],
        )?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, false, rx0 + after, &format!("seed {s}: round {round}"))?;
        w.b.dev.dereg_mr(&other_b)?;
        w.a.dev.dereg_mr(&other_a)?;
        let st = completions(&mut w, 1, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [(1, WC_SUCCESS)],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B, others deregistered after {after} \
             responses): {st:?}"
        );
        let mut landed = vec![0u8; len];
        w.a.dev.mem.read(dst.addr, &mut landed)?;
        ensure!(landed == data, "seed {s}: round {round}: the READ's bytes");
        ensure!(
            w.a.counter("resp_bad_resp")? == bad0 && w.b.counter("req_rsp_refused")? == refused0,
            "seed {s}: round {round}: nothing refused"
        );
        println!(
            "seed {s}: round {round}: PMTU {pmtu}, {len} B READ, a region on each side \
             deregistered after {after} responses: SUCCESS, every byte"
        );
    }
    Ok(())
}

/// A 32-64 KiB WRITE at PMTU 256-1024 from a local region of host a; after 2 to 12 of its
/// packets have reached b, a deregisters the region (or, every other round, deregisters it
/// and registers the same range again). a reads none of the rest: its root complex sees no
/// read of the range once deregistered (it fails the run on one); the WRITE completes
/// LOC_PROT_ERR (the QP fails, the WR behind it flushes) and b holds the message's first
/// bytes only. A WQE's SGEs are checked again at its next packet after an MR table write;
/// before, a went on reading the region and the WRITE succeeded.
#[test]
fn a_source_region_deregistered_mid_write_gives_no_more_of_it() -> Result<()> {
    let s = seed("a_source_region_deregistered_mid_write_gives_no_more_of_it");
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
        let src = w.a.dev.mem.alloc(len, 4096)?;
        w.a.dev.mem.write(src.addr, &data)?;
        let mr = w.a.dev.reg_mr(&w.a.pd, src.addr, len as u64, 0)?;
        let dst = w.b.buffer(len, &vec![0u8; len])?;
        let rx0 = w.b.counter("rx_accepted")?;
        let write = |wr_id: u64, length: u32| SendWr {
            wr_id,
            sg_list: vec![Sge {
                addr: src.addr,
                length,
                lkey: mr.lkey,
            }],
            remote_addr: dst.addr,
            rkey: dst.rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev
            .post_send(&mut qa, &[write(1, len as u32), write(2, 64)])?;
        let after = r.gen_range(2..=12u64);
        accepted(&w, true, rx0 + after, &format!("seed {s}: round {round}"))?;
        let again = round % 2 == 1;
        let new = deregister(&mut w.a, &mr, again)?;
        let st = two_completions(&mut w, &format!("seed {s}: round {round}"))?;
        ensure!(
            st == [(1, WC_LOC_PROT_ERR), (2, WC_WR_FLUSH_ERR)],
            "seed {s}: round {round} (PMTU {pmtu}, {len} B, deregistered after {after} \
             packets{}): {st:?}",
            if again { ", registered again" } else { "" }
        );
        w.run(5000)?;
        let mut landed = vec![0u8; len];
        w.b.dev.mem.read(dst.addr, &mut landed)?;
        let n = first_bytes_only(&landed, &data)
            .with_context(|| format!("seed {s}: round {round}: b holds bytes past a prefix"))?;
        println!(
            "seed {s}: round {round}: PMTU {pmtu}, {len} B WRITE from a region deregistered{} \
             after {after} packets: {n} B sent before, none after, LOC_PROT_ERR",
            if again { " and registered again" } else { "" }
        );
        if let Some(m) = new {
            w.a.dev.dereg_mr(&m)?;
        }
    }
    Ok(())
}
