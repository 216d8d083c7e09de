//! What a router writes into the options of an IPv4 packet it forwards
//! (RFC 791 §3.1, RFC 1812 §5.3.13), as Linux does: into a record route,
//! its address on the interface the packet leaves by; into a timestamp,
//! the time, alone, after its address on the interface the packet came in
//! on, or where the option names one of the router's own addresses next
//! (the sender's three kinds); a timestamp with no room left counts the
//! hop in its overflow field, unless it is one of the third kind. A
//! packet that asks to be source-routed is refused; a malformed option is
//! found and pointed at, for a parameter problem. Options of other kinds
//! pass as they are.

use sluice_core::wire::ipv4::{self, option};

/// The most bytes of options an IPv4 header holds.
const MOST: usize = 40;

/// A router's hop, as the options of a packet it forwards take it.
pub struct Hop<'a> {
    /// Its address on the interface the packet leaves by (a record route's).
    pub out: u32,
    /// Its address on the interface the packet came in on (a timestamp's, with addresses).
    pub came_in: u32,
    /// The time: milliseconds since midnight UT.
    pub ms_of_day: u32,
    /// Whether an address is one of the router's own (a prespecified timestamp's).
    pub ours: &'a dyn Fn(u32) -> bool,
}

/// The time a timestamp option takes now: milliseconds since midnight UT.
pub fn ms_of_day() -> u32 {
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (since_epoch.as_millis() % 86_400_000) as u32
}

/// Why a packet's options stop it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// An option is malformed: its pointer (bytes from the header's
    /// start), for a parameter problem.
    Malformed(u8),
    /// It asks to be source-routed (loose or strict), which the router
    /// refuses, as Linux does by default (`accept_source_route` 0) and RFC
    /// 7126 §4.3–4.4 advise: dropped, unanswered.
    SourceRouted,
}

