"""QA qa5's repros through the real CLI: `kg log ... --details` stored the secret in the graph and the journal.
- Tokens glued to what stands before them: JSON an agent was shown (`\\nAKIA...`), a URL-encoded redirect
  (`%3Dglpat-...`), a CJK sentence (`令牌glpat-...`) answered "redacted": [].
- Provider formats: a webhook URL, a git clone with a PAT as the URL's user, a .pgpass line, Chinese and German prose
  naming a secret, a Twilio client.
Every byte of the workspace is scanned for them afterwards. Values are fake."""

from __future__ import annotations

DETAILS = [
    '{"Error":{"Code":"InvalidClientTokenId","Message":"The security token is invalid.\\nAKIAQWERTYUIOPASDFGH"}}',
    '{"ok":false,"error":"invalid_auth","sent":"token\\nxoxb-937097122314-5920463708932-mvCDMGiEv7uiIxIo8HJuZcP3"}',
    "redirect=https%3A%2F%2Fgit.example.com%3Ftoken%3Dglpat-Zx9Yw8Vu7Ts6Rq5P-o4n",
    "令牌glpat-Qw3Er4Ty5Ui6Op7As8Dz已过期",
]
LEAKS = ["AKIAQWERTYUIOPASDFGH", "5920463708932-mvCDMGiEv7", "glpat-Zx9Yw8Vu7Ts6", "glpat-Qw3Er4Ty5Ui6"]

CASES = {
    "POST https://discord.com/api/webhooks/389494260868380236/LgW1CaN6nTzaHMImexIf1zP59zhBHZf5GXWMokTiU0BHMg18qrG"
    "-JvXwKvypxqiKZf7F returned 404": "LgW1CaN6nTzaHMImexIf1zP59zhBH",
    "git clone https://skoivom7xdqc55o3qtxz4csgijozp4agnuqrp3i2fymv7aj2e3as@dev.azure.com/org/proj/_git/repo":
        "skoivom7xdqc55o3qtxz4csgijozp",
    "db.internal:5432:shop:app:HTjz5wVTPapxvJ$x": "HTjz5wVTPapxvJ$x",
    "微信公众号的 AppSecret 是 c2e64b7bc9ee939089b16c7053cd8037，别外传": "c2e64b7bc9ee939089b16c",
    "Das Passwort lautet DTeaYONtFpft0K~d": "DTeaYONtFpft0K~d",
    'client = Client("AC74a593c088c0a401f4410b2aae074a3b", "b45591f33360776e569bd65c3f2bf591")':
        "b45591f33360776e569bd65c3f2bf591",
}


def _logged_and_scanned(ws, run_kg, details: list[str], leaks: list[str]) -> list[tuple[str, str]]:
    """Log each text as an error's details, each said to be redacted; then what of `leaks` any workspace file holds."""
    for text in details:
        r = run_kg(["log", "error", "call failed", "--details", text, "--wait", "--json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["redacted"], r.stdout
    return [(str(p.relative_to(ws.root)), s) for p in ws.root.rglob("*") if p.is_file()
            for s in leaks if s.lower().encode() in p.read_bytes().lower()]


def test_kg_log_details_redacts_a_token_glued_to_an_escape_an_encoding_or_a_cjk_word(ws, run_kg):
    assert _logged_and_scanned(ws, run_kg, DETAILS, LEAKS) == []


def test_kg_log_details_redacts_the_qa5_formats_everywhere(ws, run_kg):
    assert _logged_and_scanned(ws, run_kg, list(CASES), list(CASES.values())) == []
