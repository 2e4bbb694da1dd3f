"""The graph schema and its migrations.

Migrations are `.cypher` files in `kg/store/migrations/`, applied in file-name order, one statement per `;`
at a line's end. The names applied to a database are stored in its `Meta` table. A database that carries a
migration this version of kg does not know was made by a newer kg, and is refused with a message that says
so. Add a migration as a new file with the next number; never edit one that has shipped.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from kg.core.errors import NewerGraph, SchemaError

KNOWLEDGE_KINDS = ("event", "lesson", "principle", "knowledge", "pattern")
EDGE_TYPES = ("caused_by", "led_to", "supports", "contradicts", "related_to", "derived_from")

META_DDL = "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)"

# (issue 17, migration 0013) Scratch tables a set-based update joins against, made only while it runs
# (kg/store/bulk.py `staging`): a node table costs ~5-6 MB resident at every open of the graph, even empty.
STAGING_DDL = {
    "LcStage": "CREATE NODE TABLE IF NOT EXISTS LcStage(id STRING PRIMARY KEY, stage INT64, priority STRING, "
               "base STRING, stale BOOLEAN, status STRING, at TIMESTAMP)",
}

# (issue 17, migration 0011) Eight small tables became kinds of Meta row, to open the graph with eight node tables
# fewer (~6 MB of memory each). Each: its old table name -> (its kind in Meta, its old columns in their order ->
# the Meta column holding each). A row's Meta key is the kind, ':', then its old key (`id` holds the old key).
# The analyst still sees them as tables of these names (kg/analysis/snapshot.py), and `kg doctor` checks the shape.
MERGED_KINDS: dict[str, tuple[str, dict[str, str]]] = {
    "ManagedBlock": ("block", {"id": "id", "path": "path", "name": "name", "hash": "hash", "glue": "glue",
                               "created_file": "created_file", "flag": "flag", "updated_at": "updated_at"}),
    "Preference": ("pref", {"id": "id", "key": "pkey", "value": "value", "previous": "previous",
                            "action": "action", "at": "at", "source": "source", "session": "session"}),
    "Score": ("score", {"id": "id", "at": "at", "accuracy": "accuracy", "usefulness": "usefulness",
                        "efficiency": "efficiency", "tone": "tone", "proactiveness": "proactiveness",
                        "average": "average", "notes": "notes", "session": "session"}),
    "Tally": ("tally", {"key": "id", "n": "n"}),
    "Topic": ("topic", {"name": "id", "keywords": "keywords", "built_at": "built_at"}),
    "Decision": ("decision", {"id": "id", "a": "a", "b": "b", "score_a": "score_a", "score_b": "score_b",
                              "parts_a": "parts_a", "parts_b": "parts_b", "winner": "winner", "status": "status",
                              "override": "override", "reason": "reason", "created_at": "created_at",
                              "decided_at": "decided_at"}),
    "Proposal": ("proposal", {"id": "id", "number": "number", "type": "type", "target": "target",
                              "target_kind": "target_kind", "change": "change", "text": "text",
                              "hypothesis": "hypothesis", "priority": "priority", "area": "area",
                              "category": "category", "motivation": "motivation", "evidence": "evidence",
                              "risk": "risk", "effort": "effort", "impact": "impact", "status": "status",
                              "reason": "reason", "created_at": "created_at", "decided_at": "decided_at"}),
    "Skill": ("skill", {"slug": "id", "name": "name", "description": "description", "created": "created",
                        "updated": "updated", "source": "source", "triggers": "triggers", "tools": "tools",
                        "path": "path", "session": "session", "revisions": "revisions"}),
}


def meta_key(table: str, key: str) -> str:
    """The Meta key of a row of a merged table by its old key: 'skill:' + a slug (pass it whole as a parameter)."""
    return f"{MERGED_KINDS[table][0]}:{key}"


def unmerged_end(table: str, key: Any) -> tuple[str, Any]:
    """An edge's end as the analyst knew it: a Meta row of a merged kind is its old table and old key."""
    if table == "Meta" and isinstance(key, str) and ":" in key:
        kind, old = key.split(":", 1)
        for name, (k, _) in MERGED_KINDS.items():
            if k == kind:
                return name, old
    return table, key


def split_meta(rows: list[dict]) -> dict[str, list[dict]]:
    """Meta's rows of the merged kinds as the tables they were (name -> rows with the old columns), in Meta's
    order (the migration copied each table in its own order); Meta's own rows (kind 'meta') are left out."""
    by_kind = {kind: name for name, (kind, _) in MERGED_KINDS.items()}
    out: dict[str, list[dict]] = {name: [] for name in MERGED_KINDS}
    for row in rows:
        name = by_kind.get(row.get("kind") or "")
        if name is not None:
            out[name].append({old: row.get(col) for old, col in MERGED_KINDS[name][1].items()})
    return out


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
        raise NewerGraph(f"{graph} was written by a newer kg (it has migration {unknown[-1]}); "
                          "upgrade kg with `pip install -U kaizen-kg`")
    missing = [name for name in known if name not in applied]
    if missing:
        raise SchemaError(f"{graph} needs migration {missing[0]}; run any writing kg command (for example "
                          f"`kg status`) {upgrade}")


def merged_problems(tables: dict[str, str], meta: list[dict]) -> list[str]:
    """What is wrong with the shape migration 0011 left (`kg doctor`): `tables` the graph's tables (name -> "NODE"
    or "REL"), `meta` Meta's rows (key, kind, id). A merged table still there, a row of a merged kind whose key is
    not its kind and its id, a Meta row keyed like a merged kind but not of it."""
    problems = [f"the table {name} is still in the graph (its rows belong in Meta, kind '{kind}')"
                for name, (kind, _) in MERGED_KINDS.items() if tables.get(name) == "NODE"]
    kinds = {kind for kind, _ in MERGED_KINDS.values()}
    for row in meta:
        kind, key = row.get("kind"), row.get("key") or ""
        if kind in kinds and key != f"{kind}:{row.get('id')}":
            problems.append(f"the Meta row {key!r} of kind {kind!r} is not keyed {kind}:<its id {row.get('id')!r}>")
        elif kind not in kinds and key.split(":", 1)[0] in kinds:
            problems.append(f"the Meta row {key!r} is keyed as a {key.split(':', 1)[0]!r} row but is of kind {kind!r}")
    return problems
