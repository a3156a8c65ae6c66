//! IEEE 802.3 clause 46 (XGMII) on the simulator's side, written from the standard and
//! sharing nothing with the HDL but `spec::xgmii`'s character codes: a lane-stream encoder (frames
//! at chosen gaps, /S/ on lane 0 or 4) and a reader that finds every frame and checks the
//! wire's rules on the way. The XGMII tests judge `XgmiiTx`/`XgmiiRx` with them; the XGMII
//! link model (`xgmii_link`) taps frames with the reader and injects frames with the encoder's
//! rules.

use crate::{Result, SimError};
use ferroce_spec::xgmii::{ERROR, IDLE, PREAMBLE, SFD, START, TERMINATE};

/// One XGMII lane: a byte and its control flag.
pub type Lane = (u8, bool);

/// One frame for [`encode`]: the lanes after the preamble and SFD (data, or any damage), the
/// lane that ends it (normally /T/), and the idle bytes before its /S/.
pub type EncodeItem = (Vec<Lane>, Lane, usize);

/// The eight lanes of a 64-bit XGMII word (`d` lane 0 in its low byte, `c` one bit per lane).
pub fn lanes_of(d: u64, c: u64) -> [Lane; 8] {
    std::array::from_fn(|i| ((d >> (8 * i)) as u8, (c >> i) & 1 == 1))
}

/// A word from up to eight lanes, lane 0 first.
pub fn word_of(l: &[Lane]) -> (u64, u64) {
    l.iter().enumerate().fold((0, 0), |(d, c), (i, (b, k))| {
        (d | (u64::from(*b) << (8 * i)), c | (u64::from(*k) << i))
    })
}

/// A frame seen on the wire: its bytes (after the SFD, up to the /T/), where its /S/ and /T/
/// sat (absolute lane index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireFrame {
    pub bytes: Vec<u8>,
    pub start: usize,
    pub term: usize,
}

fn bad(lane: usize, what: String) -> SimError {
    SimError::Xgmii { lane, what }
}

/// Where a [`WireReader`] is in the lane stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Between,
    /// Preamble and SFD lanes read so far after the /S/.
    Preamble(usize),
    Data,
    /// After an error inside a frame: the rest of it, up to a control lane that is not /E/.
    Skip,
}

/// A streaming clause-46 reader: lanes in one at a time, every frame out at its /T/, every
/// broken rule an error naming the lane (only idles between frames, /S/ on lane 0 or 4 of a
/// word, six preamble bytes and the SFD, data up to a /T/). After an error inside a frame it
/// skips the rest of that frame (to the next control lane that is not /E/; a /S/ on lane 0 or
/// 4 there starts the next frame), so a link model counts one error per broken frame and
/// loses none of the frames after it.
#[derive(Clone, Debug)]
pub struct WireReader {
    pos: usize,
    at: At,
    start: usize,
    bytes: Vec<u8>,
}

impl Default for WireReader {
    fn default() -> Self {
        Self::new()
    }
}

impl WireReader {
    pub fn new() -> Self {
        WireReader {
            pos: 0,
            at: At::Between,
            start: 0,
            bytes: Vec::new(),
        }
    }

    /// Lanes read so far (the absolute index of the next lane).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Inside a frame (after its /S/, before its end).
    pub fn in_frame(&self) -> bool {
        self.at != At::Between
    }

    /// A /S/ on lane `i`: the start of a frame if the lane is 0 or 4 of a word.
    fn start_at(&mut self, i: usize) -> Result<()> {
        if !i.is_multiple_of(4) {
            self.at = At::Skip;
            return Err(bad(i, "/S/ off lanes 0 and 4".into()));
        }
        self.start = i;
        self.bytes.clear();
        self.at = At::Preamble(0);
        Ok(())
    }

    /// Read one lane: a frame when it is the /T/ ending one.
    pub fn push(&mut self, (b, k): Lane) -> Result<Option<WireFrame>> {
        let i = self.pos;
        self.pos += 1;
        match self.at {
            At::Between if k && b == START => self.start_at(i).map(|_| None),
            At::Skip if k && b == START => self.start_at(i).map(|_| None),
            At::Skip => {
                if k && b != ERROR {
                    self.at = At::Between;
                }
                Ok(None)
            }
            At::Between if k && b == IDLE => Ok(None),
            At::Between => Err(bad(i, format!("{b:#04x} (control {k}) between frames"))),
            At::Preamble(n) => {
                let want = if n == 6 { SFD } else { PREAMBLE };
                if (b, k) != (want, false) {
                    self.at = At::Skip;
                    if k && b != ERROR {
                        // The frame ended in its preamble: this lane is between frames.
                        self.at = At::Between;
                        if b == START {
                            let _ = self.start_at(i);
                        }
                    }
                    return Err(bad(i, format!("preamble byte {:?}", (b, k))));
                }
                self.at = if n == 6 {
                    At::Data
                } else {
                    At::Preamble(n + 1)
                };
                Ok(None)
            }
            At::Data if !k => {
                self.bytes.push(b);
                Ok(None)
            }
            At::Data => {
                self.at = At::Between;
                if b != TERMINATE {
                    if b == ERROR {
                        self.at = At::Skip;
                    } else if b == START {
                        let _ = self.start_at(i);
                    }
                    return Err(bad(i, format!("frame ended by {:?}", (b, k))));
                }
                Ok(Some(WireFrame {
                    bytes: std::mem::take(&mut self.bytes),
                    start: self.start,
                    term: i,
                }))
            }
        }
    }
}

