//! Interop with Linux's RoCE stack (the short subset): a simulated ferroce host against
//! Soft-RoCE (`rdma_rxe`) in a QEMU guest built by `tests/interop/guest.py build` (which
//! `.ci/setup` runs), the guest running rdma-core's real `ibv_rc_pingpong` and perftest's
//! `ib_write_bw` against ferroce's side of each, ferroce as server and as client. Each run
//! asserts: the guest's tool reports success (exit 0 and its result line), ferroce checks
//! every byte it received or sent (the pingpong echoes ferroce's messages; WRITEs are checked
//! against the pcap: memory equals the WRITE payloads on the wire, or ferroce's payloads equal
//! its source), and every frame of both directions has the ICRC scapy computes and is
//! dissected by tshark as RoCE. Retransmitted packets are counted and printed.
//!
//! The whole matrix: `ferroce interop` (README, "Interop with Linux").
//!
//! Skips, saying why, only when QEMU cannot run here at all (no guest built, or the unpacked
//! QEMU does not start); under CI (`CI` set) that fails instead.

use anyhow::{ensure, Result};
use ferroce_interop::{guest, matrix};

#[test]
fn rxe_pingpong_and_write_bw_against_ferroce_as_server_and_as_client() -> Result<()> {
    let manifest = matrix::default_manifest();
    if let Some(why) = guest::unavailable(&manifest) {
        // CI builds the guest in .ci/setup: there, a missing guest is a failure.
        ensure!(
            std::env::var_os("CI").is_none(),
            "CI: no interop guest: {why}"
        );
        println!("SKIPPED: QEMU cannot run here: {why}");
        return Ok(());
    }
    let seed = ferroce_tests::seed("interop");
    let out = std::env::temp_dir().join(format!("ferroce-interop-{}", std::process::id()));
    let outcomes = matrix::run(&matrix::cases(true), &manifest, &out, seed)?;
    println!("{}", matrix::table(&outcomes));
    ensure!(
        outcomes.len() == 4,
        "expected four runs, got {}",
        outcomes.len()
    );
    for o in &outcomes {
        let c = &o.case;
        if let Err(e) = &o.result {
            anyhow::bail!("{} with ferroce as {}: {e}", c.tool.name(), c.role);
        }
        let w = o.wire.as_ref();
        ensure!(
            w.is_some_and(|w| w.frames[0] > 0 && w.frames[1] > 0),
            "{} as {}: no frames checked on the wire",
            c.tool.name(),
            c.role
        );
        ensure!(
            w.is_some_and(|w| w.retransmitted[0] == 0),
            "{} as {}: ferroce retransmitted on a clean link (its ACK timer is 67 ms of simulated \
             time; nothing was lost)",
            c.tool.name(),
            c.role
        );
        // ferroce answers every request of the guest's that asks (AckReq) within 20 us of
        // simulated time: nothing it does gives the guest's timers cause to fire.
        ensure!(
            w.is_some_and(|w| w.unanswered[0] == 0 && w.slowest_answer_ns[0] <= 20_000),
            "{} as {}: ferroce left a request of the guest unanswered or answered late: {:?}",
            c.tool.name(),
            c.role,
            w
        );
        // The guest's clock stands still while its requests wait on ferroce (docs/interop.md,
        // "The guest's clock"): perftest (rxe's ACK timeout 4.3 s, `-u 20`) repeats nothing.
        // ibv_rc_pingpong fixes 67 ms, which rxe 6.1's stale retransmit timer may still hit
        // while the guest itself is sending (rare: "Retransmissions by rxe"); counted, printed.
        if matches!(c.tool, matrix::Tool::Perftest(_)) {
            ensure!(
                w.is_some_and(|w| w.retransmitted[1] == 0),
                "{} as {}: the guest retransmitted on a clean link: {:?}",
                c.tool.name(),
                c.role,
                w
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}
