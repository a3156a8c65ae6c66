//! `ferroce._native`: ferroce's Verilator harness for Python.
//!
//! The Python package `ferroce` (in `python/ferroce`) wraps these classes in a cocotb-style
//! API: `dut.s_axis_tvalid.value = 1`, `await RisingEdge(dut.clk)`, `AxisSource`/`AxisSink`.
//! Everything that runs every cycle (the clock, the AXI-stream models) stays in Rust.
//!
//! `World` (module `verbs`) is the two-host system with the Rust driver's verbs, which the
//! package re-exports as `ferroce.verbs`.

mod host;
mod verbs;
mod world;

use ferroce_sim::designs::open_tb;
use ferroce_sim::{
    AxisFrame, AxisSink as RsSink, AxisSource as RsSource, BuildOptions, Direction, PauseGenerator,
    Port, Tb,
};
use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt};
use std::cell::RefCell;
use std::rc::Rc;

fn err(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// A design under test: the Verilator model of one emitted design, with its clock.
#[pyclass(unsendable, module = "ferroce._native")]
struct Dut {
    tb: Tb,
    name: String,
}

impl Dut {
    fn port(&self, name: &str) -> PyResult<Port> {
        self.tb
            .model_ref()
            .port(name)
            .map_err(|_| PyAttributeError::new_err(format!("{}: no port {name:?}", self.name)))
    }
}

#[pymethods]
impl Dut {
    /// Emit, build (cached) and load design `design`, run its reset; `trace` writes a VCD.
    #[new]
    #[pyo3(signature = (design, trace = None))]
    fn new(design: &str, trace: Option<std::path::PathBuf>) -> PyResult<Self> {
        let opts = BuildOptions {
            trace: trace.is_some(),
            ..BuildOptions::default()
        };
        let mut tb = open_tb(design, &opts).map_err(err)?;
        if let Some(path) = trace {
            tb.model().trace_to(&path).map_err(err)?;
        }
        Ok(Dut {
            tb,
            name: design.to_string(),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Rising edges so far.
    #[getter]
    fn cycle(&self) -> u64 {
        self.tb.cycle()
    }

    /// Clock period in picoseconds.
    #[getter]
    fn period_ps(&self) -> u64 {
        self.tb.period_ps()
    }

    /// Simulated time in picoseconds.
    #[getter]
    fn time_ps(&self) -> u64 {
        self.tb.time_ps()
    }

    /// `(name, width, is_input)` of every port.
    fn ports(&self) -> Vec<(String, usize, bool)> {
        self.tb
            .model_ref()
            .ports()
            .map(|(n, w, d)| (n.to_string(), w, d == Direction::Input))
            .collect()
    }

    fn width(&self, port: &str) -> PyResult<usize> {
        Ok(self.port(port)?.width)
    }

    /// A port's value as a Python int, any width.
    fn get(&self, py: Python<'_>, port: &str) -> PyResult<PyObject> {
        let p = self.port(port)?;
        let m = self.tb.model_ref();
        if p.width <= 64 {
            return Ok(m.get(p).into_pyobject(py)?.into_any().unbind());
        }
        let bytes = PyBytes::new(py, &m.get_bytes(p));
        Ok(py
            .get_type::<PyInt>()
            .call_method1("from_bytes", (bytes, "little"))?
            .unbind())
    }

    /// Drive an input port with a non-negative Python int that fits its width.
    fn set(&mut self, port: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let p = self.port(port)?;
        if p.dir != Direction::Input {
            return Err(PyValueError::new_err(format!("{port} is an output")));
        }
        let nbytes = p.width.div_ceil(8);
        let bytes: Vec<u8> = value
            .call_method1("to_bytes", (nbytes, "little"))
            .map_err(|_| {
                PyValueError::new_err(format!(
                    "{port}: {value} is not a non-negative int of at most {} bits",
                    p.width
                ))
            })?
            .extract()?;
        let top_bits = p.width % 8;
        if top_bits != 0 && bytes[nbytes - 1] >> top_bits != 0 {
            return Err(PyValueError::new_err(format!(
                "{port}: {value} does not fit in {} bits",
                p.width
            )));
        }
        self.tb.model().set_bytes(p, &bytes).map_err(err)
    }

    /// One rising edge: components sample, the clock rises, components drive the next cycle.
    fn rising_edge(&mut self) -> PyResult<()> {
        self.tb.rising_edge().map_err(err)
    }

    /// `n` rising edges without returning to Python in between.
    fn clock_cycles(&mut self, n: u64) -> PyResult<()> {
        self.tb.clock_cycles(n).map_err(err)
    }

    /// An AXI-stream source on `<prefix>_t*` (cocotbext-axi names).
    fn axis_source(&mut self, prefix: &str) -> PyResult<AxisSource> {
        Ok(AxisSource(
            RsSource::new(&mut self.tb, prefix).map_err(err)?,
        ))
    }

    /// An AXI-stream sink that drives `<prefix>_tready` (with back-pressure if paused).
    fn axis_sink(&mut self, prefix: &str) -> PyResult<AxisSink> {
        Ok(AxisSink(RsSink::new(&mut self.tb, prefix).map_err(err)?))
    }

    /// A passive monitor of `<prefix>_t*` (no ready; tap outputs without `tready`).
    fn axis_monitor(&mut self, prefix: &str) -> PyResult<AxisSink> {
        Ok(AxisSink(
            RsSink::monitor(&mut self.tb, prefix).map_err(err)?,
        ))
    }
}

/// Sends frames on an AXI-stream, one beat per cycle unless paused.
#[pyclass(unsendable, module = "ferroce._native")]
struct AxisSource(Rc<RefCell<RsSource>>);

#[pymethods]
impl AxisSource {
    /// Queue a frame (it goes out during the coming cycles).
    #[pyo3(signature = (data, user = 0))]
    fn send(&self, data: Vec<u8>, user: u64) {
        self.0.borrow_mut().send(AxisFrame { data, user });
    }

    /// Idle cycles: with probability `p` per cycle, drawn from `seed`.
    fn set_pause(&self, seed: u64, p: f64) {
        self.0
            .borrow_mut()
            .set_pause_generator(PauseGenerator::random(seed, p));
    }

    /// Back-pressure, for a source whose `tready` is a model input (a tap).
    fn set_backpressure(&self, seed: u64, p: f64) {
        self.0
            .borrow_mut()
            .set_backpressure_generator(PauseGenerator::random(seed, p));
    }

    /// Nothing queued and nothing in flight.
    fn idle(&self) -> bool {
        self.0.borrow().idle()
    }

    #[getter]
    fn frames_sent(&self) -> u64 {
        self.0.borrow().frames_sent()
    }
}

/// Receives (or monitors) frames on an AXI-stream.
#[pyclass(unsendable, module = "ferroce._native")]
struct AxisSink(Rc<RefCell<RsSink>>);

#[pymethods]
impl AxisSink {
    /// The oldest frame received, as `(data, user)`, or None.
    fn recv<'py>(&self, py: Python<'py>) -> Option<(Bound<'py, PyBytes>, u64)> {
        self.0
            .borrow_mut()
            .recv()
            .map(|f| (PyBytes::new(py, &f.data), f.user))
    }

    /// Frames waiting in `recv`.
    fn count(&self) -> usize {
        self.0.borrow().count()
    }

    /// Back-pressure: `tready` low with probability `p` per cycle.
    fn set_pause(&self, seed: u64, p: f64) {
        self.0
            .borrow_mut()
            .set_pause_generator(PauseGenerator::random(seed, p));
    }

    /// Breaches of the stream contract seen so far (valid dropped, data changed while stalled).
    fn violations(&self) -> Vec<String> {
        self.0.borrow().violations().to_vec()
    }
}

/// The `spec` reference ICRC of a frame (Ethernet first), or ValueError naming why there is none.
#[pyfunction]
fn spec_icrc(frame: &[u8]) -> PyResult<u32> {
    ferroce_spec::icrc::icrc(frame).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `{name: bit}` of the status flags in `m_icrc_tuser`.
#[pyfunction]
fn icrc_flags() -> Vec<(&'static str, u8)> {
    ferroce_spec::icrc::flags::ALL
        .iter()
        .map(|&(bit, name, _)| (name, bit))
        .collect()
}

/// `(code, name, extended header bytes, carries payload)` of every BTH opcode (spec's table).
#[pyfunction]
fn opcodes() -> Vec<(u8, &'static str, usize, bool)> {
    ferroce_spec::opcodes::OPCODES
        .iter()
        .map(|o| (o.code, o.name, o.ext_len(), o.payload))
        .collect()
}

/// A 60-byte 802.1Qbb PFC frame from `src` (spec's builder): `times[p]` where bit p of
/// `enable` is set.
#[pyfunction]
fn pfc_frame<'py>(
    py: Python<'py>,
    src: [u8; 6],
    enable: u8,
    times: [u16; 8],
) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &ferroce_spec::mac_ctrl::pfc_frame(src, enable, times))
}

/// A 60-byte 802.3x PAUSE frame from `src` (spec's builder).
#[pyfunction]
fn pause_frame<'py>(py: Python<'py>, src: [u8; 6], time: u16) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &ferroce_spec::mac_ctrl::pause_frame(src, time))
}

