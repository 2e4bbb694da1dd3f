"""`kg export graph`, `kg graph show`, `kg graph report`: the analyst's view from the command line.

All of them read a snapshot of the graph (kg.analysis.snapshot), so the agent is never locked out while they run.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, export_out, note, now_of, workspace

# The `export` sub-app, for when the main app does not pass its own to `register` (the lead's `kg export
# trail` lives beside `kg export graph`).
export_app = typer.Typer(help="Render the graph into other formats.", no_args_is_help=True)
# Used only if no other module made a `graph` sub-app (kg.cli.links owns it when present).
graph_app = typer.Typer(help="Look at the graph: draw it, summarise it.", no_args_is_help=True)

TypeOpt = Annotated[
    list[str] | None,
    typer.Option("--type", "-t", help="Only these kinds or entry types: event, lesson, principle, knowledge, "
                                      "pattern, learning, error, feature (repeat or comma-separate)."),
]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Only nodes created since: 7d, 12h, 2w or an ISO date.")]


def _types(values: list[str] | None) -> list[str] | None:
    out = [part.strip() for value in values or [] for part in value.split(",") if part.strip()]
    return out or None


def export_graph(
    ctx: typer.Context,
    fmt: Annotated[str, typer.Option("--format", "-f", help="graphml, gexf, json (node-link), mermaid, dot or "
                                                            "cypher.")] = "graphml",
    dialect: Annotated[str | None, typer.Option("--dialect", help="For cypher: kuzu (default) or neo4j.")] = None,
    types: TypeOpt = None,
    since: SinceOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write to this file, inside the workspace (a relative path is taken from it; "
                            "default: stdout). Never kg's state, kg.toml, .git/, instruction files or what `kg "
                            "install` wrote; an existing file kg did not export only with --force.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file that is not an earlier "
                                                        "export of kg's.")] = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export the knowledge graph (from a snapshot) for Gephi, networkx, GitHub, Graphviz, Kùzu or Neo4j."""
    from kg.analysis.export import export_graph as run

    with errors():
        ws = workspace(ctx)
        result = run(ws, fmt, types=_types(types), since=since, now=now_of(ctx, now),
                     out=export_out(ws, out), dialect=dialect, force=force)
    for warning in result.warnings:
        note(f"Warning: {warning}")
    if result.text is not None:
        sys.stdout.write(result.text)
        return
    emit(result.as_dict(), as_json,
         lambda d: f"Exported {d['nodes']} nodes and {d['edges']} edges to {d['out']} ({d['format']})")


def graph_show(
    ctx: typer.Context,
    node_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="Draw the neighbourhood of this node.")] = None,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="The picture: a .png, .svg or .pdf file inside the workspace (a relative path is "
                            "taken from it).")] = Path("graph.png"),
    types: TypeOpt = None,
    depth: Annotated[int, typer.Option(help="Links to follow from ID.")] = 1,
    limit: Annotated[int, typer.Option(help="Draw at most this many nodes (the nearest or best-connected).")] = 150,
    since: SinceOpt = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draw a subgraph: around ID, or the best-connected nodes of --type. Writes --out (default graph.png)."""
    from kg.analysis.drawing import show_subgraph

    with errors():
        ws = workspace(ctx)
        report = show_subgraph(ws, out=export_out(ws, out), node_id=node_id,
                               types=_types(types), depth=depth,
                               limit=limit, since=since, now=now_of(ctx, now))
    for warning in report["warnings"]:
        note(f"Warning: {warning}")
    emit(report, as_json, lambda d: f"Drew {d['nodes']} nodes and {d['edges']} edges to {d['out']}")


def graph_report(
    ctx: typer.Context,
    top: Annotated[int, typer.Option(help="How many items per section.")] = 5,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Where the agent keeps failing and what it has learned: failing areas, recurring patterns, central
    principles with their evidence, rules that helped, conflicts, loose ends."""
    from kg.analysis import report

    with errors():
        data = report(workspace(ctx), top=top, now=now_of(ctx, now))
    emit(data, as_json, _render_report)


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d")
    return str(value)[:10] if value else "-"


def _render_report(d: dict[str, Any]) -> str:
    c = d["counts"]
    lines = [(f"📊 {c['total_nodes']} nodes, {c['total_edges']} edges, {c.get('sessions', 0)} sessions "
              f"({_when(c['first'])} → {_when(c['last'])})"),
             "   " + ", ".join(f"{k}: {v}" for k, v in c["nodes"].items())]
    lines.append("\n❌ Where it keeps failing (errors by area):")
    lines += [f"   {a['area']}: {a['errors']} error{'' if a['errors'] == 1 else 's'}, last {_when(a['last'])}"
              for a in d["failing_areas"]] or ["   none"]
    lines.append("\n🔁 Recurring patterns:")
    lines += [f"   {p['key']}: {p['recurrence']}x in {p['sessions']} session(s), {_when(p['first_seen'])} → "
              f"{_when(p['last_seen'])}" for p in d["patterns"]] or ["   none"]
    lines.append("\n📜 Central principles and their evidence:")
    for p in d["principles"]:
        lines.append(f"   [{p['id']}] {p['text'][:70]}")
        lines.append(f"      {p['support']} event(s), {len(p['lessons'])} lesson(s), {len(p['patterns'])} pattern(s)"
                     + (f"; contradicted by {', '.join(p['contradicted_by'])}" if p["contradicted_by"] else ""))
    if not d["principles"]:
        lines.append("   none yet")
    lines.append("\n📈 Did the rules help (recurrence per week before → after):")
    lines += [f"   {r['key']}: {r['rate_before']} → {r['rate_after']} "
              f"({'better' if r['helped'] else 'not better' if r['helped'] is False else 'no history'})"
              for r in d["rule_effect"]] or ["   no rule promoted from a pattern yet"]
    if d["decisions"]:
        lines.append("\n⚖️  Conflict decisions:")
        lines += [f"   {x.get('a')} vs {x.get('b')}: "
                  + ("no conflict (a person said so)" if x.get("status") == "compatible" else
                     f"winner {x.get('winner') or 'tie (review)'}")
                  + f" ({x.get('score_a')}:{x.get('score_b')}, {x.get('status')})" for x in d["decisions"]]
    lines.append(f"\n🧩 Loose ends: {d['orphans_total']} node(s) without links; {d['unsupported_total']} "
                 "principle(s)/lesson(s) without event evidence")
    return "\n".join(lines)


def _graph_group(app: typer.Typer) -> tuple[typer.Typer, bool]:
    """The `graph` sub-app to add to, and whether it still has to be added to the main app."""
    for group in app.registered_groups:
        if group.name == "graph" and group.typer_instance is not None:
            return group.typer_instance, False
    try:
        from kg.cli import links
    except ImportError:
        links = None
    if links is not None and isinstance(getattr(links, "graph_app", None), typer.Typer):
        return links.graph_app, False  # links.register adds it to the main app
    return graph_app, True


def register(app: typer.Typer, export: typer.Typer | None = None) -> None:
    target = export if export is not None else export_app
    if export is None:
        app.add_typer(export_app, name="export")
    target.command("graph")(export_graph)
    group, add = _graph_group(app)
    group.command("show")(graph_show)
    group.command("report")(graph_report)
    if add:
        app.add_typer(group, name="graph")
