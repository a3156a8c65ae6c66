//! The simulator backend: [`Bar`] and [`DmaMemory`] over a Verilator model of the NIC and the
//! PCIe root complex model. Simulated time advances while the driver waits on the device (an
//! MMIO read waits for its completion), and whenever the program calls [`SimNic::run`].
//!
//! Two NICs on one link share time: [`SimNic::join`] makes each step the other's model with
//! its own, so while one host waits on its NIC the other NIC and the wire go on.

use crate::parallel::Helper;
use crate::pcie::{PcieConfig, ReadResult, RootComplex};
use crate::Tb;
use ferroce_driver::{Bar, DmaBuf, DmaMemory, DriverError, Result};
use std::cell::RefCell;
use std::rc::{Rc, Weak};

/// Cycles an MMIO read may take before the backend reports a hung device.
pub const MMIO_TIMEOUT_CYCLES: u64 = 100_000;

/// How two joined NICs step ([`SimNic::set_stepping`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stepping {
    /// Their models evaluate at once on two threads while this world is the only one in the
    /// process with a helper thread (a machine with one core: one after the other).
    #[default]
    Auto,
    /// One after the other, on the caller's thread.
    Sequential,
    /// On two threads whenever the machine has two cores, other worlds or not.
    Parallel,
}

/// A NIC model with its host's root complex.
pub struct SimNic {
    pub tb: Tb,
    pub rc: Rc<RefCell<RootComplex>>,
    /// Models stepped with this one (same clock): the other NICs of the world.
    peers: Vec<Weak<RefCell<SimNic>>>,
    /// The thread that evaluates the peer's model while this one evaluates its own (two NICs
    /// joined, a machine with two cores).
    helper: Option<Rc<Helper>>,
    stepping: Stepping,
    /// Cycles stepped with the peer's model evaluated on the helper thread.
    parallel_cycles: u64,
}

fn sim_err(e: crate::SimError) -> DriverError {
    match e {
        crate::SimError::Dma(m) => DriverError::Dma(m),
        other => DriverError::Bar(other.to_string()),
    }
}

impl SimNic {
    /// Attach a root complex to `tb`'s BAR0 streams `s_req` / `m_cpl`, and to its DMA streams
    /// `m_rq` / `s_rc` when the design has them (a whole NIC does; BAR0 alone does not).
    pub fn new(mut tb: Tb, config: PcieConfig) -> Result<Rc<RefCell<SimNic>>> {
        let mut rc = RootComplex::new(config)
            .with_bar(tb.model_ref(), "s_req", "m_cpl")
            .map_err(sim_err)?;
        if tb.model_ref().has_port("m_rq_tvalid") {
            let period = tb.period_ps();
            rc = rc
                .with_dma(tb.model_ref(), "m_rq", "s_rc", period)
                .map_err(sim_err)?;
        }
        let rc = Rc::new(RefCell::new(rc));
        tb.add(rc.clone());
        Ok(Rc::new(RefCell::new(SimNic {
            tb,
            rc,
            peers: Vec::new(),
            helper: None,
            stepping: Stepping::Auto,
            parallel_cycles: 0,
        })))
    }

    /// Make `a` and `b` step together: every cycle one of them runs, the other runs too. Both
    /// must have the same clock period (checked) and be at the same cycle.
    pub fn join(a: &Rc<RefCell<SimNic>>, b: &Rc<RefCell<SimNic>>) -> Result<()> {
        let (pa, pb) = (a.borrow().tb.period_ps(), b.borrow().tb.period_ps());
        if pa != pb {
            return Err(DriverError::Bar(format!(
                "joined NICs need one clock: {pa} ps and {pb} ps"
            )));
        }
        let (ca, cb) = (a.borrow().tb.cycle(), b.borrow().tb.cycle());
        if ca != cb {
            return Err(DriverError::Bar(format!(
                "joined NICs must be at the same cycle: {ca} and {cb}"
            )));
        }
        a.borrow_mut().peers.push(Rc::downgrade(b));
        b.borrow_mut().peers.push(Rc::downgrade(a));
        let helper = Helper::new().map(Rc::new);
        for s in [a, b] {
            let mut s = s.borrow_mut();
            s.helper = if s.peers.len() == 1 {
                helper.clone()
            } else {
                None
            };
        }
        Ok(())
    }

