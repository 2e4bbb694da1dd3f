"""QA qa5's last formats that reached storage, each fixed by a general rule rather than a provider's name, and the
near misses each must keep. Values are fake, made to the published shapes.
- A key as the only argument of a class whose name says nothing of a client (`Virustotal("<64 hex>")`,
  `Shodan("<32 letters and digits>")`): an id's, a hash's, a path's or a version's class keeps its argument.
- A key under a header whose name says team, key or token, whatever its vendor (`X-Honeycomb-Team`, `Private-Token`);
  a GCS HMAC access id and its secret; a token hex-encoded (the base64 rule reads a hex run as hex); the API key
  `heroku auth:token` prints (a UUID elsewhere is an id); a password said as how to log in ("log in as root with X",
  "use X as the password"), and the same in Chinese and German, which the earlier rules say."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

HEX64 = "df50e6b2ad4adc7e897a1f86293f9ff10e122a075f18a7bf45850efc41fc9326"
ALNUM32 = "Xk9mP2vQ7rT4wY8zA3bC6dE1fG5hJ0kL"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    (f'vt = virustotal_python.Virustotal("{HEX64}")', HEX64),
    (f'api = shodan.Shodan("{ALNUM32}")', ALNUM32),
    (f"const c = new Foo('{ALNUM32}');", ALNUM32),
    (f'client = Vt.new("{HEX64}")', HEX64),
])
def test_a_key_as_a_class_s_only_argument_is_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:12] not in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    f'uuid.UUID("{HEX64[:32]}")', 'Path("/usr/local/lib")', 'Version("1.2.3")', f'sha256("{HEX64}")',
    f'Hash("{HEX64}")', f'Commit("{HEX64[:40]}")', f'ObjectId("{HEX64[:24]}")', f'PublicKey("{ALNUM32}")',
    f'HexBytes("{HEX64}")', f'Digest("{HEX64}")', f'TxHash("{HEX64}")', f'PlayerId("{ALNUM32}")',
    f'assert_eq("{HEX64}")', 'Text("HelloWorld")', 'Component("UserProfileCard2024")',
])
def test_an_id_a_hash_a_path_or_a_version_as_a_class_s_argument_is_kept(text):
    assert redact(text) == text


PW = "h2AZTeOkgYBExVAY!9"


@pytest.mark.parametrize("text, secret", [
    ('headers: {"X-Honeycomb-Team": "UE4M0enhJOZ9eEwrf8Fzge"}', "UE4M0enhJOZ9eEwrf8Fzge"),
    ("X-Honeycomb-Team: UE4M0enhJOZ9eEwrf8Fzge", "UE4M0enhJOZ9eEwrf8Fzge"),
    ('curl -H "Private-Token: Ab3dEf6hIj9kLm2nOp5q" https://gitlab.example.com', "Ab3dEf6hIj9kLm2nOp5q"),
    ("Circle-Token: 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef01234567"),
    ("gsutil hmac create -> Access ID: GOOG1E93VZ6U4XF97GU567096HMKVHXNY8DA8PHP94ESYYADB64X5Z5ESQJCZ",
     "GOOG1E93VZ6U4XF97GU567096HMKVHXNY8DA8PHP94ESYYADB64X5Z5ESQJCZ"),
    ("Access ID:   GOOG1E93VZ6U4XF97GU567096HMKVHXNY8DA8PHP94ESYYADB64X5Z5ESQJCZ\n"
     "Secret:      bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ", "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ"),
    ("payload hex: 414b49413445544b364b554a55443038454b3955", "414b49413445544b364b554a55443038454b3955"),
    ("payload hex: 414B49413445544B364B554A55443038454B3955", "414B49413445544B364B554A55443038454B3955"),
    ("heroku auth:token -> 840409f0-23b0-4481-a7c4-c9432b0e8155", "840409f0-23b0-4481-a7c4-c9432b0e8155"),
    ("$ heroku auth:token\n ›   Warning: token will expire 2026-01-01\n840409f0-23b0-4481-a7c4-c9432b0e8155",
     "840409f0-23b0-4481-a7c4-c9432b0e8155"),
    (f"log in as root with {PW}", PW),
    ("ssh to db01 as deploy with password Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("log in as admin with the password Spr1ngTime", "Spr1ngTime"),
    ("use hunter2Pass! as the password", "hunter2Pass!"),
    ("try Winter2024 as the admin password", "Winter2024"),
    (f"the admin password is {PW} for now", PW),
    (f"用 root 登录，密码是 {PW}", PW),
    (f"Das Passwort ist {PW}", PW),
    (f"Melde dich als root mit dem Passwort {PW} an", PW),
])
def test_a_team_header_a_gcs_key_a_hex_token_heroku_s_key_and_a_login_s_password_are_redacted(text, secret):
    out = redact(text)
    assert secret not in out and secret[:12] not in out, out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "X-Team: engineering", "X-Request-Key: user-42", "X-Cache-Key: page-home-v2", "Idempotency-Key: order-2024-10-11",
    "X-GitHub-Team: platform-infra", "GOOGLE_APPLICATION_CREDENTIALS=/path/x.json", "the GOOGLEBOT crawler",
    "GOOG stock rose 3%", "request 840409f0-23b0-4481-a7c4-c9432b0e8155 failed",
    "echo 68656c6c6f20776f726c642c2074686973206973206a7573742074657874 | xxd -r -p",  # hex of plain text
    "commit 3f2a9c1e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a",
    f"sha256 {HEX64}", "log in as root with sudo", "use bcrypt as the password hash", "use it as the password",
    "sign in as alice using GitHub",
])
def test_a_header_a_uuid_a_hash_or_a_login_without_a_secret_is_kept(text):
    assert redact(text) == text
