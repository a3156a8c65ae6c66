//! Static timing analysis of a routed ECP5 design from the SDF nextpnr writes (`--sdf`): the
//! worst paths to distinct endpoints. nextpnr's own report names one critical path per clock;
//! a design's timing plan needs the next ones too.
//!
//! The SDF holds every delay nextpnr times with: `IOPATH` arcs inside cells (a LUT input to its
//! output, a carry chain's links, a flip-flop's or RAM's clock to its outputs), `INTERCONNECT`
//! arcs for every routed connection, and `SETUPHOLD` checks at every register input. The
//! analysis is nextpnr's (single clock, no clock skew, maximum delays): a path starts at a
//! clock-to-output arc, adds the arcs along the way, and ends at an input with a setup check,
//! whose setup time it adds. A test holds its worst path to nextpnr's own critical path.

use crate::path::{readable, CriticalPath};
use std::collections::HashMap;

/// One timing arc of the SDF.
#[derive(Clone, Copy)]
struct Arc {
    from: u32,
    to: u32,
    ps: u32,
    logic: bool,
}

/// The timing graph of one SDF.
#[derive(Default)]
struct Graph {
    names: Vec<(String, String)>,
    ids: HashMap<(String, String), u32>,
    arcs: Vec<Arc>,
    /// Clock-to-output delay of every launching pin.
    launch: HashMap<u32, u32>,
    /// Setup time of every checked register input.
    setup: HashMap<u32, u32>,
}

impl Graph {
    fn id(&mut self, cell: &str, pin: &str) -> u32 {
        let key = (cell.to_string(), pin.to_string());
        if let Some(&i) = self.ids.get(&key) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(key.clone());
        self.ids.insert(key, i);
        i
    }
}

/// An SDF identifier without its escapes (`\$` is `$`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut esc = false;
    for c in s.chars() {
        if esc || c != '\\' {
            out.push(c);
            esc = false;
        } else {
            esc = true;
        }
    }
    out
}

/// `cell/pin` split at the last unescaped divider.
fn split_pin(s: &str) -> Option<(String, String)> {
    let bytes = s.as_bytes();
    let at = (0..bytes.len())
        .rev()
        .find(|&i| bytes[i] == b'/' && (i == 0 || bytes[i - 1] != b'\\'))?;
    Some((unescape(&s[..at]), unescape(&s[at + 1..])))
}

/// The maximum of a `(min:typ:max)` triple, in picoseconds.
fn max_ps(t: &str) -> Option<u32> {
    let t = t.trim_start_matches('(').trim_end_matches(')');
    let v: f64 = t.rsplit(':').next()?.parse().ok()?;
    Some(v.max(0.0).round() as u32)
}

/// A pin named in a timing check, `(posedge CLK)` or `DI`.
fn check_pin(t: &str) -> String {
    t.trim_start_matches('(')
        .trim_end_matches(')')
        .trim_start_matches("posedge ")
        .trim_start_matches("negedge ")
        .to_string()
}

fn parse(sdf: &str) -> Result<Graph, String> {
    let mut g = Graph::default();
    let mut cell = String::new();
    // A cell's arcs wait for its timing checks, which name its clock pins.
    let mut iopaths: Vec<(String, String, u32)> = Vec::new();
    let mut clocks: Vec<String> = Vec::new();
    let flush =
        |g: &mut Graph, cell: &str, iop: &mut Vec<(String, String, u32)>, clk: &mut Vec<String>| {
            for (a, b, ps) in iop.drain(..) {
                let is_clock = clk.contains(&a) || a.starts_with("CLK") || a == "WCK";
                let to = g.id(cell, &b);
                if is_clock {
                    let e = g.launch.entry(to).or_insert(0);
                    *e = (*e).max(ps);
                } else {
                    let from = g.id(cell, &a);
                    g.arcs.push(Arc {
                        from,
                        to,
                        ps,
                        logic: true,
                    });
                }
            }
            clk.clear();
        };
    for (n, line) in sdf.lines().enumerate() {
        let t = line.trim();
        let bad = || format!("SDF line {}: cannot read {t:?}", n + 1);
        if t.starts_with("(CELL") {
            flush(&mut g, &cell, &mut iopaths, &mut clocks);
        } else if let Some(rest) = t.strip_prefix("(INSTANCE") {
            cell = unescape(rest.trim().trim_end_matches(')').trim());
        } else if let Some(rest) = t.strip_prefix("(IOPATH ") {
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() < 3 {
                return Err(bad());
            }
            let ps = max_ps(f[2]).ok_or_else(bad)?;
            iopaths.push((check_pin(f[0]), check_pin(f[1]), ps));
        } else if let Some(rest) = t.strip_prefix("(INTERCONNECT ") {
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() < 3 {
                return Err(bad());
            }
            let (fc, fp) = split_pin(f[0]).ok_or_else(bad)?;
            let (tc, tp) = split_pin(f[1]).ok_or_else(bad)?;
            let ps = max_ps(f[2]).ok_or_else(bad)?;
            let from = g.id(&fc, &fp);
            let to = g.id(&tc, &tp);
            g.arcs.push(Arc {
                from,
                to,
                ps,
                logic: false,
            });
        } else if let Some(rest) = t.strip_prefix("(SETUPHOLD ") {
            // (SETUPHOLD (posedge D) (posedge CLK) (setup) (hold))
            let parts: Vec<&str> = rest.split(") (").collect();
            if parts.len() < 3 {
                return Err(bad());
            }
            let data = check_pin(parts[0]);
            let clk = check_pin(parts[1]);
            let ps = max_ps(parts[2]).ok_or_else(bad)?;
            let id = g.id(&cell, &data);
            let e = g.setup.entry(id).or_insert(0);
            *e = (*e).max(ps);
            if !clocks.contains(&clk) {
                clocks.push(clk);
            }
        }
    }
    flush(&mut g, &cell, &mut iopaths, &mut clocks);
    if g.launch.is_empty() || g.setup.is_empty() {
        return Err("the SDF has no registers (no clock-to-output arc or setup check)".into());
    }
    Ok(g)
}

