//! Finding a frame's 802.1Q priority on a stream `DW` bits wide, in the beat that carries the
//! tag: the constants a block compares that beat with (`TxQueues` picks a frame's queue by
//! them, `MacRx` its admission). Not a block: kernels cannot call functions, so each block
//! holds these as `Constant`s and does the compare itself.

use crate::prelude::*;
use ferroce_spec::headers::{ETH, ETHERTYPE_VLAN};
use ferroce_spec::mac_ctrl::PRIORITIES;

/// Where the tag is and what it looks like, as beat-wide masks and values.
pub struct TagMatch<const DW: usize> {
    /// Index of the beat with the TPID and the PCP (0 or 1).
    pub beat: u64,
    /// TPID lanes, and 0x8100 in them.
    pub tpid_mask: Constant<Bits<DW>>,
    pub tpid_val: Constant<Bits<DW>>,
    /// The PCP's three bits, and each of the eight values in them.
    pub pcp_mask: Constant<Bits<DW>>,
    pub pcp_val: Vec<Constant<Bits<DW>>>,
}

/// The constants for a stream of `DW` bits (`DW / 8` lanes, first byte in lane 0).
pub fn tag_match<const DW: usize>() -> TagMatch<DW> {
    let kw = DW / 8;
    let tpid_at = ETH.field("ethertype").byte();
    assert!(tpid_at / kw <= 1, "the tag is in the first two beats");
    assert_eq!(tpid_at / kw, (tpid_at + 2) / kw, "TPID and PCP in one beat");
    // A beat-wide constant holding `bytes` from lane `at` on.
    let lane_bits = |at: usize, bytes: &[u8]| -> Constant<Bits<DW>> {
        let mut b = vec![0u8; kw];
        b[at..at + bytes.len()].copy_from_slice(bytes);
        Constant::new(crate::util::bits_from_bools::<DW>(
            &crate::util::bools_from_bytes(&b),
        ))
    };
    TagMatch {
        beat: (tpid_at / kw) as u64,
        tpid_mask: lane_bits(tpid_at % kw, &[0xff, 0xff]),
        tpid_val: lane_bits(tpid_at % kw, &ETHERTYPE_VLAN.to_be_bytes()),
        pcp_mask: lane_bits((tpid_at + 2) % kw, &[0xe0]),
        pcp_val: (0..PRIORITIES as u8)
            .map(|v| lane_bits((tpid_at + 2) % kw, &[v << 5]))
            .collect(),
    }
}
