"""Credentials in the forms published scanners know (trufflehog's and others' provider formats, docker and npm config,
cloud and registry CLIs) that passed the rules, each checked to pass first: provider tokens by their prefix (NVIDIA,
Google OAuth, Doppler, Supabase, Firebase Cloud Messaging, Groq, Stripe webhooks, Figma, PostHog, LangSmith, Tavily,
Firecrawl, Jina, Pinecone, Cerebras, Docker Hub, Resend, ElevenLabs, Buildkite, Netlify, Linear, Mailgun, E2B, Neon),
a docker config's `auth`, an .npmrc's bare `_auth` and `_password`, Yarn's npmAuthToken, and tokens given positionally
to CLIs (cargo login, vault login, aws configure set, poetry config, netlify env:set, twine -p, a here-string after
--with-token) and secret managers' CLIs (doppler, supabase, az keyvault, gcloud secrets). Each with the near misses
that must survive, and placeholders inside a value (nvapi-[your-key])."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default

# Made-up values of the providers' shapes (none is a real credential).
B62 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6"


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    (f"ran it with nvapi-{B62}Q7r8S9t0 and it worked", f"nvapi-{B62}Q7r8S9t0"),
    (f"got ya29.{B62} back from the consent screen", f"ya29.{B62}"),
    (f"gcloud printed ya29.a0{B62}", f"ya29.a0{B62}"),
    (f"saved 1//0g{B62} for later", f"1//0g{B62}"),
    (f"doppler run with dp.st.prd.{B62[:44]} now", f"dp.st.prd.{B62[:44]}"),
    (f"doppler login gave dp.ct.{B62[:43]}", f"dp.ct.{B62[:43]}"),
    ("supabase link with sbp_0123456789abcdef0123456789abcdef01234567",
     "sbp_0123456789abcdef0123456789abcdef01234567"),
    (f"createClient(url, 'sb_secret_{B62[:31]}')", f"sb_secret_{B62[:31]}"),
    (f"fcm server AAAAx1y2z3A:APA91b{B62}{B62}{B62[:30]}", f"APA91b{B62}{B62}{B62[:30]}"),
])
def test_provider_tokens_by_prefix(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out
    assert redact(out) == out


HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize("token", [
    f"gsk_{B62}",
    f"whsec_{B62[:32]}",
    f"figd_{B62[:40]}",
    f"phx_{B62[:43]}",
    f"lsv2_pt_{HEX[:32]}_{HEX[32:42]}",
    f"tvly-dev-{B62[:32]}",
    f"fc-{HEX[:32]}",
    f"jina_{B62}",
    f"pcsk_5aBc9d_{B62[:50]}",
    f"csk-{B62.lower()[:48]}",
    f"dckr_pat_{B62[:27]}",
    f"re_{B62[:8]}_{B62[8:34]}",
    f"sk_{HEX[:48]}",
    f"bkua_{HEX[:40]}",
    f"nfp_{B62[:36]}",
    f"lin_oauth_{HEX}",
    f"key-{HEX[:32]}",
    f"e2b_{HEX[:40]}",
    f"napi_{B62.lower()}{HEX[:12]}",
])
def test_more_provider_tokens_by_prefix(token):
    for text in (f"ran it with {token} and it worked", f"{token}"):
        out = redact(text)
        assert token not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    "gsk_your_groq_key_here",
    "the whsec_ secret signs Stripe's webhooks",
    "figd_... is a Figma token",
    "re_compile_all_patterns_first",
    "set sk_test_... in the dashboard",
    "fc-button fc-state-default",  # FullCalendar's CSS classes
    "key-value-store key-1234",
    "lsv2_pt_ keys are LangSmith's",
])
def test_provider_prefixes_in_prose_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    "NGC_API_KEY=nvapi-[your-key]",  # a placeholder inside a value
    "OPENAI_API_KEY=sk-<your-key-here>",
    "set NVIDIA_API_KEY to your nvapi-... key",
    "never paste sb_secret_* keys into chat",
    "print(1//0)",
    "ya29. is the prefix of a Google access token",
    "dp.st. tokens are Doppler service tokens",
])
def test_prefixes_without_a_token_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ('{"auths": {"ghcr.io": {"auth": "Ym9iOmh1bnRlcjI="}}}', "Ym9iOmh1bnRlcjI="),
    ('{\n  "auths": {\n    "registry.example.com": {\n      "auth": "YWRtaW46U3VwM3JTM2NyZXQ="\n    }\n  }\n}',
     "YWRtaW46U3VwM3JTM2NyZXQ="),
    ("_auth=Ym9iOmh1bnRlcndvcmQ=", "Ym9iOmh1bnRlcndvcmQ="),
    ("registry=https://npm.example.com/\n_auth = Ym9iOmh1bnRlcndvcmQ=\nalways-auth=true", "Ym9iOmh1bnRlcndvcmQ="),
    ("npm config set _auth Ym9iOmh1bnRlcjI=", "Ym9iOmh1bnRlcjI="),
    ("//npm.example.com/:_password=aHVudGVyd29yZA==", "aHVudGVyd29yZA=="),
    ("yarn config set npmAuthToken hunterword", "hunterword"),
    ('npmRegistries:\n  "https://npm.example.com":\n    npmAuthToken: hunterword', "hunterword"),
])
def test_registry_client_configs(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    '{"auth": "required"}',
    '{"auth": "none", "cors": true}',
    '{"auth": "$AUTH"}',
    "_auth = self._make_auth()",
    "_auth = None",
    'npmAuthToken: "${NPM_TOKEN}"',
    "yarn config get npmAuthToken",
])
def test_registry_config_near_misses_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("cargo login hunterwordtoken", "hunterwordtoken"),
    ("cargo login --registry my-reg hunterwordtoken", "hunterwordtoken"),
    ("vault login hunterwordtoken", "hunterwordtoken"),
    ("aws configure set aws_secret_access_key hunterword", "hunterword"),
    ("aws configure set default.aws_session_token hunterword --profile dev", "hunterword"),
    ("aws configure set profile.dev.aws_secret_access_key hunterword", "hunterword"),
    ("poetry config pypi-token.pypi hunterword", "hunterword"),
    ("poetry config http-basic.private bob hunterword", "hunterword"),
    ("netlify env:set API_TOKEN hunterword", "hunterword"),
    ("netlify env:set DB_URL 'postgres://u@h/db' --context production", "postgres://u@h/db"),
    ("twine upload -u __token__ -p hunterword dist/*", "hunterword"),
    ("gh auth login --with-token <<< hunterwordtoken", "hunterwordtoken"),
    ("docker login ghcr.io -u bob --password-stdin <<< 'hunterword'", "hunterword"),
    ("echo hunterword | wrangler secret put API_KEY", "hunterword"),
    ("printf '%s' hunterword | gh secret set DEPLOY_PASS", "hunterword"),
    ("echo -n hunterword | gcloud secrets versions add db-pass --data-file=-", "hunterword"),
    ("doppler secrets set API_KEY hunterword", "hunterword"),
    ("doppler secrets set --silent API_KEY=hunterword", "hunterword"),
    ("supabase secrets set STRIPE_KEY=hunterword", "hunterword"),
    ("az keyvault secret set --vault-name kv --name db-pass --value hunterword", "hunterword"),
    ("http -a bob:hunterword https://api.example.com/me", "hunterword"),
    ("https --verify=no -a 'bob':hunterword POST api.example.com/items", "hunterword"),
    ("xh -a bob:hunterword get api.example.com", "hunterword"),
])
def test_tokens_given_to_clis(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text", [
    "cargo login",  # reads the token from stdin
    "cargo login --registry my-reg",
    "vault login",
    "vault login -method=github",
    "vault login -method=userpass username=bob",
    "aws configure set region eu-west-1",
    "aws configure set default.aws_secret_access_key $AWS_SECRET",
    "poetry config virtualenvs.in-project true",
    "poetry config http-basic.private bob",  # prompts
    "netlify env:set API_TOKEN",
    "netlify env:list",
    "twine upload dist/*",
    'gh auth login --with-token < token.txt',
    'docker login -u bob --password-stdin <<< "$CR_PAT"',
    "doppler secrets set API_KEY",  # prompts
    "supabase secrets set --env-file .env",
    "az keyvault secret set --vault-name kv --name db-pass --file secret.txt",
    "gcloud secrets versions add db-pass --data-file=secret.txt",
    "ls -a x:y",
    "http -a bob https://api.example.com/me",  # prompts for the password
    "git commit -a -m 'fix: a:b'",
])
def test_cli_forms_without_a_token_survive(text):
    assert redact(text) == text
