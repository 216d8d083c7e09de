//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `bytes` as big-endian 16-bit words (an odd last
/// byte padded with zero), folded, not inverted.
///
/// Adds native-endian 32-bit words into 64 bits and folds once at the end:
/// the one's-complement sum does not depend on byte order up to a final
/// swap (RFC 1071 §2(B)), and 2³² words cannot overflow the accumulator.
#[inline]
pub fn sum(bytes: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        acc += u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let mut tail = [0u8; 4];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    acc += u32::from_ne_bytes(tail) as u64;
    u16::from_be(fold(acc))
}

/// Folds a sum of 16-bit words to 16 bits with end-around carries.
#[inline]
fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The one's-complement sum of two sums (of two byte ranges).
#[inline]
pub fn add(a: u16, b: u16) -> u16 {
    fold(a as u64 + b as u64)
}

/// `sum` with one of its 16-bit words taken out (one's-complement subtraction).
#[inline]
pub fn without(sum: u16, word: u16) -> u16 {
    fold(sum as u64 + !word as u64)
}

/// Completes a checksum its sender left partial, as a NIC does for
/// `CHECKSUM_PARTIAL`: the field at `start + offset` holds the
/// pseudo-header's sum, and the checksum covers `bytes[start..]`. A
/// computed zero is written as 0xffff (the same in one's complement, and
/// what UDP needs). False when the field lies past the bytes.
pub fn complete(bytes: &mut [u8], start: usize, offset: usize) -> bool {
    let at = start + offset;
    if at + 2 > bytes.len() {
        return false;
    }
    let c = match !sum(&bytes[start..]) {
        0 => 0xffff,
        c => c,
    };
    bytes[at..at + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// RFC 1624 eqn. 3: the new checksum after a 16-bit word changed from `old` to `new`.
#[inline]
pub fn update(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(!checksum as u64 + !old as u64 + new as u64)
}

/// [`update`] for a 32-bit field (two words), e.g. an IPv4 address.
#[inline]
pub fn update32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = update(checksum, (old >> 16) as u16, (new >> 16) as u16);
    update(c, old as u16, new as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example_and_incremental_agree() {
        // RFC 1071 §3 example words: 0001 f203 f4f5 f6f7 sum to ddf2.
        assert_eq!(sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), 0xddf2);
        let mut data = [0x45u8, 0, 0, 0x54, 0x12, 0x34, 0, 0, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 20, 0, 1, 1];
        let c = !sum(&data);
        data[8] = 0x3f;
        assert_eq!(update(c, 0x4011, 0x3f11), !sum(&data));
        assert_eq!(without(sum(&data), 0x3f11), sum(&[&data[..8], &data[10..]].concat()));
    }

    /// RFC 1071 word by word, as the RFC writes it.
    fn by_words(bytes: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        for w in bytes.chunks(2) {
            acc += (w[0] as u32) << 8 | w.get(1).copied().unwrap_or(0) as u32;
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc as u16
    }

    proptest::proptest! {
        #[test]
        fn word_sums_agree_with_rfc1071(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            proptest::prop_assert_eq!(sum(&bytes), by_words(&bytes));
        }
    }

    #[test]
    fn all_ones_and_all_zeros() {
        assert_eq!(sum(&[0xff; 20]), 0xffff);
        assert_eq!(sum(&[0; 20]), 0);
        assert_eq!(sum(&[0xff]), 0xff00);
    }
}
