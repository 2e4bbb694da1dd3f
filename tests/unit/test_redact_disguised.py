r"""Secrets a red team found stored whole (note 48): JSON inside a JSON string (`curl -d "{\"password\":\"…\"}"`, a
secret manager's `"SecretString"`, a URL written `postgres:\/\/…`), a space other than " " after the label (a no-break
space, the ideographic space after 密码：), and a token broken by a control character or written in another Unicode
form that `clean` only mends after redaction (DEL inside a token, a Kelvin sign for K, a decomposed ñ in a label).
Redaction reads the text as `clean` will store it and JSON's escaped quotes as they would be unescaped; what holds
no secret comes back as given."""

from __future__ import annotations

import pytest

from kg.core.text import clean, visible
from kg.redaction import escaped
from kg.redaction.redact import load_default

SECRET = "Tr4inSet9QxZ" + "Lm2Vd8"
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5r" + "sT7vW9xY1zQm4K"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text", [
    'curl -X POST https://api.example.com/login -d "{\\"email\\":\\"a@b.c\\",\\"password\\":\\"%s\\"}"',
    '{"body": "{\\"api_key\\": \\"%s\\", \\"n\\": 2}"}',
    '"{\\\\\\"client_secret\\\\\\":\\\\\\"%s\\\\\\"}"',  # escaped twice
    '"SecretString": "{\\"username\\":\\"app\\",\\"password\\":\\"%s\\"}"',
    'DATABASE_URL is postgres:\\/\\/app:%s@db.internal:5432\\/prod',
    "Password:\u00a0%s", "the password is\u00a0%s", "Mot de passe\u202f: %s", "密码：\u3000%s", "password:\u2003%s",
    "contrasen\u0303a: %s",
])
def test_a_secret_in_escaped_json_or_after_another_space_is_redacted(text):
    out = redact(text % SECRET)
    assert SECRET[:8] not in out and "[REDACTED:" in out, out


def test_what_is_around_an_escaped_secret_is_kept_as_written():
    text = f'curl -d "{{\\"user\\":\\"ann\\",\\"password\\":\\"{SECRET}\\"}}" https://x.test/login'
    out = redact(text)
    assert out.startswith('curl -d "{\\"user\\":\\"ann\\",\\"password\\":\\"[REDACTED:')
    assert out.endswith(']\\"}" https://x.test/login'), out


@pytest.mark.parametrize("text, secret", [
    (f"token {GHP[:20]}\x7f{GHP[20:]}", GHP),  # `clean` drops the DEL after: the token was stored whole
    (f"pushed with {GHP[:20]}\u2028{GHP[20:]}", GHP), (f"pushed with {GHP[:20]}\r{GHP[20:]}", GHP),  # (review)
    (f"pushed with {GHP[:20]}\x1b{GHP[20:]}", GHP), (f"pushed with {GHP[:20]}\x9b{GHP[20:]}", GHP),
    ("key s\u212a_live_" + "51HxQwErTyUiOpAsDfGhJkL", "51HxQwErTyUiOpAsDfGhJkL"),  # NFC: the Kelvin sign is a K
])
def test_a_token_clean_would_mend_is_redacted_before(text, secret):
    out = clean(redact(text))
    assert secret[:10] not in out and secret[-8:] not in out, out


@pytest.mark.parametrize("text", [
    'log {\\"level\\":\\"info\\",\\"msg\\":\\"started on port 8080\\"} and a path C:\\/tmp',
    "Prix\u00a0: 12\u202f€, 密码规则：\u3000至少八位",  # a label with no value that is a secret
    "emoji 👍\ufe0f and a word joiner\u2060 and a Persian word می\u200cکنیم",
])
def test_text_without_a_secret_comes_back_as_given(text):
    assert load_default().redact(text).text == text


def test_visible_reads_as_clean_stores_and_keeps_what_redaction_reads_past():
    assert visible("a\u00a0b\u3000c\x7fd\u212a") == "a\u00a0b\u3000cdK"  # odd spaces: read as spaces, kept
    out = load_default().redact(f"密码：\u3000{SECRET} 和\u3000别的").text
    assert out == "密码：\u3000[REDACTED:password_assignment] 和\u3000别的"
    assert visible("line\r\n\tcol \x1b[32mgreen\x1b[0m") == "line\n\tcol \x1b[32mgreen\x1b[0m"
    assert visible("ascii only\x00") == "ascii only"


