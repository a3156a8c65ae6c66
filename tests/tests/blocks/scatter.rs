//! The scatter block on its Verilator model, rust-hdl's simulator beside it on the same stimulus
//! with every output compared every cycle. Random packets (0 to 100 bytes) are cut at random
//! points into 1 to 5 pieces (some empty) and sent with random idle cycles on both inputs
//! while the consumer stalls at random. Each piece out must be the packet's bytes at its place,
//! from lane 0, following the stream convention (full beats, then a last beat with `tkeep`
//! contiguous from lane 0 and zero past it; an empty piece is one empty beat); with no stalls
//! the block keeps one beat per clock. Then packets that break the contract: longer than their
//! pieces (the rest dropped) and shorter (the pieces' missing bytes zeros), both counted, and
//! the block back in step for a good packet after them.

use anyhow::{ensure, Result};
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

/// One input beat: data, keep, last.
type Beat = (u64, u64, bool);

/// A packet's beats; lanes past the bytes of the last beat carry junk the block must not pass.
fn beats_of_packet(bytes: &[u8]) -> Vec<Beat> {
    let n = bytes.len().div_ceil(KW).max(1);
    (0..n)
        .map(|i| {
            let chunk = &bytes[(i * KW).min(bytes.len())..((i + 1) * KW).min(bytes.len())];
            let mut w = [0xA5u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            (u64::from_le_bytes(w), (1u64 << chunk.len()) - 1, i + 1 == n)
        })
        .collect()
}

/// One packet as the block sees it: its bytes on the input, its pieces, and what each piece
/// must come out as.
struct Case {
    beats: Vec<Beat>,
    pieces: Vec<(u16, bool)>,
    want: Vec<Vec<u8>>,
}

/// `bytes` cut into `lens` (whose sum may differ from the packet's length: a broken contract).
fn case(bytes: &[u8], lens: &[usize]) -> Case {
    let mut at = 0;
    let mut want = Vec::new();
    let mut pieces = Vec::new();
    for (i, &l) in lens.iter().enumerate() {
        let piece: Vec<u8> = (at..at + l)
            .map(|j| bytes.get(j).copied().unwrap_or(0))
            .collect();
        at += l;
        want.push(piece);
        pieces.push((l as u16, i + 1 == lens.len()));
    }
    Case {
        beats: beats_of_packet(bytes),
        pieces,
        want,
    }
}

fn run(s: u64, stall: bool, cases: Vec<Case>) -> Result<u64> {
    let mut r = rng(s ^ 0x5ca7);
    let mut tb = open_tb("ferroce_scatter_64", &BuildOptions::default())?;
    let mut hdl = ten_g::Scatter::new();
    hdl.connect_all();
    let edge = |b: &mut ten_g::Scatter| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let mut beats: VecDeque<Beat> = cases.iter().flat_map(|c| c.beats.clone()).collect();
    let mut cmds: VecDeque<(u16, bool)> = cases.iter().flat_map(|c| c.pieces.clone()).collect();
    let mut want: VecDeque<Vec<u8>> = cases.iter().flat_map(|c| c.want.clone()).collect();
    let pieces = want.len();
    let out_beats_need: usize = want.iter().map(|w| w.len().div_ceil(KW).max(1)).sum();
    // A packet of no bytes still brings an (empty) input beat its pieces do not take: two
    // cycles more (dropped, then the next piece loaded).
    let empty_packets = cases.iter().filter(|c| c.beats[0].1 == 0).count();
    let mut got: Vec<u8> = Vec::new();
    let mut done = 0usize;
    let mut cycle = 0u64;
    let mut cur: Option<Beat> = None;
    let mut cmd: Option<(u16, bool)> = None;
    while done < pieces {
        ensure!(cycle < 200_000, "seed {s}: stuck after {done} pieces");
        if cur.is_none() && !(stall && r.gen_ratio(1, 4)) {
            cur = beats.pop_front();
        }
        if cmd.is_none() && !(stall && r.gen_ratio(1, 4)) {
            cmd = cmds.pop_front();
        }
        let (d, k, l) = cur.unwrap_or((r.gen(), r.gen_range(0..256), r.gen()));
        let (cl, clast) = cmd.unwrap_or((r.gen(), r.gen()));
        let ready = !(stall && r.gen_ratio(1, 3));
        let (valid, cvalid) = (cur.is_some(), cmd.is_some());
        let s_ready = tb.get("s_tready")? == 1;
        let c_ready = tb.get("s_cmd_tready")? == 1;
        if tb.get("m_tvalid")? == 1 && ready {
            let data = tb.get("m_tdata")?.to_le_bytes();
            let keep = tb.get("m_tkeep")?;
            let last = tb.get("m_tlast")? == 1;
            let n = keep.trailing_ones() as usize;
            ensure!(
                keep == (1 << n) - 1 && (last || n == KW),
                "seed {s} cycle {cycle}: keep {keep:#x} (last {last}) breaks the convention"
            );
            ensure!(
                data[n..].iter().all(|b| *b == 0),
                "seed {s} cycle {cycle}: lanes past keep are not zero: {data:?}"
            );
            got.extend_from_slice(&data[..n]);
            if last {
                let w = want.pop_front().expect("a piece expected");
                ensure!(
                    got == w,
                    "seed {s}: piece {done} is {got:02x?}, want {w:02x?}"
                );
                got.clear();
                done += 1;
            }
        }
        if cur.is_some() && s_ready {
            cur = None;
        }
        if cmd.is_some() && c_ready {
            cmd = None;
        }
        hdl.s_tdata.next = bits_from_u64(d);
        hdl.s_tkeep.next = bits_from_u64(k);
        hdl.s_tlast.next = l;
        hdl.s_tvalid.next = valid;
        hdl.s_cmd_len.next = bits_from_u64(cl.into());
        hdl.s_cmd_last.next = clast;
        hdl.s_cmd_tvalid.next = cvalid;
        hdl.m_tready.next = ready;
        edge(&mut hdl);
        tb.set("s_tdata", d)?;
        tb.set("s_tkeep", k)?;
        tb.set("s_tlast", l.into())?;
        tb.set("s_tvalid", valid.into())?;
        tb.set("s_cmd_len", cl.into())?;
        tb.set("s_cmd_last", clast.into())?;
        tb.set("s_cmd_tvalid", cvalid.into())?;
        tb.set("m_tready", ready.into())?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle)?;
        cycle += 1;
    }
    // Every input beat was taken (dropped ones too).
    for _ in 0..8 {
        if cur.is_none() {
            cur = beats.pop_front();
        }
        let valid = cur.is_some();
        let s_ready = tb.get("s_tready")? == 1;
        hdl.s_tvalid.next = valid;
        hdl.s_cmd_tvalid.next = false;
        if let Some((d, k, l)) = cur {
            hdl.s_tdata.next = bits_from_u64(d);
            hdl.s_tkeep.next = bits_from_u64(k);
            hdl.s_tlast.next = l;
            tb.set("s_tdata", d)?;
            tb.set("s_tkeep", k)?;
            tb.set("s_tlast", l.into())?;
        }
        if valid && s_ready {
            cur = None;
        }
        edge(&mut hdl);
        tb.set("s_tvalid", valid.into())?;
        tb.set("s_cmd_tvalid", 0)?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle)?;
        cycle += 1;
    }
    ensure!(
        cur.is_none() && beats.is_empty(),
        "seed {s}: input beats left over"
    );
    if !stall {
        ensure!(
            cycle <= (out_beats_need + 2 * empty_packets + 16) as u64,
            "seed {s}: {cycle} cycles for {out_beats_need} output beats, {empty_packets} empty packets"
        );
    }
    println!(
        "seed {s}: scatter {pieces} pieces, {cycle} cycles (stalls {stall}), all {} outputs equal",
        outs.len()
    );
    Ok(tb.get("bad_len")?)
}

