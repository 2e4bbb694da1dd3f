"""A rule a person took out of its file is not in effect: its verification pauses from the first kg run that
sees it gone, the days it is out are no evidence, `kg status` / `kg verify --json` / `kg why` say so, and when
the rule is back verification resumes (kg/lifecycle/verify_withdrawn.py)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

pytestmark = pytest.mark.baseline_wait_off("a rule taken out by hand")

RULE = "Add the user to the docker group"
LINE = f"- {RULE}"


def _log_days(run_kg, first: date, days: int, per_day: int = 1, session: str = "s") -> None:
    for d in range(days):
        day = first + timedelta(days=d)
        for i in range(per_day):
            r = run_kg(f"log error 'docker permission denied on socket' --category tool_gotcha "
                       f"--pattern-key docker.perm --session {session}{d}-{i} --action '{RULE}' "
                       f"--now {day.isoformat()}T{10 + i:02d}:00")
            assert r.exit_code == 0, r.stderr


def test_a_deleted_file_pauses_verification_and_every_view_says_so(run_kg, ws):
    _log_days(run_kg, date(2026, 5, 1), 21)
    assert "promoted 'docker.perm' to TOOLS.md" in run_kg("cycle --now 2026-05-21T12:00").stdout
    (ws.root / "TOOLS.md").unlink()
    status = run_kg("status --json --now 2026-05-22T11:00").json["lifecycle"]
    assert [v["change"] for v in status["verifications_paused"]] == ["chg-20260521-001"]
    r = run_kg("cycle --now 2026-05-22T12:00")
    assert "withdrawn by hand since 2026-05-22, verification paused" in r.stdout
    r = run_kg("cycle --json --now 2026-05-29T12:00")  # the first check was due on 2026-05-28
    d = r.json
    assert d["verified"] == [] and d["reverted"] == [], d["verified"]
    assert [(w["change"], w["action"]) for w in d["withdrawn"]] == [("chg-20260521-001", "still paused")]
    status = run_kg("status --json --now 2026-05-29T13:00").json["lifecycle"]
    assert status["verifications_due"] == [] and status["verifications_due_total"] == 0
    assert status["verifications_paused"][0]["withdrawn_since"] == "2026-05-22T12:00:00"
    assert "Verifications paused" in run_kg("status --now 2026-05-29T13:00").stdout
    v = run_kg("verify --json --now 2026-06-20T12:00").json
    assert v["verified"] == []
    assert v["monitoring"][0]["withdrawn_since"] == "2026-05-22T12:00:00"
    why = run_kg(["why", LINE, "--json", "--now", "2026-06-20T12:00"]).json
    assert any("paused: withdrawn by hand since 2026-05-22" in x for x in why["explanation"])


def test_days_out_are_no_evidence_and_putting_it_back_resumes(run_kg, ws):
    _log_days(run_kg, date(2026, 5, 1), 8)
    assert "promoted 'docker.perm'" in run_kg("cycle --now 2026-05-08T12:00").stdout
    tools = ws.root / "TOOLS.md"
    kept = tools.read_text()
    tools.write_text(kept.replace(LINE + "\n", "- my own note\n"))  # the person takes the rule out of the block
    assert "verification paused" in run_kg("cycle --now 2026-05-09T08:00").stdout
    _log_days(run_kg, date(2026, 5, 9), 10, per_day=2, session="out")  # without the rule it recurs, twice a day
    tools.write_text(kept)  # and puts it back
    r = run_kg("cycle --json --now 2026-05-19T12:00").json
    resumed = [w for w in r["withdrawn"] if w["action"] == "resumed"]
    assert resumed and resumed[0]["next_check"] == "2026-05-25T16:00:00"  # due 05-15 + 10.17 days out
    assert r["verified"] == []
    d = run_kg("verify --json --now 2026-05-30T12:00").json
    (v,) = d["verified"]
    assert v["verdict"] == "confirmed", v["summary"]
    assert v["after"] == 0 and v["stats"]["days_after"] == 11.8333  # 0.83 + 11 days in effect
    assert v["stats"]["withdrawn"] == [["2026-05-09T08:00:00", "2026-05-19T12:00:00"]]
    assert "20 in 10.2d edited by hand" in v["summary"]  # taken out of its block, the block kept: as kg status says


def test_an_intact_block_is_in_effect_even_when_kg_wrote_it_in_crlf():
    from kg.lifecycle import blocks
    from kg.lifecycle.verify_withdrawn import in_effect

    crlf = ("## Known Gotchas\r\n\r\n<!-- kaizen-kg:begin kaizen-kg -->\r\n- Other rule\r\n"
            "<!-- kaizen-kg:end kaizen-kg -->\r\n")
    old_hash = blocks._raw_digest("- Other rule\r\n")  # an older kg hashed the CRLF bytes
    assert in_effect(crlf, "kaizen-kg", "Other rule", old_hash)
    assert not in_effect(crlf.replace("- Other rule", "- edited"), "kaizen-kg", "Other rule", old_hash)
    assert in_effect(None, "kaizen-kg", "Other rule", None)  # kg never recorded writing it: nothing to judge
    assert not in_effect(None, "kaizen-kg", "Other rule", old_hash)


def test_a_crlf_block_an_older_kg_wrote_still_takes_a_promotion(run_kg, ws):
    """An older kg hashed a CRLF block's raw bytes; the cycle's promotion check (`Lifecycle.blocked`) takes
    that hash as kg's own, as the writer does, instead of holding every new rule for 'a human edited'."""
    from kg.lifecycle import blocks

    _log_days(run_kg, date(2026, 5, 1), 3)
    assert "promoted 'docker.perm'" in run_kg("cycle --now 2026-05-03T12:00").stdout
    tools = ws.root / "TOOLS.md"
    tools.write_bytes(tools.read_bytes().replace(b"\n", b"\r\n"))
    with ws, ws.store() as st:  # what an older kg recorded for the block it wrote in CRLF
        (row,) = [b for b in st.run("lc_blocks") if b["id"] == "TOOLS.md#kaizen-kg"]
        inner = blocks.inner_of(blocks.read(tools), "kaizen-kg")
        st.run("lc_block_upsert", rows=[{**{k: row[k] for k in ("id", "path", "name", "glue", "created_file",
                                                                   "flag")},
                                         "hash": blocks._raw_digest(inner), "at": row["updated_at"]}])
    for d in range(3):
        r = run_kg(f"log error 'npm ci fails on the lock file' --category tool_gotcha --pattern-key npm.lock "
                   f"--session n{d} --action 'Run npm install once to refresh the lock' --now 2026-05-0{4 + d}T10:00")
        assert r.exit_code == 0, r.stderr
    d = run_kg("cycle --json --now 2026-05-06T12:00").json
    assert d["held"] == [] and [p["pattern_key"] for p in d["promoted"]] == ["npm.lock"], d["held"]
    assert d["withdrawn"] == []
    data = tools.read_bytes()
    assert b"- Run npm install once to refresh the lock\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_why_takes_an_older_kgs_crlf_hash_of_another_writers_block_as_kgs(run_kg, ws):
    """`kg why` on a line of the USER.md block `kg pref set` wrote, in a CRLF file whose hash an older kg took
    on the raw bytes: kg's line, not a person's edit."""
    import json

    from kg.lifecycle import blocks

    assert run_kg("pref set editor vim").exit_code == 0
    user = ws.root / "USER.md"
    user.write_bytes(user.read_bytes().replace(b"\n", b"\r\n"))
    state = ws.kg_dir / blocks.STATE_FILE
    data = json.loads(state.read_bytes())
    inner = blocks.inner_of(blocks.read(user), "preferences")
    (key,) = [k for k in data if k.startswith("USER.md")]
    data[key]["hash"] = blocks._raw_digest(inner)
    state.write_text(json.dumps(data))
    d = run_kg(["why", "- **editor**: vim", "--json"]).json
    assert d["source"] == "kg-block", d


