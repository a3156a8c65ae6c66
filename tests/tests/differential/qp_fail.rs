//! `QpFail` (one ERR for the whole QP): rust-hdl against Verilator, every output every cycle,
//! and both against a model of the rules written out here: a report fails its QP the cycle
//! after, a reset (`init_sq` or `init_rq`) clears it and anything not yet handed over, each
//! consumer is handed every QP the other engines failed (never one of its own, never one reset
//! since, each once) within a round of the scan, and reports for a failed QP change nothing.

use anyhow::{ensure, Result};
use ferroce_hdl::prelude::*;
use ferroce_hdl::rc::QpFail;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::queues::QP_CTX;
use ferroce_tests::diff::{reset_both, Outputs};
use ferroce_tests::{hdl_edge, layout_img, rng, seed, soak, wide};
use rand::Rng;
use std::collections::BTreeMap;

/// Cycles a pending QP may wait for a consumer that is always ready: one round of the scan
/// and the registers around it.
const ROUND: u64 = 256 + 4;

#[test]
fn qp_fail_rust_hdl_matches_verilator_and_the_rules() -> Result<()> {
    let s = seed("qp_fail_rust_hdl_matches_verilator_and_the_rules");
    let mut r = rng(s);
    let mut hdl = QpFail::new();
    hdl.connect_all();
    let mut tb = open_tb("ferroce_qp_fail", &BuildOptions::default())?;
    let edge = |b: &mut QpFail| hdl_edge(b, |b, c| b.clk.next = c.into());
    // (The scan pointers run from the reset.)
    reset_both(&mut hdl, &mut tb, |b, v| b.rst.next = v, edge)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let qpw_port = tb.model_ref().port("s_qpw_data")?;
    let failed_port = tb.model_ref().port("failed")?;
    // The model: failed QPs, and per consumer (0 completer, 1 responder) the QPs owed, with
    // the cycle they became owed.
    let mut failed = [false; 256];
    let mut owed: [BTreeMap<u64, u64>; 2] = Default::default();
    let (mut reports, mut handed, mut local) = ([0usize; 3], [0usize; 2], 0u64);
    let cycles = soak(60_000);
    // The last tenth: no reports, consumers always ready, so everything owed is handed over.
    let quiet = cycles - cycles / 10;
    for cycle in 0..cycles {
        // Reports cluster on a few QPs (so many find theirs failed already); a reset now and
        // then, often of a QP with work owed.
        let mut rep = [None; 3];
        for slot in rep.iter_mut() {
            if cycle < quiet && r.gen_ratio(1, 40) {
                *slot = Some(if r.gen_bool(0.8) {
                    r.gen_range(0..12u64)
                } else {
                    r.gen_range(0..256)
                });
            }
        }
        let reset = (r.gen_ratio(1, 60)).then(|| {
            let q = if r.gen_bool(0.7) {
                r.gen_range(0..12u64)
            } else {
                r.gen_range(0..256)
            };
            let (sq, rq) = match r.gen_range(0..4) {
                0 => (1, 0),
                1 => (0, 1),
                2 => (1, 1),
                _ => (0, 0),
            };
            (
                q,
                sq == 1 || rq == 1,
                layout_img(
                    &QP_CTX,
                    &[
                        ("init_sq", sq),
                        ("init_rq", rq),
                        ("state", r.gen_range(0..7)),
                    ],
                ),
            )
        });
        let loc = r.gen_bool(0.7);
        let ready = [
            cycle >= quiet || r.gen_bool(0.3),
            cycle >= quiet || r.gen_bool(0.5),
        ];
        let names = ["req", "cpl", "resp"];
        for (i, n) in names.iter().enumerate() {
            tb.set(&format!("s_{n}_valid"), rep[i].is_some().into())?;
            tb.set(&format!("s_{n}_qpn"), rep[i].unwrap_or(0))?;
        }
        hdl.s_req_valid.next = rep[0].is_some();
        hdl.s_req_qpn.next = bits(rep[0].unwrap_or(0));
        hdl.s_req_local.next = loc;
        tb.set("s_req_local", loc.into())?;
        hdl.s_cpl_valid.next = rep[1].is_some();
        hdl.s_cpl_qpn.next = bits(rep[1].unwrap_or(0));
        hdl.s_resp_valid.next = rep[2].is_some();
        hdl.s_resp_qpn.next = bits(rep[2].unwrap_or(0));
        let img = reset.as_ref().map_or(vec![0u8; 80], |x| x.2[..80].to_vec());
        hdl.s_qpw_en.next = reset.is_some();
        hdl.s_qpw_index.next = bits(reset.as_ref().map_or(0, |x| x.0));
        hdl.s_qpw_data.next = wide(&img);
        tb.set("s_qpw_en", reset.is_some().into())?;
        tb.set("s_qpw_index", reset.as_ref().map_or(0, |x| x.0))?;
        tb.model().set_bytes(qpw_port, &img)?;
        hdl.m_cpl_ready.next = ready[0];
        hdl.m_resp_ready.next = ready[1];
        tb.set("m_cpl_ready", ready[0].into())?;
        tb.set("m_resp_ready", ready[1].into())?;
        assert!(simulate(&mut hdl, 100));
        // What is handed over this cycle, against what is owed.
        let outv = [
            (hdl.m_cpl_valid.val(), hdl.m_cpl_qpn.val().to_u64()),
            (hdl.m_resp_valid.val(), hdl.m_resp_qpn.val().to_u64()),
        ];
        for c in 0..2 {
            let (v, q) = outv[c];
            if v && ready[c] {
                ensure!(
                    owed[c].remove(&q).is_some(),
                    "seed {s}: cycle {cycle}: consumer {c} handed QP {q}, not owed it"
                );
                handed[c] += 1;
            }
            if let Some((&q, &since)) = owed[c]
                .iter()
                .find(|(_, &t)| cycle as u64 >= quiet as u64 + ROUND && t + ROUND < cycle as u64)
            {
                anyhow::bail!("seed {s}: consumer {c}: QP {q} owed since cycle {since}, not handed over by {cycle}");
            }
        }
        // The model's next state: reports of QPs not failed yet fail them and are owed to the
        // other consumers; a reset wins over a report in the same cycle.
        let mut newly = [false; 256];
        for (i, q) in rep.iter().enumerate() {
            if let Some(q) = *q {
                reports[i] += 1;
                if !failed[q as usize] {
                    if i == 0 && loc && !newly[q as usize] {
                        local += 1;
                    }
                    newly[q as usize] = true;
                    for (c, o) in owed.iter_mut().enumerate() {
                        // The completer (0) is owed the requester's and the responder's
                        // reports, the responder (1) the requester's and the completer's.
                        if i == 0 || (i == 2 && c == 0) || (i == 1 && c == 1) {
                            o.entry(q).or_insert(cycle as u64);
                        }
                    }
                }
            }
        }
        for q in 0..256 {
            failed[q] |= newly[q];
        }
        if let Some((q, true, _)) = &reset {
            failed[*q as usize] = false;
            owed[0].remove(q);
            owed[1].remove(q);
        }
        edge(&mut hdl);
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
        let vec = tb.model_ref().get_bytes(failed_port);
        for q in 0..256 {
            ensure!(
                (vec[q / 8] >> (q % 8)) & 1 == u8::from(failed[q]),
                "seed {s}: cycle {cycle}: QP {q} failed {} in the model",
                failed[q]
            );
        }
    }
    ensure!(
        owed[0].is_empty() && owed[1].is_empty(),
        "seed {s}: still owed {owed:?}"
    );
    ensure!(
        tb.get("local_fails")? == local,
        "seed {s}: local {} != {local}",
        tb.get("local_fails")?
    );
    ensure!(
        reports.iter().all(|&n| n > 500) && handed.iter().all(|&n| n > 100),
        "seed {s}: too little coverage: {reports:?} reports, {handed:?} handed over"
    );
    println!(
        "qp_fail: {cycles} cycles, reports {reports:?}, handed over {handed:?}, {local} local, all {} outputs equal",
        outs.len()
    );
    Ok(())
}

fn bits<const N: usize>(v: u64) -> Bits<N> {
    ferroce_hdl::util::bits_from_u64(v)
}
