"""The graph schema and its migrations.

Migrations are named and applied in list order; the names applied to a database are stored in its `Meta`
table. A database that carries a migration this version of kg does not know was made by a newer kg, and is
refused with a message that says so. Append new migrations at the end; never edit one that has shipped.
"""

from __future__ import annotations

KNOWLEDGE_KINDS = ("event", "lesson", "principle", "knowledge", "pattern")
EDGE_TYPES = ("caused_by", "led_to", "supports", "contradicts", "related_to", "derived_from")

_EDGE_PROPS = "created_at TIMESTAMP, manual BOOLEAN, score DOUBLE, reason STRING"

# One node table for the five knowledge kinds: they share identity, text, lifecycle and the full-text index,
# and a single table keeps id lookups, auto-link candidates and search to one index. `kind` says which of
# the five a node is; fields that only some kinds use are null elsewhere.
_NODE = """
CREATE NODE TABLE Node(
    id STRING PRIMARY KEY,
    kind STRING,
    entry_type STRING,
    text STRING,
    details STRING,
    action STRING,
    category STRING,
    priority STRING,
    status STRING,
    area STRING,
    source STRING,
    pattern_key STRING,
    session STRING,
    files STRING[],
    tags STRING[],
    error_text STRING,
    context STRING,
    reproducible STRING,
    user_context STRING,
    complexity STRING,
    frequency STRING,
    redactions STRING[],
    created_at TIMESTAMP,
    updated_at TIMESTAMP,
    reinforced_at TIMESTAMP,
    pinned BOOLEAN,
    stale BOOLEAN,
    tokens STRING
)"""

MIGRATIONS: list[tuple[str, list[str]]] = [
    (
        "0001_knowledge_graph",
        [
            _NODE,
            *[f"CREATE REL TABLE {t}(FROM Node TO Node, {_EDGE_PROPS})" for t in EDGE_TYPES],
            "CREATE NODE TABLE Session(id STRING PRIMARY KEY, started_at TIMESTAMP, ended_at TIMESTAMP, "
            "summary STRING, source STRING)",
            # Full-text index over normalised tokens (CJK text is split into character bigrams first,
            # because Kùzu's tokenizer splits on whitespace only).
            "CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'], stemmer := 'porter')",
        ],
    ),
]

META_DDL = "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)"