/// spec's receive rule for MAC control: `("data",)`, `("pause", time)`,
/// `("pfc", enable, times)` or `("malformed", reason)`.
#[pyfunction]
fn parse_mac_ctrl<'py>(py: Python<'py>, frame: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    use ferroce_spec::mac_ctrl::{parse, MacCtrl};
    let t = match parse(frame) {
        MacCtrl::NotCtrl => ("data",).into_pyobject(py)?.into_any(),
        MacCtrl::Pause { time } => ("pause", time).into_pyobject(py)?.into_any(),
        MacCtrl::Pfc { enable, times } => ("pfc", enable, times).into_pyobject(py)?.into_any(),
        MacCtrl::Malformed(m) => ("malformed", format!("{m:?}"))
            .into_pyobject(py)?
            .into_any(),
    };
    Ok(t)
}

/// Names of every design `Dut` can open.
#[pyfunction]
fn designs() -> Vec<&'static str> {
    ferroce_sim::designs::names()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Dut>()?;
    m.add_class::<AxisSource>()?;
    m.add_class::<AxisSink>()?;
    m.add_function(wrap_pyfunction!(spec_icrc, m)?)?;
    m.add_function(wrap_pyfunction!(icrc_flags, m)?)?;
    m.add_function(wrap_pyfunction!(designs, m)?)?;
    m.add_function(wrap_pyfunction!(opcodes, m)?)?;
    m.add_function(wrap_pyfunction!(pfc_frame, m)?)?;
    m.add_function(wrap_pyfunction!(pause_frame, m)?)?;
    m.add_function(wrap_pyfunction!(parse_mac_ctrl, m)?)?;
    m.add_class::<world::World>()?;
    m.add_class::<world::Host>()?;
    m.add_class::<verbs::Qp>()?;
    m.add_class::<verbs::Mr>()?;
    m.add_class::<verbs::Wc>()?;
    m.add_function(wrap_pyfunction!(verbs::wc_status, m)?)?;
    m.add_function(wrap_pyfunction!(verbs::access_flags, m)?)?;
    m.add_function(wrap_pyfunction!(verbs::wr_opcodes, m)?)?;
    m.add_function(wrap_pyfunction!(verbs::wc_opcodes, m)?)?;
    Ok(())
}
