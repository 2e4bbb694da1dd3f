"""A person's text on the line of one of kg's markers is the person's: when kg removes its block (`kg uninstall`,
the lifecycle's revert of a block's last rule) only the markers and what lies between them go, and the text beside
a marker stays on its line (QA1 #3: `<!-- kaizen-kg:end install-codex --> ask Bob` lost 'ask Bob' on uninstall).
A marker line holding nothing else goes whole, as before. The real CLI on real files."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

BEGIN, END = "<!-- kaizen-kg:begin install-codex -->", "<!-- kaizen-kg:end install-codex -->"


def test_uninstall_keeps_the_text_beside_kg_s_markers(ws, run_kg):
    agents = ws.root / "AGENTS.md"
    agents.write_bytes(b"# Agents\r\n\r\nhuman rules\r\n")
    assert run_kg("install codex").exit_code == 0
    text = agents.read_bytes().decode()
    assert "\r\n" + BEGIN + "\r\n" in text
    agents.write_bytes(text.replace(BEGIN, "Note:  " + BEGIN + " read this").replace(
        END, END + "  Human: ask Bob before deploying.").encode())
    r = run_kg("uninstall codex")
    assert r.exit_code == 0, r.stderr
    assert "AGENTS.md: removed kg's block" in r.stdout
    # kg's glue (the blank line it put before its block) stays: the begin line holds the person's text
    assert agents.read_bytes() == (b"# Agents\r\n\r\nhuman rules\r\n\r\nNote: read this\r\n"
                                   b"Human: ask Bob before deploying.\r\n")


def test_uninstall_still_restores_the_file_when_the_marker_lines_hold_only_kg_s_markers(ws, run_kg):
    agents = ws.root / "AGENTS.md"
    agents.write_text("# Agents\n\nhuman rules\n", encoding="utf-8")
    assert run_kg("install codex").exit_code == 0
    agents.write_text(agents.read_text(encoding="utf-8").replace(END, END + " \t") + "after\n", encoding="utf-8")
    assert run_kg("uninstall codex").exit_code == 0
    assert agents.read_text(encoding="utf-8") == "# Agents\n\nhuman rules\nafter\n"


RULE = "start the db with docker compose up -d db"


@pytest.mark.baseline_wait_off("a revert on the first weeks of a workspace")
def test_a_revert_of_the_block_s_last_rule_keeps_the_text_after_its_end_marker(ws, run_kg):
    def log(first: date, days: int, action: bool) -> None:
        for d in range(days):
            day = first + timedelta(days=d)
            extra = f" --action '{RULE}'" if action else ""
            r = run_kg(f"log error 'pytest failed: database connection refused on 5433' --pattern-key tests.db_down "
                       f"--session s{day:%m%d}{extra} --now {day.isoformat()}T09:00")
            assert r.exit_code == 0, r.stderr

    log(date(2026, 10, 1), 20, action=True)
    assert "promoted 'tests.db_down' to TOOLS.md" in run_kg("cycle --now 2026-10-21T08:00").stdout
    tools = ws.root / "TOOLS.md"
    tools.write_text(tools.read_text().replace("<!-- kaizen-kg:end kaizen-kg -->\n",
                                               "<!-- kaizen-kg:end kaizen-kg --> Human: ask Bob\n"))
    log(date(2026, 10, 21), 15, action=False)
    d = run_kg("cycle --json --now 2026-11-05T08:00").json
    assert [x["change"] for x in d["reverted"]] == ["chg-20261021-001"], d
    assert tools.read_text() == "Human: ask Bob\n"  # kg made the file: heading and block go, the line stays
