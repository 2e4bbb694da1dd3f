"""A Chinese-speaking user end to end (QA qa10): what they type reaches memory as they meant it, with no secret in
it, in sessions of its own."""

from __future__ import annotations

PW = "hunter2xyz!"


def test_kg_log_stores_no_chinese_password(run_kg, ws):
    r = run_kg(["log", "learning", f"数据库密码{PW}，别外传", "--now", "2026-11-20T03:00"])
    assert r.exit_code == 0, r.stderr
    for path in ws.memory.glob("*.md"):
        assert PW not in path.read_text()
    shown = run_kg("list --json").json
    assert all(PW not in e["text"] for e in shown) and any("数据库密码[REDACTED:" in e["text"] for e in shown)

