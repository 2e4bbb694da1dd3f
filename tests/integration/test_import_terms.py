"""The import adds its nodes to the keyword table in one pass (kg/ingest/trail_terms.py) instead of recounting
every node after it (issue 22): the table it leaves must equal a full recount, whatever the graph held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg.graph import linking
from kg.ingest.trail import import_trail
from kg.ingest.trail_terms import TermTally

TEXTS = [
    "git push failed: no upstream branch for feature-42",
    "推送失败，当前分支没有上游分支",
    "Café crème: the naïve résumé parser failed on İstanbul and ÅNGSTRÖM",
    "the and of 2026 1234 a b",  # stopwords, numbers and one-letter words only
    "Retries retrying retried: the docker builds timed out",
    "混合 text with 中文 and emoji 🚀 pushed",
]


def write_trail(path: Path, start: int, n: int) -> None:
    entries = [{"id": f"ERR-20260101-{i:04d}", "type": "error", "summary": TEXTS[i % len(TEXTS)] + f" #{i % 4}",
                "details": "seen on the ci runner", "logged": f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}",
                "pattern_key": f"push.k{i % 3}" if i % 2 else None, "tags": ["git"]}
               for i in range(start, start + n)]
    nodes = [{"id": f"les-20260101-{start:03d}", "type": "lesson", "content": "Set the upstream before pushing"}]
    path.write_text(json.dumps({"entries": entries, "graph": {"nodes": nodes, "edges": []}}), encoding="utf-8")


def table(ws) -> dict[str, int]:
    with ws.store() as st:
        return {r["term"]: r["df"] for r in st.execute("MATCH (x:Term) WHERE x.df > 0 RETURN x.term AS term, "
                                                         "x.df AS df")}


def recount(ws) -> dict[str, int]:
    with ws.store() as st:
        linking.rebuild_terms(st, linking.rules_of(ws.rules))
    return table(ws)


def test_a_words_keyword_is_its_texts_keyword():
    """The per-word cache gives `node_terms` exactly, on Latin, accented, CJK and mixed texts."""
    rules = linking.default_rules()
    tally = TermTally(rules)
    for text in TEXTS + [t.upper() for t in TEXTS] + [""]:
        assert tally.node_terms(text) == set(linking.node_terms(text, rules)), text


@pytest.mark.parametrize("before", ["empty", "logged", "table lost"])
def test_the_imported_keyword_table_equals_a_recount(ws, tmp_path, before):
    if before != "empty":
        ws.log("error", "git push failed: no upstream", pattern_key="push.k1", now="2026-01-02T10:00:00")
        ws.log("learning", "Set the upstream with git push -u", now="2026-01-02T11:00:00")
        ws.node_add("principle", "Always set the upstream branch when pushing", now="2026-01-02T12:00:00")
        assert table(ws) == recount(ws)  # the write path keeps it exact (a new graph's first entry was counted twice)
    if before == "table lost":  # as on a graph made before migration 0004: the import cannot add to it
        with ws.store() as st:
            st.run("link_terms_clear")
    write_trail(tmp_path / "a.json", 0, 30)
    import_trail(ws, [tmp_path / "a.json"], now="2026-12-01T12:00:00")
    write_trail(tmp_path / "b.json", 30, 25)  # a second import adds to what the first left
    import_trail(ws, [tmp_path / "b.json"], now="2026-12-01T12:00:00")
    kept = table(ws)
    with ws.store() as st:
        nodes = st.execute("MATCH (n:Node) RETURN count(n) AS n")[0]["n"]
    assert kept[linking.DOCS_KEY] == nodes > 55
    assert kept == recount(ws)


def test_the_write_path_keeps_a_new_graphs_keyword_table_exact(ws):
    """A new graph starts with its keyword table counted: the first entry (with a new pattern, so two nodes)
    is counted once, not recounted and then counted again."""
    ws.log("error", "git push failed upstream rejected", pattern_key="git.push-upstream", now="2026-11-01T10:00")
    ws.log("error", "disk quota exceeded on the build host", now="2026-11-01T10:05")
    kept = table(ws)
    assert kept[linking.DOCS_KEY] == 3 and kept["push"] == 2
    assert kept == recount(ws)
