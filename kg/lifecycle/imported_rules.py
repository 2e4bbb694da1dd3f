"""Another workspace's promoted rules for TOOLS.md, USER.md or a skill, brought in by `kg import trail` into a graph
that does not take the trail's lifecycle (a history of its own, or a team graph: kg/ingest/trail_lifecycle.py).

Such a rule is a knowledge node that a promotion made there; what rendered it was that workspace's change, which
the import leaves out. Unlike a principle (kg/lifecycle/imported.py), a knowledge node no change renders is written
nowhere, and its pattern came in `promoted`, so this workspace never promoted it again either: the rule was lost
for good (`kg why` found nothing, the mistake recurring here was "nothing to do"). Now each such rule waits as a
pending `import` proposal for its own target (`lc_import_orphan_rules`: every one without a change or a proposal,
so an import run again after a kill proposes what the killed run did not). The proposal is about the rule's pattern,
which is active again (not `promoted` with nothing rendered) and held by it as by a pending promotion proposal: no
promotion of it meanwhile. `kg approve N` renders the rule with a change checked against its pattern like a
promotion, and marks the pattern promoted; `kg skip N` keeps it out, and the pattern, held until it recurs after the
skip, is then promoted from this workspace's own evidence like any other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core.errors import UsageError
from kg.lifecycle import imported

TYPE = imported.TYPE  # as an imported principle's proposal
KEPT = ("applied", "confirmed", "checking")  # a change that still stands for its pattern here (not reverted)
SUPERSEDED = "superseded"  # an import proposal whose pattern this workspace promoted itself (`supersede`)


def _target_of(tags: Any, lp: Any) -> str | None:
    """The target a promotion tagged its rule with (`Lifecycle.apply`: tags=[target name]), if this workspace's
    rules have it and it takes a knowledge node."""
    for tag in tags or ():
        target = lp.targets.get(tag)
        if target is not None and target.node == "knowledge":
            return tag
    return None


def _file_of(target: Any, files: Any, key: str | None) -> str:
    """This workspace's file for the target; a skill's is named by its pattern's key (or the file it had there)."""
    if "{slug}" not in target.file:
        return target.file
    named = [f for f in files or () if isinstance(f, str) and f.startswith("memory/skills/") and ".." not in f]
    if named:
        return named[0]
    from kg.lifecycle.promote import target_file

    return target_file(target, key or "imported-rule")


def rules_of(rows: list[dict[str, Any]], lp: Any) -> list[dict[str, Any]]:
    """A dry run's count of `propose`, from an import's node rows: the active rules another workspace's promotion
    made for a target these rules have (what `lc_import_orphan_rules` finds once they are loaded)."""
    return [r for r in rows if r.get("kind") == "knowledge" and r.get("status") == "active"
            and r.get("source") == "promotion" and _target_of(r.get("tags"), lp) is not None]


def undecided_rules(n: int, team: bool) -> str:
    """A dry run's word on the rule proposals it counted (as `imported.undecided_principles`): a team graph never
    takes the trail's lifecycle, so there it is certain; elsewhere the import decides."""
    head = (f"{n} promoted rule(s) for TOOLS.md, USER.md or a skill in the trail: an import into this graph makes "
            "each a pending `import` proposal (kg approve N renders one)")
    if team:
        return head + ", a team graph never taking the trail's lifecycle; a dry run reads no graph"
    return (head + ", unless it finds the graph with no history of its own (a restore, a move: the trail's "
            "lifecycle comes with them and renders them as before); a dry run reads no graph")


def pattern_of(st: Any, node: str) -> dict[str, Any] | None:
    rows = st.run("lc_import_rule_pattern", node=node, kept=list(KEPT))
    return rows[0] if rows else None


def propose(st: Any, at: datetime, lp: Any, source: str) -> list[str]:
    """One pending `import` proposal per knowledge rule without a change or a proposal; their ids."""
    made: list[str] = []
    orphans = st.run("lc_import_orphan_rules")
    if orphans:  # those an import proposal about their pattern names already (its evidence: the rule's id)
        named = {i for q in st.run("lc_proposals", statuses=["pending", "approved", "skipped", "obsolete",
                                                               SUPERSEDED])
                 if q["type"] == TYPE for i in q["evidence"] or ()}
        orphans = [r for r in orphans if r["id"] not in named]
    if not orphans:
        return made
    number = int(st.run("lc_proposal_max")[0]["n"] or 0)
    origin = imported.origin_of(source)
    for r in orphans:
        name = _target_of(r["tags"], lp)
        if name is None:  # a target these rules do not have: nowhere to render it
            continue
        target = lp.targets[name]
        pattern = pattern_of(st, r["id"])
        file = _file_of(target, r["files"], pattern["key"] if pattern else None)
        number += 1
        text = r["text"] or ""
        key = pattern["key"] if pattern else None
        hypothesis = (f"Writing this rule into {file} stops pattern '{key}' recurring here (another workspace "
                      "promoted it)") if key else ""
        with st.transaction():
            # about its pattern, which it holds as a pending promotion proposal does (no promotion of it meanwhile,
            # and once skipped, none until it recurs); about the rule when it has none
            imported.create(st, number=number, at=at, target=file, target_kind=name,
                            change=f"Import rule for {file} from {origin}: '{text[:80]}'", text=text,
                            hypothesis=hypothesis,
                            motivation=f"imported from {source or origin} (another workspace's promoted rule, "
                                       f"{r['id']}" + (f", pattern '{key}'" if key else "") + ")",
                            evidence=r["id"], about=pattern["id"] if pattern else r["id"])
            reopen_one(st, pattern, at)  # with its proposal: a kill between the two left it `promoted` for good
        made.append(r["id"])
    return made