def _out_for_ten_days(run_kg, ws) -> None:
    """docker.perm promoted on May 8, its line taken out of TOOLS.md by hand from May 9 to 19 (20 occurrences
    meanwhile), then put back."""
    _log_days(run_kg, date(2026, 5, 1), 8)
    assert "promoted 'docker.perm'" in run_kg("cycle --now 2026-05-08T12:00").stdout
    tools = ws.root / "TOOLS.md"
    kept = tools.read_text()
    tools.write_text(kept.replace(LINE + "\n", "- my own note\n"))
    assert "verification paused" in run_kg("cycle --now 2026-05-09T08:00").stdout
    _log_days(run_kg, date(2026, 5, 9), 10, per_day=2, session="out")
    tools.write_text(kept)
    assert run_kg("cycle --now 2026-05-19T12:00").exit_code == 0


def test_graph_report_leaves_the_days_out_out_as_verify_does(run_kg, ws):
    """`kg graph report` judges a once-withdrawn rule as `kg verify` does: without the days it was out of its
    file. Before, the report counted the 20 occurrences of the days out as evidence after the change and called
    the rule ineffective while `kg verify` confirmed it."""
    _out_for_ten_days(run_kg, ws)
    (v,) = run_kg("verify --dry-run --json --now 2026-05-30T12:00").json["verified"]
    assert v["verdict"] == "confirmed" and v["after"] == 0, v["summary"]
    report = run_kg("graph report --json --now 2026-05-30T12:00").json["rule_effect"]
    (r,) = [r for r in report if r.get("change") == v["change"]]
    assert (r["verdict"], r["before"], r["after"], r["helped"]) == ("confirmed", v["before"], 0, True)
    assert r["why"] == v["summary"] and "20 in 10.2d edited by hand" in r["why"]


