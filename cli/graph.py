"""`kg node add`, `kg edge add`, `kg show`: the graph by hand."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, now_of, workspace

node_app = typer.Typer(help="Add knowledge nodes by hand.", no_args_is_help=True)
edge_app = typer.Typer(help="Join nodes by typed edges by hand.", no_args_is_help=True)


@node_app.command("add")
def node_add(
    ctx: typer.Context,
    node_type: Annotated[str, typer.Argument(metavar="TYPE", help="event, lesson, principle, knowledge or pattern.")],
    text: Annotated[str, typer.Argument(help="The node's text.")],
    tags: Annotated[list[str] | None, typer.Option("--tags", help="Tags (repeat or comma-separate).")] = None,
    no_link: Annotated[bool, typer.Option("--no-link", help="Do not auto-link the new node.")] = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a node; its id looks like les-20261130-001. It is auto-linked to what it relates to."""
    from kg.core.text import split_list

    tag_list = split_list(tags)
    with errors():
        node = workspace(ctx).node_add(node_type, text, now=now_of(ctx, now), tags=tag_list, link=not no_link)
    emit(node, as_json, lambda d: f"🔷 Node created: [{d['id']}] ({d['kind']}) {d['text'][:60]}"
         + (f"\n  🔗 Auto-linked to: {', '.join(e['other'] for e in d['links'])}" if d.get("links") else ""))


@edge_app.command("add")
def edge_add(
    ctx: typer.Context,
    src: Annotated[str, typer.Argument(metavar="FROM", help="Source node id.")],
    dst: Annotated[str, typer.Argument(metavar="TO", help="Target node id.")],
    edge_type: Annotated[str, typer.Argument(metavar="TYPE", help="caused_by, led_to, supports, contradicts, "
                                                                   "related_to or derived_from.")],
    reason: Annotated[str | None, typer.Option(help="Why the edge exists.")] = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a typed edge FROM ──TYPE──► TO."""
    with errors():
        edge = workspace(ctx).edge_add(src, dst, edge_type, now=now_of(ctx, now), reason=reason)
    emit(edge, as_json, lambda d: f"🔗 Edge created: [{d['from']}] ──{d['type']}──► [{d['to']}]")


def show(
    ctx: typer.Context,
    node_id: Annotated[str, typer.Argument(metavar="ID",
                                           help="A node or entry id, a pattern's key, or a change's id (chg-…).")],
    as_json: JsonOpt = False,
) -> None:
    """Show a node, its fields and its edges."""
    with errors():
        data = workspace(ctx).show(node_id)
    emit(data, as_json, _render_show)


def _render_show(d: dict[str, Any]) -> str:
    if "change" in d:
        return _render_change(d["change"])
    n = d["node"]
    label = n.get("entry_type") or n["kind"]
    lines = [f"[{n['id']}] {label}: {n['text']}"]
    for key in ("category", "priority", "status", "area", "source", "pattern_key", "session", "created_at",
                "updated_at", "details", "action", "error_text", "context", "reproducible", "user_context",
                "complexity", "frequency"):
        if n.get(key):
            lines.append(f"  {key}: {n[key]}")
    for key in ("files", "tags", "redactions"):
        if n.get(key):
            lines.append(f"  {key}: {', '.join(n[key])}")
    if n.get("recurrence"):
        r = n["recurrence"]
        lines.append(f"  recurrence: {r['recurrence']}x in {r['sessions']} session(s), "
                     f"{r['first_seen'][:10]} → {r['last_seen'][:10]}")
    if d["edges"]:
        lines.append("  edges:")
        for e in d["edges"]:
            how = "manual" if e["manual"] else f"auto {e['score']:.2f}"
            arrow = f"──{e['type']}──►" if e["direction"] == "out" else f"◄──{e['type']}──"
            lines.append(f"    {arrow} [{e['other']}] {(e['other_text'] or '')[:50]}  ({how}; {e['reason']})")
    return "\n".join(lines)


def _render_change(c: dict[str, Any]) -> str:
    lines = [f"[{c['id']}] rule in {c['target']} ({c['status']}): {c['text']}"]
    if c.get("key") or c.get("pattern"):
        lines.append(f"  pattern: {c.get('key') or c['pattern']}" + (f" [{c['pattern']}]" if c.get("key") else ""))
    for key in ("source", "proposal", "applied_at", "next_check", "verdict", "verdict_at", "rate_before",
                "rate_after", "check_count", "reverted_at", "revert_reason", "hypothesis"):
        if c.get(key) not in (None, ""):
            lines.append(f"  {key}: {c[key]}")
    if c.get("evidence"):
        lines.append("  evidence:")
        lines += [f"    {line}" for line in c["evidence"]]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    app.add_typer(node_app, name="node")
    app.add_typer(edge_app, name="edge")
    app.command()(show)
