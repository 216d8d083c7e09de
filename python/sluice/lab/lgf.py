"""Embedding instances in the LEMON graph format (.lgf), so they can be
exchanged with the reference tools.

    @nodes
    label   name        weight
    0       mac_table   1
    @arcs
                label   flows
    0   1   0       22
    @conflicts
    a   b
    17  40
    @flows
    name        ha  copy_of  path
    dl_b0_u0    1   -        0 1 2 3 ...
    @attributes
    cores       10
    capacity    200

`@nodes`, `@arcs` and `@attributes` are LEMON's own sections (arcs are the
flow graph's edges with the number of flows using each); `@conflicts` and
`@flows` are extra sections as LEMON's SectionReader reads them. Tokens are
separated by white space, may be double-quoted, and `#` starts a comment.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Union

from sluice.embed.instance import Flow, Instance

SECTIONS = ("nodes", "arcs", "conflicts", "flows", "attributes")


def _token(text: str) -> str:
    """A name as an LGF token: bare, or double-quoted with escapes."""
    if re.fullmatch(r'[^\s"#\\\']+', text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dumps(instance: Instance) -> str:
    """The instance as LGF text."""
    q = _token
    arcs: dict[tuple[int, int], int] = {}
    for f in instance.flows:
        for a, b in zip(f.path, f.path[1:]):
            arcs[(a, b)] = arcs.get((a, b), 0) + 1
    lines = ["# sluice embedding instance: " + ", ".join(f"{k} {v}" for k, v in instance.summary().items())]
    lines += ["@nodes", "label\tname\tweight"]
    lines += [f"{v}\t{q(n)}\t{w}" for v, (n, w) in enumerate(zip(instance.names, instance.weights))]
    lines += ["@arcs", "\t\tlabel\tflows"]
    lines += [f"{a}\t{b}\t{i}\t{c}" for i, ((a, b), c) in enumerate(arcs.items())]
    lines += ["@conflicts", "a\tb"] + [f"{a}\t{b}" for a, b in instance.conflicts]
    lines += ["@flows", "name\tha\tcopy_of\tpath"]
    lines += [f"{q(f.name)}\t{int(f.ha)}\t{q(f.copy_of or '-')}\t" + " ".join(map(str, f.path)) for f in instance.flows]
    lines += ["@attributes", f"cores\t{instance.cores}", f"capacity\t{instance.capacity}"]
    return "\n".join(lines) + "\n"


def write(instance: Instance, path: Union[str, Path]) -> None:
    """Writes the instance to an .lgf file."""
    Path(path).write_text(dumps(instance))


def read(path: Union[str, Path]) -> Instance:
    """Reads an instance from an .lgf file; a ValueError names the file, line and problem."""
    return loads(Path(path).read_text(), str(path))


def loads(text: str, source: str = "<lgf>") -> Instance:
    """Parses LGF text (see the module doc); a ValueError names the line and problem."""
    rows: dict[str, list[tuple[int, list[str]]]] = {s: [] for s in SECTIONS}
    section = None
    header_pending = False
    for number, raw in enumerate(text.splitlines(), start=1):

        def fail(why: str, number: int = number) -> ValueError:
            return ValueError(f"{source}:{number}: {why}")

        try:
            tokens = shlex.split(raw, comments=True)
        except ValueError as e:
            raise fail(f"cannot split the line ({e})") from None
        if not tokens:
            continue
        if tokens[0].startswith("@"):
            section = tokens[0][1:]
            if section not in SECTIONS:
                raise fail(f"unknown section '@{section}' (known: {', '.join('@' + s for s in SECTIONS)})")
            header_pending = section != "attributes"
            continue
        if section is None:
            raise fail("text before the first section")
        if header_pending:
            header_pending = False
            continue
        rows[section].append((number, tokens))

    def ints(number: int, tokens: list[str], what: str) -> list[int]:
        try:
            return [int(t) for t in tokens]
        except ValueError:
            raise ValueError(f"{source}:{number}: {what} must be integers, got {' '.join(tokens)}") from None

    labels: dict[int, int] = {}
    names: list[str] = []
    weights: list[int] = []
    for number, tokens in rows["nodes"]:
        if len(tokens) != 3:
            raise ValueError(f"{source}:{number}: a node needs label, name and weight")
        label, weight = ints(number, [tokens[0], tokens[2]], "a node's label and weight")
        if label in labels:
            raise ValueError(f"{source}:{number}: node label {label} appears twice")
        labels[label] = len(names)
        names.append(tokens[1])
        weights.append(weight)

    def node(number: int, label: int) -> int:
        if label not in labels:
            raise ValueError(f"{source}:{number}: no node labelled {label}")
        return labels[label]

    arcs = set()
    for number, tokens in rows["arcs"]:
        ends = ints(number, tokens[:2], "an arc's ends")
        if len(ends) != 2:
            raise ValueError(f"{source}:{number}: an arc needs its two ends")
        arcs.add((node(number, ends[0]), node(number, ends[1])))
    conflicts = []
    for number, tokens in rows["conflicts"]:
        ends = ints(number, tokens, "a conflict's modules")
        if len(ends) != 2:
            raise ValueError(f"{source}:{number}: a conflict names exactly two modules")
        conflicts.append((node(number, ends[0]), node(number, ends[1])))
    flows = []
    for number, tokens in rows["flows"]:
        if len(tokens) < 4:
            raise ValueError(f"{source}:{number}: a flow needs name, ha, copy_of and a path")
        path = tuple(node(number, label) for label in ints(number, tokens[3:], "a flow's path"))
        for hop in zip(path, path[1:]):
            if hop not in arcs:
                raise ValueError(f"{source}:{number}: flow '{tokens[0]}' uses arc {names[hop[0]]} → {names[hop[1]]}, which @arcs does not list")
        flows.append(Flow(tokens[0], path, ha=tokens[1] == "1", copy_of=None if tokens[2] == "-" else tokens[2]))
    attributes = {}
    for number, tokens in rows["attributes"]:
        if len(tokens) != 2:
            raise ValueError(f"{source}:{number}: an attribute is a name and a value")
        attributes[tokens[0]] = ints(number, tokens[1:], f"attribute '{tokens[0]}'")[0]
    for key in ("cores", "capacity"):
        if key not in attributes:
            raise ValueError(f"{source}: @attributes lacks '{key}'")
    try:
        return Instance(names, weights, attributes["cores"], attributes["capacity"], flows, conflicts)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