def test_days_out_count_as_time_without_the_rule_when_its_pattern_is_judged_again(run_kg, ws):
    """A rule out of its file for ten days, then back and reverted: judged again on the pattern's whole history
    (the relapse, the recovery's test), the days it was out are time without the rule. Before, its change's whole
    live period counted as 'with the rule', the 20 occurrences of the days out included."""
    from datetime import datetime

    from kg.lifecycle import verify
    from kg.lifecycle.cycle import Lifecycle, holding

    _out_for_ten_days(run_kg, ws)
    now = datetime(2026, 5, 25, 12)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, now, dry_run=True)
        pattern = next(c["pattern"] for c in st.run("lc_changes_all"))
        times, spans = lc.history(pattern, "")
        assert spans == [(datetime(2026, 5, 8, 12), datetime(2026, 5, 9, 8)), (datetime(2026, 5, 19, 12), now)]
        v = verify.relapse(times, spans, now, lc.lp, observed_from=lc.observed_from())
    assert v.after == 0 and v.before == 28, v.summary  # with the rule: none; without it: 8 before, 20 out


def test_the_effect_prior_leaves_the_days_out_out(run_kg, ws):
    """The workspace's effect prior is fitted to every change's counts without the days its rule was out of its
    file, the counts its verdict uses. Before, it took the 20 occurrences of the ten days out as evidence after
    the change (issue 16: `verifying.prior()` still counted withdrawn days)."""
    from kg.lifecycle import effect

    (ws.root / "kg.toml").write_text("[rules.lifecycle.verification]\neffect_prior = true\nmin_baseline_days = 0\n"
                                     "effect_prior_min_changes = 1\n")
    _out_for_ten_days(run_kg, ws)
    (v,) = run_kg("verify --dry-run --json --now 2026-05-30T12:00").json["verified"]
    s = v["stats"]
    assert s["k_after"] == 0 and s["withdrawn"], v["summary"]
    fitted = effect.fit([(s["k_before"], s["days_before"], s["k_after"], s["days_after"])], strength=2.0,
                        min_changes=1, rate_prior=(0.0, 0.0))
    assert s["effect_prior"] == fitted.as_dict(0.5)


