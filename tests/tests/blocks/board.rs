//! The evaluation board's top (`ferroce board`: the 10G MAC in XGMII loopback with a frame
//! generator, a checker and LEDs) in simulation, with a behavioural stand-in for the ECP5 PLL:
//! the logic that goes into the bitstream delivers its frames and never lights the error LED.

use anyhow::{Context, Result};
use ferroce_sim::{BuildOptions, Model, Tb};

/// LEDs are lit low: bit 0 heartbeat, 1 PLL locked, 2 error, 3-7 delivered-frame count bits
/// 2-6 in the simulation top (`board::sim_files`).
fn lit(tb: &Tb) -> Result<u64> {
    Ok(!tb.get("led")? & 0xff)
}

#[test]
fn board_top_delivers_its_frames_and_never_lights_the_error_led() -> Result<()> {
    let dir = ferroce_sim::designs::verilog_dir().join("ferroce_evn_sim");
    let (files, top) = ferroce_fpga::board::sim_files(&dir).context("writing the board top")?;
    let lib = ferroce_sim::build::build(top, &files, &BuildOptions::default())
        .context("building the board top with Verilator")?;
    // The 12 MHz oscillator, which the stand-in PLL passes through as the core clock.
    let mut tb = Tb::new(Model::load(&lib)?, "clk12", 83_333)?;
    tb.set("rst_n", 0)?;
    tb.clock_cycles(8)?;
    tb.set("rst_n", 1)?;
    let mut count = 0;
    for step in 1..=12 {
        tb.clock_cycles(100)?;
        let led = lit(&tb)?;
        assert_eq!(led >> 1 & 1, 1, "the PLL lock LED is dark at step {step}");
        assert_eq!(led >> 2 & 1, 0, "the error LED lit by cycle {}", step * 100);
        let now = led >> 3 & 0x1f;
        assert!(
            now >= count,
            "the delivered count went back: {count} -> {now}"
        );
        count = now;
    }
    println!(
        "{} frames (the LEDs' count times 4) in 1,200 cycles",
        count * 4
    );
    // A frame every 26 cycles or so (its beats and 8 idle cycles): about 46 in 1,200 cycles,
    // less the MAC's latency. The LEDs show the count divided by 4.
    assert!(count >= 8, "{} frames delivered in 1,200 cycles", count * 4);
    Ok(())
}
