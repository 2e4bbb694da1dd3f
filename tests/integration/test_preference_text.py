"""Preferences read as text wherever kg shows them: USER.md, `kg pref list`, `kg inject`, the brief, MCP."""

from __future__ import annotations

import json

import pytest

from kg.memory.readable import preference_text

LEARNED = [{"id": "kno-20261101-001", "text": "Use metric units in every answer", "since": "2026-11-01"},
           {"id": "kno-20261102-001", "text": "Answer in 简体中文 when asked in Chinese", "since": "2026-11-02"}]


@pytest.mark.parametrize(("value", "text"), [
    ("short answers", "short answers"),
    (LEARNED, "Use metric units in every answer (since 2026-11-01); "
              "Answer in 简体中文 when asked in Chinese (since 2026-11-02)"),
    ({"tone": "dry", "units": ["m", "kg"]}, "tone: dry, units: m, kg"),
    (3, "3"), (True, "true"), (None, ""), ([], ""),
])
def test_preference_text(value, text):
    assert preference_text(value) == text


@pytest.fixture
def prefs(ws, run_kg):
    assert run_kg("pref set answer_style 'short answers, metric units'").exit_code == 0
    path = ws.root / "memory" / "preferences.json"
    data = json.loads(path.read_text())
    data["kaizen_kg_learned"] = LEARNED  # what the lifecycle mirrors there
    path.write_text(json.dumps(data))
    return ws


def _readable(text: str) -> None:
    assert "'id':" not in text and "'text':" not in text and "kno-2026" not in text
    assert "Use metric units in every answer" in text


def test_pref_list_inject_and_user_md_are_readable(prefs, run_kg):
    listing = run_kg("pref list")
    assert listing.exit_code == 0
    _readable(listing.stdout)
    assert "answer_style: short answers, metric units\n" in listing.stdout
    got = run_kg("pref get kaizen_kg_learned")
    assert got.stdout == preference_text(LEARNED) + "\n"
    assert run_kg("pref get kaizen_kg_learned --json").json["value"] == LEARNED  # machines keep the structure
    injected = run_kg(["inject", "-m", "which units should the answer use"])
    assert injected.exit_code == 0
    _readable(injected.stdout)
    assert run_kg("pref set tone dry").exit_code == 0  # re-renders USER.md's preferences block
    user = (prefs.root / "USER.md").read_text()
    # the learned rules are the lifecycle's: its own USER.md block lists them, this one does not repeat them
    assert "- **tone**: dry" in user and "kaizen_kg_learned" not in user and "kno-2026" not in user


def test_brief_and_mcp_inject_are_readable(prefs, need):
    need("mcp")
    import anyio
    from mcp import Client

    from kg.runtimes.mcp_server import build_server

    async def main() -> list[dict]:
        async with Client(build_server(prefs.root)) as client:
            message = {"message": "which units should the answer use"}
            return [(await client.call_tool(name, message)).structured_content for name in ("inject", "brief")]

    for out in anyio.run(main):
        _readable(json.dumps(out, ensure_ascii=False))
