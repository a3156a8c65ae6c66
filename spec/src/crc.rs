//! CRC-32 as used by IEEE 802.3 (FCS) and the RoCEv2 ICRC: polynomial 0x04C11DB7, reflected
//! (LSB-first) input and output, initial register 0xFFFFFFFF, final XOR 0xFFFFFFFF.
//!
//! The "register" functions work on the raw shift register (no initial value, no final XOR):
//! that is the linear map the HDL turns into XOR matrices.

/// Reflected form of the IEEE 802.3 polynomial 0x04C11DB7.
pub const POLY_REFLECTED: u32 = 0xEDB8_8320;
/// Initial register value.
pub const INIT: u32 = 0xFFFF_FFFF;
/// Final XOR applied to the register to give the CRC.
pub const XOR_OUT: u32 = 0xFFFF_FFFF;
/// CRC of the ASCII string "123456789" (the catalogue check value).
pub const CHECK: u32 = 0xCBF4_3926;
/// CRC (after the final XOR) of any message followed by its own CRC, least-significant byte
/// first: a receiver checks a frame plus its FCS or ICRC by comparing against this.
pub const RESIDUE: u32 = 0x2144_DF1C;

const fn make_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut r = i as u32;
        let mut k = 0;
        while k < 8 {
            r = if r & 1 != 0 {
                (r >> 1) ^ POLY_REFLECTED
            } else {
                r >> 1
            };
            k += 1;
        }
        table[i] = r;
        i += 1;
    }
    table
}

static TABLE: [u32; 256] = make_table();

/// Advance the raw register by one byte.
pub fn register_step(reg: u32, byte: u8) -> u32 {
    (reg >> 8) ^ TABLE[((reg ^ u32::from(byte)) & 0xFF) as usize]
}

/// Advance the raw register over `bytes`.
pub fn register_update(reg: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(reg, |r, &b| register_step(r, b))
}

/// Undo one zero byte: the inverse of `register_step(reg, 0)`. The step is invertible because
/// the polynomial has a constant term; the HDL uses this to correct for zero-filled lanes.
pub fn register_unstep_zero(reg: u32) -> u32 {
    // register_step(r, 0) = (r >> 8) ^ TABLE[r & 0xFF]; the top byte of TABLE[i] is unique per
    // i (it is i's reflected image times the polynomial), so the low byte of r is recovered
    // from the top byte of the result.
    let top = reg >> 24;
    let low = (0..256u32)
        .find(|&i| TABLE[i as usize] >> 24 == top)
        .unwrap_or(0);
    ((reg ^ TABLE[low as usize]) << 8) | low
}

/// CRC-32 of `bytes` (initial value and final XOR applied).
pub fn crc32(bytes: &[u8]) -> u32 {
    register_update(INIT, bytes) ^ XOR_OUT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        assert_eq!(crc32(b"123456789"), CHECK);
    }

    #[test]
    fn published_vectors() {
        // Catalogue of parametrised CRC algorithms (CRC-32/ISO-HDLC) and RFC 3720 B.4 style
        // vectors for the reflected 802.3 CRC.
        assert_eq!(crc32(b""), 0x0000_0000);
        assert_eq!(crc32(b"a"), 0xE8B7_BE43);
        assert_eq!(crc32(b"abc"), 0x3524_41C2);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414F_A339
        );
        assert_eq!(crc32(&[0u8; 32]), 0x190A_55AD);
        assert_eq!(crc32(&[0xFFu8; 32]), 0xFF6C_AB0B);
    }

    #[test]
    fn matches_crc_crate() {
        let reference = ::crc::Crc::<u32>::new(&::crc::CRC_32_ISO_HDLC);
        let mut x: u32 = 1;
        for len in 0..600usize {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            assert_eq!(crc32(&data), reference.checksum(&data), "len {len}");
        }
    }

    #[test]
    fn residue() {
        let mut msg = b"123456789".to_vec();
        msg.extend_from_slice(&CHECK.to_le_bytes());
        assert_eq!(crc32(&msg), RESIDUE);
    }

    #[test]
    fn unstep_inverts_zero_step() {
        for r in [0u32, 1, 0xFFFF_FFFF, 0xDEAD_BEEF, 0x1234_5678, 0x8000_0000] {
            assert_eq!(register_unstep_zero(register_step(r, 0)), r);
            assert_eq!(register_step(register_unstep_zero(r), 0), r);
        }
    }
}
