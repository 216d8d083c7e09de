//! Packet handles and the metadata that travels with each packet.

/// Bytes reserved in front of every packet for encapsulation (outer headers).
pub const HEADROOM: usize = 128;
/// Headroom plus the largest packet a buffer holds (bytes).
const DATA_BYTES: usize = 2048;
/// Size of one packet buffer in the pool (bytes): 2 KiB and one cache line,
/// so that consecutive buffers' headers fall in different L1 sets. With a
/// power-of-two stride every header of a batch maps to the same two sets
/// and a batch of more than ~16 packets evicts its own headers (per-packet
/// costs jumped by half at b ≈ 13 before).
pub const BUF_SIZE: usize = DATA_BYTES + 64;
/// Largest packet a buffer holds after the headroom (bytes).
pub const MAX_PACKET_LEN: usize = DATA_BYTES - HEADROOM;

/// Flow id of a packet that no flow has claimed yet (e.g. before a random split).
pub const NO_FLOW: u16 = u16::MAX;

/// Handle of a packet buffer: an index into a [`crate::PacketPool`].
///
/// Owning a handle means owning the buffer: exactly one batch, queue or NF
/// holds a given handle at any time, as with DPDK mbufs and VPP buffer indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct PacketId(pub u32);

/// Per-packet metadata kept beside the buffer (not inside it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketMeta {
    /// Ingress timestamp (ns since the engine's clock origin).
    pub ts_ns: u64,
    /// Sequence number within the packet's flow (or stream).
    pub seq: u32,
    /// Metadata NFs attach for later NFs (a tunnel id, a class), like Linux's skb mark.
    pub mark: u32,
    /// Flow id, or [`NO_FLOW`].
    pub flow: u16,
    /// Input port the packet arrived on.
    pub port: u16,
    /// Offset of the first data byte within the buffer (bytes).
    pub data_off: u16,
    /// Packet length (bytes).
    pub len: u16,
}
