//! The read share on its Verilator model, rust-hdl's simulator beside it on the same stimulus
//! with every output compared every cycle. Two clients issue read commands (0 to 300 bytes) at
//! random; a DMA read model takes commands at random and answers each, in command order, with
//! its bytes (a function of the address) as one packet, random gaps between beats, some marked
//! failed (`tuser` on the last beat); each client stalls at random. Every command must reach
//! the engine once, each client's in its order, and each client must get exactly its own
//! packets, in its order, with their bytes and failure marks.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak};
use rand::Rng;
use std::collections::VecDeque;

const KW: usize = 8;

fn byte_at(addr: u64) -> u8 {
    (addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// A command's packet: (data, keep, last, user) beats.
fn packet(addr: u64, len: u64, fail: bool) -> Vec<(u64, u64, bool, bool)> {
    let n = len.div_ceil(KW as u64).max(1);
    (0..n)
        .map(|i| {
            let lo = i * KW as u64;
            let cnt = (len - lo.min(len)).min(KW as u64);
            let mut w = [0u8; 8];
            for (j, b) in w.iter_mut().enumerate().take(cnt as usize) {
                *b = byte_at(addr + lo + j as u64);
            }
            let last = i + 1 == n;
            (u64::from_le_bytes(w), (1 << cnt) - 1, last, last && fail)
        })
        .collect()
}

type D = ten_g::RdShare;

#[test]
fn two_clients_share_one_read_engine_and_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("two_clients_share_one_read_engine_and_rust_hdl_matches_verilator");
    let mut r = rng(s);
    let mut tb = open_tb("ferroce_rd_share_64", &BuildOptions::default())?;
    let mut hdl = D::new();
    hdl.connect_all();
    let edge = |b: &mut D| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let n_cmds = soak(300);
    // Per client: commands to issue, commands the engine must see (in order), packets due.
    let mut to_issue: [VecDeque<(u64, u64)>; 2] = Default::default();
    for q in to_issue.iter_mut() {
        for _ in 0..n_cmds {
            let len = match r.gen_range(0..4) {
                0 => 0,
                1 => r.gen_range(1..9),
                _ => r.gen_range(1..=300),
            };
            q.push_back((r.gen::<u64>() >> 8, len));
        }
    }
    let mut seen: [VecDeque<(u64, u64)>; 2] = [to_issue[0].clone(), to_issue[1].clone()];
    let mut due: [VecDeque<(u64, u64, bool)>; 2] = Default::default();
    let mut got: [Vec<u8>; 2] = Default::default();
    let mut engine: VecDeque<(u64, u64, bool)> = VecDeque::new();
    let mut beats: VecDeque<(u64, u64, bool, bool)> = VecDeque::new();
    let mut cur: [Option<(u64, u64)>; 2] = [None, None];
    let mut done = [0usize; 2];
    let mut cycle = 0u64;
    while done != [n_cmds, n_cmds] {
        ensure!(cycle < 2_000_000, "seed {s}: stuck at {done:?}");
        // Client commands, held until taken.
        for k in 0..2 {
            if cur[k].is_none() && r.gen_bool(0.5) {
                cur[k] = to_issue[k].pop_front();
            }
        }
        let a_ready = tb.get("s_a_tready")? == 1;
        let b_ready = tb.get("s_b_tready")? == 1;
        let issue = [cur[0], cur[1]];
        if a_ready && cur[0].is_some() {
            cur[0] = None;
        }
        if b_ready && cur[1].is_some() {
            cur[1] = None;
        }
        // The engine: takes a command at random; its packets go out in order.
        let cmd_ready = r.gen_bool(0.5);
        if tb.get("m_cmd_tvalid")? == 1 && cmd_ready {
            let c = (tb.get("m_cmd_addr")?, tb.get("m_cmd_len")?);
            // Whose command: the head of one client's expected order.
            let k = (0..2)
                .find(|&k| seen[k].front() == Some(&c))
                .with_context(|| format!("seed {s}: command {c:x?} out of order"))?;
            seen[k].pop_front();
            let fail = r.gen_ratio(1, 10);
            engine.push_back((c.0, c.1, fail));
            due[k].push_back((c.0, c.1, fail));
        }
        if beats.is_empty() {
            if let Some((a, l, f)) = engine.pop_front() {
                beats.extend(packet(a, l, f));
            }
        }
        let beat = if r.gen_bool(0.8) {
            beats.front().copied()
        } else {
            None
        };
        let s_ready = tb.get("s_tready")? == 1;
        if beat.is_some() && s_ready {
            beats.pop_front();
        }
        let (d, kp, l, u) = beat.unwrap_or((r.gen(), r.gen_range(0..256), r.gen(), r.gen()));
        // The clients take their bytes at random.
        let ready = [r.gen_bool(0.7), r.gen_bool(0.7)];
        for (k, p) in ["m_a", "m_b"].iter().enumerate() {
            if tb.get(&format!("{p}_tvalid"))? == 1 && ready[k] {
                let data = tb.get(&format!("{p}_tdata"))?.to_le_bytes();
                let keep = tb.get(&format!("{p}_tkeep"))?;
                let last = tb.get(&format!("{p}_tlast"))? == 1;
                let n = keep.trailing_ones() as usize;
                got[k].extend_from_slice(&data[..n]);
                if last {
                    let (a, len, fail) = due[k]
                        .pop_front()
                        .with_context(|| format!("seed {s}: {p}: extra packet"))?;
                    let want: Vec<u8> = (0..len).map(|i| byte_at(a + i)).collect();
                    ensure!(got[k] == want, "seed {s}: {p}: packet at {a:#x} differs");
                    ensure!(
                        (tb.get(&format!("{p}_tuser"))? == 1) == fail,
                        "seed {s}: {p}: failure mark"
                    );
                    got[k].clear();
                    done[k] += 1;
                }
            }
        }
        let sets: [(&str, u64); 14] = [
            ("s_a_addr", issue[0].map_or(0, |c| c.0)),
            ("s_a_len", issue[0].map_or(0, |c| c.1)),
            ("s_a_tvalid", issue[0].is_some().into()),
            ("s_b_addr", issue[1].map_or(0, |c| c.0)),
            ("s_b_len", issue[1].map_or(0, |c| c.1)),
            ("s_b_tvalid", issue[1].is_some().into()),
            ("m_cmd_tready", cmd_ready.into()),
            ("s_tdata", d),
            ("s_tkeep", kp),
            ("s_tlast", l.into()),
            ("s_tuser", u.into()),
            ("s_tvalid", beat.is_some().into()),
            ("m_a_tready", ready[0].into()),
            ("m_b_tready", ready[1].into()),
        ];
        hdl.s_a_addr.next = bits_from_u64(sets[0].1);
        hdl.s_a_len.next = bits_from_u64(sets[1].1);
        hdl.s_a_tvalid.next = issue[0].is_some();
        hdl.s_b_addr.next = bits_from_u64(sets[3].1);
        hdl.s_b_len.next = bits_from_u64(sets[4].1);
        hdl.s_b_tvalid.next = issue[1].is_some();
        hdl.m_cmd_tready.next = cmd_ready;
        hdl.s_tdata.next = bits_from_u64(d);
        hdl.s_tkeep.next = bits_from_u64(kp);
        hdl.s_tlast.next = l;
        hdl.s_tuser.next = u;
        hdl.s_tvalid.next = beat.is_some();
        hdl.m_a_tready.next = ready[0];
        hdl.m_b_tready.next = ready[1];
        edge(&mut hdl);
        for (name, v) in sets {
            tb.set(name, v)?;
        }
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle)?;
        cycle += 1;
    }
    ensure!(
        engine.is_empty() && beats.is_empty(),
        "seed {s}: bytes left over"
    );
    println!(
        "seed {s}: {} commands of two clients, {cycle} cycles, all {} outputs equal",
        2 * n_cmds,
        outs.len()
    );
    Ok(())
}
