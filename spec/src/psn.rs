//! Packet sequence numbers: 24-bit, compared modulo 2^24 (IBA 9.7.1, 9.7.5.1.1).
//!
//! A PSN `a` is "before" `b` when `b - a`, taken modulo 2^24, lies in `1 .. 2^23`: the window
//! in which a requester may have packets outstanding is half the PSN space.

/// Width of a PSN in bits.
pub const PSN_W: usize = 24;
/// All PSN bits set.
pub const PSN_MASK: u32 = (1 << PSN_W) - 1;
/// Half the PSN space: the largest distance two PSNs can be compared across.
pub const PSN_HALF: u32 = 1 << (PSN_W - 1);

/// `psn + n` modulo 2^24.
pub const fn add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// `a - b` modulo 2^24, read as a signed distance in `-2^23 .. 2^23`.
pub const fn diff(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & PSN_MASK;
    if d >= PSN_HALF {
        d as i32 - (1 << PSN_W)
    } else {
        d as i32
    }
}

/// `a` comes before `b` in sequence order.
pub const fn before(a: u32, b: u32) -> bool {
    diff(a, b) < 0
}

/// How a responder classifies a request PSN against its expected PSN (IBA 9.7.5.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsnCheck {
    /// The expected packet.
    Expected,
    /// Already seen (a retransmission): acknowledge again, do not execute.
    Duplicate,
    /// Ahead of the expected PSN: a packet was lost; NAK with PSN sequence error.
    OutOfSequence,
}

/// Classify `psn` against the responder's expected PSN `epsn`.
pub const fn check(psn: u32, epsn: u32) -> PsnCheck {
    let d = diff(psn, epsn);
    if d == 0 {
        PsnCheck::Expected
    } else if d < 0 {
        PsnCheck::Duplicate
    } else {
        PsnCheck::OutOfSequence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_24_bits() {
        assert_eq!(add(PSN_MASK, 1), 0);
        assert_eq!(add(PSN_MASK - 1, 5), 3);
        assert_eq!(diff(2, PSN_MASK), 3);
        assert_eq!(diff(PSN_MASK, 2), -3);
        assert!(before(PSN_MASK, 0));
        assert!(!before(0, PSN_MASK));
        assert_eq!(diff(PSN_HALF, 0), -(PSN_HALF as i32));
        assert_eq!(check(5, 5), PsnCheck::Expected);
        assert_eq!(check(PSN_MASK, 0), PsnCheck::Duplicate);
        assert_eq!(check(1, PSN_MASK), PsnCheck::OutOfSequence);
    }

    #[test]
    fn diff_inverts_add() {
        for (a, n) in [(0, 0), (PSN_MASK, 7), (123_456, PSN_HALF - 1), (9, 1 << 20)] {
            assert_eq!(diff(add(a, n), a), n as i32);
        }
    }
}
