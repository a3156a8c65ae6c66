//! The XGMII faces (`ferroce_xgmii_tx_64`, `ferroce_xgmii_rx_64`), each run on rust-hdl's
//! simulator and on Verilator side by side with every output compared every cycle, and judged
//! by IEEE 802.3 clause 46 as `ferroce_sim::xgmii` writes it (an encoder and a checker of the
//! wire's rules that share nothing with the HDL but `spec::xgmii`'s character codes):
//! - transmit -> receive: frames of 60 to 9,000 bytes (every edge, random in between) with
//!   random idle between some and none between others come out of the receiver byte-exact;
//!   the words on the wire obey the rules (/S/ on lane 0 or 4 only, preamble and SFD, /T/ after
//!   the last byte, idles between frames) and the gaps follow the deficit idle count: never
//!   under 9 bytes, exactly `dic_next_start` for frames back to back, 12 on average;
//! - receive against that encoder: random start lanes and gaps (9 bytes and up),
//!   ordered sets between frames, and damaged frames (an /E/ inside, /E/ lanes right before
//!   /T/, a bad SFD, a frame cut by idles, a frame of no bytes): good frames byte-exact,
//!   damaged ones flagged (`tuser`) and counted `code_err`, never a hang;
//! - an input that stops mid-frame (after the first beat, in the middle, before the last):
//!   the transmitter ends the frame with /E/ and counts an underrun; the receiver flags it;
//!   the frames after it, at the shortest gap on either lane, are intact.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::net::{XgmiiRx, XgmiiTx};
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::xgmii::{check_wire, encode, lanes_of, word_of, Lane};
use ferroce_sim::{BuildOptions, Tb};
use ferroce_spec::xgmii::{
    dic_next_start, ERROR, IDLE, IFG, IFG_MIN, SEQUENCE, SFD, START, TERMINATE,
};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{budget, hdl_edge, rng, seed, soak};
use rand::Rng;

/// Transmitter and receiver, rust-hdl and Verilator, compared every cycle.
struct Pair {
    tx: XgmiiTx,
    rx: XgmiiRx,
    vtx: Tb,
    vrx: Tb,
    tx_outs: Outputs,
    rx_outs: Outputs,
    cycle: u64,
}

/// One output beat of the receiver: data, keep, last, user.
type Beat = (u64, u64, bool, bool);

impl Pair {
    fn open() -> Result<Pair> {
        let opts = BuildOptions::default();
        let (mut tx, mut rx) = (XgmiiTx::new(), XgmiiRx::new());
        tx.connect_all();
        rx.connect_all();
        let vtx = open_tb("ferroce_xgmii_tx_64", &opts)?;
        let vrx = open_tb("ferroce_xgmii_rx_64", &opts)?;
        let mut p = Pair {
            tx_outs: Outputs::new(&tx, vtx.model_ref())?,
            rx_outs: Outputs::new(&rx, vrx.model_ref())?,
            tx,
            rx,
            vtx,
            vrx,
            cycle: 0,
        };
        p.tx.rst.next = true;
        p.rx.rst.next = true;
        p.vtx.set("rst", 1)?;
        p.vrx.set("rst", 1)?;
        for _ in 0..3 {
            p.step(None, (0x0707_0707_0707_0707, 0xFF))?;
        }
        p.tx.rst.next = false;
        p.rx.rst.next = false;
        p.vtx.set("rst", 0)?;
        p.vrx.set("rst", 0)?;
        Ok(p)
    }

