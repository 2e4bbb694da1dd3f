"""`kg why` on lines kg wrote outside the lifecycle's changes: a preference line in USER.md's block and the heading
kg put before a block it created are kg's, not a person's; with --json, a line nobody traced is an answer."""

from __future__ import annotations


def test_why_knows_kg_wrote_a_preference_line_and_a_heading(run_kg, ws):
    assert run_kg("pref set editor vim").exit_code == 0
    r = run_kg(["why", "- **editor**: vim", "--json"])
    assert r.exit_code == 0 and r.json["source"] == "kg-block" and r.json["block"] == "preferences", r.stdout
    assert "person" not in r.stdout

    assert run_kg("node add principle 'Prefer small commits'").exit_code == 0
    assert run_kg("export memory").exit_code == 0
    heading = next(x for x in (ws.root / "MEMORY.md").read_text().splitlines() if x.startswith("## "))
    r = run_kg(["why", heading, "--json"])
    assert r.exit_code == 0 and r.json["source"] == "kg-block", r.stdout
    assert "did not write" not in r.stdout

    # a person's edit inside the block is still a person's
    user = ws.root / "USER.md"
    user.write_text(user.read_text().replace("- **editor**: vim\n", "- **editor**: vim\n- I like tea\n"))
    r = run_kg(["why", "- I like tea", "--json"])
    assert r.exit_code == 0 and r.json["source"] == "human", r.stdout
    # and asked by a fragment, its candidate says where it is (QA: "(outside kg's blocks)" for a line inside one)
    r = run_kg(["why", "like tea"])
    assert r.exit_code == 0 and "USER.md: I like tea (inside kg's block 'preferences': a person's edit)" in r.stdout
    (ws.root / "NOTES.md").write_text("- I like tea too\n")  # not an instruction file: not a candidate
    user.write_text(user.read_text() + "\nI like tea outside\n")
    assert "USER.md: I like tea outside (outside kg's blocks)" in run_kg(["why", "like tea"]).stdout


def test_why_with_nothing_found_exits_2_in_text_and_json_alike(run_kg):
    r = run_kg(["why", "a line nobody ever wrote anywhere", "--json"])  # the answer printed, the exit code kept
    assert r.exit_code == 2 and r.json["found"] is False and r.json["candidates"] == [], (r.stdout, r.stderr)
    assert r.stderr.startswith("Error: kg did not write this line")
    text = run_kg(["why", "a line nobody ever wrote anywhere"])
    assert text.exit_code == 2 and text.stderr.startswith("Error:")