def test_the_relapse_mix_counts_the_days_out_as_time_without_the_rule(run_kg, ws):
    """`mix_source = "relapse"` judges every reverted pattern again; the days its rule was out of its file are
    time without it, as in the recovery's relapse. Before, the change's whole live period counted as with the
    rule, the 20 occurrences of the days out included, and the relapse said the rule had not worked. Something
    else is logged every week after the rule is back: a spell with nothing at all logged is no exposure on either
    side (kg.lifecycle.verify_watch), and 23 idle days would leave the rule's days back unwatched."""
    from dataclasses import replace
    from datetime import datetime

    from kg.lifecycle import verify, verify_mix, verifying
    from kg.lifecycle.cycle import Lifecycle, holding
    from kg.lifecycle.policy import load

    _out_for_ten_days(run_kg, ws)
    for day in ("2026-05-25", "2026-06-01", "2026-06-08"):  # the workspace in use meanwhile, without the mistake
        assert run_kg(f"log learning 'read the changelog before upgrading' --now {day}T09:00").exit_code == 0
    now = datetime(2026, 6, 10, 12)
    lp = load(ws)
    lp = replace(lp, verification=replace(lp.verification, mix_source="relapse", mix_strength=10.0))
    with holding(ws) as st:
        lc = Lifecycle(ws, st, now, dry_run=True, policy=lp)
        rows = [{**c, "reverted_at": datetime(2026, 5, 25, 12)} for c in st.run("lc_changes_all")]
        times = lc.history(rows[0]["pattern"], "")[0]
        mix = verifying.workspace_mix(lc, rows, (0.0, 0.0))
        spans = [(datetime(2026, 5, 8, 12), datetime(2026, 5, 9, 8)),
                 (datetime(2026, 5, 19, 12), datetime(2026, 5, 25, 12))]
        kind = verify.relapse(times, spans, now, lc.lp, observed_from=lc.observed_from()).kind
    assert kind == "confirmed"  # with the rule: none in 6.8 days; without it: 28 in the rest
    assert mix == verify_mix.relapse_factor([kind], lc.lp) != verify_mix.relapse_factor(["ineffective"], lc.lp)


def test_a_rule_reworded_inside_its_block_is_edited_in_why_and_its_evidence(run_kg, ws):
    """`kg status` and the cycle call a rule reworded inside its kg block "edited by hand" (test_qa_q1.py); `kg
    why` and the pause's evidence line said "withdrawn by hand" for it (and so the verdict's counts, once it is
    back: test_days_out_are_no_evidence_and_putting_it_back_resumes)."""
    _log_days(run_kg, date(2026, 5, 1), 21)
    assert "promoted 'docker.perm' to TOOLS.md" in run_kg("cycle --now 2026-05-21T12:00").stdout
    tools = ws.root / "TOOLS.md"
    tools.write_text(tools.read_text().replace(LINE, "- Put the user in the docker group (then log in again)"))
    assert "edited by hand inside its kg block" in run_kg("cycle --now 2026-05-22T12:00").stdout
    _log_days(run_kg, date(2026, 5, 23), 3, session="out")
    why = run_kg(["why", LINE, "--json", "--now", "2026-05-26T12:00"]).json
    said = " ".join(why["explanation"] + why["change"]["evidence"])
    assert "paused: edited by hand inside its kg block since 2026-05-22" in said, said
    assert "withdrawn by hand" not in said, said
    tools.unlink()  # the file gone afterwards: kg why says withdrawn, as kg status does
    why = run_kg(["why", LINE, "--json", "--now", "2026-05-27T12:00"]).json
    assert any("paused: withdrawn by hand since 2026-05-22" in x for x in why["explanation"]), why["explanation"]