def test_only_keys_named_for_a_secret_and_escaped_urls_are_read_unescaped():
    redactor = load_default()
    text = ('{\\"level\\":\\"info\\"} ' * 50 + '{\\"db_password\\": \\"x\\"} ' + '{\\"n\\":1} ' * 50
            + "postgres:\\/\\/a:b@h")
    found = escaped.windows(text, redactor._starts(text))
    assert len(found) == 2, [view.text for _, view in found]
    assert '"db_password": "x"' in found[0][1].text and "postgres://a:b@h" in found[1][1].text
    lo, view = found[0]
    at = view.text.index('"x"') + 1
    a, b = view.span(at, at + 1)
    assert text[lo + a:lo + b] == "x"


PW = "Vq8rTz2LmK4x"


@pytest.mark.parametrize("text", [
    # how agents report credentials in prose
    "I reset the admin password to {}", "changed the root password to '{}'", "set the password to {} and restarted",
    "password is: {}", "Password → {}", "password (prod): {}", "password for 'admin' is {}",
    "The password for the wifi is {}.", "the token is {}", "the secret is {}", "the API key is {}",
    "the default credentials are admin:{}", "Use admin@example.com / {}", "Default login is `admin` / `{}`",
    # env names without a secret word the first rule reads
    "SSHPASS={}", "PGPASS={}", "REDIS_AUTH={}", "BASIC_AUTH={}", "DB_CREDS={}", "WIFI_PSK={}",
    # a name and its value, as Kubernetes, ECS and SSM list them
    '- name: DB_PASSWORD\n  value: "{}"', '{{"name":"API_TOKEN","value":"{}"}}',
    '"Name": "/prod/db/password",\n    "Type": "SecureString",\n    "Value": "{}",',
    'ds.setPassword("{}")',
])
def test_a_secret_said_as_agents_write_it_is_redacted(text):
    out = redact(text.format(PW))
    assert PW not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", [
    "the token is expired", "the secret is rotated monthly", "the API key is stored in vault", "the token is 401",
    "the secret is 2FA-based", "the access token is ISSUE-123", "the session token is set to null",
    "switch from password to SSO", "password to OAuth2 login", "reset the password to default",
    "the password for the account is locked", "use src/utils2abc for it", "with node/v18.2.0",
    "BYPASS=true", "SKIP_AUTH=1", "REQUIRE_AUTH=yes", "PGPASSFILE=/home/u/.pgpass", "COMPASS_URL=https://x.test",
    "name: DB_HOST\n  value: db.internal", '<input type="hidden" name="authenticity_token" value="7SWa-Fo1_hsC6oovfB">',
])
def test_words_around_those_labels_that_are_no_secret_survive(text):
    assert load_default().redact(text).text == text


def _run(n: int, seed: int, chars: str = "aB3dE5fG7hJ9kL1mN3pQ5rsT7vW9xY1zC2eD4") -> str:
    return "".join(chars[(seed * 7 + i * 13) % len(chars)] for i in range(n))


@pytest.mark.parametrize("token, kind", [
    ("xai-" + _run(80, 1), "xai_api_key"),
    ("GOCSPX-" + _run(28, 2), "google_oauth_client_secret"),
    ("r8_" + _run(37, 3), "replicate_api_token"),
    ("tskey-auth-" + _run(12, 4) + "-" + _run(32, 5), "tailscale_key"),
    ("rnd_" + _run(32, 6), "render_api_key"),
    ("squ_" + _run(40, 7, "0123456789abcdef"), "sonarqube_token"),
    ("sq0csp-" + _run(43, 8), "square_access_token"),
    ("oy2" + _run(43, 9, "abcdefghijklmnopqrstuvwxyz0123456789"), "nuget_api_key"),
])
def test_provider_tokens_neither_rule_set_read(token, kind):
    out = load_default().redact(f"export it: {token} then run").text
    assert out == f"export it: [REDACTED:{kind}] then run", out


def test_a_tunnel_token_and_a_legacy_teams_webhook():
    out = redact("cloudflared service install eyJhIjoi" + _run(120, 10))
    assert out == "cloudflared service install [REDACTED:cloudflare_tunnel_token]", out
    out = redact("post to https://outlook.office.com/webhook/" + _run(8, 11) + "@" + _run(8, 12) + "/IncomingWebhook/"
                 + _run(32, 13, "0123456789abcdef") + "/" + _run(8, 14) + " now")
    assert out == "post to https://outlook.office.com/webhook/[REDACTED:microsoft_teams_webhook] now", out


