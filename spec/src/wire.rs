//! What an RDMA WRITE, a SEND or an RDMA READ's response costs on the wire, and the goodput ceiling that follows: the
//! figure the benchmark and the demo compare measured throughput with.
//!
//! A message of `len` bytes over a path MTU of `pmtu` is `ceil(len / pmtu)` packets (one when
//! `len` is 0), each an untagged IPv4 RoCEv2 frame: Ethernet, IPv4, UDP, BTH, a WRITE's RETH on
//! the first packet only (a SEND carries no extended header), the payload padded to 4 bytes,
//! ICRC and FCS, padded to the 64-byte minimum frame, plus 8 bytes of preamble and SFD and the
//! 12-byte inter-frame gap. ACKs travel the other way and cost the data direction nothing. A
//! READ's response carries an AETH on its first and last packet (its one packet when ONLY);
//! its request travels the other way.

use crate::headers::{
    AETH, BTH_LEN, ETH_HDR_LEN, FCS_LEN, ICRC_LEN, IPV4_HDR_LEN, RETH, UDP_HDR_LEN,
};

/// Preamble (7) and start-of-frame delimiter (1).
pub const PREAMBLE_SFD_LEN: u64 = 8;
/// The minimum inter-frame gap of IEEE 802.3.
pub const IFG_LEN: u64 = 12;
/// The minimum Ethernet frame, FCS included.
pub const MIN_FRAME_LEN: u64 = 64;

/// Bytes one packet with `ext` bytes of extended headers occupies on the wire, gap included.
pub fn packet_wire_bytes(payload: u64, ext: u64) -> u64 {
    let headers = (ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + BTH_LEN) as u64;
    let frame = headers + ext + payload.div_ceil(4) * 4 + (ICRC_LEN + FCS_LEN) as u64;
    frame.max(MIN_FRAME_LEN) + PREAMBLE_SFD_LEN + IFG_LEN
}

/// Bytes a message of `len` bytes occupies on the wire at path MTU `pmtu` (> 0), its first
/// packet carrying `first_ext` bytes of extended headers and its last (of two or more)
/// `last_ext`.
fn message_wire_bytes(len: u64, pmtu: u64, first_ext: u64, last_ext: u64) -> u64 {
    let pmtu = pmtu.max(1);
    let packets = len.div_ceil(pmtu).max(1);
    if packets == 1 {
        return packet_wire_bytes(len, first_ext);
    }
    let last = len - (packets - 1) * pmtu;
    packet_wire_bytes(pmtu, first_ext)
        + (packets - 2) * packet_wire_bytes(pmtu, 0)
        + packet_wire_bytes(last, last_ext)
}

/// Bytes a WRITE of `len` bytes occupies on the wire at path MTU `pmtu` (> 0).
pub fn write_wire_bytes(len: u64, pmtu: u64) -> u64 {
    message_wire_bytes(len, pmtu, RETH.len as u64, 0)
}

/// Bytes a SEND of `len` bytes occupies on the wire at path MTU `pmtu` (> 0).
pub fn send_wire_bytes(len: u64, pmtu: u64) -> u64 {
    message_wire_bytes(len, pmtu, 0, 0)
}

/// Bytes the response to an RDMA READ of `len` bytes occupies on the wire at path MTU `pmtu`.
pub fn read_wire_bytes(len: u64, pmtu: u64) -> u64 {
    message_wire_bytes(len, pmtu, AETH.len as u64, AETH.len as u64)
}

/// The goodput ceiling of back-to-back RDMA READs of `len` bytes (their responses), as a
/// fraction of the line rate.
pub fn read_goodput_ceiling(len: u64, pmtu: u64) -> f64 {
    len as f64 / read_wire_bytes(len, pmtu) as f64
}

/// The goodput ceiling of back-to-back WRITEs of `len` bytes, as a fraction of the line rate.
pub fn write_goodput_ceiling(len: u64, pmtu: u64) -> f64 {
    len as f64 / write_wire_bytes(len, pmtu) as f64
}

/// The goodput ceiling of back-to-back SENDs of `len` bytes, as a fraction of the line rate.
pub fn send_goodput_ceiling(len: u64, pmtu: u64) -> f64 {
    len as f64 / send_wire_bytes(len, pmtu) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_by_hand() {
        // ONLY with 64 B: 14 + 20 + 8 + 12 + 16 + 64 + 4 + 4 = 142, + 20.
        assert_eq!(write_wire_bytes(64, 4096), 162);
        // Zero bytes: 78-byte frame.
        assert_eq!(write_wire_bytes(0, 1024), 98);
        // 1 B pads to 4.
        assert_eq!(write_wire_bytes(1, 256), 102);
        // 8192 at 4096: FIRST (54 + 16 + 4096 + 8) and LAST (54 + 4096 + 8), + 20 each.
        assert_eq!(write_wire_bytes(8192, 4096), 4174 + 20 + 4158 + 20);
        // Three packets: FIRST and MIDDLE of 256, LAST of 1 (padded to 4).
        assert_eq!(write_wire_bytes(513, 256), 354 + 338 + 86);
        let c = write_goodput_ceiling(1 << 20, 4096);
        assert!(c > 0.979 && c < 0.981, "{c}");
        // SEND ONLY with 64 B: 14 + 20 + 8 + 12 + 64 + 4 + 4 = 126, + 20.
        assert_eq!(send_wire_bytes(64, 4096), 146);
        // 8192 at 4096: two packets of 54 + 4096 + 8, + 20 each.
        assert_eq!(send_wire_bytes(8192, 4096), 2 * (4158 + 20));
        assert!(send_goodput_ceiling(64, 4096) > write_goodput_ceiling(64, 4096));
        // READ ONLY of 64 B: 14 + 20 + 8 + 12 + 4 + 64 + 4 + 4 = 130, + 20; two packets at
        // 256: an AETH on both.
        assert_eq!(read_wire_bytes(64, 4096), 150);
        assert_eq!(
            read_wire_bytes(300, 256),
            packet_wire_bytes(256, 4) + packet_wire_bytes(44, 4)
        );
    }
}
