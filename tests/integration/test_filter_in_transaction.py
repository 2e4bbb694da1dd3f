"""A read inside a write transaction must not trust a list filter Kùzu pushes into a scan (kuzu 0.11.3).

Kùzu 0.11.3 reads wrong rows when a statement filters a table by `x IN list` (a parameter, a literal list or
`list_contains`) pushed into the table's scan while the open transaction has made rows of that table: joined to
an edge, the new row comes back with another row's node and its text cut to that row's length (or bytes no UTF-8
decoder takes), and one row comes twice; alone, a row remade in the transaction (deleted and made again, as
kg/store/remake.py does) is lost and another comes twice (QA6 saw a lone scan lose a new row too: no kg read
runs such a scan after a write in its transaction). Rule nodes joined by `contradicts` and filtered at both ends
by a list: a pair twice once a node was made (the last tests). `kg cycle` promoted a rule and read the live changes so
(`lc_live_changes`) in the transaction that made it, and wrote MEMORY.md from that read: the new line cut short
or another rule's twice. The same filter behind `WITH` after a join (not pushed into the scan; a lone scan still
takes it), the list UNWOUND and matched by equality, an equality or an OR of equalities, no filter, an autocommitted
write, or the transaction committed before the read: every row right. kg's reads of changes by status take the
`WITH` shape after a join and the UNWIND shape on a lone scan (rules/queries/lifecycle.cypher).

Plain Kùzu, real files in a temp folder; when kuzu reads right, the first test fails and the shapes may go back."""

from __future__ import annotations

from pathlib import Path

import kuzu
import pytest

pytestmark = pytest.mark.embedded_only("the probes are of Kùzu's own scans")

JOIN = "MATCH (c:Change)-[r:change_applies]->(n:Node) "
ROW = " RETURN c.id AS id, n.id AS node, c.text AS text"
ALONE = "MATCH (c:Change) "
ROW_ALONE = " RETURN c.id AS id, 'n' + substring(c.id, 2, 9) AS node, c.text AS text"
WRONG = {
    "join, IN a parameter": JOIN + "WHERE c.status IN $statuses" + ROW,
    "join, IN a literal list": JOIN + "WHERE c.status IN ['applied', 'confirmed']" + ROW,
    "join, list_contains": JOIN + "WHERE list_contains($statuses, c.status)" + ROW,
    "join, filter first": "MATCH (c:Change) WHERE c.status IN $statuses MATCH (c)-[r:change_applies]->(n:Node)" + ROW,
}
RIGHT = {
    "join, IN behind WITH": JOIN + "WITH c, n WHERE c.status IN $statuses" + ROW,
    "join, equality": JOIN + "WHERE c.status = 'applied'" + ROW,
    "join, OR of equalities": JOIN + "WHERE c.status = 'applied' OR c.status = 'confirmed'" + ROW,
    "join, no filter": JOIN + ROW,
    "join, UNWIND and an equality": "UNWIND $statuses AS s " + JOIN + "WHERE c.status = s" + ROW,
    "alone, UNWIND and an equality": "UNWIND $statuses AS s " + ALONE + "WHERE c.status = s" + ROW_ALONE,
    "alone, no filter": ALONE + ROW_ALONE,
}
REMADE_WRONG = {  # a lone scan takes the filter into its scan through WITH too
    "alone, IN a parameter": ALONE + "WHERE c.status IN $statuses" + ROW_ALONE,
    "alone, IN behind WITH": ALONE + "WITH c WHERE c.status IN $statuses" + ROW_ALONE,
    "join, IN a parameter": WRONG["join, IN a parameter"],
}


def _text(i: int, version: int = 0) -> str:
    return f"rule {i}.{version} " + "x" * (3 * i)  # each row's text a different length


