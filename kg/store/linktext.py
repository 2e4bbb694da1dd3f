"""The text Kùzu's own full-text index (node_fts) indexed for a node's tokens, or asked for a query (issue 22):
what the side index's linking term counts (kg/store/linkpost.py, asked by kg/store/sidelink.py) hold and ask,
so that linking's candidates are node_fts's. Measured against kuzu 0.11.3 (tests/integration/test_side_link.py):
its ignore pattern, its whole stopword list (rules/search_stopwords.toml [fts] and [node_fts]), its porter
stemmer on two-letter words (FTS5's leaves words under three letters as they are)."""

from __future__ import annotations

import re

_IGNORE: re.Pattern[str] | None = None
_LINK_STOP: frozenset[str] | None = None


def link_text(tokens: str | None, *, query: bool = False) -> str:
    """The text Kùzu's full-text index (node_fts) indexed for these tokens, or (`query`) asked for this query:
    its ignore pattern (rules/search_stopwords.toml) takes ASCII digits and punctuation out (`abc123` is `abc`,
    `test_api` two words); a node's text loses Kùzu's stopwords ([fts] and [node_fts] of
    rules/search_stopwords.toml), a query none. Its porter stemmer stems two-letter words too, which FTS5's
    leaves as they are: those it changes (`bs` → `b`, `ay` → `ai`) are written stemmed."""
    stop = _link_stop()  # (and the ignore pattern)
    stop = frozenset() if query else stop
    assert _IGNORE is not None
    return " ".join([_SHORT.get(w, w) if len(w) == 2 else _long(w) if len(w) > _PORTER_MAX // 4 else w
                     for w in _IGNORE.sub(" ", (tokens or "").lower()).split() if w not in stop])


_PORTER_MAX = 64  # FTS5's porter tokenizer passes a token of more bytes through unstemmed; Kùzu's stems it


def _long(w: str) -> str:
    """A word FTS5's porter tokenizer leaves unstemmed for its length (over 64 bytes), stemmed as Kùzu's porter
    stemmer stems it: its tail (the longest that fits, not starting at a `y`, whose class depends on the letter
    before) stemmed by FTS5, after the head left as it is. Porter's steps read the end of a word and, of what
    comes before, only its measure up to 2 (`m > 1`) and whether it holds a vowel: a tail of up to 64 letters
    reads the same unless it is nearly all one class (state: such a word, 64 consonants in a row, may stem
    otherwise). A word the tokenizer splits (a separator of its own inside) is left as it is."""
    if len(w.encode()) <= _PORTER_MAX:
        return w
    from kg.store import linkpost

    cut = 0
    while cut < len(w) and (len(w[cut:].encode()) > _PORTER_MAX or w[cut] == "y"):
        cut += 1
    if linkpost.stems_of([w])[0] != (w,):
        return w
    stemmed = linkpost.stems_of([w[cut:]])[0]
    return w[:cut] + stemmed[0] if len(stemmed) == 1 else w


def _short(w: str) -> str:
    """Porter's steps 1a and 1c on a two-letter word (the only ones that change one)."""
    if w[1] == "s" and w[0] != "s":
        w = w[0]
    elif w[1] == "y" and w[0] in "aeiou":
        w = w[0] + "i"
    return w


_SHORT = {a + b: _short(a + b) for a in "abcdefghijklmnopqrstuvwxyz" for b in "sy" if _short(a + b) != a + b}


def _link_stop() -> frozenset[str]:
    global _LINK_STOP, _IGNORE
    if _LINK_STOP is None:
        from kg.core.policy import packaged
        from kg.store.sidefile import _stop

        rules = packaged("search_stopwords")["node_fts"]
        _IGNORE = re.compile(rules["ignore"])
        _LINK_STOP = _stop() | frozenset(rules["more"])
    return _LINK_STOP


def form() -> str:
    """What the linking table's text depends on (for the side file's version stamp)."""
    # (`long`: words over 64 bytes are written stemmed, as Kùzu stemmed them)
    return " ".join(sorted(_link_stop())) + "|" + (_IGNORE.pattern if _IGNORE else "") + "|long"
