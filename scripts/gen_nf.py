"""Writes the Python classes of what descriptions carry from the JSON
Schemas of their Rust types, so that Python copies no name, field, default
or document by hand: python/sluice/nf.py (every NF's configuration,
`sluice._core.nf_schemas()`), python/sluice/template.py (the packet
template), python/sluice/poll.py (a worker's poll policy and its
settings) and python/sluice/interface.py (a router's interfaces and its
ICMP rate), the last three from `sluice._core.part_schema()`.

    .venv/bin/python scripts/gen_nf.py           # rewrite both
    .venv/bin/python scripts/gen_nf.py --check   # exit 1 if one is stale
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "sluice"

HEADER = '''"""{title}

Generated from the core's definitions by scripts/gen_nf.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
{typing}from sluice.checked import {imports}

__all__ = [{names}]
'''

NF_TITLE = """Network-function configurations: what a module runs, one class per NF
of the core, with its fields, defaults and documentation."""

TEMPLATE_TITLE = "Packet templates: the frames a synthetic source sends."

POLL_TITLE = "Poll policies: what a worker does after a round without work."

INTERFACE_TITLE = """A router's interfaces (addresses, MAC, MTU, neighbours set by hand)
and the rate at which it sends ICMP errors."""


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(definition name, schema) of a `$ref`, or (None, schema)."""
    ref = schema.get("$ref")
    if ref is None:
        return None, schema
    name = ref.rsplit("/", 1)[1]
    return name, defs[name]


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """The Python annotation of a JSON Schema."""
    name, target = _resolve(schema, defs)
    if name is not None:
        return name if target.get("type") == "object" else _type(target, defs)
    if "oneOf" in schema or "enum" in schema:
        return "str"
    if "anyOf" in schema:
        (inner,) = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return f"Optional[{_type(inner, defs)}]"
    kind = schema.get("type")
    if isinstance(kind, list):
        (inner,) = [k for k in kind if k != "null"]
        return f"Optional[{_type({**schema, 'type': inner}, defs)}]"
    if kind == "array":
        pair = schema.get("prefixItems")
        if pair is not None:
            return f"tuple[{', '.join(_type(p, defs) for p in pair)}]"
        items = schema["items"]
        entry = items.get("prefixItems")
        if entry is not None and len(entry) == 2 and entry[1].get("format") == "uint16":
            return f"Table[{_type(entry[0], defs)}]"
        return f"Sequence[{_type(items, defs)}]"
    return {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "object": "object"}[kind]


def _default(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """A field's default as Python source."""
    name, target = _resolve(schema, defs)
    if name is not None and target.get("type") == "object":
        return f"{name}()"
    if isinstance(value, list):
        return repr(tuple(value))
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _text(description: str) -> str:
    """A Rust doc comment as plain text: intra-doc links lose their brackets."""
    return re.sub(r"\[(`[^`]*`)\](\([^)]*\))?", r"\1", description.strip())


def _choices(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """" (one of "a", "b")" for a field that takes one of some names, else ""."""
    _, target = _resolve(schema, defs)
    names = [json.dumps(c["const"]) for c in target.get("oneOf", []) if "const" in c]
    return f" (one of {', '.join(names)})" if names else ""


def _doc(description: str, properties: dict[str, Any], defs: dict[str, Any], indent: str) -> str:
    lines = [_text(description)]
    if properties:
        lines.append("")
        for field, prop in properties.items():
            text = f"`{field}`: {_text(prop.get('description', '')).rstrip('.')}{_choices(prop, defs)}."
            lines.extend(textwrap.wrap(text, 76, subsequent_indent="    ", break_on_hyphens=False))
    body = "\n".join(indent + line if line else "" for line in "\n".join(lines).split("\n"))
    return f'{indent}"""{body.lstrip()}\n{indent}"""\n'


def _class(name: str, schema: dict[str, Any], defs: dict[str, Any], base: str = "", class_vars: dict[str, str] | None = None) -> str:
    """A frozen dataclass of `schema`'s properties (required ones first), its
    `class_vars` (`kind` of an NF, `part` of a part) as ClassVars."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = [f for f in properties if f in schema.get("required", [])]
    optional = [f for f in properties if f not in required]
    base = f"({base})" if base else ""
    out = f"\n\n@dataclass(frozen=True)\nclass {name}{base}:\n" + _doc(schema.get("description", name), properties, defs, "    ")
    for var, value in (class_vars or {}).items():
        out += f"\n    {var}: ClassVar[str] = {json.dumps(value)}\n"
    if properties:
        out += "\n"
    for field in required:
        out += f"    {field}: {_type(properties[field], defs)}\n"
    for field in optional:
        prop = properties[field]
        out += f"    {field}: {_type(prop, defs)} = {_default(prop.get('default'), prop, defs)}\n"
    return out


def _values_name(name: str) -> str:
    """The constant listing the names a string enum takes: `PollKind` → `POLL_KIND_VALUES`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() + "_VALUES"


def _values(name: str, schema: dict[str, Any]) -> str:
    """That constant's source."""
    values = ", ".join(json.dumps(c["const"]) for c in schema["oneOf"])
    return f"\n\n#: The names a `{name}` field takes.\n{_values_name(name)}: tuple[str, ...] = ({values})\n"


def _module(title: str, imports: str, exported: list[str], classes: list[tuple[str, str, str, dict[str, str]]]) -> str:
    """A module of dataclasses from (class name, JSON Schema, base class, ClassVars) each,
    with the object types and name lists their schemas refer to before them."""
    helpers: dict[str, str] = {}
    values: dict[str, str] = {}
    bodies = []
    for name, text, base, class_vars in classes:
        schema = json.loads(text)
        defs = schema.get("$defs", {})
        for helper, helper_schema in defs.items():
            if helper_schema.get("type") == "object" and helper not in helpers:
                helpers[helper] = _class(helper, helper_schema, defs)
            elif all("const" in c for c in helper_schema.get("oneOf", [{}])) and helper not in values:
                values[helper] = _values(helper, helper_schema)
        bodies.append(_class(name, schema, defs, base, class_vars))
    body = "".join(values.values()) + "".join(helpers.values()) + "".join(bodies)
    names = ", ".join(f'"{n}"' for n in [*exported, *map(_values_name, values), *helpers, *(c[0] for c in classes)])
    used = [t for t in ("ClassVar", "Optional", "Sequence") if f"{t}[" in body]
    typing = f"from typing import {', '.join(used)}\n\n" if used else ""
    return HEADER.format(title=title, typing=typing, imports=imports, names=names) + body


def generate_nf(schemas: list[tuple[str, str, str]]) -> str:
    """The source of nf.py from (name, class name, JSON Schema) of every NF."""
    return _module(NF_TITLE, "NF, Table", ["NF"], [(name, text, "NF", {"kind": kind}) for kind, name, text in schemas])


def generate_part(title: str, part: str, name: str, schema: str) -> str:
    """The source of a module with one part of a description, class `name`, from its JSON Schema."""
    return generate_parts(title, [(part, name, schema)])


def generate_parts(title: str, parts: list[tuple[str, str, str]]) -> str:
    """The source of a module with parts of a description from (part, class name, JSON Schema) each."""
    return _module(title, "Part", [], [(name, schema, "Part", {"part": part}) for part, name, schema in parts])


def _load_core() -> Any:
    """The built core, `sluice._core`, loaded alone: the package imports
    what this writes, so it may not import before this has run."""
    import importlib.machinery
    import importlib.util

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = PACKAGE / f"_core{suffix}"
        if path.exists():
            spec = importlib.util.spec_from_file_location("sluice._core", path)
            assert spec is not None and spec.loader is not None
            core = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(core)
            return core
    raise SystemExit(f"no built core in {PACKAGE}: run `make setup` first")


def generated() -> dict[Path, str]:
    """What each generated file holds, from the core as built."""
    _core = _load_core()

    return {
        PACKAGE / "nf.py": generate_nf(_core.nf_schemas()),
        PACKAGE / "template.py": generate_part(TEMPLATE_TITLE, "template", "Template", _core.part_schema("template")),
        PACKAGE / "poll.py": generate_part(POLL_TITLE, "poll", "PollSettings", _core.part_schema("poll")),
        PACKAGE / "interface.py": generate_parts(INTERFACE_TITLE, [("interface", "Interface", _core.part_schema("interface")),
                                                                   ("icmp", "IcmpSettings", _core.part_schema("icmp"))]),
    }


def main() -> int:
    stale = {path: source for path, source in generated().items() if not path.exists() or path.read_text() != source}
    if "--check" in sys.argv[1:]:
        for path in stale:
            print(f"{path} is stale: run `make generate`", file=sys.stderr)
        return 1 if stale else 0
    for path, source in stale.items():
        path.write_text(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
