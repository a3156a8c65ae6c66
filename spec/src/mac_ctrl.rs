//! MAC control frames: IEEE 802.3x PAUSE (Annex 31B) and IEEE 802.1Qbb priority flow control
//! (PFC), the facts the MAC's pause logic, the simulator's traffic generator, the tests and the
//! docs share.
//!
//! A MAC control frame goes to [`MAC_CTRL_DST`] with EtherType [`ETHERTYPE_MAC_CTRL`]; after
//! the Ethernet header comes a 16-bit opcode and its parameters ([`PAUSE`], [`PFC`]), then zero
//! padding to the 60-byte minimum (the FCS makes 64). Pause times count quanta of
//! [`QUANTUM_BITS`] bit times at the port's line rate: 51.2 ns at 10 Gb/s, 5.12 ns at
//! 100 Gb/s (1.28 cycles of the 250 MHz 100g clock, so the MAC accounts in bit times).
//!
//! [`parse`] is the receive rule: what the MAC consumes as PAUSE or PFC, and what it drops and
//! counts as malformed. Frames that are not MAC control frames at all are [`MacCtrl::NotCtrl`]
//! and go up the receive path as usual.

use crate::headers::{ETH, ETH_HDR_LEN, ETH_MIN_FRAME_NO_FCS};
use crate::layout::{f, Layout};

/// The reserved multicast address of MAC control frames (IEEE 802.3 Annex 31B).
pub const MAC_CTRL_DST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// MAC control EtherType.
pub const ETHERTYPE_MAC_CTRL: u16 = 0x8808;
/// 802.3x PAUSE opcode.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// 802.1Qbb priority-based flow control opcode.
pub const OPCODE_PFC: u16 = 0x0101;
/// Bit times per pause quantum.
pub const QUANTUM_BITS: u64 = 512;
/// Priorities (traffic classes) PFC names.
pub const PRIORITIES: usize = 8;

/// The transmit queue of priority `p` in a MAC with `queues` of them (1, 2, 4 or 8): the
/// priorities split in order, `p >> (3 - log2 queues)`, as IEEE 802.1Q's recommended
/// priority-to-traffic-class table has it for two and four classes (Table 8-5). With eight,
/// each priority has its own queue.
pub fn queue_of(p: usize, queues: usize) -> usize {
    assert!(
        queues.is_power_of_two() && queues <= PRIORITIES,
        "1, 2, 4 or 8 queues"
    );
    p * queues / PRIORITIES
}
/// Shortest pause time the NIC's PFC frames carry, in quanta. An XOFF is refreshed at half
/// its time, and the refresh may wait behind one whole frame in the transmit queues (4,096
/// bytes of payload and headers: about 33,500 bit times) before it reaches the wire: half of
/// 256 quanta is 65,536 bit times, twice that. Shorter settings are raised to this (the
/// driver refuses them); a pause time of a few quanta would also fill the wire with PFC
/// frames.
pub const PFC_MIN_QUANTA: u16 = 256;

/// 802.3x PAUSE parameters, after the Ethernet header.
pub const PAUSE: Layout = Layout::net(
    "MAC control PAUSE",
    4,
    &[
        f("opcode", 0, 16, "0x0001"),
        f(
            "time",
            16,
            16,
            "pause time in quanta of 512 bit times; 0 resumes at once",
        ),
    ],
    "802.3x PAUSE after the Ethernet header (destination 01-80-C2-00-00-01, EtherType 0x8808); zero padding to 60 bytes follows.",
);

/// 802.1Qbb PFC parameters, after the Ethernet header.
pub const PFC: Layout = Layout::net(
    "MAC control PFC",
    20,
    &[
        f("opcode", 0, 16, "0x0101"),
        f("reserved", 16, 8, "zero"),
        f(
            "class_enable",
            24,
            8,
            "bit p set: time p applies to priority p",
        ),
        f("time0", 32, 16, "pause time of priority 0 in quanta; 0 is XON"),
        f("time1", 48, 16, "priority 1"),
        f("time2", 64, 16, "priority 2"),
        f("time3", 80, 16, "priority 3"),
        f("time4", 96, 16, "priority 4"),
        f("time5", 112, 16, "priority 5"),
        f("time6", 128, 16, "priority 6"),
        f("time7", 144, 16, "priority 7"),
    ],
    "802.1Qbb priority flow control after the Ethernet header (destination 01-80-C2-00-00-01, EtherType 0x8808); zero padding to 60 bytes follows.",
);

