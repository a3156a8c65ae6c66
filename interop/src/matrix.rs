//! The runs `ferroce interop` makes: each case a guest tool against ferroce's side of it, one
//! guest per IB MTU (Ethernet MTU 1500 for 1024, 9000 for 4096), a fresh simulated host per
//! case, a pcap of each direction per case checked by `tests/interop/check_pcap.py` (scapy's
//! ICRC, tshark's dissection, repeated request packets counted per direction).

use super::perftest::{self, Perftest, Verb};
use super::pingpong::{self, PingPong};
use super::{err, Rig, RigConfig, Role};
use crate::Result;
use ferroce_sim::cache::workspace;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tool of the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    PingPong,
    Perftest(Verb),
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::PingPong => "ibv_rc_pingpong",
            Tool::Perftest(v) => v.label(),
        }
    }

    /// A file-name-friendly name.
    fn stem(self) -> &'static str {
        match self {
            Tool::PingPong => "ibv_rc_pingpong",
            Tool::Perftest(Verb::FetchAdd) => "ib_atomic_bw-fadd",
            Tool::Perftest(Verb::CmpSwap) => "ib_atomic_bw-cas",
            Tool::Perftest(v) => v.tool(),
        }
    }
}

/// rxe's ACK timeout exponent given to perftest (`-u`): 4.096 us x 2^20, about 4.3 s of wall
/// time, for the simulated NIC's pace (`ibv_rc_pingpong` fixes 14, about 67 ms).
pub const PERFTEST_TIMEOUT: u32 = 20;

/// One run.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub tool: Tool,
    pub role: Role,
    pub size: u32,
    pub mtu: u32,
    pub iters: u32,
}

impl Case {
    /// "tool role size MTU", what `ferroce interop --only` matches.
    pub fn describe(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.tool.name(),
            self.tool.stem(),
            self.role,
            self.size,
            self.mtu
        )
    }
}

/// The pcap check's findings.
#[derive(Clone, Debug, Default)]
pub struct WireCheck {
    /// RoCE frames sent by ferroce and by the guest, every one with a good ICRC and dissected.
    pub frames: [u64; 2],
    /// Request packets seen again (same QP, PSN, opcode): ferroce's and the guest's.
    pub retransmitted: [u64; 2],
    /// The slowest answer (ACK, NAK, atomic ACK, READ response) to a request with AckReq, in
    /// simulated ns, and the requests never answered: ferroce's answers to the guest, the
    /// guest's to ferroce.
    pub slowest_answer_ns: [u64; 2],
    pub unanswered: [u64; 2],
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub case: Case,
    /// `Ok(rate)` or the failure.
    pub result: std::result::Result<String, String>,
    pub wire: Option<WireCheck>,
    pub pcap: PathBuf,
}

/// The cases of the short subset (`cargo test`: one pingpong and one WRITE run, both roles)
/// or of the whole matrix (every tool, both roles, IB MTU 1024 and 4096).
pub fn cases(quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    let mtus: &[u32] = if quick { &[1024] } else { &[1024, 4096] };
    for &mtu in mtus {
        for role in [Role::Server, Role::Client] {
            let sizes: &[u32] = if quick { &[4096] } else { &[64, 4096, 65536] };
            for &size in sizes {
                v.push(Case {
                    tool: Tool::PingPong,
                    role,
                    size,
                    mtu,
                    iters: if quick { 20 } else { 100 },
                });
            }
            let verbs: &[Verb] = if quick {
                &[Verb::Write]
            } else {
                &[
                    Verb::Write,
                    Verb::Send,
                    Verb::Read,
                    Verb::FetchAdd,
                    Verb::CmpSwap,
                ]
            };
            for &verb in verbs {
                let atomic = matches!(verb, Verb::FetchAdd | Verb::CmpSwap);
                v.push(Case {
                    tool: Tool::Perftest(verb),
                    role,
                    size: if atomic {
                        8
                    } else if quick {
                        16384
                    } else {
                        65536
                    },
                    mtu,
                    iters: if quick {
                        10
                    } else if atomic {
                        1000
                    } else {
                        100
                    },
                });
            }
        }
    }
    v
}

