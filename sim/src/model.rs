//! A loaded Verilator model: ports by name, evaluation, VCD tracing.
//!
//! Values wider than 64 bits are exchanged as little-endian `u32` words (Verilator's layout)
//! or as bytes, lane 0 in bits 0..8, which is how AXI-stream data is laid out.

use crate::build::ModelLibrary;
use crate::{Result, SimError};
use libloading::{Library, Symbol};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Input,
    Output,
}

/// A handle to a port: cheap to copy, checked once at lookup.
#[derive(Clone, Copy, Debug)]
pub struct Port {
    index: usize,
    pub width: usize,
    pub dir: Direction,
}

struct PortSlot {
    name: String,
    width: usize,
    dir: Direction,
    ptr: *mut c_void,
}

type FnNew = unsafe extern "C" fn() -> *mut c_void;
type FnModel = unsafe extern "C" fn(*mut c_void);
type FnPtr = unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void;
type FnCount = unsafe extern "C" fn() -> c_int;
type FnName = unsafe extern "C" fn(c_int) -> *const c_char;
type FnInt = unsafe extern "C" fn(c_int) -> c_int;
type FnTraceOpen = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type FnTraceDump = unsafe extern "C" fn(*mut c_void, u64);

/// One evaluation of a model, to run on another thread ([`crate::parallel`]). The model must
/// not be used, moved or dropped until the job has run: the caller holds it borrowed.
pub(crate) struct EvalJob {
    f: FnModel,
    handle: *mut c_void,
}

// SAFETY: a Verilator model is plain memory its evaluation touches from whichever thread calls
// it; the job's creator keeps the model untouched until the job has run (see above), and each
// model has its own VerilatedContext.
unsafe impl Send for EvalJob {}

impl EvalJob {
    pub(crate) fn run(self) {
        // SAFETY: handle came from fe_new of the library `f` belongs to and is live (above).
        unsafe { (self.f)(self.handle) }
    }
}

/// A live Verilator model. Not `Send`: one model belongs to one thread (its evaluations may
/// run on another while the owner waits, [`crate::parallel`]).
pub struct Model {
    name: String,
    handle: *mut c_void,
    eval_fn: FnModel,
    eval_clock_fn: FnModel,
    /// An input was driven since the last full evaluation.
    dirty: bool,
    clock_skips_inputs: bool,
    delete_fn: FnModel,
    trace_dump_fn: FnTraceDump,
    trace_open_fn: FnTraceOpen,
    trace_close_fn: FnModel,
    traceable: bool,
    tracing: bool,
    ports: Vec<PortSlot>,
    by_name: BTreeMap<String, usize>,
    // Keeps the code the function pointers point into loaded; dropped last.
    _lib: Library,
}

