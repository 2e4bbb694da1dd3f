"""Every text field of an entry is searchable, not only its summary (a QA pass: a word only in --details,
--error or --action found nothing, though other hits' snippets showed it; the keyword table search asked for
document frequencies counts summaries alone, so such a word was taken for one in no entry and never asked).
Through the real CLI (one-off, as with KG_SERVER=0), the Python API held open (`with ws:`, the cached view)
and the MCP server's search tool; Chinese, and a 19,000-character details."""

from __future__ import annotations

import kg
from kg.memory.search import search

NOW = "--now 2026-12-05T10:00"
ENTRIES = [
    ("learning", "helm notes", ["--details", "use helmfile sync for zookeeper"]),
    ("error", "deploy failed", ["--error", "zookeeper quorum lost", "--action", "restart zk"]),
    ("error", "build broke", ["--context", "make bundlefoo release"]),
    ("feature", "dark mode", ["--user-context", "eyestrain at nightshift"]),
    ("learning", "构建笔记", ["--details", "使用缓存加速镜像构建"]),
    ("learning", "long notes", ["--details", ("lorem ipsum dolor " * 1100) + "needlewordz at the end"]),
]
# word -> the entries' summaries it must find, best first where one alone holds it
WANTED = {"zookeeper": {"helm notes", "deploy failed"}, "helmfile": {"helm notes"}, "quorum": {"deploy failed"},
          "restart": {"deploy failed"}, "bundlefoo": {"build broke"}, "nightshift": {"dark mode"},
          "镜像": {"构建笔记"}, "needlewordz": {"long notes"}}


def _log_all(run_kg) -> None:
    for kind, summary, extra in ENTRIES:
        r = run_kg(["log", kind, summary, *extra, "--now", "2026-12-05T09:00"])
        assert r.exit_code == 0, r.stderr


def test_cli_search_finds_words_of_every_field(ws, run_kg):
    _log_all(run_kg)
    for word, summaries in WANTED.items():
        hits = run_kg(f"search {word} --json {NOW}").json
        got = {h["text"] for h in hits if h["match"] == "terms" and h["source"] == "graph"}
        assert summaries <= got, (word, [(h["text"], h["match"], h["source"]) for h in hits])


def test_api_search_held_open_finds_them_too(ws, run_kg):
    _log_all(run_kg)
    with kg.open_workspace(ws.root) as held:
        for _ in range(2):  # the second query answers from the cached view
            for word, summaries in WANTED.items():
                hits = search(held, word, now="2026-12-05T10:00")
                assert summaries <= {h.text for h in hits if h.match == "terms" and h.source == "graph"}, word


def test_mcp_search_finds_a_word_only_in_the_error(ws, run_kg, need):
    _log_all(run_kg)
    from kg.runtimes.mcp_server import build_server

    async def main():
        async with need("mcp").Client(build_server(ws.root)) as client:
            return await client.call_tool("search", {"query": "quorum"})
    found = need("anyio").run(main)
    assert [h["text"] for h in found.structured_content["hits"] if h["source"] == "graph"] == ["deploy failed"]
