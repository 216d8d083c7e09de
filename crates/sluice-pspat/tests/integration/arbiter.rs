//! The arbiter on a virtual clock: the link's rate, weighted shares under
//! overload, every packet accounted for.

use sluice_pspat::aqm::{Aqm, QueueManagement};
use sluice_core::codel::CoDelConfig;
use sluice_pspat::fq_codel::FqCoDelConfig;
use sluice_pspat::entry::ECN;
use sluice_pspat::{Arbiter, Drr, Entry, Link, Priority, Scheduler, Wf2qPlus};

const FRAME: u16 = 1500;

#[test]
fn an_entry_survives_the_mailbox_word() {
    for e in [Entry { flow: 0, len: 0, id: 0 }, Entry { flow: u16::MAX, len: u16::MAX, id: u32::MAX - 1 }, Entry { flow: 3, len: 60, id: 77 }] {
        assert_ne!(e.pack(), 0);
        assert_eq!(Entry::unpack(e.pack()), e);
    }
}

/// Two clients, one per flow, keep their mailboxes full of 1500-byte
/// frames; the arbiter scans every `step_ns` of virtual time over a link
/// of `bits_per_s`. Returns bytes sent per flow in each 10 ms window.
fn overload<S: Scheduler<u32>>(scheduler: S, bits_per_s: f64, windows: usize) -> Vec<[u64; 2]> {
    let (mut arbiter, mut clients) = Arbiter::new(scheduler, Link { bits_per_s, overhead: 24 }, 2, 256, 64);
    let step_ns = 10_000;
    let mut out = vec![[0u64; 2]; windows];
    let mut id = 0u32;
    for t in 0..(windows as u64 * 10_000_000 / step_ns) {
        for (flow, c) in clients.iter_mut().enumerate() {
            while c.send(Entry { flow: flow as u16, len: FRAME, id }) {
                id = (id + 1) % 1_000_000;
            }
        }
        let window = (t * step_ns / 10_000_000) as usize;
        arbiter.scan(t * step_ns, &mut |e| out[window][usize::from(e.flow)] += u64::from(e.len), &mut |_| {});
    }
    out
}

#[test]
fn under_overload_each_flow_gets_its_weighted_share_in_every_window_at_the_links_rate() {
    let rate = 1e9;
    for (name, windows) in [("drr", overload(Drr::new(&[10, 1], u32::from(FRAME), 64), rate, 20)), ("wf2q+", overload(Wf2qPlus::new(&[10, 1], 64), rate, 20))] {
        for (i, w) in windows.iter().enumerate() {
            let total = (w[0] + w[1]) as f64;
            // 1 Gbit/s for 10 ms with 24 bytes of framing per 1500-byte frame.
            let expected = rate / 8.0 * 0.01 * 1500.0 / 1524.0;
            assert!((total - expected).abs() <= 2.0 * 1500.0, "{name} window {i}: {total} bytes, the link carries {expected:.0}");
            let share = w[0] as f64 / total;
            assert!((share - 10.0 / 11.0).abs() <= 0.05 * 10.0 / 11.0, "{name} window {i}: share {share:.3} for weight 10 of 11");
        }
    }
}

#[test]
fn every_packet_offered_is_sent_dropped_or_still_queued() {
    // Three flows offering 3, 6 and 9 packets of 1000 bytes a µs to a
    // 100 Mbit/s link: flow queues of 8 overflow.
    let (mut arbiter, mut clients) = Arbiter::new(Drr::new(&[1, 1, 1], 1500, 8), Link { bits_per_s: 1e8, overhead: 24 }, 3, 64, 16);
    let (mut offered, mut sent, mut dropped, mut drained) = (0u64, [0u64; 3], [0u64; 3], 0u64);
    let mut t = 0u64;
    while t < 2_000_000 {
        for (flow, c) in clients.iter_mut().enumerate() {
            for _ in 0..(flow + 1) * 3 {
                offered += u64::from(c.send(Entry { flow: flow as u16, len: 1000, id: 1 }));
            }
        }
        drained += arbiter.scan(t, &mut |e| sent[usize::from(e.flow)] += 1, &mut |e| dropped[usize::from(e.flow)] += 1).drained;
        t += 1000;
    }
    // Stop offering; scan until the mailboxes and queues are empty.
    while drained < offered || !arbiter.scheduler().is_empty() {
        drained += arbiter.scan(t, &mut |e| sent[usize::from(e.flow)] += 1, &mut |e| dropped[usize::from(e.flow)] += 1).drained;
        t += 1000;
    }
    assert!(dropped.iter().sum::<u64>() > 0, "the link is overloaded: some flow queue overflowed");
    for (f, &n) in dropped.iter().enumerate() {
        assert_eq!(arbiter.scheduler().drops(f), n, "flow {f}'s drops counted for it");
    }
    assert_eq!(offered, sent.iter().sum::<u64>() + dropped.iter().sum::<u64>(), "offered = sent + dropped");
    // The link's 100 Mbit/s, over the 2 ms of offered load and the drain after.
    let wire_bytes = sent.iter().sum::<u64>() * 1024;
    assert!(wire_bytes as f64 <= 1e8 / 8.0 * t as f64 * 1e-9 + 1024.0, "{wire_bytes} bytes in {t} ns");
}