/// The MAC control layouts, for checks and docs.
pub const LAYOUTS: &[&Layout] = &[&PAUSE, &PFC];

const TIME_FIELDS: [&str; PRIORITIES] = [
    "time0", "time1", "time2", "time3", "time4", "time5", "time6", "time7",
];

/// What a received frame is, as far as MAC control goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacCtrl {
    /// Not a MAC control frame (any other EtherType): data.
    NotCtrl,
    /// 802.3x PAUSE: every priority for `time` quanta.
    Pause { time: u16 },
    /// PFC: priority p for `times[p]` quanta where bit p of `enable` is set.
    Pfc {
        enable: u8,
        times: [u16; PRIORITIES],
    },
    /// A MAC control frame the MAC must drop and count, never forward.
    Malformed(Malformed),
}

/// Why a MAC control frame is dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than the 60-byte minimum (without FCS).
    Short,
    /// EtherType 0x8808 to an address other than 01-80-C2-00-00-01.
    BadDst,
    /// An opcode other than PAUSE and PFC (e.g. 802.3 GATE/REPORT, EXTENSION).
    UnknownOpcode(u16),
    /// PFC with the reserved octet before the class-enable vector not zero.
    Reserved,
}

/// Classify a received frame (Ethernet header first, FCS already checked and stripped).
/// VLAN-tagged frames are data: 802.3 MAC control frames are never tagged.
pub fn parse(frame: &[u8]) -> MacCtrl {
    if frame.len() < ETH_HDR_LEN {
        return MacCtrl::NotCtrl;
    }
    let ty = ETH.get(&ETH.field("ethertype"), frame) as u16;
    if ty != ETHERTYPE_MAC_CTRL {
        return MacCtrl::NotCtrl;
    }
    if frame.len() < ETH_MIN_FRAME_NO_FCS {
        return MacCtrl::Malformed(Malformed::Short);
    }
    let dst = ETH.field("dst").byte();
    if frame[dst..dst + 6] != MAC_CTRL_DST {
        return MacCtrl::Malformed(Malformed::BadDst);
    }
    let p = &frame[ETH_HDR_LEN..];
    match PFC.get(&PFC.field("opcode"), p) as u16 {
        OPCODE_PAUSE => MacCtrl::Pause {
            time: PAUSE.get(&PAUSE.field("time"), p) as u16,
        },
        OPCODE_PFC => {
            if PFC.get(&PFC.field("reserved"), p) != 0 {
                return MacCtrl::Malformed(Malformed::Reserved);
            }
            let mut times = [0u16; PRIORITIES];
            for (t, name) in times.iter_mut().zip(TIME_FIELDS) {
                *t = PFC.get(&PFC.field(name), p) as u16;
            }
            MacCtrl::Pfc {
                enable: PFC.get(&PFC.field("class_enable"), p) as u8,
                times,
            }
        }
        other => MacCtrl::Malformed(Malformed::UnknownOpcode(other)),
    }
}

fn frame(src: [u8; 6], params: &Layout, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut fr = vec![0u8; ETH_MIN_FRAME_NO_FCS];
    for (field, mac) in [("dst", MAC_CTRL_DST), ("src", src)] {
        let at = ETH.field(field).byte();
        fr[at..at + 6].copy_from_slice(&mac);
    }
    ETH.set(&ETH.field("ethertype"), &mut fr, ETHERTYPE_MAC_CTRL.into());
    fill(&mut fr[ETH_HDR_LEN..ETH_HDR_LEN + params.len]);
    fr
}

