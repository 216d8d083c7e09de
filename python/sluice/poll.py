"""Poll policies: what a worker does after a round without work.

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional, cast

from sluice.checked import Part
from sluice.description import POLL_KIND_VALUES, PollSettingsJson

__all__ = ["POLL_KIND_VALUES", "PollSettings"]


@dataclass(frozen=True)
class PollSettings(Part):
    """What a worker does after a round that drained its input: `busy` polls again at
    once (a whole core at any load); `empty-poll` sleeps after `empty_polls`
    empty rounds, `min_sleep_us` first, doubling while idle up to
    `max_sleep_us` (the most a packet arriving at an idle worker waits);
    `slo-aware` as empty-poll, each sleep also bounded by a share of the
    delay slack of the worker's flows, measured each period;
    `slo-batching` sleeps after every round short of a full batch, under
    load too, so that the next batches fill: as long as the flows' slack,
    half the emptiest receive queue's room at the measured arrival rate and
    `max_sleep_us` allow, and not at all below `min_sleep_us`;
    `vpp-adaptive` waits for the next packet (an interrupt, at most
    `max_sleep_us`) while rounds bring fewer than `threshold_pkts` on
    average, and polls above; `metronome` sleeps `vacation_us` whenever its
    input is drained; `learned` sleeps what a trained `model` (a file
    `sluice train polling` writes; default: the one shipped) predicts from
    the last rounds' sizes, the idle time and the arrival rate after every
    round short of a full batch, bounded as slo-batching's sleeps are and by
    `max_sleep_us`. The sleep settings apply to the policies that sleep.

    `policy`: Which policy (one of "busy", "empty-poll", "slo-aware",
        "slo-batching", "vpp-adaptive", "metronome", "learned").
    `empty_polls`: Rounds without work before the first sleep.
    `min_sleep_us`: The first sleep (µs); slo-batching's shortest.
    `max_sleep_us`: The longest sleep (µs); vpp-adaptive's longest wait for an
        interrupt.
    `threshold_pkts`: vpp-adaptive: packets a round below which the worker waits
        for interrupts.
    `vacation_us`: metronome: the vacation after the input is drained (µs).
    `model`: learned: the model file (JSON, as `sluice train polling` writes
        it).
    `log_features`: Workers log what the learned policy reads at each round
        short of a full batch, under any policy, into each period's report
        (`poll_features`; for training).
    """

    part: ClassVar[str] = "poll"

    policy: str = "busy"
    empty_polls: int = 64
    min_sleep_us: float = 50.0
    max_sleep_us: float = 500.0
    threshold_pkts: int = 8
    vacation_us: float = 50.0
    model: Optional[str] = None
    log_features: bool = False

    def spec(self) -> PollSettingsJson:
        """The JSON form the core reads."""
        return cast("PollSettingsJson", super().spec())