/// Where the guest's manifest is by default.
pub fn default_manifest() -> PathBuf {
    workspace().join("target/interop/guest/manifest.json")
}

/// Run `cases`, writing pcaps and logs under `out`; every case gets an outcome (a failed one
/// does not stop the others, a guest that does not boot fails its MTU's cases).
pub fn run(cases: &[Case], manifest: &Path, out: &Path, seed: u64) -> Result<Vec<Outcome>> {
    std::fs::create_dir_all(out).map_err(|e| err(format!("{}: {e}", out.display())))?;
    let mut outcomes = Vec::new();
    let mut mtus: Vec<u32> = cases.iter().map(|c| c.mtu).collect();
    mtus.dedup();
    for mtu in mtus {
        let (hostfwd_port, guestfwd_port) = free_ports()?;
        let rcfg = RigConfig {
            manifest: manifest.to_path_buf(),
            dir: out.join(format!("guest-{mtu}")),
            eth_mtu: if mtu > 1024 { 9000 } else { 1500 },
            hostfwd_port,
            guestfwd_port,
        };
        let mut rig = match Rig::open(&rcfg) {
            Ok(r) => Some(r),
            Err(e) => {
                for c in cases.iter().filter(|c| c.mtu == mtu) {
                    outcomes.push(Outcome {
                        case: *c,
                        result: Err(format!("guest: {e}")),
                        wire: None,
                        pcap: PathBuf::new(),
                    });
                }
                None
            }
        };
        let Some(rig) = rig.as_mut() else { continue };
        for (i, c) in cases.iter().filter(|c| c.mtu == mtu).enumerate() {
            if i > 0 {
                if let Err(e) = rig.fresh() {
                    outcomes.push(Outcome {
                        case: *c,
                        result: Err(format!("new simulated host: {e}")),
                        wire: None,
                        pcap: PathBuf::new(),
                    });
                    continue;
                }
            }
            let stem = format!("{}-{}-{}-{}", c.tool.stem(), c.role, c.size, c.mtu);
            let res = rig
                .tap(out, &stem)
                .and_then(|_| run_case(rig, c, guestfwd_port, hostfwd_port, seed + i as u64))
                .map_err(|e| {
                    // What the guest's tool said, if it said anything.
                    match rig.finish_guest(c.tool.stem(), std::time::Duration::from_secs(20)) {
                        Ok((rc, out)) => format!("{e}\n  the tool (exit {rc}) said:\n{out}"),
                        Err(_) => e.to_string(),
                    }
                });
            // (The taps write through: the files are whole already.)
            let pcaps = rig.pcaps.clone();
            let wire = check_pcaps(&pcaps);
            let (result, wire) = match (res, wire) {
                (Ok(rate), Ok(w)) => (Ok(rate), Some(w)),
                (Ok(_), Err(e)) => (Err(format!("pcap check: {e}")), None),
                (Err(e), w) => (Err(e), w.ok()),
            };
            let held = rig.hold.stats();
            eprintln!(
                "interop: {} as {} {} B MTU {}: {} (guest held {} times, {:.1} s, {} expired)",
                c.tool.name(),
                c.role,
                c.size,
                c.mtu,
                match &result {
                    Ok(r) => format!("ok, {r}"),
                    Err(e) => format!("FAILED: {e}"),
                },
                held.holds,
                held.held.as_secs_f64(),
                held.expired
            );
            outcomes.push(Outcome {
                case: *c,
                result,
                wire,
                pcap: pcaps[0].with_file_name(format!("{stem}-*.pcap")),
            });
        }
    }
    Ok(outcomes)
}

