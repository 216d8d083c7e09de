"""Writes the Python of what descriptions and runs carry from the JSON
Schemas of their Rust types, so that Python copies no name, field, default
or document by hand:

- python/sluice/description.py: the JSON form of a whole description, a
  TypedDict per object, the names each string field takes and the
  defaults of its scalar fields (`sluice._core.part_schema("pipeline")`);
- python/sluice/outputs.py: the same of what the core returns: a run's
  report and the periods `on_period` receives, the model `validate`
  returns and what `send` sent (`part_schema("report")`, "model", "sent");
- python/sluice/nf.py: every NF's configuration (`sluice._core.nf_schemas()`);
- the parts a builder makes as checked dataclasses, from
  `sluice._core.part_schema()`: template.py (the packet template), poll.py
  (a worker's poll policy), schedulers.py (the workers' scheduler and the
  scheduled egress), interface.py (a router's interfaces and its ICMP
  rate) and run_params.py (a run's length and SLO reading);
- the type stubs of the compiled modules, python/sluice/_core.pyi and
  python/sluice/lab/_core.pyi, from the binding crate's source (see
  scripts/stubs.py).

    .venv/bin/python scripts/generate.py           # rewrite them
    .venv/bin/python scripts/generate.py --check   # exit 1 if one is stale
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stubs import doc_text, generate_stub  # noqa: E402 (beside this file, found once it is on the path)

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "sluice"

HEADER = '''"""{title}

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from dataclasses import dataclass
{typing}from sluice.checked import {imports}
{json_imports}
__all__ = [{names}]
'''

NF_TITLE = """Network-function configurations: what a module runs, one class per NF
of the core, with its fields, defaults and documentation."""

TEMPLATE_TITLE = "Packet templates: the frames a synthetic source sends."

POLL_TITLE = "Poll policies: what a worker does after a round without work."

INTERFACE_TITLE = """A router's interfaces (addresses, MAC, MTU, neighbours set by hand)
and the rate at which it sends ICMP errors."""

SCHEDULERS_TITLE = """How every worker orders its work, and the scheduler that shares the
output link among classes of flows."""

RUN_TITLE = "A run's parameters besides the description and the controller."

DESCRIPTION_TITLE = """The JSON form of a pipeline description, as the core reads it and
`Pipeline.spec()` writes it: a TypedDict per object (the keys a field
may leave out are not `Required`), the names each string field takes and
the defaults of the scalar fields."""


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


def _choices(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """" (one of "a", "b")" for a field that takes one of some names, else ""."""
    _, target = _resolve(schema, defs)
    names = [json.dumps(c["const"]) for c in target.get("oneOf", []) if "const" in c]
    return f" (one of {', '.join(names)})" if names else ""


def _doc(description: str, properties: dict[str, Any], defs: dict[str, Any], indent: str) -> str:
    lines = [doc_text(description)]
    if properties:
        lines.append("")
        for field, prop in properties.items():
            text = f"`{field}`: {doc_text(prop.get('description', '')).rstrip('.')}{_choices(prop, defs)}."
            lines.extend(textwrap.wrap(text, 76, subsequent_indent="    ", break_on_hyphens=False))
    body = "\n".join(indent + line if line else "" for line in "\n".join(lines).split("\n"))
    return f'{indent}"""{body.lstrip()}\n{indent}"""\n'


def _class(name: str, schema: dict[str, Any], defs: dict[str, Any], base: str = "", class_vars: dict[str, str] | None = None,
           json_form: str | None = None) -> str:
    """A frozen dataclass of `schema`'s properties (required ones first), its
    `class_vars` (`kind` of an NF, `part` of a part) as ClassVars, its
    `spec()` typed as the TypedDict `json_form` of `sluice.description`."""
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
    if json_form is not None:
        out += f'\n    def spec(self) -> {json_form}:\n        """The JSON form the core reads."""\n'
        out += f'        return cast("{json_form}", super().spec())\n'
    return out


def _values_name(name: str) -> str:
    """The constant listing the names a string enum takes: `PollKind` → `POLL_KIND_VALUES`."""
    return _upper(name) + "_VALUES"


def _values(name: str, schema: dict[str, Any]) -> str:
    """That constant's source."""
    values = ", ".join(json.dumps(c["const"]) for c in schema["oneOf"])
    return f"\n\n#: The names of `{name}`.\n{_values_name(name)}: tuple[str, ...] = ({values})\n"


def _is_names(schema: dict[str, Any]) -> bool:
    """Whether `schema` is a string that takes one of some names."""
    return "oneOf" in schema and all("const" in c for c in schema["oneOf"])


def _module(title: str, imports: str, exported: list[str], classes: list[tuple[str, str, str, dict[str, str]]],
            json_forms: frozenset[str] = frozenset()) -> str:
    """A module of dataclasses from (class name, JSON Schema, base class, ClassVars) each,
    with the object types and name lists their schemas refer to before them;
    a class whose schema's title names one of `json_forms` has its `spec()` typed so."""
    helpers: dict[str, str] = {}
    values: dict[str, str] = {}
    bodies = []
    typed = []
    for name, text, base, class_vars in classes:
        schema = json.loads(text)
        defs = schema.get("$defs", {})
        for helper, helper_schema in defs.items():
            if helper_schema.get("type") == "object" and helper not in helpers:
                helpers[helper] = _class(helper, helper_schema, defs)
            elif _is_names(helper_schema) and _values_name(helper) in json_forms:
                typed += [] if _values_name(helper) in typed else [_values_name(helper)]
                values.setdefault(helper, "")
            elif _is_names(helper_schema) and helper not in values:
                values[helper] = _values(helper, helper_schema)
        json_form = _json_name(schema["title"])
        typed += [json_form] if json_form in json_forms else []
        bodies.append(_class(name, schema, defs, base, class_vars, json_form if json_form in json_forms else None))
    body = "".join(values.values()) + "".join(helpers.values()) + "".join(bodies)
    names = ", ".join(f'"{n}"' for n in [*exported, *map(_values_name, values), *helpers, *(c[0] for c in classes)])
    used = [t for t in ("ClassVar", "Optional", "Sequence") if f"{t}[" in body] + (["cast"] if "cast(" in body else [])
    typing = f"from typing import {', '.join(used)}\n\n" if used else ""
    json_imports = f"from sluice.description import {', '.join(typed)}\n" if typed else ""
    return HEADER.format(title=title, typing=typing, imports=imports, json_imports=json_imports, names=names) + body


def generate_nf(schemas: list[tuple[str, str, str]]) -> str:
    """The source of nf.py from (name, class name, JSON Schema) of every NF."""
    return _module(NF_TITLE, "NF, Table", ["NF"], [(name, text, "NF", {"kind": kind}) for kind, name, text in schemas])


def generate_parts(title: str, parts: list[tuple[str, str, str]], json_forms: frozenset[str]) -> str:
    """The source of a module with parts of a description from (part, class
    name, JSON Schema) each, their `spec()` typed as the `json_forms` they are."""
    return _module(title, "Part", [], [(name, schema, "Part", {"part": part}) for part, name, schema in parts], json_forms)


def _json_name(name: str) -> str:
    """The TypedDict of a Rust type's JSON form: `ModuleSpec` → `ModuleJson`."""
    return re.sub(r"Spec$", "", name) + "Json"


def _upper(name: str) -> str:
    """`EgressScheduler` → `EGRESS_SCHEDULER`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


class JsonForms:
    """The TypedDicts of a schema's objects, written as they are met: a
    `$defs` object by its name, an object inline under a key by that key
    (`pcap_tap` → `PcapTapJson`); a string of names as `str` with the
    names listed; an open object (an NF's) as `dict[str, object]`. An
    object a generated dataclass documents (`documented`: its TypedDict's
    name → the class) points there rather than say it all again."""

    def __init__(self, defs: dict[str, Any], documented: dict[str, str]) -> None:
        self.defs = defs
        self.documented = documented
        self.classes: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.values: dict[str, str] = {}
        self.defaults: dict[str, str] = {}

    def type_of(self, schema: dict[str, Any], key: str) -> str:
        """The annotation of `schema`, the value of field `key`."""
        name, target = _resolve(schema, self.defs)
        if name is not None:
            return self.named(name, target)
        if "anyOf" in schema:
            kinds = [s for s in schema["anyOf"] if s.get("type") != "null"]
            inner = [self.type_of(s, key) for s in kinds]
            union = inner[0] if len(inner) == 1 else f"Union[{', '.join(inner)}]"
            return f"Optional[{union}]" if len(kinds) < len(schema["anyOf"]) else union
        kind = schema.get("type")
        if isinstance(kind, list):
            (inner_kind,) = [k for k in kind if k != "null"]
            return f"Optional[{self.type_of({**schema, 'type': inner_kind}, key)}]"
        if "enum" in schema or "const" in schema:
            return "str"
        if kind == "array":
            steps = schema["items"].get("prefixItems")
            if steps is not None:  # a (period, value) step, as JSON lists it
                return "list[list[float]]"
            return f"list[{self.type_of(schema['items'], key)}]"
        if kind == "object" and "patternProperties" in schema:
            (value,) = schema["patternProperties"].values()
            return f"dict[str, {self.type_of(value, key)}]"
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):  # values by name
            return f"dict[str, {self.type_of(schema['additionalProperties'], key)}]"
        if kind == "object" or "oneOf" in schema:
            return self.typed_dict("".join(part.title() for part in key.split("_")) + "Json", schema)
        return {"integer": "int", "number": "float", "boolean": "bool", "string": "str"}[kind]

    def named(self, name: str, schema: dict[str, Any]) -> str:
        """The annotation of `$defs` entry `name`."""
        if _is_names(schema):
            self.values.setdefault(name, _values(name, schema))
            return "str"
        if "anyOf" in schema:
            return self.type_of(schema, name)
        if schema.get("additionalProperties") is True:
            alias = _json_name(name)
            self.aliases[alias] = f"\n\n#: {doc_text(schema['description'])}\n{alias} = dict[str, object]\n"
            return alias
        return self.typed_dict(_json_name(name), schema)

    def typed_dict(self, name: str, schema: dict[str, Any]) -> str:
        """Writes the TypedDict `name` of object `schema` (its variants,
        each one key, as keys it may have), once; returns its name."""
        if name in self.classes:
            return name
        self.classes[name] = ""  # a reference back to it while it is written
        properties = dict(schema.get("properties", {}))
        required = set(schema.get("required", []))
        for variant in schema.get("oneOf", []):
            (key,) = variant["required"]
            properties[key] = {"description": variant.get("description", ""), **variant["properties"][key]}
        annotations = {f: self.type_of(p, f) for f, p in properties.items()}
        annotations = {f: f"Required[{a}]" if f in required else a for f, a in annotations.items()}
        if name in self.documented:
            doc = f'    """The JSON form of `{self.documented[name]}`, which says what each field means."""\n'
        else:
            doc = _doc(schema.get("description", name), properties, self.defs, "    ")
        if any(keyword.iskeyword(f) for f in annotations):
            # A key Python cannot name (`from`): the TypedDict's call form, its document a comment.
            comment = "".join(f"#{' ' if line.strip() else ''}{line.strip()}\n" for line in doc.strip().strip('"').strip().splitlines())
            body = ", ".join(f'"{f}": {a}' for f, a in annotations.items())
            self.classes[name] = f"\n\n{comment}{name} = TypedDict(\"{name}\", {{{body}}}, total=False)\n"
        else:
            fields = "".join(f"    {f}: {a}\n" for f, a in annotations.items())
            self.classes[name] = f"\n\nclass {name}(TypedDict, total=False):\n{doc}" + (f"\n{fields}" if fields else "")
        scalars = {f: p["default"] for f, p in properties.items() if isinstance(p.get("default"), (bool, int, float, str))}
        if scalars:
            defaults = name.removesuffix("Json") + "Defaults"
            text = "".join(f"    {f}: Final[{annotations[f]}] = {_default(v, {}, {})}\n" for f, v in scalars.items())
            self.defaults[defaults] = f'\n\nclass {defaults}:\n    """The defaults of `{name}`\'s fields that are numbers, flags or names."""\n\n{text}'
        return name


def generate_json_forms(title: str, schema_texts: list[str], documented: dict[str, str]) -> tuple[str, frozenset[str]]:
    """The source of a module of TypedDicts (description.py, outputs.py)
    from JSON Schemas (their objects that `documented` names pointing to
    the dataclass that documents them), and the names of the TypedDicts
    and name lists it holds."""
    schemas = [json.loads(text) for text in schema_texts]
    forms = JsonForms({name: d for schema in schemas for name, d in schema.get("$defs", {}).items()}, documented)
    for schema in schemas:
        forms.typed_dict(_json_name(schema["title"]), schema)
    body = "".join(forms.values.values()) + "".join(forms.aliases.values()) + "".join(forms.classes.values()) + "".join(forms.defaults.values())
    exported = [*map(_values_name, forms.values), *forms.aliases, *forms.classes, *forms.defaults]
    used = [t for t in ("Final", "Optional", "Required", "Union") if f"{t}[" in body]
    header = f'''"""{title}

Generated from the core's definitions by scripts/generate.py: do not edit;
change the Rust type and run `make generate`."""

