"""A dry run says what the real run does, also once a verdict makes a change's row anew (kg/store/remake.py): in
its rolled-back transaction Kùzu read the row made anew as another change, and `kg cycle --dry-run` and `kg verify
--dry-run` predicted "AGENTS.md: remove" and "SOUL.md: update" where the real cycle wrote nothing (QA2 #5, the
history of /work/tmp-qa2/repro_dry2.sh: a revert and a second approval of the same pattern, with a new action)."""

from __future__ import annotations

from tests.conftest import kg_runner

DB = "log error 'pytest failed: database connection refused on 5433' --area tests --pattern-key tests.db_down"


def _history(run):
    def ok(args: str) -> str:
        r = run(args)
        assert r.exit_code == 0, (args, r.stdout, r.stderr)
        return r.stdout

    ok("init . --now 2026-10-01T09:00:00")
    for d in range(1, 21):
        ok(f"{DB} --action 'start the db with docker compose up -d db' --session s{d} --now 2026-10-{d:02d}T09:00:00")
        if d % 3 == 0:
            ok(f"log learning 'User: use pnpm not npm in this repo' --category correction --area tooling "
               f"--pattern-key pkg.pnpm --session s{d} --now 2026-10-{d:02d}T10:00:00")
        if d % 4 == 0:
            ok(f"log learning 'User prefers short direct answers' --category preference --pattern-key pref.short "
               f"--session s{d} --now 2026-10-{d:02d}T11:00:00")
    ok("cycle --now 2026-10-21T08:00:00")
    return ok


def test_the_dry_run_predicts_what_the_real_cycle_writes(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    root.mkdir()
    run = kg_runner(root)
    monkeypatch.chdir(root)
    ok = _history(run)
    (root / "AGENTS.md").write_text("# AGENTS.md\nHand-written intro.\n\n")
    ok("approve 1 --now 2026-10-21T09:00:00")
    ok("approve 2 --now 2026-10-21T09:00:00")
    for d in range(21, 28):
        ok(f"{DB} --session s{d} --now 2026-10-{d}T09:00:00")
    ok("cycle --now 2026-10-28T08:00:00")
    for d in range(28, 32):
        ok(f"{DB} --session s{d} --now 2026-10-{d}T09:00:00")
    ok("cycle --now 2026-10-29T08:00:00")
    for d in range(1, 21):
        ok(f"{DB} --session n{d} --now 2026-11-{d:02d}T09:00:00")
    ok("cycle --now 2026-11-05T08:00:00")
    ok("cycle --now 2026-11-21T08:00:00")
    ok(f"{DB} --session n22 --action 'run make db-up before pytest' --now 2026-11-22T09:00:00")
    ok("cycle --now 2026-11-23T08:00:00")
    ok("approve 3 --now 2026-11-23T09:00")  # (the reverted rule's error text is no longer proposed: nothing to skip)
    files = {p: (root / p).read_bytes() for p in ("AGENTS.md", "SOUL.md", "USER.md")}
    dry = run("cycle --dry-run --json --now 2026-11-30T10:00").json
    vdry = run("verify --dry-run --json --now 2026-11-30T10:00").json
    real = run("cycle --json --now 2026-11-30T10:00").json
    assert real["files"] == [] and {p: (root / p).read_bytes() for p in files} == files  # the real run: nothing
    assert dry["files"] == real["files"] and vdry["files"] == [], (dry["files"], vdry["files"])
    assert [v["verdict"] for v in dry["verified"]] == [v["verdict"] for v in real["verified"]] == ["confirmed"]
