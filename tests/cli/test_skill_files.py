"""A skill file a person edits stays theirs: `kg skill update` appends to kg's three sections and leaves the rest
of the file as it was. It used to re-render the whole file from what it parsed, so notes under the title and
comments in the frontmatter were dropped, a CRLF file came back LF, and an update that added nothing still
rewrote the file with a new `updated:` stamp."""

from __future__ import annotations

import pytest

NOTES = "# Release App\n\nAsk Dana before any release on a Friday.\n\n> Owner: platform team\n"


def _edited(ws, run_kg, crlf: bool = False) -> bytes:
    assert run_kg("skill new release-app -d 'Release the app' --step tag --now 2026-06-01T10:00").exit_code == 0
    path = ws.memory / "skills" / "release-app.md"
    text = path.read_text()
    assert "# Release App\n" in text and "tools: []\n" in text
    text = text.replace("# Release App\n", NOTES).replace("tools: []\n", "tools: []\n# reviewed by ops\n")
    data = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    path.write_bytes(data)
    return data


def test_skill_update_keeps_a_persons_notes_and_frontmatter_comments(ws, run_kg):
    before = _edited(ws, run_kg)
    assert run_kg("skill update release-app --step publish --now 2026-06-02T10:00").exit_code == 0
    after = (ws.memory / "skills" / "release-app.md").read_bytes()
    expected = before.replace(b"updated: 2026-06-01 10:00", b"updated: 2026-06-02 10:00") \
        .replace(b"1. tag\n", b"1. tag\n2. publish\n")
    assert after == expected


def test_skill_update_keeps_crlf(ws, run_kg):
    before = _edited(ws, run_kg, crlf=True)
    assert run_kg("skill update release-app --pitfall 'a Friday release' --now 2026-06-02T10:00").exit_code == 0
    after = (ws.memory / "skills" / "release-app.md").read_bytes()
    assert b"\n" not in after.replace(b"\r\n", b"")
    assert after == before.replace(b"updated: 2026-06-01 10:00", b"updated: 2026-06-02 10:00") \
        .replace(b"## Pitfalls\r\n\r\n- (none yet)\r\n", b"## Pitfalls\r\n\r\n- a Friday release\r\n")


@pytest.mark.parametrize("crlf", [False, True])
def test_skill_update_keeps_a_byte_order_mark_and_the_one_frontmatter(ws, run_kg, crlf):
    """An editor's UTF-8 BOM hid the frontmatter: the update put a new one in front, `created` reset, `source`
    blank, and the old one became body text (a QA pass)."""
    path = ws.memory / "skills" / "release-app.md"
    before = b"\xef\xbb\xbf" + _edited(ws, run_kg, crlf=crlf)
    path.write_bytes(before)
    nl = b"\r\n" if crlf else b"\n"
    assert run_kg("skill update release-app --step x --now 2026-06-02T10:00").exit_code == 0
    after = path.read_bytes()
    assert after == before.replace(b"updated: 2026-06-01 10:00", b"updated: 2026-06-02 10:00") \
        .replace(b"1. tag" + nl, b"1. tag" + nl + b"2. x" + nl)
    assert after.count(b"---" + nl) == 2 and after.count(b"created: 2026-06-01 10:00") == 1
    [listed] = run_kg("skill list --json").json
    assert listed["created"] == "2026-06-01 10:00" and listed["name"] == "release-app"


def test_an_update_that_adds_nothing_leaves_the_file_alone(ws, run_kg):
    before = _edited(ws, run_kg)
    res = run_kg("skill update release-app --step tag --now 2026-06-09T10:00")
    assert res.exit_code == 0 and "unchanged" in res.stdout
    assert (ws.memory / "skills" / "release-app.md").read_bytes() == before
    res = run_kg("skill new release-app --step tag --now 2026-06-09T10:00 --json")
    assert res.exit_code == 0 and (ws.memory / "skills" / "release-app.md").read_bytes() == before


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_update_refuses_a_frontmatter_that_lost_its_closing_line_and_keeps_the_file(run_kg, ws, newline):
    assert run_kg("skill new deploy-app --description 'Deploy the app' --step 'run make deploy'").exit_code == 0
    path = ws.memory / "skills" / "deploy-app.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    del lines[lines.index("---", 1)]  # a person's edit took the closing line out
    broken = newline.join(lines).encode("utf-8")
    path.write_bytes(broken)
    r = run_kg("skill update deploy-app --pitfall 'the staging key expires monthly'")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == ("Error: memory/skills/deploy-app.md: its frontmatter opens with `---` on line 1 and no "
                        "`---` line closes it: add a line `---` after line 8 (the last `key: value` line), then "
                        "run the command again\n")
    assert path.read_bytes() == broken
    assert run_kg("skill new deploy-app --step 'another'").exit_code == 2 and path.read_bytes() == broken


@pytest.mark.parametrize("name, kind", [("xoxb-111111111111-2222222222222-abcdefghijklmnopqrstuvwx", "slack_token"),
                                        ("deploy-ghp_" + "u8JzPdE0" * 4 + "abcd", "github_token")])
def test_a_skill_named_by_a_secret_is_refused_and_never_echoed(ws, run_kg, name, kind):
    """A Slack token as the name was a file memory/skills/<token>.md, its title and a graph key (only the frontmatter
    name was redacted); a GitHub token came back lower-cased in the error's suggestion."""
    r = run_kg(["skill", "new", name, "-d", "deploy the docs"])
    assert r.exit_code == 2 and kind in r.stderr, r.stderr
    secret = name.split("-", 1)[1] if name.startswith("deploy") else name
    assert secret.lower()[5:] not in (r.stdout + r.stderr).lower()
    assert not (ws.root / "memory" / "skills").exists() or not any((ws.root / "memory" / "skills").iterdir())
    with ws.store() as st:
        assert st.execute("MATCH (m:Meta) WHERE m.key STARTS WITH 'Skill' RETURN count(m) AS n")[0]["n"] == 0
