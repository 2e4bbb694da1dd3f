"""`kg export trail` and `kg import trail`: the seed's `.learning-trail.json` and `.learnings/*.md`."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, export_out, not_a_file, note, now_of, workspace

import_app = typer.Typer(help="Import memory written by other tools or by hand.", no_args_is_help=True)


def export_trail(
    ctx: typer.Context,
    out: Annotated[Path | None, typer.Option(help="Write the JSON here (inside the workspace, relative to it) "
                                                 "instead of memory/.learning-trail.json.")] = None,
    learnings: Annotated[bool | None, typer.Option("--learnings/--no-learnings",
                                                   help="Also (re)write .learnings/*.md (default: when that "
                                                        "folder exists).")] = None,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write memory/.learning-trail.json (and .learnings/*.md) from the graph."""
    from kg.ingest.trail import export_trail as run

    with errors():
        ws = workspace(ctx)
        result = run(ws, out=export_out(ws, out, trail=True), learnings=learnings, now=now_of(ctx, now))
    emit(result, as_json, lambda d: f"Exported {d['entries']} entries, {d['nodes']} nodes and {d['edges']} edges "
                                    f"to {', '.join(d['written'])}")
    for kept in result.get("kept", []):
        note(f"{kept['id']} in {kept['file']}: {kept['reason']}")
    for warning in result.get("warnings", []):
        note(f"Warning: {warning}")


@import_app.command("trail")
def import_trail(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(help="Trail JSON files, .learnings/*.md files or folders "
                                                            "(default: the workspace's own).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Parse and count, write nothing.")] = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import entries, nodes and edges; ids already in the graph are skipped, secrets redacted."""
    from kg.ingest.trail import import_trail as run

    with errors():
        for path in paths or []:
            not_a_file(path, "the trail", folder_ok=True)
        report = run(workspace(ctx), list(paths or []), now=now_of(ctx, now), dry_run=dry_run,
                     progress=_progress_bar() if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            sys.stderr.write("\n")
    for warning in report.warnings[:20]:
        note(f"Warning: {warning}")
    for what, count in sorted(report.defaulted.items())[:20]:  # kept, with kg's default: said, not silent
        note(f"Warning: {what} is not a value kg knows: {count:,} entr{'y' if count == 1 else 'ies'} took the "
             "kind's default (rules/policy.toml lists the values)")
    if paths and not (report.entries or report.nodes or report.edges or report.already_present or report.skipped):
        note(f"Warning: no entry, node or edge found in {', '.join(str(p) for p in paths)}: a trail is kg's trail "
             "JSON (memory/.learning-trail.json) or .learnings/*.md files")
    emit(report.as_dict(), as_json, _render_import(dry_run))


def _progress_bar():
    """A one-line bar on stderr (a terminal only), redrawn at most ten times a second."""
    start = time.monotonic()
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and done < total:
            return
        last[0] = now
        share = done / total if total else 1.0
        bar = "#" * int(share * 30)
        sys.stderr.write(f"\r[{bar:<30}] {share:4.0%} {done:,}/{total:,} items, {now - start:.0f} s")
        sys.stderr.flush()

    return show


# A reason to skip is a singular noun phrase (`--json` keys it so): its head noun, before what qualifies it
# (QA2 #7: "edge already present" and "edge whose endpoint ..." had none of these words: "2 edge already presents")
_REASON = re.compile(r"^(?P<head>.*?\w)(?P<rest> (?:with|without|of|in|kg|is|already|whose)\b.*)?$")


def counted(n: int, why: str) -> str:
    """`3 blocks of a file ...`, `1 entry is not an object`: the reason's head noun in the plural when n is not 1
    (QA8 #6: "skipped 3 block of a file ...", "3 entry without a LRN/ERR/FEAT id")."""
    m = _REASON.match(why)
    if n == 1 or m is None:
        return f"{n} {why}"
    head, rest = m["head"], m["rest"] or ""
    head = head[:-1] + "ies" if head.endswith("y") and head[-2:-1] not in "aeiou" else head + "s"
    if rest.startswith(" is not an "):
        rest = " are not " + rest[len(" is not an "):] + "s"
    return f"{n} {head}{rest}"


def _render_import(dry_run: bool):
    def render(d: dict[str, Any]) -> str:
        verb = "Would import" if dry_run else "Imported"
        # nodes and edges: the trail's own graph section; the links, patterns and counts made from the entries are
        # the graph's (`kg status`), so "0 edges" beside 30,000 in status read as lost edges
        text = f"{verb} {d['entries']} entries"
        if d["nodes"] or d["edges"]:
            text += f" and the trail's graph section ({d['nodes']} nodes, {d['edges']} edges)"
        if d.get("resumed"):
            text = "Finished an interrupted import. " + text
        if d["already_present"]:
            text += f"; {d['already_present']} already present"
        if d["skipped"]:
            text += "; skipped " + ", ".join(counted(n, why) for why, n in sorted(d["skipped"].items()))
        if d.get("lifecycle_not_imported"):  # another workspace's: the warning on stderr says why
            text += "; not imported, of the trail's lifecycle: " + ", ".join(
                f"{n} {kind if n != 1 else kind[:-1]}" for kind, n in sorted(d["lifecycle_not_imported"].items()))
        for key, what in (("principles_proposed", "principle(s)"), ("rules_proposed", "promoted rule(s)")):
            if d.get(key) and dry_run:  # counted from the files (a warning says what decides)
                text += f"; {d[key]} {what} of another workspace would wait for your approval"
            elif d.get(key):  # another workspace's: rendered only once approved
                text += (f"; {d[key]} {what} of another workspace wait for your approval "
                         "(kg propose lists them, kg approve N renders one)")
        if d["redacted"]:
            text += f"; redacted: {', '.join(d['redacted'])}"
        return text

    return render


def register(app: typer.Typer, export_app: typer.Typer) -> None:
    export_app.command("trail")(export_trail)
    app.add_typer(import_app, name="import")
