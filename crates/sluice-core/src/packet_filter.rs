//! What picks the packets a trace follows or a capture copies.

/// Decides which packets a trace or capture takes (a compiled BPF program,
/// say); runs in the worker, on each packet that reaches the module
/// while it looks for more.
pub trait PacketFilter: Send + Sync {
    /// Whether `frame` (from its Ethernet header) is taken.
    fn matches(&self, frame: &[u8]) -> bool;
}
