"""User-visible defects fixed in the p15 review, each through the real CLI on a real workspace: a pattern key in
a search query puts its pattern first; a query naming a time keeps every score within 0..1; a hook's bad input
answers by one rule (`--runtime`: never exit 2; without: the CLI's exit 2), for every hook and runtime; words
inside camel-case tokens of the hits are not named as held by no memory."""

from __future__ import annotations

import pytest

NOW = "2026-12-02T12:00"


@pytest.fixture
def filled(ws, run_kg):
    for day in ("2026-11-20", "2026-11-25", "2026-11-30"):
        r = run_kg(["--now", f"{day}T10:00", "log", "error", "integration tests failed: database connection refused",
                    "--pattern-key", "tests.db_not_running", "--area", "tests", "--wait"])
        assert r.exit_code == 0, r.stderr
    for at, kind, text in (("2026-12-01T10:00", "error", "tests for the db layer are slow and running long"),
                           ("2026-12-01T11:00", "learning", "the running db tests need docker not postgres"),
                           ("2026-12-02T11:00", "learning", "useFetchHook in the parseJsonConfig module broke")):
        assert run_kg(["--now", at, "log", kind, text, "--wait"]).exit_code == 0
    return run_kg


def _pattern_id(run_kg) -> str:
    rows = run_kg("list --type pattern --json").json
    (found,) = [r["id"] for r in rows if r["text"].startswith("integration tests failed")]
    return found


@pytest.mark.parametrize("query", ["tests.db_not_running", "why does tests.db_not_running keep failing?",
                                   "TESTS.DB_NOT_RUNNING"])
def test_a_pattern_key_in_the_query_puts_its_pattern_first(filled, query):
    pattern = _pattern_id(filled)
    r = filled(["--now", NOW, "search", query, "--json"])
    assert r.exit_code == 0, r.stderr
    assert r.json[0]["ref"] == pattern, [h["ref"] for h in r.json]
    text = filled(["--now", NOW, "search", query]).stdout
    first = next(line for line in text.splitlines() if line.startswith("  1. "))
    assert first.split()[3] == pattern, text


def test_a_key_no_pattern_has_changes_nothing(filled):
    r = filled(["--now", NOW, "search", "tests.db_never_seen", "--json"])
    assert r.exit_code == 0 and not any(h["kind"] == "pattern" for h in r.json[:1]), r.stdout


@pytest.mark.parametrize("query", ["db tests yesterday", "db tests last week", "running db tests on December 1"])
def test_scores_stay_within_0_and_1_when_the_query_names_a_time(filled, query):
    r = filled(["--now", NOW, "search", query, "--json"])
    assert r.exit_code == 0 and r.json, r.stderr
    assert all(0.0 <= h["score"] <= 1.0 for h in r.json), [(h["ref"], h["score"]) for h in r.json]
    assert r.json[0]["parts"].get("date") == 1.0  # the time still counts: an entry of that day leads


def test_scores_without_a_time_are_unchanged(filled):
    r = filled(["--now", NOW, "search", "db tests", "--json"])
    top = r.json[0]
    p = top["parts"]
    expected = 0.45 * p["text"] + 0.35 * p["fuzzy"] + 0.12 * p["graph"] + 0.02 * p["recency"] + 0.03 * p["importance"]
    assert abs(top["score"] - expected) < 1e-3


def test_search_help_says_what_a_score_is(run_kg):
    out = run_kg("search --help").stdout
    assert "0 to 1" in " ".join(out.split())


@pytest.mark.parametrize("query, missing", [("fetch hook broke", []), ("json config module", []),
                                            ("fetch hook zzzqq broke", ["zzzqq"])])
def test_words_inside_camel_case_tokens_are_not_named_as_missing(filled, query, missing):
    r = filled(["--now", NOW, "search", query, "--json"])
    assert r.exit_code == 0 and r.json[0]["text"].startswith("useFetchHook"), r.stdout
    assert r.json[0]["unmatched"] == missing
    text = filled(["--now", NOW, "search", query]).stdout
    assert ("no memory holds" in text) == bool(missing), text


