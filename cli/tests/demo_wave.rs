//! `ferroce demo --wave FILE`: the demo's own binary writes a waveform of one NIC for a window
//! of cycles that GTKWave opens, with the NIC's clock toggling every cycle of the window and
//! the driver's MMIO requests in it.

use anyhow::{bail, ensure, Context, Result};
use ferroce_tests::read_vcd;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the demo when the test ends, passed or not.
struct Demo(std::process::Child);
impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_demos_wave_shows_the_nics_clock_and_the_drivers_requests() -> Result<()> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("demo-wave");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let vcd = dir.join("b.vcd");
    let (from, cycles) = (1_000u64, 2_000u64);
    let mut demo = Demo(
        Command::new(env!("CARGO_BIN_EXE_ferroce"))
            .arg("demo")
            .arg("--out")
            .arg(&dir)
            .arg("--wave")
            .arg(&vcd)
            .args(["--wave-nic", "b", "--wave-from", &from.to_string()])
            .args(["--wave-cycles", &cycles.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting ferroce demo")?,
    );
    // The demo says where the wave goes, then runs on for minutes: the window closes (and the
    // file with it) a few thousand cycles in, which is all this test waits for.
    let stdout = demo.0.stdout.take().context("the demo's stdout")?;
    let mut said = String::new();
    let mut lines = BufReader::new(stdout).lines();
    while !said.contains("4. ") {
        match lines.next() {
            Some(line) => said += &(line? + "\n"),
            None => bail!("the demo ended early:\n{said}"),
        }
    }
    ensure!(
        said.contains(&format!(
            "waveform of host b's NIC, cycles {from}..{}",
            from + cycles
        )),
        "the demo does not say where its wave is:\n{said}"
    );
    let period_ps = 6_400;
    let t0 = Instant::now();
    let wave = loop {
        if let Ok(w) = read_vcd(&vcd) {
            if w.end >= (from + cycles - 1) * period_ps {
                break w;
            }
        }
        ensure!(
            t0.elapsed() < Duration::from_secs(300),
            "the window never closed"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    drop(demo);
    wave.check_window("ferroce_nic_64", from, cycles, period_ps)?;
    let req = wave.changes_of("ferroce_nic_64", "s_req_tvalid");
    ensure!(req >= 2, "s_req_tvalid changed {req} times in the window");
    Ok(())
}
