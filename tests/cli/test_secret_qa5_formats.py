"""QA qa5's repro through the real CLI: `kg log error ... --details` of a webhook URL, a git clone with a PAT as the
URL's user, a .pgpass line, Chinese and German prose naming a secret and a Twilio client stored each secret in the
graph and the journal. Every byte of the workspace is scanned for them afterwards. Values are fake."""

from __future__ import annotations

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


def test_kg_log_details_redacts_the_qa5_formats_everywhere(ws, run_kg):
    for details in CASES:
        r = run_kg(["log", "error", "call failed", "--details", details, "--wait", "--json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["redacted"], r.stdout
    held = [(str(p.relative_to(ws.root)), s) for p in ws.root.rglob("*") if p.is_file()
            for s in CASES.values() if s.lower().encode() in p.read_bytes().lower()]
    assert held == []
