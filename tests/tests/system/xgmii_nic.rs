//! The whole 10G NIC with its XGMII face (`ferroce_nic_10g`): two of them joined by the XGMII
//! link model (`sim::xgmii_link`), whose lane faults the receiving NIC must drop and count.
//! (The PFC timing and traffic-class tests also run over XGMII: `pfc_timing.rs`,
//! `pfc_classes.rs`.)

use anyhow::{ensure, Context, Result};
use ferroce_driver::{DmaMemory, SendWr, Sge, WrOpcode};
use ferroce_sim::designs::open_tb;
use ferroce_sim::traffic::{write_latency, Direction};
use ferroce_sim::world::{Phy, World, WorldConfig};
use ferroce_sim::LaneFault;
use ferroce_spec::queues::WC_SUCCESS;
use ferroce_tests::{rng, seed};
use rand::{Rng, RngCore};

fn xgmii_world() -> Result<World> {
    Ok(World::open(&WorldConfig {
        phy: Phy::Xgmii,
        ..WorldConfig::default()
    })?)
}

/// `ferroce_nic_10g` has every port of `ferroce_nic_64` but the frame faces, same width and
/// direction: nothing the wrapper should pass through is left behind.
#[test]
fn the_10g_top_passes_every_port_through() -> Result<()> {
    // The models the worlds use (built once for both).
    let opts = ferroce_sim::world::nic_build(false);
    let core = open_tb("ferroce_nic_64", &opts)?;
    let top = open_tb("ferroce_nic_10g", &opts)?;
    let want: Vec<_> = core
        .model_ref()
        .ports()
        .filter(|(n, _, _)| !n.starts_with("m_axis_") && !n.starts_with("s_axis_"))
        .map(|(n, w, d)| (n.to_string(), w, d))
        .collect();
    for (n, w, d) in &want {
        let got = top
            .model_ref()
            .ports()
            .find(|(m, _, _)| m == n)
            .with_context(|| format!("ferroce_nic_10g has no port {n}"))?;
        ensure!(got.1 == *w && got.2 == *d, "{n}: {got:?} against {w} {d:?}");
    }
    for p in ["xgmii_txd", "xgmii_txc", "xgmii_rxd", "xgmii_rxc"] {
        ensure!(top.model_ref().has_port(p), "no {p}");
    }
    println!("{} ports pass through", want.len());
    Ok(())
}

/// Two `ferroce_nic_10g` over the XGMII link; the link damages a's first three frames on the
/// wire (an /E/ in one, a flipped byte in the next, the third replaced by idles) and passes the
/// fourth. Each WRITE is one packet on its own QP (the transport does not retransmit yet, so a
/// damaged packet's WRITE never completes). b's XGMII decoder flags the /E/ and its MAC drops
/// it (`xgmii_rx_code_err`, `rx_code_err`), the MAC's FCS check drops the flipped frame
/// (`rx_fcs_err`), the missing frame is simply not there, and only the fourth WRITE lands
/// and completes; the damaged ones write nothing. First, one clean 64-byte WRITE completes and its latency
/// over XGMII is printed.
#[test]
fn lane_faults_are_dropped_and_counted_and_clean_frames_land() -> Result<()> {
    let s = seed("lane_faults_are_dropped_and_counted_and_clean_frames_land");
    let mut r = rng(s);
    let mut w = xgmii_world()?;
    let (mut qa, _qb) = w.connect(1024, 1, 2, 16)?;
    let cycles = write_latency(&mut w, Direction::AToB, &mut qa, 1024, 64, s)?;
    println!("64-byte WRITE over XGMII: {cycles} cycles from doorbell to completion");
    // Frame 0 on a -> b was that WRITE; the next three are damaged.
    let link = w.ab.xgmii().context("an XGMII world")?.clone();
    let at = r.gen_range(20..200);
    link.set_fault_hook(move |i| match i {
        1 => LaneFault::CodeError { offset: at },
        2 => LaneFault::Corrupt {
            offset: at,
            mask: 0x40,
        },
        3 => LaneFault::Drop,
        _ => LaneFault::Pass,
    });
    const LEN: usize = 512;
    let mut src = vec![0u8; 4 * LEN];
    r.fill_bytes(&mut src);
    let src_mr = w.a.buffer(4 * LEN, &src)?;
    let tgt = w.b.buffer(4 * LEN, &[0u8; 4 * LEN])?;
    for k in 0..4u64 {
        let (mut qa, _qb) = w.connect(1024, r.gen_range(0..1 << 24), 7, 16)?;
        let off = k * LEN as u64;
        let wr = SendWr {
            wr_id: k,
            opcode: WrOpcode::RdmaWrite,
            sg_list: vec![Sge {
                addr: src_mr.addr + off,
                length: LEN as u32,
                lkey: src_mr.lkey,
            }],
            remote_addr: tgt.addr + off,
            rkey: tgt.rkey,
            signaled: true,
            ..Default::default()
        };
        w.a.dev.post_send(&mut qa, &[wr])?;
        let sent = || w.a.counter("xgmii_tx_frames");
        w.run_until(100_000, "the WRITE's frame", || {
            sent().map(|n| n > k + 1).unwrap_or(true)
        })?;
    }
    w.run(5_000)?;
    let b = |c: &str| w.b.counter(c);
    ensure!(b("xgmii_rx_code_err")? == 1, "seed {s}: XGMII code errors");
    ensure!(b("rx_code_err")? == 1, "seed {s}: MAC code-error drops");
    ensure!(b("rx_fcs_err")? == 1, "seed {s}: FCS drops");
    ensure!(b("rx_accepted")? == 2, "seed {s}: frames accepted");
    ensure!(b("xgmii_rx_frames")? == 3, "seed {s}: clean frames decoded");
    let st = link.stats();
    let xs = link.xgmii_stats();
    ensure!(
        st.dropped == 1 && st.corrupted == 1 && xs.code_errors == 1,
        "{st:?} {xs:?}"
    );
    ensure!(xs.broken == 0, "the sender broke clause 46: {xs:?}");
    // Only the fourth WRITE completes: its ACK came back (a took two ACKs: the first
    // WRITE's and this one's), and the completer tracks each QP's work on its own, so the
    // damaged WRITEs on the other QPs (never retransmitted yet) do not hold it.
    let wcs = w.a.dev.poll_cq(&mut w.a.cq, 8)?;
    let got: Vec<(u64, u32)> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
    ensure!(got == [(3, WC_SUCCESS)], "seed {s}: completions {got:?}");
    ensure!(
        w.b.counter("resp_seq_err")? == 0,
        "each WRITE is its own QP's first packet"
    );
    ensure!(
        w.a.counter("rx_accepted")? == 2,
        "seed {s}: the ACKs of the two clean WRITEs"
    );
    let mut got = vec![0u8; 4 * LEN];
    w.b.dev.mem.read(tgt.addr, &mut got)?;
    ensure!(
        got[..3 * LEN] == [0u8; 3 * LEN],
        "seed {s}: a damaged WRITE wrote"
    );
    ensure!(
        got[3 * LEN..] == src[3 * LEN..],
        "seed {s}: the clean WRITE's bytes"
    );
    ensure!(w.a.counter("xgmii_tx_underrun")? == 0);
    Ok(())
}
