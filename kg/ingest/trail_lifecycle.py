"""The lifecycle's part of the trail: applied changes, proposals, conflict decisions, kg's marked blocks, and each
node's own state (when it was last updated and reinforced, its decay, its pin).

A graph rebuilt from its trail (`kg doctor --repair` over a lost graph, `kg import trail` into a new workspace)
used to forget them: the changes were written as `[]`, so `kg why` could not say what wrote a line and a revert
had nothing to restore; a reverted pattern's history was gone, so the next cycle proposed its rule again; the
pending proposals were gone, so the next cycle proposed them again under new numbers. The trail now carries
them (`changes`, and `lifecycle` beside `graph`), and the import loads them after the nodes they point at, each
once (a trail imported again adds nothing), so that export → import → export gives the same trail.

Whose lifecycle: its records describe lines kg wrote into the files of the workspace the trail came from. It is
taken only into a graph that held no node and no change when `kg import trail` began (a restore, a move, a graph
rebuilt by `kg doctor --repair`), and from one file only (`Claim`: the first that carries one). Into a graph that
holds its own history (a merge of another workspace's trail, or this workspace's own trail imported again) it is
not imported: a record the graph holds as it is counts as already present, the rest are counted as not imported
(`lifecycle_not_imported`, and a warning), never loaded. Loaded under their ids they took this workspace's
`chg-<day>-001` for theirs (the other's change was dropped as "already present" and its proposal's edge reached
this workspace's change); loaded under new ids, this workspace's cycle would check and revert rules in files it
never wrote. The trail's entries and nodes are imported in either case.

A team graph (FalkorDB) keeps its lifecycle per workspace on the server: its trail carries none of it, and an
import into one loads none (counted as `lifecycle_not_imported`, and said). In both cases the rules the other
workspace's changes rendered are not lost: each waits as an `import` proposal (kg/lifecycle/imported.py,
kg/lifecycle/imported_rules.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import UsageError
from kg.store import bulk, plain
from kg.store.schema import MERGED_KINDS, meta_key

KINDS = ("changes", "proposals", "decisions", "blocks")
_TABLE = {"proposals": "Proposal", "decisions": "Decision", "blocks": "ManagedBlock"}

CHANGE_COLUMNS = (
    "id", "kind", "target", "block", "target_kind", "text", "hypothesis", "prior_block", "prior_exists",
    "post_block", "pattern_key", "applied_at", "next_check", "due_since", "check_count", "verdict", "verdict_at",
    "rate_before", "rate_after", "evidence", "status", "reverted_at", "revert_reason", "proposal", "source",
)
_TIMES = frozenset({"applied_at", "next_check", "due_since", "verdict_at", "reverted_at", "created_at",
                    "decided_at", "updated_at"})
_LISTS = frozenset({"evidence"})
_INTS = frozenset({"check_count", "proposal", "number", "score_a", "score_b"})
_FLOATS = frozenset({"rate_before", "rate_after"})
_BOOLS = frozenset({"prior_exists", "override", "created_file"})

# a node's own state in the trail -> its column (entries and graph nodes alike)
NODE_STATE = (("updated", "updated_at"), ("reinforced", "reinforced_at"), ("decay_stage", "decay_stage"),
              ("base_priority", "base_priority"), ("pinned", "pinned"), ("stale", "stale"))
NODE_STATE_COLUMNS = tuple(col for _, col in NODE_STATE)


# -- export -------------------------------------------------------------------------------------------------
def state_of(n: dict[str, Any]) -> dict[str, Any]:
    """A node's own state as the trail writes it (`n` a plain row)."""
    return {name: n.get(col) for name, col in NODE_STATE}