    /// One clock cycle of this model and of its peers. With one peer and a helper thread
    /// (the only one in the process), the two models evaluate at once
    /// ([`Tb::rising_edge_pair`]); the result is the same cycle for cycle either way.
    pub fn step(&mut self) -> Result<()> {
        if let (Some(h), [peer]) = (&self.helper, &self.peers[..]) {
            let together = match self.stepping {
                Stepping::Auto => h.alone(),
                Stepping::Sequential => false,
                Stepping::Parallel => true,
            };
            if let (true, Some(peer)) = (together, peer.upgrade()) {
                let mut peer = peer.borrow_mut();
                self.parallel_cycles += 1;
                return Tb::rising_edge_pair(&mut self.tb, &mut peer.tb, h).map_err(sim_err);
            }
        }
        self.tb.rising_edge().map_err(sim_err)?;
        for p in &self.peers {
            if let Some(p) = p.upgrade() {
                p.borrow_mut().tb.rising_edge().map_err(sim_err)?;
            }
        }
        Ok(())
    }

    /// How this NIC steps its peer when it steps (set it on both NICs of a world:
    /// `World::set_stepping`). Either way every cycle's result is the same.
    pub fn set_stepping(&mut self, stepping: Stepping) {
        self.stepping = stepping;
    }

    /// Cycles this NIC stepped with its peer's model evaluated on the helper thread.
    pub fn parallel_cycles(&self) -> u64 {
        self.parallel_cycles
    }

    /// Run `cycles` clock cycles.
    pub fn run(&mut self, cycles: u64) -> Result<()> {
        for _ in 0..cycles {
            self.step()?;
        }
        Ok(())
    }

    /// Run until `done` holds, failing after `max_cycles` (never hangs); returns the cycles run.
    pub fn run_until(
        &mut self,
        max_cycles: u64,
        what: &str,
        mut done: impl FnMut(&SimNic) -> bool,
    ) -> Result<u64> {
        let start = self.tb.cycle();
        while !done(self) {
            if self.tb.cycle() - start >= max_cycles {
                return Err(sim_err(crate::SimError::Timeout {
                    cycles: max_cycles,
                    what: what.to_string(),
                }));
            }
            self.step()?;
        }
        Ok(self.tb.cycle() - start)
    }

    /// Run until every posted MMIO request has gone to the NIC.
    pub fn flush(&mut self) -> Result<()> {
        let rc = self.rc.clone();
        self.run_until(MMIO_TIMEOUT_CYCLES, "posted MMIO writes", |_| {
            rc.borrow().idle()
        })
        .map(|_| ())
    }
}

/// BAR0 of a simulated NIC.
#[derive(Clone)]
pub struct SimBar(pub Rc<RefCell<SimNic>>);

impl Bar for SimBar {
    fn read32(&mut self, offset: u32) -> Result<u32> {
        let mut nic = self.0.borrow_mut();
        let tag = nic.rc.borrow_mut().read(offset, 1);
        let rc = nic.rc.clone();
        let mut result = ReadResult::Pending;
        nic.run_until(MMIO_TIMEOUT_CYCLES, "an MMIO read completion", |_| {
            result = rc.borrow_mut().result(tag);
            result != ReadResult::Pending
        })?;
        match result {
            ReadResult::Done(v) => Ok(v as u32),
            ReadResult::Failed(status) => Err(DriverError::Bar(format!(
                "read of BAR0 {offset:#x} completed with status {status}"
            ))),
            ReadResult::Pending => Err(DriverError::Bar("read never completed".into())),
        }
    }

    fn write32(&mut self, offset: u32, value: u32) -> Result<()> {
        self.0.borrow().rc.borrow_mut().write32(offset, value);
        Ok(())
    }
}

/// Host memory of a simulated NIC's root complex.
#[derive(Clone)]
pub struct SimMem(pub Rc<RefCell<SimNic>>);

impl DmaMemory for SimMem {
    fn alloc(&mut self, len: usize, align: u64) -> Result<DmaBuf> {
        let b = self
            .0
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .alloc(len, align)
            .map_err(sim_err)?;
        Ok(DmaBuf {
            addr: b.addr,
            len: b.len,
        })
    }

    fn free(&mut self, buf: DmaBuf) -> Result<()> {
        self.0
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .free(buf.addr)
            .map_err(sim_err)
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<()> {
        self.0
            .borrow()
            .rc
            .borrow()
            .mem
            .read(addr, out)
            .map_err(sim_err)
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        self.0
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .write(addr, data)
            .map_err(sim_err)
    }

    fn region_registered(&mut self, addr: u64, len: u64) {
        self.0
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .region_registered(addr, len);
    }

    fn region_deregistered(&mut self, addr: u64, len: u64) {
        self.0
            .borrow()
            .rc
            .borrow_mut()
            .mem
            .region_deregistered(addr, len);
    }
}
