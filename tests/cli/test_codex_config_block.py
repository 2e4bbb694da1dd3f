"""`kg install codex` writes `.codex/config.toml` through the one block editor, through the real CLI: a person's
text outside kg's blocks is kept byte for byte, a line they add inside a block is flagged and kept (by install
and uninstall alike), installing again changes nothing, and an older kg's markers become the blocks."""

from __future__ import annotations

import tomllib

MINE = 'model = "o3"\n\n[features]\nweb_search_request = true\n\n[profiles.deep]\nmodel = "o3-pro"\n'


def _config(ws):
    return ws.root / ".codex" / "config.toml"


def _install(run_kg, what: str = "install"):
    res = run_kg(f"{what} codex --json")
    assert res.exit_code == 0, res.stderr
    return res.json


def test_install_again_changes_nothing_and_uninstall_gives_the_bytes_back(ws, run_kg):
    _config(ws).parent.mkdir()
    _config(ws).write_bytes(MINE.encode())
    _install(run_kg)
    first = _config(ws).read_bytes()
    data = tomllib.loads(first.decode())
    assert data["features"] == {"web_search_request": True, "hooks": True} and data["profiles"]["deep"]
    assert data["mcp_servers"]["kaizen-kg"]["args"][-1] == "mcp"
    assert first.decode().count("# kaizen-kg:begin ") == 2 and first.startswith(b'model = "o3"\n\n[features]\n')
    again = _install(run_kg)
    assert _config(ws).read_bytes() == first
    assert {c["action"] for c in again["changes"] if c["path"] == ".codex/config.toml"} == {"unchanged"}
    _install(run_kg, "uninstall")
    assert _config(ws).read_bytes() == MINE.encode()


def test_a_line_added_inside_a_block_is_flagged_and_kept_and_text_outside_survives(ws, run_kg):
    _config(ws).parent.mkdir()
    _config(ws).write_bytes(MINE.encode())
    _install(run_kg)
    text = _config(ws).read_text()
    edited = text.replace("hooks = true\n", "hooks = true\nmulti_agent = true\n", 1) + "# a note of mine\n"
    _config(ws).write_text(edited)
    res = _install(run_kg)
    assert any("codex-hooks" in n and "a human edited inside the kg block" in n for n in res["notes"])
    assert _config(ws).read_text() == edited
    # uninstall takes out only the block nobody edited: the person's line, their note and the rest stay
    res = _install(run_kg, "uninstall")
    assert any("a human edited inside the kg block" in n for n in res["notes"])
    left = _config(ws).read_text()
    assert "multi_agent = true\n" in left and left.endswith("# a note of mine\n")
    assert "[mcp_servers.kaizen-kg]" not in left and "codex-mcp" not in left
    assert left.replace("# kaizen-kg:begin codex-hooks\nhooks = true\nmulti_agent = true\n"
                        "# kaizen-kg:end codex-hooks\n", "multi_agent = true\n") == (
        MINE.replace("[features]\n", "[features]\nmulti_agent = true\n") + "# a note of mine\n")


def test_a_config_kg_made_goes_with_uninstall_and_damaged_markers_are_left_alone(ws, run_kg):
    _install(run_kg)
    made = _config(ws).read_text()
    assert tomllib.loads(made)["features"] == {"hooks": True}
    _config(ws).write_text(made.replace("# kaizen-kg:end codex-mcp\n", ""))
    res = _install(run_kg)
    assert any("codex-mcp" in n and "damaged" in n for n in res["notes"])
    assert _config(ws).read_text() == made.replace("# kaizen-kg:end codex-mcp\n", "")
    _config(ws).write_text(made)
    _install(run_kg, "uninstall")
    assert not _config(ws).exists()


def test_an_older_kgs_block_becomes_the_editors_blocks(ws, run_kg):
    from kg.runtimes.codex_toml import LEGACY_BEGIN, LEGACY_END

    _config(ws).parent.mkdir()
    _config(ws).write_text('[features]\nhooks = true  # kaizen-kg\nweb = true\n\n'
                           f'{LEGACY_BEGIN}\n[mcp_servers.kaizen-kg]\ncommand = "kg"\nargs = ["mcp"]\n{LEGACY_END}\n')
    _install(run_kg)
    text = _config(ws).read_text()
    assert LEGACY_BEGIN not in text and "true  # kaizen-kg" not in text
    assert tomllib.loads(text)["features"] == {"hooks": True, "web": True}
    _install(run_kg, "uninstall")
    assert _config(ws).read_text() == "[features]\nweb = true\n"


def test_a_table_header_the_person_put_on_kg_s_begin_marker_line_is_read_as_theirs(ws, run_kg):
    """kg judged what to write on the file with its blocks cut out as whole lines: `[features]` on the begin
    marker's line went with it, so kg thought the file had no [features], wrote a second one into its block, and
    the install refused the file as invalid TOML (exit 2). The person's text on a marker line is theirs, as every
    block removal keeps it: the block stays as it is and the install goes through."""
    _config(ws).parent.mkdir()
    mine = 'model = "o3"\n\n[features] # kaizen-kg:begin codex-hooks\nhooks = true\n# kaizen-kg:end codex-hooks\n'
    _config(ws).write_bytes(mine.encode())
    res = run_kg("install codex --json")
    assert res.exit_code == 0, res.stderr
    text = _config(ws).read_text()
    assert text.startswith(mine) and tomllib.loads(text)["features"] == {"hooks": True}, text
