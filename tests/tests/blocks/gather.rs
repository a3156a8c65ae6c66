//! The gather block on its Verilator model, rust-hdl's simulator beside it on the same stimulus
//! with every output compared every cycle. Random pieces (0 to 40 bytes, some empty, some whole
//! beats) are grouped into packets of 1 to 5 pieces and sent with random idle cycles while the
//! consumer stalls at random; one piece in eight is marked bad (`tuser` on its last beat; junk
//! `tuser` on other beats). Each packet out must be the plain concatenation of its pieces'
//! bytes, marked bad on its last beat exactly when one of its pieces was, follow the stream convention (full beats, then a last beat with `tkeep` contiguous
//! from lane 0 and zero past it), and with no stalls the block must keep one beat per clock.

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

/// One input beat: data, keep, last, join, user.
type Beat = (u64, u64, bool, bool, bool);

fn beats_of_piece(bytes: &[u8], join: bool, bad: bool, junk: u64) -> Vec<Beat> {
    let mut out = Vec::new();
    let n = bytes.len().div_ceil(KW).max(1);
    for i in 0..n {
        let chunk = &bytes[(i * KW).min(bytes.len())..((i + 1) * KW).min(bytes.len())];
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        // Lanes past the piece carry junk: the block must not pass it on.
        for b in w.iter_mut().skip(chunk.len()) {
            *b = 0xA5;
        }
        let last = i + 1 == n;
        out.push((
            u64::from_le_bytes(w),
            (1u64 << chunk.len()) - 1,
            last,
            last && join,
            if last { bad } else { junk >> (i % 64) & 1 == 1 },
        ));
    }
    out
}

fn run(s: u64, stall: bool) -> Result<()> {
    let mut r = rng(s);
    let mut tb = open_tb("ferroce_gather_64", &BuildOptions::default())?;
    let mut hdl = ten_g::Gather::new();
    hdl.connect_all();
    let edge = |b: &mut ten_g::Gather| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    // The stimulus: packets of pieces, as beats, and the packets' expected bytes.
    let packets = if stall { soak(400) } else { 200 };
    let mut beats: VecDeque<Beat> = VecDeque::new();
    let mut want: VecDeque<(Vec<u8>, bool)> = VecDeque::new();
    let mut want_beats = 0usize;
    let mut empty_tails = 0usize;
    for _ in 0..packets {
        let pieces = r.gen_range(1..=5);
        let mut bytes = Vec::new();
        let mut last_len = 0;
        let mut bad = false;
        for p in 0..pieces {
            let len = match r.gen_range(0..6) {
                0 => 0,
                1 => KW * r.gen_range(1..4),
                _ => r.gen_range(1..=40),
            };
            let piece: Vec<u8> = (0..len).map(|_| r.gen()).collect();
            last_len = len;
            bytes.extend_from_slice(&piece);
            let piece_bad = r.gen_ratio(1, 8);
            bad |= piece_bad;
            beats.extend(beats_of_piece(&piece, p + 1 < pieces, piece_bad, r.gen()));
        }
        want_beats += bytes.len().div_ceil(KW).max(1);
        empty_tails += usize::from(last_len == 0 && !bytes.is_empty());
        want.push_back((bytes, bad));
    }
    let in_beats = beats.len();
    let mut got: Vec<u8> = Vec::new();
    let mut done = 0usize;
    let mut cycle = 0u64;
    let mut out_beats = 0usize;
    let mut cur: Option<Beat> = None;
    while done < packets {
        ensure!(cycle < 200_000, "seed {s}: stuck after {done} packets");
        if cur.is_none() && !(stall && r.gen_ratio(1, 4)) {
            cur = beats.pop_front();
        }
        let (d, k, l, j, u) =
            cur.unwrap_or((r.gen(), r.gen_range(0..256), r.gen(), r.gen(), r.gen()));
        let valid = cur.is_some();
        let ready = !(stall && r.gen_ratio(1, 3));
        let s_ready = tb.get("s_tready")? == 1;
        let m_valid = tb.get("m_tvalid")? == 1;
        if m_valid && ready {
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
            out_beats += 1;
            let user = tb.get("m_tuser")? == 1;
            ensure!(
                last || !user,
                "seed {s} cycle {cycle}: tuser on a beat not last"
            );
            if last {
                let (w, bad) = want.pop_front().expect("a packet expected");
                ensure!(
                    user == bad,
                    "seed {s}: packet {done} marked bad {user}, its pieces say {bad}"
                );
                ensure!(
                    got == w,
                    "seed {s}: packet {done} is {:02x?}, the pieces joined are {:02x?}",
                    got,
                    w
                );
                got.clear();
                done += 1;
            }
        }
        if valid && s_ready {
            cur = None;
        }
        hdl.s_tdata.next = bits_from_u64(d);
        hdl.s_tkeep.next = bits_from_u64(k);
        hdl.s_tlast.next = l;
        hdl.s_tjoin.next = j;
        hdl.s_tuser.next = u;
        hdl.s_tvalid.next = valid;
        hdl.m_tready.next = ready;
        edge(&mut hdl);
        tb.set("s_tdata", d)?;
        tb.set("s_tkeep", k)?;
        tb.set("s_tlast", l.into())?;
        tb.set("s_tjoin", j.into())?;
        tb.set("s_tuser", u.into())?;
        tb.set("s_tvalid", valid.into())?;
        tb.set("m_tready", ready.into())?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle)?;
        cycle += 1;
    }
    // A packet whose last piece is empty may end with an empty beat (the convention allows
    // it); no other beat is wasted.
    ensure!(
        (want_beats..=want_beats + empty_tails).contains(&out_beats),
        "seed {s}: {out_beats} beats out, the packets need {want_beats} (+{empty_tails})"
    );
    if !stall {
        // One beat per clock in, plus one cycle per packet at most for a tail, plus latency.
        ensure!(
            cycle <= (in_beats + packets + 4) as u64,
            "seed {s}: {cycle} cycles for {in_beats} input beats of {packets} packets"
        );
    }
    println!(
        "seed {s}: gather {packets} packets, {cycle} cycles (stalls {stall}), all {} outputs equal",
        outs.len()
    );
    Ok(())
}

#[test]
fn gather_joins_pieces_into_packets_and_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("gather_joins_pieces_into_packets_and_rust_hdl_matches_verilator");
    run(s, true)?;
    run(s, false)
}
