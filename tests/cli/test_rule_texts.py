"""The text a promotion writes, through the real CLI: the lesson, not who said it (QA pass qa2, finding 13)."""


def test_a_lesson_logged_as_the_readme_does_is_promoted_without_its_speaker(run_kg, ws):
    (ws.root / "kg.toml").write_text("[rules.lifecycle.verification]\nmin_baseline_days = 0\n", encoding="utf-8")
    for d in ("01", "02", "03"):  # README's quick start: kg log learning "User: ..." --category correction
        r = run_kg(["log", "learning", "User: use pnpm not npm in this repo", "--category", "correction", "--area",
                    "tooling", "--pattern-key", "pkg.pnpm", "--session", f"s{d}", "--now", f"2026-10-{d}T10:00"])
        assert r.exit_code == 0, r.stderr
    report = run_kg(["cycle", "--now", "2026-10-03T12:00", "--json"]).json
    (p,) = report["promoted"] or report["proposed"]
    assert p["text"] == "use pnpm not npm in this repo", p
