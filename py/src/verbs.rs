//! The driver's verbs objects for Python (`ferroce.verbs`): memory regions, queue pairs, work
//! completions, the tables of flags and opcodes, and how errors become Python exceptions.
//!
//! A `World` (`world.rs`) is two hosts, each with a `ferroce_nic_64` under Verilator, its PCIe root complex
//! and the Rust driver, joined by a 10 Gb/s link each way (`ferroce_sim::world`). Python gets
//! the driver's verbs on each host (`world.a`, `world.b`): host memory, memory regions, queue
//! pairs and their state changes, `post_send` of RDMA WRITEs, `poll_cq`; simulated time runs
//! while the program waits (`wait_cq`, `run`). Driver and simulator errors become
//! `RuntimeError` (refused arguments `ValueError`) with the driver's message.

use ferroce_driver::{DriverError, MemoryRegion, QueuePair};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

pub(crate) fn drv(e: DriverError) -> PyErr {
    match e {
        DriverError::Invalid(_)
        | DriverError::BadKey { .. }
        | DriverError::OutOfRegion { .. }
        | DriverError::QueueFull { .. }
        | DriverError::BadTransition { .. }
        | DriverError::MissingAttr { .. } => PyValueError::new_err(e.to_string()),
        other => err(other),
    }
}

/// A simulator error; the driver's own errors as `drv` has them (a refused attribute is a
/// `ValueError`).
pub(crate) fn sim(e: ferroce_sim::SimError) -> PyErr {
    match e {
        ferroce_sim::SimError::Driver(d) => drv(d),
        other => err(other),
    }
}

/// A registered memory region (`ibv_mr`).
#[pyclass(module = "ferroce._native", frozen)]
#[derive(Clone)]
pub struct Mr {
    pub(crate) mr: MemoryRegion,
}

#[pymethods]
impl Mr {
    #[getter]
    fn addr(&self) -> u64 {
        self.mr.addr
    }
    #[getter]
    fn length(&self) -> u64 {
        self.mr.len
    }
    #[getter]
    fn lkey(&self) -> u32 {
        self.mr.lkey
    }
    #[getter]
    fn rkey(&self) -> u32 {
        self.mr.rkey
    }
    fn __repr__(&self) -> String {
        format!(
            "Mr(addr={:#x}, length={}, lkey={:#x}, rkey={:#x})",
            self.mr.addr, self.mr.len, self.mr.lkey, self.mr.rkey
        )
    }
}

/// An RC queue pair (`ibv_qp`).
#[pyclass(unsendable, module = "ferroce._native")]
pub struct Qp {
    pub(crate) qp: QueuePair,
}

#[pymethods]
impl Qp {
    #[getter]
    fn qp_num(&self) -> u32 {
        self.qp.qpn
    }
    /// "RESET", "INIT", "RTR", "RTS" or "ERR".
    #[getter]
    fn state(&self) -> String {
        format!("{:?}", self.qp.state).to_uppercase()
    }
    fn __repr__(&self) -> String {
        format!("Qp(qp_num={}, state={})", self.qp.qpn, self.state())
    }
}

/// A work completion (`ibv_wc`).
#[pyclass(module = "ferroce._native", frozen, get_all)]
#[derive(Clone)]
pub struct Wc {
    pub(crate) wr_id: u64,
    /// `ferroce.verbs.WC_STATUS` code; 0 is success.
    pub(crate) status: u32,
    pub(crate) status_name: &'static str,
    pub(crate) opcode: u32,
    pub(crate) byte_len: u32,
    pub(crate) qp_num: u32,
    /// Immediate data of a receive completion (the ImmDt as a big-endian number), None
    /// without one.
    pub(crate) imm_data: Option<u32>,
    /// The sending QP of a receive completion.
    pub(crate) src_qp: u32,
}

#[pymethods]
impl Wc {
    fn __repr__(&self) -> String {
        format!(
            "Wc(wr_id={}, status={}, byte_len={}, qp_num={})",
            self.wr_id, self.status_name, self.byte_len, self.qp_num
        )
    }
}

/// `(value, name)` of every memory region access right.
#[pyfunction]
pub fn access_flags() -> Vec<(u32, &'static str)> {
    ferroce_spec::queues::ACCESS_FLAGS
        .iter()
        .map(|s| (s.value, s.name))
        .collect()
}

/// `(code, name, implemented)` of every work request opcode (`WR_*`).
#[pyfunction]
pub fn wr_opcodes() -> Vec<(u32, &'static str, bool)> {
    ferroce_spec::queues::WR_OPCODES
        .iter()
        .map(|s| (s.value, s.name, s.implemented))
        .collect()
}

/// `(code, name, implemented)` of every work completion opcode (`Wc.opcode`).
#[pyfunction]
pub fn wc_opcodes() -> Vec<(u32, &'static str, bool)> {
    ferroce_spec::queues::WC_OPCODES
        .iter()
        .map(|s| (s.value, s.name, s.implemented))
        .collect()
}

/// `(code, name)` of every work completion status.
#[pyfunction]
pub fn wc_status() -> Vec<(u32, &'static str)> {
    ferroce_spec::queues::WC_STATUS
        .iter()
        .map(|s| (s.value, s.name))
        .collect()
}
