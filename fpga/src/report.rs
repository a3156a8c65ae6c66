//! What place and route made of a design: its cells, each clock's Fmax against its constraint,
//! the critical paths; kept in the cache as JSON, and printed as Markdown tables.

use crate::path::{readable, CriticalPath};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One clock's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockFmax {
    pub clock: String,
    pub achieved_mhz: f64,
    pub constraint_mhz: f64,
}

/// A placed and routed design.
#[derive(Clone, Debug, PartialEq)]
pub struct PnrReport {
    /// Yosys' cell counts after `synth_ecp5` of the wrapper.
    pub cells: BTreeMap<String, u64>,
    /// Flip-flops of the wrapper (taken off [`PnrReport::ffs`]).
    pub wrapper_ffs: u64,
    pub clocks: Vec<ClockFmax>,
    pub paths: Vec<CriticalPath>,
    /// Time the tools took in the run that made this result (not of a cache hit).
    pub seconds: f64,
    /// Size of the bitstream `ecppack` wrote (board tops only; 0 out of context).
    pub bitstream_bytes: u64,
    /// The worst paths to distinct endpoint registers, when [`Flow::paths`] asks for them
    /// (from the SDF kept in the cache, [`crate::sta`]).
    pub worst: Vec<CriticalPath>,
    /// Block RAM cells by the memory they hold ([`memories`]).
    pub memories: BTreeMap<String, u64>,
}

impl PnrReport {
    fn cell(&self, name: &str) -> u64 {
        self.cells.get(name).copied().unwrap_or(0)
    }
    /// LUT4s (each CCU2C carry cell holds two more, counted in [`PnrReport::carries`]).
    pub fn luts(&self) -> u64 {
        self.cell("LUT4")
    }
    pub fn carries(&self) -> u64 {
        self.cell("CCU2C")
    }
    /// The design's flip-flops, without the wrapper's.
    pub fn ffs(&self) -> u64 {
        self.cell("TRELLIS_FF").saturating_sub(self.wrapper_ffs)
    }
    /// The complaint when the slowest clock is under `floor` MHz (or no clock was timed):
    /// what the test suite's Fmax gate fails on.
    pub fn under_floor(&self, floor: f64) -> Option<String> {
        let path = self.paths.first().map_or(String::new(), |p| {
            format!(" ({} -> {}, {} levels)", p.from, p.to, p.levels)
        });
        match self.fmax() {
            Some(f) if f >= floor => None,
            Some(f) => Some(format!("{f:.1} MHz < floor {floor}{path}")),
            None => Some("no clock in the report".into()),
        }
    }
    /// Block RAMs (DP16KD, 18 kbit).
    pub fn ebrs(&self) -> u64 {
        self.cell("DP16KD")
    }
    /// Distributed RAMs (TRELLIS_DPR16X4, 16x4 bits in a slice).
    pub fn dist_rams(&self) -> u64 {
        self.cell("TRELLIS_DPR16X4")
    }
    /// DSP multipliers (MULT18X18D).
    pub fn dsps(&self) -> u64 {
        self.cell("MULT18X18D")
    }
    /// Every clock meets its constraint.
    pub fn meets(&self) -> bool {
        !self.clocks.is_empty()
            && self
                .clocks
                .iter()
                .all(|c| c.achieved_mhz >= c.constraint_mhz)
    }
    /// The slowest clock's achieved Fmax.
    pub fn fmax(&self) -> Option<f64> {
        self.clocks
            .iter()
            .map(|c| c.achieved_mhz)
            .min_by(|a, b| a.total_cmp(b))
    }

    pub(crate) fn to_json(&self) -> Value {
        serde_json::json!({
            "cells": self.cells,
            "wrapper_ffs": self.wrapper_ffs,
            "clocks": self.clocks.iter().map(|c| serde_json::json!({
                "clock": c.clock, "achieved": c.achieved_mhz, "constraint": c.constraint_mhz,
            })).collect::<Vec<_>>(),
            "paths": self.paths.iter().map(|p| serde_json::json!({
                "from": p.from, "to": p.to, "levels": p.levels,
                "logic_ns": p.logic_ns, "routing_ns": p.routing_ns,
            })).collect::<Vec<_>>(),
            "seconds": self.seconds,
            "bitstream_bytes": self.bitstream_bytes,
            "memories": self.memories,
        })
    }