from __future__ import annotations

from typing import {", ".join(sorted([*used, "TypedDict"]))}

__all__ = [{", ".join(f'"{n}"' for n in exported)}]
'''
    return header + body, frozenset([*forms.classes, *map(_values_name, forms.values)])


OUTPUTS_TITLE = """The JSON the core returns: a run's report (`RunResult.data`) and the
periods it holds, which `Pipeline.run`'s `on_period` receives as they
end; the model `Pipeline.validate` returns; what `Pipeline.send` sent."""


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

    # Each module of parts: its title and (part, class) of each.
    modules = {
        "template": (TEMPLATE_TITLE, [("template", "Template")]),
        "poll": (POLL_TITLE, [("poll", "PollSettings")]),
        "schedulers": (SCHEDULERS_TITLE, [("scheduler", "Scheduler"), ("egress_scheduler", "EgressScheduler")]),
        "interface": (INTERFACE_TITLE, [("interface", "Interface"), ("icmp", "IcmpSettings")]),
        "run_params": (RUN_TITLE, [("run", "RunParams")]),
    }
    schemas = {part: _core.part_schema(part) for _, parts in modules.values() for part, _ in parts}
    # The description's objects these classes (and the classes beside them) document.
    documented = {}
    for module, (_, parts) in modules.items():
        for part, name in parts:
            schema = json.loads(schemas[part])
            documented[_json_name(schema["title"])] = f"sluice.{module}.{name}"
            documented.update({_json_name(d): f"sluice.{module}.{d}" for d, s in schema.get("$defs", {}).items() if s.get("type") == "object"})
    description, names = generate_json_forms(DESCRIPTION_TITLE, [_core.part_schema("pipeline")], documented)
    outputs, _ = generate_json_forms(OUTPUTS_TITLE, [_core.part_schema(s) for s in ("report", "model", "sent")], {})
    bindings = PACKAGE.parent.parent / "crates" / "sluice-py" / "src"
    stubs = {PACKAGE / "_core.pyi": generate_stub((bindings / "lib.rs").read_text(), "_core", _core)}
    lab = sys.modules.get("sluice.lab._core")  # registered by a build with the `lab` feature
    if lab is not None:
        stubs[PACKAGE / "lab" / "_core.pyi"] = generate_stub((bindings / "lab.rs").read_text(), "register", lab)
    return {
        **stubs,
        PACKAGE / "description.py": description,
        PACKAGE / "outputs.py": outputs,
        PACKAGE / "nf.py": generate_nf(_core.nf_schemas()),
        **{PACKAGE / f"{module}.py": generate_parts(title, [(part, name, schemas[part]) for part, name in parts], names)
           for module, (title, parts) in modules.items()},
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
