"""Another workspace's principles, brought in by `kg import trail` into a graph with a history of its own.

An active principle that no change rendered is "free": `kg cycle` writes it into MEMORY.md (a principle added by
hand). One imported from another workspace's trail arrived free too, so this workspace's MEMORY.md took the other's
rules at its next cycle, without this workspace's evidence or a human's word. Now each such principle gets a pending
proposal of type `import` (about the principle, saying where it came from) and is not free while that proposal
exists (`lc_free_principles`): `kg approve N` renders it with a Change (next check set; checked like a promotion
against the pattern it derives from, or else that of what it relates to here), `kg skip N` keeps it out for good.
A principle the other workspace promoted has its proposal about its pattern (`propose`), which is active again and
held by it, as an imported rule's (kg/lifecycle/imported_rules.py): skipped, the pattern comes back when it recurs.
A restore or move into an empty graph (whose lifecycle the import takes: kg/ingest/trail_lifecycle.py) renders them
as before: no proposal is made.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core.errors import UnusableFile, UsageError
from kg.store.schema import meta_key

TYPE = "import"
TARGET = "principle"  # rules/lifecycle.toml [targets.principle]: MEMORY.md's block


def principles_of(rows: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The active principles among an import's new node rows, each with the file it came from."""
    return [{"id": r["id"], "text": r["text"] or "", "created_at": r["created_at"], "source": source}
            for r in rows if r.get("kind") == "principle" and r.get("status") == "active" and not r.get("entry_type")]


