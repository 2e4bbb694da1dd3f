"""Auto-linking and near-duplicate detection.

Two halves. The pure half (`kg.graph.decisions`, re-exported here) decides: keywords, similarity, stance and
contradiction, which edge a pair gets, whether an event repeats an earlier one. This module is the I/O half,
on an open `Store`: it asks the full-text index for candidates with the new node's rarest terms (a per-term
document-frequency table, migration 0004, says which are rare), re-ranks them with the pure functions and
writes auto edges that carry their score and their reason. It never scans the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kg.core.errors import NotFound
from kg.core.text import has_cjk, stem, words  # noqa: F401 - has_cjk, stem: re-exported
from kg.graph.decisions import (  # noqa: F401 - the pure half, re-exported: callers use kg.graph.linking
    CUE_LISTS,
    DOCS_KEY,
    SOURCE,
    Doc,
    Duplicate,
    LinkDecision,
    LinkRules,
    Similarity,
    TypingRule,
    cues_in,
    decide_link,
    default_rules,
    derived_key,
    distinct_ids,
    duplicate,
    idf,
    ids_of,
    link_terms,
    pick_query_terms,
    rules_of,
    similarity,
    terms,
    with_pattern,
)
from kg.graph.stances import Stance, contradiction, opposed, stance  # noqa: F401 - re-exported
from kg.graph.term_counts import counting

# -- I/O: the term table ------------------------------------------------------------------------------------


def _raw_map(text: str, rules: LinkRules) -> dict[str, str]:
    """keyword → a surface form of it, to query the full-text index (which stems by itself)."""
    out: dict[str, str] = {}
    for w in words(text):
        k = terms(w, rules)
        if k:
            out.setdefault(k[0], w)
    return out


def node_terms(text: str, rules: LinkRules) -> list[str]:
    return sorted(set(terms(text, rules)))


def prefetch_terms(st: Any, texts: Iterable[str], rules: LinkRules) -> None:
    """Inside `counting(st)`: read the counts of every keyword of these texts (a batch about to be applied)
    at once, with the document count."""
    counts = getattr(st, "_term_counts", None)
    if counts is not None:
        counts.prefetch([DOCS_KEY, *(t for text in texts for t in node_terms(text or "", rules))])


def index_terms(st: Any, text: str, rules: LinkRules, *, found: Candidates | None = None) -> None:
    """Count a new node (already created) in the document-frequency table. On a graph whose table was never
    filled (made before migration 0004), the whole table is counted instead, once. `found` (the node's
    candidates, fetched just before) says whether the table is known to be ready, saving a query."""
    if found is not None and found.table == "counted":
        return
    with counting(st) as counts:
        if (found is None or found.table != "ready") and counts.get(DOCS_KEY) is None:
            rebuild_terms(st, rules)
            return
        for term in [*node_terms(text, rules), DOCS_KEY]:
            counts.add(term)


def rebuild_terms(st: Any, rules: LinkRules, *, batch: int = 5000) -> int:
    """Recount the document-frequency table from every node (after a bulk load that bypassed the write
    path). Returns the number of nodes counted."""
    from kg.store.bulk import iter_rows

    counts: dict[str, int] = {}
    n = 0
    for (text,) in iter_rows(st, "link_all_texts"):  # streamed: a million texts never sit in memory at once
        n += 1
        for t in node_terms(text or "", rules):
            counts[t] = counts.get(t, 0) + 1
    counts[DOCS_KEY] = n
    write_terms(st, counts, batch=batch)
    return n


def write_terms(st: Any, counts: dict[str, int], *, batch: int = 5000) -> None:
    """Replace the document-frequency table with `counts` (a recount, or an import's merge), in one
    transaction."""
    pending = getattr(st, "_term_counts", None)
    if pending is not None:  # a batch's counts in memory: the new table includes its nodes already
        pending.base.clear()
        pending.delta.clear()
    with st.transaction():
        st.run("link_terms_clear")
        rows = [{"term": t, "df": c} for t, c in counts.items()]
        for i in range(0, len(rows), batch):
            st.run("link_terms_load", rows=rows[i : i + batch])


def _df(st: Any, keys: Sequence[str]) -> tuple[dict[str, int], int]:
    found = {}
    with counting(st) as counts:
        for term in [*keys, DOCS_KEY]:
            value = counts.get(term)
            if value is not None:
                found[term] = value
    return found, found.get(DOCS_KEY, 0)


def _df_take(st: Any, keys: Sequence[str]) -> tuple[dict[str, int], int]:
    """Like `_df`, counting the node in as it reads (the counts before it)."""
    with counting(st) as counts:
        found = {term: counts.add(term) for term in [*keys, DOCS_KEY]}
    return found, found.get(DOCS_KEY, 0)


# -- I/O: candidates and edges ------------------------------------------------------------------------------


@dataclass
class Candidates:
    docs: list[Doc]
    weights: dict[str, float]
    query: list[str] = field(default_factory=list)
    table: str = "unknown"  # the keyword table: "ready", or "counted" (recounted with the new node in it)
    sims: dict[tuple[str, str], Similarity] = field(default_factory=dict)

    def similarity(self, a: Doc, b: Doc, rules: LinkRules) -> Similarity:
        """Scored once per pair, however many decisions ask."""
        key = (a.id, b.id)
        if key not in self.sims:
            self.sims[key] = similarity(link_terms(a.text, rules), link_terms(b.text, rules), rules, self.weights)
        return self.sims[key]


def _doc(row: Mapping[str, Any]) -> Doc:
    return Doc(id=row["id"], kind=row["kind"], text=row["text"] or "", entry_type=row.get("entry_type"),
               category=row.get("category"), area=row.get("area"), created_at=row.get("created_at"),
               pattern_key=row.get("pattern_key") if row["kind"] == "event" else None)


def load_doc(st: Any, node_id: str) -> Doc:
    rows = st.run("link_node", id=node_id)
    if not rows:
        raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
    return _doc(rows[0])


def candidates(st: Any, doc: Doc, rules: LinkRules, *, count: bool = False) -> Candidates:
    """Nodes that share the new node's rarest terms, from the full-text index (never a scan).

    With `count`, the node (created, not yet counted) is counted in the keyword table by the same statements
    that read the frequencies before it, and the result says so (`table == "counted"`)."""
    keys = node_terms(doc.text, rules)
    if not keys:
        return Candidates([], {})
    table = "ready"
    with counting(st) as counts:
        ready = counts.get(DOCS_KEY) is not None
    if count and ready:
        df, n_docs = _df_take(st, keys)
        table = "counted"
    else:
        df, n_docs = _df(st, keys)
    if n_docs == 0 and DOCS_KEY not in df:  # never counted (a graph older than the table): count it now
        rebuild_terms(st, rules)
        df, n_docs = _df(st, keys)
        table = "counted"
    weights = {t: idf(df.get(t, 0), n_docs) for t in keys}
    query = pick_query_terms(keys, _raw_map(doc.text, rules), df, n_docs, rules)
    if not query:
        return Candidates([], weights, [], table)
    rows = _index_candidates(st, query, rules.top)
    seen: dict[str, Doc] = {}
    for row in rows:
        if row["id"] == doc.id or row["kind"] == "pattern":
            continue
        if row["id"] not in seen:
            seen[row["id"]] = _doc(row)
    return Candidates(list(seen.values()), weights, query, table)


def _index_candidates(st: Any, query: list[str], k: int) -> list[dict[str, Any]]:
    """The `k` best nodes for the query (patterns among them, as the index ranks them), best first: from the
    graph's own full-text index while it has one (a team graph; an embedded graph until node_fts is retired),
    else from the side index's linking table, ranked as node_fts ranked (kg/store/sidelink.py), their fields
    read from the graph by key (a pattern key changes)."""
    from kg.store.sidelink import candidates as side_candidates
    from kg.store.sidelink import graph_index

    found = None if graph_index(st) else side_candidates(st, query, k)
    if found is None:
        return st.run("link_candidates", q=" ".join(query), k=k)
    out = []
    for node_id, kind, score in found:
        if kind == "pattern":
            out.append({"id": node_id, "kind": kind, "score": score})
            continue
        row = _link_row(st, node_id)
        if row is not None:
            out.append({**row, "score": score})
    return sorted(out, key=lambda r: (-r["score"], r["id"]))


# -- I/O: the candidates' rows, remembered by a writer (issue 17 item 5) ------------------------------------


class _Rows:
    """`link_node` rows a writer read: most of a bulk log's cost was reading each candidate's row by key
    (18 reads an entry, ~0.5 ms each), and the same nodes come back as candidates entry after entry (95 % of
    the reads of a LoCoMo bulk log repeat one made before).

    Rows read inside a batch (`remembering`) are kept for later batches only once its transaction committed
    (`kept`), so a rolled-back batch leaves nothing behind. A row's fields never change once its node is made,
    except an event's `pattern_key`, which only `set_event_key` writes: it drops the row. Outside a batch
    nothing is remembered (and nothing kept is read)."""

    MAX = 200_000  # rows kept; past it the memory starts again

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Any]] = {}
        self.batch: dict[str, dict[str, Any]] | None = None


def _rows_of(st: Any) -> _Rows:
    rows = st.__dict__.get("_link_rows")
    if rows is None:
        rows = st.__dict__["_link_rows"] = _Rows()
    return rows


def _link_row(st: Any, node_id: str) -> dict[str, Any] | None:
    memo = st.__dict__.get("_link_rows")
    batch = memo.batch if memo is not None else None
    if batch is not None:
        row = batch.get(node_id) or memo.kept.get(node_id)
        if row is not None:
            return row
    rows = st.run("link_node", id=node_id)
    if not rows:
        return None
    if batch is not None:
        batch[node_id] = rows[0]
    return rows[0]


def node_row(st: Any, node_id: str) -> dict[str, Any] | None:
    """A node's `link_node` row, as a writer remembers it inside a batch (read by key otherwise)."""
    return _link_row(st, node_id)


@contextmanager
def remembering(st: Any) -> Iterator[None]:
    """Around one batch's transaction (opened inside this block, committed before it ends): the candidates'
    rows read in it are remembered for the batch, and kept for later batches once it committed. Inside a
    transaction opened by a caller (whose commit is not seen here), only for the batch."""
    from kg.store.sideindex import embedded

    if not embedded(st):
        yield
        return
    memo = _rows_of(st)
    outer = bool(getattr(st, "_in_tx", False)) or memo.batch is not None
    saved = memo.batch
    memo.batch = {} if saved is None else saved
    try:
        yield
    except BaseException:
        memo.batch = saved if outer else None
        raise
    if outer:
        memo.batch = saved
        return
    if len(memo.kept) + len(memo.batch) > _Rows.MAX:
        memo.kept.clear()
    memo.kept.update(memo.batch)
    memo.batch = None


def remember_created(st: Any, params: Mapping[str, Any]) -> None:
    """Inside a batch (`remembering`): the row of a node it just created, from the values it was created
    with (`node_create`'s parameters), so that it is never read back as a later entry's candidate."""
    memo = st.__dict__.get("_link_rows")
    if memo is not None and memo.batch is not None:
        memo.batch[params["id"]] = {k: params.get(k) for k in _ROW}


_ROW = ("id", "kind", "entry_type", "category", "area", "text", "created_at", "pattern_key")  # link_node's


def set_event_key(st: Any, event: str, key: str | None, at: datetime) -> None:
    """An event joins a pattern (`key`) or leaves it (None): the only writer of an event's `pattern_key`
    (the remembered candidate rows above rely on it)."""
    st.run("pattern_event_set_key", id=event, key=key, at=at)
    memo = st.__dict__.get("_link_rows")
    if memo is not None:
        row = memo.kept.pop(event, None)
        if memo.batch is not None:  # the batch's own view (dropped with it if it rolls back)
            row = memo.batch.get(event) or row
            if row is not None and row["kind"] == "event":
                memo.batch[event] = {**row, "pattern_key": key}
            else:
                memo.batch.pop(event, None)


def _earlier(a: Doc, b: Doc) -> bool:
    """Whether b was recorded before a (ties broken by id, so a batch applies in order)."""
    if a.created_at is None or b.created_at is None:
        return b.id < a.id
    return (b.created_at, b.id) < (a.created_at, a.id)


def plan_links(doc: Doc, found: Candidates, existing: set[str], rules: LinkRules) -> list[LinkDecision]:
    """The auto edges to create for a node: best first (contradictions first of all), at most `max_links`,
    none to a node it is already joined to (in either direction, by any edge), none to members of its own
    pattern, and one at most to the members of any other pattern."""
    decisions = []
    for other in found.docs:
        if other.id in existing or other.id == doc.id:
            continue
        if doc.pattern_key and other.pattern_key == doc.pattern_key:
            continue
        decision = decide_link(doc, other, rules, sim=found.similarity(doc, other, rules))
        if decision is not None:
            decisions.append(decision)
    decisions.sort(key=lambda d: (d.type != "contradicts", -d.score, d.other))
    # One edge per recurring pattern is enough: its other members are one derived_from hop away.
    pattern_of = {d.id: d.pattern_key for d in found.docs if d.pattern_key}
    seen = {pattern_of[d] for d in existing if d in pattern_of}  # a pattern it is linked to already
    kept = []
    for d in decisions:
        group = pattern_of.get(d.other)
        if group is not None:
            if group in seen:
                continue
            seen.add(group)
        kept.append(d)
    return kept[: rules.max_links]


def link_node(st: Any, node_id: str, rules: LinkRules, *, now: datetime, dry_run: bool = False,
              doc: Doc | None = None, found: Candidates | None = None,
              existing: set[str] | None = None) -> list[dict[str, Any]]:
    """Create the auto edges of one node; returns them (as they would be, with `dry_run`). `existing` are
    the nodes it is joined to already (looked up when not given; a node just created has none)."""
    doc = doc or load_doc(st, node_id)
    if doc.kind == "pattern":
        return []
    found = found or candidates(st, doc, rules)
    if not found.docs:
        return []
    if existing is None:
        existing = {r["other"] for r in st.run("link_neighbours", id=doc.id)}
    plan = plan_links(doc, found, existing, rules)
    out = [{"from": d.src, "to": d.dst, "type": d.type, "score": d.score, "reason": d.reason,
            "other": d.other} for d in plan]
    if dry_run or not plan:
        return out
    with st.transaction():
        _create(st, plan, now)
    return out


MANY_MAX = 5  # link_add_related_to_2 .. _5 (rules/queries/linking.cypher)


def _create(st: Any, plan: list[LinkDecision], now: datetime) -> None:
    """The plan's edges, in its order; inside a batch whose caller keeps the counts (kg/ingest/upkeep.py, which
    keeps them for the many-edge statements as for link_add_related_to), a node's related_to edges go in
    statements of up to `MANY_MAX`, where the first of them stands (issue 17 item 5: ~1 ms an edge, and most
    entries of a bulk log get five)."""
    groups: dict[str, list[LinkDecision]] = {}
    if "link_add_related_to" in getattr(st, "upkeep_by_caller", ()):
        for d in plan:
            if d.type == "related_to":
                groups.setdefault(d.src, []).append(d)
    made: set[str] = set()
    for d in plan:
        group = groups.get(d.src) if d.type == "related_to" else None
        if group is None or len(group) < 2:
            st.run(f"link_add_{d.type}", src=d.src, dst=d.dst, score=d.score, reason=d.reason, at=now)
            continue
        if d.src in made:
            continue  # created with its group
        made.add(d.src)
        for i in range(0, len(group), MANY_MAX):
            part = group[i:i + MANY_MAX]
            if len(part) == 1:
                e = part[0]
                st.run("link_add_related_to", src=e.src, dst=e.dst, score=e.score, reason=e.reason, at=now)
                continue
            params: dict[str, Any] = {"src": d.src, "at": now}
            for k, e in enumerate(part):
                params.update({f"dst{k}": e.dst, f"score{k}": e.score, f"reason{k}": e.reason})
            st.run(f"link_add_related_to_{len(part)}", **params)


def link_new(st: Any, doc: Doc, rules: LinkRules, *, now: datetime, link: bool = True) -> list[dict[str, Any]]:
    """For a node just created: count its keywords and (unless `link` is false) create its auto edges."""
    if not link or doc.kind == "pattern":
        index_terms(st, doc.text, rules)
        return []
    found = candidates(st, doc, rules, count=True)
    index_terms(st, doc.text, rules, found=found)
    return link_node(st, doc.id, rules, now=now, doc=doc, found=found, existing=set())


@dataclass(frozen=True)
class PatternMatch:
    """Where a new event without a Pattern-Key belongs: the existing pattern `key` (its member `via` finds
    it), or a new pattern (`new`) with a derived `key`, made of `members` (earlier events) and the event."""

    key: str
    new: bool
    via: str
    members: tuple[str, ...]
    score: float
    reason: str
    text: str = ""  # for a new pattern: the text of its first event
    # for a new pattern: each earlier member's own (score, reason), its pair with the new event
    member_reasons: Mapping[str, tuple[float, str]] = field(default_factory=dict)


def match_pattern(doc: Doc, found: Candidates, rules: LinkRules,
                  first_of: Callable[[str], Doc | None] | None = None) -> PatternMatch | None:
    """Pure given `first_of`: the pattern a new event joins, from its scored candidates, or None. An earlier
    event already in a pattern wins over loose ones (best score first); loose near-duplicates make a new
    pattern together. With `[dedup] first_only`, a pattern is joined only by a near-duplicate of its first event
    (`first_of(key)`: the text the pattern is named by; None: not known), and a new pattern takes only the loose
    events that are near-duplicates of its first: a chain of pairs, each alike, joined turns of a conversation
    that shared nothing (QA4 #10)."""
    best: dict[str, tuple[float, str, str]] = {}  # pattern key -> (score, member id, reason)
    loose: list[tuple[float, Doc, str]] = []
    theirs: dict[str, tuple[float, str]] = {}  # a loose event -> its own side of the pair
    for other in found.docs:
        if not (other.kind == "event" and other.entry_type == doc.entry_type) or not _earlier(doc, other):
            continue
        dup = duplicate(doc, other, rules, sim=found.similarity(doc, other, rules))
        if dup is None:
            continue
        if other.pattern_key:
            if other.pattern_key not in best or dup.score > best[other.pattern_key][0]:
                best[other.pattern_key] = (dup.score, other.id, dup.reason)
        else:
            loose.append((dup.score, other, dup.reason))
            theirs[other.id] = (dup.score, dup.seen_from(doc.id))
    for key, (score, via, reason) in sorted(best.items(), key=lambda kv: (kv[1][0], kv[0]), reverse=True):
        head = first_of(key) if first_of is not None and rules.dedup_first_only else None
        if head is None or duplicate(doc, head, rules, found.weights) is not None:
            return PatternMatch(key, False, via, (), score, reason)
    if not loose:
        return None
    first = min((d for _, d, _ in loose), key=lambda d: (d.created_at or datetime.min, d.id))
    if rules.dedup_first_only:
        loose = [x for x in loose if x[1].id == first.id or duplicate(x[1], first, rules, found.weights) is not None]
    loose.sort(key=lambda x: (-x[0], x[1].id))
    key = derived_key(rules, doc.entry_type or "", doc.area, first.text)
    score, via, reason = loose[0][0], loose[0][1].id, loose[0][2]
    members = tuple(sorted(d.id for _, d, _ in loose))
    return PatternMatch(key, True, via, members, score, reason, first.text,
                        {m: theirs[m] for m in members})
