//! PFC generation (`PfcGen`), rust-hdl's simulator and the Verilator model side by side (every
//! output compared every cycle), checked by what a peer would do: every record, framed, is a
//! valid PFC frame by `spec::mac_ctrl::parse`, and a peer that obeys those frames (pause for
//! time x 512 bit times at 10 Gb/s, `quanta_ps`) is paused on priority p exactly while
//! `xoff & enable` wants it, once the wish has been steady for the response window. So
//! XOFF, XON and the refresh before the pause runs out are all checked, with random
//! back-pressure on the record stream, random xoff flips, enables and pause times (those under
//! `PFC_MIN_QUANTA` must go out raised to it).

use anyhow::{ensure, Result};
use ferroce_hdl::net::mac_ctrl_rx::line_bits_per_cycle;
use ferroce_hdl::net::PfcGen;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::mac_ctrl::{self, MacCtrl, PRIORITIES};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak};
use rand::Rng;

const NAME: &str = "ferroce_pfc_gen_64";
const PERIOD_PS: u64 = 6400;
const RATE: u64 = 10_000_000_000;
/// Cycles a steady wish may take to show at the peer (record back-pressure included).
const WINDOW: usize = 80;

#[test]
fn pfc_gen_peer_follows_xoff_with_refresh() -> Result<()> {
    let s = seed("pfc_gen_peer_follows_xoff_with_refresh");
    let mut r = rng(s);
    let mut hdl = PfcGen::new(line_bits_per_cycle(64));
    hdl.connect_all();
    let mut tb = open_tb(NAME, &BuildOptions::default())?;
    let data = tb.model_ref().port("m_ctrl_tdata")?;
    let xs = tb.model_ref().port("xoff_sent")?;
    let xn = tb.model_ref().port("xon_sent")?;
    let edge = |b: &mut PfcGen| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;

    let (mut xoff, mut enable, mut quanta) = (0u8, 0xffu8, 20u16);
    let mut prev_quanta = quanta;
    let mut wants: Vec<u8> = Vec::new();
    let mut until = [None::<u64>; PRIORITIES];
    let (mut n_xoff, mut n_xon) = ([0u32; PRIORITIES], [0u32; PRIORITIES]);
    let (mut records, mut refreshes, mut checked) = (0, 0, 0u64);
    let mut last_named = 0u8;
    let (mut valid, mut rec) = (false, vec![0u8; 20]);
    let cycles = soak(200_000) as u64;
    for t in 0..cycles {
        // Busy stretches (a wish flips every ~500 cycles) and calm ones (every ~160,000: far
        // longer than the refresh interval, 1,024 cycles at PFC_MIN_QUANTA and 10G).
        let calm = (t / 20_000) % 2 == 1;
        if r.gen_ratio(1, if calm { 20_000 } else { 60 }) {
            xoff ^= 1 << r.gen_range(0..8);
        }
        if r.gen_ratio(1, 3000) {
            enable = r.gen();
        }
        if r.gen_ratio(1, 2000) {
            // Under the minimum too: the block raises those (the refresh must outrun a frame).
            prev_quanta = quanta;
            quanta = r.gen_range(0..700);
        }
        let ready = r.gen_bool(0.6);
        let want = xoff & enable;
        wants.push(want);
        if valid && ready {
            let mut f = mac_ctrl::pfc_frame([2, 0, 0, 0, 0, 1], 0, [0; PRIORITIES]);
            f[14..34].copy_from_slice(&rec);
            let MacCtrl::Pfc {
                enable: named,
                times,
            } = mac_ctrl::parse(&f)
            else {
                anyhow::bail!("cycle {t}: record is not a valid PFC frame: {rec:02x?}");
            };
            records += 1;
            let paused_set = (0..PRIORITIES)
                .filter(|&p| named & (1 << p) != 0 && times[p] != 0)
                .fold(0u8, |m, p| m | (1 << p));
            if paused_set == last_named && paused_set != 0 {
                refreshes += 1;
            }
            last_named = paused_set;
            for p in 0..PRIORITIES {
                // (A record made just before a change carries the previous setting.)
                let min = mac_ctrl::PFC_MIN_QUANTA;
                ensure!(
                    times[p] == 0
                        || times[p] == quanta.max(min)
                        || times[p] == prev_quanta.max(min),
                    "cycle {t}: priority {p} paused for {} quanta, set {quanta}",
                    times[p]
                );
                if named & (1 << p) != 0 {
                    let c = mac_ctrl::quanta_ps(times[p].into(), RATE).div_ceil(PERIOD_PS);
                    // Paused from the cycle after the frame is taken, for c cycles.
                    until[p] = if times[p] == 0 { None } else { Some(t + c) };
                    if times[p] == 0 {
                        n_xon[p] += 1;
                    } else {
                        n_xoff[p] += 1;
                    }
                }
            }
        }
        // The peer's view against the wish, once steady for the window.
        if wants.len() > WINDOW {
            let recent = &wants[wants.len() - WINDOW..];
            for (p, u) in until.iter().enumerate() {
                let bit = |w: &u8| w & (1 << p) != 0;
                if recent.iter().all(bit) || !recent.iter().any(bit) {
                    let peer = u.is_some_and(|u| t <= u);
                    ensure!(
                        peer == bit(&want),
                        "cycle {t}: priority {p} wanted {} for {WINDOW} cycles, peer paused \
                         {peer} (quanta {quanta}, seed {s})",
                        bit(&want)
                    );
                    checked += 1;
                }
            }
        }

        hdl.xoff.next = bits_from_u64(xoff.into());
        hdl.enable.next = bits_from_u64(enable.into());
        hdl.quanta.next = bits_from_u64(quanta.into());
        hdl.m_ctrl_tready.next = ready;
        edge(&mut hdl);
        tb.set("xoff", xoff.into())?;
        tb.set("enable", enable.into())?;
        tb.set("quanta", quanta.into())?;
        tb.set("m_ctrl_tready", ready.into())?;
        tb.rising_edge()?;
        let m = tb.model_ref();
        let got = (
            m.get_bytes(data),
            m.get(tb.model_ref().port("m_ctrl_tvalid")?) == 1,
            m.get_bytes(xs),
            m.get_bytes(xn),
        );
        outs.check(&hdl, m, t)?;
        (rec, valid) = (got.0, got.1);
        if t == cycles - 1 {
            let c = |b: &[u8]| -> Vec<u32> {
                b.chunks(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            };
            ensure!(
                c(&got.2) == n_xoff,
                "xoff_sent {:?} vs {n_xoff:?}",
                c(&got.2)
            );
            ensure!(c(&got.3) == n_xon, "xon_sent {:?} vs {n_xon:?}", c(&got.3));
        }
    }
    println!(
        "{records} PFC records ({refreshes} refreshes), {checked} steady priority-cycles checked"
    );
    // (Refreshes come only in the calm stretches: 30 on one seed, so the floor is 15.)
    ensure!(records > 500 && refreshes > 15 && checked > 500_000);
    Ok(())
}