/// Writes each of `hops` in turn into the options of IPv4 `header` (see
/// the module documentation) and makes its checksum anew where they changed; or
/// refuses it, untouched where it asks to be source-routed.
pub fn write<T: AsRef<[u8]> + AsMut<[u8]>>(header: &mut ipv4::Header<T>, hops: &[&Hop<'_>]) -> Result<(), Refused> {
    let area: &[u8] = header.options_mut();
    let source_route = |found: Result<(usize, usize), usize>| found.is_ok_and(|(at, _)| matches!(area[at], option::LOOSE_SOURCE_ROUTE | option::STRICT_SOURCE_ROUTE));
    if ipv4::options(area).any(source_route) {
        return Err(Refused::SourceRouted);
    }
    // A malformed option may come after one already written: the checksum is made anew then too.
    let written = hops.iter().try_fold(false, |wrote, hop| Ok::<_, usize>(forward(header.options_mut(), hop)? | wrote));
    if written != Ok(false) {
        header.fill_checksum();
    }
    written.map(drop).map_err(|at| Refused::Malformed((ipv4::MIN_HEADER_LEN + at) as u8))
}

/// Writes `hop` into `options`, an IPv4 header's options area (the
/// header's checksum is the caller's to make); whether it wrote any.
/// `Err`: an option is malformed, with the offset into `options` of the
/// byte at fault; what came before it may have been written.
fn forward(options: &mut [u8], hop: &Hop<'_>) -> Result<bool, usize> {
    let mut area = [0; MOST];
    let n = options.len().min(MOST);
    area[..n].copy_from_slice(&options[..n]);
    let mut wrote = false;
    for found in ipv4::options(&area[..n]) {
        let (at, len) = found?;
        let one = &mut options[at..at + len];
        let written = match one[0] {
            option::RECORD_ROUTE => record_route(one, hop),
            option::TIMESTAMP => timestamp(one, hop),
            _ => Ok(false),
        };
        wrote |= written.map_err(|within| at + within)?;
    }
    Ok(wrote)
}

/// A record route (`one`: the option, type and length first): the
/// address out, where a slot is left; whether it wrote. `Err`: the offset
/// of the fault in it.
fn record_route(one: &mut [u8], hop: &Hop<'_>) -> Result<bool, usize> {
    // The pointer (one-based, into the option) names the next free slot.
    let pointer = usize::from(*one.get(2).ok_or(1usize)?);
    if pointer < 4 {
        return Err(2);
    }
    if pointer > one.len() {
        return Ok(false);
    }
    let slot = one.get_mut(pointer - 1..pointer + 3).ok_or(2usize)?;
    slot.copy_from_slice(&hop.out.to_be_bytes());
    one[2] += 4;
    Ok(true)
}

/// Kinds of timestamp (the flags' low four bits).
const TIMES: u8 = 0;
const ADDRESSES_AND_TIMES: u8 = 1;
const PRESPECIFIED: u8 = 3;

/// A timestamp (`one`, as [`record_route`]): the time, as its kind says,
/// where a slot is left; else one more hop in its overflow count.
fn timestamp(one: &mut [u8], hop: &Hop<'_>) -> Result<bool, usize> {
    if one.len() < 4 {
        return Err(1);
    }
    let pointer = usize::from(one[2]);
    if pointer < 5 {
        return Err(2);
    }
    let kind = one[3] & 0x0f;
    // Full. A prespecified one names who stamps it: nobody else is one over.
    if pointer > one.len() && kind == PRESPECIFIED {
        return Ok(false);
    }
    if pointer > one.len() {
        let overflow = one[3] >> 4;
        if overflow == 0x0f {
            return Err(3);
        }
        one[3] += 0x10;
        return Ok(true);
    }
    let (time, slot) = (hop.ms_of_day.to_be_bytes(), pointer - 1);
    let fits = |n: usize| slot + n <= one.len();
    let taken = match kind {
        TIMES if fits(4) => {
            one[slot..slot + 4].copy_from_slice(&time);
            4
        }
        ADDRESSES_AND_TIMES if fits(8) => {
            one[slot..slot + 4].copy_from_slice(&hop.came_in.to_be_bytes());
            one[slot + 4..slot + 8].copy_from_slice(&time);
            8
        }
        PRESPECIFIED if fits(8) => {
            let named = u32::from_be_bytes([one[slot], one[slot + 1], one[slot + 2], one[slot + 3]]);
            if !(hop.ours)(named) {
                return Ok(false);
            }
            one[slot + 4..slot + 8].copy_from_slice(&time);
            8
        }
        // A slot that runs past the option.
        TIMES | ADDRESSES_AND_TIMES | PRESPECIFIED => return Err(2),
        _ => return Err(3),
    };
    one[2] += taken;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: u32 = 0x0a00_02fe;
    const IN: u32 = 0x0a00_01fe;

    fn hop() -> Hop<'static> {
        Hop { out: OUT, came_in: IN, ms_of_day: 0x0102_0304, ours: &|a| a == OUT || a == IN }
    }

    /// A record route of `slots` addresses, `used` of them taken, padded with an end of list.
    fn record_route_option(slots: u8, used: u8) -> Vec<u8> {
        let mut o = vec![option::RECORD_ROUTE, 3 + 4 * slots, 4 + 4 * used];
        o.resize(usize::from(3 + 4 * slots), 0xaa);
        o.resize(o.len().next_multiple_of(4), option::END);
        o
    }

    #[test]
    fn a_record_route_takes_the_address_out_in_its_next_slot_and_moves_its_pointer() {
        let mut o = record_route_option(3, 1);
        forward(&mut o, &hop()).unwrap();
        assert_eq!(o[2], 12, "the pointer moves on a slot");
        assert_eq!(&o[7..11], &OUT.to_be_bytes(), "the second slot holds the address out");
        assert_eq!(&o[3..7], &[0xaa; 4], "the first stays");
        assert_eq!(&o[11..15], &[0xaa; 4], "the third waits");
    }

    #[test]
    fn a_full_record_route_passes_as_it_is() {
        let mut o = record_route_option(2, 2);
        let before = o.clone();
        assert_eq!(forward(&mut o, &hop()), Ok(false));
        assert_eq!(o, before);
    }

    #[test]
    fn a_record_route_whose_pointer_is_short_of_the_first_slot_or_splits_one_is_pointed_at() {
        let mut short = record_route_option(2, 0);
        short[2] = 3;
        assert_eq!(forward(&mut short, &hop()), Err(2));
        let mut split = record_route_option(2, 0);
        split[2] = 10;
        assert_eq!(forward(&mut split, &hop()), Err(2), "a slot from byte 10 runs past the option's 11");
    }

    #[test]
    fn each_kind_of_timestamp_takes_what_it_asks_for() {
        let time = 0x0102_0304u32.to_be_bytes();
        let mut times = vec![option::TIMESTAMP, 12, 5, TIMES, 0, 0, 0, 0, 0, 0, 0, 0];
        forward(&mut times, &hop()).unwrap();
        assert_eq!((times[2], &times[4..8]), (9, &time[..]));

        let mut with_addresses = vec![option::TIMESTAMP, 20, 5, ADDRESSES_AND_TIMES];
        with_addresses.resize(20, 0);
        forward(&mut with_addresses, &hop()).unwrap();
        assert_eq!((with_addresses[2], &with_addresses[4..8], &with_addresses[8..12]), (13, &IN.to_be_bytes()[..], &time[..]));

        let mut named = vec![option::TIMESTAMP, 20, 5, PRESPECIFIED];
        named.extend_from_slice(&OUT.to_be_bytes());
        named.extend_from_slice(&[0; 4]);
        named.extend_from_slice(&0x0a00_0201u32.to_be_bytes());
        named.extend_from_slice(&[0; 4]);
        forward(&mut named, &hop()).unwrap();
        assert_eq!((named[2], &named[8..12]), (13, &time[..]), "its own address named: stamped");
        forward(&mut named, &hop()).unwrap();
        assert_eq!((named[2], &named[16..20]), (13, &[0; 4][..]), "another's named next: left for it");
        named[2] = 21;
        assert_eq!(forward(&mut named, &hop()), Ok(false), "full: no hop over counted");
        assert_eq!(named[3], PRESPECIFIED);
    }

    #[test]
    fn a_full_timestamp_counts_the_hop_until_its_overflow_count_would_overflow() {
        let mut full = vec![option::TIMESTAMP, 8, 9, 0xe0 | TIMES, 0, 0, 0, 1];
        forward(&mut full, &hop()).unwrap();
        assert_eq!(full[3], 0xf0 | TIMES, "fifteen hops over");
        assert_eq!(forward(&mut full, &hop()), Err(3), "a sixteenth is an error");
        let mut unknown_kind = vec![option::TIMESTAMP, 8, 5, 2, 0, 0, 0, 0];
        assert_eq!(forward(&mut unknown_kind, &hop()), Err(3));
    }

    #[test]
    fn options_of_other_kinds_pass_and_a_malformed_one_is_pointed_at_past_them() {
        let mut o = vec![option::NOP, 148, 4, 0, 0, option::RECORD_ROUTE, 7, 4, 0, 0, 0, 0];
        assert_eq!(forward(&mut o, &hop()), Ok(true));
        assert_eq!(&o[..5], &[option::NOP, 148, 4, 0, 0], "a router alert passes");
        assert_eq!(&o[8..12], &OUT.to_be_bytes());
        let mut bad = vec![option::NOP, option::NOP, 148, 9, 0, 0, 0, 0];
        assert_eq!(forward(&mut bad, &hop()), Err(2), "a length past the area");
    }
}
