"""QA qa5's repro through the real CLI: `kg log ... --details` of JSON an agent was shown, a URL-encoded redirect and a
CJK sentence, each with a token glued to what stands before it (`\\nAKIA...`, `%3Dglpat-...`, `令牌glpat-...`), answered
"redacted": [] and stored the token. Every byte of the workspace is scanned for them afterwards. Values are fake."""

from __future__ import annotations

DETAILS = [
    '{"Error":{"Code":"InvalidClientTokenId","Message":"The security token is invalid.\\nAKIAQWERTYUIOPASDFGH"}}',
    '{"ok":false,"error":"invalid_auth","sent":"token\\nxoxb-937097122314-5920463708932-mvCDMGiEv7uiIxIo8HJuZcP3"}',
    "redirect=https%3A%2F%2Fgit.example.com%3Ftoken%3Dglpat-Zx9Yw8Vu7Ts6Rq5P-o4n",
    "令牌glpat-Qw3Er4Ty5Ui6Op7As8Dz已过期",
]
LEAKS = ["AKIAQWERTYUIOPASDFGH", "5920463708932-mvCDMGiEv7", "glpat-Zx9Yw8Vu7Ts6", "glpat-Qw3Er4Ty5Ui6"]


def test_kg_log_details_redacts_a_token_glued_to_an_escape_an_encoding_or_a_cjk_word(ws, run_kg):
    for details in DETAILS:
        r = run_kg(["log", "error", "auth failed", "--details", details, "--wait", "--json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["redacted"], r.stdout
    held = [(str(p.relative_to(ws.root)), s) for p in ws.root.rglob("*") if p.is_file()
            for s in LEAKS if s.lower().encode() in p.read_bytes().lower()]
    assert held == []