class Graph:
    """Node, Change and change_applies as kg has them (the columns that matter), `old` changes committed."""

    def __init__(self, path: Path, old: int) -> None:
        self.db = kuzu.Database(str(path))
        self.conn = kuzu.Connection(self.db)
        self.conn.execute("CREATE NODE TABLE Node(id STRING PRIMARY KEY, text STRING)")
        self.conn.execute("CREATE NODE TABLE Change(id STRING PRIMARY KEY, text STRING, status STRING)")
        self.conn.execute("CREATE REL TABLE change_applies(FROM Change TO Node)")
        self.want = {}
        for i in range(1, old + 1):
            self.make(i)

    def make(self, i: int, version: int = 0, node: bool = True) -> None:
        if node:
            self.conn.execute("CREATE (:Node {id: $id, text: $text})", {"id": f"n{i}", "text": _text(i)})
        self.conn.execute("CREATE (:Change {id: $id, text: $text, status: 'applied'})",
                          {"id": f"c{i}", "text": _text(i, version)})
        self.conn.execute("MATCH (c:Change {id: $c}), (n:Node {id: $n}) CREATE (c)-[:change_applies]->(n)",
                          {"c": f"c{i}", "n": f"n{i}"})
        self.want[f"c{i}"] = (f"n{i}", _text(i, version))

    def remake(self, i: int) -> None:
        self.conn.execute("MATCH (c:Change {id: $id}) DETACH DELETE c", {"id": f"c{i}"})
        self.make(i, version=1, node=False)

    def read(self, query: str) -> list[tuple]:
        params = {"statuses": ["applied", "confirmed"]} if "$statuses" in query else {}
        result = self.conn.execute(query, params)
        rows = []
        while result.has_next():
            try:
                rows.append(tuple(result.get_next()))
            except UnicodeDecodeError:  # a text cut inside a character, or another row's bytes
                rows.append(("undecodable",))
        return sorted(rows)

    def right(self) -> list[tuple]:
        return sorted((k, *v) for k, v in self.want.items())

    def close(self) -> None:
        self.conn.close()
        self.db.close()


def _read_in_transaction(path: Path, old: int, query: str, *, remade: bool = False, commit_first: bool = False,
                         autocommit: bool = False) -> tuple[list[tuple], list[tuple]]:
    g = Graph(path, old)
    try:
        if not autocommit:
            g.conn.execute("BEGIN TRANSACTION")
        g.remake(1) if remade else g.make(old + 1)
        if commit_first:
            g.conn.execute("COMMIT")
            g.conn.execute("BEGIN TRANSACTION")
        got = g.read(query)
        if not autocommit:
            g.conn.execute("COMMIT")
        return got, g.right()
    finally:
        g.close()


def _wrong_reads(tmp_path: Path, shapes: dict[str, str], olds: list[int], *, remade: bool) -> list[str]:
    out = []
    for i, (shape, query) in enumerate(shapes.items()):
        for old in olds:
            got, right = _read_in_transaction(tmp_path / f"g{i}-{old}.kuzu", old, query, remade=remade)
            if got != right:
                out.append(f"{shape} ({old} committed)")
    return out


# Which shape and size reads wrong varies from run to run (the file's layout, the machine's load: three runs of
# each shape alone failed different ones), so the probe asks that the hazard shows in some of them, not in each.
def test_kuzu_reads_a_row_made_in_the_transaction_wrong_through_a_pushed_list_filter(tmp_path):
    """The probe: when kuzu reads all of these right, this fails (and kg's `WITH` shapes may go back)."""
    assert _wrong_reads(tmp_path, WRONG, [2, 3, 5], remade=False)


def test_kuzu_reads_a_row_remade_in_the_transaction_wrong_through_a_pushed_list_filter(tmp_path):
    assert _wrong_reads(tmp_path, REMADE_WRONG, [2, 5, 40], remade=True)


def test_one_committed_row_and_a_new_one_read_right(tmp_path):
    """Why a workspace's second rule was right and its third went wrong: one row before the new one reads right."""
    got, right = _read_in_transaction(tmp_path / "g.kuzu", 1, WRONG["join, IN a parameter"])
    assert got == right


@pytest.mark.parametrize("old", [1, 2, 3, 5, 40])
@pytest.mark.parametrize("remade", [False, True])
@pytest.mark.parametrize("shape", list(RIGHT))
def test_the_safe_shapes_read_every_row_made_or_remade_in_the_transaction(tmp_path, shape, remade, old):
    """kg's shape (`WITH ... WHERE x IN $list`) and the others Kùzu reads right in the transaction."""
    got, right = _read_in_transaction(tmp_path / "g.kuzu", old, RIGHT[shape], remade=remade)
    assert got == right


