//! The arbiter on its own thread and the lock-based scheduler, with real
//! client threads: nothing lost or invented, an idle arbiter wakes for a
//! packet, and the lock-based scheduler shares a link by weight on a
//! virtual clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_pspat::{Arbiter, ArbiterThread, Client, Drr, Entry, Pace, Link, Scheduler};

const UNLIMITED: Link = Link { bits_per_s: f64::INFINITY, overhead: 24 };

/// Runs `offer` for each client on a thread of its own (its flow is its
/// index); returns the packets they offered in all.
fn each_on_its_thread(clients: Vec<Client>, offer: impl Fn(u16, &mut Client) -> u64 + Copy + Send + 'static) -> u64 {
    let handles: Vec<_> = clients.into_iter().enumerate().map(|(flow, mut client)| std::thread::spawn(move || offer(flow as u16, &mut client))).collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

#[test]
fn every_packet_clients_hand_the_arbiter_thread_is_sent_dropped_or_still_held() {
    // Flow queues of 16 behind a 100 Mbit/s link: some packets are refused.
    let (arbiter, clients) = Arbiter::new(Drr::new(&[1, 2, 3], 1500, 16), Link { bits_per_s: 1e8, overhead: 24 }, 3, 256, 32);
    let (sent, dropped) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (s, d) = (sent.clone(), dropped.clone());
    let clock = quanta::Clock::new();
    let thread = ArbiterThread::spawn(arbiter, clock.clone(), clock.raw(), None, Pace::default(), (move |_: Entry, _| {
        s.fetch_add(1, Ordering::Relaxed);
    }, move |_| {
        d.fetch_add(1, Ordering::Relaxed);
    }));
    let offered = each_on_its_thread(clients, |flow, client| {
        let mut offered = 0u64;
        for id in 0..20_000u32 {
            offered += u64::from(client.send(Entry { flow, len: 1000, id }));
        }
        offered
    });
    std::thread::sleep(Duration::from_millis(20));
    let (arbiter, stats) = thread.stop();
    let (sent, dropped) = (sent.load(Ordering::Relaxed), dropped.load(Ordering::Relaxed));
    assert!(dropped > 0, "the link is overloaded");
    assert_eq!((stats.totals.sent, stats.totals.dropped), (sent, dropped), "the thread's totals are what it handed on");
    assert_eq!(stats.totals.drained, sent + dropped + arbiter.scheduler().len() as u64, "drained = sent + dropped + queued");
    assert!(stats.totals.drained <= offered, "nothing invented: {} drained of {offered}", stats.totals.drained);
}

#[test]
fn clients_that_fall_idle_and_come_back_strand_no_packet() {
    // Bursts spaced wider than the arbiter's retirement of an idle client:
    // each burst finds its client retired, or being retired, and must be read.
    let clients = 8;
    let (arbiter, ends) = Arbiter::new(Drr::new(&vec![1; clients], 1500, 4096), UNLIMITED, clients, 1024, 64);
    let clock = quanta::Clock::new();
    let thread = ArbiterThread::spawn(arbiter, clock.clone(), clock.raw(), None, Pace::SPIN, (|_: Entry, _| {}, |_| {}));
    let offered = each_on_its_thread(ends, |flow, client| {
        let mut offered = 0u64;
        for burst in 0..12u32 {
            std::thread::sleep(Duration::from_micros(1_500 + 100 * u64::from(flow)));
            for i in 0..1 + burst % 3 {
                offered += u64::from(client.send(Entry { flow, len: 60, id: burst * 4 + i }));
            }
        }
        offered
    });
    std::thread::sleep(Duration::from_millis(20));
    let (_, stats) = thread.stop();
    assert_eq!(stats.totals.drained, offered, "every packet read");
    assert!(stats.totals.visited < stats.scans * clients as u64, "idle clients were not visited: {} visits in {} scans", stats.totals.visited, stats.scans);
}

#[test]
fn an_arbiter_scans_at_most_once_per_scan_gap() {
    let (arbiter, mut clients) = Arbiter::new(Drr::new(&[1], 1500, 4096), UNLIMITED, 1, 4096, 64);
    // Queued before the arbiter starts: every scan finds more than a drain budget's worth.
    for id in 0..2000 {
        assert!(clients[0].send(Entry { flow: 0, len: 60, id }));
    }
    let clock = quanta::Clock::new();
    let pace = Pace { scan_gap: Duration::from_millis(2), ..Pace::SPIN };
    let start = Instant::now();
    let thread = ArbiterThread::spawn(arbiter, clock.clone(), clock.raw(), None, pace, (|_: Entry, _| {}, |_| {}));
    std::thread::sleep(Duration::from_millis(30));
    let (_, stats) = thread.stop();
    let most = start.elapsed().as_millis() as u64 / 2 + 1;
    assert!(stats.scans <= most, "{} scans in {:?}", stats.scans, start.elapsed());
    assert_eq!(stats.totals.drained, (64 * stats.scans).min(2000), "a full drain budget a scan while packets wait");
}

#[test]
fn an_idle_arbiter_sleeps_and_wakes_for_the_next_packet() {
    let (arbiter, mut clients) = Arbiter::new(Drr::new(&[1], 1500, 16), UNLIMITED, 1, 64, 16);
    let sent_at = Arc::new(AtomicU64::new(0));
    let seen = sent_at.clone();
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let idle = Pace { idle_before_sleep: Duration::from_micros(100), sleep: Duration::from_micros(200), ..Pace::default() };
    let thread = ArbiterThread::spawn(arbiter, clock.clone(), origin, None, idle, (move |_: Entry, now_ns| seen.store(now_ns, Ordering::Relaxed), |_| {}));
    std::thread::sleep(Duration::from_millis(20));
    let before = clock.delta_as_nanos(origin, clock.raw());
    assert!(clients[0].send(Entry { flow: 0, len: 60, id: 1 }));
    let deadline = Instant::now() + Duration::from_secs(5);
    while sent_at.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(50));
    }
    let (_, stats) = thread.stop();
    // Slept again after a sleep (200 µs asked; a loaded machine may give 2 ms or more, so no count by the clock).
    assert!(stats.sleeps >= 2, "idle for 20 ms, it slept ({} times)", stats.sleeps);
    let waited = sent_at.load(Ordering::Relaxed).saturating_sub(before);
    assert!(sent_at.load(Ordering::Relaxed) > 0 && waited < 100_000_000, "sent {waited} ns after it was handed over");
}

