//! Goodput plots: for each verb, an SVG of goodput against message size (log scale: the x axis
//! is log2 of the size, labelled in bytes), the measured points over the wire's ceiling drawn
//! as a curve.

use anyhow::{ensure, Context, Result};
use ferroce_sim::traffic::WriteRun;
use plotters::prelude::*;
use std::path::Path;

/// Ceiling samples per doubling of the message size: enough to show the steps a new packet
/// (or the 64-byte minimum frame) makes.
const PER_OCTAVE: u32 = 32;

/// Draw the runs of one verb (`runs`, at least one, all of the same verb and link) to an SVG
/// at `path`: goodput against message size, with the RoCEv2 goodput ceiling of that verb over
/// the sizes between the smallest and the largest run.
pub fn goodput(path: &Path, title: &str, runs: &[WriteRun]) -> Result<()> {
    let first = runs.first().context("no runs to plot")?;
    let lo = runs
        .iter()
        .map(|r| r.size)
        .min()
        .unwrap_or(first.size)
        .max(1);
    let hi = runs.iter().map(|r| r.size).max().unwrap_or(first.size);
    ensure!(hi > lo, "{title}: one message size is not a plot");
    let ceiling = ceiling_curve(first, lo, hi);
    let top = ceiling
        .iter()
        .map(|p| p.1)
        .chain(runs.iter().map(|r| r.gbps()))
        .fold(0.0, f64::max)
        * 1.08;
    let root = SVGBackend::new(path, (760, 440)).into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| anyhow::anyhow!("drawing {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d((lo as f64).log2()..(hi as f64).log2(), 0.0..top)
        .map_err(|e| draw(&e))?;
    chart
        .configure_mesh()
        .x_desc("message size (bytes)")
        .y_desc("goodput (Gb/s)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .x_labels(8)
        .x_label_formatter(&|v| bytes(v.exp2()))
        .draw()
        .map_err(|e| draw(&e))?;
    let grey = RGBColor(120, 120, 120);
    chart
        .draw_series(LineSeries::new(ceiling, grey.stroke_width(1)))
        .map_err(|e| draw(&e))?
        .label("ceiling: what the wire allows")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], grey));
    let measured: Vec<(f64, f64)> = runs
        .iter()
        .map(|r| ((r.size as f64).log2(), r.gbps()))
        .collect();
    chart
        .draw_series(LineSeries::new(measured.clone(), BLUE.stroke_width(2)))
        .map_err(|e| draw(&e))?
        .label("measured: two ferroce NICs")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(measured.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
        .map_err(|e| draw(&e))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 14))
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))?;
    Ok(())
}

/// The ceiling of `run`'s verb, path MTU and link at sizes from `lo` to `hi`: (log2 of the
/// size, Gb/s).
fn ceiling_curve(run: &WriteRun, lo: u64, hi: u64) -> Vec<(f64, f64)> {
    let (a, b) = ((lo as f64).log2(), (hi as f64).log2());
    let n = ((b - a) * f64::from(PER_OCTAVE)).ceil() as u32;
    let mut sizes: Vec<u64> = (0..=n)
        .map(|k| {
            (a + (b - a) * f64::from(k) / f64::from(n.max(1)))
                .exp2()
                .round() as u64
        })
        .collect();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|size| {
            let at = WriteRun { size, ..*run };
            ((size as f64).log2(), at.ceiling_gbps())
        })
        .collect()
}

/// `64`, `1 KiB`, `64 KiB`, `1 MiB` (a size between whole bytes is no label).
fn bytes(v: f64) -> String {
    if (v - v.round()).abs() > 1e-6 * v {
        return String::new();
    }
    let v = v.round() as u64;
    match v {
        v if v >= 1 << 20 && v % (1 << 20) == 0 => format!("{} MiB", v >> 20),
        v if v >= 1 << 10 && v % (1 << 10) == 0 => format!("{} KiB", v >> 10),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroce_driver::WrOpcode;

    fn run(opcode: WrOpcode, size: u64, cycles: u64) -> WriteRun {
        WriteRun {
            opcode,
            size,
            count: 10,
            pmtu: 4096,
            cycles,
            period_ps: 6400,
            link_bps: 10_000_000_000,
            wall_s: 1.0,
        }
    }

    #[test]
    fn a_plot_has_the_measured_points_the_ceiling_and_its_labels() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("ferroce-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("read.svg");
        let runs = [
            run(WrOpcode::RdmaRead, 64, 30_000),
            run(WrOpcode::RdmaRead, 1024, 27_000),
            run(WrOpcode::RdmaRead, 1 << 20, 1_100_000),
        ];
        goodput(&path, "READ goodput", &runs)?;
        let svg = std::fs::read_to_string(&path)?;
        std::fs::remove_dir_all(&dir)?;
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert_eq!(svg.matches("<circle").count(), runs.len(), "one dot a run");
        for text in [
            "READ goodput",
            "message size (bytes)",
            "goodput (Gb/s)",
            "ceiling: what the wire allows",
            "measured: two ferroce NICs",
            "1 KiB",
        ] {
            assert!(svg.contains(text), "no {text:?} in the plot");
        }
        // The ceiling's curve has a point for every size step it was sampled at.
        let curve = ceiling_curve(&runs[0], 64, 1 << 20);
        assert!(curve.len() > 300, "{} ceiling samples", curve.len());
        assert!(curve.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(curve.iter().all(|p| p.1 > 0.0 && p.1 < 10.0));
        Ok(())
    }

    #[test]
    fn one_size_is_not_a_plot() {
        let dir = std::env::temp_dir();
        let e = goodput(&dir.join("x.svg"), "x", &[run(WrOpcode::Send, 64, 100)]);
        assert!(e.is_err());
        assert!(goodput(&dir.join("x.svg"), "x", &[]).is_err());
    }

    #[test]
    fn sizes_read_as_bytes() {
        assert_eq!(bytes(64.0), "64");
        assert_eq!(bytes(1024.0), "1 KiB");
        assert_eq!(bytes(65536.0), "64 KiB");
        assert_eq!(bytes(1048576.0), "1 MiB");
        assert_eq!(bytes(1500.0), "1500");
        assert_eq!(bytes(2f64.powf(6.5)), "");
    }
}
