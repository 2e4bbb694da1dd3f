"""Credential forms that passed the rules (each checked to pass first): a word-only token in a URL's query, a
password given to psql's -W (which takes none, but agents write it so), MinIO's `mc alias set` keys, rclone's
`config create` secrets, a value given to `vercel env add`, and a password word after its label in Portuguese and
the other languages (`senha: hunter`, as `password: hunter` is taken). Each with the near misses that must survive."""

from __future__ import annotations

import pytest

from kg.redaction.redact import load_default


def redact(text: str) -> str:
    return load_default().redact(text).text


@pytest.mark.parametrize("text, secret", [
    ("curl https://api.example.com/v1/items?token=hunterword", "hunterword"),
    ("GET /export?format=csv&access_token=letmeinplease HTTP/1.1", "letmeinplease"),
    ("https://gitlab.example.com/api/v4/projects?private_token=correcthorse", "correcthorse"),
    ("wss://feed.example.com/stream?api_key=opensesame#top", "opensesame"),
    ("https://example.com/hook?secret=swordfish", "swordfish"),
])
def test_a_word_only_token_in_a_url_query(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:password_in_url]" in out
    assert redact(out) == out


@pytest.mark.parametrize("text", [
    "https://api.example.com/v1/items?page_token=next&limit=20",
    "https://api.example.com/v1/items?token=true",
    "https://api.example.com/v1/items?token=$TOKEN",
    "https://api.example.com/v1/items?token={token}",
    "https://api.example.com/v1/items?token=<your-token>",
    "https://api.example.com/v1/items?token=YOUR_TOKEN",
    "https://api.example.com/v1/items?token=",
    "https://api.example.com/v1/items?sort=token&order=asc",
    "the csrf_token=abc field of the form",
])
def test_url_queries_without_a_token_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("psql -h db.internal -U postgres -W Xq9vLp2mTr", "Xq9vLp2mTr"),
    ("psql -U admin -W 's3cret pw!' -d app", "s3cret pw!"),
    ("psql -U admin -W s3cretPw! -d app", "s3cretPw!"),
    ("psql --host=db -U app --password Hunter2Hunter2", "Hunter2Hunter2"),
])
def test_a_password_after_psql_w(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text", [
    "psql -U postgres -W mydb",  # -W takes no value: the word after it is the database
    "psql -h localhost -U postgres -W app_db2",
    "psql -U postgres -W -d app",
    "psql -W",
    "psql -U postgres -W postgres",
])
def test_psql_w_before_a_database_survives(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("mc alias set myminio https://minio.example.com:9000 minioadmin Sup3rS3cretKey99", "Sup3rS3cretKey99"),
    ("mc alias set local http://localhost:9000 admin hunterword --api S3v4", "hunterword"),
    ("mc config host add s3 https://s3.amazonaws.com AKIAEXAMPLEACCESS 'wJalr/XUtnFEMI+K7MDENG'",
     "wJalr/XUtnFEMI+K7MDENG"),
    ("mc admin user add myminio newuser Passw0rdLong", "Passw0rdLong"),
])
def test_minio_client_keys(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text", [
    "mc alias set myminio https://minio.example.com:9000",  # prompts for the keys
    "mc alias set myminio https://minio.example.com:9000 $ACCESS $SECRET",
    "mc alias list",
    "git config alias set up for the host add step",
])
def test_minio_client_without_keys_survives(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("rclone config create r2 s3 provider Cloudflare access_key_id abc secret_access_key hunter22pass", "hunter22pass"),
    ("rclone config create box sftp host h.io user bob pass swordfish", "swordfish"),
    ("rclone config update gdrive client_secret=GOCSPX-abcdefgh", "GOCSPX-abcdefgh"),
    ("rclone config create b2 b2 account 0012ab key K001abcdefghij", "K001abcdefghij"),
    ("rclone obscure hunterword", "hunterword"),
])
def test_rclone_config_secrets(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text", [
    "rclone config create box sftp host h.io user bob",
    "rclone copy remote:key local/",
    "rclone config create s3 s3 env_auth true",
    "rclone obscure -",  # reads the password from stdin
])
def test_rclone_without_a_secret_survives(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("echo -n Zq8wXv2RkT9 | vercel env add STRIPE_KEY production", "Zq8wXv2RkT9"),
    ("printf '%s' 'hunterword' | vercel env add DB_PASS production", "hunterword"),
    ("printf %s hunterword | npx vercel env add DB_PASS preview", "hunterword"),
    ("vercel env add API_SECRET production <<< 'Zq8wXv2RkT9'", "Zq8wXv2RkT9"),
    ("vercel env add API_SECRET production --value Zq8wXv2RkT9 --yes", "Zq8wXv2RkT9"),
])
def test_a_value_given_to_vercel_env_add(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:cli_credential]" in out


@pytest.mark.parametrize("text", [
    "vercel env add DB_PASS production",  # prompts
    'echo "$value" | vercel env add "$name" production',
    "cat .env.prod | vercel env add NPM_RC preview",
    "vercel env add API_URL production < url.txt",
    "echo done | vercel env ls",
])
def test_vercel_env_add_without_a_value_survives(text):
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("senha: hunter", "hunter"),
    ("A senha: hunter", "hunter"),
    ("Usuário admin, senha: hunter", "hunter"),
    ("db_senha = cafezinho", "cafezinho"),
    ("contraseña: girasol", "girasol"),
    ("Passwort: Sonnenblume", "Sonnenblume"),
    ("mot de passe : tournesol", "tournesol"),
    ("пароль: podsolnuh", "podsolnuh"),
])
def test_a_password_word_after_its_label_in_other_languages(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out


@pytest.mark.parametrize("text", [
    "senha: Senha",
    "senha:",
    "senha: hunter e o usuário admin",  # not the line's end: prose goes on
    "senha_invalida: Inválida",  # a label's key, not a password's
    "esqueci_senha: Esqueci minha senha",
    "A senha: deve ter 8 caracteres",
    "senha_minima: 8",
    "senha: true",
    "senha: incorreta",  # a form's message
    "Senha: obrigatória",
    "heslo: nové",
])
def test_labels_and_prose_in_other_languages_survive(text):
    assert redact(text) == text
