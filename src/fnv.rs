//! FNV-1a, 64 bits: a hash that is the same on every build and machine (std's hasher is not),
//! for ids and checksums kept in files.

/// The hash of nothing: where [`add`] starts.
pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// `h` with `bytes` folded in (hash several pieces as one by folding them in turn).
pub fn add(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// The hash of `bytes`.
pub fn hash(bytes: &[u8]) -> u64 {
    add(OFFSET, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_pieces() {
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(add(hash(b"ab"), b"c"), hash(b"abc"));
    }
}
