"""The graph schema and its migrations.

Migrations are `.cypher` files in `kg/store/migrations/`, applied in file-name order, one statement per `;`
at a line's end. The names applied to a database are stored in its `Meta` table. A database that carries a
migration this version of kg does not know was made by a newer kg, and is refused with a message that says
so. Add a migration as a new file with the next number; never edit one that has shipped.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from kg.core.errors import SchemaError

KNOWLEDGE_KINDS = ("event", "lesson", "principle", "knowledge", "pattern")
EDGE_TYPES = ("caused_by", "led_to", "supports", "contradicts", "related_to", "derived_from")

META_DDL = "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)"


# A new graph's keyword table starts counted ('#docs' 0), so kg/graph/linking.py counts each node as it is
# added. (A graph made before migration 0004 has no such row; its first use recounts every node once. On a new
# graph that recount, made while the first entry's pattern was already created, counted it twice.)
NEW_GRAPH_TERMS = "MERGE (t:Term {term: '#docs'}) ON CREATE SET t.df = 0"


def split_statements(text: str) -> list[str]:
    statements, current = [], []
    for line in text.splitlines():
        if line.strip().startswith("//"):
            continue
        current.append(line)
        if line.rstrip().endswith(";"):
            statements.append("\n".join(current).strip().rstrip(";"))
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements


@cache
def migrations() -> tuple[tuple[str, tuple[str, ...]], ...]:
    folder = resources.files("kg.store") / "migrations"
    found = sorted((p for p in folder.iterdir() if p.name.endswith(".cypher")), key=lambda p: p.name)
    return tuple((p.name.removesuffix(".cypher"), tuple(split_statements(p.read_text(encoding="utf-8"))))
                 for p in found)


def check_version(applied: list[str], graph: str, upgrade: str) -> None:
    """Refuse a graph made by a newer kg (a migration this kg does not know) or one not migrated yet. `graph`
    names it in the message ("this workspace's graph"), `upgrade` ends the hint for the missing case."""
    known = [name for name, _ in migrations()]
    unknown = sorted(set(applied) - set(known))
    if unknown:
        raise SchemaError(f"{graph} was written by a newer kg (it has migration {unknown[-1]}); "
                          "upgrade kg with `pip install -U kaizen-kg`")
    missing = [name for name in known if name not in applied]
    if missing:
        raise SchemaError(f"{graph} needs migration {missing[0]}; run any writing kg command (for example "
                          f"`kg status`) {upgrade}")