def reopen_one(st: Any, pattern: dict[str, Any] | None, at: datetime) -> bool:
    """`pattern` (`pattern_of`'s row) active again when it came in `promoted` with no change of its standing here."""
    if pattern and pattern["status"] == "promoted" and not int(pattern["kept"] or 0):
        st.run("status_set", id=pattern["id"], status="active", at=at)
        return True
    return False


def reopen_pending(st: Any, lp: Any, at: datetime) -> int:
    """Reopen (`reopen`) the patterns of every rule or principle a pending import proposal about its pattern holds,
    not only this run's: an import killed before a build that reopened with the proposal left them `promoted`, and
    its resumed run proposes nothing new. How many."""
    nodes = [q["evidence"][0] for q in st.run("lc_proposals", statuses=["pending"])
             if q["type"] == TYPE and q["evidence"] and (_target_of([q["target_kind"]], lp) is not None
                                                         or q["node_kind"] == "pattern")]
    return reopen(st, nodes, at)


def reopen(st: Any, nodes: list[str], at: datetime) -> int:
    """The patterns of these proposed rules that came in `promoted` with no change of theirs standing here: active
    again (the rule is not rendered here until approved). How many."""
    done: set[str] = set()
    for node in nodes:
        p = pattern_of(st, node)
        if p and p["id"] not in done and reopen_one(st, p, at):
            done.add(p["id"])
    return len(done)


def supersede(st: Any, at: datetime) -> list[dict[str, Any]]:
    """Close, as superseded, every pending import proposal (a rule's or a promoted principle's) whose pattern has a
    live change of its own here: this workspace promoted it from its own evidence while the proposal waited (or
    before the import made it); and every pending promotion proposal whose pattern an approved import promoted.
    Left pending, approving it was refused ("skip proposal #N") or rendered a second
    rule of the pattern, and two rules checked against one pattern's rate leave neither verdict meaning anything;
    its own rule stands, verified on this workspace's evidence. What was closed, for the cycle's report."""
    from kg.store.schema import meta_key

    rows = [r | {"type": t} for t in (TYPE, "promotion") for r in st.run("lc_import_superseded", type=t,
                                                                           kept=list(KEPT))]
    for r in rows:  # a promotion proposal the other way round: an import approved first promoted its pattern
        st.run("lc_proposal_decide", key=meta_key("Proposal", r["id"]), status=SUPERSEDED, at=at,
               reason=f"pattern '{r['key'] or r['pattern']}' was promoted here ({r['change']}, {r['target']}): "
                      + ("this workspace's own rule stands" if r["type"] == TYPE else "an imported rule stands"))
    return [{"number": r["number"], "type": r["type"], "pattern_key": r["key"] or r["pattern"],
             "change": r["change"], "target": r["target"]} for r in sorted(rows, key=lambda r: r["number"])]


def adopt(lc: Any, q: dict[str, Any], number: int) -> dict[str, Any]:
    """Approve import proposal `q` of a knowledge rule: a Change renders it into its target's block."""
    st, lp = lc.st, lc.lp
    target = lp.targets.get(q["target_kind"] or "")
    rule = (q["evidence"] or [None])[0] if q["node_kind"] == "pattern" else q["node"]
    node = imported.adoptable(st, q, number, target, rule, "rule")
    file = q["target"] or target.file
    pattern = pattern_of(st, rule)
    if pattern and st.run("lc_import_rule_in_file", pattern=pattern["id"], kept=list(KEPT), target=file,
                          block=target.block):
        raise UsageError(f"pattern '{pattern['key'] or pattern['id']}' was promoted here since, into {file}: its rule "
                         f"is there already; skip proposal #{number}")
    why = lc.blocked(file, target.block)
    if why:
        raise imported.not_written(lc, file, why)
    from kg.lifecycle import blocks, promote
    from kg.lifecycle.cycle import DAY, OPEN_EVENT

    prior = blocks.inner_of(blocks.read(lc.root / file), target.block)
    text = node[0]["text"]
    body = text if target.format != "document" else promote.skill_document(
        pattern["key"] if pattern and pattern["key"] else rule, text, q["motivation"] or "")
    change = lc._seq_id("lc_change_ids", "chg")
    st.run("lc_change_create", id=change, kind=TYPE, target=file, block=target.block, target_kind=q["target_kind"],
           text=body, hypothesis=q["hypothesis"] or "", prior_block=prior, prior_exists=prior is not None,
           post_block=None, pattern_key=pattern["key"] if pattern else None, at=lc.now,
           next_check=lc.now + lp.verification.first_check_days * DAY,
           evidence=[f"{lc.now:%Y-%m-%d} applied (imported, approved: proposal #{number}); {q['motivation']}"],
           proposal=number, source=TYPE)
    st.run("lc_import_apply", change=change, node=rule, at=lc.now)
    if pattern:  # rendered here now: promoted, its open events with it
        st.run("lc_import_apply_pattern", change=change, pattern=pattern["id"], at=lc.now)
        st.run("lc_mark_promoted", pattern=pattern["id"], at=lc.now, from_statuses=OPEN_EVENT)
    lc._rules = None
    return {"action": "applied", "change": change, "target": file, "text": text}
