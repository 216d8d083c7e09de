"""The MGW instance of the dissertation's Table 4.1, built as its authors'
generator builds it (its rows: sluice/lab/published/embedding_table41.csv): one module chain
per user and direction, bearer 0 carrying only the HA users and bearer 1
all users, weights 20 (downlink chain and selectors), 10 (uplink chain,
selectors, decapsulation) and 1 (shared glue)."""

from __future__ import annotations

from sluice.lab.cxx_sort import cxx_sort
from sluice.embed.instance import Flow, Instance

#: The per-user modules of a downlink chain, then of an uplink chain.
DOWNLINK_STAGES = ("processing", "set_metadata", "tunnel", "ip_encap", "eth_encap")
UPLINK_STAGES = ("processing", "set_metadata")
HEAD = ("mac_table", "type_check", "direction")
TAIL = ("ttl", "lpm")


def mgw_instance(users: int = 10, ha_users: int = 1, cores: int = 10, capacity: int = 200, k: int = 1) -> Instance:
    """MGW with 2 bearers and `users` users of which the first `ha_users`
    are HA (on bearer 0, resilient to `k` core failures). The defaults are
    the 10-core instance (114 modules, 24 flows, 315 conflicts); with
    `ha_users=5, cores=40` it is the scaled one (170, 40, 2903). As in the
    reference, all HA paths of one direction form one conflict group, so
    with several HA users their originals conflict with each other too.
    With `k = 0` the HA users are not made resilient (the instance of the
    dissertation's Figure 4.3: 22 flows, no copies, no conflicts)."""
    if not 0 < ha_users <= users:
        raise ValueError(f"need 0 < ha_users ≤ users, got {ha_users} of {users}")
    names: list[str] = []
    weights: list[int] = []
    index: dict[str, int] = {}

    def module(name: str, weight: int) -> int:
        if name not in index:
            index[name] = len(names)
            names.append(name)
            weights.append(weight)
        return index[name]

    def glue(*parts: str) -> list[int]:
        return [module(p, 1) for p in parts]

    flows = []
    subscribers = [(0, u) for u in range(ha_users)] + [(1, u) for u in range(users)]
    for b, u in subscribers:
        path = glue(*HEAD) + [module("dl_bearer_sel", 20), module(f"dl_user_sel_b{b}", 20)]
        path += [module(f"dl_b{b}_u{u}_{s}", 20) for s in DOWNLINK_STAGES]
        path += glue(*TAIL, "dl_mac_rewrite", "dl_checksum")
        flows.append(Flow(f"dl_b{b}_u{u}", tuple(path)))
    for b, u in subscribers:
        path = glue(*HEAD) + [module("decap", 10), module("ul_bearer_sel", 10), module(f"ul_user_sel_b{b}", 10)]
        path += [module(f"ul_b{b}_u{u}_{s}", 10) for s in UPLINK_STAGES]
        path += glue(*TAIL, "ul_mac_rewrite", "ul_checksum")
        flows.append(Flow(f"ul_b{b}_u{u}", tuple(path)))
    base = Instance(names, weights, cores, capacity, flows)
    if k == 0:
        return base
    ha = [f"{d}_b0_u{u}" for d in ("dl", "ul") for u in range(ha_users)]
    return base.resilient(ha, k, group=lambda flow: flow[:2])


#: The shared modules in the order the dissertation's generator numbers them.
PUBLISHED_SHARED = ("mac_table", "type_check", "direction", "dl_bearer_sel", "decap", "ul_bearer_sel",
                    "ttl", "lpm", "dl_mac_rewrite", "dl_checksum", "ul_mac_rewrite", "ul_checksum")


def as_published(instance: Instance, users: int = 10, ha_users: int = 1, k: int = 1) -> Instance:
    """`instance` (an MGW of `mgw_instance(users, ha_users, k=k)`) with its
    modules numbered in the order the dissertation's tool takes them for
    its heuristics: its generator's node order (the shared modules, then
    their copies; per bearer its user selectors, then per user the uplink
    and downlink stages, an HA bearer's each followed by their copies),
    reversed (LEMON walks a graph's nodes from the last), then by weight,
    heaviest first, as libstdc++'s `std::sort` leaves them (not stable:
    see `cxx_sort`). Best-fit reproduces Table 4.1 only in this order:
    it breaks ties by position."""

    def with_copies(names: list[str], ha: bool) -> list[str]:
        return names + [f"{n}~{j}" for n in names for j in range(1, k + 1)] if ha else names

    order = with_copies(list(PUBLISHED_SHARED), True)
    for bearer, bearer_users in ((0, ha_users), (1, users)):
        order += with_copies([f"dl_user_sel_b{bearer}", f"ul_user_sel_b{bearer}"], bearer == 0)
        for u in range(bearer_users):
            stages = [f"ul_b{bearer}_u{u}_{s}" for s in UPLINK_STAGES] + [f"dl_b{bearer}_u{u}_{s}" for s in DOWNLINK_STAGES]
            order += with_copies(stages, bearer == 0)
    weight = dict(zip(instance.names, instance.weights))
    return instance.renumbered(cxx_sort(order[::-1], lambda a, b: weight[a] > weight[b]))
