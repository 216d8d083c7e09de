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
/// Buffers of [`BUF_SIZE`] a large buffer spans: a large buffer takes the
/// place of this many, so that buffer `i` of either size starts at
/// `i · BUF_SIZE` (see [`crate::PacketPool`]).
pub const LARGE_SPAN: usize = 32;
/// Largest packet a large buffer holds (bytes): what a packet's length
/// field holds, a GSO frame of a whole 64 KiB IP packet (jumbo frames, up
/// to 9216 bytes, fit with room to spare).
pub const MAX_LARGE_LEN: usize = u16::MAX as usize;
const _: () = assert!(HEADROOM + MAX_LARGE_LEN <= LARGE_SPAN * BUF_SIZE, "a large buffer holds the largest packet");

/// Flow id of a packet that no flow has claimed yet (e.g. before a random split).
pub const NO_FLOW: u16 = u16::MAX;
/// Interface of a packet that arrived on none of the pipeline's
/// interfaces (made by a synthetic source, replayed from a capture).
pub const NO_PORT: u16 = u16::MAX;

/// Handle of a packet buffer: an index into a [`crate::PacketPool`].
///
/// Owning a handle means owning the buffer: exactly one batch, queue or NF
/// holds a given handle at any time, as with DPDK mbufs and VPP buffer indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct PacketId(pub u32);

/// Per-packet metadata kept beside the buffer (not inside it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// Ingress timestamp (ns since the engine's clock origin).
    pub ts_ns: u64,
    /// Sequence number within the packet's flow (or stream).
    pub seq: u32,
    /// Metadata NFs attach for later NFs (a tunnel id, a class), like Linux's skb mark.
    pub mark: u32,
    /// Flow id, or [`NO_FLOW`].
    pub flow: u16,
    /// The interface it arrived on, by its place in the description's
    /// interfaces ([`NO_PORT`]: none); what ICMP errors answer from.
    pub port: u16,
    /// Offset of the first data byte within the buffer (bytes).
    pub data_off: u16,
    /// Packet length (bytes).
    pub len: u16,
}

impl Default for PacketMeta {
    fn default() -> Self {
        Self { ts_ns: 0, seq: 0, mark: 0, flow: 0, port: NO_PORT, data_off: 0, len: 0 }
    }
}

/// How the sender of a large packet left the rest to the wire (the
/// `virtio_net_hdr` a packet socket carries, see `sluice_port`): its
/// segmentation (GSO) and the checksum it left partial. Offsets count from
/// the frame's first byte. Small packets carry none: a port completes
/// their checksums as they arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offload {
    /// What segmenting it makes ([`Gso::None`]: send it as it is).
    pub gso: Gso,
    /// Payload bytes of each segment (its MSS).
    pub gso_size: u16,
    /// Bytes of headers each segment repeats (Ethernet, IP and TCP or UDP).
    pub hdr_len: u16,
    /// Whether its TCP or UDP checksum holds only the pseudo-header's sum,
    /// to be completed from `csum_start` and written at `csum_start + csum_offset`.
    pub csum_partial: bool,
    /// Where the checksummed bytes start (bytes from the frame's start).
    pub csum_start: u16,
    /// Where the checksum sits from there (bytes).
    pub csum_offset: u16,
}

/// What a GSO packet is cut into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gso {
    /// Nothing: one frame.
    #[default]
    None,
    /// TCP segments over IPv4 (IP ids counted up).
    TcpV4,
    /// TCP segments over IPv6.
    TcpV6,
    /// UDP datagrams, each with its own UDP header (UDP_L4).
    Udp,
}

impl Offload {
    /// Shifts its offsets by `by` bytes (headers prepended, or stripped when negative).
    pub fn shifted(self, by: i32) -> Self {
        let at = |v: u16| (i32::from(v) + by).clamp(0, i32::from(u16::MAX)) as u16;
        Self { csum_start: at(self.csum_start), hdr_len: if self.gso == Gso::None { self.hdr_len } else { at(self.hdr_len) }, ..self }
    }
}

