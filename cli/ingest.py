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
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Log many entries at once (bulk `kg log`): every line is checked and redacted before anything is
        written, then all are journaled together and applied and linked in one graph open."""
        from kg.ingest.batch import read_jsonl

        with errors():
            not_a_file(path, "the file")
            ws = workspace(ctx)
            where: list[str] = []  # each entry's file:line, named when one of its fields is refused
            result = ws.log_many(list(read_jsonl(path, where)), now=now_of(ctx, now), session=session,
                                 link=not no_link, thread=thread, where=where)
        if result.redacted:
            note(f"Redacted before storing, in {len(result.redacted)} entries")
        for skipped in result.skipped:
            note(f"Warning: {skipped} (the entries are recorded; only their copy there was not written)")
        if result.note:
            note(result.note)
        emit(result.as_dict(), as_json,
             lambda d: f"Logged {d['logged']} entries" + (f", {d['threaded']} joined by led_to" if d["threaded"]
                                                           else ""))
