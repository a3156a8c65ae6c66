//! One direction of the two-host world's link ([`crate::world::World`]): a frame link or an
//! XGMII link, with what the tests ask of either (tap, inject, faults, statistics).

use crate::{Fault, Link, LinkConfig, LinkStats, Result, SimError, XgmiiLink};
use std::path::Path;

/// One direction of the world's link, of either kind.
#[derive(Clone)]
pub enum Wire {
    Frames(Link),
    Xgmii(XgmiiLink),
}

impl Wire {
    /// Write every frame to a pcap (nanosecond timestamps of each frame's first byte, no FCS).
    pub fn tap(&self, path: &Path) -> Result<()> {
        match self {
            Wire::Frames(l) => l.tap(path),
            Wire::Xgmii(l) => l.tap(path),
        }
    }

    /// Put `frame` (FCS appended) on the wire at `at_ps`, or at the next gap after it.
    pub fn inject(&self, at_ps: u64, frame: &[u8]) {
        match self {
            Wire::Frames(l) => l.inject(at_ps, frame),
            Wire::Xgmii(l) => l.inject(at_ps, frame),
        }
    }

    /// Frames given to [`Wire::inject`] and not on the wire yet.
    pub fn inject_backlog(&self) -> usize {
        match self {
            Wire::Frames(l) => l.inject_backlog(),
            Wire::Xgmii(l) => l.inject_backlog(),
        }
    }

    pub fn config(&self) -> LinkConfig {
        match self {
            Wire::Frames(l) => l.config(),
            Wire::Xgmii(l) => l.config(),
        }
    }

    pub fn stats(&self) -> LinkStats {
        match self {
            Wire::Frames(l) => l.stats(),
            Wire::Xgmii(l) => l.stats(),
        }
    }

    pub fn idle(&self) -> bool {
        match self {
            Wire::Frames(l) => l.idle(),
            Wire::Xgmii(l) => l.idle(),
        }
    }

    pub fn pcap_error(&self) -> Option<String> {
        match self {
            Wire::Frames(l) => l.pcap_error(),
            Wire::Xgmii(l) => l.pcap_error(),
        }
    }

    /// A frame-level fault hook ([`Link::set_fault_hook`]); an XGMII link takes
    /// [`XgmiiLink::set_fault_hook`] instead.
    pub fn set_fault_hook(
        &self,
        mut hook: impl FnMut(u64, &[u8]) -> Fault + 'static,
    ) -> Result<()> {
        self.set_timed_fault_hook(move |i, _, f| hook(i, f))
    }

    /// A frame-level fault hook that also sees each frame's start on the wire, in ps
    /// ([`Link::set_timed_fault_hook`]).
    pub fn set_timed_fault_hook(
        &self,
        hook: impl FnMut(u64, u64, &[u8]) -> Fault + 'static,
    ) -> Result<()> {
        match self {
            Wire::Frames(l) => {
                l.set_timed_fault_hook(hook);
                Ok(())
            }
            Wire::Xgmii(_) => Err(SimError::Design(
                "frame-level faults need a frame link; use the XGMII link's lane faults".into(),
            )),
        }
    }

    /// The XGMII link, if this is one.
    pub fn xgmii(&self) -> Option<&XgmiiLink> {
        match self {
            Wire::Xgmii(l) => Some(l),
            Wire::Frames(_) => None,
        }
    }
}
