"""The order libstdc++'s `std::sort` leaves elements in: introsort, not
stable, so elements that compare equal end in an order only the algorithm
decides. A published result of a C++ tool that sorts with it and then
breaks ties by position depends on that order; this reproduces it
(median-of-three pivot moved to the front, unguarded Hoare partition,
insertion sort below 16 elements, as GCC's `bits/stl_algo.h`)."""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

#: Ranges up to this size are left to the final insertion sort.
THRESHOLD = 16


def cxx_sort(items: Sequence[T], less: Callable[[T, T], bool]) -> list[T]:
    """`items` as `std::sort(begin, end, less)` orders them."""
    a = list(items)

    def median_to_first(result: int, x: int, y: int, z: int) -> None:
        if less(a[x], a[y]):
            pick = y if less(a[y], a[z]) else z if less(a[x], a[z]) else x
        else:
            pick = x if less(a[x], a[z]) else z if less(a[y], a[z]) else y
        a[result], a[pick] = a[pick], a[result]

    def partition(first: int, last: int, pivot: int) -> int:
        while True:
            while less(a[first], a[pivot]):
                first += 1
            last -= 1
            while less(a[pivot], a[last]):
                last -= 1
            if first >= last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def introsort(first: int, last: int, depth: int) -> None:
        while last - first > THRESHOLD:
            if depth == 0:
                # libstdc++ falls back to heapsort here; no input of ours goes this deep.
                raise ValueError(f"{len(a)} elements sort too deep for introsort's quicksort phase")
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def linear_insert(i: int) -> None:
        value = a[i]
        while less(value, a[i - 1]):
            a[i] = a[i - 1]
            i -= 1
        a[i] = value

    def insertion_sort(first: int, last: int) -> None:
        for i in range(first + 1, last):
            if less(a[i], a[first]):
                value = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = value
            else:
                linear_insert(i)

    if len(a) > 1:
        introsort(0, len(a), 2 * (len(a).bit_length() - 1))
        insertion_sort(0, min(len(a), THRESHOLD))
        for i in range(THRESHOLD, len(a)):
            linear_insert(i)
    return a
