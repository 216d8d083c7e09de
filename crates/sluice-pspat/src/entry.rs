//! [`Entry`]: a packet as the arbiter sees it, one word in a mailbox.

/// A packet as it travels through a mailbox: its flow, its length and the
/// handle of its buffer, packed into one non-zero word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The scheduler's flow (class).
    pub flow: u16,
    /// Length on the wire (bytes).
    pub len: u16,
    /// The packet's handle (its pool index).
    pub id: u32,
}

/// The flow's top bit: in an offer, the packet is ECN-capable; in a
/// decision or a release, it is marked congestion experienced (classes
/// are below it).
pub const ECN: u16 = 1 << 15;

/// The same bit in a drop: the class's queue management dropped the
/// packet, its queue was not full.
pub const MANAGED: u16 = ECN;

impl Entry {
    /// The word a mailbox carries (never 0: the handle is stored plus one,
    /// so handles go up to `u32::MAX − 1`).
    pub fn pack(self) -> u64 {
        debug_assert!(self.id < u32::MAX, "handle {} does not fit", self.id);
        (u64::from(self.flow) << 48) | (u64::from(self.len) << 32) | (u64::from(self.id) + 1)
    }

    /// The entry `word` carries.
    pub fn unpack(word: u64) -> Self {
        Self { flow: (word >> 48) as u16, len: (word >> 32) as u16, id: (word as u32).wrapping_sub(1) }
    }
}