/// The flow of the CoDel tests at millisecond `ms`: one 1500-byte frame,
/// and ten more at each whole second (1 % over a 12 Mbit/s link), offered
/// with `flags`, then a scan; each packet sent goes to `sent` with its
/// sojourn time (ns) and whether it was marked, each dropped is counted.
fn overloaded_ms(arbiter: &mut Arbiter<Priority<u32>>, client: &mut sluice_pspat::Client, ms: u64, flags: u16, queued_at: &mut std::collections::HashMap<u32, u64>, sent: &mut impl FnMut(u64, bool), dropped: &mut u64) {
    let now = ms * 1_000_000;
    for _ in 0..(1 + u64::from(ms.is_multiple_of(1000)) * 10) {
        let id = queued_at.len() as u32;
        assert!(client.send(Entry { flow: flags, len: FRAME, id }));
        queued_at.insert(id, now);
    }
    arbiter.scan(now, &mut |e: Entry| sent(now - queued_at[&e.id], e.flow & ECN != 0), &mut |_| *dropped += 1);
}

#[test]
fn codel_keeps_a_class_s_queue_near_its_target_where_tail_drop_fills_it() {
    // One flow of 1500-byte frames at 1 % over a 12 Mbit/s link (1 000
    // frames a second, 1 010 offered), queue of 1 000: the sojourn time of
    // the last packets sent after 8 s, without CoDel and with it (target 5 ms).
    let run = |codel: Option<CoDelConfig>, ect: bool| {
        let (arbiter, mut clients) = Arbiter::new(Priority::fifo(1, 1000), Link { bits_per_s: 12e6, overhead: 0 }, 1, 4096, 64);
        let mut arbiter = arbiter.with_aqm(Aqm::new(&[codel.map_or(QueueManagement::TailDrop, QueueManagement::CoDel)], 1000), 32);
        let mut queued_at = std::collections::HashMap::new();
        let (mut sojourn_ns, mut dropped, mut marked) = (0u64, 0u64, 0u64);
        for ms in 0..8_000u64 {
            let mut sent = |sojourn, was_marked| {
                sojourn_ns = sojourn;
                marked += u64::from(was_marked);
            };
            overloaded_ms(&mut arbiter, &mut clients[0], ms, if ect { ECN } else { 0 }, &mut queued_at, &mut sent, &mut dropped);
        }
        (sojourn_ns, dropped, marked)
    };
    let (tail, tail_drops, _) = run(None, false);
    let (codel, codel_drops, none_marked) = run(Some(CoDelConfig::default()), false);
    assert!(tail > 70_000_000 && tail_drops == 0, "tail drop: the queue grows by 10 frames a second: {tail} ns");
    assert!(codel < 20_000_000 && codel_drops > 0 && none_marked == 0, "CoDel: {codel} ns, {codel_drops} dropped");
    // ECN-capable packets are marked instead of dropped. A marked packet
    // still takes its turn on the link: these senders, which do not slow
    // down when marked (as TCP does), keep the queue as long as tail drop's.
    let (ecn, ecn_drops, marks) = run(Some(CoDelConfig::default()), true);
    assert!(ecn > 70_000_000 && ecn_drops == 0 && marks > codel_drops, "ECN: {ecn} ns, {marks} marked, {ecn_drops} dropped");
    let (_, not_asked, unmarked) = run(Some(CoDelConfig { ecn: false, ..CoDelConfig::default() }), true);
    assert!(not_asked > 0 && unmarked == 0, "ECN off: dropped, not marked");
}