# -- hooks: one rule for bad input ---------------------------------------------------------------------------
HOOKS = ["post-tool-use", "session-start", "session-end"]
RUNTIMES = ["claude-code", "codex", "openclaw"]


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_under_a_runtime_a_hook_never_exits_2_on_bad_input(ws, run_kg, hook, runtime):
    """Claude Code and Codex read exit 2 as "block" (PostToolUse feeds stderr to the model, Stop keeps the
    turn going); any other non-zero exit is a non-blocking hook error and the session goes on."""
    r = run_kg(["hook", hook, "--runtime", runtime], input="not json")
    assert r.exit_code in (0, 1), (r.exit_code, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == "" or runtime == "openclaw", r.stdout
    if runtime != "openclaw" or hook == "post-tool-use":  # (openclaw's session hooks take no payload)
        assert r.stderr.startswith("Error: the hook payload on stdin is not JSON"), r.stderr


@pytest.mark.parametrize("hook", ["post-tool-use", "session-end"])
def test_without_a_runtime_a_hooks_bad_input_exits_2_as_every_command(ws, run_kg, hook):
    r = run_kg(["hook", hook], input="not json")
    assert r.exit_code == 2 and r.stderr.startswith("Error: the hook payload on stdin is not JSON"), r.stderr


@pytest.mark.parametrize("hook", HOOKS)
def test_an_unknown_runtime_is_named(ws, run_kg, hook):
    r = run_kg(["hook", hook, "--runtime", "claude"], input="{}")
    assert r.exit_code == 1 and r.stderr.startswith("Error: unknown runtime 'claude'"), (r.exit_code, r.stderr)
    assert "claude-code, codex, openclaw" in r.stderr


def test_the_readme_states_the_hooks_exit_codes():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "never exits 2" in readme and "non-blocking hook error" in readme


# -- every command with bad input, as the agent runs them (p15 sweep) -------------------------------------------


@pytest.mark.parametrize("argv", [["retention"], ["conflicts"], ["schedule", "run"], ["trends"], ["status"]])
def test_a_bad_now_is_bad_input_for_every_command(ws, run_kg, argv):
    r = run_kg([*argv, "--now", "notadate"])
    assert r.exit_code == 2 and r.stderr.startswith("Error: invalid --now 'notadate'"), (r.exit_code, r.stderr)
    r = run_kg(argv, env={"KG_NOW": "notadate"})
    assert r.exit_code == 2 and r.stderr.startswith("Error: invalid KG_NOW 'notadate'"), (r.exit_code, r.stderr)


def test_a_bad_now_in_a_runtimes_hook_is_still_never_exit_2(ws, run_kg):
    r = run_kg(["hook", "session-start", "--runtime", "claude-code", "--now", "notadate"], input="{}")
    assert r.exit_code == 1 and "invalid --now" in r.stderr


def test_index_build_refuses_a_negative_days(ws, run_kg):
    r = run_kg("index build --days -1")
    assert r.exit_code == 2 and r.stderr == "Error: --days must be at least 1, not -1\n"


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_install_into_a_missing_project_folder_is_refused_and_makes_nothing(ws, run_kg, tmp_path, command):
    missing = tmp_path / "typo" / "project"
    r = run_kg([command, "claude-code", "--project", str(missing)])
    assert r.exit_code == 2 and "does not exist" in r.stderr, (r.exit_code, r.stderr)
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("argv", [["ingest", "{fifo}"], ["ingest", "/dev/zero"], ["import", "trail", "{fifo}"],
                                  ["ingest", "{folder}"]])
def test_ingest_and_import_refuse_a_fifo_a_device_or_a_folder_without_waiting(ws, tmp_path, argv):
    """A FIFO with no writer blocked `kg ingest` and `kg import trail` forever, and `kg ingest /dev/zero` read
    without end; both are refused before anything opens them (a subprocess with a timeout: a hang fails)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    args = [a.format(fifo=fifo, folder=tmp_path) for a in argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")} | {"KG_SERVER": "0"}
    r = subprocess.run([sys.executable, "-c", "import sys; from kg.cli.app import run; sys.exit(run(sys.argv[1:]))",
                        "-w", str(ws.root), *args], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("Error: the "), r.stderr
    assert "not a regular file" in r.stderr or "is a folder" in r.stderr


def test_importing_a_file_that_holds_no_trail_says_so(ws, run_kg, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\nnothing structured here\n")
    r = run_kg(["import", "trail", str(notes)])
    assert r.exit_code == 0 and "Imported 0 entries" in r.stdout
    assert "Warning: no entry, node or edge found in " in r.stderr, r.stderr
