"""A password in a Markdown table's column whose header names it (`| Role | Email | Password |`, then a row per
account), as agents list the accounts they made: every other rule saw only `| Admin | a@b.io | Adm1n!2024 |`, a row
with no label in it, and kept the password. Each case with its near misses, which must survive."""

from __future__ import annotations

import pytest

from kg.redaction.redact import Redactor, load_default
from kg.redaction.rules import SecretRulesError

ACCOUNTS = """Seeded these test accounts:

| Role | Email | Password |
|------|-------|----------|
| Admin | admin@shop.test | Adm1n!2024 |
| Editor | ed@shop.test | `edit0rPass` |
| Guest | guest@shop.test | auto-generated |
"""


def redact(text: str) -> str:
    return load_default().redact(text).text


def test_each_accounts_password_under_its_header_is_redacted_and_the_rest_kept():
    out = redact(ACCOUNTS)
    assert "Adm1n!2024" not in out and "edit0rPass" not in out
    assert "| Admin | admin@shop.test | [REDACTED:password_in_table] |" in out
    assert "| Editor | ed@shop.test | `[REDACTED:password_in_table]` |" in out
    assert "| Guest | guest@shop.test | auto-generated |" in out  # a note, not a value
    assert redact(out) == out  # idempotent: the markers are left as they are


@pytest.mark.parametrize("table, secret", [
    ("| User | Default Password |\n| :--- | :---: |\n| root | Toor#4711 |", "Toor#4711"),
    ("| service | DB_PASSWORD | port |\n|---|---|---|\n| api | s3cretDbPw | 5432 |", "s3cretDbPw"),
    ("Password | notes\n--- | ---\nS3cretVal | first login", "S3cretVal"),
    ("| Пользователь | Пароль |\n|---|---|\n| root | Qwerty123 |", "Qwerty123"),
    ("| 用户 | 密码 |\n|---|---|\n| admin | abc12345 |", "abc12345"),
    ("| a | password |\n|---|---|\n| x | Secr3t1 |\n\n| b | Password |\n|---|---|\n| y | 0ther9x! |", "0ther9x!"),
    ("| Role | Password |\r\n|---|---|\r\n| ops | CrLf2024pw |\r\n", "CrLf2024pw"),
    ("Role | Password\r\n--- | ---\r\nops | CrLf2024pw\r\n", "CrLf2024pw"),  # no outer pipes: the header ends in \r
    # outer pipes on the header and not on the rows, or the other way: a leading pipe opens no cell
    ("User | Password\n---|---\n| admin | Adm1nPass2024 |", "Adm1nPass2024"),
    ("Role | Email | Password\n| --- | --- | --- |\n| ops | o@x.io | 0psPass!24 |", "0psPass!24"),
    ("| User | Password |\n|---|---|\nadmin | Adm1nPass2024", "Adm1nPass2024"),
    # the short words for the column, and a user and its password in one cell
    ("| User | Pass |\n|---|---|\n| admin | Adm1nPass2024 |", "Adm1nPass2024"),
    ("| Host | PW |\n|---|---|\n| nas | Nas!2024x |", "Nas!2024x"),
    ("| Service | Password |\n|---|---|\n| ssh | deploy/`S3cure!pw` |", "S3cure!pw"),
])
def test_other_headers_layouts_and_languages(table, secret):
    assert secret not in redact(table)


