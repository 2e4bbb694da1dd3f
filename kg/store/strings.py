"""No row is made with a NULL in a string kg SETs in place, in the embedded store (kuzu 0.11.3's CHECKPOINT tears).

Kùzu 0.11.3 checkpoints a STRING column wrongly when a committed row's string was SET in place and checkpointed,
and a row made later leaves that column NULL (a checkpoint apart each): at the next CHECKPOINT the other rows read
each other's strings, shifted or run together, and a read can crash the process (5, 6, 40 or 200 rows: every
other value torn; 1 to 4, 8 or 16: fine). An empty string instead of the NULL, or the
NULL set to '' in the making's own transaction, is fine. tests/integration/test_string_checkpoint.py holds the
plain-Kùzu probes. It is the family of kg/store/remake.py's list bug.

Meta's `value` is the column kg was seen to tear (`kg import`): the rows made first (the migrations' markers) all
hold one, kg SETs values in place (`aggregate:ready_spans`, flags, clock:zone), and most kinds of row leave it unset
(a tally, a block, a topic ...). So every statement that makes a Meta row is followed, in its transaction, by
`FILL`: a NULL `value` becomes ''. Nothing reads a NULL `value` as a meaning (no query tests `value IS NULL`).
Any nullable string column SET in place is exposed the same way when a row made later leaves it NULL (a NULL
committed before the SET protects; one SET over since does not). Two more were found in normal use and are made
with '' now: Session.summary (each session's end SETs it; the next session was made NULL) and Change.post_block
(each export SETs it; the next change was made NULL); Change's verdict and revert_reason were made '' already.
Node's priority and base_priority (SET in place by decay and reinforcement; NULL in a new lesson, a split, an
imported node) did not tear in kg's order (events made, each decayed or reinforced and checkpointed, then a lesson
with neither, 5, 6 and 40 events) nor in plain-Kùzu probes of values from the priority vocabulary (low, medium,
high, critical; some or all SET, or all made NULL then SET; 5 to 300 rows, three seeds each): left as they are.
Node's pattern_key (SET in place when an event joins a pattern) was torn through kg's own queries once every
node's key was SET over since the last NULL (a young graph whose events all joined patterns, then `kg node add`):
a Node is made with '' where it has no key (node_create, `bulk.copy_rows`) and `read_back` makes it None again in
every read of the embedded store (a column read as the key in a statement on Node, a whole Node), so no caller,
export or `--json` sees ''; the two queries that skip keyless patterns test ''. A key SET to NULL in place (a
split's event leaving its pattern) stays: a SET is no append, and appends are what tear. Meta's other columns
are held by the migration markers' NULLs, which nothing SETs. A team graph (FalkorDB) has no CHECKPOINT and no
such write-ahead log: not needed there (its nodes keep NULL keys, and `read_back` is the embedded store's).
"""

from __future__ import annotations

import re

MAKES_META = re.compile(r"\b(?:CREATE|MERGE)\s*\(\s*\w*\s*:\s*Meta\b", re.IGNORECASE)
FILL = "MATCH (m:Meta) WHERE m.value IS NULL SET m.value = ''"

EMPTY_NODE_STRINGS = ("pattern_key",)  # Node columns made '' where kg means none (node_create, bulk.copy_rows)
_READ_AS = frozenset({"pattern_key", "key"})  # the names kg's queries read Node's pattern_key by


def read_back(cypher: str, columns: list[str], rows: list[list]) -> None:
    """In place: a Node's '' pattern_key is None again, as kg wrote it. In a statement on Node that names
    pattern_key, a column read as it (`... AS key`, `... AS pattern_key`, `x.pattern_key`); in any statement, a
    whole Node returned. No pattern key is '' otherwise (a key is a folded text, never empty)."""
    if not rows:
        return
    named = [i for i, c in enumerate(columns) if c.rpartition(".")[2].strip("`") in _READ_AS] \
        if "pattern_key" in cypher and ":Node" in cypher else []
    # a whole Node, by the first of the first rows that holds something in the column (an OPTIONAL MATCH's first
    # may be null; a column null in every row is not walked to its end)
    firsts = [next((row[i] for row in rows[:64] if row[i] is not None), None) for i in range(len(columns))]
    nodes = [i for i, v in enumerate(firsts) if isinstance(v, dict) and v.get("_label") == "Node"]
    if not named and not nodes:
        return
    for i in named:
        for row in rows:
            if row[i] == "":
                row[i] = None
    for i in nodes:
        for row in rows:
            node = row[i]
            if node is not None:
                for column in EMPTY_NODE_STRINGS:
                    if node.get(column) == "":
                        node[column] = None


def makes_meta(cypher: str) -> bool:
    """Whether a statement can make a Meta row (then `FILL` must follow it in its transaction)."""
    return "Meta" in cypher and MAKES_META.search(cypher) is not None
