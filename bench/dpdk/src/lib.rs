//! Safe wrappers over the C shim (`shim.c`) around DPDK's rte_lpm, rte_lpm6, rte_hash
//! and rte_acl, for benchmarking Sluice's lookups against them.

use std::ffi::c_void;

extern "C" {
    fn shim_eal_init() -> i32;
    fn shim_errno() -> i32;
    fn shim_lpm_create(prefixes: *const u32, depths: *const u8, hops: *const u32, n: i32) -> *mut c_void;
    fn shim_lpm_lookup(lpm: *mut c_void, ip: u32, hop: *mut u32) -> i32;
    fn shim_lpm_lookup_bulk(lpm: *mut c_void, ips: *const u32, hops: *mut u32, n: u32) -> i32;
    fn shim_lpm6_create(prefixes: *const [u8; 16], depths: *const u8, hops: *const u32, n: i32, tbl8s: u32) -> *mut c_void;
    fn shim_lpm6_lookup(lpm: *mut c_void, ip: *const u8, hop: *mut u32) -> i32;
    fn shim_lpm6_lookup_bulk(lpm: *mut c_void, ips: *const [u8; 16], hops: *mut i32, n: u32) -> i32;
    fn shim_hash_create(keys: *const u32, n: i32) -> *mut c_void;
    fn shim_hash_lookup(h: *mut c_void, key: u32) -> u32;
    fn shim_hash_lookup_bulk(h: *mut c_void, keys: *const u32, results: *mut u32, n: u32) -> i32;
    fn shim_acl_create(rules: *const AclRule, n: i32) -> *mut c_void;
    fn shim_acl_classify(ctx: *mut c_void, data: *const *const u8, results: *mut u32, n: u32) -> i32;
    fn shim_acl_tuple(out: *mut u8, proto: u8, src: u32, dst: u32, sport: u16, dport: u16);
}

/// Size of the packed 5-tuple rte_acl reads (bytes).
pub const TUPLE_BYTES: usize = 13;

/// Starts DPDK's environment (no hugepages, no PCI, in memory); once per process.
pub fn init() -> Result<(), String> {
    // SAFETY: called once, before any other shim function.
    let rc = unsafe { shim_eal_init() };
    if rc < 0 {
        return Err(format!("rte_eal_init failed (rte_errno {})", unsafe { shim_errno() }));
    }
    Ok(())
}

fn created(p: *mut c_void, what: &str) -> Result<*mut c_void, String> {
    if p.is_null() {
        Err(format!("{what}: creation failed (rte_errno {})", unsafe { shim_errno() }))
    } else {
        Ok(p)
    }
}

/// DPDK's rte_lpm.
pub struct Lpm(*mut c_void);

impl Lpm {
    /// A table of routes (prefix, length, next hop).
    pub fn new(routes: &[(u32, u8, u16)]) -> Result<Self, String> {
        let prefixes: Vec<u32> = routes.iter().map(|r| r.0).collect();
        let depths: Vec<u8> = routes.iter().map(|r| r.1.max(1)).collect();
        let hops: Vec<u32> = routes.iter().map(|r| u32::from(r.2)).collect();
        // SAFETY: three arrays of `routes.len()` elements.
        let p = unsafe { shim_lpm_create(prefixes.as_ptr(), depths.as_ptr(), hops.as_ptr(), routes.len() as i32) };
        Ok(Self(created(p, "rte_lpm")?))
    }

    /// The next hop of `ip`.
    #[inline]
    pub fn lookup(&self, ip: u32) -> Option<u16> {
        let mut hop = 0u32;
        // SAFETY: a live table and a valid out pointer.
        (unsafe { shim_lpm_lookup(self.0, ip, &mut hop) } == 0).then_some(hop as u16)
    }

    /// Next hops of `ips` into `hops` (DPDK's encoding: valid flag in bit 24+).
    #[inline]
    pub fn lookup_bulk(&self, ips: &[u32], hops: &mut [u32]) {
        assert_eq!(ips.len(), hops.len());
        // SAFETY: equal lengths, checked above.
        unsafe { shim_lpm_lookup_bulk(self.0, ips.as_ptr(), hops.as_mut_ptr(), ips.len() as u32) };
    }
}

/// DPDK's rte_lpm6.
pub struct Lpm6(*mut c_void);