def unproposed(st: Any, ids: list[str], source: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` (a resumed import's own principles) and those of `ids` (the principles the interrupted run loaded,
    which its mark names) still active without their proposal or a change: each is proposed once, whichever
    run's kill came between its load and its proposal."""
    own = {r["id"] for r in rows}
    earlier = [i for i in dict.fromkeys(ids) if i not in own]
    found = st.run("lc_import_unproposed", ids=earlier) if earlier else []
    return [*rows, *({"id": r["id"], "text": r["text"] or "", "created_at": r["created_at"], "source": source}
                     for r in found)]


def undecided_principles(n: int) -> str:
    """A dry run's word on the proposals it counted: it reads no graph, so whether the graph has a history of its
    own (then each principle waits for a human) is said as the import would decide it, not as if known."""
    return (f"{n} active principle(s) in the trail: an import into this graph makes each a pending `import` proposal "
            "(kg approve N renders one), unless it finds the graph with no history of its own (a restore, a move: "
            "they are rendered as before); a dry run reads no graph")


def origin_of(source: str) -> str:
    """How a proposal names the trail an import came from."""
    return Path(source).name if source else "another workspace's trail"


def create(st: Any, *, number: int, at: datetime, target: str, target_kind: str, change: str, text: str,
           hypothesis: str, motivation: str, evidence: str, about: str) -> None:
    """One pending `import` proposal about node `about` (a principle, or a promoted rule's pattern:
    kg/lifecycle/imported_rules.py), in one transaction with its `proposal_about` (a proposal about nothing would
    leave what it holds free: `unproposed`, `lc_import_orphan_rules`)."""
    pid = f"prop-{number:04d}"
    st.run("lc_proposal_create", id=pid, number=number, at=at, type=TYPE, target=target, target_kind=target_kind,
           change=change, text=text, hypothesis=hypothesis, priority="medium", area="", category="",
           motivation=f"{motivation}; not rendered until approved", evidence=[evidence], risk="Medium",
           effort="low", impact="medium")
    st.run("lc_proposal_about", key=meta_key("Proposal", pid), node=about, at=at)


def propose(st: Any, rows: list[dict[str, Any]], at: datetime, lp: Any) -> int:
    """One pending `import` proposal per principle (the import's new rows: `principles_of`); how many. One that
    derives from a pattern (the other workspace promoted it) is about that pattern, as an imported rule's is
    (kg/lifecycle/imported_rules.py): the pattern came in `promoted`, and is active again, held by the proposal (no
    promotion of it meanwhile; once skipped, none until it recurs here), where it stayed `promoted` with nothing
    rendering it, for good once the proposal was skipped. The principle is named by the proposal's evidence."""
    from kg.lifecycle.imported_rules import pattern_of, reopen_one

    target = lp.targets.get(TARGET)
    if not rows or target is None:
        return 0
    number = int(st.run("lc_proposal_max")[0]["n"] or 0)
    for r in rows:
        number += 1
        origin = origin_of(r["source"])
        pattern = pattern_of(st, r["id"])
        with st.transaction():
            create(st, number=number, at=at, target=target.file, target_kind=TARGET,
                   change=f"Import principle from {origin}: '{r['text'][:80]}'", text=r["text"], hypothesis="",
                   motivation=f"imported from {r['source'] or origin} (another workspace's principle, {r['id']})",
                   evidence=r["id"], about=pattern["id"] if pattern else r["id"])
            reopen_one(st, pattern, at)  # with its proposal: a kill between the two would leave it `promoted`
    return len(rows)


def principle_of(q: dict[str, Any]) -> str | None:
    """The principle an `import` proposal of the principle target renders: its evidence when it is about the
    principle's pattern (`propose`), else the node it is about (a proposal an older build made)."""
    if q["node_kind"] == "pattern":
        return (q["evidence"] or [None])[0]
    return q["node"]


def _related_pattern(lc: Any, node: str) -> list[dict[str, Any]]:
    """The pattern an imported principle with none of its own (its trail's: `lc_import_pattern`) is checked against:
    that of what it relates to here. The import's bulk load linked nothing, so it is linked now, as `kg node add`
    links a principle added by hand; without this its change had a next check that never came (a change is checked
    against a pattern). None when nothing it relates to belongs to one."""
    from kg.graph import linking

    linking.link_node(lc.st, node, linking.rules_of(lc.ws.rules), now=lc.now)
    return lc.st.run("lc_import_related_pattern", node=node)


def adoptable(st: Any, q: dict[str, Any], number: int, target: Any, node: str | None, what: str) -> list[dict]:
    """The node an import proposal brings (`what`: a principle, a rule), checked before its approval writes: it
    and its target still exist, and it is active."""
    rows = st.run("lc_node_brief", id=node) if node else []
    if target is None or not rows:
        raise UsageError(f"proposal #{number}: its {what} or its target ({q['target_kind']!r}, rules/lifecycle.toml "
                         "[targets]) is gone; skip it with kg skip N --reason \"...\"")
    if rows[0]["status"] != "active":
        raise UsageError(f"{what} {node} is {rows[0]['status']} now; skip proposal #{number}")
    return rows


def not_written(lc: Any, file: str, why: str) -> UsageError:
    """The error of an approval kg cannot write into `file` for `why` (`Lifecycle.blocked`): a file kg may not use
    (read-only, a folder, a link out) is an operational failure, exit 1, as `kg cycle` says for the same file (QA1
    #8: it exited 2, as for a mistyped command); a person's edit inside the block, or damaged markers, is theirs to
    fix first (exit 2)."""
    message = f"{file}: {why}; fix the file, then approve again"
    return UnusableFile(message, file) if lc.problem(file, writing=True) else UsageError(message)


def adopt(lc: Any, q: dict[str, Any], number: int) -> dict[str, Any]:
    """Approve import proposal `q`: a Change renders its principle into the principle target's block."""
    st, lp = lc.st, lc.lp
    target = lp.targets.get(q["target_kind"] or TARGET)
    principle = principle_of(q)
    node = adoptable(st, q, number, target, principle, "principle")
    why = lc.blocked(target.file, target.block)
    if why:
        raise not_written(lc, target.file, why)
    from kg.lifecycle import blocks
    from kg.lifecycle.cycle import DAY

    prior = blocks.inner_of(blocks.read(lc.root / target.file), target.block)
    change = lc._seq_id("lc_change_ids", "chg")
    pattern = st.run("lc_import_pattern", node=principle) or _related_pattern(lc, principle)
    nxt = lc.now + lp.verification.first_check_days * DAY
    st.run("lc_change_create", id=change, kind=TYPE, target=target.file, block=target.block, target_kind=TARGET,
           text=node[0]["text"], hypothesis=q["hypothesis"] or "", prior_block=prior, prior_exists=prior is not None,
           post_block=None, pattern_key=pattern[0]["key"] if pattern else None, at=lc.now, next_check=nxt,
           evidence=[f"{lc.now:%Y-%m-%d} applied (imported, approved: proposal #{number}); {q['motivation']}"],
           proposal=number, source=TYPE)
    st.run("lc_import_apply", change=change, node=principle, at=lc.now)
    if pattern:
        st.run("lc_import_apply_pattern", change=change, pattern=pattern[0]["id"], at=lc.now)
    if q["node_kind"] == "pattern":  # its own pattern, held by the proposal: rendered here now, promoted
        from kg.lifecycle.cycle import OPEN_EVENT

        st.run("lc_mark_promoted", pattern=q["node"], at=lc.now, from_statuses=OPEN_EVENT)
    lc._rules = None
    return {"action": "applied", "change": change, "target": target.file, "text": node[0]["text"]}
