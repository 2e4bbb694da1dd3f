"""`kg link`, `kg patterns`, `kg graph query|path|explain`: auto-links, recurring patterns, graph queries.

`graph_app` is module-level so other topics can add commands to `kg graph` (`kg graph show`, ...)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, now_of, workspace

link_app = typer.Typer(help="Auto-link nodes to what they relate to.", no_args_is_help=True)
patterns_app = typer.Typer(help="Recurring patterns: list them, merge two, split events off.",
                           invoke_without_command=True)
graph_app = typer.Typer(help="Query the knowledge graph.", no_args_is_help=True)


# -- kg link ------------------------------------------------------------------------------------------------
@link_app.command("auto")
def link_auto(
    ctx: typer.Context,
    node_id: Annotated[str, typer.Argument(metavar="ID", help="The node to link.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the edges without creating them.")] = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Link a node to the nodes it relates to (full-text candidates, fuzzy re-rank, cue words pick the
    edge type). Existing edges are kept; none is duplicated."""
    with errors():
        data = workspace(ctx).link_auto(node_id, now=now_of(ctx, now), dry_run=dry_run)
    emit(data, as_json, _render_links)


def _render_links(d: dict[str, Any]) -> str:
    if not d["links"]:
        return f"No new links for [{d['id']}]: nothing similar enough that is not linked already."
    verb = "Would link" if d["dry_run"] else "🔗 Auto-linked to"
    lines = [f"{verb}: {', '.join(e['other'] for e in d['links'])}"]
    for e in d["links"]:
        lines.append(f"   [{e['from']}] ──{e['type']}──► [{e['to']}]  {e['reason']}")
    return "\n".join(lines)


