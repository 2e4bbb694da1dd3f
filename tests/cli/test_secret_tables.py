"""An agent logs the accounts it seeded as a Markdown table (`| Role | Email | Password |`): no password reaches the
graph, the journal, the daily log or any other file of the workspace (grepped in any case, as
tests/cli/test_secret_pairs.py does), and the rest of the table is kept."""

from __future__ import annotations

NOW = ["--now", "2026-12-05T10:00"]
TABLE = ("| Role | Email | Password |\n|------|-------|----------|\n| Admin | admin@shop.test | Adm1n!2024 |\n"
         "| Editor | ed@shop.test | `edit0rPass` |")


def _holding(root, secret: str) -> list[str]:
    needle = secret.lower().encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes().lower())


def test_a_table_of_seeded_accounts_keeps_no_password(run_kg, ws):
    r = run_kg(["log", "learning", "seeded the test accounts", "--details", TABLE, "--wait", "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    shown = run_kg(["show", r.json["id"], "--json"]).stdout
    assert "admin@shop.test" in shown and "[REDACTED:password_in_table]" in shown
    for secret in ("Adm1n!2024", "edit0rPass"):
        assert secret.lower() not in (r.stdout + r.stderr + shown).lower()
        assert _holding(ws.root, secret) == []