fn run_case(rig: &mut Rig, c: &Case, listen: u16, hostfwd: u16, seed: u64) -> Result<String> {
    let port = if c.role == Role::Server {
        listen
    } else {
        hostfwd
    };
    match c.tool {
        Tool::PingPong => {
            let r = pingpong::run(
                rig,
                &PingPong {
                    role: c.role,
                    size: c.size,
                    iters: c.iters,
                    mtu: c.mtu,
                    seed,
                },
                port,
            )?;
            let us = r.sim_cycles as f64 * 6.4e-3 / f64::from(c.iters);
            Ok(format!(
                "{} B checked, {:.1} us/iter simulated, {:.1} s wall",
                r.bytes_checked,
                us,
                r.wall.as_secs_f64()
            ))
        }
        Tool::Perftest(verb) => {
            let r = perftest::run(
                rig,
                &Perftest {
                    verb,
                    role: c.role,
                    size: c.size,
                    iters: c.iters,
                    mtu: c.mtu,
                    timeout: PERFTEST_TIMEOUT,
                    seed,
                },
                port,
            )?;
            let rate = match r.gbps {
                Some(g) => format!("{g:.2} Gb/s simulated, "),
                None => String::new(),
            };
            Ok(format!(
                "{} B checked, {rate}{:.1} s wall",
                r.bytes_checked,
                r.wall.as_secs_f64()
            ))
        }
    }
}

/// Two free TCP ports on loopback.
fn free_ports() -> Result<(u16, u16)> {
    let a = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| err(format!("port: {e}")))?;
    let b = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| err(format!("port: {e}")))?;
    let port = |l: &std::net::TcpListener| l.local_addr().map(|a| a.port());
    Ok((
        port(&a).map_err(|e| err(e.to_string()))?,
        port(&b).map_err(|e| err(e.to_string()))?,
    ))
}

/// `tests/interop/check_pcap.py` on the two pcaps of a case.
pub fn check_pcaps(pcaps: &[PathBuf; 2]) -> Result<WireCheck> {
    let root = workspace();
    let py = super::guest::python();
    let out = Command::new(&py)
        .arg(root.join("tests/interop/check_pcap.py"))
        .args(pcaps)
        .output()
        .map_err(|e| err(format!("{}: {e}", py.display())))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        return Err(err(format!(
            "{}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    // Last line: "frames TX RX retransmitted TX RX".
    let last = text.lines().last().unwrap_or_default();
    let n: Vec<u64> = last
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    if n.len() != 4 {
        return Err(err(format!("check_pcap.py said {text:?}")));
    }
    let tx = super::wire::packets(&pcaps[0])?;
    let rx = super::wire::packets(&pcaps[1])?;
    // ferroce answering the guest's requests, and the guest ferroce's.
    let answers = [
        super::wire::answer_times(&rx, &tx),
        super::wire::answer_times(&tx, &rx),
    ];
    Ok(WireCheck {
        frames: [n[0], n[1]],
        retransmitted: [n[2], n[3]],
        slowest_answer_ns: [answers[0].0, answers[1].0],
        unanswered: [answers[0].1 as u64, answers[1].1 as u64],
    })
}

/// The results table (Markdown).
pub fn table(outcomes: &[Outcome]) -> String {
    let mut s = String::from(
        "| tool | ferroce as | size | MTU | result | frames tx/rx | retransmitted tx/rx | slowest answer tx/rx (us) | rate | pcap |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let c = &o.case;
        let (res, rate) = match &o.result {
            Ok(r) => ("ok".to_string(), r.clone()),
            Err(e) => (
                format!("FAILED: {}", e.lines().next().unwrap_or_default()),
                String::new(),
            ),
        };
        let (frames, retx, answer) = match &o.wire {
            Some(w) => (
                format!("{}/{}", w.frames[0], w.frames[1]),
                format!("{}/{}", w.retransmitted[0], w.retransmitted[1]),
                format!(
                    "{:.1}/{:.1}",
                    w.slowest_answer_ns[0] as f64 / 1000.0,
                    w.slowest_answer_ns[1] as f64 / 1000.0
                ),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.tool.name(),
            c.role,
            c.size,
            c.mtu,
            res,
            frames,
            retx,
            answer,
            rate,
            o.pcap
                .file_name()
                .map(|f| f.to_string_lossy())
                .unwrap_or_default()
        );
    }
    s
}
