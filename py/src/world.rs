//! Two simulated hosts for Python (`ferroce.verbs.World`): each a `ferroce_nic_64` under
//! Verilator with its root complex and the Rust driver, joined by a link each way; its hosts
//! are `world.a` and `world.b` (`host.rs`).

use crate::verbs::{drv, err, sim, Qp};
use ferroce_driver::{QpAttr, QpState};
use ferroce_sim::world::{Host as RsHost, World as RsWorld, WorldConfig};
use ferroce_sim::RandomFaults;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::path::PathBuf;

/// Two hosts with their NICs and drivers, joined by a link each way.
#[pyclass(unsendable, module = "ferroce._native")]
pub struct World {
    pub(crate) w: RsWorld,
}

#[pymethods]
impl World {
    /// Build (cached) and open two NICs. `pcap_dir`: write `a_to_b.pcap` and `b_to_a.pcap`
    /// there. `reorder_seed`: interleave PCIe read completions across tags, and seed
    /// `rq_pause`, random back-pressure on each NIC's memory requests (this share of cycles).
    /// `read_latency_ns`: the root complexes' read latency. `write_gbps`: `(a, b)` memory write
    /// bandwidth of each host in Gb/s (`None`: unlimited), to make a receiver slow.
    /// Link faults on both links, each frame independently: `loss`, `corrupt` (one byte
    /// flipped), `duplicate`, `reorder` (held back 0.5-5 us) with these probabilities, and
    /// `burst`: the probability a frame starts a burst of `burst_len` lost frames (ending
    /// sooner at the first frame `burst_us` or more after the burst's first); drawn from
    /// `seed` (a to b) and `seed + 1` (b to a), counted in `link_stats()`.
    /// `trace`: write a VCD of one NIC (`trace_nic`, "a" or "b") to this file, every signal
    /// named by the design's hierarchy, for `trace_cycles` cycles from cycle `trace_from`
    /// (default: until the world is closed); its models are built with tracing.
    #[new]
    #[pyo3(signature = (pcap_dir = None, reorder_seed = None, rq_pause = 0.0, read_latency_ns = 500,
                        write_gbps = (None, None), *, loss = 0.0, corrupt = 0.0, duplicate = 0.0,
                        reorder = 0.0, burst = 0.0, burst_len = 20, burst_us = 100,
                        seed = 1, trace = None, trace_nic = "a", trace_from = 0,
                        trace_cycles = u64::MAX))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        pcap_dir: Option<PathBuf>,
        reorder_seed: Option<u64>,
        rq_pause: f64,
        read_latency_ns: u64,
        write_gbps: (Option<f64>, Option<f64>),
        loss: f64,
        corrupt: f64,
        duplicate: f64,
        reorder: f64,
        burst: f64,
        burst_len: u32,
        burst_us: u64,
        seed: u64,
        trace: Option<PathBuf>,
        trace_nic: &str,
        trace_from: u64,
        trace_cycles: u64,
    ) -> PyResult<Self> {
        let host_b = match trace_nic {
            "a" => false,
            "b" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "trace_nic {other:?}: the hosts are \"a\" and \"b\""
                )))
            }
        };
        let mut cfg = WorldConfig {
            reorder_seed,
            rq_pause,
            write_gbps: [write_gbps.0, write_gbps.1],
            faults: RandomFaults {
                loss,
                corrupt,
                duplicate,
                reorder,
                burst,
                burst_len,
                burst_ps: burst_us.saturating_mul(1_000_000),
                seed,
            },
            trace: trace.is_some(),
            ..WorldConfig::default()
        };
        cfg.pcie.read_latency_ps = read_latency_ns * 1000;
        let w = RsWorld::open(&cfg).map_err(err)?;
        if let Some(path) = trace {
            let host = if host_b { &w.b } else { &w.a };
            host.wave(&path, trace_from, trace_cycles).map_err(err)?;
        }
        if let Some(dir) = pcap_dir {
            std::fs::create_dir_all(&dir).map_err(err)?;
            w.ab.tap(&dir.join("a_to_b.pcap")).map_err(err)?;
            w.ba.tap(&dir.join("b_to_a.pcap")).map_err(err)?;
        }
        Ok(World { w })
    }

    /// Host a.
    #[getter]
    fn a(slf: Bound<'_, Self>) -> Host {
        Host {
            world: slf.unbind(),
            side: 0,
        }
    }

    /// Host b.
    #[getter]
    fn b(slf: Bound<'_, Self>) -> Host {
        Host {
            world: slf.unbind(),
            side: 1,
        }
    }

    /// A connected RC queue pair `(qp_a, qp_b)` in RTS: path MTU `pmtu`, first PSNs
    /// `psn_ab` (a to b) and `psn_ba`, send queues of `depth` entries; both QPs with the
    /// retry attributes, READ limit (`max_rd_atomic`, 1 up to what the NIC was built with: 16 in the 10g NIC) and access granted to the peer
    /// (`qp_access_flags`, the `verbs.ACCESS_REMOTE_*` bits) given (`None`: the driver's
    /// defaults, as `modify_qp`'s).
    #[pyo3(signature = (pmtu = 1024, psn_ab = 0, psn_ba = 0, depth = 64, *, timeout = None,
        retry_cnt = None, rnr_retry = None, max_rd_atomic = None, qp_access_flags = None))]
    #[allow(clippy::too_many_arguments)]
    fn connect(
        &mut self,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        depth: u32,
        timeout: Option<u8>,
        retry_cnt: Option<u8>,
        rnr_retry: Option<u8>,
        max_rd_atomic: Option<u8>,
        qp_access_flags: Option<u32>,
    ) -> PyResult<(Qp, Qp)> {
        self.w.retry = ferroce_sim::world::RetryAttrs {
            timeout,
            retry_cnt,
            rnr_retry,
            max_rd_atomic,
        };
        let (mut a, mut b) = self.w.connect(pmtu, psn_ab, psn_ba, depth).map_err(sim)?;
        if let Some(flags) = qp_access_flags {
            // Before anything is posted: RTS -> RTS with the QP's access flags.
            let attr = QpAttr {
                access: Some(flags),
                ..QpAttr::default()
            };
            for (h, q) in [(&mut self.w.a, &mut a), (&mut self.w.b, &mut b)] {
                h.dev.modify_qp(q, QpState::Rts, attr).map_err(drv)?;
            }
        }
        Ok((Qp { qp: a }, Qp { qp: b }))
    }

    /// Run both NICs and the links for `cycles` clock cycles.
    fn run(&self, cycles: u64) -> PyResult<()> {
        self.w.run(cycles).map_err(err)
    }

    /// Clock cycles so far (both NICs are at the same one).
    #[getter]
    fn cycle(&self) -> u64 {
        self.w.cycle()
    }

    /// The clock period in picoseconds.
    #[getter]
    fn period_ps(&self) -> u64 {
        self.w.a.sim.borrow().tb.period_ps()
    }

    /// Frames each link has carried: `(a_to_b, b_to_a)`.
    fn frames(&self) -> (u64, u64) {
        (self.w.ab.stats().frames, self.w.ba.stats().frames)
    }

    /// What each link did, `{"a_to_b": {...}, "b_to_a": {...}}`: frames, bytes, and the
    /// faults: dropped (bursts included), burst_dropped, corrupted, duplicated, reordered,
    /// delayed, phy_errors.
    fn link_stats(&self) -> HashMap<&'static str, HashMap<&'static str, u64>> {
        let one = |s: ferroce_sim::LinkStats| {
            HashMap::from([
                ("frames", s.frames),
                ("bytes", s.bytes),
                ("dropped", s.dropped),
                ("burst_dropped", s.burst_dropped),
                ("corrupted", s.corrupted),
                ("duplicated", s.duplicated),
                ("reordered", s.reordered),
                ("delayed", s.delayed),
                ("phy_errors", s.phy_errors),
            ])
        };
        HashMap::from([
            ("a_to_b", one(self.w.ab.stats())),
            ("b_to_a", one(self.w.ba.stats())),
        ])
    }
}

/// One host of a `World`: its driver's verbs and its host memory.
#[pyclass(unsendable, module = "ferroce._native")]
pub struct Host {
    pub(crate) world: Py<World>,
    pub(crate) side: u8,
}

impl Host {
    pub(crate) fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RsHost) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut w = self.world.borrow_mut(py);
        let h = if self.side == 0 {
            &mut w.w.a
        } else {
            &mut w.w.b
        };
        f(h)
    }
}
