"""The QA pass of 2026-12-04, through the real CLI: a preference's key is context for its value (`kg pref set
db_password X` kept X, which alone is no secret, in preferences.json, USER.md and the graph's WAL), a key that is
itself a secret reached USER.md, a list of values under a secret-named key kept all but the first, and
`secret_key_base:` hex and `az login -p` were kept. After each, every byte of the workspace is grepped for the
secret in any case, as tests/cli/test_secret_echoes.py does."""

from __future__ import annotations

import json

import pytest

NOW = ["--now", "2026-12-04T10:00"]


def _holding(root, secret: str, skip: tuple[str, ...] = ()) -> list[str]:
    """Every file under `root` (but `skip`) holding `secret` in any case, as `grep -rl -a -i`."""
    needle = secret.lower().encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                  and str(p.relative_to(root)) not in skip and needle in p.read_bytes().lower())


@pytest.mark.parametrize("key, value", [("db_password", "hunter2secretpw"), ("github_token", "Gh0stTokenValue77"),
                                        ("aws_secret_access_key", "wJalrXUtnFEMIK7MDENGbPxRfiCYzz")])
def test_a_secret_named_preference_keeps_no_value(run_kg, ws, key, value):
    r = run_kg(["pref", "set", key, value, "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    assert value.lower() not in (r.stdout + r.stderr).lower()
    assert r.json["redacted"], r.json
    assert _holding(ws.root, value) == []
    assert run_kg(["pref", "set", "answer_style", "short and direct", *NOW]).exit_code == 0  # others are kept
    assert "short and direct" in (ws.root / "USER.md").read_text()


def test_a_preference_key_that_is_a_secret_is_refused_and_never_stored(run_kg, ws):
    token = "ghp_R4nd0mT0k3nV4lu3xxAbCdEfGhIjKlMnOpQr12"
    r = run_kg(["pref", "set", token, "x", *NOW])
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: the preference key holds a secret"), r.stderr
    assert token.lower() not in (r.stdout + r.stderr).lower()
    assert _holding(ws.root, token) == []


def test_a_hand_edited_secret_preference_is_copied_nowhere(run_kg, ws):
    (ws.root / "memory" / "preferences.json").write_text(json.dumps({"db_password": "hunter2secretpw"}))
    assert run_kg(["pref", "set", "answer_style", "short", *NOW]).exit_code == 0
    # the person's own file keeps what they wrote; kg's copies (history, USER.md) do not
    assert _holding(ws.root, "hunter2secretpw", skip=("memory/preferences.json",)) == []


LISTS = [
    ('API_KEYS = ["Qm9vYXJkZjE2YmY4MGFiZ", "Wm9vZGFiY2RlZjEyMGNkX"]', ["Qm9vYXJkZjE2YmY4MGFiZ",
                                                                      "Wm9vZGFiY2RlZjEyMGNkX"]),
    ("secrets:\n  - Ab9Cd8Ef7Gh6Ij5Kl4Mn\n  - Zx1Yw2Vu3Ts4Rq5Po6Nm\nretries: 3",
     ["Ab9Cd8Ef7Gh6Ij5Kl4Mn", "Zx1Yw2Vu3Ts4Rq5Po6Nm"]),
    ("config/secrets.yml has secret_key_base: 9f8e7d6c5b4a39281706f5e4d3c2b1a0e9d8c7b6a5f4e3d2",
     ["9f8e7d6c5b4a39281706f5e4d3c2b1a0e9d8c7b6a5f4e3d2"]),
    ("ran az login --service-principal -u app -p Az9Pr1nc1palS3cr3t --tenant t1", ["Az9Pr1nc1palS3cr3t"]),
]


@pytest.mark.parametrize("details, secrets", LISTS, ids=["python-list", "yaml-list", "rails-hex", "az-login"])
def test_every_value_of_a_secret_list_and_the_new_forms_are_gone(run_kg, ws, details, secrets):
    r = run_kg(["log", "error", "cfg", "--details", details, "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    for secret in secrets:
        assert secret.lower() not in r.stdout.lower(), r.stdout
        assert _holding(ws.root, secret) == [], secret


def test_the_detect_secrets_tuple_fixture_loses_both_values(run_kg, ws, shared_data):
    fixture = shared_data / "secrets" / "detect_secrets_test_data" / "files" / "tmp" / "file_with_secrets.py"
    if not fixture.exists():
        pytest.skip("shared data not laid out")
    line = fixture.read_text().splitlines()[2]
    values = [part.strip(" '") for part in line.split("=", 1)[1].split(",")]
    assert len(values) == 2 and all(len(v) >= 16 for v in values), line
    r = run_kg(["log", "error", "cfg", "--details", fixture.read_text(), *NOW])
    assert r.exit_code == 0, r.stderr
    assert run_kg(["search", "secret values", *NOW]).exit_code in (0, 1)
    for value in values:
        assert _holding(ws.root, value) == [], value


def test_a_skills_own_frontmatter_loses_a_secret_named_keys_value_on_rewrite(run_kg, ws):
    assert run_kg(["skill", "new", "deploy-docs", "-d", "Deploy the docs site", *NOW]).exit_code == 0
    path = ws.root / "memory" / "skills" / "deploy-docs.md"
    text = path.read_text()
    path.write_text(text.replace("---\n", "---\ndeploy_token: hunter2secretpw\nowner: docs-team\n", 1))
    r = run_kg(["skill", "update", "deploy-docs", "--step", "run the deploy", *NOW])
    assert r.exit_code == 0, r.stderr
    assert _holding(ws.root, "hunter2secretpw") == []
    assert "owner: docs-team" in path.read_text()  # the rest of the person's frontmatter is kept


# The QA pass of 2026-12-05: the second value of a list inside a quoted `python -c "..."` was stored raw (in the
# entry, the graph and search.sqlite), and so were the continuation lines of an INI value under a secret-named key.
QUOTED = ("python -c \"SUPER_SECRET_VALUES = '60b725f10c9c85c70d97880dfe8191b3', "
          "'3b5d5c3712955042212316173ccf37be'\"")


def test_every_value_of_a_list_in_a_quoted_shell_string_is_gone(run_kg, ws):
    r = run_kg(["log", "learning", "note", "--details", QUOTED, "--json", *NOW])
    assert r.exit_code == 0, r.stderr
    shown = run_kg(["show", r.json["id"], "--json", *NOW])
    assert shown.exit_code == 0, shown.stderr
    for value in ("60b725f10c9c85c70d97880dfe8191b3", "3b5d5c3712955042212316173ccf37be"):
        assert value not in shown.stdout, shown.stdout
        assert _holding(ws.root, value) == [], value


def test_the_detect_secrets_continued_ini_value_loses_every_line(run_kg, ws, shared_data):
    fixture = shared_data / "secrets" / "detect_secrets_test_data" / "short_files" / "last_line.ini"
    if not fixture.exists():
        pytest.skip("shared data not laid out")
    lines = fixture.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.rstrip().endswith("="))
    values = [line.strip() for line in lines[at + 1:] if line[:1].isspace() and line.strip()]
    assert len(values) == 3, lines
    r = run_kg(["log", "error", "cfg", "--details", fixture.read_text(), *NOW])
    assert r.exit_code == 0, r.stderr
    for value in values:  # (the rules' cache is kg's own parse of rules/, whose prose may name a common password)
        assert [p for p in _holding(ws.root, value) if not p.startswith("memory/.kg/cache/")] == [], value
