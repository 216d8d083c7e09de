//! An interface's neighbour table: the MAC of each IPv4 or IPv6 neighbour
//! and where its resolution stands (RFC 4861 §7.3's states, as Linux keeps
//! them), read by the workers without locks while they forward.
//!
//! Each entry is a slot of atomics guarded by a sequence number (a
//! seqlock): a writer makes the number odd, writes, and makes it even
//! again; a reader reads the number, the fields and the number again, and
//! keeps what it read only if the number was even and did not move.
//! Readers never wait. Writers are rare (a learned or resolved neighbour,
//! a request sent, an operator's entry) and take turns through a flag;
//! a worker that finds the flag taken tries again a bounded number of
//! times and otherwise leaves the write to its next round (see
//! [`NeighborTable::try_write`]).
//!
//! Slots are found by open addressing over a fixed array (a power of two,
//! linear probing within [`PROBE_WINDOW`]); a deleted entry leaves a
//! tombstone that later inserts reuse. When a window is full, an insert
//! takes the slot of its least recently confirmed dynamic entry.
//!
//! Addresses of both families share the table: an IPv4 address as its
//! IPv4-mapped IPv6 form (`::ffff:a.b.c.d`).

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};

use sluice_core::wire::ethernet::Mac;

/// Slots an insert or a lookup looks at from an address's home slot.
pub const PROBE_WINDOW: usize = 16;

/// The key of an IPv4 address: its IPv4-mapped IPv6 form.
pub fn v4_key(address: u32) -> u128 {
    0xffff_0000_0000 | address as u128
}

/// How an entry came to be and where its resolution stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// A request went out, no answer yet; packets to it wait.
    Incomplete = 1,
    /// Answered, or heard from, within the reachable time.
    Reachable = 2,
    /// Known but not confirmed for longer than the reachable time (or
    /// learned unasked): used, and probed again when it is.
    Stale = 3,
    /// Its requests went unanswered: packets to it are dropped until the
    /// retransmit time has passed, when a packet asks again.
    Failed = 4,
    /// Set by the description or the operator: never aged, never replaced by what is heard.
    Static = 5,
}

const FREE: u8 = 0;
const DELETED: u8 = 6;

impl State {
    fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            1 => Self::Incomplete,
            2 => Self::Reachable,
            3 => Self::Stale,
            4 => Self::Failed,
            5 => Self::Static,
            _ => return None,
        })
    }

    /// Its name as reports and the API give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Incomplete => "incomplete",
            Self::Reachable => "reachable",
            Self::Stale => "stale",
            Self::Failed => "failed",
            Self::Static => "static",
        }
    }
}

/// Timers of resolution, as Linux's neighbour settings of the same names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    /// An entry is reachable this long after its last confirmation (ns; Linux: base_reachable_time, 30 s).
    pub reachable_ns: u64,
    /// Between two requests for one address (ns; Linux: retrans_time, 1 s).
    pub retrans_ns: u64,
    /// Requests for one address before it is failed (Linux: mcast_solicit, 3).
    pub probes: u8,
}

impl Default for Timers {
    fn default() -> Self {
        Self { reachable_ns: 30_000_000_000, retrans_ns: 1_000_000_000, probes: 3 }
    }
}

/// One entry as a reader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The address (IPv4 as [`v4_key`]).
    pub address: u128,
    /// Its MAC (zero while incomplete).
    pub mac: Mac,
    /// Its state, the reachable time applied at the reading.
    pub state: State,
    /// When it was last confirmed reachable (ns since the run's origin; 0: never).
    pub confirmed_ns: u64,
    /// When its last request or probe went out (ns; for a learned entry, when it was learned).
    pub probed_ns: u64,
    /// Requests or probes sent since it was last confirmed.
    pub probes: u8,
}

/// What a worker is to do with a packet to an address (see [`NeighborTable::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Send it to this MAC.
    Send(Mac),
    /// Send it to this MAC, and a unicast probe to the MAC too (a stale entry in use).
    SendAndProbe(Mac),
    /// Hold it, and send a request (broadcast, or multicast for IPv6) now.
    HoldAndAsk,
    /// Hold it: a request is out.
    Hold,
    /// Drop it: the address did not answer its requests.
    Unreachable,
    /// Hold it: the table was being written; ask again at the next check.
    Busy,
}