def read(st: Any, ws: Any) -> dict[str, list[dict[str, Any]]]:
    """The lifecycle's rows for the trail, in a stable order; none on a team graph."""
    if getattr(ws, "store_url", None) is not None:
        return {kind: [] for kind in KINDS}
    changes = []
    for r in st.run("trail_changes"):
        c = plain(r["c"])
        changes.append({**{k: c.get(k) for k in CHANGE_COLUMNS}, "rule": r["rule"], "pattern": r["pattern"]})
    about: dict[str, dict[str, list[str]]] = {}
    for r in st.run("trail_meta_about"):
        about.setdefault(r["key"], {}).setdefault(r["type"], []).append(r["id"])
    out: dict[str, list[dict[str, Any]]] = {"changes": changes}
    kinds = {MERGED_KINDS[table][0]: name for name, table in _TABLE.items()}
    for name in _TABLE:
        out[name] = []
    for r in st.run("trail_meta", kinds=sorted(kinds)):
        m = plain(r["m"])
        name = kinds[m["kind"]]
        row = {old: m.get(col) for old, col in MERGED_KINDS[_TABLE[name]][1].items()}
        if name != "blocks":
            edges = about.get(m["key"], {})
            row["about"] = sorted(edges.get("about", []))
            if name == "proposals":
                row["for_change"] = (edges.get("change") or [None])[0]
        out[name].append(row)
    return out


# -- import -------------------------------------------------------------------------------------------------
class Claim:
    """Whose lifecycle one `kg import trail` takes (see the module's docstring): `open` is decided once, by the first
    run of files, before it writes (None until then); `source` is the one file whose lifecycle is taken, the first
    met that carries one. The import's mark keeps both, so a resumed import takes the same one."""

    def __init__(self, open_: bool | None = None, source: str | None = None) -> None:
        self.open, self.source = open_, source

    @classmethod
    def of_mark(cls, mark: Any) -> Claim:
        """From an interrupted import's mark (None: unreadable); one written before the mark kept it took every
        file's, as then. A mark that cannot be read, or whose claim cannot, is decided from the graph again (it
        took another workspace's lifecycle into a graph with a history of its own)."""
        if isinstance(mark, dict) and "lifecycle" not in mark:
            return cls(True)
        claim = mark.get("lifecycle") if isinstance(mark, dict) else None
        if not isinstance(claim, dict) or not isinstance(claim.get("open"), bool):
            return cls()
        source = claim.get("source")
        return cls(claim["open"], source if isinstance(source, str) else None)

    def as_mark(self) -> dict[str, Any]:
        return {"open": self.open, "source": self.source}

    def decide(self, st: Any, team: bool) -> None:
        if self.open is None:  # (a team graph takes none: `load`)
            self.open = not team and st.run("bulk_node_count")[0]["n"] == 0 \
                and st.run("trail_lifecycle_count")[0]["n"] == 0

    def takes(self, source: Any) -> bool:
        """Whether the lifecycle of the file `source` is taken; the first such file asked about claims it."""
        if not self.open or not isinstance(source, str):
            return False
        source = str(Path(source).resolve())  # as the mark names its files: a resumed import reads those
        if self.source is None:
            self.source = source
        return source == self.source


def apply_state(row: dict[str, Any], item: dict[str, Any]) -> None:
    """A node row takes the state its trail item carries (a trail without it keeps the import's defaults)."""
    for name, col in NODE_STATE:
        value = item.get(name)
        if value is None:
            continue
        if col in ("updated_at", "reinforced_at"):
            try:
                row[col] = clock.parse_time(str(value))
            except UsageError:
                continue
        elif col == "decay_stage" and isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
            row[col] = value
        elif col == "base_priority" and isinstance(value, str):
            row[col] = value
        elif col in ("pinned", "stale") and isinstance(value, bool):
            row[col] = value


def _typed(item: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any] | None:
    """The item's values for `columns`, each of its column's type (None where absent); None when one is not."""
    row: dict[str, Any] = {}
    for col in columns:
        v = item.get(col)
        if v is None:
            row[col] = None
        elif col in _TIMES or col in ("at", "created", "updated"):
            try:
                row[col] = clock.parse_time(str(v))
            except UsageError:
                return None
        elif col in _LISTS:
            if not isinstance(v, list):
                return None
            row[col] = [str(x) for x in v]
        elif col in _INTS:
            if isinstance(v, bool) or not isinstance(v, int):
                return None
            row[col] = v
        elif col in _FLOATS:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None
            row[col] = float(v)
        elif col in _BOOLS:
            if not isinstance(v, bool):
                return None
            row[col] = v
        else:
            row[col] = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return row


