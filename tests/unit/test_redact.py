"""Secret redaction (`kg.redaction.redact`) against hand-written cases and the real detect-secrets fixtures.

Coverage on `secrets/detect_secrets_test_data/baseline.file` (Yelp/detect-secrets test data, Apache-2.0):
29 findings, 25 whose secret still occurs in the current fixture files (4 are stale: the baseline predates
edits to config.yaml, each_secret.py and first_line.php). 20 of the 25 are redacted:

    Private Key               1/1   (claimed)
    Basic Auth Credentials    1/1   (claimed)
    Secret Keyword            5/5   (claimed)
    Base64 High Entropy       7/7   (claimed)
    Hex High Entropy          6/11  (not claimed: see EXCLUDED; the 6 sit under secret-ish keys)

`test_baseline_coverage` prints the same figures. The five hex strings left alone have no secret-ish key
(`len("012345678a")`, a bare "2b00...cf" line in a diff, the second value of a tuple, an ini continuation
line, `other_value_here: 1234567890a`); redacting context-free hex would also redact git SHAs and digests.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from kg.redaction.redact import Redacted, Redactor, SecretRulesError, entropy, load_default

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KG_SHARED_DATA") or REPO.parent / "shared" / "data")
FIXTURES = DATA / "secrets" / "detect_secrets_test_data"

CLAIMED = {"Private Key", "Basic Auth Credentials", "Secret Keyword", "Base64 High Entropy String"}
# Hex High Entropy String: hex with no secret-ish key is a git SHA, digest or checksum far more often than
# a secret, and agent transcripts are full of those. Hex under a secret-ish key is still redacted (and
# counted).
EXCLUDED = {"Hex High Entropy String"}


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return load_default()


# --- hand-written cases -------------------------------------------------------------------------------

POSITIVE = [
    ("aws key AKIA4LTM0Q8P5W07NT8V in env", "aws key [REDACTED:aws_access_key] in env"),
    ("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
     "export GITHUB_TOKEN=[REDACTED:github_token]"),
    ("use github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP now",
     "use [REDACTED:github_token] now"),
    ('OPENAI_API_KEY="sk-proj-abc123DEF456ghi789JKL012mno345"', 'OPENAI_API_KEY="[REDACTED:openai_key]"'),
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-xyz end", "key [REDACTED:anthropic_key] end"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED:slack_token]"),
    ("hook https://hooks.slack.com/services/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",
     "hook https://[REDACTED:slack_token]"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED:stripe_key]"),
    ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv and more", "maps [REDACTED:google_api_key] and more"),
    ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3",
     "jwt [REDACTED:jwt]"),
    ("db postgres://admin:s3cr3t-P4ss@db.example.com:5432/app",
     "db postgres://admin:[REDACTED:password_in_url]@db.example.com:5432/app"),
    ("redis://:hunter2@localhost:6379/0", "redis://:[REDACTED:password_in_url]@localhost:6379/0"),
    ("curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://api",
     "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' https://api"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic_auth]"),
    ("password=hunter2", "password=[REDACTED:password_assignment]"),
    ("db_password: 'letmein'", "db_password: '[REDACTED:password_assignment]'"),  # a password may be a word
    ("DB_PASSWORD: 'correct horse battery staple'", "DB_PASSWORD: '[REDACTED:password_assignment]'"),
    ('{"api_key": "abc123xyz", "name": "x"}', '{"api_key": "[REDACTED:password_assignment]", "name": "x"}'),
    ("passwd: s3cret!", "passwd: [REDACTED:password_assignment]"),
    ("[db]\npassword = swordfish\nhost = x", "[db]\npassword = [REDACTED:password_assignment]\nhost = x"),
    ("client_secret=Zx9-qq", "client_secret=[REDACTED:password_assignment]"),
    ("apiKey: 'k-123'", "apiKey: '[REDACTED:password_assignment]'"),
    ("auth_token := tok_9a8b7c", "auth_token := [REDACTED:password_assignment]"),
    ("数据库密码：Abc12345，请保密", "数据库密码：[REDACTED:password_assignment]，请保密"),
    ("密钥=sk9f8s7d6f", "密钥=[REDACTED:password_assignment]"),
    ("密码是 hunter2", "密码是 [REDACTED:password_assignment]"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]"),
    ("random_blob = 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg'",
     "random_blob = '[REDACTED:high_entropy_secret]'"),
    ("upload_auth:Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg", "upload_auth:[REDACTED:high_entropy_secret]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd+/==\n-----END RSA PRIVATE KEY-----\nafter",
     "[REDACTED:private_key]\nafter"),
    ("cut off: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
     "cut off: [REDACTED:private_key]"),
    ("travis:\n  secure: c2VjcmV0IGVuY3J5cHRlZCB2YWx1ZQ==", "travis:\n  secure: [REDACTED:ci_secure_value]"),
    # formats the realistic cases (tests/data/secrets) showed missing; values made up here
    ("pU3KGCUwux1tEyze1iN7LtkeP3IfyxlxF0SU1kk8nVw0YL4xIB5p/tqg7ui5mX9cfCmZ/a/lkyU81lSvTfrXFA==",
     "[REDACTED:azure_storage_key]"),
    ("der: MIIEpAIBAAKCAQEAjORS/6ilI8ihN5KXSc7Tvo/hBKqFYY/kv5ZJr3J1TWDtkwtDDb+xHKas1VOqg6YYZYn9ZhyiA4uoRgnatm end",
     "der: [REDACTED:private_key] end"),
    ("mc 67c76fb008f86bebb2737f6a6f0fb23c-us21 ok", "mc [REDACTED:mailchimp_api_key] ok"),
    ("pg AVNS_q8Wk2Zp4Rt6Yv1Xn3Mb", "pg [REDACTED:aiven_token]"),
    ("//npm.example.com/:_auth=dXNlcjpTM2NyM3RQNHNz", "//npm.example.com/:_auth=[REDACTED:npm_access_token]"),
    ("vault hvs.YTWmE4lBYOvfZ8UzDzV8fUkk", "vault [REDACTED:vault_service_token]"),
    ("curl -u \"ci-bot\":\"Qz7-pL2x9Kd\" https://x", "curl -u \"ci-bot\":\"[REDACTED:cli_credential]\" https://x"),
    ("curl --user ops:'Qz7pL2x9Kd' https://x", "curl --user ops:'[REDACTED:cli_credential]' https://x"),
    ("the password is YTWmE4lBYOvfZ8UzDzV8fUkkibjL", "the password is [REDACTED:password_assignment]"),
    ('os.getenv("API_TOKEN", "67c76fb0-08f8-6beb-b273-7f6a6f0fb23c")',
     'os.getenv("API_TOKEN", "[REDACTED:password_assignment]")'),
    ('apikey = @"Qz7pL2x9Kd!"', 'apikey = @"[REDACTED:password_assignment]"'),
    ("sl_pass=Qz7pL2x9Kd", "sl_pass=[REDACTED:password_assignment]"),
    # credentials as agents write them out: a label in Markdown emphasis, a value in backticks taken to its end
    ("- **Password:** `Zq81!wLm`", "- **Password:** `[REDACTED:password_in_prose]`"),
    ("**Password**: Tr0ub4dor&3 for staging", "**Password**: [REDACTED:password_in_prose] for staging"),
    ('the password is "hunter2!"', 'the password is "[REDACTED:password_in_prose]"'),
    ("la password è Vx93kqLp", "la password è [REDACTED:password_in_prose]"),
    ("Password root: `Pk20!vvQ`", "Password root: `[REDACTED:password_in_prose]`"),
    ('the password for staging is "Rr7#qwLm"', 'the password for staging is "[REDACTED:password_in_prose]"'),
    # labels in other languages, a capitalised one too (non-ASCII keywords are found in either case)
    ("Пароль: Gh47!bNq", "Пароль: [REDACTED:password_in_prose]"),
    ("**heslo:** `Lm20xQwe`", "**heslo:** `[REDACTED:password_in_prose]`"),
    ("パスワード: Xk29slaP", "パスワード: [REDACTED:password_in_prose]"),
    ("Wachtwoord = Rt5!kdPz", "Wachtwoord = [REDACTED:password_in_prose]"),
    ("Passwort: Gehe1mXy", "Passwort: [REDACTED:password_in_prose]"),  # a plain colon, where no assignment rule reads
    ("| Password | `Vv55!abc` |", "| Password | `[REDACTED:password_in_prose]` |"),  # a Markdown table's row
    ("пароль от базы: `Bb71!kzq`", "пароль от базы: `[REDACTED:password_in_prose]`"),
    ("パスワードは `Mq83nnXz` です", "パスワードは `[REDACTED:password_in_prose]` です"),
    ("the password is /Xk9#mQ2z", "the password is [REDACTED:password_in_prose]"),  # a leading / is no path
    # an unquoted value's closing "!" is the password's as often as the sentence's: it goes too
    ("the password is Summer2024!", "the password is [REDACTED:password_in_prose]"),
    ("пароль: Gh47bNq!!. ok", "пароль: [REDACTED:password_in_prose]. ok"),
    ("ŞİFRE: Gizli2024", "ŞİFRE: [REDACTED:password_in_prose]"),  # İ lowercases to two characters
    # the QA pass's: a table's unquoted cell (a letter and a digit), a service's settings as a table, Vietnamese
    ("| password | Zx81kqLm2 |", "| password | [REDACTED:password_assignment] |"),
    ("| DB_PASSWORD | Zx81kqLm2 |", "| DB_PASSWORD | [REDACTED:password_assignment] |"),
    ("mật khẩu: Zx81kqLm2", "mật khẩu: [REDACTED:password_in_prose]"),
]

NEGATIVE = [
    "**Validating Password Fields**\n\nI'll check the form.",  # a heading's closing emphasis is no value
    "heslo: nové", "Пароль: неверный", "**Password:** the one you set before",
    "| password | Required |", "| DB_PASSWORD | your database password |", "password - reset flow",
    "Password - min 8 chars", "the secret key is stored in vault", "| password | hashPassword() |",
    # a table's settings and a dash's prose (the reviewer's: each was redacted by the first table and dash forms)
    "| password | user-defined |", "| Password | bcrypt-hashed |", "| password | write-only | Required |",
    "| Password | SHA-256 |", "| token | 3600 |", "| token | 15m | x |", "| secret | base64-encoded |",
    "| password | min_length=8 |", "| DB_PASSWORD | (set in vault) |", "Password - user-defined, stored hashed",
    "Forgot password - self-service reset via e-mail", "Password — Argon2id", "secret key | per-tenant |",
    "The secret key - HMAC-SHA256 - is rotated weekly",
    "password reset link: `https://example.com/reset`", "password file: `/etc/shadow`",
    "password variable: `DB_PASSWORD`", "the password you chose is \"wrong\"",
    "Password field: `PasswordInput`", "the password policy is \"Min8Chars\"", "**Password:** `minLength: 8`",
    "- **Password:** `hashPassword()`", "Parola — OpenAI's 2023 release", "our password manager is `1Password`",
    # `word:VALUE` is not an assignment (YAML: one plain scalar), and a hidden form field's value is public
    "foo:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
    '<input type="hidden" name="state" value="7SWa-Fo1_hsC6oovfBsJFLGPUl2EhkSWPbJhWANwgaJWBDl1vxd9VNqXTN">',
    # a lone lowercase word under a key or token name is a placeholder or a setting; a password may be any word
    "apiKey: 'ollama',",
    'os.environ["OPENAI_API_KEY"] = "deadbeef"',
    "aws_access_key: AKIAIOSFODNN7EXAMPLE",  # AWS's documentation id
    "resolution: {integrity: "
    "sha512-pU3KGCUwux1tEyze1iN7LtkeP3IfyxlxF0SU1kk8nVw0YL4xIB5p/tqg7ui5mX9cfCmZ/a/lkyU81lSvTfrXFA==}",
    "cert MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UEChMJQmFsdGltb3Jl",
    "apiKey: 'dummy-proxy-key'",
    "env.API_KEY = apiKeyFromConfig;",
    "function login(credentials: LoginCredentials): Session {",
    'DEPLOY_SECRET_NAME = "PROD-DB-CREDS"',
    'ssh_public_key = "YTWmE4lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ7w"',
    "csrf_token=YTWmE4lBYOvfZ8UzDzV8fUkkibjL5DZPjN0MEQ7w",
    'db_password = "a-fake-password-1"',
    "all tests pass:\"}],",
    "xoxp-1234-1234-1234-abcdef",
    "the password reset token expired",
    "password reset flow is broken",
    "the token count was 512",
    "max_tokens: 512",
    "token_count = 3",
    "the token: it expires soon",
    "commit 3f2a9c1 and 3f2a9c1e5b7d9f0a1b2c3d4e5f60718293a4b5c6",
    '"id": "toolu_01ABCdefGHIjklMNOpqrSTU", "sessionId": "203db13e-70c7-462b-9a3d-bf32640cb0be"',
    '"tool_use_id": "toolu_01Hx3kQ9ZpL2vN8mR4tY6wB1", "requestId": "req_011CRd9Vb7Wm2sK4pQ8xZ3nL"',
    "uuid_should_be_ignored: '203db13e-70c7-462b-9a3d-bf32640cb0be'",
    "see /home/user/projects/kaizen2/src/kg/redact.py:42 and ./tests/unit/test_redact.py",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Use a bearer token for auth; basic auth is disabled.",
    "The password must be at least 12 characters; secret keys rotate monthly.",
    "task-1234567890abcdefghijk done, disk-usage-report-2024abc ok",
    "model: claude-sonnet-4-20250514",
    "secure: true",
    "password: ${DB_PASSWORD}",
    "password = os.environ['DB_PASSWORD']",
    "const csrfToken = document.querySelector(\"meta\")",
    "token: null, secret: false",
    "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcQx7kM2pL9vR4tZ8wB3nY6cF1hJ5sD0gK&usqp=CAU",
    "git push origin main; see https://github.com/Yelp/detect-secrets/blob/master/README.md",
    "AKIANOTREAL is too short, and so is 2short",
    "密码重置流程坏了",
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_redacts_secret_and_keeps_context(redactor: Redactor, text: str, expected: str) -> None:
    assert redactor.redact(text).text == expected


@pytest.mark.parametrize("text", NEGATIVE)
def test_leaves_ordinary_text_alone(redactor: Redactor, text: str) -> None:
    assert redactor.redact(text) == Redacted(text, ())


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_kinds_name_the_rule_never_the_secret(redactor: Redactor, text: str, expected: str) -> None:
    result = redactor.redact(text)
    kinds_in_text = tuple(sorted(set(re.findall(r"\[REDACTED:(\w+)\]", expected))))
    assert result.kinds == kinds_in_text
    removed = _removed_spans(text, result.text)
    assert removed and all(span not in kind for span in removed for kind in result.kinds)


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_redaction_is_idempotent(redactor: Redactor, text: str, expected: str) -> None:
    once = redactor.redact(text).text
    assert redactor.redact(once) == Redacted(once, ())


def test_specific_kind_wins_over_key_rule(redactor: Redactor) -> None:
    result = redactor.redact('api_key = "sk-proj-abc123DEF456ghi789JKL012mno345"')
    assert result.kinds == ("openai_key",)


def test_redact_many_handles_strings_lists_and_none(redactor: Redactor) -> None:
    fields = {"summary": "password=hunter2", "tags": ["ok", "AKIA4LTM0Q8P5W07NT8V"], "note": None, "x": "ok"}
    out, kinds = redactor.redact_many(fields)
    assert out == {"summary": "password=[REDACTED:password_assignment]",
                   "tags": ["ok", "[REDACTED:aws_access_key]"], "note": None, "x": "ok"}
    assert kinds == ("aws_access_key", "password_assignment")
    assert fields["summary"] == "password=hunter2"  # input untouched


def test_entropy_separates_keys_from_words() -> None:
    assert entropy("") == 0.0
    assert entropy("aaaa") == 0.0
    assert entropy("ToCynx5Se4e2PtoZxEhW7lUJcOX15c54") > 4.2 > entropy("claude-sonnet-4-20250514")


# --- rule validation -----------------------------------------------------------------------------------

BAD_RULES = [
    ({"rules": []}, "unknown key 'rules'"),
    ({"rule": {}}, "array of tables"),
    ({"rule": [{"kind": "x", "pattern": "a(", "group": 0}]}, "rule #1 (x): bad regex"),
    ({"rule": [{"kind": "x", "pattern": "a", "colour": "red"}]}, "rule #1 (x): unknown key 'colour'"),
    ({"rule": [{"kind": "x", "pattern": "a", "group": 2}]}, "rule #1 (x): group 2 does not exist"),
    ({"rule": [{"kind": "x", "pattern": "(?P<s>a)", "group": "t"}]}, "group 't' does not exist"),
    ({"rule": [{"kind": "Bad Kind", "pattern": "a"}]}, "rule #1: 'kind' must be a lowercase name"),
    ({"rule": [{"kind": "x", "pattern": "a*"}]}, "matches the empty string"),
    ({"rule": [{"kind": "x", "pattern": "a", "keywords": "a"}]}, "'keywords' must be a list"),
    ({"rule": [{"kind": "x", "pattern": "a", "min_entropy": -1}]}, "'min_entropy' must be a number"),
    ({"rule": [{"kind": "x", "pattern": "a", "before": "("}]}, "bad regex in 'before'"),
]


@pytest.mark.parametrize(("data", "message"), BAD_RULES)
def test_bad_rules_are_refused_with_file_rule_and_reason(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        Redactor.from_mapping(data, source="my/secrets.toml")
    assert str(info.value).startswith("my/secrets.toml: ")
    assert isinstance(info.value, SecretRulesError)


def test_packaged_rules_load_once() -> None:
    assert load_default() is load_default()
    assert {r.kind for r in load_default().rules} >= {
        "aws_access_key", "github_token", "openai_key", "anthropic_key", "slack_token", "stripe_key",
        "google_api_key", "private_key", "jwt", "password_in_url", "password_assignment", "bearer_token",
        "basic_auth", "high_entropy_secret"}


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_every_match_starts_at_a_keyword(redactor: Redactor, text: str, expected: str) -> None:
    """Rules without a `window` are tried only where a keyword begins; check the rules keep that promise (letters
    lowercased one for one, as `(?i)` compares them: İ is i)."""
    lowered = "".join(c.lower()[:1] for c in text)
    for rule in redactor.rules:
        if rule.keywords and not rule.window and not rule.column:  # (a column rule's pattern is tried on cells)
            for match in rule.pattern.finditer(text):
                assert lowered.startswith(rule.keywords, match.start()), (rule.kind, match.group(0))


# --- speed and adversarial input -----------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redact_cases import adversarial  # noqa: E402  (the bench times the same input)

ADVERSARIAL = adversarial()


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:16]))
def test_adversarial_input_is_redacted_idempotently(redactor: Redactor, text: str) -> None:
    # Every quantifier is bounded, so these finish (a catastrophic pattern would hang the run); speed is
    # measured by bench/redact_quality.py, not here.
    once = redactor.redact(text).text
    assert redactor.redact(once).text == once
    assert "[REDACTED:" not in text


# --- the real detect-secrets fixtures ------------------------------------------------------------------


def _findings() -> list[tuple[str, int, str, str | None]]:
    """(file, line, type, secret or None when the fixture no longer holds it) for every baseline finding."""
    baseline = json.loads((FIXTURES / "baseline.file").read_text(encoding="utf-8"))
    out = []
    for name, items in baseline["results"].items():
        lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
        for item in items:
            out.append((name, item["line_number"], item["type"],
                        _find_secret(lines, item["line_number"], item["hashed_secret"])))
    return out


def _find_secret(lines: list[str], number: int, hashed: str) -> str | None:
    """The token near `number` whose sha1 is `hashed`; the baseline's line numbers drift by one in places."""
    for offset in (0, 1, -1, 2, -2):
        index = number - 1 + offset
        if 0 <= index < len(lines):
            line = lines[index]
            candidates = [*re.split(r"[\s'\"=:,@()\[\]]+", line), *re.split(r"[\s'\",:@()\[\]]+", line),
                          line.strip(), line.strip("-")]
            for candidate in candidates:
                if candidate and hashlib.sha1(candidate.encode()).hexdigest() == hashed:
                    return candidate
    return None


