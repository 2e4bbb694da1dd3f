"""What w-fsec6 left of QA qa5's secrets, each fixed by a rule or a limit in rules/secrets.toml, and the near misses
each must keep. Values are fake, made to the published shapes.
- A Google Cloud service account's key file: its `private_key_id` (40 hex digits) names the key, as its
  `private_key` is the key; both go, in the file's JSON (indented, one line, escaped in a string) and in YAML.
- A header written with a blank before its colon (`X-Honeycomb-Team : <key>`, as some tools print a request's
  headers): read as the header it is, as without the blank.
- A CamelCase word with digits alone on the line after a whole token (`Base64Encoder2`, `Windows11Pro`) is a word,
  not the token's wrapped tail: it is kept, and a tail that reads as a key is still joined to its token."""

from __future__ import annotations

import json

import pytest

from kg.redaction.redact import load_default
from kg.redaction.wrapped import wordlike

KEY_ID = "5e8d3c9f0a7b21e6d4c38f1b9a0e7d2c6b5a4f39"
BLOCK = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
ACCOUNT = {"type": "service_account", "project_id": "demo-proj-4821", "private_key_id": KEY_ID,
           "private_key": BLOCK, "client_email": "ci@demo-proj-4821.iam.gserviceaccount.com",
           "client_id": "104729384756102938475"}


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text", [
    json.dumps(ACCOUNT, indent=2),
    json.dumps(ACCOUNT),
    json.dumps({"credentials": json.dumps(ACCOUNT)}),  # the key file as a string inside another JSON
    f"private_key_id: {KEY_ID}\nprivate_key: |\n  {BLOCK}",
    f"PRIVATE_KEY_ID={KEY_ID.upper()}",
])
def test_a_service_account_s_private_key_id_is_redacted_with_its_key(text):
    out = redact(text)
    assert KEY_ID not in out.lower() and KEY_ID[:12] not in out.lower(), out
    assert out.count("[REDACTED:private_key_id]") == 1, out
    assert ("demo-proj-4821" in out) == ("demo-proj-4821" in text), out  # the rest of the file is kept
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    f"key_id: {KEY_ID}",  # another key's id: no service account's name says it is one
    f"commit {KEY_ID}",
    '"private_key_id": "<your key id>"',
    "private_key_id: 5e8d3c9f",  # too short for a key file's id
])
def test_a_hex_id_under_another_name_or_no_key_id_is_kept(text):
    assert redact(text) == text


TEAM = "UE4M0enhJOZ9eEwrf8Fzge"
HEX32 = "9f86d081884c7d659a2feaa0c55ad015"


@pytest.mark.parametrize("text, secret", [
    (f"X-Honeycomb-Team : {TEAM}", TEAM),
    (f"X-Honeycomb-Team : {HEX32}", HEX32),
    (f"X-Honeycomb-Team\t: {HEX32}", HEX32),
    ("X-Mine-Key : AAAAbbbb1111CCCCdddd", "AAAAbbbb1111CCCCdddd"),
    (f"Private-Token :{TEAM}", TEAM),
    (f"headers:\n  Circle-Token : {HEX32}\n  Accept: */*", HEX32),
    ("lorem ipsum " * 500 + f"\nX-Honeycomb-Team\t: {HEX32}", HEX32),  # a long text finds keywords by its tries
])
def test_a_key_header_with_a_blank_before_its_colon_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:10] not in out, out
    assert out.split(" :")[0].split("\t:")[0] == text.split(" :")[0].split("\t:")[0]  # the header's name is kept
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "X-Team : engineering", "X-Request-Key : user-42", "X-Cache-Key : page-home-v2",
    "Idempotency-Key : order-2024-10-11", "X-GitHub-Team : platform-infra", "sort-key : lastModified",
])
def test_a_header_with_a_blank_before_its_colon_and_no_key_is_kept(text):
    assert redact(text) == text


GITHUB = "ghp_m2QFxRDKbalaDQylFYcjiIECcbqzXlZB81Yr"
OPENAI = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34Yz56Ab78Cd90Ef12Gh34"


