//! The verbs of one host of a `World` (`world.rs`) for Python: memory regions, queue pairs and
//! their state changes, posting work, completions; its host memory, counters and PFC.

use crate::verbs::{drv, err, Mr, Qp, Wc};
use crate::world::Host;
use ferroce_driver::{access, DmaMemory, QpAttr, QpState, RecvWr, SendWr, Sge, Vlan, WrOpcode};
use ferroce_sim::world::step_until;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn state(name: &str) -> PyResult<QpState> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "RESET" => QpState::Reset,
        "INIT" => QpState::Init,
        "RTR" => QpState::Rtr,
        "RTS" => QpState::Rts,
        "ERR" => QpState::Err,
        _ => return Err(PyValueError::new_err(format!("no QP state {name:?}"))),
    })
}

#[pymethods]
impl Host {
    /// This host's MAC address.
    #[getter]
    fn mac(&self, py: Python<'_>) -> PyResult<[u8; 6]> {
        self.with(py, |h| Ok(h.mac))
    }

    /// This host's IPv4 address.
    #[getter]
    fn ip(&self, py: Python<'_>) -> PyResult<[u8; 4]> {
        self.with(py, |h| Ok(h.ip))
    }

    /// Allocate `length` zeroed bytes of DMA-able host memory; returns the bus address.
    #[pyo3(signature = (length, align = 4096))]
    fn alloc(&self, py: Python<'_>, length: usize, align: u64) -> PyResult<u64> {
        self.with(py, |h| {
            Ok(h.dev.mem.alloc(length, align).map_err(drv)?.addr)
        })
    }

    /// Write `data` into host memory at `addr`.
    fn write(&self, py: Python<'_>, addr: u64, data: &[u8]) -> PyResult<()> {
        self.with(py, |h| h.dev.mem.write(addr, data).map_err(drv))
    }

