//! Tests of the link with neither end on a model, and the helpers that make such links (the
//! bridge's tests use them too).

use super::*;

/// Links with neither end on a model, for tests of what sits at their ends: frames put on
/// the wire ([`Link::put`], or injected) reach the outbox; [`Link::cycle`] is a clock edge.
impl Link {
    pub(crate) fn detached(period_ps: u64) -> Link {
        let tx = Tx {
            lead: Rc::new(std::cell::Cell::new(true)),
            ports: None,
            lanes: 8,
            period_ps,
            now_ps: 0,
            ready: true,
            wire_free_ps: 0,
            frame: Vec::new(),
            start_ps: 0,
        };
        Link::new(LinkConfig::default(), tx, None)
    }

    /// A frame (with FCS) from the sending model, on the wire as soon as it is free.
    pub(crate) fn put(&self, frame: Vec<u8>) {
        let mut s = self.0.borrow_mut();
        let start = s.tx.wire_free_ps.max(s.tx.now_ps);
        s.on_wire(frame, start);
    }

    pub(crate) fn cycle(&self) {
        self.0.borrow_mut().tx_cycle();
    }
}

/// A link with neither end on a model: frames put on it by hand reach the outbox.
fn bare(hook: impl FnMut(u64, &[u8]) -> Fault + 'static) -> Link {
    let l = Link::detached(6400);
    l.set_fault_hook(hook);
    l
}

/// Frames 0..n of 100 bytes (byte 0 is the index), back to back; what arrives, in order.
fn carry(l: &Link, n: u8) -> Vec<u8> {
    for i in 0..n {
        let mut s = l.0.borrow_mut();
        let start = s.tx.wire_free_ps;
        s.on_wire(vec![i; 100], start);
    }
    l.0.borrow_mut().tx.now_ps = u64::MAX;
    l.take_frames().iter().map(|f| f[0]).collect()
}

#[test]
fn duplicates_arrive_twice_reordered_frames_are_overtaken_delayed_ones_are_not() {
    let l = bare(|i, _| match i {
        1 => Fault::Duplicate,
        3 => Fault::Reorder { ps: 250_000 },
        5 => Fault::Drop,
        _ => Fault::Pass,
    });
    // A 100-byte frame and its gap take 96 ns: frame 3, held 250 ns, arrives after 5's
    // slot (dropped) and 4, before 6.
    assert_eq!(carry(&l, 8), vec![0, 1, 1, 2, 4, 3, 6, 7]);
    let s = l.stats();
    assert_eq!((s.duplicated, s.reordered, s.dropped), (1, 1, 1));
    let l = bare(|i, _| match i {
        3 => Fault::Delay { ps: 250_000 },
        _ => Fault::Pass,
    });
    assert_eq!(carry(&l, 6), vec![0, 1, 2, 3, 4, 5]);
}