/// Counters of a table (cumulative), read by the control side.
#[derive(Default)]
pub struct Counters {
    /// Requests, solicitations and probes sent.
    pub requests: AtomicU64,
    /// Entries confirmed that were not reachable (incomplete, stale, failed).
    pub resolved: AtomicU64,
    /// Entries learned unasked (a request, a solicitation, a gratuitous ARP, an unsolicited advertisement).
    pub learned: AtomicU64,
    /// Resolutions that ended unanswered.
    pub failed: AtomicU64,
    /// Packets dropped while held: their hold queue full, or the address unreachable (pkt).
    pub hold_dropped: AtomicU64,
    /// Dynamic entries pushed out of a full probe window.
    pub evicted: AtomicU64,
}

/// One slot: a sequence number and the entry's fields.
#[derive(Default)]
struct Slot {
    seq: AtomicU32,
    address_hi: AtomicU64,
    address_lo: AtomicU64,
    /// MAC in the low 48 bits, the state in the next 8, the probes sent in the top 8.
    mac_state: AtomicU64,
    confirmed_ns: AtomicU64,
    probed_ns: AtomicU64,
}

/// A slot's fields, read whole or written whole.
#[derive(Clone, Copy, Debug)]
struct Fields {
    address: u128,
    mac: Mac,
    state: u8,
    probes: u8,
    confirmed_ns: u64,
    probed_ns: u64,
}

impl Fields {
    fn packed(&self) -> u64 {
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(&self.mac);
        word[6] = self.state;
        word[7] = self.probes;
        u64::from_le_bytes(word)
    }

    fn live(&self) -> bool {
        !matches!(self.state, FREE | DELETED)
    }
}

impl Slot {
    /// The slot's fields, read consistently (`None`: a writer was at it).
    #[inline]
    fn read(&self) -> Option<Fields> {
        let seq = self.seq.load(Ordering::Acquire);
        if seq & 1 == 1 {
            return None;
        }
        let address = (self.address_hi.load(Ordering::Relaxed) as u128) << 64 | self.address_lo.load(Ordering::Relaxed) as u128;
        let word = self.mac_state.load(Ordering::Relaxed).to_le_bytes();
        let confirmed_ns = self.confirmed_ns.load(Ordering::Relaxed);
        let probed_ns = self.probed_ns.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != seq {
            return None;
        }
        Some(Fields { address, mac: word[..6].try_into().expect("six bytes"), state: word[6], probes: word[7], confirmed_ns, probed_ns })
    }

    /// Writes the fields whole; only the holder of the table's write flag calls this.
    fn write(&self, f: Fields) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.address_hi.store((f.address >> 64) as u64, Ordering::Relaxed);
        self.address_lo.store(f.address as u64, Ordering::Relaxed);
        self.mac_state.store(f.packed(), Ordering::Relaxed);
        self.confirmed_ns.store(f.confirmed_ns, Ordering::Relaxed);
        self.probed_ns.store(f.probed_ns, Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}

/// Times a reader tries a slot that a writer is at before it gives up on it.
const READ_TRIES: usize = 64;
/// Times a worker tries for the write flag before it leaves the write for later.
const WRITE_TRIES: usize = 256;

/// An interface's neighbour table (see the module documentation).
pub struct NeighborTable {
    slots: Box<[Slot]>,
    writing: AtomicBool,
    /// Bumped by every write: a worker's cached answer holds while it has not moved.
    version: AtomicU64,
    timers: Timers,
    /// What it counted.
    pub counters: Counters,
}

/// The table's write flag, held: what one writer does at a time.
pub struct Writer<'a> {
    table: &'a NeighborTable,
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.table.version.fetch_add(1, Ordering::Release);
        self.table.writing.store(false, Ordering::Release);
    }
}

impl NeighborTable {
    /// A table of at least `capacity` entries (a power of two, at least
    /// [`PROBE_WINDOW`]) with `timers`.
    pub fn new(capacity: usize, timers: Timers) -> Self {
        let n = capacity.max(PROBE_WINDOW).next_power_of_two();
        Self { slots: (0..n).map(|_| Slot::default()).collect(), writing: AtomicBool::new(false), version: AtomicU64::new(0), timers, counters: Counters::default() }
    }

    /// Its timers.
    pub fn timers(&self) -> Timers {
        self.timers
    }

