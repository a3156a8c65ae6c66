//! Differential tests of the DMA engines: the same random stimulus on rust-hdl's simulator
//! and on the Verilator model, every output compared after every clock edge. The stimulus
//! answers the engine's read requests (which both models issue identically, or the test has
//! already failed) with completions split at random 64-byte boundaries, interleaved across
//! tags, with random idle cycles, plus some junk completions (unknown tags, bad byte counts,
//! error status); commands and back-pressure are random. The write engine gets random
//! commands and data packets (one in ten of the wrong length) with random idle cycles and
//! back-pressure.

use anyhow::Result;
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_u128, bits_from_u64};
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::tlp::{self, Header};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak};
use rand::Rng;
use std::collections::VecDeque;

/// One completion beat: header, data, last.
type Beat = (u128, u64, bool);

/// Completions for a read request, cut at random 64-byte boundaries, as lists of beats.
fn completions(r: &mut impl Rng, h: &Header) -> Vec<Vec<Beat>> {
    let first = u64::from((h.be & 0xF).trailing_zeros());
    let last_lz = if h.length == 1 {
        u64::from((h.be & 0xF).leading_zeros() - 4)
    } else {
        u64::from((h.be >> 4).leading_zeros() - 4)
    };
    let start = h.addr + first;
    let end = h.addr + 4 * u64::from(h.length) - last_lz;
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let mut stop = (at / 64 + 1) * 64;
        while stop < end && r.gen_bool(0.5) {
            stop += 64;
        }
        let stop = stop.min(end);
        let dw0 = at & !3;
        let dws = (stop.div_ceil(4) * 4 - dw0) / 4;
        let hdr = Header {
            fmt: tlp::FMT_3DW_DATA,
            ty: tlp::TYPE_CPL,
            length: dws as u16,
            requester_id: h.requester_id,
            tag: h.tag,
            byte_count: ((end - at) & 0xFFF) as u16,
            lower_addr: (at & 0x7F) as u8,
            ..Header::default()
        };
        let lane0 = dw0 % 8;
        let nbeats = (lane0 + 4 * dws).div_ceil(8);
        out.push(
            (0..nbeats)
                .map(|i| (hdr.pack(), r.gen::<u64>(), i + 1 == nbeats))
                .collect(),
        );
        at = stop;
    }
    out
}

fn junk(r: &mut impl Rng) -> Vec<Beat> {
    let h = Header {
        fmt: tlp::FMT_3DW_DATA,
        ty: tlp::TYPE_CPL,
        length: r.gen_range(1..8),
        requester_id: if r.gen_bool(0.8) {
            tlp::NIC_REQUESTER_ID
        } else {
            r.gen()
        },
        tag: r.gen_range(0..20),
        status: if r.gen_bool(0.3) { tlp::CPL_UR } else { 0 },
        byte_count: r.gen_range(0..600),
        lower_addr: r.gen_range(0..128),
        ..Header::default()
    };
    let n = r.gen_range(1..4);
    (0..n).map(|i| (h.pack(), r.gen(), i + 1 == n)).collect()
}

#[test]
fn dma_rd_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut r = rng(seed("dma_rd_64_rust_hdl_matches_verilator"));
    let mut hdl = ten_g::DmaRead::new();
    hdl.connect_all();
    let mut tb = open_tb("ferroce_dma_rd_64", &BuildOptions::default())?;
    let edge = |b: &mut ten_g::DmaRead| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    for _ in 0..3 {
        edge(&mut hdl);
    }
    hdl.rst.next = false;
    edge(&mut hdl);
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let rc_hdr = tb.model_ref().port("s_rc_hdr")?;
    let mut cmd: Option<(u64, u64)> = None;
    let mut queues: Vec<VecDeque<Vec<Beat>>> = Vec::new();
    let mut current: Option<(Vec<Beat>, usize)> = None;
    let (mut reads, mut frames, mut cmds) = (0, 0, 0);
    let cycles = soak(20_000);
    for cycle in 0..cycles {
        if cmd.is_none() && r.gen_bool(0.2) {
            let len = match r.gen_range(0..4) {
                0 => r.gen_range(0..16),
                1 => r.gen_range(0..5000),
                _ => r.gen_range(0..700),
            };
            let addr = if r.gen_bool(0.5) {
                r.gen_range(0..1 << 40)
            } else {
                r.gen_range(0..1 << 20)
            };
            cmd = Some((addr, len));
        }
        // Next completion: a random tag's oldest, sometimes junk, sometimes idle.
        if current.is_none() && r.gen_bool(0.8) {
            if r.gen_ratio(1, 40) {
                current = Some((junk(&mut r), 0));
            } else {
                let live: Vec<usize> = (0..queues.len())
                    .filter(|&i| !queues[i].is_empty())
                    .collect();
                if !live.is_empty() {
                    let q = live[r.gen_range(0..live.len())];
                    current = queues[q].pop_front().map(|c| (c, 0));
                }
            }
        }
        let beat = current.as_ref().map(|(c, i)| c[*i]);
        let (cmd_valid, (addr, len)) = (cmd.is_some(), cmd.unwrap_or_default());
        let (rq_ready, data_ready) = (r.gen_bool(0.7), r.gen_bool(0.7));
        let (hdr, data, last) = beat.unwrap_or((0, 0, false));

        hdl.s_cmd_addr.next = bits_from_u64(addr);
        hdl.s_cmd_len.next = bits_from_u64(len & 0x1FFF);
        hdl.s_cmd_tvalid.next = cmd_valid;
        hdl.m_rq_tready.next = rq_ready;
        hdl.s_rc_hdr.next = bits_from_u128(hdr);
        hdl.s_rc_tdata.next = bits_from_u64(data);
        hdl.s_rc_tlast.next = last;
        hdl.s_rc_tvalid.next = beat.is_some();
        hdl.m_data_tready.next = data_ready;
        assert!(simulate(&mut hdl, 200));
        let cmd_taken = cmd_valid && hdl.s_cmd_tready.val();
        let rq = (hdl.m_rq_tvalid.val() && rq_ready).then(|| hdl.m_rq_hdr.val().to_u128());
        let frame_end = hdl.m_data_tvalid.val() && data_ready && hdl.m_data_tlast.val();
        edge(&mut hdl);

        tb.set("s_cmd_addr", addr)?;
        tb.set("s_cmd_len", len & 0x1FFF)?;
        tb.set("s_cmd_tvalid", cmd_valid.into())?;
        tb.set("m_rq_tready", rq_ready.into())?;
        tb.model().set_u128(rc_hdr, hdr)?;
        tb.set("s_rc_tdata", data)?;
        tb.set("s_rc_tlast", last.into())?;
        tb.set("s_rc_tvalid", beat.is_some().into())?;
        tb.set("m_data_tready", data_ready.into())?;
        tb.rising_edge()?;

        if cmd_taken {
            cmd = None;
            cmds += 1;
        }
        if let Some((c, i)) = &mut current {
            *i += 1;
            if *i == c.len() {
                current = None;
            }
        }
        if let Some(h) = rq {
            let h = Header::unpack(h);
            reads += 1;
            let tag = usize::from(h.tag);
            if queues.len() <= tag {
                queues.resize_with(tag + 1, VecDeque::new);
            }
            for c in completions(&mut r, &h) {
                queues[tag].push_back(c);
            }
        }
        frames += usize::from(frame_end);

        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
    }
    assert!(
        cmds > 100 && reads > 200 && frames > 80,
        "too little traffic: {cmds} commands, {reads} requests, {frames} frames"
    );
    println!(
        "dma_rd_64: {cycles} cycles, {cmds} commands, {reads} requests, {frames} frames, all {} outputs equal", outs.len()
    );
    Ok(())
}

