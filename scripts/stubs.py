"""The type stubs of the compiled modules (`sluice._core`, `sluice.lab._core`)
from the binding crate's Rust source: each function a module registers
(`wrap_pyfunction!`), with its parameters, their Rust types read as
Python's, the defaults of its `#[pyo3(signature = …)]` and its doc
comment; each constant it adds (`m.add`), typed by its value in the built
module, with the `//` comment above it. `scripts/generate.py` writes them."""

from __future__ import annotations

import re
import textwrap
from typing import Any

#: Rust's scalar types as Python reads them.
SCALARS = {"bool": "bool", "f32": "float", "f64": "float", "String": "str", "str": "str", "PyObject": "object", "()": "None",
           **{t: "int" for t in ("u8", "u16", "u32", "u64", "usize", "i32", "i64", "isize")}}


def _split(text: str) -> list[str]:
    """`text` split at its commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "<([" and 1 or (c in ">)]" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return [p for p in [*parts, tail] if p]


def python_type(rust: str) -> str:
    """The Python annotation of a Rust parameter or return type."""
    t = re.sub(r"&('\w+ )?", "", rust.strip())
    t = re.sub(r"^(std::collections::|pyo3::)", "", t)
    generic = re.fullmatch(r"(\w+)<(.*)>", t)
    if generic is not None:
        outer, inner = generic.groups()
        args = [python_type(a) for a in _split(inner)]
        return {"PyResult": args[0], "Option": f"Optional[{args[0]}]", "Vec": f"list[{args[0]}]",
                "BTreeMap": f"dict[{', '.join(args)}]", "HashMap": f"dict[{', '.join(args)}]"}[outer]
    array = re.fullmatch(r"\[(.*);\s*\d+\]", t)
    if array is not None:
        return f"list[{python_type(array.group(1))}]"
    if t.startswith("(") and t != "()":
        return f"tuple[{', '.join(python_type(a) for a in _split(t[1:-1]))}]"
    return SCALARS[t]


def _default(rust: str) -> str:
    """A `#[pyo3(signature)]` default as Python source (`...` for an expression)."""
    literal = {"None": "None", "true": "True", "false": "False"}.get(rust)
    if literal is not None:
        return literal
    return rust if re.fullmatch(r'-?[\d_.]+(e-?\d+)?|"[^"]*"', rust) else "..."


def _closing(text: str, start: int) -> int:
    """The index of the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses")


def doc_text(description: str) -> str:
    """A Rust doc comment as plain text: intra-doc links lose their brackets."""
    return re.sub(r"\[(`[^`]*`)\](\([^)]*\))?", r"\1", description.strip())


def _doc(lines: list[str], indent: str = "") -> str:
    """A Rust doc comment as a docstring's text (its paragraphs filled at
    `indent`), intra-doc links unbracketed."""
    paragraphs = "\n".join(line.strip() for line in lines).split("\n\n")
    filled = [textwrap.fill(doc_text(p.replace("\n", " ")), 96, initial_indent=indent, subsequent_indent=indent)
              for p in paragraphs if p.strip()]
    return "\n\n".join(filled).strip()


def _function(source: str, name: str) -> str:
    """The stub of `#[pyfunction] fn name` in `source`."""
    at = re.search(rf"^fn {name}\(", source, re.M)
    if at is None:
        raise ValueError(f"no fn {name} in the binding's source")
    close = _closing(source, at.end() - 1)
    params = [p.split(":", 1) for p in _split(source[at.end():close]) if not p.startswith("py:")]
    returns = re.match(r"\s*->\s*([^{]+?)\s*\{", source[close + 1:])
    head = source[:at.start()].rstrip("\n").split("\n")
    attributes = []
    while head and head[-1].startswith("#["):
        attributes.append(head.pop())
    doc: list[str] = []
    while head and head[-1].startswith("///"):
        doc.insert(0, head.pop()[3:])
    signature = next((re.search(r"signature = \((.*)\)\)\]", a) for a in attributes if "signature" in a), None)
    defaults = dict(p.split("=", 1) for p in _split(signature.group(1)) if "=" in p) if signature else {}
    args = ", ".join(f"{n.strip()}: {python_type(t)}" + (f" = {_default(defaults[n.strip()])}" if n.strip() in defaults else "") for n, t in params)
    ret = python_type(returns.group(1)) if returns else "None"
    return f'\ndef {name}({args}) -> {ret}:\n    """{_doc(doc, "    ")}"""\n'


def generate_stub(source: str, registrar: str, module: Any) -> str:
    """The stub of the module whose functions `source`'s function
    `registrar` registers, its constants' types read from `module` (built)."""
    at = re.search(rf"^(pub )?fn {registrar}\(", source, re.M)
    if at is None:
        raise ValueError(f"no fn {registrar} in the binding's source")
    body = source[at.end():source.index("\n}\n", at.end())]
    functions = re.findall(r"wrap_pyfunction!\((\w+),", body)
    constants = re.findall(r"((?:^\s*//[^\n]*\n)*)\s*m\.add\(\"(\w+)\"", body, re.M)
    module_doc = _doc([line[3:] for line in source.split("\n") if line.startswith("//!")])
    out = f'"""{module_doc}\n\nGenerated from the binding\'s Rust source by scripts/generate.py: do not edit."""\n\n'
    stubs = "".join(_function(source, f) for f in functions)
    used = [t for t in ("Optional",) if f"{t}[" in stubs]
    out += f"from typing import {', '.join(used)}\n\n" if used else ""
    for comment, name in constants:
        note = _doc([line.strip()[2:] for line in comment.strip().split("\n") if line.strip()])
        out += (f"#: {note}\n" if note else "") + f"{name}: {type(getattr(module, name)).__name__}\n"
    names = sorted([*functions, *(c[1] for c in constants)])
    out += "\n" if constants else ""
    out += f"__all__ = [{', '.join(repr(n).replace(chr(39), chr(34)) for n in names)}]\n"
    return out + stubs