    pub(crate) fn from_json(v: &Value) -> Option<PnrReport> {
        let cells = v["cells"]
            .as_object()?
            .iter()
            .filter_map(|(k, n)| Some((k.clone(), n.as_u64()?)))
            .collect();
        let clocks = v["clocks"]
            .as_array()?
            .iter()
            .filter_map(|c| {
                Some(ClockFmax {
                    clock: c["clock"].as_str()?.to_string(),
                    achieved_mhz: c["achieved"].as_f64()?,
                    constraint_mhz: c["constraint"].as_f64()?,
                })
            })
            .collect();
        let paths = longest_first(
            v["paths"]
                .as_array()?
                .iter()
                .filter_map(|p| {
                    Some(CriticalPath {
                        from: p["from"].as_str()?.to_string(),
                        to: p["to"].as_str()?.to_string(),
                        levels: usize::try_from(p["levels"].as_u64()?).ok()?,
                        logic_ns: p["logic_ns"].as_f64()?,
                        routing_ns: p["routing_ns"].as_f64()?,
                    })
                })
                .collect(),
        );
        Some(PnrReport {
            cells,
            wrapper_ffs: v["wrapper_ffs"].as_u64()?,
            clocks,
            paths,
            seconds: v["seconds"].as_f64().unwrap_or(0.0),
            bitstream_bytes: v["bitstream_bytes"].as_u64().unwrap_or(0),
            worst: Vec::new(),
            memories: v["memories"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, n)| Some((k.clone(), n.as_u64()?)))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// The block RAM cells (`cell`: the family's, `DP16KD` on ECP5) of Yosys' mapped design (its
/// JSON netlist), counted by the memory each belongs to: the cell's hierarchical name up to
/// Yosys' `.mem.<row>.<column>` suffix, without the wrapper's instance (`dut.`): the NIC's
/// transmit queues are `nic.tx.mac.queues.ram`.
pub fn memories(netlist: &Value, cell: &str) -> BTreeMap<String, u64> {
    let mut by = BTreeMap::new();
    let Some(modules) = netlist["modules"].as_object() else {
        return by;
    };
    for m in modules.values() {
        let Some(cells) = m["cells"].as_object() else {
            continue;
        };
        for (name, c) in cells {
            if c["type"].as_str() != Some(cell) {
                continue;
            }
            let name = name.rsplit_once(".mem.").map_or(name.as_str(), |(n, _)| n);
            let name = name.strip_prefix("dut.").unwrap_or(name);
            *by.entry(name.to_string()).or_insert(0) += 1;
        }
    }
    by
}

/// [`memories`] as a Markdown table, the largest first.
pub fn memories_table(by: &BTreeMap<String, u64>, cell: &str) -> String {
    let mut rows: Vec<(&String, &u64)> = by.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut s = format!("| memory | {cell} |\n|---|--:|\n");
    for (name, n) in rows {
        let _ = writeln!(s, "| `{name}` | {n} |");
    }
    let _ = writeln!(s, "| total | {} |", by.values().sum::<u64>());
    s
}

/// nextpnr lists one critical path per clock (and per pair of clocks): the longest first, so
/// that a design with two clocks names its slower clock's (with one clock, the one path).
fn longest_first(mut paths: Vec<CriticalPath>) -> Vec<CriticalPath> {
    paths.sort_by(|a, b| (b.logic_ns + b.routing_ns).total_cmp(&(a.logic_ns + a.routing_ns)));
    paths
}

pub(crate) fn parse_report(v: &Value) -> (Vec<ClockFmax>, Vec<CriticalPath>) {
    let clocks = v["fmax"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, c)| {
                    Some(ClockFmax {
                        clock: k.clone(),
                        achieved_mhz: c["achieved"].as_f64()?,
                        constraint_mhz: c["constraint"].as_f64()?,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let paths = v["critical_paths"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| {
                    let segs = p["path"].as_array()?;
                    let first = segs.first()?;
                    let last = segs.last()?;
                    let sum = |t: &str| -> f64 {
                        segs.iter()
                            .filter(|s| s["type"] == t)
                            .filter_map(|s| s["delay"].as_f64())
                            .sum()
                    };
                    Some(CriticalPath {
                        from: readable(first["from"]["cell"].as_str()?),
                        to: readable(last["to"]["cell"].as_str()?),
                        levels: segs.iter().filter(|s| s["type"] == "logic").count(),
                        logic_ns: sum("logic") + sum("clk-to-q") + sum("setup"),
                        routing_ns: sum("routing"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let paths = longest_first(paths);
    (clocks, paths)
}

/// A Markdown table of P&R results, one row per design: resources on the part, Fmax against
/// the constraint, and the critical path's ends and logic levels.
pub fn table(rows: &[(String, std::result::Result<PnrReport, String>)]) -> String {
    let mut s = String::from(
        "| design | LUT4 | CCU2C | FF | EBR | DPR16X4 | DSP | Fmax (target) MHz | critical path (logic levels) |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|---|\n",
    );
    for (name, r) in rows {
        match r {
            Ok(r) => {
                let (fmax, target) = r
                    .clocks
                    .iter()
                    .min_by(|a, b| a.achieved_mhz.total_cmp(&b.achieved_mhz))
                    .map_or((0.0, 0.0), |c| (c.achieved_mhz, c.constraint_mhz));
                let mark = if fmax >= target { "" } else { " ✗" };
                // nextpnr reports the constraint as it rounded it (300.0299987792969).
                let target = format!("{target:.2}");
                let target = target.trim_end_matches('0').trim_end_matches('.');
                let path = r.paths.first().map_or(String::from("-"), |p| {
                    format!("`{}` → `{}` ({})", p.from, p.to, p.levels)
                });
                let _ = writeln!(
                    s,
                    "| `{name}` | {} | {} | {} | {} | {} | {} | {fmax:.1} ({target}){mark} | {path} |",
                    r.luts(),
                    r.carries(),
                    r.ffs(),
                    r.ebrs(),
                    r.dist_rams(),
                    r.dsps(),
                );
            }
            Err(e) => {
                let first = e.lines().next().unwrap_or("failed");
                let _ = writeln!(s, "| `{name}` | failed: {first} | | | | | | | |");
            }
        }
    }
    s
}

/// A Markdown table of a design's worst paths ([`Flow::paths`]): delay, slack against the
/// constraint, ends, logic levels and the split between logic and routing.
pub fn paths_table(r: &PnrReport) -> String {
    let target = r
        .clocks
        .iter()
        .map(|c| c.constraint_mhz)
        .fold(f64::INFINITY, f64::min);
    let period = 1000.0 / target;
    let mut s = String::from(
        "| # | from | to | levels | delay ns (logic + routing) | slack ns | MHz |\n\
         |--:|---|---|--:|--:|--:|--:|\n",
    );
    for (i, p) in r.worst.iter().enumerate() {
        let d = p.logic_ns + p.routing_ns;
        let _ = writeln!(
            s,
            "| {} | `{}` | `{}` | {} | {d:.2} ({:.2} + {:.2}) | {:.2} | {:.1} |",
            i + 1,
            p.from,
            p.to,
            p.levels,
            p.logic_ns,
            p.routing_ns,
            period - d,
            1000.0 / d
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_rams_are_counted_by_their_memory() {
        let netlist = serde_json::json!({"modules": {"top": {"cells": {
            "dut.nic.tx.mac.queues.ram.mem.0.0": {"type": "DP16KD"},
            "dut.nic.tx.mac.queues.ram.mem.0.1": {"type": "DP16KD"},
            "dut.nic.resp.ack_info.mem.1.0": {"type": "DP16KD"},
            "dut.nic.resp.ack_info.mem.1.0_lut": {"type": "LUT4"},
            "dut.small.mem.0.0": {"type": "TRELLIS_DPR16X4"},
        }}}});
        let by = memories(&netlist, "DP16KD");
        assert_eq!(
            by.into_iter().collect::<Vec<_>>(),
            [
                ("nic.resp.ack_info".to_string(), 1),
                ("nic.tx.mac.queues.ram".to_string(), 2)
            ]
        );
    }

    #[test]
    fn the_fmax_gate_fails_under_its_floor() {
        let mut r = PnrReport {
            cells: BTreeMap::new(),
            wrapper_ffs: 0,
            clocks: vec![ClockFmax {
                clock: "clk".into(),
                achieved_mhz: 150.0,
                constraint_mhz: 156.25,
            }],
            paths: Vec::new(),
            seconds: 0.0,
            bitstream_bytes: 0,
            worst: Vec::new(),
            memories: BTreeMap::new(),
        };
        assert!(r.under_floor(156.25).is_some_and(|m| m.contains("150.0")));
        assert_eq!(r.under_floor(149.0), None);
        r.clocks[0].achieved_mhz = 156.25;
        assert_eq!(r.under_floor(156.25), None);
        r.clocks.clear();
        assert!(r.under_floor(1.0).is_some());
    }
}
