"""The QA pass of 2026-12-04: a key is context for its value (`Redactor.redact_pair`), a list of values under a
secret-named key loses every value, and `secret_key_base:` hex and any command's `login -p` are secrets. Each with
its near miss, which must survive."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("key, value", [("db_password", "hunter2secretpw"), ("github_token", "Gh0stTokenValue77"),
                                        ("aws_secret_access_key", "wJalrXUtnFEMIK7MDENGbPxRfiCYzz"),
                                        ("db.password", "two words")])
def test_a_secret_named_keys_value_is_redacted_as_key_equals_value_would_be(key, value):
    name, red = load_default().redact_pair(key, value)
    assert (name.text, red.text, red.kinds) == (key, "[REDACTED:env_secret]", ("env_secret",))


@pytest.mark.parametrize("key, value", [("answer_style", "short and direct"), ("theme", "dark"),
                                        ("api_token", "your-token-here"), ("db_password", "$DB_PASSWORD"),
                                        ("password_policy", "at least twelve characters and one symbol please")])
def test_other_pairs_and_placeholders_are_kept(key, value):
    name, red = load_default().redact_pair(key, value)
    assert (name.text, red.text, red.kinds) == (key, value, ())


def test_a_key_that_is_a_secret_is_redacted_and_so_is_its_echo_in_the_value():
    token = "ghp_R4nd0mT0k3nV4lu3xxAbCdEfGhIjKlMnOpQr12"
    name, red = load_default().redact_pair(token, f"same as {token}")
    assert (name.text, red.text) == ("[REDACTED:github_token]", "same as [REDACTED:github_token]")


@pytest.mark.parametrize("text, expected", [
    ('API_KEYS = ["Qm9vYXJkZjE2YmY4MGFiZ", "Wm9vZGFiY2RlZjEyMGNkX"]', "API_KEYS = [[REDACTED:secret_list]]"),
    ('{"api_keys": ["Qm9vYXJkZjE2YmY4MGFiZ"]}', '{"api_keys": [[REDACTED:secret_list]]}'),
    ("SUPER_SECRET_VALUES = 'a1b2c3d4e5f6a7b8c9d0', '9f8e7d6c5b4a39281706'",
     "SUPER_SECRET_VALUES = [REDACTED:secret_list]"),
    ("secrets:\n  - Ab9Cd8Ef7Gh6Ij5Kl4Mn\n  - Zx1Yw2Vu3Ts4Rq5Po6Nm\nretries: 3",
     "secrets:\n[REDACTED:secret_list]\nretries: 3"),
    ("secret_key_base: 9f8e7d6c5b4a39281706f5e4d3c2b1a0e9d8c7b6a5f4e3d2",
     "secret_key_base: [REDACTED:high_entropy_secret]"),
    ("az login -u app -p Az9Pr1nc1palS3cr3t", "az login -u app -p [REDACTED:cli_credential]"),
    ("oc login https://api.c1:6443 -u dev -p 0cPassw0rdX",
     "oc login https://api.c1:6443 -u dev -p [REDACTED:cli_credential]"),
])
def test_lists_rails_hex_and_login_passwords_are_redacted(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    'keywords = ["pass", "pwd", "secret", "token"]',   # names, not values
    'tokens = ["abc", "def"]',
    "secrets:\n  - name: foo\n    value: bar\n",
    "tokens: []",
    "ssh -l login -p 22 host",                          # a port
    "docker login --password-stdin registry.example.com",
    "commit_token_sha: d41d8cd98f00b204e9800998ecf8427e",  # a digest's name
])
def test_near_misses_survive(text):
    assert redact(text) == text


# The QA pass of 2026-12-05: a list inside a quoted shell string kept every value but the first (the list rule wanted
# a bracket or the line's end after the last value, not the string's closing quote); `KEYS = [...]` of hex values was
# kept whole (no secret word before `keys`); an INI value continued on indented lines was kept whole.
@pytest.mark.parametrize("text, expected", [
    ("""python -c "SUPER_SECRET_VALUES = '60b725f10c9c85c70d97880dfe8191b3', '3b5d5c3712955042212316173ccf37be'\"""",
     'python -c "SUPER_SECRET_VALUES = [REDACTED:secret_list]"'),
    ("""deploy --conf 'SUPER_SECRET_VALUES = "60b725f10c9c85c70d97880dfe8191b3", "3b5d5c3712955042212316173ccf37be"'""",
     "deploy --conf 'SUPER_SECRET_VALUES = [REDACTED:secret_list]'"),
    ("""python -c "TOKENS = 'Ab9Cd8Ef7Gh6Ij5', 'Zx1Yw2Vu3Ts4Rq5'; print(TOKENS)\"""",
     'python -c "TOKENS = [REDACTED:secret_list]; print(TOKENS)"'),
    ("KEYS = ['9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'a1b2c3d4e5f60718293a4b5c6d7e8f90']",
     "KEYS = [[REDACTED:secret_list]]"),
    ('ssh_keys: ("Qm9vYXJkZjE2YmY4MGFiZ", "Wm9vZGFiY2RlZjEyMGNkX")', "ssh_keys: ([REDACTED:secret_list])"),
    ("[creds]\nsecrets_for_ops =\n    hunter2\n    password123\n    BEEF0123456789a\nretries = 3\n",
     "[creds]\nsecrets_for_ops =\n[REDACTED:secret_list]\nretries = 3\n"),
    ("[db]\r\ndb_password =\r\n\tletmein\r\nhost = db1\r\n",
     "[db]\ndb_password =\n[REDACTED:secret_list]\nhost = db1\n"),  # read without the \r `clean` drops
])
def test_quoted_lists_keys_lists_and_continued_ini_values_lose_every_value(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "keys = ['name', 'age']",                                   # dictionary keys, words
    'KEYS = ["user_id", "created_at", "ItemId"]',               # identifiers
    'sort_keys = ("created_at", "id2024")',
    'PUBLIC_KEYS = ["Qm9vYXJkZjE2YmY4MGFiZ", "Wm9vZGFiY2RlZjEyMGNkX"]',
    'd.keys() == ["a1b2c3d4e5f6a7b8c9"]',
    """{"cmd": "echo 'a'", "api_key": "v", "name": "x"}""",     # a JSON object's pairs are no tuple
    "password_file =\n    /etc/app/pw\n",                       # a file's name, not its content
    "token = get_token(\n    scope)\n",                         # code goes on with a call's arguments
    "secrets:\n  db: vault\n",                                  # YAML nests under `key:`
    "  secret =\n    indented key, not at its line's start\n",
])
def test_near_misses_of_the_new_list_forms_survive(text):
    assert redact(text) == text