@link_app.command("reindex")
def link_reindex(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Recount the keyword table auto-linking uses to pick rare terms (after a bulk import)."""
    from kg.graph import linking

    with errors():
        ws = workspace(ctx)
        with ws.store() as st:
            n = linking.rebuild_terms(st, linking.rules_of(ws.rules))
    emit({"nodes": n}, as_json, lambda d: f"Recounted the keywords of {d['nodes']} node(s).")


# -- kg patterns --------------------------------------------------------------------------------------------
@patterns_app.callback()
def patterns_list(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(help="At most this many patterns (0: all).")] = 50,
    min_recurrence: Annotated[int, typer.Option("--min", help="Only patterns seen at least this often.")] = 1,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List recurring patterns with recurrence, sessions, first and last seen, and for a pattern ready to
    promote that a cycle would hold now (while min_baseline_days is on) the first reason, as `kg status` says it:
    for too few days watched to verify its rule, the day it becomes eligible."""
    if ctx.invoked_subcommand is not None:
        return
    from kg.graph import patterns
    from kg.lifecycle.waiting import gate_waits

    with errors():
        ws = workspace(ctx)
        at = now_of(ctx, now)
        rows = patterns.list_patterns(ws, limit=limit, min_recurrence=min_recurrence, now=at)
        waits = gate_waits(ws, at, keys=[r["key"] for r in rows]) if rows else {}
    emit([{**r, "waits": waits.get(r["key"])} for r in rows], as_json, _render_patterns)


def _render_patterns(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No patterns yet."
    from kg.core.text import display_width, pad

    # detected keys carry a hash: wider than 32; a CJK key's characters take two columns each
    width = max(32, *(display_width(r["key"]) for r in rows))
    lines = [f"{'KEY':<{width}} {'SEEN':>4} {'SESS':>4}  {'FIRST':<10}  {'LAST':<10}  TEXT"]
    for r in rows:
        lines.append(f"{pad(r['key'], width)} {r['recurrence']:>3}x {r['sessions']:>4}  {r['first_seen'][:10]:<10}  "
                     f"{r['last_seen'][:10]:<10}  {(r['text'] or '')[:50]}")
    from kg.lifecycle.revival import NOTE

    back = [f"🌱 {r['key']}: {NOTE}" for r in rows if r.get("revive_next")]
    return "\n".join(lines + ([""] + back if back else [])
                     + _render_waits({r["key"]: r["waits"] for r in rows if r.get("waits")}))


def _render_waits(waits: dict[str, dict[str, Any]]) -> list[str]:
    """The ready patterns a cycle would hold now: the first reason, as `kg status` says it (for the baseline,
    until when), and where the baseline's days are set."""
    from kg.lifecycle.waiting import BASELINE_NOTE

    if not waits:
        return []
    return ["", "⏳ Ready, but a cycle would hold them now:"] + [
        f"   {key}: {w['short']}" for key, w in waits.items()] + (
        [f"   {BASELINE_NOTE}"] if any(w["by"] for w in waits.values()) else [])


@patterns_app.command("show")
def patterns_show(
    ctx: typer.Context,
    pattern: Annotated[str, typer.Argument(metavar="PATTERN", help="Pattern id or key.")],
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A pattern with its events and why each joined, and why a cycle would hold it now if it is ready to
    promote (while min_baseline_days is on; the first reason, as `kg status` says it)."""
    from kg.graph import patterns
    from kg.lifecycle.waiting import gate_waits

    with errors():
        ws = workspace(ctx)
        at = now_of(ctx, now)
        data = patterns.show(ws, pattern, now=at)
        key = data["pattern"]["key"]
        data["waits"] = gate_waits(ws, at, keys=[key]).get(key)
    emit(data, as_json, _render_pattern)


def _render_pattern(d: dict[str, Any]) -> str:
    p, r = d["pattern"], d["recurrence"]
    lines = [f"🔍 [{p['id']}] {p['key']}: {p['text']}"]
    if p["status"] == "merged":
        lines.append(f"   merged into {p['merged_into']}")
    if r:
        lines.append(f"   {r['recurrence']}x in {r['sessions']} session(s), {r['first_seen'][:10]} → "
                     f"{r['last_seen'][:10]}")
    if d.get("revive_next"):
        from kg.lifecycle.revival import NOTE

        lines.append(f"   🌱 {p['status']}: {NOTE}")
    if d.get("waits"):
        lines.append(f"   ⏳ ready to promote, but waits: {d['waits']['reason']}")
    for m in d["members"]:
        lines.append(f"   [{m['id']}] {(m['created_at'] or '')[:16]}  {(m['text'] or '')[:60]}")
        lines.append(f"       {m['reason']}")
    return "\n".join(lines)


@patterns_app.command("merge")
def patterns_merge(
    ctx: typer.Context,
    into: Annotated[str, typer.Argument(metavar="A", help="The pattern to keep (id or key).")],
    other: Annotated[str, typer.Argument(metavar="B", help="The pattern merged into A (id or key).")],
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Merge pattern B into A: B's events join A; B's key keeps pointing at A."""
    from kg.graph import patterns

    with errors():
        data = patterns.merge(workspace(ctx), into, other, now=now_of(ctx, now))
    emit(data, as_json, lambda d: (f"🔄 {d['merged_key']} merged into {d['key']}: {len(d['moved'])} event(s) moved"
                                   + (f"; now {d['recurrence']['recurrence']}x in {d['recurrence']['sessions']} "
                                      "session(s)" if d["recurrence"] else "")))


@patterns_app.command("split")
def patterns_split(
    ctx: typer.Context,
    pattern: Annotated[str, typer.Argument(metavar="PATTERN", help="The pattern (id or key).")],
    events: Annotated[list[str], typer.Argument(metavar="EVENT...", help="The events to take out.")],
    key: Annotated[str | None, typer.Option(help="Key of the pattern they move to (new or existing; default: "
                                                 "a derived auto.* key).")] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Take them out of any pattern.")] = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Split events off a pattern into another pattern (or none, with --detach)."""
    from kg.graph import patterns

    with errors():
        data = patterns.split(workspace(ctx), pattern, events, key=key, detach=detach, now=now_of(ctx, now))
    emit(data, as_json, _render_split)


def _render_split(d: dict[str, Any]) -> str:
    where = f"into {d['key']}" if d["key"] else "out of any pattern"
    text = f"✂️  {len(d['events'])} event(s) moved from {d['from_key']} {where}"
    left = d["recurrence"]["recurrence"] if d["recurrence"] else 0
    return text + f"; {d['from_key']} is now {left}x"


# -- kg graph -----------------------------------------------------------------------------------------------
def _icons(ctx: typer.Context) -> dict[str, str]:
    return dict(workspace(ctx).policy.node_icon)


@graph_app.command("query")
def graph_query(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="all, type:T (lesson, error, ...), tag:X, or a node id.")] = "all",
    depth: Annotated[int, typer.Option(help="Steps to walk from the matching nodes, both directions.")] = 1,
    limit: Annotated[int, typer.Option(help="At most this many nodes listed per type (0: all).")] = 100,
    as_json: JsonOpt = False,
) -> None:
    """Nodes grouped by type with their icons, then edges as A ──type──► B."""
    from kg.graph import queries as graphq

    with errors():
        data = graphq.query(workspace(ctx), target, depth=depth, limit=limit)
        icons = _icons(ctx)
    emit(data, as_json, lambda d: graphq.render_query(d, icons))


@graph_app.command("path")
def graph_path(
    ctx: typer.Context,
    src: Annotated[str, typer.Argument(metavar="A", help="Start node id (an event, say).")],
    dst: Annotated[str, typer.Argument(metavar="B", help="End node id (a principle, say).")],
    as_json: JsonOpt = False,
) -> None:
    """The shortest chain of edges from A to B (how an event led to a principle). Exit 1 if there is none."""
    from kg.graph import queries as graphq

    with errors():
        data = graphq.path(workspace(ctx), src, dst)
        icons = _icons(ctx)
    emit(data, as_json, lambda d: graphq.render_path(d, icons))
    if not data["found"]:
        raise typer.Exit(1)


@graph_app.command("explain")
def graph_explain(
    ctx: typer.Context,
    node_id: Annotated[str, typer.Argument(metavar="ID", help="A node id.")],
    as_json: JsonOpt = False,
) -> None:
    """Why each edge of a node exists: by hand, or auto with its score and reason."""
    from kg.graph import queries as graphq

    with errors():
        data = graphq.explain(workspace(ctx), node_id)
        icons = _icons(ctx)
    emit(data, as_json, lambda d: graphq.render_explain(d, icons))


def register(app: typer.Typer) -> None:
    app.add_typer(link_app, name="link")
    app.add_typer(patterns_app, name="patterns")
    app.add_typer(graph_app, name="graph")