    /// One clock: `beat` offered to the transmitter (data, keep, last), `word` into the
    /// receiver. Returns (transmitter took the beat, transmitter's word, receiver's beat).
    fn step(
        &mut self,
        beat: Option<(u64, u64, bool)>,
        word: (u64, u64),
    ) -> Result<(bool, (u64, u64), Option<Beat>)> {
        let (d, k, l) = beat.unwrap_or((0, 0, false));
        let v = beat.is_some();
        self.tx.s_axis_tdata.next = bits_from_u64(d);
        self.tx.s_axis_tkeep.next = bits_from_u64(k);
        self.tx.s_axis_tlast.next = l;
        self.tx.s_axis_tvalid.next = v;
        self.rx.xgmii_rxd.next = bits_from_u64(word.0);
        self.rx.xgmii_rxc.next = bits_from_u64(word.1);
        for (n, x) in [
            ("s_axis_tdata", d),
            ("s_axis_tkeep", k),
            ("s_axis_tlast", u64::from(l)),
            ("s_axis_tvalid", u64::from(v)),
        ] {
            self.vtx.set(n, x)?;
        }
        self.vrx.set("xgmii_rxd", word.0)?;
        self.vrx.set("xgmii_rxc", word.1)?;
        // `tready` comes from registers: read it before the edge.
        let took = v && self.vtx.get("s_axis_tready")? == 1;
        ensure!(
            took == (v && self.tx.s_axis_tready.val()),
            "cycle {}: tready differs",
            self.cycle
        );
        hdl_edge(&mut self.tx, |b, c| b.clk.next = c.into());
        hdl_edge(&mut self.rx, |b, c| b.clk.next = c.into());
        self.vtx.rising_edge()?;
        self.vrx.rising_edge()?;
        self.cycle += 1;
        self.tx_outs
            .check(&self.tx, self.vtx.model_ref(), self.cycle)
            .context("XgmiiTx: Verilator vs rust-hdl")?;
        self.rx_outs
            .check(&self.rx, self.vrx.model_ref(), self.cycle)
            .context("XgmiiRx: Verilator vs rust-hdl")?;
        let vt = &self.vtx;
        let tx_out = (vt.get("xgmii_txd")?, vt.get("xgmii_txc")?);
        let vr = &self.vrx;
        let rx_v = (
            vr.get("m_axis_tvalid")? == 1,
            vr.get("m_axis_tdata")?,
            vr.get("m_axis_tkeep")?,
            vr.get("m_axis_tlast")? == 1,
            vr.get("m_axis_tuser")? == 1,
        );
        let out = rx_v.0.then_some((rx_v.1, rx_v.2, rx_v.3, rx_v.4));
        Ok((took, tx_out, out))
    }
}

/// Frames out of the receiver's beats: (bytes, tuser on the last beat).
fn frames_of(beats: &[Beat]) -> Result<Vec<(Vec<u8>, bool)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for (i, (d, k, last, user)) in beats.iter().enumerate() {
        let n = k.count_ones() as usize;
        ensure!(
            *k == (1u64 << n) - 1 && (*last || n == 8),
            "beat {i}: keep {k:#x}, last {last}"
        );
        cur.extend_from_slice(&d.to_le_bytes()[..n]);
        if *last {
            out.push((std::mem::take(&mut cur), *user));
        }
    }
    ensure!(cur.is_empty(), "a frame without its last beat");
    Ok(out)
}

/// Beats of a frame for the transmitter.
fn beats_of(f: &[u8]) -> Vec<(u64, u64, bool)> {
    let n = f.len().div_ceil(8);
    (0..n)
        .map(|i| {
            let c = &f[8 * i..f.len().min(8 * i + 8)];
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            let keep = if c.len() == 8 {
                0xFF
            } else {
                (1u64 << c.len()) - 1
            };
            (u64::from_le_bytes(b), keep, i + 1 == n)
        })
        .collect()
}

fn frame_len(r: &mut impl Rng, k: usize) -> usize {
    match k % 10 {
        0 => 60 + k % 16,
        1 => 9000 - k % 16,
        2 => 1500 + r.gen_range(0..24),
        3..=5 => r.gen_range(60..=300),
        _ => r.gen_range(60..=9000),
    }
}