fn random_cases(s: u64, packets: usize) -> Vec<Case> {
    let mut r = rng(s);
    (0..packets)
        .map(|_| {
            let len = match r.gen_range(0..5) {
                0 => 0,
                1 => KW * r.gen_range(1..6),
                _ => r.gen_range(1..=100),
            };
            let bytes: Vec<u8> = (0..len).map(|_| r.gen()).collect();
            let n = r.gen_range(1..=5);
            let mut cuts: Vec<usize> = (1..n).map(|_| r.gen_range(0..=len)).collect();
            cuts.sort_unstable();
            cuts.insert(0, 0);
            cuts.push(len);
            let lens: Vec<usize> = cuts.windows(2).map(|w| w[1] - w[0]).collect();
            case(&bytes, &lens)
        })
        .collect()
}

#[test]
fn scatter_cuts_packets_into_pieces_and_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("scatter_cuts_packets_into_pieces_and_rust_hdl_matches_verilator");
    for stall in [true, false] {
        let n = if stall { soak(400) } else { 200 };
        let bad = run(s, stall, random_cases(s, n))?;
        ensure!(bad == 0, "seed {s}: bad_len {bad} on good packets");
    }
    Ok(())
}

#[test]
fn packets_that_break_the_contract_are_counted_and_the_block_stays_in_step() -> Result<()> {
    let s = seed("packets_that_break_the_contract_are_counted_and_the_block_stays_in_step");
    let mut r = rng(s);
    let mut bytes = |n: usize| -> Vec<u8> { (0..n).map(|_| r.gen()).collect() };
    let good = bytes(37);
    let cases = vec![
        // Two whole beats more than the pieces: dropped.
        case(&bytes(40), &[10, 14]),
        // Two bytes more, inside the last piece's last beat: dropped.
        case(&bytes(22), &[4, 16]),
        // Shorter than the pieces: the missing bytes come out as zeros.
        case(&bytes(13), &[5, 20]),
        case(&good, &[30, 7]),
    ];
    let bad = run(s, true, cases)?;
    ensure!(
        bad >= 3,
        "seed {s}: bad_len {bad}, three packets broke the contract"
    );
    Ok(())
}