# Review of the 2026-12-05 list rules: a list in a shell string whose closing quote is escaped or followed by a
# redirect or a backtick kept its last value; `keys` after any `_` took cache_keys/primary_keys and git's SHAs; the
# INI continuation rule blanked settings about a secret (token_scopes, auth_token_ttl, password-file).
_HEX = "'60b725f10c9c85c70d97880dfe8191b3', '3b5d5c3712955042212316173ccf37be'"
_SHAS = "'14f26b946b5498959eacaec1a7a7cfc3d7fdd44e', '755e9df1c752c574624f49aea52bbaa68baf6394'"


@pytest.mark.parametrize("text, expected", [
    (f'bash -c "python -c \\"SUPER_SECRET_VALUES = {_HEX}\\""',
     'bash -c "python -c \\"SUPER_SECRET_VALUES = [REDACTED:secret_list]\\""'),
    (f'python -c "SECRETS = {_HEX}">out.txt', 'python -c "SECRETS = [REDACTED:secret_list]">out.txt'),
    (f'X=`python -c "SECRETS = {_HEX}"`', 'X=`python -c "SECRETS = [REDACTED:secret_list]"`'),
])
def test_lists_in_nested_or_redirected_shell_strings_lose_every_value(text, expected):
    assert redact(text) == expected


# (taken before too: the guards of what the narrower rules above must still take)
@pytest.mark.parametrize("text, expected", [
    (f"SSH_KEYS = [{_SHAS}]", "SSH_KEYS = [[REDACTED:secret_list]]"),        # a secret word names the list
    ("deploy_signing-keys: ('Qm9vYXJkZjE2YmY4MGFiZ', 'Wm9vZGFiY2RlZjEyMGNkX')",
     "deploy_signing-keys: ([REDACTED:secret_list])"),
    ("[a]\npassword =\n    123456\n    s3cr3t\n", "[a]\npassword =\n[REDACTED:secret_list]\n"),
])
def test_secret_named_keys_lists_and_a_password_s_continuation_still_lose_every_value(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "cache_keys = ['9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'a1b2c3d4e5f60718293a4b5c6d7e8f90']",
    "primary_keys = ['9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'a1b2c3d4e5f60718293a4b5c6d7e8f90']",
    "foreign-keys: ('9f8e7d6c5b4a39281706f5e4d3c2b1a0', 'a1b2c3d4e5f60718293a4b5c6d7e8f90')",
    f"keys = [{_SHAS}]",                                                   # commit hashes
    "[a]\ntoken_scopes =\n    read\n    write\n",
    "[a]\ntokenizer_kwargs =\n    padding\n    truncation\n",
    "[a]\nauth_token_ttl =\n    3600\n",
    "[a]\npassword_hash =\n    $2b$12$abcdefghijklmnopqrstuv\n",
    "[a]\npassword-file =\n    /etc/pw\n",
    "[a]\nsecret.path =\n    /etc/app/secret\n",
    "[a]\nmax_tokens =\n    4096\n",
])
def test_data_under_key_or_secret_setting_names_survive(text):
    assert redact(text) == text


def test_a_list_in_a_shell_string_that_goes_on_after_it_loses_every_value():
    """`ssh host "PASSWORDS='a','b' ./run"`: the string closes after more words, not right after the list."""
    assert (redact("""ssh host "PASSWORDS='p4ssw0rd123','s3cr3tpass99' ./run\"""")
            == 'ssh host "PASSWORDS=[REDACTED:secret_list] ./run"')
