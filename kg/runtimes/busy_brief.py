"""The session-start brief when another process holds the graph read-write past a short wait: what needs no
graph (kg's blocks in the instruction files, preferences among them in USER.md, today's daily log) and one line
saying the graph was busy (or, for a team graph whose server cannot be reached, saying that and how many entries
wait). A hook must never leave the agent without a brief (Claude Code gives it 30 s)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime
from typing import Any

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "TOOLS.md", "USER.md", "MEMORY.md", "SOUL.md")
ENV_LOCK_TIMEOUT = "KG_LOCK_TIMEOUT"


@contextlib.contextmanager
def bounded_wait(seconds: float) -> Iterator[None]:
    """Wait at most `seconds` for the graph's lock in this block (a smaller KG_LOCK_TIMEOUT given stays)."""
    before = os.environ.get(ENV_LOCK_TIMEOUT)
    try:
        shorter = before is None or float(before) > seconds
    except ValueError:
        shorter = False  # the workspace reports the bad value
    if shorter:
        os.environ[ENV_LOCK_TIMEOUT] = str(seconds)
    try:
        yield
    finally:
        if shorter:
            if before is None:
                os.environ.pop(ENV_LOCK_TIMEOUT, None)
            else:
                os.environ[ENV_LOCK_TIMEOUT] = before


def busy_brief(ws: Any, at: datetime, budget: int, seconds: float, *, tools: bool = False,
               full: str | None = None, away: str | None = None, waiting: int = 0) -> tuple[str, list[Any]]:
    """The head line's note and the sections of a brief read from files only. `full`: why the graph could not be
    opened for writing (the disk is full), said instead of the busy note; `away`: why the team graph's server could
    not be reached, said instead of it (QA2 #3: a refused connection was called "busy"), with the `waiting` count
    of entries the local journal holds for it."""
    from kg.lifecycle import blocks
    from kg.runtimes.hooks import Section

    sections = []
    for name in INSTRUCTION_FILES:
        path = ws.root / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for block in blocks.names(text):
            try:
                inner = (blocks.inner_of(text, block) or "").strip()
            except blocks.BlockError:  # damaged markers: no block to show (`kg doctor` says how to fix them)
                continue
            lines = [ln for ln in inner.splitlines() if ln.strip()]
            if lines:
                sections.append(Section(f"file:{name}:{block}", f"{name} ({block})", lines=lines,
                                        total=len(lines), more="see the file"))
    daily = ws.memory / f"{at:%Y-%m-%d}.md"
    with contextlib.suppress(OSError):
        logged = [ln for ln in daily.read_text(encoding="utf-8", errors="replace").splitlines()
                  if ln.startswith("### ")]
        if logged:  # the newest 8 shown, all counted (QA2 #3: the total was the 8 shown)
            sections.append(Section("daily_log", f"Today's log ({daily.name}, newest first)",
                                    lines=logged[-8:][::-1], total=len(logged), more=f"see memory/{daily.name}"))
    again = "call `brief` again, or `status`," if tools else "run `kg hook session-start` again, or `kg status`,"
    note = (f"- The graph was busy (another kg process held it for over {seconds:g} s): this brief is read from "
            f"files only; {again} for the rest.")
    if full:
        note = f"- Error: {full}. This brief is read from files only; once there is room, {again} for the rest."
    if away:
        count = f"{waiting} entr{'y waits' if waiting == 1 else 'ies wait'} in the local journal (memory/.kg/)"
        note = (f"- Error: {away.rstrip('.')}. {count}. This brief is read from files only; once the server answers, "
                f"{again} for the rest.")
    return note, sections