    /// Entries it holds at most.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// A number that moves whenever an entry is written: an answer cached
    /// at one version holds while the table is at it.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn home(&self, address: u128) -> usize {
        // Fibonacci hashing of the folded address: neighbours on a subnet differ in the low bits.
        let folded = (address as u64) ^ ((address >> 64) as u64);
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & (self.slots.len() - 1)
    }

    fn window(&self, address: u128) -> impl Iterator<Item = &Slot> {
        let (home, mask) = (self.home(address), self.slots.len() - 1);
        (0..PROBE_WINDOW).map(move |i| &self.slots[(home + i) & mask])
    }

    /// The entry of `address` as it stands at `now_ns`, if there is one.
    /// Never waits: `None` also when a writer kept its slot busy.
    pub fn lookup(&self, address: u128, now_ns: u64) -> Option<Entry> {
        for slot in self.window(address) {
            let f = (0..READ_TRIES).find_map(|_| slot.read())?;
            if f.state == FREE {
                return None;
            }
            if f.live() && f.address == address {
                return Some(self.entry(f, now_ns));
            }
        }
        None
    }

    fn entry(&self, f: Fields, now_ns: u64) -> Entry {
        let mut state = State::from_bits(f.state).expect("a live entry");
        if state == State::Reachable && now_ns.saturating_sub(f.confirmed_ns) >= self.timers.reachable_ns {
            state = State::Stale;
        }
        Entry { address: f.address, mac: f.mac, state, confirmed_ns: f.confirmed_ns, probed_ns: f.probed_ns, probes: f.probes }
    }

    /// Every entry, as it stands at `now_ns`.
    pub fn entries(&self, now_ns: u64) -> Vec<Entry> {
        self.slots.iter().filter_map(|s| (0..READ_TRIES).find_map(|_| s.read())).filter(Fields::live).map(|f| self.entry(f, now_ns)).collect()
    }

    /// The write flag, once it is free: for the control side, which may wait.
    pub fn write(&self) -> Writer<'_> {
        loop {
            if let Some(w) = self.try_write() {
                return w;
            }
            std::thread::yield_now();
        }
    }

    /// The write flag, if it comes free within a bounded number of tries:
    /// for workers, which do not wait.
    pub fn try_write(&self) -> Option<Writer<'_>> {
        for _ in 0..WRITE_TRIES {
            if self.writing.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return Some(Writer { table: self });
            }
            std::hint::spin_loop();
        }
        None
    }

    /// What to do with a packet to `address` at `now_ns` (see
    /// [`Resolution`]): reads, and writes only where a request is due
    /// (the first, a retry, a stale entry's probe) or a resolution fails.
    pub fn resolve(&self, address: u128, now_ns: u64) -> Resolution {
        let due = |e: &Entry| now_ns.saturating_sub(e.probed_ns) >= self.timers.retrans_ns;
        match self.lookup(address, now_ns) {
            Some(e) if matches!(e.state, State::Reachable | State::Static) => return Resolution::Send(e.mac),
            Some(e) if e.state == State::Stale && !due(&e) => return Resolution::Send(e.mac),
            Some(e) if e.state == State::Incomplete && !due(&e) => return Resolution::Hold,
            Some(e) if e.state == State::Failed && !due(&e) => return Resolution::Unreachable,
            _ => {}
        }
        match self.try_write() {
            Some(w) => w.next_request(address, now_ns),
            None => Resolution::Busy,
        }
    }

    /// Notes what was heard of `address`: its `mac`, `confirmed` (an
    /// answer to a request: reachable) or not (learned unasked: stale,
    /// unless it was reachable at that MAC). `create`: whether an address
    /// the table lacks is added (else only one it has is updated). Static
    /// entries stay as they are. False when the write flag stayed taken
    /// (the worker leaves what it heard).
    pub fn heard(&self, address: u128, mac: Mac, confirmed: bool, create: bool, now_ns: u64) -> bool {
        match self.try_write() {
            Some(w) => {
                w.heard(address, mac, confirmed, create, now_ns);
                true
            }
            None => false,
        }
    }
}

