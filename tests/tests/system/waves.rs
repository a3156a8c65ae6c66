//! Waveforms on request: a world built with tracing writes a VCD of one NIC for a window of
//! cycles (`Host::wave`, what `ferroce demo --wave` and Python's `World(trace=...)` call), and
//! the file holds what GTKWave needs: the NIC's clock toggling every cycle of the window and
//! nothing before it, its ports under the design's name, the MMIO requests the driver makes.

use anyhow::{ensure, Context, Result};
use ferroce_sim::traffic::{write_stream, Direction};
use ferroce_sim::world::{World, WorldConfig};
use ferroce_tests::{read_vcd, seed};
use std::path::PathBuf;

#[test]
fn a_wave_window_of_a_nic_shows_its_clock_and_the_drivers_requests() -> Result<()> {
    let s = seed("waves");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waves_a.vcd");
    let _ = std::fs::remove_file(&path);
    let cycles = 3_000;
    let (period_ps, from);
    {
        let mut w = World::open(&WorldConfig {
            trace: true,
            ..WorldConfig::default()
        })?;
        period_ps = w.a.sim.borrow().tb.period_ps();
        // The window opens 200 cycles after the world did (past its reset).
        from = w.a.sim.borrow().tb.cycle() + 200;
        w.a.wave(&path, from, cycles)?;
        let (mut qa, _qb) = w.connect(1024, 0xff_fff0, 0x12_3456, 32)?;
        write_stream(&mut w, Direction::AToB, &mut qa, 1024, 4096, 16, s, |_| {})?;
        ensure!(
            w.a.sim.borrow().tb.cycle() > from + cycles,
            "the traffic ended inside the window"
        );
    }
    let vcd = read_vcd(&path).with_context(|| format!("reading {}", path.display()))?;
    let top = "ferroce_nic_64";
    vcd.check_window(top, from, cycles, period_ps)?;
    let req = vcd.changes_of(top, "s_req_tvalid");
    ensure!(
        req >= 2,
        "s_req_tvalid changed {req} times: the driver's MMIO is not in it"
    );
    ensure!(
        vcd.changes
            .keys()
            .any(|n| n.contains(&format!("{top}.req."))),
        "no signal of the requester's hierarchy ({top}.req.*) in the file"
    );
    Ok(())
}

#[test]
fn a_wave_of_a_model_built_without_tracing_is_refused() -> Result<()> {
    let w = World::open(&WorldConfig::default())?;
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("waves_untraced.vcd");
    let e =
        w.a.wave(&path, 0, 10)
            .expect_err("a wave without a traced build");
    ensure!(e.to_string().contains("trace"), "{e}");
    Ok(())
}
