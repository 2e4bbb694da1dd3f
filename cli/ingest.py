"""`kg ingest`: a conversation or a transcript logged in one pass."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, not_a_file, note, now_of, workspace


def register(app: typer.Typer) -> None:
    @app.command()
    def ingest(
        ctx: typer.Context,
        path: Annotated[Path, typer.Argument(metavar="FILE.jsonl", help="One entry a line: "
                                             '{"kind": "learning", "summary": "...", "at": "ISO time", '
                                             '"session": "...", "details": "...", "tags": [...]}; '
                                             "- for stdin.")],
        session: Annotated[str | None, typer.Option(
            envvar="KG_SESSION", help="Session of entries that name none (also KG_SESSION).")] = None,
        thread: Annotated[bool, typer.Option("--thread", help="Join each entry to the next of its session by "
                                                              "led_to (the turns of a conversation).")] = False,
        no_link: Annotated[bool, typer.Option("--no-link", help="Do not auto-link the entries.")] = False,
        again: Annotated[bool, typer.Option("--again", help="Log the entries even if this input (the same lines, "
                                                            "the same --session) was ingested before.")] = False,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Log many entries at once (bulk `kg log`): every line is checked and redacted before anything is
        written, then all are journaled together and applied and linked in one graph open. The same input again
        logs nothing (a run killed after journaling, run again, would store every entry twice): --again does."""
        from kg.ingest.batch import read_jsonl
        from kg.ingest.ingested import fingerprint

        with errors():
            not_a_file(path, "the file")
            ws = workspace(ctx)
            where: list[str] = []  # each entry's file:line, named when one of its fields is refused
            lines: list[str] = []
            items = list(read_jsonl(path, where, lines))
            result = ws.log_many(items, now=now_of(ctx, now), session=session, link=not no_link, thread=thread,
                                 where=where, source=None if again else fingerprint(lines, session))
        if result.already is not None:
            b = result.already
            note(f"This input was ingested at {b['at']} ({b['entries']} entries, {b['first']} to {b['last']}): "
                 "nothing logged again. Use --again to log its entries a second time.")
        if result.redacted:
            note(f"Redacted before storing, in {len(result.redacted)} entries")
        for skipped in result.skipped:
            note(f"Warning: {skipped} (the entries are recorded; only their copy there was not written)")
        if result.note:
            note(result.note)
        emit(result.as_dict(), as_json,
             lambda d: f"Logged {d['logged']} entries" + (f", {d['threaded']} joined by led_to" if d["threaded"]
                                                           else ""))