impl Writer<'_> {
    /// The slot of `address` and its fields, or where it would go: the
    /// first tombstone or free slot of its window, else the window's least
    /// recently confirmed dynamic entry (`None`: all static).
    fn place(&self, address: u128) -> Option<(&Slot, Option<Fields>)> {
        let table = self.table;
        let mut vacant = None;
        let mut oldest: Option<(&Slot, u64)> = None;
        for slot in table.window(address) {
            let f = slot.read().expect("only the writer writes");
            if f.live() && f.address == address {
                return Some((slot, Some(f)));
            }
            match f.state {
                FREE => return Some((vacant.unwrap_or(slot), None)),
                DELETED => vacant = vacant.or(Some(slot)),
                s if s != State::Static as u8 && oldest.is_none_or(|(_, t)| f.confirmed_ns < t) => oldest = Some((slot, f.confirmed_ns)),
                _ => {}
            }
        }
        if vacant.is_some() {
            return vacant.map(|slot| (slot, None));
        }
        let (slot, _) = oldest?;
        table.counters.evicted.fetch_add(1, Ordering::Relaxed);
        Some((slot, None))
    }

    /// [`NeighborTable::resolve`] under the flag: the request due, if one is.
    fn next_request(self, address: u128, now_ns: u64) -> Resolution {
        let table = self.table;
        let Some((slot, found)) = self.place(address) else { return Resolution::Unreachable };
        let counters = &table.counters;
        let asked = |f: Fields, state: State, probes: u8| {
            slot.write(Fields { state: state as u8, probes, probed_ns: now_ns, ..f });
            counters.requests.fetch_add(1, Ordering::Relaxed);
        };
        let fresh = Fields { address, mac: [0; 6], state: FREE, probes: 0, confirmed_ns: 0, probed_ns: 0 };
        let Some(f) = found else {
            asked(fresh, State::Incomplete, 1);
            return Resolution::HoldAndAsk;
        };
        let e = table.entry(f, now_ns);
        let due = now_ns.saturating_sub(e.probed_ns) >= table.timers.retrans_ns;
        let more = e.probes < table.timers.probes;
        match e.state {
            State::Reachable | State::Static => Resolution::Send(e.mac),
            State::Stale if !due => Resolution::Send(e.mac),
            // A stale entry in use: probe its MAC while probes remain, then ask anew.
            State::Stale if more => {
                asked(f, State::from_bits(f.state).expect("live"), e.probes + 1);
                Resolution::SendAndProbe(e.mac)
            }
            State::Incomplete if !due => Resolution::Hold,
            State::Incomplete if more => {
                asked(f, State::Incomplete, e.probes + 1);
                Resolution::HoldAndAsk
            }
            State::Incomplete => {
                slot.write(Fields { state: State::Failed as u8, probed_ns: now_ns, ..f });
                counters.failed.fetch_add(1, Ordering::Relaxed);
                Resolution::Unreachable
            }
            State::Failed if !due => Resolution::Unreachable,
            State::Stale | State::Failed => {
                asked(fresh, State::Incomplete, 1);
                Resolution::HoldAndAsk
            }
        }
    }

    /// See [`NeighborTable::heard`].
    pub fn heard(&self, address: u128, mac: Mac, confirmed: bool, create: bool, now_ns: u64) {
        let table = self.table;
        let Some((slot, found)) = self.place(address) else { return };
        let known = found.map(|f| table.entry(f, now_ns));
        match known {
            Some(e) if e.state == State::Static => return,
            None if !create => return,
            Some(e) if !confirmed && e.state == State::Reachable && e.mac == mac => return,
            _ => {}
        }
        // Counted: a new neighbour learned; a pending or unconfirmed one resolved.
        let counter = match known {
            None => Some(&table.counters.learned),
            Some(e) if e.state == State::Incomplete || (confirmed && e.state != State::Reachable) => Some(&table.counters.resolved),
            Some(_) => None,
        };
        if let Some(c) = counter {
            c.fetch_add(1, Ordering::Relaxed);
        }
        let fields = if confirmed {
            Fields { address, mac, state: State::Reachable as u8, probes: 0, confirmed_ns: now_ns, probed_ns: now_ns }
        } else {
            let confirmed_ns = known.map_or(0, |e| e.confirmed_ns);
            Fields { address, mac, state: State::Stale as u8, probes: 0, confirmed_ns, probed_ns: now_ns }
        };
        slot.write(fields);
    }

    /// Sets a static entry, replacing what the address had; false when its
    /// window holds only static entries.
    pub fn set_static(&self, address: u128, mac: Mac) -> bool {
        match self.place(address) {
            Some((slot, _)) => {
                slot.write(Fields { address, mac, state: State::Static as u8, probes: 0, confirmed_ns: 0, probed_ns: 0 });
                true
            }
            None => false,
        }
    }

    /// Removes `address`'s entry; false when it had none.
    pub fn remove(&self, address: u128) -> bool {
        match self.place(address) {
            Some((slot, Some(f))) => {
                slot.write(Fields { state: DELETED, ..f });
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;
    const A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
    const B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

    fn table() -> NeighborTable {
        NeighborTable::new(64, Timers::default())
    }

    #[test]
    fn an_address_is_asked_for_a_retransmit_time_apart_then_failed_then_asked_again() {
        let t = table();
        let key = v4_key(0x0a00_0001);
        let at = |s: f64| (s * S as f64) as u64;
        let steps: Vec<Resolution> = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 3.5, 4.0].iter().map(|&s| t.resolve(key, at(s))).collect();
        use Resolution::*;
        assert_eq!(steps, [HoldAndAsk, Hold, HoldAndAsk, Hold, HoldAndAsk, Unreachable, Unreachable, HoldAndAsk]);
        assert_eq!(t.counters.requests.load(Ordering::Relaxed), 4);
        assert_eq!(t.counters.failed.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn an_answer_makes_it_reachable_until_the_reachable_time_then_it_is_used_stale_and_probed() {
        let t = table();
        let key = 0x2001_0db8_0000_0000_0000_0000_0000_0001;
        assert_eq!(t.resolve(key, 0), Resolution::HoldAndAsk);
        assert!(t.heard(key, A, true, false, S / 10));
        assert_eq!(t.resolve(key, S), Resolution::Send(A));
        assert_eq!(t.lookup(key, 31 * S).unwrap().state, State::Stale);
        assert_eq!(t.resolve(key, 31 * S), Resolution::SendAndProbe(A));
        assert_eq!(t.resolve(key, 31 * S + 1), Resolution::Send(A), "one probe a retransmit time");
        assert!(t.heard(key, A, true, false, 32 * S));
        assert_eq!(t.lookup(key, 32 * S).unwrap().state, State::Reachable);
        assert_eq!(t.counters.resolved.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn what_is_heard_unasked_is_learned_stale_and_a_static_entry_never_moves() {
        let t = table();
        assert!(t.heard(v4_key(5), A, false, false, 0) && t.lookup(v4_key(5), 0).is_none(), "not created unless asked to");
        t.heard(v4_key(5), A, false, true, 0);
        assert_eq!(t.lookup(v4_key(5), 0).map(|e| (e.mac, e.state)), Some((A, State::Stale)));
        assert!(t.write().set_static(v4_key(6), B));
        t.heard(v4_key(6), A, true, true, 0);
        assert_eq!(t.lookup(v4_key(6), 100 * S).map(|e| (e.mac, e.state)), Some((B, State::Static)));
        assert!(t.write().remove(v4_key(6)) && t.lookup(v4_key(6), 0).is_none());
        t.heard(v4_key(6), A, false, true, 0);
        assert_eq!(t.lookup(v4_key(6), 0).map(|e| e.mac), Some(A), "a tombstone's slot is taken again");
    }

    #[test]
    fn a_full_window_gives_its_least_recently_confirmed_dynamic_entry_to_a_new_one() {
        let t = NeighborTable::new(16, Timers::default());
        for i in 0..16u32 {
            t.heard(v4_key(i), A, true, true, u64::from(i) + 1);
        }
        t.heard(v4_key(100), B, true, true, 50);
        assert!(t.lookup(v4_key(0), 60).is_none(), "the oldest made room");
        assert_eq!(t.lookup(v4_key(100), 60).map(|e| e.mac), Some(B));
        assert_eq!(t.counters.evicted.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn readers_see_an_entry_whole_while_a_writer_rewrites_it() {
        let t = std::sync::Arc::new(table());
        let key = v4_key(7);
        t.heard(key, B, true, true, 0);
        let writer = {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..200_000u64 {
                    t.heard(key, if i % 2 == 0 { B } else { A }, true, true, i);
                }
            })
        };
        let mut seen = 0;
        while !writer.is_finished() {
            if let Some(e) = t.lookup(key, 0) {
                // Each write pairs B with an even time and A with an odd one: a read that mixed two writes breaks the pair.
                assert_eq!(e.mac == B, e.confirmed_ns % 2 == 0, "fields of two writes: {e:?}");
                assert_eq!(e.address, key);
                seen += 1;
            }
        }
        writer.join().unwrap();
        assert!(seen > 0);
    }
}
