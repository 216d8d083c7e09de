"""No import circles: in every crate, at each level of its module tree,
sibling modules (a file, or a folder such as `graph/` with all it holds)
depend on one another one way only, and the crates themselves depend
downward only; in `python/sluice` every Python module depends on the
others one way only."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline

ROOT = Path(__file__).resolve().parent.parent
CRATES = sorted(p.parent for p in (ROOT / "crates").glob("*/src/lib.rs"))
PYTHON = ROOT / "python" / "sluice"


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of `graph` as a list of nodes (first repeated last), or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> list[str]:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        stack.pop()
        state[v] = 2
        return []

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return []


RustModule = tuple[str, ...]
"""A module's path in its crate: `()` is the crate root, `("graph", "walk")` is `graph::walk`."""

# Comments, strings and character literals: nothing in them is a path.
_NOT_CODE = re.compile(r"""//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\.[^']*|[^\\'])'""", re.S)
_USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
_PATH = re.compile(r"\b(?:crate|super|self)(?:::\w+)+")


def _rust_module(src: Path, path: Path) -> RustModule:
    """`graph/walk.rs` is `graph::walk`, `graph/mod.rs` is `graph`, `lib.rs` the root."""
    parts = path.relative_to(src).with_suffix("").parts
    return parts[:-1] if parts[-1] in ("mod", "lib") else parts


def _code(path: Path) -> str:
    """The file's code without its comments, literals and test module."""
    return _NOT_CODE.sub(" ", path.read_text()).split("#[cfg(test)]")[0]


def _use_paths(tree: str) -> list[list[str]]:
    """The paths a `use` tree names: `a::{b, c::{d as e}}` → a::b, a::c::d."""
    tokens = re.findall(r"\w+|::|[{},*]", tree)
    at = 0

    def group(prefix: list[str]) -> list[list[str]]:
        nonlocal at
        paths: list[list[str]] = []
        path: list[str] | None = list(prefix)  # None once a `{…}` took it
        while at < len(tokens):
            tok = tokens[at]
            at += 1
            if tok == "{" and path is not None:
                paths += group(path)
                path = None
            elif tok in (",", "}"):
                if path is not None and path != prefix:
                    paths.append(path)
                if tok == "}":
                    return paths
                path = list(prefix)
            elif tok == "as":
                at += 1  # the alias names nothing
            elif tok not in ("::", "*") and path is not None:
                path = path + [tok]
        if path is not None and path != prefix:
            paths.append(path)
        return paths

    return group([])


def _resolve(me: RustModule, path: list[str], modules: set[RustModule]) -> tuple[RustModule, str | None] | None:
    """The module a `crate::`/`super::`/`self::` path names from module `me`,
    and the item it names there (None when the path ends at the module)."""
    if path[0] == "crate":
        base: RustModule = ()
    elif path[0] in ("super", "self"):
        base = me
    elif me + (path[0],) in modules:  # a part named from its parent: `use walk::Walker;`
        base, path = me, ["self"] + path
    else:
        return None  # another crate's
    rest = path[1:]
    if path[0] == "super":
        base = base[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    while rest and base + (rest[0],) in modules:
        base, rest = base + (rest[0],), rest[1:]
    return base, (rest[0] if rest else None)


def crate_imports(src: Path) -> dict[RustModule, set[RustModule]]:
    """Module of the crate at `src` → the modules its code (not its comments,
    not its tests) names: through `crate::`, `super::` and `self::` paths,
    in `use` trees or inline, and through a re-export (`pub use`) to the
    module that defines the item as well."""
    files = {_rust_module(src, p): p for p in src.rglob("*.rs") if p.name != "tests.rs"}
    modules = set(files)
    named = {me: [path for _, tree in _USE.findall(_code(p)) for path in _use_paths(tree)] + [m.split("::") for m in _PATH.findall(_code(p))] for me, p in files.items()}
    reexports = {me: {path[-1]: path for pub, tree in _USE.findall(_code(p)) if pub for path in _use_paths(tree)} for me, p in files.items()}

    def reached(me: RustModule, path: list[str], hops: int = 0) -> set[RustModule]:
        found = _resolve(me, path, modules)
        if found is None:
            return set()
        module, item = found
        further = reexports.get(module, {}).get(item) if item else None
        return {module} | (reached(module, further, hops + 1) if further and hops < 8 else set())

    return {me: {m for path in paths for m in reached(me, path)} for me, paths in named.items()}


def circles(graph: dict[RustModule, set[RustModule]]) -> dict[RustModule, list[str]]:
    """At each module P of the tree, the circle among P's children (each
    standing for all it contains), if any: a part of a module may name its
    parent and the parent its parts, but siblings name one another one way."""
    found: dict[RustModule, list[str]] = {}
    for parent in {m[:i] for m in graph for i in range(len(m))}:
        depth = len(parent)
        level: dict[str, set[str]] = {}
        for me, deps in graph.items():
            if len(me) <= depth or me[:depth] != parent:
                continue
            child = me[depth]
            level.setdefault(child, set()).update(d[depth] for d in deps if len(d) > depth and d[:depth] == parent and d[depth] != child)
        if cycle := _cycle(level):
            found[parent] = cycle
    return found


def python_imports() -> dict[str, set[str]]:
    """Module → the `sluice` modules it imports (at any depth of the file)."""
    graph: dict[str, set[str]] = {}
    modules = {".".join(("sluice",) + p.relative_to(PYTHON).with_suffix("").parts).removesuffix(".__init__") for p in PYTHON.rglob("*.py")}
    modules.add("sluice._core")
    for path in PYTHON.rglob("*.py"):
        me = ".".join(("sluice",) + path.relative_to(PYTHON).with_suffix("").parts).removesuffix(".__init__")
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sluice":
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    deps.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.split(".")[0] == "sluice")
        # A package's __init__ gathers its submodules; a submodule names the package only to reach a sibling.
        graph[me] = {d for d in deps if d != me and not me.startswith(d + ".")}
    return graph