def _is_redacted(redactor: Redactor, name: str, number: int, secret: str) -> bool:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    before, after = text.splitlines(), redactor.redact(text).text.splitlines()
    if len(before) != len(after):  # a multi-line secret (PEM block) was folded into one marker
        return secret not in "\n".join(after)
    lines = [i for i, line in enumerate(before) if secret in line and abs(i + 1 - number) <= 2]
    return all(secret not in after[i] for i in lines)


FINDINGS = _findings() if FIXTURES.is_dir() else []
LOCATED = [f for f in FINDINGS if f[3] is not None]
# Without the shared data, one case that fails through the `shared_data` fixture (loudly, never an empty skip).
MISSING = [("shared data missing", 0, "", "")]


@pytest.mark.parametrize(("name", "number", "kind", "secret"),
                         [f for f in LOCATED if f[2] in CLAIMED] or MISSING, ids=lambda v: str(v)[:24])
def test_baseline_finding_is_redacted(shared_data: Path, redactor: Redactor, name: str, number: int, kind: str,
                                      secret: str) -> None:
    assert _is_redacted(redactor, name, number, secret)


def test_baseline_coverage(shared_data: Path, redactor: Redactor) -> None:
    assert {f[2] for f in FINDINGS} <= CLAIMED | EXCLUDED
    total, done = Counter(), Counter()
    for name, number, kind, secret in LOCATED:
        total[kind] += 1
        done[kind] += _is_redacted(redactor, name, number, secret)
    print(f"\nbaseline: {len(FINDINGS)} findings, {len(LOCATED)} located in the current files, "
          f"{sum(done.values())} redacted")
    for kind in sorted(total):
        print(f"  {kind:28} {done[kind]}/{total[kind]}{'' if kind in CLAIMED else '  (not claimed)'}")
    assert all(done[k] == total[k] for k in CLAIMED if k in total)
    assert sum(done.values()) >= 20