impl Model {
    /// Load a compiled model and instantiate it.
    pub fn load(lib: &ModelLibrary) -> Result<Model> {
        let load_err = |source| SimError::Load {
            path: lib.path.clone(),
            source,
        };
        // SAFETY: the library is one we generated (build.rs), exporting exactly these symbols
        // with these C signatures; it runs no code on load beyond C++ static initialisers.
        unsafe {
            let library = Library::new(&lib.path).map_err(load_err)?;
            let new: Symbol<FnNew> = library.get(b"fe_new\0").map_err(load_err)?;
            let eval_fn: FnModel = *library.get(b"fe_eval\0").map_err(load_err)?;
            let eval_clock_fn: FnModel = *library.get(b"fe_eval_clock\0").map_err(load_err)?;
            let skips: Symbol<FnCount> =
                library.get(b"fe_clock_skips_inputs\0").map_err(load_err)?;
            let clock_skips_inputs = skips() != 0;
            let delete_fn: FnModel = *library.get(b"fe_delete\0").map_err(load_err)?;
            let port_ptr: Symbol<FnPtr> = library.get(b"fe_port_ptr\0").map_err(load_err)?;
            let count: Symbol<FnCount> = library.get(b"fe_port_count\0").map_err(load_err)?;
            let name: Symbol<FnName> = library.get(b"fe_port_name\0").map_err(load_err)?;
            let width: Symbol<FnInt> = library.get(b"fe_port_width\0").map_err(load_err)?;
            let input: Symbol<FnInt> = library.get(b"fe_port_input\0").map_err(load_err)?;
            let trace_open_fn: FnTraceOpen = *library.get(b"fe_trace_open\0").map_err(load_err)?;
            let trace_dump_fn: FnTraceDump = *library.get(b"fe_trace_dump\0").map_err(load_err)?;
            let trace_close_fn: FnModel = *library.get(b"fe_trace_close\0").map_err(load_err)?;
            let handle = new();
            let mut ports = Vec::new();
            let mut by_name = BTreeMap::new();
            for i in 0..count() {
                let n = CStr::from_ptr(name(i)).to_string_lossy().into_owned();
                by_name.insert(n.clone(), ports.len());
                ports.push(PortSlot {
                    name: n,
                    width: width(i) as usize,
                    dir: if input(i) != 0 {
                        Direction::Input
                    } else {
                        Direction::Output
                    },
                    ptr: port_ptr(handle, i),
                });
            }
            Ok(Model {
                name: lib.top.clone(),
                handle,
                eval_fn,
                eval_clock_fn,
                dirty: true,
                clock_skips_inputs,
                delete_fn,
                trace_dump_fn,
                trace_open_fn,
                trace_close_fn,
                traceable: lib.trace,
                tracing: false,
                ports,
                by_name,
                _lib: library,
            })
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Names, widths and directions of every top-level port.
    pub fn ports(&self) -> impl Iterator<Item = (&str, usize, Direction)> {
        self.ports.iter().map(|p| (p.name.as_str(), p.width, p.dir))
    }

    pub fn has_port(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Look up a port by name.
    pub fn port(&self, name: &str) -> Result<Port> {
        let &index = self.by_name.get(name).ok_or_else(|| SimError::NoSuchPort {
            model: self.name.clone(),
            port: name.to_string(),
            known: self.by_name.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
        let p = &self.ports[index];
        Ok(Port {
            index,
            width: p.width,
            dir: p.dir,
        })
    }

    /// Evaluate the model (settle combinational logic, clock edges on changed clocks).
    pub fn eval(&mut self) {
        self.dirty = false;
        // SAFETY: handle came from fe_new of this library and is live until Drop.
        unsafe { (self.eval_fn)(self.handle) }
    }

    /// Evaluate only if an input was driven since the last evaluation (otherwise every output
    /// already holds what an evaluation would give).
    pub fn settle(&mut self) {
        if let Some(j) = self.settle_job() {
            j.run();
        }
    }

    /// [`Model::settle`]'s evaluation, if it needs one, to run on any thread.
    pub(crate) fn settle_job(&mut self) -> Option<EvalJob> {
        self.dirty.then(|| {
            self.dirty = false;
            EvalJob {
                f: self.eval_fn,
                handle: self.handle,
            }
        })
    }

    /// Whether [`Model::clock`] skips the logic fed only by inputs (the build could patch
    /// Verilator's evaluation function; otherwise it evaluates everything, as `eval` does).
    pub fn clock_skips_inputs(&self) -> bool {
        self.clock_skips_inputs
    }

    /// Drive the clock input `clk` to `level` and evaluate. When no other input was driven
    /// since the last evaluation, the logic fed only by inputs is not evaluated again (it would
    /// compute what it holds: see `build::skip_input_region_on_clock`); the clock edge's
    /// logic runs as in [`Model::eval`].
    pub fn clock(&mut self, clk: Port, level: bool) -> Result<()> {
        self.clock_job(clk, level)?.run();
        Ok(())
    }

    /// [`Model::clock`]: the clock driven now, the evaluation returned to run on any thread.
    pub(crate) fn clock_job(&mut self, clk: Port, level: bool) -> Result<EvalJob> {
        let dirty = self.dirty;
        self.set(clk, u64::from(level))?;
        self.dirty = false;
        Ok(EvalJob {
            f: if dirty {
                self.eval_fn
            } else {
                self.eval_clock_fn
            },
            handle: self.handle,
        })
    }

    /// Start writing a VCD of every signal to `path`. The model must be built with
    /// `BuildOptions { trace: true, .. }`.
    pub fn trace_to(&mut self, path: &Path) -> Result<()> {
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|_| SimError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("path contains a NUL byte"),
        })?;
        // SAFETY: live handle; the C string outlives the call (the model copies the name).
        let rc = unsafe { (self.trace_open_fn)(self.handle, c.as_ptr()) };
        if rc == 2 {
            return Err(SimError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("model was built without trace support"),
            });
        }
        self.tracing = true;
        Ok(())
    }

    /// Whether the model was built with trace support (`BuildOptions { trace: true, .. }`).
    pub fn traceable(&self) -> bool {
        self.traceable
    }

    /// Finish the trace [`Model::trace_to`] started: the file is complete and closed (no-op
    /// when not tracing).
    pub fn trace_stop(&mut self) {
        if self.tracing {
            // SAFETY: live handle.
            unsafe { (self.trace_close_fn)(self.handle) }
            self.tracing = false;
        }
    }

    /// Record the current values in the trace at `time` (no-op when not tracing).
    pub fn trace_dump(&mut self, time: u64) {
        if self.tracing {
            // SAFETY: live handle.
            unsafe { (self.trace_dump_fn)(self.handle, time) }
        }
    }

    fn words(&self, p: Port) -> usize {
        p.width.div_ceil(32)
    }

    /// Read a port of up to 64 bits.
    pub fn get(&self, p: Port) -> u64 {
        let slot = &self.ports[p.index];
        // SAFETY: ptr addresses the model's field for this port, typed by its width exactly as
        // Verilator declares it (CData/SData/IData/QData), or its word array above 64 bits.
        unsafe {
            match slot.width {
                0..=8 => u64::from(*(slot.ptr as *const u8)),
                9..=16 => u64::from(*(slot.ptr as *const u16)),
                17..=32 => u64::from(*(slot.ptr as *const u32)),
                33..=64 => *(slot.ptr as *const u64),
                _ => {
                    let w = slot.ptr as *const u32;
                    u64::from(*w) | (u64::from(*w.add(1)) << 32)
                }
            }
        }
    }

    /// Drive an input port of up to 64 bits; bits above its width must be zero.
    pub fn set(&mut self, p: Port, value: u64) -> Result<()> {
        let slot = &self.ports[p.index];
        if slot.dir != Direction::Input {
            return Err(SimError::DriveOutput(slot.name.clone()));
        }
        if slot.width > 64 || (slot.width < 64 && value >> slot.width != 0) {
            return Err(SimError::Width {
                port: slot.name.clone(),
                width: slot.width,
                what: format!("value {value:#x} does not fit (use set_words for wide ports)"),
            });
        }
        self.dirty = true;
        // SAFETY: as in `get`; the port is an input the model only reads.
        unsafe {
            match slot.width {
                0..=8 => *(slot.ptr as *mut u8) = value as u8,
                9..=16 => *(slot.ptr as *mut u16) = value as u16,
                17..=32 => *(slot.ptr as *mut u32) = value as u32,
                _ => *(slot.ptr as *mut u64) = value,
            }
        }
        Ok(())
    }

    /// Read a port of any width as little-endian 32-bit words.
    pub fn get_words(&self, p: Port) -> Vec<u32> {
        let slot = &self.ports[p.index];
        if slot.width <= 64 {
            let v = self.get(p);
            return (0..self.words(p)).map(|i| (v >> (32 * i)) as u32).collect();
        }
        // SAFETY: a VlWide of words() words.
        unsafe { std::slice::from_raw_parts(slot.ptr as *const u32, self.words(p)).to_vec() }
    }

    /// Read a port of up to 128 bits (TLP headers) as one value.
    pub fn get_u128(&self, p: Port) -> u128 {
        self.get_words(p)
            .iter()
            .take(4)
            .enumerate()
            .fold(0u128, |acc, (i, w)| acc | (u128::from(*w) << (32 * i)))
    }

    /// Drive a port of up to 128 bits (TLP headers) from one value.
    pub fn set_u128(&mut self, p: Port, v: u128) -> Result<()> {
        let words: Vec<u32> = (0..self.words(p).min(4))
            .map(|i| (v >> (32 * i)) as u32)
            .collect();
        self.set_words(p, &words)
    }

    /// Drive a port of any width from little-endian 32-bit words (missing words are zero).
    pub fn set_words(&mut self, p: Port, words: &[u32]) -> Result<()> {
        let n = self.words(p);
        let slot = &self.ports[p.index];
        if slot.dir != Direction::Input {
            return Err(SimError::DriveOutput(slot.name.clone()));
        }
        if words.len() > n {
            return Err(SimError::Width {
                port: slot.name.clone(),
                width: slot.width,
                what: format!("{} words given", words.len()),
            });
        }
        if slot.width <= 64 {
            let v = words
                .iter()
                .enumerate()
                .fold(0u64, |acc, (i, &w)| acc | (u64::from(w) << (32 * i)));
            return self.set(p, v);
        }
        let top_bits = slot.width % 32;
        if top_bits != 0 && words.len() == n && words[n - 1] >> top_bits != 0 {
            return Err(SimError::Width {
                port: slot.name.clone(),
                width: slot.width,
                what: "value has bits set above the port's width".into(),
            });
        }
        self.dirty = true;
        // SAFETY: a VlWide of n words, input only.
        unsafe {
            let w = slot.ptr as *mut u32;
            for i in 0..n {
                *w.add(i) = words.get(i).copied().unwrap_or(0);
            }
        }
        Ok(())
    }

    /// Drive a port from bytes, byte 0 in bits 0..8 (missing bytes are zero).
    pub fn set_bytes(&mut self, p: Port, bytes: &[u8]) -> Result<()> {
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        self.set_words(p, &words)
    }

    /// Read a port as bytes, byte 0 from bits 0..8.
    pub fn get_bytes(&self, p: Port) -> Vec<u8> {
        let mut b: Vec<u8> = self
            .get_words(p)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        b.truncate(p.width.div_ceil(8));
        b
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: handle is live and dropped exactly once; the library is still loaded.
        unsafe { (self.delete_fn)(self.handle) }
    }
}
