//! BAR0's fence for MR table writes (`reg_mr`, `dereg_mr`): the datapath's side of it as a
//! testbench component, and the test that a region write's command ends only after it.

use crate::host_bar0::open_fenced;
use anyhow::{ensure, Result};
use ferroce_driver::access;
use ferroce_sim::host::SimNic;
use ferroce_sim::model::{Model, Port};
use ferroce_sim::Component;
use ferroce_tests::{rng, seed};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

/// The datapath's side of an MR table write's fence: `s_fence_done` once `m_fence_req` has
/// been high for `delay` cycles; the cycles it was high and the fences done, counted.
pub(crate) struct Fence {
    req: Port,
    done: Port,
    delay: u64,
    high: u64,
    pub(crate) fences: u64,
    pub(crate) held: u64,
}

impl Component for Fence {
    fn sample(&mut self, m: &Model) {
        if m.get(self.req) == 1 {
            self.held += 1;
            if self.high >= self.delay {
                self.fences += 1;
                self.high = 0;
            } else {
                self.high += 1;
            }
        }
    }
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        m.set(
            self.done,
            u64::from(self.high >= self.delay && self.high > 0),
        )
    }
}

/// The fence answering every MR table write after `delay` cycles, added to `nic`.
pub(crate) fn add_fence(nic: &Rc<RefCell<SimNic>>, delay: u64) -> Result<Rc<RefCell<Fence>>> {
    let m = nic.borrow().tb.model_ref().port("m_fence_req")?;
    let d = nic.borrow().tb.model_ref().port("s_fence_done")?;
    let f = Rc::new(RefCell::new(Fence {
        req: m,
        done: d,
        delay,
        high: 0,
        fences: 0,
        held: 0,
    }));
    nic.borrow_mut().tb.add(f.clone());
    Ok(f)
}

/// A write of the MR table (`reg_mr`, `dereg_mr`) ends only once the datapath's fence is done
/// (every packet checked against the old entry has its writes out), so the driver's STATUS
/// read, and the call, return only then; a write of another table does not wait.
#[test]
fn a_region_write_ends_only_after_the_datapath_fence() -> Result<()> {
    use ferroce_driver::DmaMemory;
    let s = seed("a_region_write_ends_only_after_the_datapath_fence");
    let delay = rng(s).gen_range(100..400);
    let ((mut dev, nic, _), fence) = open_fenced(s, delay)?;
    let pd = dev.alloc_pd()?;
    let buf = dev.mem.alloc(4096, 4096)?;
    let c0 = nic.borrow().tb.cycle();
    let mr = dev.reg_mr(&pd, buf.addr, 4096, access::REMOTE_WRITE)?;
    let c1 = nic.borrow().tb.cycle();
    ensure!(
        fence.borrow().fences == 1 && c1 - c0 > delay,
        "seed {s}: reg_mr took {} cycles, {} fences (delay {delay})",
        c1 - c0,
        fence.borrow().fences
    );
    dev.dereg_mr(&mr)?;
    let c2 = nic.borrow().tb.cycle();
    ensure!(
        fence.borrow().fences == 2 && c2 - c1 > delay,
        "seed {s}: dereg_mr took {} cycles, {} fences",
        c2 - c1,
        fence.borrow().fences
    );
    dev.create_cq(16)?;
    ensure!(
        fence.borrow().fences == 2 && fence.borrow().held <= 2 * (delay + 1),
        "seed {s}: a CQ write fenced"
    );
    Ok(())
}