impl Lpm6 {
    /// A table of routes (prefix, length, next hop) with room for `tbl8s`
    /// groups of 256 entries below its 24-bit first level.
    pub fn new(routes: &[(u128, u8, u16)], tbl8s: u32) -> Result<Self, String> {
        let prefixes: Vec<[u8; 16]> = routes.iter().map(|r| r.0.to_be_bytes()).collect();
        let depths: Vec<u8> = routes.iter().map(|r| r.1.max(1)).collect();
        let hops: Vec<u32> = routes.iter().map(|r| u32::from(r.2)).collect();
        // SAFETY: three arrays of `routes.len()` elements.
        let p = unsafe { shim_lpm6_create(prefixes.as_ptr(), depths.as_ptr(), hops.as_ptr(), routes.len() as i32, tbl8s) };
        Ok(Self(created(p, "rte_lpm6")?))
    }

    /// The next hop of `ip`.
    #[inline]
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u16> {
        let mut hop = 0u32;
        // SAFETY: a live table, 16 readable bytes and a valid out pointer.
        (unsafe { shim_lpm6_lookup(self.0, ip.as_ptr(), &mut hop) } == 0).then_some(hop as u16)
    }

    /// Next hops of `ips` into `hops` (-1: no route).
    #[inline]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], hops: &mut [i32]) {
        assert_eq!(ips.len(), hops.len());
        // SAFETY: equal lengths, checked above.
        unsafe { shim_lpm6_lookup_bulk(self.0, ips.as_ptr(), hops.as_mut_ptr(), ips.len() as u32) };
    }
}

/// DPDK's rte_hash on 4-byte keys (CRC hash); values are 1-based entry indices.
pub struct Hash(*mut c_void);

impl Hash {
    /// A table holding `keys`.
    pub fn new(keys: &[u32]) -> Result<Self, String> {
        // SAFETY: an array of `keys.len()` keys.
        let p = unsafe { shim_hash_create(keys.as_ptr(), keys.len() as i32) };
        Ok(Self(created(p, "rte_hash")?))
    }

    /// The 1-based index of `key`, or 0.
    #[inline]
    pub fn lookup(&self, key: u32) -> u32 {
        // SAFETY: a live table.
        unsafe { shim_hash_lookup(self.0, key) }
    }

    /// Lookups of up to 64 keys at once.
    #[inline]
    pub fn lookup_bulk(&self, keys: &[u32], results: &mut [u32]) {
        assert!(keys.len() == results.len() && keys.len() <= 64);
        // SAFETY: equal lengths ≤ RTE_HASH_LOOKUP_BULK_MAX.
        unsafe { shim_hash_lookup_bulk(self.0, keys.as_ptr(), results.as_mut_ptr(), keys.len() as u32) };
    }
}

/// A rule as the shim takes it (host byte order; prefix lengths; proto_mask 0 = any).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AclRule {
    /// Source network.
    pub src: u32,
    /// Source prefix length.
    pub src_len: u32,
    /// Destination network.
    pub dst: u32,
    /// Destination prefix length.
    pub dst_len: u32,
    /// Protocol.
    pub proto: u8,
    /// 0xff to match `proto`, 0 for any.
    pub proto_mask: u8,
    /// Source ports, lowest.
    pub sport_lo: u16,
    /// Source ports, highest.
    pub sport_hi: u16,
    /// Destination ports, lowest.
    pub dport_lo: u16,
    /// Destination ports, highest.
    pub dport_hi: u16,
}

/// DPDK's rte_acl with one category; results are 1-based rule indices, or 0.
pub struct Acl(*mut c_void);

impl Acl {
    /// A classifier over `rules` in priority order (first wins).
    pub fn new(rules: &[AclRule]) -> Result<Self, String> {
        // SAFETY: an array of `rules.len()` rules laid out as the shim's struct.
        let p = unsafe { shim_acl_create(rules.as_ptr(), rules.len() as i32) };
        Ok(Self(created(p, "rte_acl")?))
    }

    /// The packed 5-tuple rte_acl reads.
    pub fn tuple(proto: u8, src: u32, dst: u32, sport: u16, dport: u16) -> [u8; 16] {
        let mut out = [0u8; 16];
        // SAFETY: 16 bytes ≥ TUPLE_BYTES.
        unsafe { shim_acl_tuple(out.as_mut_ptr(), proto, src, dst, sport, dport) };
        out
    }

    /// Classifies the tuples `data` points at into `results`.
    #[inline]
    pub fn classify(&self, data: &[*const u8], results: &mut [u32]) {
        assert_eq!(data.len(), results.len());
        // SAFETY: equal lengths; every pointer points at a tuple from `tuple`.
        unsafe { shim_acl_classify(self.0, data.as_ptr(), results.as_mut_ptr(), data.len() as u32) };
    }
}
