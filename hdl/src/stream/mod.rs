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

pub mod fifo;
pub mod gather;
pub mod scatter;
pub mod skid;

pub use fifo::Fifo;
pub use gather::Gather;
pub use scatter::Scatter;
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

/// `keeps[n]` is the `tkeep` of a beat holding `n` bytes (lanes `0..n`), for `n` in `0..=KW`:
/// the table a block decodes a last beat's byte count from, and builds one with.
pub fn keep_of_count<const KW: usize>() -> Vec<Constant<Bits<KW>>> {
    (0..=KW)
        .map(|n| Constant::new(bits_from_bools::<KW>(&thermometer(n, KW))))
        .collect()
}

/// `masks[n]` selects the first `n` byte lanes of a `DW`-bit beat, `n` in `0..=DW/8`.
pub fn data_of_count<const DW: usize>() -> Vec<Constant<Bits<DW>>> {
    (0..=DW / 8)
        .map(|n| Constant::new(bits_from_bools::<DW>(&thermometer(8 * n, DW))))
        .collect()
}

/// The numbers `0..=max` as `N`-bit constants (byte counts to compare against in a lane loop).
pub fn counts<const N: usize>(max: usize) -> Vec<Constant<Bits<N>>> {
    (0..=max)
        .map(|n| Constant::new(crate::util::bits_from_u64(n as u64)))
        .collect()
}

fn thermometer(n: usize, width: usize) -> Vec<bool> {
    (0..width).map(|i| i < n).collect()
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
        let k = keep_of_count::<8>();
        assert_eq!(k.len(), 9);
        assert_eq!(k[0].val().index(), 0);
        assert_eq!(k[3].val().index(), 0b111);
        assert_eq!(k[8].val().index(), 0xFF);
        let d = data_of_count::<32>();
        assert_eq!(d[1].val().index(), 0xFF);
        assert_eq!(d[4].val().index(), 0xFFFF_FFFF);
        assert_eq!(counts::<16>(4)[4].val().index(), 4);
    }
}