@pytest.mark.parametrize("text, kept", [
    ("password: Welcome.2024Qx", False),  # a word, a dot and digits: a password, not an attribute
    ("accessToken: sk.eyJ1IjoiYWJjIiwiYSI6ImNsMTIzNDU2In0.Xk9PqR2sT4uV6wY8zA1b", False),  # Mapbox: base64 JSON
    ("pw = cfg.password", True), ("token = get_token()", True), ('password: os.environ["PW"]', True),
    ("apiKey: process.env.API_KEY_V2", True), ("secret = settings.SECRET_KEY", True),
])
def test_a_dotted_value_is_code_only_when_it_reads_as_code(text, kept):
    assert (load_default().redact(text).text == text) is kept


KEY = "Xk9PqR2sT4uV6wY8zA1bC3dE5fG7hJ9kL1mN3pQ5"


@pytest.mark.parametrize("text", ["Your new API key:\n\n    {}\n\nStore it safely.", "access_token:\n  {}\n",
                                  "**Password:**\n`{}`\n", "x-api-key:\n{}"])
def test_a_key_printed_on_the_line_after_its_label_is_redacted(text):
    out = redact(text.format(KEY))
    assert KEY[:10] not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", [
    "op read op://vault/db/password\n{}\n", "vault kv get -field=password secret/db\n{}", "pass show db/prod\n{}",
    "gopass show -o db/prod\n{}", "security find-generic-password -s db -w\n{}",
    "kubectl get secret app -o jsonpath={{.data.pw}} | base64 -d\n{}\n",
])
def test_a_value_printed_after_the_command_that_fetched_it_is_redacted(text):
    out = redact(text.format(PW))
    assert PW not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", [
    "Password:\n  - must be 8 chars\n", "API key:\n\nSee the settings page.\n", "Token:\n<your-token>\n",
    "secret:\n  name: db-creds\n", "pass show db\nError: db is not in the password store.", "key:\n  v1.2.3\n",
    "Your key:\n\n    ./keys/id_ed25519\n", "op read op://v/i/f\n$ ls\nfoobar1",
    # the second red team's: keys that are no secret, names and ids under a secret's label, a command's other output
    "Public key:\nxTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=",
    "Recipient public key:\nage1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
    "Idempotency key:\norder_12345_retry2", "Primary key:\n  user_id2", "Partition key:\n  tenantId#2024",
    "Session token:\nsess-expired-v2", "Refresh token:\n  rotated2024", "API key:\nsee-vault-2024",
    "Access token:\n>   expired-2024-05-01", "op read op://vault/db/username\nalice2024",
    "vault kv get -field=username secret/db\nappuser01", "pass show work\nwork",
    "kubectl get secret tls -o jsonpath={.data.crt} | base64 -d | openssl x509 -noout -subject\nsubject=CN=example.com",
])
def test_what_follows_a_label_on_its_own_line_and_is_no_value_survives(text):
    assert load_default().redact(text).text == text


@pytest.mark.parametrize("text", [
    "lozinka: {}", "Jelszó: {}", "geslo: {}", "Κωδικός πρόσβασης: {}", "סיסמה: {}", "كلمة المرور: {}", "पासवर्ड: {}",
    "รหัสผ่าน: {}", "Kata sandi: {}", "parool: {}",
    "redis-cli> AUTH {}", "127.0.0.1:6379> AUTH default {}", "sudo usermod --password {} bob",
])
def test_labels_of_more_languages_and_command_lines(text):
    out = redact(text.format(PW))
    assert PW not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", ["lozinka: nova", "jelszó: hibás", "Kata sandi: salah", "AUTH header missing",
                                  "AUTH failed: WRONGPASS invalid username-password pair"])
def test_their_words_that_are_no_password_survive(text):
    assert load_default().redact(text).text == text


def test_a_jwt_wrapped_at_a_terminals_width_is_redacted_whole():
    """The continuation of a token cut over lines had to be a run without dots: a JWT's payload and signature, wrapped
    at 80 columns, kept its second and third lines."""
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
           "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
    text = "curl -H 'Authorization: Bearer " + jwt + "' https://api.example.com/v1/users"
    wrapped = "\n".join(text[i:i + 80] for i in range(0, len(text), 80))
    out = redact(wrapped)
    assert "SflKxwRJ" not in out and "MjM0NTY3" not in out and out.endswith("' https://api.example.com/v1/users"), out
    assert redact("see the token below\ndone.\nnext step: run it") == "see the token below\ndone.\nnext step: run it"


