//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `bytes` as big-endian 16-bit words, folded, not inverted.
#[inline]
pub fn sum(bytes: &[u8]) -> u16 {
    let mut acc: u32 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for w in &mut chunks {
        acc += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u32) << 8;
    }
    fold(acc)
}

#[inline]
fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field value for `bytes` whose checksum field is zero.
#[inline]
pub fn compute(bytes: &[u8]) -> u16 {
    !sum(bytes)
}

/// RFC 1624 eqn. 3: the new checksum after a 16-bit word changed from `old` to `new`.
#[inline]
pub fn update(checksum: u16, old: u16, new: u16) -> u16 {
    !fold(!checksum as u32 + !old as u32 + new as u32)
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
        let c = compute(&data);
        data[8] = 0x3f;
        assert_eq!(update(c, 0x4011, 0x3f11), compute(&data));
    }
}