#[test]
fn frames_cross_tx_to_rx_and_the_wire_keeps_clause_46() -> Result<()> {
    let s = seed("frames_cross_tx_to_rx_and_the_wire_keeps_clause_46");
    let mut r = rng(s);
    let mut p = Pair::open()?;
    let n = soak(160);
    let frames: Vec<Vec<u8>> = (0..n)
        .map(|k| {
            let len = frame_len(&mut r, k);
            (0..len).map(|_| r.gen()).collect()
        })
        .collect();
    // Idle clocks before each frame is offered: none for the first 50 (one long run back to
    // back) and most others.
    let waits: Vec<usize> = (0..n)
        .map(|k| {
            if k < 50 || r.gen_bool(0.7) {
                0
            } else {
                r.gen_range(1..12)
            }
        })
        .collect();
    let (mut fi, mut bi, mut wait) = (0usize, 0usize, waits[0]);
    let mut beats_in: Vec<Vec<(u64, u64, bool)>> = frames.iter().map(|f| beats_of(f)).collect();
    let mut wire: Vec<Lane> = Vec::new();
    let mut out: Vec<Beat> = Vec::new();
    // Per frame: whether it was offered the moment the previous one was taken whole.
    let mut back_to_back = vec![false; n];
    let mut word = (0x0707_0707_0707_0707u64, 0xFFu64);
    let mut quiet = 0;
    while quiet < 40 {
        ensure!(p.cycle < budget(2_000_000), "no end");
        let beat = if fi < n && wait == 0 {
            Some(beats_in[fi][bi])
        } else {
            None
        };
        let (took, tx_word, rx_beat) = p.step(beat, word)?;
        word = tx_word;
        wire.extend(lanes_of(tx_word.0, tx_word.1));
        if let Some(b) = rx_beat {
            out.push(b);
        }
        if took {
            bi += 1;
            if bi == beats_in[fi].len() {
                fi += 1;
                bi = 0;
                if fi < n {
                    wait = waits[fi];
                    back_to_back[fi] = wait == 0;
                }
            }
        } else if beat.is_none() && wait > 0 {
            wait -= 1;
        }
        let busy = fi < n || rx_beat.is_some();
        quiet = if busy { 0 } else { quiet + 1 };
    }
    beats_in.clear();
    ensure!(p.vtx.get("underrun")? == 0 && p.vtx.get("frames")? == n as u64);
    // The wire, by clause 46.
    let seen = check_wire(&wire).with_context(|| format!("seed {s}"))?;
    ensure!(seen.len() == n, "{} frames on the wire", seen.len());
    let (mut dic, mut min_gap) = (0usize, usize::MAX);
    // Gaps of the first run of frames back to back, and each run's distance from 12 a gap.
    let (mut first_run, mut runs, mut dev) = (Vec::new(), 0usize, 0i64);
    for (k, (w, f)) in seen.iter().zip(&frames).enumerate() {
        ensure!(&w.bytes == f, "frame {k}: wire bytes differ");
        if k == 0 {
            continue;
        }
        let t = seen[k - 1].term;
        let gap = w.start - t;
        min_gap = min_gap.min(gap);
        ensure!(
            gap >= IFG_MIN + dic,
            "frame {k}: gap {gap} with DIC {dic} (seed {s})"
        );
        if back_to_back[k] {
            let (want, d) = dic_next_start(t, dic);
            ensure!(
                w.start == want,
                "frame {k}: back to back after /T/ at {t}: /S/ at {}, the deficit idle count \
                 puts it at {want} (DIC {dic}, seed {s})",
                w.start
            );
            if k < 50 {
                first_run.push(gap);
            }
            dev += IFG as i64 - gap as i64;
            dic = d;
        } else if gap < IFG {
            dic += IFG - gap;
        } else {
            dic = dic.saturating_sub(gap - IFG);
        }
        // A run of frames back to back ends here: in all its gaps are within 3 bytes of 12
        // each (the deficit idle count moves between 0 and 3).
        let run_ends = k + 1 == n || !back_to_back[k + 1];
        if back_to_back[k] && run_ends {
            ensure!(
                (-3..=3).contains(&dev),
                "a run of gaps {dev} bytes from 12 each"
            );
            runs += 1;
            dev = 0;
        } else if !back_to_back[k] {
            dev = 0;
        }
    }
    let avg = first_run.iter().sum::<usize>() as f64 / first_run.len() as f64;
    println!(
        "{n} frames 60-9000 B, {runs} runs back to back; the first ({} gaps) averages {avg:.3} \
         bytes; shortest gap {min_gap}; {} cycles",
        first_run.len(),
        p.cycle
    );
    ensure!(
        first_run.len() == 49 && (avg - 12.0).abs() <= 3.0 / 49.0 + 1e-9,
        "average gap {avg}"
    );
    ensure!(min_gap >= IFG_MIN && runs > 10);
    // Through the receiver: byte-exact, none flagged.
    let got = frames_of(&out)?;
    ensure!(got.len() == n, "{} frames received", got.len());
    for (k, ((g, user), f)) in got.iter().zip(&frames).enumerate() {
        ensure!(
            !user && g == f,
            "frame {k}: received differently (seed {s})"
        );
    }
    ensure!(p.vrx.get("frames")? == n as u64 && p.vrx.get("code_err")? == 0);
    Ok(())
}