    /// Read `length` bytes of host memory at `addr`.
    fn read<'py>(
        &self,
        py: Python<'py>,
        addr: u64,
        length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut out = vec![0u8; length];
        self.with(py, |h| h.dev.mem.read(addr, &mut out).map_err(drv))?;
        Ok(PyBytes::new(py, &out))
    }

    /// Register `[addr, addr + length)` in this host's protection domain (`ibv_reg_mr`) with
    /// `access` rights (`verbs.ACCESS_*` bits; default LOCAL_WRITE | REMOTE_WRITE). The older
    /// keyword `remote_write=False` still means LOCAL_WRITE alone; giving both is an error.
    #[pyo3(signature = (addr, length, access = None, *, remote_write = None))]
    fn reg_mr(
        &self,
        py: Python<'_>,
        addr: u64,
        length: u64,
        access: Option<u32>,
        remote_write: Option<bool>,
    ) -> PyResult<Mr> {
        let acc = match (access, remote_write) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "reg_mr: give access or remote_write, not both",
                ))
            }
            (Some(a), None) => a,
            (None, Some(false)) => access::LOCAL_WRITE,
            (None, _) => access::LOCAL_WRITE | access::REMOTE_WRITE,
        };
        self.with(py, |h| {
            let mr = h.dev.reg_mr(&h.pd, addr, length, acc).map_err(drv)?;
            Ok(Mr { mr })
        })
    }

    /// Deregister a region (its keys stop working at once).
    fn dereg_mr(&self, py: Python<'_>, mr: &Mr) -> PyResult<()> {
        self.with(py, |h| h.dev.dereg_mr(&mr.mr).map_err(drv))
    }

    /// A new RC queue pair in RESET with a send queue of `depth` entries, on this host's CQ.
    #[pyo3(signature = (depth = 64))]
    fn create_qp(&self, py: Python<'_>, depth: u32) -> PyResult<Qp> {
        self.with(py, |h| {
            let qp = h.dev.create_qp(&h.pd, &h.cq, depth).map_err(drv)?;
            Ok(Qp { qp })
        })
    }

    /// Move `qp` to `state` ("INIT", "RTR", "RTS", "ERR", "RESET") with the attributes that
    /// step needs (`ibv_modify_qp`); `remote_mac`/`remote_ip` as 6 and 4 bytes; `vlan` as
    /// `(pcp, vid)`: the QP's frames go out 802.1Q-tagged on that priority. Reliability, as
    /// `ibv_qp_attr`: `timeout` (0..=31, 4.096 us x 2^n), `retry_cnt` and `rnr_retry` (0..=7)
    /// on RTR -> RTS; `min_rnr_timer` (0..=31, the RNR NAK's timer code) on INIT -> RTR or
    /// RTS -> RTS; `max_rd_atomic` (1 up to the NIC's `MAX_RD_ATOMIC`, 8 in the 10g NIC) on RTR -> RTS; `qp_access_flags` (the
    /// `verbs.ACCESS_REMOTE_*` bits this QP lets a peer use, default all three) on any move
    /// but to RESET.
    #[pyo3(signature = (qp, state, path_mtu = None, dest_qp_num = None, rq_psn = None,
                        sq_psn = None, remote_mac = None, remote_ip = None, vlan = None,
                        timeout = None, retry_cnt = None, rnr_retry = None,
                        min_rnr_timer = None, max_rd_atomic = None, qp_access_flags = None))]
    #[allow(clippy::too_many_arguments)]
    fn modify_qp(
        &self,
        py: Python<'_>,
        qp: &mut Qp,
        state: &str,
        path_mtu: Option<u32>,
        dest_qp_num: Option<u32>,
        rq_psn: Option<u32>,
        sq_psn: Option<u32>,
        remote_mac: Option<[u8; 6]>,
        remote_ip: Option<[u8; 4]>,
        vlan: Option<(u8, u16)>,
        timeout: Option<u8>,
        retry_cnt: Option<u8>,
        rnr_retry: Option<u8>,
        min_rnr_timer: Option<u8>,
        max_rd_atomic: Option<u8>,
        qp_access_flags: Option<u32>,
    ) -> PyResult<()> {
        let to = self::state(state)?;
        let attr = QpAttr {
            path_mtu,
            dest_qpn: dest_qp_num,
            rq_psn,
            sq_psn,
            remote_mac,
            remote_ipv4: remote_ip,
            vlan: vlan.map(|(pcp, vid)| Vlan { pcp, vid }),
            timeout,
            retry_cnt,
            rnr_retry,
            min_rnr_timer,
            max_rd_atomic,
            access: qp_access_flags,
        };
        self.with(py, |h| h.dev.modify_qp(&mut qp.qp, to, attr).map_err(drv))
    }

    /// Post a list of send work requests on `qp` with one doorbell (`ibv_post_send`), in
    /// pyverbs' shape: each a dict with `wr_id`, `opcode` (a `verbs.WR_*` code), `sg_list`
    /// (a list of `(addr, length, lkey)`, at most 4), and as the opcode needs `remote_addr`,
    /// `rkey`, `imm_data` (the ImmDt as a big-endian number), `compare_add`, `swap`;
    /// `signaled` (default True), `solicited` (default False), `fence` (default False: wait
    /// for this QP's earlier READs and atomics to complete). All or nothing:
    /// a request the driver refuses (a key that does not cover its buffer, too many SGEs, an
    /// opcode the NIC does not run yet) raises `ValueError` and posts none of the list.
    fn post_send(&self, py: Python<'_>, qp: &mut Qp, wrs: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let mut list = Vec::with_capacity(wrs.len());
        for w in &wrs {
            let opt = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
                match w.get_item(k) {
                    Ok(v) if !v.is_none() => Ok(Some(v)),
                    Ok(_) => Ok(None),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => Ok(None),
                    Err(e) => Err(e),
                }
            };
            let code: u32 = w.get_item("opcode")?.extract()?;
            let opcode = WrOpcode::from_code(code).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "opcode {code} ({}) is not one the NIC runs yet",
                    ferroce_spec::queues::name_of(ferroce_spec::queues::WR_OPCODES, code)
                ))
            })?;
            let sg_list = match opt("sg_list")? {
                Some(v) => v
                    .extract::<Vec<(u64, u32, u32)>>()?
                    .into_iter()
                    .map(|(addr, length, lkey)| Sge { addr, length, lkey })
                    .collect(),
                None => Vec::new(),
            };
            list.push(SendWr {
                wr_id: w.get_item("wr_id")?.extract()?,
                opcode,
                sg_list,
                remote_addr: opt("remote_addr")?.map_or(Ok(0), |v| v.extract())?,
                rkey: opt("rkey")?.map_or(Ok(0), |v| v.extract())?,
                imm_data: opt("imm_data")?.map_or(Ok(0), |v| v.extract())?,
                compare_add: opt("compare_add")?.map_or(Ok(0), |v| v.extract())?,
                swap: opt("swap")?.map_or(Ok(0), |v| v.extract())?,
                signaled: opt("signaled")?.map_or(Ok(true), |v| v.extract())?,
                solicited: opt("solicited")?.map_or(Ok(false), |v| v.extract())?,
                fence: opt("fence")?.map_or(Ok(false), |v| v.extract())?,
            });
        }
        self.with(py, |h| h.dev.post_send(&mut qp.qp, &list).map_err(drv))
    }

    /// Post a list of receive work requests on `qp` with one doorbell (`ibv_post_recv`), in
    /// pyverbs' shape: each a dict with `wr_id` and `sg_list` (a list of `(addr, length,
    /// lkey)`, at most 4, each in a region with `ACCESS_LOCAL_WRITE`). All or nothing: a
    /// request the driver refuses raises `ValueError` and posts none of the list. Each SEND
    /// (or WRITE with immediate) that arrives takes the next one, in order, and completes it
    /// on the QP's CQ (`Wc.opcode` `WC_RECV` / `WC_RECV_RDMA_WITH_IMM`, `imm_data`, `src_qp`).
    fn post_recv(&self, py: Python<'_>, qp: &mut Qp, wrs: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let mut list = Vec::with_capacity(wrs.len());
        for w in &wrs {
            let sg_list = w
                .get_item("sg_list")?
                .extract::<Vec<(u64, u32, u32)>>()?
                .into_iter()
                .map(|(addr, length, lkey)| Sge { addr, length, lkey })
                .collect();
            list.push(RecvWr {
                wr_id: w.get_item("wr_id")?.extract()?,
                sg_list,
            });
        }
        self.with(py, |h| h.dev.post_recv(&mut qp.qp, &list).map_err(drv))
    }

    /// RDMA WRITEs of one buffer each, the shorthand `post_send` grew from: each work request
    /// a tuple `(wr_id, local_addr, length, lkey, remote_addr, rkey)` or a dict with those
    /// keys and optionally `signaled` (default True). One doorbell; all or nothing.
    fn post_write(&self, py: Python<'_>, qp: &mut Qp, wrs: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let mut list = Vec::with_capacity(wrs.len());
        for w in &wrs {
            let (wr_id, local_addr, length, lkey, remote_addr, rkey, signaled) =
                if let Ok(t) = w.extract::<(u64, u64, u32, u32, u64, u32)>() {
                    (t.0, t.1, t.2, t.3, t.4, t.5, true)
                } else {
                    let g = |k: &str| w.get_item(k);
                    (
                        g("wr_id")?.extract()?,
                        g("local_addr")?.extract()?,
                        g("length")?.extract()?,
                        g("lkey")?.extract()?,
                        g("remote_addr")?.extract()?,
                        g("rkey")?.extract()?,
                        match w.get_item("signaled") {
                            Ok(v) => v.extract()?,
                            Err(_) => true,
                        },
                    )
                };
            list.push(SendWr {
                wr_id,
                opcode: WrOpcode::RdmaWrite,
                sg_list: vec![Sge {
                    addr: local_addr,
                    length,
                    lkey,
                }],
                remote_addr,
                rkey,
                signaled,
                ..Default::default()
            });
        }
        self.with(py, |h| h.dev.post_send(&mut qp.qp, &list).map_err(drv))
    }

    /// Take up to `max` completions from this host's CQ without advancing time (`ibv_poll_cq`).
    #[pyo3(signature = (max = 16))]
    fn poll_cq(&self, py: Python<'_>, max: usize) -> PyResult<Vec<Wc>> {
        self.with(py, |h| {
            let wcs = h.dev.poll_cq(&mut h.cq, max).map_err(drv)?;
            Ok(wcs.into_iter().map(wc).collect())
        })
    }

    /// Run the simulation until `n` completions have been polled from this host's CQ;
    /// `TimeoutError` after `max_cycles`.
    #[pyo3(signature = (n = 1, max_cycles = 1_000_000))]
    fn wait_cq(&self, py: Python<'_>, n: usize, max_cycles: u64) -> PyResult<Vec<Wc>> {
        let mut got = Vec::new();
        let mut failure = None;
        let mut w = self.world.borrow_mut(py);
        let sim = w.w.a.sim.clone();
        let h = if self.side == 0 {
            &mut w.w.a
        } else {
            &mut w.w.b
        };
        let (dev, cq) = (&mut h.dev, &mut h.cq);
        let r = step_until(&sim, max_cycles, "completions", || {
            match dev.poll_cq(cq, n - got.len()) {
                Ok(wcs) => got.extend(wcs.into_iter().map(wc)),
                Err(e) => failure = Some(e),
            }
            failure.is_some() || got.len() >= n
        });
        if let Some(e) = failure {
            return Err(drv(e));
        }
        r.map_err(|e| {
            pyo3::exceptions::PyTimeoutError::new_err(format!("{e} ({} of {n} seen)", got.len()))
        })?;
        Ok(got)
    }

    /// A counter of this host's NIC by port name (`rx_fcs_err`, `resp_bad_rkey`, ...).
    fn counter(&self, py: Python<'_>, name: &str) -> PyResult<u64> {
        self.with(py, |h| h.counter(name).map_err(err))
    }

    /// Priority flow control of this host's port (the driver's `set_pfc`): `enable` a bit per
    /// priority, pause time `quanta`, receive-buffer watermarks in bytes.
    #[pyo3(signature = (enable, quanta = 1000, xoff_bytes = 6144, xon_bytes = 5120))]
    fn set_pfc(
        &self,
        py: Python<'_>,
        enable: u8,
        quanta: u16,
        xoff_bytes: u32,
        xon_bytes: u32,
    ) -> PyResult<()> {
        let cfg = ferroce_driver::PfcConfig {
            enable,
            quanta,
            xoff_bytes,
            xon_bytes,
        };
        self.with(py, |h| h.dev.set_pfc(&cfg).map_err(drv))
    }

    /// The MAC's statistics read through BAR0 (the driver's `mac_stats`), as a dict: lists of
    /// eight for the per-priority ones.
    fn mac_stats(
        &self,
        py: Python<'_>,
    ) -> PyResult<std::collections::BTreeMap<&'static str, Vec<u32>>> {
        self.with(py, |h| {
            let s = h.dev.mac_stats().map_err(drv)?;
            let mut out = std::collections::BTreeMap::new();
            out.insert("pfc_rx", s.pfc_rx.to_vec());
            out.insert("xoff_tx", s.xoff_tx.to_vec());
            out.insert("xon_tx", s.xon_tx.to_vec());
            out.insert("paused_cycles", s.paused_cycles.to_vec());
            out.insert("frames_tx", s.frames_tx.to_vec());
            for (k, v) in [
                ("pause_rx", s.pause_rx),
                ("ctrl_bad_dst", s.ctrl_bad_dst),
                ("ctrl_bad_opcode", s.ctrl_bad_opcode),
                ("ctrl_bad_reserved", s.ctrl_bad_reserved),
                ("tx_oversize", s.tx_oversize),
                ("rx_fcs_err", s.rx_fcs_err),
                ("rx_runt", s.rx_runt),
                ("rx_overflow", s.rx_overflow),
                ("rx_code_err", s.rx_code_err),
                ("rx_too_long", s.rx_too_long),
                ("tx_bad_frame", s.tx_bad_frame),
            ] {
                out.insert(k, vec![v]);
            }
            Ok(out)
        })
    }

    /// The RC transport's reliability and isolation statistics read through BAR0 (the
    /// driver's `rc_stats`), as a dict: `retrans`, `timeouts`, `seq_nak_rx`, `seq_nak_tx`,
    /// `rnr_nak_rx`, `rnr_nak_tx`, `dup_rx`, `retry_exc`, `ghost_rx`, `local_fail`,
    /// `pool_wait`, `rsp_refused`, `jobs_full`, `key_refused`.
    fn rc_stats(&self, py: Python<'_>) -> PyResult<std::collections::BTreeMap<&'static str, u32>> {
        self.with(py, |h| {
            let s = h.dev.rc_stats().map_err(drv)?;
            Ok(s.fields().into_iter().collect())
        })
    }

    /// `{name: value}` of the NIC's fault counters that are not zero (clean traffic: `{}`).
    fn faults(&self, py: Python<'_>) -> PyResult<std::collections::BTreeMap<&'static str, u64>> {
        self.with(py, |h| {
            let mut out = std::collections::BTreeMap::new();
            for (c, v) in h.faults().map_err(err)? {
                if v != 0 {
                    out.insert(c, v);
                }
            }
            Ok(out)
        })
    }
}

fn wc(c: ferroce_driver::WorkCompletion) -> Wc {
    let status_name = ferroce_spec::queues::WC_STATUS
        .iter()
        .find(|s| s.value == c.status)
        .map_or("UNKNOWN", |s| s.name);
    Wc {
        wr_id: c.wr_id,
        status: c.status,
        status_name,
        opcode: c.opcode,
        byte_len: c.byte_len,
        qp_num: c.qpn,
        imm_data: c.imm_data,
        src_qp: c.src_qp,
    }
}
