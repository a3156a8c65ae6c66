//! XGMII, the 10 Gb/s MAC-PHY interface (IEEE 802.3 clause 46) in its 64-bit form: eight byte
//! lanes per clock (lane i in data bits 8i+7..8i) with one control bit per lane, at
//! 156.25 MHz. A lane with its control bit set carries a control character. The `XgmiiTx` and
//! `XgmiiRx` blocks and the test models all take these values from here.

/// Control characters (IEEE 802.3 table 46-3).
pub const IDLE: u8 = 0x07;
/// Start: first byte of a frame's preamble, only on lane 0 or lane 4.
pub const START: u8 = 0xFB;
/// Terminate: the lane after a frame's last byte.
pub const TERMINATE: u8 = 0xFD;
/// Error: a lane whose byte was lost or invalid; a frame holding one must be dropped.
pub const ERROR: u8 = 0xFE;
/// Sequence: ordered sets (link fault signalling), only on lane 0 or 4, never in a frame.
pub const SEQUENCE: u8 = 0x9C;

/// Preamble bytes after /S/ and the start frame delimiter: /S/ 55 55 55 55 55 55 D5.
pub const PREAMBLE: u8 = 0x55;
pub const SFD: u8 = 0xD5;
/// Bytes from /S/ to the first byte of the frame (the destination MAC).
pub const PREAMBLE_LEN: usize = 8;

/// Lanes per XGMII word; /S/ may sit on lanes 0 and 4 only.
pub const LANES: usize = 8;
pub const START_LANES: [usize; 2] = [0, 4];

/// Inter-frame gap, in bytes from /T/ (included) to the next /S/: 12 on average. With starts
/// on lanes 0 and 4 only, the transmitter keeps a deficit idle count (DIC, 0..=3): it may
/// shorten a gap by up to 3 bytes while the count allows and lengthens a later one by as
/// much, so no gap is under 9 bytes and the average stays 12 (clause 46.3.1.4).
pub const IFG: usize = 12;
pub const DIC_MAX: usize = 3;
pub const IFG_MIN: usize = IFG - DIC_MAX;

/// The gap a deficit-idle-count transmitter leaves after a frame whose /T/ sits at absolute
/// byte position `t` (lane `t % 8` of word `t / 8`), when the next frame is ready at once:
/// the start position, and the new count. Starts are at multiples of 4; the gap is `start - t`.
pub fn dic_next_start(t: usize, dic: usize) -> (usize, usize) {
    // The first start on lane 0 or 4 with a gap of at least IFG - (DIC_MAX - dic): the idles
    // deleted (IFG - gap) raise the count, those added (gap - IFG) lower it.
    let s = (t + IFG_MIN + dic).next_multiple_of(4);
    let gap = s - t;
    if gap >= IFG {
        (s, dic.saturating_sub(gap - IFG))
    } else {
        (s, dic + (IFG - gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dic_keeps_gaps_in_range_and_averages_twelve() {
        for lane in 0..8 {
            let mut dic = 0;
            let mut t = 1000 + lane;
            let mut total = 0;
            let n = 400;
            for k in 0..n {
                let (s, d) = dic_next_start(t, dic);
                let gap = s - t;
                assert!((IFG_MIN..=IFG + DIC_MAX).contains(&gap), "gap {gap}");
                assert!(d <= DIC_MAX);
                assert!(s % 4 == 0);
                total += gap;
                dic = d;
                // A frame whose length moves the next /T/ around the lanes.
                t = s + 8 + 60 + (k * 3 + lane) % 13;
            }
            let avg = total as f64 / n as f64;
            assert!((avg - 12.0).abs() < 0.05, "average gap {avg}");
        }
    }
}
