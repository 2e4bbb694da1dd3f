"""Named Cypher queries, kept in `.cypher` files and checked against the parameters they are run with.

A file holds blocks that start with `// name: NAME`; following `//` lines are the description, the rest is
the query. A block whose first description line is `// dialect: NAME` is that backend's variant of the
query of the same name, stored as `name@NAME` (see kg/store/falkor.py). Every `$name` in a query must be
bound, and no unknown parameter may be passed: in Kùzu an unbound `$param` matches every row, so
`MATCH (n {id: $id}) DETACH DELETE n` without parameters empties the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kg.core.errors import QueryParameterError, RulesError

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NAME = re.compile(r"^//\s*name:\s*([a-z0-9_]+)\s*$")
_DIALECT = re.compile(r"^//\s*dialect:\s*([a-z0-9_]+)\s*$")


@dataclass(frozen=True)
class NamedQuery:
    name: str
    text: str
    params: frozenset[str]
    doc: str = ""
    source: str = ""

    def check(self, params: dict[str, object]) -> None:
        given = set(params)
        missing = self.params - given
        unknown = given - self.params
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing {', '.join(sorted('$' + p for p in missing))}")
            if unknown:
                parts.append(f"unknown {', '.join(sorted(unknown))}")
            raise QueryParameterError(f"query {self.name!r} refused: {'; '.join(parts)}")


def params_of(text: str) -> frozenset[str]:
    """The `$names` a query uses, ignoring string literals."""
    return frozenset(_PARAM.findall(_STRING.sub("''", text)))


def parse(text: str, source: str) -> dict[str, NamedQuery]:
    queries: dict[str, NamedQuery] = {}
    name: str | None = None
    doc: list[str] = []
    body: list[str] = []

    def flush() -> None:
        if name is None:
            return
        cypher = "\n".join(body).strip().rstrip(";")
        if name in queries:
            raise RulesError(f"{source}: query {name!r} is defined twice")
        if not cypher:
            raise RulesError(f"{source}: query {name!r} is empty")
        queries[name] = NamedQuery(name, cypher, params_of(cypher), " ".join(doc).strip(), source)

    for line in text.splitlines():
        match = _NAME.match(line.strip())
        if match:
            flush()
            name = match.group(1)
            doc, body = [], []
        elif name is None:
            if line.strip() and not line.strip().startswith("//"):
                raise RulesError(f"{source}: text before the first '// name:' line")
        elif not body and not doc and "@" not in name and _DIALECT.match(line.strip()):
            name = f"{name}@{_DIALECT.match(line.strip()).group(1)}"
        elif line.strip().startswith("//") and not body:
            doc.append(line.strip()[2:].strip())
        else:
            body.append(line)
    flush()
    return queries


def load_package(package: str) -> dict[str, NamedQuery]:
    """All `.cypher` files of a package, e.g. `kg.rules.queries`."""
    out: dict[str, NamedQuery] = {}
    for entry in sorted(resources.files(package).iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".cypher"):
            _merge(out, parse(entry.read_text(encoding="utf-8"), f"{package}/{entry.name}"))
    return out


def load_dir(folder: Path) -> dict[str, NamedQuery]:
    out: dict[str, NamedQuery] = {}
    for path in sorted(folder.glob("*.cypher")):
        _merge(out, parse(path.read_text(encoding="utf-8"), str(path)))
    return out


def _merge(into: dict[str, NamedQuery], new: dict[str, NamedQuery]) -> None:
    for name, query in new.items():
        if name in into:
            raise RulesError(f"{query.source}: query {name!r} is also defined in {into[name].source}")
        into[name] = query