/// Every frame of a lane stream, checking clause 46 on the way ([`WireReader`]'s rules); a
/// frame still open at the end is an error.
pub fn check_wire(lanes: &[Lane]) -> Result<Vec<WireFrame>> {
    let mut r = WireReader::new();
    let mut out = Vec::new();
    for l in lanes {
        if let Some(f) = r.push(*l)? {
            out.push(f);
        }
    }
    if r.in_frame() {
        let what = match r.at {
            At::Data | At::Skip => "frame has no end",
            _ => "preamble cut at the end",
        };
        return Err(bad(r.start, what.into()));
    }
    Ok(out)
}

/// Frames at chosen gaps, each /S/ moved up to the next lane 0 or 4, then `tail` idle bytes
/// and idles to a whole word.
pub fn encode(items: &[EncodeItem], tail: usize) -> Vec<Lane> {
    let mut l: Vec<Lane> = Vec::new();
    for (body, end, gap) in items {
        l.extend(std::iter::repeat_n((IDLE, true), *gap));
        while !l.len().is_multiple_of(4) {
            l.push((IDLE, true));
        }
        l.push((START, true));
        l.extend(std::iter::repeat_n((PREAMBLE, false), 6));
        l.push((SFD, false));
        l.extend(body);
        l.push(*end);
    }
    l.extend(std::iter::repeat_n((IDLE, true), tail));
    while !l.len().is_multiple_of(8) {
        l.push((IDLE, true));
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_frames_read_back_with_their_lanes() {
        let f = |n: usize| -> Vec<Lane> { (0..n).map(|i| (i as u8, false)).collect() };
        let items = vec![
            (f(60), (TERMINATE, true), 0),
            (f(61), (TERMINATE, true), 9),
            (f(64), (TERMINATE, true), 12),
        ];
        let lanes = encode(&items, 5);
        assert_eq!(lanes.len() % 8, 0);
        let got = check_wire(&lanes).expect("clean wire");
        assert_eq!(got.len(), 3);
        for (g, (body, _, _)) in got.iter().zip(&items) {
            assert_eq!(g.bytes.len(), body.len());
            assert_eq!(g.start % 4, 0);
            assert_eq!(g.term, g.start + 8 + body.len());
        }
        let words: Vec<(u64, u64)> = lanes.chunks(8).map(word_of).collect();
        let back: Vec<Lane> = words.iter().flat_map(|&(d, c)| lanes_of(d, c)).collect();
        assert_eq!(back, lanes);
    }

    #[test]
    fn broken_rules_are_named() {
        let mut lanes = encode(&[(vec![(1, false); 60], (TERMINATE, true), 0)], 0);
        lanes[3] = (PREAMBLE, true);
        assert!(matches!(
            check_wire(&lanes),
            Err(SimError::Xgmii { lane: 3, .. })
        ));
        let cut = encode(&[(vec![(1, false); 60], (IDLE, true), 0)], 0);
        assert!(check_wire(&cut).is_err());
    }

    #[test]
    fn a_reader_counts_one_error_per_broken_frame_and_keeps_the_next() {
        let body = vec![(7, false); 60];
        let mut underrun = body.clone();
        underrun.extend(std::iter::repeat_n((ERROR, true), 7));
        // An underrun (/E/ x 7 then /T/), a clean frame, a frame cut by the next one's /S/,
        // that next frame.
        let mut lanes = encode(
            &[
                (underrun, (TERMINATE, true), 0),
                (body.clone(), (TERMINATE, true), 12),
            ],
            0,
        );
        lanes.push((START, true));
        lanes.extend(std::iter::repeat_n((PREAMBLE, false), 6));
        lanes.push((SFD, false));
        lanes.extend(body.iter().copied());
        while !lanes.len().is_multiple_of(4) {
            lanes.push((7, false));
        }
        lanes.extend(encode(&[(body, (TERMINATE, true), 0)], 0));
        let mut r = WireReader::new();
        let (mut frames, mut errors) = (0, 0);
        for l in &lanes {
            match r.push(*l) {
                Ok(Some(_)) => frames += 1,
                Ok(None) => {}
                Err(_) => errors += 1,
            }
        }
        assert_eq!((frames, errors), (2, 2));
    }
}