@pytest.mark.parametrize("how", ["commit_first", "autocommit"])
@pytest.mark.parametrize("remade", [False, True])
def test_a_committed_write_reads_right_through_the_pushed_filter(tmp_path, how, remade):
    got, right = _read_in_transaction(tmp_path / "g.kuzu", 5, WRONG["join, IN a parameter"], remade=remade,
                                      **{how: True})
    assert got == right


# Rules joined by `contradicts` (kg/lifecycle/settling.py reads them in the cycle's transaction, after `promote`
# made a rule node there): the pair filter `a.id IN $ids AND b.id IN $ids` returned a pair twice (QA6); each rule
# by primary key (rules/queries/lifecycle.cypher, lc_contradictions) reads each pair once.
PAIRS_WRONG = ("MATCH (a:Node)-[r:contradicts]-(b:Node) WHERE a.id IN $ids AND b.id IN $ids AND a.id < b.id "
               "RETURN a.id, b.id, r.reason")
PAIRS_KG = "UNWIND $ids AS i MATCH (a:Node {id: i})-[r:contradicts]-(b:Node) RETURN a.id, b.id, r.reason"


def _pairs_in_transaction(path: Path, old: int, query: str, *, edge: bool) -> tuple[list[tuple], list[tuple]]:
    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    try:
        conn.execute("CREATE NODE TABLE Node(id STRING PRIMARY KEY, kind STRING, text STRING)")
        conn.execute("CREATE REL TABLE contradicts(FROM Node TO Node, reason STRING)")
        pair = "MATCH (a:Node {id: $a}), (b:Node {id: $b}) CREATE (a)-[:contradicts {reason: $r}]->(b)"
        for i in range(1, old + 1):
            conn.execute("CREATE (:Node {id: $id, kind: 'principle', text: $t})", {"id": f"n{i:03}", "t": _text(i)})
        want = []
        for i in range(1, old, 2):
            conn.execute(pair, {"a": f"n{i:03}", "b": f"n{i + 1:03}", "r": "r" * i})
            want.append((f"n{i:03}", f"n{i + 1:03}", "r" * i))
        conn.execute("BEGIN TRANSACTION")
        new = f"n{old + 1:03}"
        conn.execute("CREATE (:Node {id: $id, kind: 'principle', text: 'promoted'})", {"id": new})
        if edge:
            conn.execute(pair, {"a": new, "b": "n001", "r": "new"})
            want.append(("n001", new, "new"))
        ids = [f"n{i:03}" for i in range(1, old + 2)]
        result = conn.execute(query, {"ids": ids})
        rows = []
        while result.has_next():
            try:
                rows.append(tuple(result.get_next()))
            except UnicodeDecodeError:
                rows.append(("undecodable",))
        conn.execute("COMMIT")
        if query == PAIRS_KG:  # what settling.py keeps: within the ids, from the lower id's side
            rows = [r for r in rows if r[0] < r[1] and r[1] in ids]
        return sorted(rows), sorted(want)
    finally:
        conn.close()
        db.close()


def test_kuzu_reads_a_pair_twice_once_a_rule_node_is_made_in_the_transaction(tmp_path):
    """The probe for lc_contradictions' old shape: when kuzu reads these right, this fails."""
    reads = [_pairs_in_transaction(tmp_path / f"w{old}.kuzu", old, PAIRS_WRONG, edge=False) for old in (2, 4, 5, 8)]
    assert any(got != right for got, right in reads)


@pytest.mark.parametrize("edge", [False, True])
@pytest.mark.parametrize("old", [2, 3, 4, 5, 8, 40])
def test_the_rules_pairs_by_primary_key_read_right_in_the_transaction(tmp_path, old, edge):
    got, right = _pairs_in_transaction(tmp_path / "g.kuzu", old, PAIRS_KG, edge=edge)
    assert got == right
