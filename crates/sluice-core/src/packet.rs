//! Packet handles and the metadata that travels with each packet.

/// Bytes reserved in front of every packet for encapsulation (outer headers).
pub const HEADROOM: usize = 128;
/// Size of one packet buffer in the pool, headroom included (bytes).
pub const BUF_SIZE: usize = 2048;
/// Largest packet payload a buffer holds after the headroom (bytes).
pub const MAX_PACKET_LEN: usize = BUF_SIZE - HEADROOM;

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
