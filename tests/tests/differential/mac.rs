//! The 100G MAC (`ferroce_mac_512`) on rust-hdl's simulator and on Verilator, the same random
//! stimulus, every output compared after every clock edge: frames to send on `s_axis` (RoCEv2
//! and others, 0 to 2,000 bytes and now and then a jumbo, tagged with random priorities) with
//! random idle cycles, `tx_axis_tready` dropped at random; wire frames on `rx_axis` (RoCEv2
//! with FCS, PFC and PAUSE frames, one in five damaged, one end in twelve with a PHY error in
//! `tuser`) with random gaps; `m_axis_tready` at random, low enough that the receive buffer
//! crosses its PFC watermarks, so PFC frames are generated and paused priorities held.

use anyhow::{ensure, Result};
use ferroce_hdl::config::hundred_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_tests::diff::Outputs;
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{bytes_of, full_keep, hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use std::collections::VecDeque;

const LANES: usize = 64;
/// A frame to send: RoCEv2 (ICRC from the `spec` reference) or another EtherType, tagged
/// with a random priority or not.
fn tx_frame(r: &mut impl Rng) -> Vec<u8> {
    let mut p = TxPacket::random(r);
    p.vlan = r
        .gen_bool(0.7)
        .then(|| (r.gen_range(0..8), r.gen_range(1..4095)));
    let len = if r.gen_ratio(1, 25) {
        r.gen_range(4000..9000)
    } else {
        r.gen_range(0..2000)
    };
    p.payload = (0..len).map(|_| r.gen()).collect();
    let mut f = p.frame_without_icrc();
    if r.gen_ratio(1, 6) {
        f[16..18].copy_from_slice(&[0x88, 0xb5]);
        f.truncate(r.gen_range(18..=f.len()));
    } else {
        let n = f.len();
        if let Ok(c) = ferroce_spec::icrc(&f) {
            f[n - 4..].copy_from_slice(&c.to_le_bytes());
        }
    }
    f
}

/// A frame on the wire, FCS appended: RoCEv2 (as sent), PFC or PAUSE, one in five damaged.
fn rx_frame(r: &mut impl Rng) -> Vec<u8> {
    let peer = [2, 0, 0, 0, 0, 1];
    let mut f = match r.gen_range(0..10) {
        0 => {
            let times = std::array::from_fn(|_| r.gen_range(0..64));
            ferroce_spec::mac_ctrl::pfc_frame(peer, r.gen(), times)
        }
        1 => ferroce_spec::mac_ctrl::pause_frame(peer, r.gen_range(0..64)),
        _ => tx_frame(r),
    };
    let n = f.len();
    f.resize(n.max(60), 0);
    f.extend(ferroce_spec::crc::crc32(&f).to_le_bytes());
    if r.gen_ratio(1, 5) {
        let at = r.gen_range(0..f.len());
        f[at] ^= 1 << r.gen_range(0..8);
    }
    f
}

/// Cut a frame into beats: (data, keep, last).
fn beats(f: &[u8], out: &mut VecDeque<(Vec<u8>, u64, bool)>) {
    let n = f.len().div_ceil(LANES).max(1);
    for i in 0..n {
        let chunk = f
            .get(LANES * i..(LANES * (i + 1)).min(f.len()))
            .unwrap_or(&[]);
        let mut d = chunk.to_vec();
        d.resize(LANES, 0);
        out.push_back((d, full_keep(chunk.len()), i + 1 == n));
    }
}

#[test]
fn mac_512_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("mac_512_rust_hdl_matches_verilator");
    let mut r = rng(s);
    let mut h = hundred_g::Mac::new();
    h.connect_all();
    let mut tb = open_tb("ferroce_mac_512", &BuildOptions::default())?;
    let outs = Outputs::new(&h, tb.model_ref())?;
    // Configuration: priorities 0 and 3 lossless, XOFF at 4 KiB, XON at 2 KiB.
    let cfg: [(&str, u64); 5] = [
        ("local_mac", 0x02fe_0000_000a),
        ("pfc_enable", 0x09),
        ("pfc_quanta", 0x40),
        ("xoff_bytes", 4096),
        ("xon_bytes", 2048),
    ];
    for (p, v) in cfg {
        tb.set(p, v)?;
    }
    h.local_mac.next = bits_from_u64(cfg[0].1);
    h.pfc_enable.next = bits_from_u64(cfg[1].1);
    h.pfc_quanta.next = bits_from_u64(cfg[2].1);
    h.xoff_bytes.next = bits_from_u64(cfg[3].1);
    h.xon_bytes.next = bits_from_u64(cfg[4].1);
    // Reset: rust-hdl by hand (three edges), Verilator reset by `open_tb`.
    h.rst.next = true;
    for _ in 0..3 {
        hdl_edge(&mut h, |b, c| b.clk.next = c.into());
    }
    h.rst.next = false;
    hdl_edge(&mut h, |b, c| b.clk.next = c.into());
    let mut tx = VecDeque::new();
    let mut cur_tx: Option<(Vec<u8>, u64, bool)> = None;
    // Receive beats carry their `tuser`: one frame in twelve ends with a PHY error.
    let mut rx: VecDeque<(Vec<u8>, u64, bool, bool)> = VecDeque::new();
    let (mut sent, mut got, mut pfc) = (0u64, 0u64, 0u64);
    let cycles = soak(6000);
    for cycle in 0..cycles {
        if tx.len() < 4 {
            beats(&tx_frame(&mut r), &mut tx);
        }
        if rx.len() < 4 {
            let mut b = VecDeque::new();
            beats(&rx_frame(&mut r), &mut b);
            let err = r.gen_ratio(1, 12);
            rx.extend(b.into_iter().map(|(d, k, l)| (d, k, l, l && err)));
        }
        if cur_tx.is_none() && r.gen_bool(0.8) {
            cur_tx = tx.pop_front();
        }
        // The wire does not wait: a receive beat goes in when the gap generator says so.
        let rx_beat = if r.gen_bool(0.85) {
            rx.pop_front()
        } else {
            None
        };
        let tx_ready = r.gen_bool(0.8);
        let out_ready = r.gen_bool(0.4);
        let (td, tk, tl) = cur_tx.clone().unwrap_or((vec![0; LANES], 0, false));
        let (rd, rk, rl, ru) = rx_beat.clone().unwrap_or((vec![0; LANES], 0, false, false));
        let taken = cur_tx.is_some() && h.s_axis_tready.val();
        sent += u64::from(taken && tl);
        got += u64::from(h.m_axis_tvalid.val() && out_ready && h.m_axis_tlast.val());
        pfc += u64::from(h.tx_axis_tvalid.val() && tx_ready && h.tx_axis_tlast.val());
        h.s_axis_tdata.next = wide::<512>(&td);
        h.s_axis_tkeep.next = bits_from_u64(tk);
        h.s_axis_tlast.next = tl;
        h.s_axis_tvalid.next = cur_tx.is_some();
        h.tx_axis_tready.next = tx_ready;
        h.rx_axis_tdata.next = wide::<512>(&rd);
        h.rx_axis_tkeep.next = bits_from_u64(rk);
        h.rx_axis_tlast.next = rl;
        h.rx_axis_tvalid.next = rx_beat.is_some();
        h.rx_axis_tuser.next = ru;
        h.m_axis_tready.next = out_ready;
        hdl_edge(&mut h, |b, c| b.clk.next = c.into());
        let p = tb.model_ref().port("s_axis_tdata")?;
        tb.model().set_bytes(p, &td)?;
        tb.set("s_axis_tkeep", tk)?;
        tb.set("s_axis_tlast", tl.into())?;
        tb.set("s_axis_tvalid", cur_tx.is_some().into())?;
        tb.set("tx_axis_tready", tx_ready.into())?;
        let p = tb.model_ref().port("rx_axis_tdata")?;
        tb.model().set_bytes(p, &rd)?;
        tb.set("rx_axis_tkeep", rk)?;
        tb.set("rx_axis_tlast", rl.into())?;
        tb.set("rx_axis_tvalid", rx_beat.is_some().into())?;
        tb.set("rx_axis_tuser", ru.into())?;
        tb.set("m_axis_tready", out_ready.into())?;
        tb.rising_edge()?;
        if taken {
            cur_tx = None;
        }
        outs.check(&h, tb.model_ref(), cycle as u64)?;
    }
    let xoff = bytes_of(h.xoff_sent.val());
    println!(
        "seed {s}: {cycles} cycles, all {} outputs equal; {sent} frames taken, {pfc} frames out \
         on the wire, {got} received frames out, XOFF sent per priority (LE bytes) {xoff:?}",
        outs.len()
    );
    ensure!(sent > 30 && got > 20, "too little traffic");
    ensure!(
        xoff.iter().any(|b| *b != 0),
        "the watermarks were never crossed: no PFC generated"
    );
    ensure!(
        bytes_of(h.pfc_rx.val()).iter().any(|b| *b != 0) && bytes_of(h.pause_rx.val())[0] != 0,
        "no PFC or PAUSE frame was received"
    );
    ensure!(
        bytes_of(h.code_err.val())[0] != 0,
        "no PHY error was flagged"
    );
    Ok(())
}
