//! Ready/valid streams of named fields instead of `tdata` (commands, doorbells, descriptors):
//! `<p>_<field>` ports beside `<p>_tvalid` and `<p>_tready`. [`RecordSource`] drives records
//! with optional idle cycles between them; [`RecordSink`] takes them with optional
//! back-pressure. Both keep the stream contract and the sink checks the model keeps it.

use crate::model::{Model, Port};
use crate::pause::PauseGenerator;
use crate::tb::{Component, Tb};
use crate::Result;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

fn field_ports(model: &Model, prefix: &str, fields: &[&str]) -> Result<Vec<Port>> {
    fields
        .iter()
        .map(|f| model.port(&format!("{prefix}_{f}")))
        .collect()
}

/// Drives records of field values into the model: up to 64 bits each with [`send`], any
/// width with [`send_bytes`].
///
/// [`send`]: RecordSource::send
/// [`send_bytes`]: RecordSource::send_bytes
pub struct RecordSource {
    fields: Vec<Port>,
    tvalid: Port,
    tready: Port,
    queue: VecDeque<Vec<Vec<u8>>>,
    current: Option<Vec<Vec<u8>>>,
    pause: PauseGenerator,
    fire: bool,
    sent: u64,
}

impl RecordSource {
    pub fn new(tb: &mut Tb, prefix: &str, fields: &[&str]) -> Result<Rc<RefCell<RecordSource>>> {
        let m = tb.model_ref();
        let s = Rc::new(RefCell::new(RecordSource {
            fields: field_ports(m, prefix, fields)?,
            tvalid: m.port(&format!("{prefix}_tvalid"))?,
            tready: m.port(&format!("{prefix}_tready"))?,
            queue: VecDeque::new(),
            current: None,
            pause: PauseGenerator::Never,
            fire: false,
            sent: 0,
        }));
        s.borrow_mut().drive(tb.model())?;
        tb.add(s.clone());
        Ok(s)
    }

    /// Queue a record: one value per field, in the order the fields were named.
    pub fn send(&mut self, values: Vec<u64>) {
        self.queue
            .push_back(values.iter().map(|v| v.to_le_bytes().to_vec()).collect());
    }

    /// Queue a record of fields of any width, each as bytes (byte 0 in bits 7:0).
    pub fn send_bytes(&mut self, values: Vec<Vec<u8>>) {
        self.queue.push_back(values);
    }

    /// Idle cycles between records (cocotbext's `set_pause_generator` on a source).
    pub fn set_pause_generator(&mut self, g: PauseGenerator) {
        self.pause = g;
    }

    /// Nothing queued or presented.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.current.is_none()
    }

    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Component for RecordSource {
    fn sample(&mut self, model: &Model) {
        self.fire =
            self.current.is_some() && model.get(self.tvalid) == 1 && model.get(self.tready) == 1;
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        if self.fire {
            self.current = None;
            self.sent += 1;
        }
        if self.current.is_none() && !self.queue.is_empty() && !self.pause.pause() {
            self.current = self.queue.pop_front();
        }
        match &self.current {
            Some(v) => {
                for (p, x) in self.fields.iter().zip(v) {
                    let bytes = p.width.div_ceil(8);
                    model.set_bytes(*p, &x[..bytes.min(x.len())])?;
                }
                model.set(self.tvalid, 1)?;
            }
            None => model.set(self.tvalid, 0)?,
        }
        Ok(())
    }
}

/// Takes records of field values from the model: up to 64 bits each with [`recv`], any width
/// with [`recv_bytes`].
///
/// [`recv`]: RecordSink::recv
/// [`recv_bytes`]: RecordSink::recv_bytes
pub struct RecordSink {
    fields: Vec<Port>,
    tvalid: Port,
    tready: Port,
    received: VecDeque<Vec<Vec<u8>>>,
    backpressure: PauseGenerator,
    held: Option<Vec<Vec<u8>>>,
    violations: Vec<String>,
}

impl RecordSink {
    pub fn new(tb: &mut Tb, prefix: &str, fields: &[&str]) -> Result<Rc<RefCell<RecordSink>>> {
        let m = tb.model_ref();
        let s = Rc::new(RefCell::new(RecordSink {
            fields: field_ports(m, prefix, fields)?,
            tvalid: m.port(&format!("{prefix}_tvalid"))?,
            tready: m.port(&format!("{prefix}_tready"))?,
            received: VecDeque::new(),
            backpressure: PauseGenerator::Never,
            held: None,
            violations: Vec::new(),
        }));
        s.borrow_mut().drive(tb.model())?;
        tb.add(s.clone());
        Ok(s)
    }

    /// Cycles with `tready` low.
    pub fn set_pause_generator(&mut self, g: PauseGenerator) {
        self.backpressure = g;
    }

    /// The next record received, each field's low 64 bits.
    pub fn recv(&mut self) -> Option<Vec<u64>> {
        self.received.pop_front().map(|r| {
            r.iter()
                .map(|b| {
                    let mut w = [0u8; 8];
                    let n = b.len().min(8);
                    w[..n].copy_from_slice(&b[..n]);
                    u64::from_le_bytes(w)
                })
                .collect()
        })
    }

    /// The next record received, each field as bytes (byte 0 from bits 7:0).
    pub fn recv_bytes(&mut self) -> Option<Vec<Vec<u8>>> {
        self.received.pop_front()
    }

    /// Records received and not yet taken.
    pub fn count(&self) -> usize {
        self.received.len()
    }

    /// Breaches of the stream contract by the model (valid dropped or a field changed
    /// before the record was taken).
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl Component for RecordSink {
    fn sample(&mut self, model: &Model) {
        let valid = model.get(self.tvalid) == 1;
        let values: Vec<Vec<u8>> = self.fields.iter().map(|p| model.get_bytes(*p)).collect();
        if let Some(h) = self.held.take() {
            if !valid || h != values {
                self.violations.push(format!(
                    "record {h:x?} changed or withdrawn before it was taken"
                ));
            }
        }
        if !valid {
            return;
        }
        if model.get(self.tready) == 1 {
            self.received.push_back(values);
        } else {
            self.held = Some(values);
        }
    }

    fn drive(&mut self, model: &mut Model) -> Result<()> {
        model.set(self.tready, u64::from(!self.backpressure.pause()))
    }
}