#[test]
fn codel_settings_set_while_it_runs_hold_from_then_on_with_the_queue_kept() {
    // The flow above, ECN-capable, under CoDel (target 5 ms, marking off)
    // for 4 s, then a target of 50 ms for 8 s, then marking on for 2 s;
    // per phase, the last sojourn time and the drops and marks.
    let (arbiter, mut clients) = Arbiter::new(Priority::fifo(1, 1000), Link { bits_per_s: 12e6, overhead: 0 }, 1, 4096, 64);
    let start = CoDelConfig { ecn: false, ..CoDelConfig::default() };
    let mut arbiter = arbiter.with_aqm(Aqm::new(&[QueueManagement::CoDel(start)], 1000), 32);
    let phases = [(4_000u64, start), (12_000, CoDelConfig { target_us: 50_000, interval_us: 500_000, ecn: false }), (14_000, CoDelConfig { target_us: 50_000, interval_us: 500_000, ecn: true })];
    let mut queued_at = std::collections::HashMap::new();
    let mut seen = Vec::new();
    let mut ms = 0;
    for (end, codel) in phases {
        arbiter.parts_mut().2.set_codel(&[Some(codel)]);
        let (mut sojourn_ns, mut dropped, mut marked) = (0u64, 0u64, 0u64);
        while ms < end {
            let mut sent = |sojourn, was_marked| {
                sojourn_ns = sojourn;
                marked += u64::from(was_marked);
            };
            overloaded_ms(&mut arbiter, &mut clients[0], ms, ECN, &mut queued_at, &mut sent, &mut dropped);
            ms += 1;
        }
        seen.push((sojourn_ns, dropped, marked));
    }
    let [(first, first_drops, first_marks), (wider, _, wider_marks), (_, marking_drops, marks)] = seen[..] else { unreachable!() };
    assert!(first < 20_000_000 && first_drops > 0 && first_marks == 0, "5 ms, no ECN: {:?}", seen[0]);
    assert!((40_000_000..120_000_000).contains(&wider) && wider_marks == 0, "50 ms: the queue grows to the new target, {:?}", seen[1]);
    assert!(marking_drops == 0 && marks > 0, "ECN on: marked, not dropped, {:?}", seen[2]);
}

#[test]
fn fq_codel_lets_a_sparse_flow_pass_a_bulk_one_that_codel_keeps_at_its_target() {
    // A bulk flow of 1500-byte frames 1 % over a 12 Mbit/s link, and a
    // ping (100-byte frames, 10 a second) in the same class of 1 000: the
    // ping's longest sojourn time after the first 2 s, under each
    // management. The handles carry their flow's hash from bit 16 up.
    let run = |aqm: QueueManagement| {
        let (arbiter, mut clients) = Arbiter::new(Priority::fifo(1, 1000), Link { bits_per_s: 12e6, overhead: 0 }, 1, 4096, 64);
        let mut arbiter = arbiter.with_aqm(Aqm::new(&[aqm], 1000), 16);
        let (mut queued_at, mut ping_ns, mut dropped) = (std::collections::HashMap::new(), 0u64, 0u64);
        let (bulk, ping) = (1u32 << 16, 2u32 << 16);
        for ms in 0..8_000u32 {
            let now = u64::from(ms) * 1_000_000;
            let mut offer = |e: Entry| {
                assert!(clients[0].send(e));
                queued_at.insert(e.id & 0xffff, now);
            };
            for i in 0..(1 + u32::from(ms % 1000 == 0) * 10) {
                offer(Entry { flow: 0, len: FRAME, id: bulk | ((ms * 11 + i) % 50_000) });
            }
            if ms % 100 == 0 {
                offer(Entry { flow: 0, len: 100, id: ping | (50_000 + ms / 100) });
            }
            let mut sent = |e: Entry| {
                if e.id >= 50_000 && ms >= 2_000 {
                    ping_ns = ping_ns.max(now - queued_at[&e.id]);
                }
            };
            arbiter.scan(now, &mut sent, &mut |e: Entry| {
                assert!(e.id < 50_000, "the ping is never dropped");
                dropped += 1;
            });
        }
        (ping_ns, dropped)
    };
    let (tail, _) = run(QueueManagement::TailDrop);
    let (codel, _) = run(QueueManagement::CoDel(CoDelConfig::default()));
    let (fq, fq_drops) = run(QueueManagement::FqCoDel(FqCoDelConfig::default()));
    assert!(tail > 70_000_000, "tail drop: the ping waits behind the bulk queue: {tail} ns");
    assert!(codel > 4_000_000 && codel < 20_000_000, "CoDel: the ping waits the bulk queue's target: {codel} ns");
    assert!(fq <= 2_000_000 && fq_drops > 0, "FQ-CoDel: the ping waits at most the frame on the link and its own turn: {fq} ns, {fq_drops} bulk frames dropped");
}

#[test]
fn a_full_fq_codel_class_takes_the_arrival_and_drops_its_fattest_flow_s_head_as_its_own_choice() {
    // A class of 4 packets behind a link that sends nothing yet: flow 1
    // fills it, then flow 2's packet arrives (the hash from bit 16 up).
    let (arbiter, mut clients) = Arbiter::new(Priority::fifo(1, 4), Link { bits_per_s: 1.0, overhead: 0 }, 1, 64, 64);
    let mut arbiter = arbiter.with_aqm(Aqm::new(&[QueueManagement::FqCoDel(FqCoDelConfig::default())], 4), 16);
    for id in 0..4 {
        assert!(clients[0].send(Entry { flow: 0, len: FRAME, id: 1 << 16 | id }));
    }
    assert!(clients[0].send(Entry { flow: 0, len: 64, id: 2 << 16 | 99 }));
    let mut dropped = Vec::new();
    arbiter.scan(1, &mut |_| {}, &mut |e: Entry| dropped.push(e));
    assert_eq!(dropped, [Entry { flow: sluice_pspat::entry::MANAGED, len: FRAME, id: 0 }], "flow 1's head, flagged as the management's drop");
}