def test_files_without_secrets_are_unchanged(shared_data: Path, redactor: Redactor) -> None:
    for name in ["files/file_with_no_secrets.py", "files/tmp/file_with_no_secrets.py",
                 "files/file_with_custom_secrets.py", "only_comments.yaml", "word_list.txt",
                 "performance/best-songs.txt"]:
        text = (FIXTURES / name).read_text(encoding="utf-8")
        assert redactor.redact(text).text == text, name


def _removed_spans(before: str, after: str) -> list[str]:
    """The pieces of `before` that markers replaced in `after`."""
    pattern = "^" + "(.+?)".join(re.escape(p) for p in re.split(r"\[REDACTED:\w+\]", after)) + "$"
    match = re.match(pattern, before, re.DOTALL)
    assert match, (before, after)
    return list(match.groups())


# --- issue 15: the formats and contexts that were missed, and the text that was damaged -----------------

# (text, the secret that must be gone, the kind reported)
MISSED_BEFORE = [
    ("curl -u deploy:Sup3rS3cret https://ci.example.com", "Sup3rS3cret", "cli_credential"),
    ("curl --user ci:t0k3nValue99 -X POST https://x.example.com", "t0k3nValue99", "cli_credential"),
    ("Authorization: Token 4f6c2a9e8b7d1c3e5a0f", "4f6c2a9e8b7d1c3e5a0f", "authorization_header"),
    ("Authorization: Api-Token dt0c01.Q2Z3X4V5", "dt0c01.Q2Z3X4V5", "authorization_header"),
    ("git remote set-url origin glpat-Zx9Yw8Xv7Uu6Tt5Ss4Rr", "glpat-Zx9Yw8Xv7Uu6Tt5Ss4Rr", "gitlab_pat"),
    ("trigger with glptt-0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
     "glptt-0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "gitlab_ptt"),
    ("deploy token gldt-Q1w2E3r4T5y6U7i8O9p0", "gldt-Q1w2E3r4T5y6U7i8O9p0", "gitlab_deploy_token"),
    ("twine upload -p pypi-AgEIcHlwaS5vcmcCJGE4ZjM5YjQ3LTVmNDgtNDk4Ni1iZjg4LWVlZjRhZDc2OGJhNQACKlszLCJ",
     "pypi-AgEIcHlwaS5vcmcCJGE4ZjM5YjQ3LTVmNDgtNDk4Ni1iZjg4LWVlZjRhZDc2OGJhNQACKlszLCJ", "pypi_upload_token"),
    ("vault login s.wWPw5k4aXcaT4fNP0UcnZwJU", "s.wWPw5k4aXcaT4fNP0UcnZwJU", "vault_service_token"),
    ("discord bot token MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
     "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", "discord_bot_token"),
    ("bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw", "110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw",
     "telegram_bot_token"),
    ("key 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",
     "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", "sendgrid_api_token"),
    ("xapp-1-A0123BCDEFG-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
     "xapp-1-A0123BCDEFG-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9", "slack_app_token"),
    ("post to https://hooks.slack.com/workflows/T01ABCDEF/A02BCDEFG/123456789012345678/aBcDeFgHiJkLmNoPqRsTuVwX",
     "T01ABCDEF/A02BCDEFG/123456789012345678/aBcDeFgHiJkLmNoPqRsTuVwX", "slack_token"),
    ('the client secret is "Xy78Q~Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1W"',
     "Xy78Q~Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1W", "azure_ad_client_secret"),
    ("NOTION ntn_12345678901AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhI",
     "ntn_12345678901AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhI", "notion_api_token"),
    ("src token sgp_0123456789abcdef0123456789abcdef01234567", "sgp_0123456789abcdef0123456789abcdef01234567",
     "sourcegraph_access_token"),
    ("AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHC",
     "AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHC", "age_secret_key"),
    ("unsigned eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0. ok", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.",
     "jwt"),
    ("mysql -uroot -pS3cretPw app", "S3cretPw", "cli_credential"),
    ("PGPASSWORD=pg5ecret psql -h db", "pg5ecret", "env_secret"),
    ("docker login -u me -p dckr_pat_Abc123Def456 reg.example.com", "dckr_pat_Abc123Def456", "cli_credential"),
    ("curl -H 'x-key: sk-abc123def456ghi789' https://x", "sk-abc123def456ghi789", "api_key_header"),
    # custom auth headers: any hyphenated name ending in Authorization/Auth/Token/Key/Secret, a scheme word or none
    ("X-Authorization: Token 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api_key_header"),
    ("X-Authorization: Token abcdefgh", "abcdefgh", "api_key_header"),
    ("X-Auth: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw==", "api_key_header"),
    ("My-Auth: ApiKey s3cr3tvalue", "s3cr3tvalue", "api_key_header"),
    ("X-Upstream-Authorization: a1b2c3d4e5f6g7h8i9j0", "a1b2c3d4e5f6g7h8i9j0", "api_key_header"),
    ("headers = {'Service-Key': 'Basic 9f8e7d6c5b4a3928'}", "9f8e7d6c5b4a3928", "api_key_header"),
    ('"X-Client-Secret": "Api-Key 0123456789"', "0123456789", "api_key_header"),
    # issue 15's held-out misses, with rules from detect-secrets' plugins and gitleaks' kubernetes rule
    ("token NzA3Mjk2MTQ1NTM2MzI3NzEx.XkP2aQ.Hq8vRw3LzT1nYb6Ue0cJmKs9D2f in the log",
     "NzA3Mjk2MTQ1NTM2MzI3NzEx.XkP2aQ.Hq8vRw3LzT1nYb6Ue0cJmKs9D2f", "discord_bot_token"),
    ("use 00Oj5TZd2WLVG8n-4CPs-rf-pb7IjWH7aWZAfHc8hx for the org", "00Oj5TZd2WLVG8n-4CPs-rf-pb7IjWH7aWZAfHc8hx",
     "okta_api_token"),
    ("SCIM=glsoat-VG9indb0dfQFS_XDpIGTMnGr8SDNJuhqx8cfpMXK", "glsoat-VG9indb0dfQFS_XDpIGTMnGr8SDNJuhqx8cfpMXK",
     "gitlab_token"),
    ("GET https://kgfunc.azurewebsites.net/api/ingest?code=i5rh08put2UaR4kCp5jRnBnTWDaalr1uRfTbMuJG9CFRgdc2gRey-b==",
     "i5rh08put2UaR4kCp5jRnBnTWDaalr1uRfTbMuJG9CFRgdc2gRey-b==", "azure_function_key"),
    ("apiVersion: v1\nkind: Secret\ndata:\n  .dockercfg: |\n    c3VwZXItc2VjcmV0LWRiLXBhc3N3b3Jk\n",
     "c3VwZXItc2VjcmV0LWRiLXBhc3N3b3Jk", "kubernetes_secret"),
    ("apiVersion: v1\ndata:\n  extra: c3VwZXItc2VjcmV0LWRiLXBhc3N3b3Jk\nkind: Secret\n",
     "c3VwZXItc2VjcmV0LWRiLXBhc3N3b3Jk", "kubernetes_secret"),
    # gitleaks' sample shapes: escaped JSON, YAML block, CSV, a call
    ('\\"fastly_token\\": \\"6unvbcesg75725s3abzv6xs8rz3d5aue\\"', "6unvbcesg75725s3abzv6xs8rz3d5aue",
     "fastly_api_token"),
    ("codecov_token: |\n  e7h3r55mt8st47ztjr7rq86ybeiqcths", "e7h3r55mt8st47ztjr7rq86ybeiqcths",
     "codecov_access_token"),
    ("droneciToken,a7gt1u315yahsirxxpm8mxjckfswlc5n,", "a7gt1u315yahsirxxpm8mxjckfswlc5n", "droneci_access_token"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), MISSED_BEFORE, ids=lambda v: str(v)[:30])
def test_formats_missed_before_are_redacted_whole(redactor: Redactor, text: str, secret: str, kind: str) -> None:
    result = redactor.redact(text)
    assert secret not in result.text
    assert kind in result.kinds
    assert all(secret not in k for k in result.kinds)


LEFT_ALONE = [
    "https://example.com/wp-content/uploads/2018/05/2018-250-xoxo-indieweb-1.jpg",
    "SUMO_ACCESS_KEY=${SUMO_ACCESS_KEY:=$2}",
    "export TOKEN=${API_KEY:-x}",
    "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com",
    'api_key = "insert_key_here"',
    "access_token=ACCESS_TOKEN",
    "OPENAI_API_KEY=<token>",
    "password: xxxx",
    'key: "your-key-here"',
    "zzAIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    '"integrity": "sha512-/AazAV/F+HK4LIywF9C+NYHcJo038zEnWkteilcxC1FM/uK/4NVGDKGrxx7nNq1ybspAroRKT4I1FHfxQzxkUw=="',
    "image: ghcr.io/acme/api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "![x](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
    "60e6kgAAAABJRU5ErkJggg==)",
    "color: #ff00aa; border: 1px solid #1e1e1e",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "Api-Key: required",
    "X-Auth: Token ${TOKEN}",
    "the primary-key: user_id2",
    "ssh-key: ~/.ssh/id_rsa2",
    "Public-Key: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC1",
    "git push -u origin main",
    "MyClass.atLeast24CharactersField = 1",
    "密码重置流程坏了，令牌过期了",
    "digest 00a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f and 0012345678901234567890123456789012345678901",
    "see README.md.backup.tar.gz and v1.2.3.final-build.20261201",
    "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nspec:\n  data:\n    - secretKey: foo\n",
    "apiVersion: v1\nkind: Secret\ndata:\n  password: {{ .Values.password }}\n",
    "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n",
    "https://kgfunc.azurewebsites.net/api/ingest?name=world",
    "SUMO_ACCESS_KEY={SumoAccessKey}",
    # YAML tags before a reference, names of words with a hash part (cache keys), token-shaped names
    "secret_key: !ENV ${SECRET_KEY}",
    "cacheKey: node-modules-v2-Linux-3f5e8c1b9d",
    'anthropic_token = "sk-live-yourTokenHere"',
    "artifact_key = build-cache-Darwin-arm64-9c1e4f",
]


@pytest.mark.parametrize("text, secret", [
    ("secret: !ENV Xk29sLq0aPzW8", "Xk29sLq0aPzW8"),  # a YAML tag is skipped, the value after it redacted
    ("password: !!binary cGFzc3dvcmQxMjM0NTY=", "cGFzc3dvcmQxMjM0NTY="),  # a core tag goes with it
    ("password: Summer-Sky-2024", "Summer-Sky-2024"),  # a password may be words: the word-name rule is for tokens
    ('api_token = "Xk9aQw3rT5-yU7iO9pA1-sD3fG5hJ7kL9z"', "Xk9aQw3rT5-yU7iO9pA1-sD3fG5hJ7kL9z"),
])
def test_names_of_words_are_not_taken_for_tokens_but_secrets_still_go(redactor: Redactor, text: str,
                                                                       secret: str) -> None:
    assert secret not in redactor.redact(text).text


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_ordinary_text_of_the_issue_is_left_alone(redactor: Redactor, text: str) -> None:
    assert redactor.redact(text) == Redacted(text, ())


def test_a_secret_longer_than_its_pattern_leaves_no_tail(redactor: Redactor) -> None:
    token = "ops_eyJ" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7" * 40  # a 1Password service token past any cap
    assert len(token) > 1000
    result = redactor.redact(f"OP_SERVICE_ACCOUNT_TOKEN={token} next")
    assert result.text == "OP_SERVICE_ACCOUNT_TOKEN=[REDACTED:1password_service_account_token] next"


def test_every_packaged_rule_compiles_and_names_its_group() -> None:
    from kg.redaction.rules import packaged

    strict = Redactor.from_mapping(packaged("secrets.toml"), "rules/secrets.toml", validate=True)
    assert len(strict.rules) == len(load_default().rules) > 200
    for rule in strict.rules:
        named = rule.group if isinstance(rule.group, int) else rule.pattern.groupindex.get(rule.group)
        assert named is not None and 0 <= named <= rule.pattern.groups, rule.kind
        assert rule.ignore is not None


def test_gitleaks_rules_carry_their_attribution_and_licence() -> None:
    from importlib import resources

    text = (resources.files("kg.rules") / "secrets_gitleaks.toml").read_text(encoding="utf-8")
    assert "gitleaks" in text and "MIT License" in text and "Copyright (c) 2019 Zachary Rice" in text


def test_redact_value_reaches_nested_strings(redactor: Redactor) -> None:
    value = {"tags": ["ok", "AKIA4LTM0Q8P5W07NT8V"], "properties": {"reason": "key sk-proj-abc123DEF456ghi789JKL0"},
             "n": 3}
    kinds: set[str] = set()
    out = redactor.redact_value(value, kinds)
    assert "AKIA4LTM0Q8P5W07NT8V" not in str(out) and "sk-proj-abc123DEF456ghi789JKL0" not in str(out)
    assert out["n"] == 3 and kinds == {"aws_access_key", "openai_key"}


# --- the per-user cache of parsed packaged rules ------------------------------------------------------------

def _rows(rules) -> list[tuple]:
    from kg.redaction.cache import _FIELDS

    return [tuple(getattr(rule, name) for name in _FIELDS) for rule in rules]


def test_parsed_rules_are_cached_and_read_back_the_same(tmp_path, monkeypatch) -> None:
    from kg.redaction.cache import packaged_rows, packaged_rules
    from kg.redaction.redact import Redactor
    from kg.redaction.rules import packaged, parse

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    parsed, ignore = parse(packaged("secrets.toml"), "rules/secrets.toml", validate=False)
    first = packaged_rules()
    files = list(tmp_path.glob("secret-rules-*.marshal"))
    assert len(files) == 1 and files[0].stat().st_mode & 0o077 == 0
    assert not list(tmp_path.glob(".*"))  # written atomically: no temporary file left beside it
    second = packaged_rules()
    assert _rows(first[0]) == _rows(second[0]) == _rows(parsed) and second[1] == first[1] == ignore
    # the lazily built rules, in the order they apply, and the cached keyword plan are what the parse gives
    lazy, _ = packaged_rows()
    fresh = Redactor.from_rules(parsed, ignore)
    assert _rows(lazy) == _rows(fresh.rules)
    plan = Redactor(lazy, tuple(ignore))._plan
    assert plan is lazy.plan and plan.ascii_words == fresh._plan.ascii_words
    assert (plan.other, plan.bare) == (fresh._plan.other, fresh._plan.bare)


@pytest.mark.parametrize("damage", ["garbage", "stale key", "edited", "torn", "writable by others"])
def test_a_damaged_or_foreign_cache_is_ignored(tmp_path, monkeypatch, damage: str) -> None:
    import marshal
    import zlib

    from kg.redaction.cache import packaged_rules
    from kg.redaction.rules import packaged, parse

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    packaged_rules()
    path = next(tmp_path.glob("secret-rules-*.marshal"))
    raw = path.read_bytes()
    length = int(raw[8:16], 16)
    fmt, key, folder, ignore, rows, order, plan, where, echo, prefix, scan, regexes = marshal.loads(raw[16:16 + length])
    codes = raw[16 + length:]

    def sealed(body: bytes) -> bytes:
        return b"%08x%08x" % (zlib.crc32(body), len(body)) + body + codes

    # a tampered cache: every rule but one gone
    one_rule = marshal.dumps((fmt, key, folder, ignore, rows[:1], [0], plan, where[:12], echo, prefix, scan, regexes))
    if damage == "garbage":
        path.write_bytes(b"{not marshal")
    elif damage == "stale key":
        stale = (fmt, "0" * 64, folder, ignore, rows[:1], [0], plan, where[:12], echo, prefix, scan, regexes)
        path.write_bytes(sealed(marshal.dumps(stale)))
    elif damage == "edited":
        path.write_bytes(raw[:16] + one_rule)  # the seal no longer matches
    elif damage == "torn":
        path.write_bytes(raw[: len(raw) // 2])
    else:
        path.write_bytes(sealed(one_rule))
        path.chmod(0o666)
    rules, _ = packaged_rules()
    assert _rows(rules) == _rows(parse(packaged("secrets.toml"), "rules/secrets.toml", validate=False)[0])


def test_cached_compiled_forms_are_the_compiled_patterns(tmp_path, monkeypatch) -> None:
    """Each rule's pattern built from the cache's compiled form is the pattern `re.compile` gives (a compiled
    pattern compares equal to another only with the same source, flags and engine code)."""
    import re

    from kg.redaction.cache import packaged_rows

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    packaged_rows()  # writes the cache
    rules, _ = packaged_rows()  # reads it
    assert all(rules[i].code is not None for i in range(len(rules)))
    assert all(rules[i].pattern == re.compile(rules[i].source) for i in range(len(rules)))


def test_the_scans_own_regexes_come_compiled_from_the_cache(tmp_path, monkeypatch) -> None:
    """The line prefix's three regexes, the glue's two and the global ignores come from the cache's compiled forms
    (compiling the line prefix's was most of a fresh `kg log`'s redaction: 1.5 of 2.5 ms), and are the patterns
    `re.compile` gives."""
    import re

    from kg.redaction import rules as rules_module
    from kg.redaction.cache import packaged_parts
    from kg.redaction.prefixes import sources
    from kg.redaction.textchecks import glue_sources

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(rules_module, "_CODES", {})
    packaged_parts()  # writes the cache: nothing compiled is known yet
    assert rules_module._CODES == {}
    _, ignore, _, prefix, scan = packaged_parts()  # reads it
    wanted = {*ignore, *sources(prefix), *glue_sources(scan.glue)}
    assert prefix and len(wanted) > 5 and wanted == set(rules_module._CODES)
    assert all(rules_module.regex(source) == re.compile(source) for source in wanted)
    assert rules_module.regex("x(?=y)") == re.compile("x(?=y)")  # a source the cache does not hold is compiled


@pytest.mark.parametrize("damage", ["a compiled form changed", "the file cut short", "another file in its place"])
def test_a_damaged_compiled_form_is_compiled_from_source(tmp_path, monkeypatch, damage: str) -> None:
    import re

    from kg.redaction.cache import packaged_rows
    from kg.redaction.redact import Redactor

    monkeypatch.setenv("KG_CACHE_DIR", str(tmp_path))
    packaged_rows()
    rules, ignore = packaged_rows()  # the index is read now; each compiled form when its rule is first built
    path = next(tmp_path.glob("secret-rules-*.marshal"))
    raw = bytearray(path.read_bytes())
    if damage == "a compiled form changed":
        raw[-40:] = bytes(40)
        path.write_bytes(bytes(raw))
    elif damage == "the file cut short":
        path.write_bytes(bytes(raw[: len(raw) * 2 // 3]))
    else:
        path.write_bytes(b"x" * len(raw))
    built = [rules[i] for i in range(len(rules))]
    assert any(rule.code is None for rule in built) and any(rule.code is not None for rule in built) == (
        damage != "another file in its place")
    assert all(rule.pattern == re.compile(rule.source) for rule in built)
    text = "curl -u admin:Hunter2secret https://x and AKIA4LTM0Q8P5W07NT8V"
    assert Redactor(rules, tuple(ignore)).redact(text).text == \
        "curl -u admin:[REDACTED:cli_credential] https://x and [REDACTED:aws_access_key]"


def test_an_unwritable_cache_dir_only_costs_the_parse(tmp_path, monkeypatch) -> None:
    from kg.redaction.cache import packaged_rules

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("KG_CACHE_DIR", str(blocker / "kg"))  # a path under a file: cannot be created
    rules, _ = packaged_rules()
    assert len(rules) > 200


def test_a_dotted_run_is_read_once_and_only_for_itself(redactor: Redactor) -> None:
    # Secrets with dots in them (a JWT, pscale_pw_...x.y) go on over a dot that joins two runs. Where a run ends is
    # remembered per scan: a blob of many tokens is read once (not 16 KB per token: 12 s for 1 MB), and the
    # remembered end never carries over to the next run.
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    tail = ".abcdefgh.ijklmnop"
    parts = [f"one {jwt}{tail} two", f"three {jwt} four", f"{jwt}{tail}"]
    alone = [redactor.redact(part).text for part in parts]
    assert all(jwt not in text and "abcdefgh" not in text for text in alone)
    assert redactor.redact("\n".join(parts)).text == "\n".join(alone)
    blob = ".".join([jwt] * 400)  # one dotted run of 400 tokens, past the 16 KB bound: nothing of it is left
    once = redactor.redact(blob).text
    assert once.replace("[REDACTED:jwt]", "").strip(".") == ""