#[test]
fn dma_wr_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut r = rng(seed("dma_wr_64_rust_hdl_matches_verilator"));
    let mut hdl = ten_g::DmaWrite::new();
    hdl.connect_all();
    let mut tb = open_tb("ferroce_dma_wr_64", &BuildOptions::default())?;
    let edge = |b: &mut ten_g::DmaWrite| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    for _ in 0..3 {
        edge(&mut hdl);
    }
    hdl.rst.next = false;
    edge(&mut hdl);
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let mut cmd: Option<(u64, u64)> = None;
    // Data beats of the current packet: (data, last); usually the command's length, sometimes
    // not.
    let mut beats: VecDeque<(u64, bool)> = VecDeque::new();
    let (mut cmds, mut tlps) = (0, 0);
    let cycles = soak(20_000);
    for cycle in 0..cycles {
        if cmd.is_none() && r.gen_bool(0.3) {
            let len: u64 = match r.gen_range(0..5) {
                0 => r.gen_range(0..16),
                1 => r.gen_range(0..5000),
                _ => r.gen_range(0..700),
            };
            let addr = if r.gen_bool(0.5) {
                r.gen_range(0..1 << 40)
            } else {
                r.gen_range(0..1 << 20)
            };
            cmd = Some((addr, len));
            let mut n = len.div_ceil(8).max(1);
            if r.gen_ratio(1, 10) {
                n = r.gen_range(1..n + 3);
            }
            for i in 0..n {
                beats.push_back((r.gen(), i + 1 == n));
            }
        }
        let (cmd_valid, (addr, len)) = (cmd.is_some(), cmd.unwrap_or_default());
        let data_valid = !beats.is_empty() && r.gen_bool(0.8);
        let (data, last) = beats.front().copied().unwrap_or_default();
        let rq_ready = r.gen_bool(0.7);

        hdl.s_cmd_addr.next = bits_from_u64(addr);
        hdl.s_cmd_len.next = bits_from_u64(len & 0x1FFF);
        hdl.s_cmd_tvalid.next = cmd_valid;
        hdl.s_data_tdata.next = bits_from_u64(data);
        hdl.s_data_tlast.next = last;
        hdl.s_data_tvalid.next = data_valid;
        hdl.m_rq_tready.next = rq_ready;
        assert!(simulate(&mut hdl, 200));
        let cmd_taken = cmd_valid && hdl.s_cmd_tready.val();
        let data_taken = data_valid && hdl.s_data_tready.val();
        let tlp_end = hdl.m_rq_tvalid.val() && rq_ready && hdl.m_rq_tlast.val();
        edge(&mut hdl);

        tb.set("s_cmd_addr", addr)?;
        tb.set("s_cmd_len", len & 0x1FFF)?;
        tb.set("s_cmd_tvalid", cmd_valid.into())?;
        tb.set("s_data_tdata", data)?;
        tb.set("s_data_tlast", last.into())?;
        tb.set("s_data_tvalid", data_valid.into())?;
        tb.set("m_rq_tready", rq_ready.into())?;
        tb.rising_edge()?;
        if cmd_taken {
            cmd = None;
            cmds += 1;
        }
        if data_taken {
            beats.pop_front();
        }
        tlps += usize::from(tlp_end);

        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
    }
    assert!(
        cmds > 100 && tlps > 200,
        "too little traffic: {cmds} commands, {tlps} requests"
    );
    println!(
        "dma_wr_64: {cycles} cycles, {cmds} commands, {tlps} requests, all {} outputs equal",
        outs.len()
    );
    Ok(())
}
