"""Credentials as people write them in notes and chat, which the last review found kept: a user and a password as a
pair after a label (`credentials: admin:X`, `login: admin / X`), "pw" for password, `Password - X`, and a bare
`pass:` key. Each with its near misses (paths, providers, test counts, prose after a dash), which must survive."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

SECRET = "S3cretPw9"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text", [
    f"credentials: admin:{SECRET}", f"creds admin/{SECRET}", f"login: admin / {SECRET}",
    f"Log in with admin / {SECRET} and open settings", f"username/password: admin/{SECRET}",
    f"the admin pw is {SECRET}", f"my pw {SECRET}.", f"Password - {SECRET}", f"wifi pw – {SECRET}!",
    f"user: admin, pass: {SECRET}", f'{{"user": "admin", "pass": "{SECRET}"}}', f"pass = '{SECRET}'",
])
def test_said_credentials_lose_the_password(text):
    out = redact(text)
    assert SECRET not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("text", [
    "login: api/auth/login", "sign in with google / GitHub", "login: /api/v2/login", "pass: true", "pass: 12",
    "pass: 12/15", "tests pass: 3 of 5", "Forgot password - self-service reset", "password - 8 characters",
    "pw reset link", "Password — Argon2id", "login: admin / admin", "log in as user:user", "login page - v2 release",
    "if ok: pass", "users sign in with Google/OAuth2", "users log in with Google/OAuth2", "bisect: last pass: 3f2a9c1",
    "login as root:0:0:root", f"bypass: {SECRET}", "compass: N45E12x",
])
def test_near_misses_survive(text):
    assert redact(text) == text