PEM_BODY = ["MIIEpAIBAAKCAQEA7bq3xk2Yd9Qm1Lk7Rt4Vb8Np3Hs6Jd1Fg5Wc0YaQe7TZx9Ab3d",
            "E5fG7hJ9kL1mN3pQ5rsT7vW9xY1zC2eD4fG6hJ8kL0mN2pQ4rS6tU8vW0xY2zA4bC6d"]
PEM = ["-----BEGIN RSA PRIVATE KEY-----", *PEM_BODY, "-----END RSA PRIVATE KEY-----"]


@pytest.mark.parametrize("text", [
    "\n".join("web-1  | " + line for line in PEM),  # docker compose logs
    "\n".join("Dec 07 10:00:01 host app[123]: " + line for line in PEM),  # journalctl
    "\n".join("[pod/api-7d9f/api] " + line for line in PEM),  # kubectl logs --prefix
    "<br>".join(PEM), str(PEM), "\n".join(line + "$" for line in PEM),  # HTML, a list of lines, cat -A
])
def test_a_key_block_under_line_prefixes_or_joined_otherwise_is_redacted(text):
    out = redact(text)
    assert not any(line[12:40] in out for line in PEM_BODY), out


def test_log_lines_after_a_prefixed_key_block_are_kept():
    text = "\n".join("web-1  | " + line for line in PEM) + "\nweb-1  | Listening on port 8080\ndb-1   | ready"
    assert redact(text) == "web-1  | [REDACTED:private_key]\nweb-1  | Listening on port 8080\ndb-1   | ready"


def test_a_dotted_token_on_the_line_after_another_token_is_its_own():
    """(found by the secret leaks scan) With dots allowed in every piece, a Discord token on the line after a
    1Password one was joined to it up to its first dot, and the rest of it kept: dots continue a dotted token only."""
    ops = "ops_" + "eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIsInVzZXJBdXRoIjp7Im1ldGhvZCI6IlNSUGctNDA5NiJ9fQ"
    discord = "NzA3Mjk2MTQ1NTM2MzI3NzEx.XkP2aQ.Hq8vRw3LzT1nYb6Ue0cJmKs9D2f"
    out = redact(f"op_token={ops}\n{discord}\nokta says hi")
    assert "Hq8vRw3L" not in out and "XkP2aQ" not in out, out