def test_the_scan_finds_the_crates_and_their_modules() -> None:
    assert len(CRATES) >= 10
    core = crate_imports(ROOT / "crates" / "sluice-core" / "src")
    assert {("graph",), ("graph", "walk"), ("knobs",), ("wire", "ipv4"), ("nf",)} <= core.keys()
    assert ("wire", "checksum") in core[("wire", "ipv4")], "a super:: import is read"


@pytest.mark.parametrize("src", CRATES, ids=lambda src: src.parent.name)
def test_no_crate_has_an_import_circle(src: Path) -> None:
    found = circles(crate_imports(src))
    assert found == {}, f"import circles in {src.parent.name}: " + "; ".join(f"in {'::'.join(('crate',) + p)}: {' → '.join(c)}" for p, c in found.items())


# The crates from the bottom up: a crate depends (also for its tests and
# build) only on crates of the layers before its own.
CRATE_LAYERS = [
    ("sluice-core", "sluice-embed"),  # packets, the graph walker; the embedding's solver
    ("sluice-traffic", "sluice-nf", "sluice-pspat"),  # pcaps and generators; the NFs; the PSPAT arbiter
    ("sluice-port", "sluice-sim"),  # real ports; the simulator
    ("sluice-control",),  # the controllers and the control loop
    ("sluice-pipeline",),  # a description built and run
    ("sluice-serve", "sluice-lab"),  # the daemon; the lab's measurements
    ("sluice-py",),  # the Python binding
]


def test_crates_depend_downward_only() -> None:
    layer = {name: i for i, names in enumerate(CRATE_LAYERS) for name in names}
    assert sorted(layer) == sorted(src.parent.name for src in CRATES), "every crate has its layer"
    upward = []
    for src in CRATES:
        manifest = tomllib.loads((src.parent / "Cargo.toml").read_text())
        for section in ("dependencies", "dev-dependencies", "build-dependencies"):
            for dep in manifest.get(section, {}):
                if dep in layer and layer[dep] >= layer[src.parent.name]:
                    upward.append(f"{src.parent.name} → {dep} ({section})")
    assert upward == [], "crates that depend on a crate of their own layer or above"


def test_the_rust_scan_sees_circles_a_folder_hides() -> None:
    graph: dict[RustModule, set[RustModule]] = {("wire",): set(), ("wire", "ipv4"): {("wire", "l4")}, ("wire", "l4"): {("wire", "ipv4")}, ("lpm",): {("lpm6",)}, ("lpm6",): {("lpm",)}}
    assert circles(graph) == {("wire",): ["ipv4", "l4", "ipv4"], (): ["lpm", "lpm6", "lpm"]}
    assert _use_paths("super::{checksum, l4::{self, UpperChecksum as U}}, x") == [["super", "checksum"], ["super", "l4", "self"], ["super", "l4", "UpperChecksum"], ["x"]]
    modules = {(), ("wire",), ("wire", "l4")}
    assert _resolve(("wire", "ipv4"), ["super", "l4", "checksum_offset"], modules) == (("wire", "l4"), "checksum_offset")
    assert _resolve(("wire",), ["crate", "wire", "l4"], modules) == (("wire", "l4"), None)


def test_python_package_has_no_import_circle() -> None:
    graph = python_imports()
    assert {"sluice.plot", "sluice.result", "sluice.pipeline"} <= graph.keys(), "the scan found the package's modules"
    assert _cycle(graph) == [], "an import circle in python/sluice: " + " → ".join(_cycle(graph))


def test_the_product_does_not_import_the_lab() -> None:
    graph = python_imports()
    product = [m for m in graph if not m.startswith(("sluice.lab", "sluice.cli"))]
    assert "sluice.pipeline" in product and "sluice.lab.static" in graph
    reaching = {m: sorted(d for d in graph[m] if d.startswith("sluice.lab")) for m in product}
    assert {m: deps for m, deps in reaching.items() if deps} == {}, "the product imports the lab"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []
