//! The one stream convention of ferroce's blocks (docs/ARCHITECTURE.md, "Stream convention"),
//! and the elaboration-time constants that blocks working lane by lane share.
//!
//! A stream is AXI-stream: `tdata` with byte lane 0 in bits 7:0 (first on the wire); `tkeep`,
//! one bit per lane, all ones on every beat but the last and contiguous from lane 0 on it (zero
//! lanes is an empty last beat); `tvalid`, `tready`, `tlast`, `tuser`. A beat moves when
//! `tvalid && tready`; a raised `tvalid` holds, with its beat, until the beat moves; `tvalid`
//! never depends combinationally on `tready`. On emitted boundaries a stream entering a block is
//! `s_<name>_t*`, one leaving it `m_<name>_t*`. A tap observes a stream: its `tready` is an
//! input too. A block that sees `tkeep` break the rule says so (a flag in its result), it never
//! guesses.

pub mod skid;

pub use skid::Skid;

use crate::prelude::*;
use crate::util::bits_from_bools;

/// `masks[l]` selects byte lane `l` of a `DW`-bit beat.
pub fn lane_masks<const DW: usize>() -> Vec<Constant<Bits<DW>>> {
    (0..DW / 8)
        .map(|l| {
            let bools: Vec<bool> = (0..DW).map(|b| b / 8 == l).collect();
            Constant::new(bits_from_bools::<DW>(&bools))
        })
        .collect()
}

/// All ones in `N` bits (a full keep, a full data mask).
pub fn ones<const N: usize>() -> Constant<Bits<N>> {
    Constant::new(bits_from_bools::<N>(&vec![true; N]))
}

/// All zeros in `N` bits.
pub fn zeros<const N: usize>() -> Constant<Bits<N>> {
    Constant::new(Bits::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_masks_cover_each_byte_once() {
        let m = lane_masks::<32>();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].val().index(), 0xFF);
        assert_eq!(m[3].val().index(), 0xFF00_0000);
        assert_eq!(ones::<8>().val().index(), 0xFF);
    }
}
