"""No import circles: in every crate each module (a file, or a folder such
as `graph/`) and in `python/sluice` every Python module depends on the
others one way only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


def _rust_module(src: Path, path: Path) -> str:
    """`graph/walk.rs` and `graph/mod.rs` are both `graph`; `ring.rs` is `ring`."""
    return path.relative_to(src).parts[0].removesuffix(".rs")


def crate_imports(src: Path) -> dict[str, set[str]]:
    """Module of the crate at `src` → the crate's modules its code (not its
    comments, not its tests) names."""
    graph: dict[str, set[str]] = {}
    for path in src.rglob("*.rs"):
        me = _rust_module(src, path)
        if me == "lib" or path.name == "tests.rs":
            continue
        # Comments and test modules are not part of the layering.
        code = "\n".join(line.split("//")[0] for line in path.read_text().split("#[cfg(test)]")[0].splitlines())
        names = set(re.findall(r"\bcrate::(\w+)", code))
        graph.setdefault(me, set()).update(n for n in names if n != me and ((src / f"{n}.rs").exists() or (src / n).is_dir()))
    return graph


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
    assert {"graph", "knobs", "telemetry", "meter", "nf"} <= crate_imports(ROOT / "crates" / "sluice-core" / "src").keys()


@pytest.mark.parametrize("src", CRATES, ids=lambda src: src.parent.name)
def test_no_crate_has_an_import_circle(src: Path) -> None:
    graph = crate_imports(src)
    assert _cycle(graph) == [], f"an import circle in {src.parent.name}: " + " → ".join(_cycle(graph))


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
