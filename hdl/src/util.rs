//! Elaboration-time helpers for building constants of any width.

use crate::prelude::*;

/// A `Bits<N>` with the given little-endian bits set (bits past `N` must be clear).
pub fn bits_from_bools<const N: usize>(bits: &[bool]) -> Bits<N> {
    assert!(bits.len() <= N || bits[N..].iter().all(|b| !b));
    bits.iter()
        .enumerate()
        .filter(|(_, &b)| b)
        .fold(Bits::<N>::default(), |acc, (i, _)| acc.replace_bit(i, true))
}

/// A `Bits<N>` holding `value` (which must fit in `N` bits).
pub fn bits_from_u64<const N: usize>(value: u64) -> Bits<N> {
    let bools: Vec<bool> = (0..64).map(|i| (value >> i) & 1 == 1).collect();
    bits_from_bools::<N>(&bools)
}

/// A `Bits<N>` holding `value` (which must fit in `N` bits).
pub fn bits_from_u128<const N: usize>(value: u128) -> Bits<N> {
    let bools: Vec<bool> = (0..128).map(|i| (value >> i) & 1 == 1).collect();
    bits_from_bools::<N>(&bools)
}

/// Little-endian bits of a byte string (lane 0 in bits 0..8).
pub fn bools_from_bytes(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|b| (0..8).map(move |k| (b >> k) & 1 == 1))
        .collect()
}

/// log2 of a power of two, checked at elaboration.
pub fn log2_exact(x: usize) -> usize {
    assert!(x.is_power_of_two(), "{x} is not a power of two");
    x.trailing_zeros() as usize
}