/// Which registers the worst paths are told apart by (the bits of one register count as one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Distinct {
    /// One path per endpoint register: its worst.
    #[default]
    End,
    /// One path per launching register: the worst of its endpoints' worst paths (a cone
    /// that reaches many registers shows once, so the list names more causes).
    Start,
}

/// The `n` worst register-to-register paths of a routed design, worst first, one per endpoint
/// or per launching register ([`Distinct`]), from nextpnr's SDF.
pub fn worst_paths(sdf: &str, n: usize, distinct: Distinct) -> Result<Vec<CriticalPath>, String> {
    let g = parse(sdf)?;
    let nodes = g.names.len();
    let mut out_arcs: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    let mut indeg = vec![0u32; nodes];
    for (i, a) in g.arcs.iter().enumerate() {
        out_arcs[a.from as usize].push(i as u32);
        indeg[a.to as usize] += 1;
    }
    // Arrival times in topological order (arcs out of a combinational loop are never timed).
    let mut arrival: Vec<Option<u32>> = vec![None; nodes];
    let mut via: Vec<Option<u32>> = vec![None; nodes];
    for (&pin, &ps) in &g.launch {
        arrival[pin as usize] = Some(ps);
    }
    let mut ready: Vec<u32> = (0..nodes as u32)
        .filter(|&i| indeg[i as usize] == 0)
        .collect();
    while let Some(u) = ready.pop() {
        for &ai in &out_arcs[u as usize] {
            let a = g.arcs[ai as usize];
            if let Some(t) = arrival[u as usize] {
                let t = t + a.ps;
                if arrival[a.to as usize].is_none_or(|old| t > old) {
                    arrival[a.to as usize] = Some(t);
                    via[a.to as usize] = Some(ai);
                }
            }
            indeg[a.to as usize] -= 1;
            if indeg[a.to as usize] == 0 {
                ready.push(a.to);
            }
        }
    }
    // The worst endpoint of each register.
    let mut worst: HashMap<String, (u32, u32)> = HashMap::new();
    for (&pin, &setup) in &g.setup {
        if let Some(t) = arrival[pin as usize] {
            let total = t + setup;
            let reg = readable(&g.names[pin as usize].0);
            let e = worst.entry(reg).or_insert((0, pin));
            if total > e.0 {
                *e = (total, pin);
            }
        }
    }
    let mut ends: Vec<(u32, u32)> = worst.into_values().collect();
    ends.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen = std::collections::HashSet::new();
    Ok(ends
        .into_iter()
        .map(|(total, end)| {
            let (mut logic, mut routing, mut levels) = (0u32, 0u32, 0usize);
            let mut at = end;
            while let Some(ai) = via[at as usize] {
                let a = g.arcs[ai as usize];
                if a.logic {
                    logic += a.ps;
                    levels += 1;
                } else {
                    routing += a.ps;
                }
                at = a.from;
            }
            // What is left is the launch (clock to output) and the setup time.
            logic += total - logic - routing;
            CriticalPath {
                from: readable(&g.names[at as usize].0),
                to: readable(&g.names[end as usize].0),
                levels,
                logic_ns: f64::from(logic) / 1000.0,
                routing_ns: f64::from(routing) / 1000.0,
            }
        })
        .filter(|p| match distinct {
            Distinct::End => true,
            Distinct::Start => seen.insert(p.from.clone()),
        })
        .take(n)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_split_at_the_last_unescaped_divider() {
        assert_eq!(
            split_pin(r"\$nextpnr_CCU2C_1\$CCU2_COMB0/FCO"),
            Some(("$nextpnr_CCU2C_1$CCU2_COMB0".into(), "FCO".into()))
        );
        assert_eq!(split_pin(r"a\/b/Q"), Some(("a/b".into(), "Q".into())));
        assert_eq!(max_ps("(257:283:309)"), Some(309));
    }

    /// Two registers through one LUT: launch 300, route 100, LUT 130, route 90, setup 20.
    const SMALL: &str = r"(DELAYFILE
  (CELL
    (CELLTYPE top)
    (INSTANCE )
    (DELAY
      (ABSOLUTE
        (INTERCONNECT a_TRELLIS_FF_Q/Q l_LUT4/A (90:95:100) (90:95:100))
        (INTERCONNECT l_LUT4/F b_TRELLIS_FF_Q/DI (80:85:90) (80:85:90))
        (INTERCONNECT a_TRELLIS_FF_Q/Q b_TRELLIS_FF_Q/M (10:10:10) (10:10:10))
      )
    )
  )
  (CELL
    (CELLTYPE TRELLIS_FF)
    (INSTANCE a_TRELLIS_FF_Q)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (257:283:300) (257:283:300))
      )
    )
    (TIMINGCHECK
      (SETUPHOLD (posedge DI) (posedge CLK) (0:0:20) (0:0:0))
    )
  )
  (CELL
    (CELLTYPE TRELLIS_COMB)
    (INSTANCE l_LUT4)
    (DELAY
      (ABSOLUTE
        (IOPATH A F (119:130:130) (119:130:130))
      )
    )
  )
  (CELL
    (CELLTYPE TRELLIS_FF)
    (INSTANCE b_TRELLIS_FF_Q)
    (DELAY
      (ABSOLUTE
        (IOPATH CLK Q (257:283:300) (257:283:300))
      )
    )
    (TIMINGCHECK
      (SETUPHOLD (posedge DI) (posedge CLK) (0:0:20) (0:0:0))
      (SETUPHOLD (posedge M) (posedge CLK) (0:0:5) (0:0:0))
    )
  )
)
";

    #[test]
    fn a_small_netlist_is_timed() {
        let p = worst_paths(SMALL, 10, Distinct::End).expect("timed");
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].from.as_str(), p[0].to.as_str()), ("a", "b"));
        assert_eq!(p[0].levels, 1);
        assert!((p[0].routing_ns - 0.19).abs() < 1e-9, "{p:?}");
        assert!((p[0].logic_ns - 0.45).abs() < 1e-9, "{p:?}");
    }

    /// The LUT also feeds a third register, 10 ps further: two endpoints, one launch.
    #[test]
    fn paths_are_told_apart_by_end_or_by_start() {
        let sdf = SMALL.replacen(
            "        (INTERCONNECT a_TRELLIS_FF_Q/Q b_TRELLIS_FF_Q/M",
            "        (INTERCONNECT l_LUT4/F c_TRELLIS_FF_Q/DI (90:95:100) (90:95:100))\n        (INTERCONNECT a_TRELLIS_FF_Q/Q b_TRELLIS_FF_Q/M",
            1,
        ) .replacen(
            "  (CELL\n    (CELLTYPE TRELLIS_COMB)",
            "  (CELL\n    (CELLTYPE TRELLIS_FF)\n    (INSTANCE c_TRELLIS_FF_Q)\n    (DELAY\n      (ABSOLUTE\n        (IOPATH CLK Q (257:283:300) (257:283:300))\n      )\n    )\n    (TIMINGCHECK\n      (SETUPHOLD (posedge DI) (posedge CLK) (0:0:20) (0:0:0))\n    )\n  )\n  (CELL\n    (CELLTYPE TRELLIS_COMB)",
            1,
        );
        let ends = worst_paths(&sdf, 10, Distinct::End).expect("timed");
        let ends: Vec<(&str, &str)> = ends
            .iter()
            .map(|p| (p.from.as_str(), p.to.as_str()))
            .collect();
        assert_eq!(ends, [("a", "c"), ("a", "b")]);
        let starts = worst_paths(&sdf, 10, Distinct::Start).expect("timed");
        assert_eq!(starts.len(), 1, "{starts:?}");
        assert_eq!(starts[0].to, "c");
    }
}
