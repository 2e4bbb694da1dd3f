"""The import's keyword counts: the document-frequency table auto-linking ranks by, kept up to date in one
pass over the rows the import loads, instead of a recount of every node in the graph after it.

A node's keywords (`kg.graph.linking.node_terms`) are the distinct keywords of its words, and a word's keyword
depends on the word alone, so each distinct word is turned into its keyword once per import (a trail has a
few thousand distinct words and a million texts): the same counts as `node_terms`, at a dictionary lookup per
word. The table is merged once, after the last batch. When it cannot be merged exactly (a graph whose table
was never filled, or a resumed import whose first run's counts died with it), the whole table is recounted
with the same per-word lookup (the counts of `linking.rebuild_terms`, several times faster).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kg.core.text import words
from kg.graph.linking import DOCS_KEY, LinkRules, terms, write_terms
from kg.store.bulk import iter_rows


class TermTally:
    """Keyword -> number of loaded nodes holding it, with `DOCS_KEY` counting the nodes."""

    def __init__(self, rules: LinkRules):
        self.rules = rules
        self.counts: dict[str, int] = {}
        self.docs = 0
        self._word: dict[str, str | None] = {}  # word -> its keyword (None: a stopword, a number, ...)

    def node_terms(self, text: str) -> set[str]:
        """`linking.node_terms(text)` as a set, a lookup per word."""
        cache = self._word
        out = set()
        for w in words(text):
            t = cache.get(w, "")
            if t == "":
                found = terms(w, self.rules)
                t = cache[w] = found[0] if found else None
            if t is not None:
                out.add(t)
        return out

    def add(self, texts: Iterable[str | None]) -> None:
        counts = self.counts
        for text in texts:
            self.docs += 1
            for t in self.node_terms(text or ""):
                counts[t] = counts.get(t, 0) + 1


def can_merge(st: Any, *, empty: bool, resuming: bool) -> bool:
    """Whether the table can take the import's counts as a sum: it was complete before (or the graph was
    empty) and no earlier, interrupted run of this import loaded nodes it never counted."""
    if resuming:
        return False
    return empty or bool(st.run("link_terms_df", term=DOCS_KEY))


def merge(st: Any, tally: TermTally, *, exact: bool, batch: int = 5000) -> None:
    """Write the table: the stored counts plus the import's (`exact`), else a full recount."""
    if not exact:  # a recount of every node's text, streamed, at a lookup per word (`rebuild_terms`' counts)
        recount = TermTally(tally.rules)
        recount.add(text for (text,) in iter_rows(st, "link_all_texts"))
        counts = dict(recount.counts)
        counts[DOCS_KEY] = recount.docs
        write_terms(st, counts, batch=batch)
        return
    if not tally.docs:
        return
    counts = dict(tally.counts)
    counts[DOCS_KEY] = tally.docs
    for row in st.run("trail_terms_all"):  # the table is small: a row per distinct keyword
        counts[row["term"]] = counts.get(row["term"], 0) + int(row["df"] or 0)
    write_terms(st, counts, batch=batch)