#[test]
fn receiver_takes_any_lane_and_gap_and_flags_damage() -> Result<()> {
    let s = seed("receiver_takes_any_lane_and_gap_and_flags_damage");
    let mut r = rng(s);
    let mut p = Pair::open()?;
    let mut items = Vec::new();
    let mut want: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut errs = 0;
    for k in 0..240 {
        let len = frame_len(&mut r, k) / if k % 3 == 0 { 8 } else { 1 };
        let f: Vec<u8> = (0..len.max(60)).map(|_| r.gen()).collect();
        let mut body: Vec<Lane> = f.iter().map(|&b| (b, false)).collect();
        let mut end = (TERMINATE, true);
        let gap = r.gen_range(IFG_MIN..IFG_MIN + 12);
        let mut delivered = Some((f.clone(), false));
        match k % 8 {
            1 => {
                // An /E/ in place of a byte.
                let at = r.gen_range(0..body.len());
                body[at] = (ERROR, true);
                let mut g = f.clone();
                g[at] = ERROR;
                delivered = Some((g, true));
            }
            2 => {
                // The link drops to idle before /T/.
                end = (IDLE, true);
                delivered = Some((f.clone(), true));
            }
            5 => {
                // The frame's last bytes lost to /E/ (an errored block): /E/ lanes then /T/
                // in one word; the /T/ behind them still ends the frame.
                let n = body.len();
                for l in &mut body[n - r.gen_range(1..8)..] {
                    *l = (ERROR, true);
                }
                delivered = Some((f.clone(), true));
            }
            3 => {
                // No byte between the preamble and /T/.
                body.clear();
                delivered = None;
            }
            _ => {}
        }
        if let Some((_, true)) | None = delivered {
            errs += 1;
        }
        if k % 8 == 4 {
            // A bad SFD: the encoder's preamble is patched below.
            errs += 1;
            delivered = Some((f.clone(), true));
        }
        want.extend(delivered);
        items.push((body, end, gap));
    }
    let mut lanes = encode(&items, 64);
    // Patch the SFD of every fifth-kind frame, and put ordered sets (/Q/ on lane 0 or 4 with
    // three data bytes) into some long gaps.
    let mut k = 0;
    let mut i = 0;
    while i < lanes.len() {
        if lanes[i] == (START, true) {
            if k % 8 == 4 {
                lanes[i + 7].0 = SFD ^ 0x01;
            }
            k += 1;
            i += 8;
            continue;
        }
        if i % 4 == 0
            && i + 8 < lanes.len()
            && lanes[i..i + 8].iter().all(|l| *l == (IDLE, true))
            && r.gen_bool(0.3)
        {
            lanes[i] = (SEQUENCE, true);
            lanes[i + 1] = (0, false);
            lanes[i + 2] = (0, false);
            lanes[i + 3] = (1, false);
        }
        i += 1;
    }
    let mut out = Vec::new();
    for w in lanes.chunks(8) {
        let (_, _, b) = p.step(None, word_of(w))?;
        out.extend(b);
    }
    for _ in 0..8 {
        let (_, _, b) = p.step(None, (0x0707_0707_0707_0707, 0xFF))?;
        out.extend(b);
    }
    let got = frames_of(&out)?;
    ensure!(
        got.len() == want.len(),
        "{} frames out, want {}",
        got.len(),
        want.len()
    );
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        ensure!(
            g.1 == w.1,
            "frame {k}: flag {} want {} (seed {s})",
            g.1,
            w.1
        );
        if !w.1 {
            ensure!(g.0 == w.0, "frame {k}: bytes differ (seed {s})");
        }
    }
    let good = want.iter().filter(|w| !w.1).count() as u64;
    ensure!(
        p.vrx.get("frames")? == good && p.vrx.get("code_err")? == errs,
        "frames {} code_err {}, want {good} {errs}",
        p.vrx.get("frames")?,
        p.vrx.get("code_err")?
    );
    println!(
        "{} frames in, {good} clean, {errs} damaged flagged",
        items.len()
    );
    Ok(())
}

