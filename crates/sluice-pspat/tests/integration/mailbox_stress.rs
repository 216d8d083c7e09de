//! A producer and a consumer thread pass sequence numbers through a small
//! mailbox in random bursts with random pauses: nothing lost, duplicated or
//! reordered.

use rand::{rngs::SmallRng, Rng, SeedableRng};
use sluice_pspat::mailbox;

/// Values per capacity (fewer in debug builds, which `make test` runs).
const VALUES: u64 = if cfg!(debug_assertions) { 300_000 } else { 2_000_000 };

fn pause(rng: &mut SmallRng) {
    match rng.gen_range(0..1000) {
        0 => std::thread::sleep(std::time::Duration::from_micros(rng.gen_range(1..200))),
        1..=20 => std::thread::yield_now(),
        _ => {}
    }
}

#[test]
fn sequence_numbers_arrive_each_once_in_order_under_random_bursts_and_pauses() {
    for capacity in [16, 64, 1000] {
        let (mut tx, mut rx) = mailbox(capacity);
        let producer = std::thread::spawn(move || {
            let mut rng = SmallRng::seed_from_u64(capacity as u64);
            let mut next = 1u64;
            let mut burst = Vec::new();
            while next <= VALUES {
                let n = rng.gen_range(1..=48).min((VALUES - next + 1) as usize);
                burst.clear();
                burst.extend(next..next + n as u64);
                let mut at = 0;
                while at < n {
                    at += tx.push_burst(&burst[at..]);
                    pause(&mut rng);
                }
                next += n as u64;
            }
        });
        let mut rng = SmallRng::seed_from_u64(7 + capacity as u64);
        let mut expected = 1u64;
        let mut out = vec![0u64; 64];
        while expected <= VALUES {
            let want = rng.gen_range(1..=64);
            let n = rx.pop_burst(&mut out[..want]);
            for &v in &out[..n] {
                assert_eq!(v, expected, "capacity {capacity}: got {v} where {expected} was due");
                expected += 1;
            }
            pause(&mut rng);
        }
        producer.join().unwrap();
        assert_eq!(rx.pop(), None, "capacity {capacity}: nothing after the last");
    }
}
