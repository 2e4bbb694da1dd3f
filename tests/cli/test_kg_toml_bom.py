"""A kg.toml saved with a byte-order mark (Notepad and other Windows editors write one) is read, not refused with
"Invalid statement (at line 1, column 1)" and a hint about a missing ']' it does not have (QA6 #5). A TOML error
keeps tomllib's message; the hint is given only for the slip that message points at."""

from __future__ import annotations

import pytest

BOM_CRLF = b"\xef\xbb\xbf[rules.lifecycle.verification]\r\nmin_baseline_days = 0\r\n"


def test_a_kg_toml_with_a_byte_order_mark_is_read(ws, run_kg):
    (ws.root / "kg.toml").write_bytes(BOM_CRLF)
    status = run_kg(["status"])
    assert status.exit_code == 0, status.stderr
    r = run_kg(["doctor", "--json"])
    rules = next(c for c in r.json["checks"] if c["name"] == "rules")
    assert rules["status"] == "ok", rules


def test_a_bad_value_in_a_kg_toml_with_a_byte_order_mark_names_its_line(ws, run_kg):
    (ws.root / "kg.toml").write_bytes(b"\xef\xbb\xbf[rules.lifecycle.promotion]\r\nmin_recurrence = \"three\"\r\n")
    r = run_kg(["doctor", "--json"])
    rules = next(c for c in r.json["checks"] if c["name"] == "rules")
    assert "kg.toml line 2" in rules["detail"], rules["detail"]


@pytest.mark.parametrize(("text", "hint"), [
    ("[rules.lifecycle\nx = 1\n", "a table header needs its closing ']'"),
    ("[rules.lifecycle.promotion]\nmin_recurrence = 3 4\n", None),
    ("[rules.lifecycle.promotion]\nmin_recurrence = 3\nmin_recurrence = 4\n", "a key is set twice"),
])
def test_a_toml_error_gets_the_hint_of_its_own_slip_only(ws, run_kg, text, hint):
    (ws.root / "kg.toml").write_text(text, encoding="utf-8")
    r = run_kg(["doctor", "--json"])
    detail = next(c for c in r.json["checks"] if c["name"] == "rules")["detail"]
    assert "not valid TOML" in detail and "Fix the syntax there" in detail, detail
    if hint:
        assert hint in detail, detail
    else:
        assert "closing ']'" not in detail and "quotes" not in detail, detail