def _read_spool(spool: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(spool, encoding="utf-8") as fh:
        for line in fh:
            kind, item = json.loads(line)
            yield kind, item


def load(ws: Any, st: Any, spool: Path, report: Any, mark: Callable[[], None], alias: dict[str, str],
         present: Callable[[list[str]], set[str]], claim: Claim) -> dict[str, int]:
    """Load the lifecycle items spooled by the import, after every node and edge is in: the changes with their
    edges to the rule and pattern they name (`alias`: a trail pattern the graph holds under another id), then the
    proposals, decisions and blocks, each once (those the graph holds are counted as already present). Only the
    file's that `claim` takes: the others' are counted (`_not_taken`). `present`: which of some node ids are in the
    graph. The tables are small (a lifecycle's decisions): read whole."""
    items: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    others: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for kind, item in _read_spool(spool):
        (items if claim.takes(item.get("_source")) else others)[kind].append(item)
    loaded = dict.fromkeys(KINDS, 0)
    if getattr(ws, "store_url", None) is not None:  # counted as not imported, as beside a graph's own history
        base = ws.root.resolve()
        for kind in KINDS:
            for item in items[kind] + others[kind]:
                if kind == "blocks" and item.get("hash") and not _holds(base, item.get("path")):
                    report.skip("block of a file this workspace does not hold (the next cycle writes it)")
                else:
                    report.lifecycle_not_imported[kind] = report.lifecycle_not_imported.get(kind, 0) + 1
        return loaded
    if any(others.values()):
        _not_taken(st, others, report, ws.root)
    if not any(items.values()):
        return loaded
    changes, applies, patterns = _changes(st, items["changes"], report, alias, present)
    metas, about, for_change = _metas(st, items, report, alias, present, ws.root)
    known_changes = {c["id"] for c in changes} | _changes_present(st, [c for _, c, _ in for_change])
    for_change = [p for p in for_change if p[1] in known_changes]
    if changes or applies or patterns or metas or about or for_change:
        mark()
    bulk.copy_rows(st, "Change", changes, scratch=ws.kg_dir, columns=CHANGE_COLUMNS)
    for label, rows in (("change_applies", applies), ("change_pattern", patterns)):
        bulk.copy_rows(st, label, rows, scratch=ws.kg_dir, columns=("src", "dst", "created_at"))
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in metas:
        by_kind.setdefault(row["kind"], []).append(row)
    for rows in by_kind.values():
        bulk.copy_rows(st, "Meta", rows, scratch=ws.kg_dir, columns=list(rows[0]))
    for label, pairs in (("proposal_about", [p for p in about if p[0].startswith("proposal:")]),
                         ("decision_about", [p for p in about if p[0].startswith("decision:")]),
                         ("proposal_change", for_change)):
        bulk.copy_rows(st, label, ({"src": k, "dst": n, "created_at": at} for k, n, at in pairs),
                       scratch=ws.kg_dir, columns=("src", "dst", "created_at"))
    loaded["changes"] = len(changes)
    for row in metas:
        loaded[{"proposal": "proposals", "decision": "decisions", "block": "blocks"}[row["kind"]]] += 1
    return loaded


def _holds(base: Path, path: Any) -> bool:
    if not isinstance(path, str) or not path:
        return False
    target = (base / path).resolve()
    return target.is_relative_to(base) and target.is_file()


def _changes_present(st: Any, ids: list[str]) -> set[str]:
    return {r["id"] for r in st.run("trail_changes_present", ids=ids)} if ids else set()


def _changes(st: Any, items: list[dict[str, Any]], report: Any, alias: dict[str, str],
             present: Callable[[list[str]], set[str]]) -> tuple[list, list, list]:
    rows: dict[str, dict[str, Any]] = {}
    links: dict[str, tuple[str | None, str | None]] = {}
    for item in items:
        row = _typed(item, CHANGE_COLUMNS) if isinstance(item.get("id"), str) and item["id"] else None
        if row is None or row["applied_at"] is None:
            report.skip("change kg cannot read")
            continue
        if row["id"] in rows:
            report.skip("duplicate id in the imported files")
            continue
        rows[row["id"]] = row
        rule, pattern = item.get("rule"), item.get("pattern")
        links[row["id"]] = (alias.get(rule, rule) if isinstance(rule, str) else None,
                            alias.get(pattern, pattern) if isinstance(pattern, str) else None)
    have = _changes_present(st, list(rows))
    report.already_present += len(have)
    fresh = [r for i, r in rows.items() if i not in have]
    # a change present may lack its edges (an import killed between the two COPYs): those it lacks are loaded too
    linked = {(x["src"], x["dst"], x["type"]) for x in st.run("trail_change_links", ids=sorted(have))} \
        if have else set()
    nodes = present(sorted({n for r in rows.values() for n in links[r["id"]] if n}))
    applies = [{"src": i, "dst": links[i][0], "created_at": r["applied_at"]} for i, r in rows.items()
               if links[i][0] in nodes and (i, links[i][0], "change_applies") not in linked]
    patterns = [{"src": i, "dst": links[i][1], "created_at": r["applied_at"]} for i, r in rows.items()
                if links[i][1] in nodes and (i, links[i][1], "change_pattern") not in linked]
    return fresh, applies, patterns


def _metas(st: Any, items: dict[str, list[dict[str, Any]]], report: Any, alias: dict[str, str],
           present: Callable[[list[str]], set[str]], root: Path) -> tuple[list, list, list]:
    """Meta rows of the proposals, decisions and blocks not in the graph yet, their `about` edges (key, node,
    time) to nodes the graph holds, and the proposals' (key, change, time) edges to their changes.

    A block is what kg last wrote into a file of the workspace the trail came from: it is taken where this
    workspace holds that file (a graph rebuilt in its own workspace), or where kg wrote nothing (its hash empty:
    a block a revert emptied). Into a new workspace it would flag each block as removed by hand and pause the
    verification of every rule in it; without it, the next cycle writes the blocks afresh."""
    base = root.resolve()
    rows: dict[str, dict[str, Any]] = {}
    about: list[tuple[str, str, datetime | None]] = []
    for_change: list[tuple[str, str, datetime | None]] = []
    for name, table in _TABLE.items():
        kind, columns = MERGED_KINDS[table]
        for item in items[name]:
            key_col = next(iter(columns))  # the old key: id (a Tally's key, a Skill's slug are not here)
            row = _typed(item, tuple(columns)) if isinstance(item.get(key_col), str) and item[key_col] else None
            if row is None:
                report.skip(f"{name[:-1]} kg cannot read")
                continue
            if name == "blocks" and row.get("hash") and not _holds(base, row.get("path")):
                report.skip("block of a file this workspace does not hold (the next cycle writes it)")
                continue
            key = meta_key(table, row[key_col])
            if key in rows:
                report.skip("duplicate id in the imported files")
                continue
            meta = {"key": key, "kind": kind, **{col: row[old] for old, col in columns.items()}}
            rows[key] = meta
            for node in item.get("about") or []:
                if isinstance(node, str):
                    about.append((key, alias.get(node, node), meta.get("created_at")))
            if isinstance(item.get("for_change"), str):
                for_change.append((key, item["for_change"], meta.get("created_at")))
    have = {r["key"] for r in st.run("trail_meta_present", keys=list(rows))} if rows else set()
    report.already_present += len(have)
    # as for changes: a proposal or decision present may lack the edges a killed import had not loaded yet
    linked = {(x["src"], x["dst"]) for x in st.run("trail_meta_links", keys=sorted(have))} if have else set()
    nodes = present(sorted({n for _, n, _ in about}))
    about = [(k, n, at) for k, n, at in about if n in nodes and (k, n) not in linked]
    for_change = [x for x in for_change if (x[0], x[1]) not in linked]
    return [r for k, r in rows.items() if k not in have], about, for_change


_SAME = {"proposals": ("text",), "decisions": ("a", "b"), "blocks": ("hash",)}  # with its time: the same record


def _not_taken(st: Any, items: dict[str, list[dict[str, Any]]], report: Any, root: Path) -> None:
    """The records of a lifecycle not taken (module docstring): each the graph holds as it is (the same id, made at
    the same time with the same text: two workspaces promote at the same hour) is already present, the rest are
    counted as not imported."""
    base = root.resolve()
    held: dict[str, int] = {}
    changes = {}
    for item in items["changes"]:
        row = _typed(item, CHANGE_COLUMNS) if isinstance(item.get("id"), str) and item["id"] else None
        if row is None or row["applied_at"] is None:
            report.skip("change kg cannot read")
        else:
            changes[row["id"]] = row
    stamps = {r["id"]: r for r in st.run("trail_change_stamps", ids=sorted(changes))} if changes else {}
    for i, row in changes.items():
        have = stamps.get(i)
        same = have is not None and (have["applied_at"], have["target"], have["text"]) == (
            row["applied_at"], row["target"], row["text"])
        held["changes" if not same else ""] = held.get("changes" if not same else "", 0) + 1
    metas: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, table in _TABLE.items():
        columns = MERGED_KINDS[table][1]
        for item in items[name]:
            row = _typed(item, tuple(columns)) if isinstance(item.get("id"), str) and item["id"] else None
            if row is None:
                report.skip(f"{name[:-1]} kg cannot read")
            elif name == "blocks" and row.get("hash") and not _holds(base, row.get("path")):
                report.skip("block of a file this workspace does not hold (the next cycle writes it)")
            else:
                metas[meta_key(table, row["id"])] = (name, row)
    stamps = {r["key"]: r for r in st.run("trail_meta_stamps", keys=sorted(metas))} if metas else {}
    for key, (name, row) in metas.items():
        have = stamps.get(key)
        same = have is not None and have["at"] == row.get("updated_at" if name == "blocks" else "created_at") \
            and all(have[col] == row.get(col) for col in _SAME[name])
        held[name if not same else ""] = held.get(name if not same else "", 0) + 1
    report.already_present += held.pop("", 0)
    for kind, n in held.items():
        report.lifecycle_not_imported[kind] = report.lifecycle_not_imported.get(kind, 0) + n


def not_imported(counts: dict[str, int], dry_run: bool = False, team: bool = False) -> str:
    """The import's warning for the lifecycle records it did not load (`_not_taken`, or a team graph's `load`)."""
    said = ", ".join(f"{n} {kind if n != 1 else kind[:-1]}" for kind, n in sorted(counts.items()))
    if team:
        return (f"the trail's lifecycle ({said}) {'would not be' if dry_run else 'was not'} imported: a team graph "
                "keeps its own changes, proposals, decisions and blocks, each workspace's cycle its own. Its entries "
                "and nodes are imported")
    return (f"the trail's lifecycle ({said}) {'would not be' if dry_run else 'was not'} imported: it records "
            "rules kg wrote into the files of the "
            "workspace the trail came from, which this workspace's cycle must not check or revert, and this graph "
            "holds a history of its own (a lifecycle is imported only into an empty graph: a restore, a move). "
            "Its entries and nodes are imported")


def undecided_text(counts: dict[str, int], team: bool) -> str:
    """A dry run's word on the trail's lifecycle records: it reads no graph, so whether they would be imported is
    not said as if known."""
    said = ", ".join(f"{n} {kind if n != 1 else kind[:-1]}" for kind, n in sorted(counts.items()))
    if team:
        return f"the trail's lifecycle ({said}) would not be imported: a team graph keeps each workspace's own"
    return (f"the trail holds a lifecycle ({said}); whether it is imported is decided by the import, not by a dry "
            "run (which reads no graph): only into a graph with no history of its own (a restore, a move), a block "
            "only where this workspace holds its file. Its entries and nodes are imported either way")
