"""QA qa5: a token cut in two kept its second part. A GitHub token written in a Markdown table with its tail in the
next row's cell, and one hard-wrapped after a shell's `\\`, were each too short for the token's rule (or the first
part went to `export NAME=`'s rule), and the rest of the key was stored. A known token's rule is tried again on the
token joined with the whole lines (or cells) that continue it (`kg.redaction.wrapped`). Near misses: a word, a short
commit or another row's value after a token, a package list, a name that opens like a token. Values are fake."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default
from kg.redaction.wrapped import keylike

GITHUB = "ghp_m2QFxRDKbalaDQylFYcjiIECcbqzXlZB81Yr"
OPENAI = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34Yz56Ab78Cd90Ef12Gh34"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, pieces", [
    (f"| name | value |\n|---|---|\n| GITHUB_TOKEN | {GITHUB[:20]} |\n| | {GITHUB[20:]} |", 2),
    (f"| name | value | note |\n|---|---|---|\n| GITHUB_TOKEN | {GITHUB[:20]} | ci |\n| | {GITHUB[20:]} | |", 2),
    (f"export GITHUB_TOKEN={GITHUB[:22]}\\\n{GITHUB[22:]}", 2),
    (f"token:\n  {GITHUB[:14]}\n  {GITHUB[14:28]}\n  {GITHUB[28:]}\nnext line", 3),
    (f"OPENAI_API_KEY={OPENAI[:40]}\n    {OPENAI[40:]}\n", 2),  # the first line alone is a whole key already
    (f"> key {OPENAI[:30]}\n> {OPENAI[30:]}", 2),
    (f'"{GITHUB[:20]}\n  {GITHUB[20:]}"', 2),
])
def test_a_token_cut_over_lines_or_cells_loses_every_piece(text, pieces):
    out = redact(text)
    assert not [key[at:at + 8] for key in (GITHUB, OPENAI) for at in range(len(key) - 7) if key[at:at + 8] in out]
    assert out.count("[REDACTED:") == pieces, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    f"GITHUB_TOKEN={GITHUB}\ndone\n",
    f"GITHUB_TOKEN={GITHUB}\n3f2a9c1\n",  # a short commit on the next line
    f"| a | {GITHUB} |\n| b | c1d2e3f4G5 |",  # the next row's value: its first cell is not empty
    "pip install\nsk-video\nnumpy\nscipy\nmatplotlib3\n",
    "see sk-learn\nmodel_selection_2024_v2\n",
    "a task-\nforce2024abcdefghijklm",
])
def test_what_follows_a_token_or_a_name_like_one_is_kept(text):
    out = redact(text)
    kept = [line for line in text.splitlines() if GITHUB not in line]
    assert all(line in out for line in kept), out


@pytest.mark.parametrize("piece, expected", [
    ("laDQylFYcjiIEC", True), ("a8f3k2m9x0", True), ("FYcjiIECcbqzXlZB81Yr", True),
    ("Deploy", False), ("python311", False), ("matplotlib3", False), ("3f2a9c1e", False), ("deadbeef00", False),
    ("model_selection_2024_v2", False),
])
def test_a_piece_of_a_key_is_told_from_a_word(piece, expected):
    assert keylike(piece, load_default().settings.wrapped) is expected
