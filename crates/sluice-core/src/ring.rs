//! A bounded lock-free single-producer/single-consumer ring.
//!
//! Connects two threads (worker to worker, worker to control) without locks:
//! the producer owns `tail`, the consumer owns `head`, each publishes with a
//! release store and reads the other's with an acquire load.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[repr(align(64))]
struct CachePadded<T>(T);

struct Shared<T> {
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
}

// SAFETY: a slot is written only by the producer before it publishes `tail`
// and read only by the consumer after it observes that `tail`; the two
// halves are not `Clone`, so there is one of each.
unsafe impl<T: Send> Sync for Shared<T> {}

/// The sending half of an SPSC ring.
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half of an SPSC ring.
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
}

/// A ring holding up to `capacity` items (rounded up to a power of two).
pub fn spsc<T: Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.max(2).next_power_of_two();
    let slots = (0..cap).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
    let shared = Arc::new(Shared {
        head: CachePadded(AtomicUsize::new(0)),
        tail: CachePadded(AtomicUsize::new(0)),
        slots,
        mask: cap - 1,
    });
    (Producer { shared: shared.clone() }, Consumer { shared })
}

impl<T: Send> Producer<T> {
    /// Enqueues `item`, or gives it back when the ring is full.
    #[inline]
    pub fn push(&mut self, item: T) -> Result<(), T> {
        let s = &*self.shared;
        let tail = s.tail.0.load(Ordering::Relaxed);
        if tail - s.head.0.load(Ordering::Acquire) > s.mask {
            return Err(item);
        }
        // SAFETY: the slot is outside [head, tail): the consumer does not touch it.
        unsafe { (*s.slots[tail & s.mask].get()).write(item) };
        s.tail.0.store(tail + 1, Ordering::Release);
        Ok(())
    }
}

impl<T: Send> Producer<T> {
    /// Free slots (a lower bound while the consumer runs).
    #[inline]
    pub fn room(&self) -> usize {
        let s = &*self.shared;
        s.mask + 1 - (s.tail.0.load(Ordering::Relaxed) - s.head.0.load(Ordering::Acquire))
    }
}

impl<T: Send> Consumer<T> {
    /// Dequeues the oldest item, if any.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let s = &*self.shared;
        let head = s.head.0.load(Ordering::Relaxed);
        if head == s.tail.0.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: the slot is inside [head, tail): written and published by the producer.
        let item = unsafe { (*s.slots[head & s.mask].get()).assume_init_read() };
        s.head.0.store(head + 1, Ordering::Release);
        Some(item)
    }

    /// Items waiting (approximate while the producer runs).
    pub fn len(&self) -> usize {
        let s = &*self.shared;
        s.tail.0.load(Ordering::Acquire) - s.head.0.load(Ordering::Acquire)
    }

    /// Whether no item waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let (mut head, tail) = (*self.head.0.get_mut(), *self.tail.0.get_mut());
        while head != tail {
            // SAFETY: exclusive access at drop; [head, tail) are initialised.
            unsafe { self.slots[head & self.mask].get_mut().assume_init_drop() };
            head += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_and_empty() {
        let (mut p, mut c) = spsc::<u32>(4);
        for i in 0..4 {
            p.push(i).unwrap();
        }
        assert_eq!(p.push(9), Err(9));
        assert_eq!(c.len(), 4);
        assert_eq!((0..4).map(|_| c.pop().unwrap()).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(c.pop(), None);
    }

    #[test]
    fn threads_see_every_item_in_order() {
        let (mut p, mut c) = spsc::<u64>(64);
        const N: u64 = 200_000;
        let t = std::thread::spawn(move || {
            for i in 0..N {
                let mut item = i;
                while let Err(back) = p.push(item) {
                    item = back;
                    std::hint::spin_loop();
                }
            }
        });
        let mut expect = 0;
        while expect < N {
            if let Some(v) = c.pop() {
                assert_eq!(v, expect);
                expect += 1;
            }
        }
        t.join().unwrap();
    }

    #[test]
    fn drops_items_left_inside() {
        let item = Arc::new(());
        let (mut p, c) = spsc(4);
        p.push(item.clone()).unwrap();
        drop((p, c));
        assert_eq!(Arc::strong_count(&item), 1);
    }
}
