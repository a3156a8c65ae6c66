//! CRC-32 as linear algebra over GF(2), computed at elaboration from `spec`'s byte step.
//!
//! Processing `n` bytes `D` from register `S` gives `A·S ⊕ B·D`; undoing `z` zero bytes is the
//! matrix `U_z`. Each matrix is stored as one row mask per output bit, so output bit `i` is the
//! parity of `S & a_rows[i]` (and `D & b_rows[i]`): an XOR tree per bit in hardware.

use ferroce_spec::crc::{register_unstep_zero, register_update};

/// Rows of `A` (32x32): the register's own contribution after `nbytes` bytes.
pub fn state_rows(nbytes: usize) -> [u32; 32] {
    let zeros = vec![0u8; nbytes];
    let cols: Vec<u32> = (0..32)
        .map(|j| register_update(1u32 << j, &zeros))
        .collect();
    transpose32(&cols)
}

/// Rows of `B` (32 x 8·nbytes): bit `8·l + k` of the data is bit `k` of byte lane `l`, and lane
/// 0 is processed first. Each row is returned as a little-endian bit vector.
pub fn data_rows(nbytes: usize) -> Vec<Vec<bool>> {
    let mut rows = vec![vec![false; nbytes * 8]; 32];
    let mut bytes = vec![0u8; nbytes];
    for lane in 0..nbytes {
        for k in 0..8 {
            bytes[lane] = 1 << k;
            let col = register_update(0, &bytes);
            for (i, row) in rows.iter_mut().enumerate() {
                row[lane * 8 + k] = (col >> i) & 1 == 1;
            }
        }
        bytes[lane] = 0;
    }
    rows
}

/// Undo `z` zero bytes: `unshift(register_update(s, &[0; z]), z) == s`.
pub fn unshift(state: u32, z: usize) -> u32 {
    (0..z).fold(state, |s, _| register_unstep_zero(s))
}

/// Rows of `U_z` (32x32).
pub fn unshift_rows(z: usize) -> [u32; 32] {
    let cols: Vec<u32> = (0..32).map(|j| unshift(1u32 << j, z)).collect();
    transpose32(&cols)
}

fn transpose32(cols: &[u32]) -> [u32; 32] {
    let mut rows = [0u32; 32];
    for (j, col) in cols.iter().enumerate() {
        for (i, row) in rows.iter_mut().enumerate() {
            *row |= ((col >> i) & 1) << j;
        }
    }
    rows
}

/// Apply 32x32 row masks to a vector (software model of the XOR trees).
pub fn apply(rows: &[u32; 32], v: u32) -> u32 {
    rows.iter()
        .enumerate()
        .fold(0, |acc, (i, r)| acc | (((r & v).count_ones() & 1) << i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroce_spec::crc::register_update;

    #[test]
    fn matrices_reproduce_the_byte_step() {
        let data = [0x12u8, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0];
        let s = 0xC0FF_EE11u32;
        let a = state_rows(8);
        let b = data_rows(8);
        let mut out = apply(&a, s);
        for (i, row) in b.iter().enumerate() {
            let parity = row
                .iter()
                .enumerate()
                .filter(|(k, &m)| m && (data[k / 8] >> (k % 8)) & 1 == 1)
                .count()
                & 1;
            out ^= (parity as u32) << i;
        }
        assert_eq!(out, register_update(s, &data));
    }

    #[test]
    fn unshift_matrix_undoes_zero_bytes() {
        for z in [0usize, 1, 2, 7, 32, 64] {
            let s = 0x1234_5678u32;
            let shifted = register_update(s, &vec![0u8; z]);
            assert_eq!(apply(&unshift_rows(z), shifted), s, "z={z}");
        }
    }
}
