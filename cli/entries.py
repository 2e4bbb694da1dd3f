"""`kg init`, `kg log`, `kg resolve`, `kg list`, `kg status`: the agent's everyday commands."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from kg.cli.common import (
    JsonOpt,
    NowOpt,
    apply_after_answer,
    background_possible,
    emit,
    errors,
    note,
    now_of,
    state,
    workspace,
)

from kg.core.text import clip


class Kind(StrEnum):
    learning = "learning"
    error = "error"
    feature = "feature"


def _split(values: list[str] | None) -> list[str]:
    from kg.core.text import split_list

    return split_list(values)


def register(app: typer.Typer) -> None:
    @app.command()
    def init(
        ctx: typer.Context,
        path: Annotated[str | None, typer.Argument(help="Folder to make a workspace of (default: here).")] = None,
        store: Annotated[str | None, typer.Option(
            "--store", help="Share a team graph on a FalkorDB server: falkordb://HOST:PORT/GRAPH "
                            "(password in KG_STORE_PASSWORD).")] = None,
        force: Annotated[bool, typer.Option(
            "--force", help="With --store: move a workspace that holds entries anyway (they stay in its embedded "
                            "graph; `kg export trail` / `kg import trail` carry them over).")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Make a workspace: memory/ folders and an empty graph. Safe to run again."""
        from kg.core.errors import UsageError
        from kg.workspace_setup import init_workspace

        with errors():
            if path is not None and not path.strip():  # a script's unset variable: not "here"
                raise UsageError("the folder to make a workspace of is empty: name one, or leave it out for here")
            if force and not store:  # nothing for it to do: accepted silently, it read as if it had done something
                raise UsageError("--force only applies with --store (it moves a workspace that holds entries to a "
                                 "team graph): add --store falkordb://HOST:PORT/GRAPH, or leave --force out")
            target = path or state(ctx).workspace or "."
            ws = init_workspace(target, rules_dir=state(ctx).rules, store=store, force=force)
        from kg.runtimes.install_paths import advice, elsewhere

        moved = elsewhere(ws.kg_dir, ws.root)  # a copied or moved workspace's hooks still name the old path
        if moved:
            note(f"Warning: {advice(moved)}")
        graph = ws.store_url.public if ws.store_url is not None else str(ws.graph_path)
        emit({"workspace": str(ws.root), "graph": graph}, as_json,
             lambda d: f"Workspace ready at {d['workspace']}")

    @app.command()
    def log(
        ctx: typer.Context,
        kind: Annotated[Kind, typer.Argument(help="learning, error or feature.")],
        summary: Annotated[str, typer.Argument(help="One line: what happened or was learned.")],
        details: Annotated[str | None, typer.Option(help="What happened, what was wrong, what is right.")] = None,
        action: Annotated[str | None, typer.Option(help="Suggested action or fix.")] = None,
        area: Annotated[str | None, typer.Option(help="frontend, backend, infra, tests, docs, config, "
                                                      "behavior, tooling, ...")] = None,
        source: Annotated[str | None, typer.Option(help="conversation, error, user_feedback, "
                                                        "self_discovery.")] = None,
        priority: Annotated[str | None, typer.Option(help="critical, high, medium or low.")] = None,
        category: Annotated[str | None, typer.Option(help="correction, knowledge_gap, best_practice, ...")] = None,
        pattern_key: Annotated[str | None, typer.Option("--pattern-key", help="Key of a recurring pattern.")] = None,
        session: Annotated[str | None, typer.Option(envvar="KG_SESSION", help="Session id (also KG_SESSION).")] = None,
        files: Annotated[list[str] | None,
                         typer.Option("--files", help="Related files (repeat or comma-separate).")] = None,
        tags: Annotated[list[str] | None, typer.Option("--tags", help="Tags (repeat or comma-separate).")] = None,
        error_text: Annotated[str | None, typer.Option("--error", help="Error: the actual message or output.")] = None,
        context: Annotated[str | None, typer.Option(help="Error: the command or operation attempted.")] = None,
        reproducible: Annotated[str | None, typer.Option(help="Error: yes, no or unknown.")] = None,
        user_context: Annotated[str | None,
                                typer.Option("--user-context", help="Feature: why the user needs it.")] = None,
        complexity: Annotated[str | None, typer.Option(help="Feature: simple, medium or complex.")] = None,
        frequency: Annotated[str | None, typer.Option(help="Feature: first_time or recurring.")] = None,
        no_link: Annotated[bool, typer.Option("--no-link", help="Do not auto-link the entry or match it to "
                                                                "a recurring pattern.")] = False,
        wait: Annotated[bool, typer.Option("--wait", help="Apply the entry to the graph (links, pattern) "
                                                          "before answering, and report its pattern.")] = False,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Record a learning, an error or a feature request. Secrets are redacted before anything is written.

        The entry is durable (journaled, daily log written) when this answers. It is linked and matched to
        its pattern right after, by a detached process, so an agent's hook is not kept waiting; any kg command
        that reads the graph applies waiting entries first. `--wait` does it before answering."""
        fields: dict[str, Any] = dict(
            details=details, action=action, area=area, source=source, priority=priority, category=category,
            pattern_key=pattern_key, files=_split(files), tags=_split(tags), error_text=error_text,
            context=context, reproducible=reproducible, user_context=user_context, complexity=complexity,
            frequency=frequency,
        )
        with errors():
            ws = workspace(ctx)
            later = not wait and background_possible()
            result = ws.log(kind.value, summary, now=now_of(ctx, now), session=session, link=not no_link,
                            apply=not later, wait=wait, **fields)
            if later:
                apply_after_answer(ws)
        if result.redacted:
            note(f"Redacted before storing: {', '.join(result.redacted)}")
        if result.note:
            note(result.note)
        # queued: durable and answered; a detached process applies it (links, pattern) right after
        emit({**result.as_dict(), "queued": result.queued or later}, as_json, _render_log)

    @app.command()
    def resolve(
        ctx: typer.Context,
        entry_id: Annotated[str, typer.Argument(metavar="ID", help="An entry id such as ERR-20261130-001, or a "
                                                "pattern's id or key.")],
        status: Annotated[str, typer.Option(help="pending, in_progress, resolved, wont_fix or promoted; for a "
                                            "pattern, wont_fix or active.")] = "resolved",
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Move an entry to another status, or close (wont_fix) or reopen (active) a pattern: a pattern a person
        closed is never promoted, nor revived by decay when it recurs."""
        with errors():
            result = workspace(ctx).resolve(entry_id, status, now=now_of(ctx, now))
        emit(result, as_json, lambda d: f"{d['id']}: {d['previous']} → {d['status']}" + "".join(
            f"\n  proposal #{n} skipped: the pattern is closed" for n in d.get("skipped") or ()))

    @app.command("list")
    def list_(
        ctx: typer.Context,
        type_: Annotated[str | None, typer.Option("--type", "-t", help="event, lesson, principle, knowledge, "
                                                   "pattern, or learning, error, feature.")] = None,
        status: Annotated[str | None, typer.Option(help="Only entries with this status.")] = None,
        priority: Annotated[str | None, typer.Option(help="Only entries with this priority.")] = None,
        area: Annotated[str | None, typer.Option(help="Only this area.")] = None,
        since: Annotated[str | None, typer.Option(help="ISO date/time, or a span such as 7d, 12h, 2w.")] = None,
        limit: Annotated[int, typer.Option(help="At most this many rows (0: all).")] = 50,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List nodes and entries, newest first."""
        with errors():
            rows = workspace(ctx).list(type=type_, status=status, priority=priority, area=area, since=since,
                                       now=now_of(ctx, now), limit=limit)
        emit(rows, as_json, _render_list)

    @app.command()
    def status(ctx: typer.Context, now: NowOpt = None, as_json: JsonOpt = False) -> None:
        """Counts, pending high-priority items and recurring patterns."""
        with errors():
            data = workspace(ctx).status(now=now_of(ctx, now))  # the API's status, rendered
        from kg.graph.reads import recurring

        emit({**data, "patterns": recurring(data["patterns"])}, as_json, _render_status)


def _render_log(d: dict[str, Any]) -> str:
    text = f"📝 [{d['id']}] {clip(d['summary'], 80)}"
    pattern = d.get("pattern")
    if pattern:
        text += (f"\n🔄 pattern {pattern['key']}: seen {pattern['recurrence']}x in "
                 f"{pattern['sessions']} session(s)")
    return text


def _render_list(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "Nothing matches."
    lines = []
    for r in rows:
        tag = r.get("entry_type") or r["kind"]
        extra = " ".join(x for x in (r.get("priority"), r.get("status"), r.get("area")) if x)
        lines.append(f"{r['id']:<22} {tag:<9} {(r.get('created_at') or '')[:16]:<16}  {clip(r['text'], 70)}"
                     + (f"  [{extra}]" if extra else ""))
    return "\n".join(lines)


def _undecided(c: dict[str, Any]) -> str:
    if c["status"] == "tie":
        return (f"a tie ({c['score_a']} each), for review" if not c["winner"] else
                f"a tie ({c['score_a']} each), {c['winner']} kept (verified)")
    lost = c["b"] if c["winner"] == c["a"] else c["a"]
    won, other = (c["score_a"], c["score_b"]) if c["winner"] == c["a"] else (c["score_b"], c["score_a"])
    return f"{c['winner']} would win ({won} to {other}), {lost} left out"


def _render_status(d: dict[str, Any]) -> str:
    nodes = ", ".join(f"{k} {v}" for k, v in d["nodes"].items())
    entries = ", ".join(f"{k} {v}" for k, v in sorted(d["entries"].items())) or "none"
    edges, links = sum(d["edges"].values()), sum(d.get("links", {}).values())
    links_said = f" (and {links} lifecycle or topic link{'s' if links != 1 else ''})" if links else ""
    lines = [f"📊 {d['workspace']}", f"   Nodes: {nodes}", f"   Entries: {entries}",
             f"   Edges: {edges}{links_said}   Sessions: {d['sessions']}   Clock zone: {d['zone']}"]
    if d.get("zone_note"):
        lines.append(f"   ⚠️  Clock zone: {d['zone_note']}")
    if d["entry_status"]:
        lines.append("   Status: " + ", ".join(f"{k} {v}" for k, v in sorted(d["entry_status"].items())))
    failed = d.get("journal_failed")
    if failed:  # (QA) a backlog that fails to apply is not one "logged moments ago"
        lines.append(f"   ⚠️  Journal: {failed['pending']} entr(y/ies) not applied: the last try failed at "
                     f"{failed['at']}: {failed['error']} (kept in the journal; `kg doctor` says more)")
    elif d.get("journal_pending"):
        lines.append(f"   ⏳ Journal: {d['journal_pending']} entr(y/ies) logged moments ago still being applied "
                     "(not counted above yet)")
    if d.get("graph_lost"):
        lines.append(f"   ⚠️  Graph: {d['graph_lost']}")
    if d.get("graph_leftovers"):  # (kg/store/compact.py) a whole graph's copy each: named, not kept unseen
        files = ", ".join(f"{f['file']} ({f['bytes'] / 1024 / 1024:.1f} MB)" for f in d["graph_leftovers"])
        lines.append(f"   ⚠️  Graph: the old file of a compaction is kept beside it: {files}; `kg doctor` says why "
                     "and what to do")
    if d.get("import_unfinished"):
        from kg.ingest.import_mark import unfinished_text

        lines.append(f"   ⚠️  Import: {unfinished_text(d['import_unfinished'])}")
    if d.get("journal_rejected"):
        lines.append(f"   ⚠️  Journal: {d['journal_rejected']} line(s) set aside in memory/.kg/journal.rejected "
                     "(could not be applied); `kg doctor` shows them")
    if d["pending_high"]:
        lines.append(f"\n⚠️  Pending high-priority items ({len(d['pending_high'])}):")
        lines += [f"   [{r['id']}] ({r['priority']}) {r['text'][:80]}" for r in d["pending_high"]]
    from kg.graph.reads import recurring as _recurring

    recurring = _recurring(d["patterns"])
    if recurring:
        from kg.lifecycle.revival import NOTE

        lines.append("\n🔍 Recurring patterns:")
        lines += [f"   {p['key']}: {p['recurrence']}x, {p['sessions']} session(s), last {p['last_seen'][:10]}"
                  + (f" (🌱 {NOTE})" if p["id"] in d.get("revive_next", ()) else "") for p in recurring]
    if d.get("team"):
        lines.append(f"\n👥 Team graph {d['team']['graph']}, contributors:")
        lines += [f"   {c['workspace']} ({c['agent']}): {c['events']} event(s), {c['nodes']} node(s), last "
                  f"{(c['last_at'] or '')[:10]}" for c in d["team"]["contributors"]]
    if d.get("last_cycle"):
        from kg.cli.schedule import last_run_text

        lines.append(f"   Last scheduled cycle: {last_run_text(d['last_cycle'])}")
    lc = d.get("lifecycle") or {}
    if lc.get("verifications_due"):
        lines.append(f"\n🔍 Verifications due ({lc['verifications_due_total']}):")
        lines += [f"   [{v['change']}] {v['target']}: {v['text']} (due {v['due'][:10]}"
                  + (f", overdue: {v['overdue']}" if v["overdue"] != "none" else "") + ")"
                  for v in lc["verifications_due"]]
    by_kg = ("aside", "let back")  # kg took these out itself, and kg put the let-back ones back
    paused = [v for v in lc.get("verifications_paused") or [] if v.get("how") not in by_kg]
    aside = [v for v in lc.get("verifications_paused") or [] if v.get("how") in by_kg]
    if paused:
        lines.append(f"\n⏸️  Verifications paused: the rule is not in its file as kg wrote it "
                     f"({len(paused)}; put it back, or `kg export memory --force`, to resume):")
        lines += [f"   [{v['change']}] {v['target']}: {v['text']} ("
                  + (f"in effect here; taken out by hand in {', '.join(v['elsewhere'])}: its days out there are "
                     "no evidence" if v.get("how") == "elsewhere" else
                     "edited by hand inside its kg block: reworded, or taken out of the block"
                     if v.get("how") == "edited" else "its kg block's markers are damaged (see below)"
                     if v.get("how") == "damaged" else "withdrawn by hand: its kg block or file is gone")
                  + f", since {v['withdrawn_since'][:10]})" for v in paused]
    if aside:  # kg took these out itself: no edit of a person's to undo (QA4 #6: "put it back" misled)
        lines.append(f"\n⚖️  Rules set aside by a conflict: kg leaves the rule out of its file while it loses or ties "
                     f"({len(aside)}; verification resumes when it wins a later cycle or `kg conflicts resolve` "
                     "picks it; `kg conflicts` lists them):")
        back = ("; let back: no conflict keeps it out now, it is in the file again as kg wrote it, and the next kg "
                "cycle resumes its verification")
        lines += [f"   [{v['change']}] {v['target']}: {v['text']} (since {v['withdrawn_since'][:10]}"
                  + (back if v.get("how") == "let back" else "") + ")" for v in aside]
    if lc.get("checks_out"):
        lines.append(f"\n🔬 Checks: rules kg took out of their file to measure the rate without them "
                     f"({len(lc['checks_out'])}; each goes back when its check ends unless it did not help):")
        lines += [f"   [{c['change']}] {c['target']}: {c['text']} (out since {c['since'][:10]}, "
                  f"until {c['until'][:10]})" for c in lc["checks_out"]]
    if lc.get("ready_to_promote"):
        lines.append(f"\n🚀 Patterns ready for promotion ({lc['ready_to_promote_total']}):")
        lines += [f"   {p['key']} ({p['recurrence']}x, {p['sessions']} sessions) → {p['target']}: {p['summary']}"
                  for p in lc["ready_to_promote"]]
        if any(p.get("baseline") for p in lc["ready_to_promote"]):
            from kg.lifecycle.waiting import BASELINE_NOTE

            lines.append("   ⏳ a pattern is promoted once kg has watched it long enough to verify its rule; until "
                         f"then it waits, and says until when {BASELINE_NOTE}")
    if lc.get("proposals_pending"):
        lines.append(f"\n📋 Proposals waiting ({lc['proposals_pending_total']}): `kg propose` lists them")
        lines += [f"   [{p['number']}] {p['type']} → {p['target']}: {p['change'][:80]}"
                  for p in lc["proposals_pending"]]
    if lc.get("proposals_superseded"):
        lines.append("\n🗂️  Proposals superseded (their pattern was promoted here meanwhile):")
        lines += [f"   [{p['number']}] {p['change'][:60]}: {p['reason']}" for p in lc["proposals_superseded"]]
    if lc.get("flags"):
        lines.append("\n⚠️  Blocks a human edited or damaged (kg leaves them alone; each says how to fix it):")
        lines += [f"   {f['path']} [{f['block']}]: {f['flag']}" for f in lc["flags"]]
    if lc.get("conflicts_tied"):
        lines.append("\n⚖️  Conflicts tied (`kg conflicts`):")
        lines += [f"   {c['id']}: {c['a']} vs {c['b']}" for c in lc["conflicts_tied"]]
    if lc.get("conflicts_undecided"):
        lines.append("\n⚖️  Contradictions not decided yet (rules added since the last cycle), as `kg conflicts` or "
                     "the next cycle will decide them:")
        lines += [f"   {c['a']} vs {c['b']}: " + _undecided(c) for c in lc["conflicts_undecided"]]
    return "\n".join(lines)
