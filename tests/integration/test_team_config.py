"""kg.toml's one writer (kg.store.team.configure, `kg init --store`): kg's `[store]` table is a marked block written
through the one block editor. Every other byte of the person's kg.toml stays; an edit inside the block is kept
and refused with what to do. Real files; no server is needed to write the table."""

from __future__ import annotations

import tomllib

import pytest
from kg.cli.app import app
from typer.testing import CliRunner

from kg.core.errors import UsageError
from kg.store import team

PERSON = b'# my settings\r\n[rules.policy]\r\nlock_timeout = 20  # slow disk \r\n'
URL_A, URL_B = "falkordb://db.example:6379/team", "falkordb://db2.example:6380/team"


def test_the_store_table_is_kgs_block_and_the_rest_of_kg_toml_stays(tmp_path):
    path = tmp_path / "kg.toml"
    path.write_bytes(PERSON)
    team.configure(tmp_path, URL_A)
    first = path.read_bytes()
    assert first.startswith(PERSON)  # CRLF, comments, trailing blanks
    assert team.configured_url(tmp_path) == URL_A
    assert tomllib.loads(first.decode())["rules"] == {"policy": {"lock_timeout": 20}}
    team.configure(tmp_path, URL_B)
    second = path.read_bytes()
    assert second.startswith(PERSON) and second.count(b"[store]") == 1
    assert second == first.replace(URL_A.encode(), URL_B.encode())
    assert team.configured_url(tmp_path) == URL_B


def test_a_human_edit_inside_the_store_block_is_kept_and_refused(tmp_path):
    team.configure(tmp_path, URL_A)
    path = tmp_path / "kg.toml"
    edited = path.read_text().replace(URL_A, "falkordb://mine.example:6379/team")
    path.write_text(edited)
    with pytest.raises(UsageError, match=r"a human edited inside the kg block; move the text outside the markers, "
                                         r"or delete the block \(both marker lines\) and run "
                                         r"`kg init --store URL` again"):
        team.configure(tmp_path, URL_B)
    assert path.read_text() == edited
    r = CliRunner().invoke(app, ["init", str(tmp_path), "--store", URL_B])
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: {path}: kg's [store] block was not changed: a human")
    assert path.read_text() == edited


def test_an_older_kgs_store_table_becomes_the_block_and_a_persons_richer_table_is_refused(tmp_path):
    path = tmp_path / "kg.toml"
    path.write_text(f'[rules.policy]\nlock_timeout = 20\n\n[store]\nurl = "{URL_A}"\n')
    team.configure(tmp_path, URL_B)
    text = path.read_text()
    assert text.startswith("[rules.policy]\nlock_timeout = 20\n\n# kaizen-kg:begin store\n[store]\n")
    assert text.count("[store]") == 1 and team.configured_url(tmp_path) == URL_B
    path.write_text('[store]\n# the team server\nurl = "falkordb://x:1/g"\n')  # a person's own table
    with pytest.raises(UsageError, match=r"its \[store\] table \(line 1\) holds more than url"):
        team.configure(tmp_path, URL_B)
    assert path.read_text() == '[store]\n# the team server\nurl = "falkordb://x:1/g"\n'