/// An 802.3x PAUSE frame from `src` (60 bytes, no FCS).
pub fn pause_frame(src: [u8; 6], time: u16) -> Vec<u8> {
    frame(src, &PAUSE, |p| {
        PAUSE.set(&PAUSE.field("opcode"), p, OPCODE_PAUSE.into());
        PAUSE.set(&PAUSE.field("time"), p, time.into());
    })
}

/// A PFC frame from `src` (60 bytes, no FCS): `times[p]` applies where bit p of `enable` is
/// set (the others are sent as given; receivers ignore them).
pub fn pfc_frame(src: [u8; 6], enable: u8, times: [u16; PRIORITIES]) -> Vec<u8> {
    frame(src, &PFC, |p| {
        PFC.set(&PFC.field("opcode"), p, OPCODE_PFC.into());
        PFC.set(&PFC.field("class_enable"), p, enable.into());
        for (t, name) in times.iter().zip(TIME_FIELDS) {
            PFC.set(&PFC.field(name), p, (*t).into());
        }
    })
}

/// Picoseconds `quanta` pause quanta last at `rate_bps` (rounded up: a pause never ends early).
pub fn quanta_ps(quanta: u64, rate_bps: u64) -> u64 {
    let bits_ps = u128::from(quanta) * u128::from(QUANTUM_BITS) * 1_000_000_000_000;
    u64::try_from(bits_ps.div_ceil(u128::from(rate_bps.max(1)))).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_tile() {
        for l in LAYOUTS {
            l.check().unwrap();
        }
    }

    #[test]
    fn frames_by_hand_and_back() {
        let src = [0x02, 0, 0, 0, 0, 0x0a];
        let p = pause_frame(src, 0xffff);
        assert_eq!(p.len(), 60);
        assert_eq!(
            &p[..20],
            &[0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 0x0a, 0x88, 0x08, 0, 1, 0xff, 0xff, 0, 0]
        );
        assert_eq!(parse(&p), MacCtrl::Pause { time: 0xffff });
        let times = [1, 2, 3, 4, 5, 6, 7, 0x8000];
        let f = pfc_frame(src, 0b1000_0101, times);
        assert_eq!(
            &f[12..20],
            &[0x88, 0x08, 0x01, 0x01, 0x00, 0x85, 0x00, 0x01]
        );
        assert_eq!(&f[32..34], &[0x80, 0x00]);
        assert!(f[34..].iter().all(|&b| b == 0));
        assert_eq!(
            parse(&f),
            MacCtrl::Pfc {
                enable: 0x85,
                times
            }
        );
    }

    #[test]
    fn malformed_control_frames() {
        let src = [2, 0, 0, 0, 0, 1];
        let good = pfc_frame(src, 1, [9; 8]);
        assert_eq!(parse(&good[..59]), MacCtrl::Malformed(Malformed::Short));
        let mut d = good.clone();
        d[5] = 2;
        assert_eq!(parse(&d), MacCtrl::Malformed(Malformed::BadDst));
        let mut o = good.clone();
        o[15] = 2;
        assert_eq!(
            parse(&o),
            MacCtrl::Malformed(Malformed::UnknownOpcode(0x0102))
        );
        let mut r = good.clone();
        r[16] = 1;
        assert_eq!(parse(&r), MacCtrl::Malformed(Malformed::Reserved));
        let mut data = good;
        data[13] = 0x00; // EtherType 0x8800: not MAC control
        assert_eq!(parse(&data), MacCtrl::NotCtrl);
    }

    #[test]
    fn quanta_in_bit_times() {
        // 512 bit times: 51.2 ns at 10 Gb/s, 5.12 ns at 100 Gb/s (1.28 cycles of 4 ns).
        assert_eq!(quanta_ps(1, 10_000_000_000), 51_200);
        assert_eq!(quanta_ps(1, 100_000_000_000), 5_120);
        assert_eq!(quanta_ps(0xffff, 100_000_000_000), 0xffff * 5_120);
        assert_eq!(quanta_ps(3, 25_000_000_000), 61_440);
    }
}