#[test]
fn an_input_that_stops_mid_frame_is_ended_with_error() -> Result<()> {
    let s = seed("an_input_that_stops_mid_frame_is_ended_with_error");
    let mut r = rng(s);
    let mut p = Pair::open()?;
    let n = soak(48);
    let frames: Vec<Vec<u8>> = (0..n)
        .map(|_| (0..r.gen_range(64..600)).map(|_| r.gen()).collect())
        .collect();
    // One frame in four stalls for a few clocks: after its first beat, in the middle, or
    // before its last beat (then the /E/ word's /T/ comes one word before the next /S/, at
    // the shortest gap, on either start lane: the receiver must not lose the next frame).
    let stalls = |k: usize| k % 4 == 3;
    let at_of = |k: usize, len: usize| match (k / 4) % 3 {
        0 => 1,
        1 => len / 2,
        _ => len - 1,
    };
    let (mut word, mut out) = ((0x0707_0707_0707_0707u64, 0xFFu64), Vec::new());
    for (k, f) in frames.iter().enumerate() {
        let beats = beats_of(f);
        let mut i = 0;
        let mut stalled = false;
        while i < beats.len() {
            let stall = stalls(k) && i == at_of(k, beats.len()) && !stalled;
            let (took, w, b) = if stall {
                stalled = true;
                for _ in 0..r.gen_range(1..4) {
                    let (_, w, b) = p.step(None, word)?;
                    word = w;
                    out.extend(b);
                }
                (false, word, None)
            } else {
                p.step(Some(beats[i]), word)?
            };
            word = w;
            out.extend(b);
            if took {
                i += 1;
            }
        }
    }
    for _ in 0..40 {
        let (_, w, b) = p.step(None, word)?;
        word = w;
        out.extend(b);
    }
    ensure!(
        p.vtx.get("underrun")? == n as u64 / 4 && p.vtx.get("frames")? == 3 * n as u64 / 4,
        "underrun {} frames {}",
        p.vtx.get("underrun")?,
        p.vtx.get("frames")?
    );
    let got = frames_of(&out)?;
    ensure!(got.len() == n, "{} frames received (seed {s})", got.len());
    for (k, (g, f)) in got.iter().zip(&frames).enumerate() {
        if stalls(k) {
            ensure!(g.1, "frame {k}: the cut frame is not flagged");
        } else {
            ensure!(!g.1 && &g.0 == f, "frame {k}: differs (seed {s})");
        }
    }
    ensure!(p.vrx.get("code_err")? == n as u64 / 4 && p.vrx.get("frames")? == 3 * n as u64 / 4);
    Ok(())
}