#[test]
fn workers_drop_a_full_class_s_packets_before_offering_them_and_account_every_packet() {
    use sluice_core::{Decision, EgressLink, PacketId};
    use sluice_pspat::{sched::Algorithm, EgressConfig, ScheduledEgress};
    // Queues of 4 behind a 1 Mbit/s link: class 0 fills at once.
    let config = EgressConfig { algorithm: Algorithm::Drr, link: Link { bits_per_s: 1e6, overhead: 24 }, weights: vec![1, 1], queue_pkts: 4, wait: false, scan_gap: Duration::ZERO, aqm: Vec::new(), parents: Vec::new(), parent_of: Vec::new() };
    let (egress, mut links) = ScheduledEgress::start(&config, 1, None).unwrap();
    let link = &mut links[0];
    let (mut refused_at_offer, mut sent, mut dropped) = (0u64, 0u64, 0u64);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut id = 0u32;
    while id < 2000 && Instant::now() < deadline {
        if !link.offer(0, 1000, PacketId(id), sluice_core::Offered::default()) {
            refused_at_offer += 1;
        }
        id += 1;
        while let Some((_, was_sent)) = link.decision() {
            if was_sent == Decision::Sent { sent += 1 } else { dropped += 1 }
        }
        std::thread::sleep(Duration::from_micros(20));
    }
    // Let the link send what the queue still holds.
    while Instant::now() < deadline && sent + dropped + refused_at_offer < u64::from(id) {
        while let Some((_, was_sent)) = link.decision() {
            if was_sent == Decision::Sent { sent += 1 } else { dropped += 1 }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(refused_at_offer > 0, "a full class's packets are dropped before the mailbox");
    assert_eq!(sent + dropped + refused_at_offer, u64::from(id), "every offer is sent, refused by the arbiter or refused at the offer");
    let class = &egress.classes()[0];
    assert_eq!(class.dropped.load(Ordering::Relaxed), dropped + refused_at_offer, "the class counts both kinds of drop");
    assert_eq!(class.sent_pkts.load(Ordering::Relaxed), sent);
}

#[test]
fn the_arbiter_thread_takes_new_weights_and_a_new_link_rate_between_scans() {
    use sluice_core::{Decision, EgressLink, PacketId};
    use sluice_pspat::{sched::Algorithm, EgressConfig, ScheduledEgress};
    // Two classes kept backlogged behind 8 Mbit/s: 1000 packets a second of 1000 bytes.
    let config = EgressConfig { algorithm: Algorithm::Drr, link: Link { bits_per_s: 8e6, overhead: 0 }, weights: vec![1, 1], queue_pkts: 512, wait: false, scan_gap: Duration::ZERO, aqm: Vec::new(), parents: Vec::new(), parent_of: Vec::new() };
    let (egress, mut links) = ScheduledEgress::start(&config, 1, None).unwrap();
    let link = &mut links[0];
    let knobs = link.knobs().expect("a scheduled egress has knobs");
    let mut id = 0u32;
    let mut outstanding = [0u32; 2];
    // Packets of each class sent over `ms` of the link's time. Each class
    // is topped up to 256 packets in flight (a quarter second of the link at
    // 8 Mbit/s), so it stays backlogged however long this thread sleeps.
    let mut sent_over = |link: &mut sluice_pspat::WorkerEgress, ms: u64| {
        let mut sent = [0u64; 2];
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            for class in 0..2u16 {
                while outstanding[usize::from(class)] < 256 && link.offer(class, 1000, PacketId(id | u32::from(class) << 15), sluice_core::Offered::default()) {
                    id = (id + 1) % (1 << 14);
                    outstanding[usize::from(class)] += 1;
                }
            }
            while let Some((p, on_link)) = link.decision() {
                let class = usize::from(p.0 >> 15 & 1 == 1);
                outstanding[class] -= 1;
                sent[class] += u64::from(on_link == Decision::Sent);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        sent
    };
    sent_over(link, 50);
    let even = sent_over(link, 200);
    knobs.set(&sluice_core::EgressChange { weights: vec![(1, 4)], ..Default::default() }).unwrap();
    sent_over(link, 20);
    let four = sent_over(link, 200);
    assert!(even[1] * 10 < even[0] * 13 && even[0] * 10 < even[1] * 13, "1:1 {even:?}");
    assert!(four[1] > 3 * four[0], "1:4 {four:?}");
    knobs.set(&sluice_core::EgressChange { link_bits_per_s: Some(16e6), ..Default::default() }).unwrap();
    sent_over(link, 20);
    let faster = sent_over(link, 200);
    assert!(faster[0] + faster[1] > (four[0] + four[1]) * 3 / 2, "twice the rate: {faster:?} after {four:?}");
    drop(egress);
}