@pytest.mark.parametrize("table", [
    "| Setting | Password |\n| --- | --- |\n| policy | min 8 chars |\n| hash | SHA-256 |\n| rotated | 2024-03-01 |",
    "| Test | Pass | Fail |\n|---|---|---|\n| unit | 12 | 0 |",  # pass/fail counts: `pass` names no password
    "| Field | Password |\n|---|---|\n| env | DB_PASSWORD |\n| type | string |",  # a variable's name, a type
    "| Password | x |\n| Abc12345 | y |",  # no separator line: not a table's header
    "| How to reset the password, step by step |\n|---|\n| Click Forgot1 |",  # a sentence, not a column's name
    "| Role | Password |\n|---|---|\n| admin | (set on first login) |\n| ops | user-defined |",
    # the reviewer's: results under a "Password reset" column (and echoed into the prose), a policy's value
    "everything passed in CI, which failed twice.\n\n| Browser | Login | Password reset |\n|---|---|---|\n"
    "| Chrome | PASSED | FAILED |",
    "| Setting | Password policy |\n|---|---|\n| rotation | 90days |\n\nRotate every 90days.",
    "| Item | Password |\n|---|---|\n| lib | passlib==1.7.4 |\n| file | src/auth/password.py |\n| cost | bcrypt(12) |"
    "\n| rule | minLength=8 |\n| state | PASSED |",
    "Password | User\n---|---\n| (none) | Adm1nUser2024 |",  # the row's first cell is the header's first
    # a Pass column of test results: counts, ratios, percentages, times
    "| Suite | Pass | Fail |\n|---|---|---|\n| unit | 12/12 | 0 |\n| e2e | 98.5% | 1.5% |\n| all | 100.0% | 0.00% |"
    "\n| time | 12.35s | 0.5s |\n| api | PASSED | - |",
    "| Model | Pass (%) |\n|---|---|\n| gpt-4o | 87.30% |",
    # a Credentials or Secret column that names where a secret is kept
    "| Service | Credentials | Secret |\n|---|---|---|\n| github | OAuth2 | yes |\n| db | vault kv/db | db-secret-v2 |"
    "\n| k8s | IAM role | app_secret_2024 |\n| api | `DB_PASSWORD` | secrets/api/key |\n| x | see 1Password | N/A |"
    "\n| z | admin / (set on first login) | none |\n| w | ~/.aws/credentials | kubernetes.io/basic-auth |"
    "\n| t | credentials.json | s3cretsFile.yaml |",
])
def test_near_misses_survive(table):
    assert redact(table) == table


@pytest.mark.parametrize("table, secret, kept", [
    ("| Service | Credentials |\n|---|---|\n| db | admin / Xk9pQ2wLz |", "Xk9pQ2wLz", "| db | admin / [REDACTED:"),
    ("| Service | Credentials |\n|---|---|\n| db | admin:Xk9pQ2wLz |", "Xk9pQ2wLz", "| db | admin:[REDACTED:"),
    ("| Login | Credentials |\n|---|---|\n| web | `admin / Hunt3r2go` |", "Hunt3r2go", "| web | `admin / [REDACTED:"),
    ("| Site | Username/Password |\n|---|---|\n| web | bob@x.io / W3bPass!x |", "W3bPass!x", "| web | bob@x.io / ["),
    ("| Service | DB Creds |\n|---|---|\n| cache | Rd5kLp9qTz |", "Rd5kLp9qTz", "| cache | [REDACTED:"),
    ("| Service | Secret |\n|---|---|\n| api | s3cr3tV4lue! |", "s3cr3tV4lue!", "| api | [REDACTED:"),
])
def test_credentials_and_secret_columns_lose_the_secret_and_keep_the_user(table, secret, kept):
    out = redact(table)
    assert secret not in out and kept in out
    assert redact(out) == out


def test_a_column_rule_needs_keywords_and_no_window():
    for rule in ({"kind": "x", "pattern": "a+", "column": True},
                 {"kind": "x", "pattern": "a+", "column": True, "keywords": ["pw"], "window": 10}):
        with pytest.raises(SecretRulesError, match="a 'column' rule needs 'keywords'"):
            Redactor.from_mapping({"rule": [rule]})
    with pytest.raises(SecretRulesError, match="'column' must be true or false"):
        Redactor.from_mapping({"rule": [{"kind": "x", "pattern": "a+", "column": "yes", "keywords": ["pw"]}]})