@pytest.mark.parametrize("word", ["Base64Encoder2", "Windows11Pro", "Python3Script", "UserProfileCard2024",
                                  "macOS14Sonoma", "Sha256Digest"])
@pytest.mark.parametrize("layout", ["GITHUB_TOKEN={token}\n{word}\n", "token: {token}\n  {word}", "{token} \\\n{word}"])
def test_a_camelcase_word_alone_on_the_line_after_a_whole_token_is_kept(word, layout):
    text = layout.format(token=GITHUB, word=word)
    out = redact(text)
    assert GITHUB not in out and word in out, out
    assert out.count("[REDACTED:github_token]") == 1, out


@pytest.mark.parametrize("text, pieces", [
    (f"OPENAI_API_KEY={OPENAI[:40]}\n    {OPENAI[40:]}\n", 2),
    (f"OPENAI_API_KEY={OPENAI[:40]}\n{OPENAI[40:54]}\n", 2),  # a short last piece with digits: no word
    (f"token:\n  {GITHUB[:14]}\n  {GITHUB[14:28]}\n  {GITHUB[28:]}\nWindows11Pro", 3),
])
def test_a_tail_that_reads_as_a_key_is_still_joined_after_a_whole_token(text, pieces):
    out = redact(text)
    assert not [key[at:at + 8] for key in (GITHUB, OPENAI) for at in range(len(key) - 7) if key[at:at + 8] in out]
    assert out.count("[REDACTED:") == pieces, out


@pytest.mark.parametrize("piece, expected", [
    ("Base64Encoder2", True), ("Windows11Pro", True), ("XMLParser2", True), ("MyClass2Test", True),
    ("laDQylFYcjiIEC", False), ("FYcjiIECcbqzXlZB81Yr", False), ("a8f3k2m9x0", False), ("Ab12Cd34Ef56Gh78", False),
    ("ghp_m2QFxRDKb", False),
])
def test_a_word_is_told_from_a_piece_of_a_key(piece, expected):
    assert wordlike(piece, load_default().settings.wrapped) is expected


# Any run of blanks or tabs before the colon (headers aligned in a column, as some tools print them), or `=`: every
# header-style rule reads the header as it does with none (key headers, Authorization of any scheme, Proxy-
# Authorization, Basic, curl -H, Cookie).
@pytest.mark.parametrize("text, secret", [
    (f"X-Honeycomb-Team  : {TEAM}", TEAM),
    (f"X-Honeycomb-Team \t : {HEX32}", HEX32),
    (f"X-Honeycomb-Team= {HEX32}", HEX32),
    (f"Circle-Token          : {TEAM}", TEAM),
    ("X-Api-Key          : AAAAbbbb1111CCCCdddd", "AAAAbbbb1111CCCCdddd"),
    ("X-Api-Key  : AAAAbbbb1111CCCCdddd", "AAAAbbbb1111CCCCdddd"),
    ("Api-Key\t\t: AAAAbbbb1111CCCCdddd", "AAAAbbbb1111CCCCdddd"),
    (f"Authorization          : {TEAM}", TEAM),
    ("Authorization            : Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("Proxy-Authorization: Bearer abc123def456ghi", "abc123def456ghi"),
    ("Proxy-Authorization   = Token abc123def456ghi", "abc123def456ghi"),
    (f"curl -H 'X-Mine-Token     : {TEAM}' https://api.example.com", TEAM),
    ("Cookie  : theme=dark; connect.sid=s%3AAbCdEf12345678", "AbCdEf12345678"),
    ("Cookie\t: sessionid=Zx9Kq2Lm8Np4Rt7", "Zx9Kq2Lm8Np4Rt7"),
    ("lorem ipsum " * 500 + f"\nX-Honeycomb-Team      : {HEX32}", HEX32),  # a long text finds keywords by its tries
])
def test_a_header_with_any_run_of_blanks_before_its_colon_or_equals_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:10] not in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "X-Team     : engineering", "X-Request-Key\t\t: user-42", "Idempotency-Key = order-2024-10-11",
    "Cookie    : theme=dark; lang=en", "sort-key   : lastModified",
])
def test_a_header_with_blanks_before_its_colon_and_no_key_is_kept(text):
    assert redact(text) == text