# A second red team's ordinary text (note 48) around the labels the rules above read: each came back changed from the
# first version of these rules (the ECS `valueFrom` line, which the older rules redact too, is left out).
ORDINARY = [
    'Go to Profile → Password → Two-Factor to enable 2FA.',
    'password (optional): leave-blank to use SSO',
    'The password is: **required**',
    'Password is: *mandatory*',
    '> **Note:** the password is: *never* stored',
    'The password for the wifi is WPA2-protected',
    'The password was: rejected-by-policy',
    'pw (hashed): bcrypt-12 rounds',
    'PASSWORD (DEV): local-only',
    'Password ⇒ hashed-with-argon2',
    'Password -> Forgot-Password page',
    'Step 3 — Password -> `kg-admin`',
    'The password for the DB is rotated2 weekly',
    'pwd -> ~/proj',
    'pwd → /workspace',
    'Set the password to SHA512-crypt in /etc/login.defs',
    'We changed password to passkey2FA login',
    'κωδικός: GR-2024-001 (κωδικός παραγγελίας)',
    'Ο κωδικός: ΚΑ-1234',
    'Κωδικός: 2FA-ενεργός',
    'A jelszó: Windows10-kompatibilis formátum',
    'Jelszo: min8karakter szabály',
    'lozinka: SHA-256 hash',
    'Lozinka: WPA2/WPA3',
    'Kata sandi: Windows-11 tidak',
    'Kata sandi: MD5-hash lama',
    'Parool: e-posti kaudu',
    'Geslo: WPA2-PSK',
    'كلمة المرور: WPA2-PSK',
    'पासवर्ड: WPA2-PSK',
    'รหัสผ่าน: WPA2-PSK',
    'סיסמה: WPA2-PSK',
    'The token is base64url-encoded',
    'The token is ERC1155-based.',
    'The token is RS256/ES256 signed.',
    'The token is UTF-16LE encoded.',
    'The token is `session:1234`',
    'The token is sha256:9f86d081884c7d65',
    "The token is 'hello2world' in the tokenizer test fixture",
    'Each token → vector768',
    'The secret is db-credentials-v2, mounted at /etc/creds',
    'The secret → app-secrets-v3',
    'The secret is gcp-secret-v3.',
    'the secret is prod/api/v2',
    'the secret is ed25519-based',
    'The secret is: rotate-every-30d',
    'The secret (TLS) is cert-manager-issued-v1',
    'COMPASS_VERSION=1.42.0',
    'PROXY_BYPASS=localhost,127.0.0.1,.internal',
    'BYPASS_LIST=10.0.0.0/8',
    'HTTP_PROXY_BYPASS=*.internal',
    'NEXT_AUTH_URL=http://localhost:3000',
    'KEYCLOAK_AUTH_SERVER_URL=http://keycloak:8080/auth',
    'SSO_AUTH_ENDPOINT=https://sso.example.com/x',
    'JWT_AUTH_ISSUER=https://auth.example.com/',
    'COMPASS_URL=https://x.example.com/v2',
    'VAULT_AUTH_ROLE=app-role',
    'GH_AUTH_SCOPES=repo,read:org,workflow',
    'KC_AUTH_REALM=my-realm',
    'REDIS_AUTH_MODE=acl-v2',
    'WIFI_PSK_MODE=WPA2-PSK',
    'BASIC_AUTH_USER=admin2',
    'PASS_THROUGH_HEADERS=X-Request-Id',
    'COMPASS_THEME=dark-v2',
    'SSH_ASKPASS=ssh-askpass',
    'GIT_ASKPASS=git-credential-manager',
    'CREDS_HELPER=ecr-login',
    'AWS_CREDS_PROFILE=prod-admin',
    'env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef: {name: db, key: pw}\n  - name'
    ': LOG_LEVEL\n    value: debug',
    '- name: TOKEN_TTL_SECONDS\n  value: "3600"',
    '- name: PASSWORD_MIN_LENGTH\n  value: "12"',
    '{"name": "max_tokens", "value": 1024}',
    '{"name":"tokenizer","value":"bert-base-uncased"}',
    '{"name": "auth_token_requests_total", "value": 42}',
    'name = "db_password"\n  value = random_password.db.result',
    '<select name="token_type"><option value="bearer">Bearer</option>',
    'Name=PasswordPolicy,Value=Strict2',
    '{"name": "GITHUB_TOKEN_PERMISSIONS", "value": "contents-read"}',
    '{"name": "SECRET_NAME", "value": "my-app-secret"}',
    '250 AUTH LOGIN CRAM-MD5',
    '250 AUTH DIGEST-MD5 CRAM-MD5',
    'AUTH SCRAM-SHA-256',
    'AUTH SERVICE v2.1.0-beta deployed',
    'AUTH FAIL ip=10.0.0.12',
    'RUN useradd -m appuser && mkdir -p data',
    'useradd -m bob; mkdir -p app/logs',
    'sudo useradd -m bob && docker run -p 8080:80 nginx',
    'Note: useradd -p expects an encrypted password',
    'usermod -p requires a hash',
    "Build with 'python':3.12-slim",
    'Run it with `redis`:7.2-alpine',
    "Pin with 'node':'20-alpine'",
    'Reset your branch with `origin`/`release-2.4`',
    "Compare using 'main'/'hotfix-2024'",
    "Call the API with 'model': 'gpt-4o-mini'",
    'I emailed with alice@example.com / bob.smith2@example.com',
    '$ pass show work\nwork',
    'op read op://vault/db/username\nalice',
    'vault kv get -field=username secret/db\nappuser',
    'each op read 4KiB blocks\nthroughput2',
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_around_secret_labels_is_kept(text):
    assert load_default().redact(text).text == text


def test_an_escaped_value_longer_than_its_stretch_and_a_url_escaped_twice():
    """(review) The escaped-JSON view reads 320 characters after a key: an STS session token of ~700 kept its tail;
    a URL escaped twice (`:\\\\\\/\\\\\\/`) was not read unescaped."""
    token = "FwoGZXIvYXdz" + "Ab3dE5fG7hJ9kL1mN3pQ5rsT7vW9xY1zC2eD4" * 18
    text = '{"content":"{\\"Credentials\\":{\\"SessionToken\\":\\"' + token + '\\"}}"}'
    out = redact(text)
    assert token[300:330] not in out and token[-30:] not in out and out.endswith('\\"}}"}'), out
    url = "psql postgres:\\\\\\/\\\\\\/app:Hx7pQ2mZ9kLw@db/x"
    assert redact(url) == "psql postgres:\\\\\\/\\\\\\/app:[REDACTED:password_in_url]@db/x"
