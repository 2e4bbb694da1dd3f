"""Labelled cases for `bench/redact_quality.py`: secrets that must go and ordinary text that must stay.

Where they come from (development material only; the project is evaluated on other scanners' suites):
- provider secrets: for every provider rule, secrets generated from its regex, as gitleaks' own rule tests do
  (`GenerateSampleSecrets(..., secrets.NewSecret(regex))`), each put into five shapes of agent text;
- hand-labelled secrets and non-secrets drawn from detect-secrets' plugin tests (Yelp/detect-secrets,
  Apache-2.0): Discord, Telegram, Vault, Azure storage, keyword detector, basic auth;
- kg's own contexts: command lines, headers, URLs, .env lines, key blocks;
- ordinary agent text that must come out unchanged: hashes, ids, digests, data URIs, colours, shell
  variables, placeholders, paths, URLs, Chinese, and lines of the real transcripts in shared/data.

A case is (provider, text, secret) for a secret, (provider, text, None) for text that must survive.
Providers are split into development and held-out by a hash of their name, so a rule tuned on what the
development cases showed can be checked on providers that nobody looked at while tuning.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from re import _constants as C  # noqa: N812 - the sre opcodes
from re import _parser as sre_parse

Case = tuple[str, str, str | None]
MULTIWORD = ("new_relic", "microsoft_teams", "cisco_meraki", "defined_networking", "octopus_deploy",
             "hashicorp_tf", "sidekiq", "flutterwave")


def provider_of(kind: str) -> str:
    for prefix in MULTIWORD:
        if kind.startswith(prefix):
            return prefix
    return kind.split("_")[0]


def held_out(provider: str) -> bool:
    """One provider in four, fixed by name: never looked at while tuning rules."""
    return zlib.crc32(provider.encode()) % 4 == 0


# --- secrets from a regex --------------------------------------------------------------------------------

def _sample(tree, rng: random.Random, ignorecase: bool, groups: dict[int, str]) -> str:
    out = []
    for op, av in tree:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append("x" if chr(av) != "x" else "y")
        elif op is C.ANY:
            out.append(rng.choice("abcdef0123"))
        elif op is C.IN:
            out.append(_pick_in(av, rng, ignorecase))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, sub = av
            high = low + 24 if high is C.MAXREPEAT else high
            n = rng.randint(low, min(high, low + 24)) if high > low else low
            out.extend(_sample(sub, rng, ignorecase, groups) for _ in range(n))
        elif op is C.SUBPATTERN:
            group, add_flags, del_flags, sub = av
            ic = (ignorecase or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
            text = _sample(sub, rng, ic, groups)
            if group:
                groups[group] = text
            out.append(text)
        elif op is C.BRANCH:
            out.append(_sample(rng.choice(av[1]), rng, ignorecase, groups))
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is C.GROUPREF_EXISTS:  # (?(user)yes|no): the branch the groups sampled so far choose
            group, yes, no = av
            branch = yes if group in groups else no  # a group that matched, if only the empty string
            out.append(_sample(branch, rng, ignorecase, groups) if branch is not None else "")
        elif op is C.ASSERT and av[0] < 0 and "SUBPATTERN" in str(av[1]):
            # a look-behind that captures (a rule that opens at its keyword and takes the secret before it): what
            # it matches ends here, so it is the text so far
            out[:] = [_sample(av[1], rng, ignorecase, groups)]
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        elif op is C.CATEGORY:
            out.append(_category(av, rng))
        else:  # pragma: no cover - an opcode the rules do not use
            raise ValueError(f"cannot sample {op}")
    return "".join(out)


def _category(cat, rng: random.Random) -> str:
    return {C.CATEGORY_DIGIT: rng.choice("0123456789"), C.CATEGORY_WORD: rng.choice("aBcD3_x9QzK7mN"),
            C.CATEGORY_SPACE: " "}.get(cat, "z")


def _pick_in(items, rng: random.Random, ignorecase: bool) -> str:
    if items and items[0][0] is C.NEGATE:
        return "q"
    choices: list[str] = []
    for op, av in items:
        if op is C.LITERAL:
            choices.append(chr(av))
        elif op is C.RANGE:
            choices.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op is C.CATEGORY:
            choices.extend({C.CATEGORY_DIGIT: "0123456789", C.CATEGORY_SPACE: " ",
                            C.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"}
                           .get(av, "z"))
    char = rng.choice(choices)
    if ignorecase and char.isalpha() and rng.random() < 0.5:
        char = char.swapcase()
    return char


def sample_secret(rule, rng: random.Random) -> str | None:
    """A random secret that `rule`'s secret group accepts, or None if 50 tries find none that the whole
    rule (entropy floor, ignore list) would take in a plain `NAME=secret` line."""
    tree = sre_parse.parse(rule.source)
    target = rule.group if isinstance(rule.group, int) else tree.state.groupdict[rule.group]
    keyed = rule.source.startswith("(?i)(?:")  # the assign template: the shapes supply the key
    sub = _find_group(tree, target) if target and keyed else tree
    ignorecase = bool(tree.state.flags & re.IGNORECASE)
    for _ in range(50):
        groups: dict[int, str] = {}
        whole = _sample(sub, rng, ignorecase, groups)
        secret = groups[target] if target and not keyed else whole
        if len(set(secret)) > 3 and (not rule.min_entropy or _entropy(secret) >= rule.min_entropy):
            return whole if not keyed else secret, secret
    return None


def _find_group(tree, number: int):
    for op, av in tree:
        if op is C.SUBPATTERN:
            if av[0] == number:
                return av[3]
            found = _find_group(av[3], number)
            if found is not None:
                return found
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            found = _find_group(av[2], number)
            if found is not None:
                return found
        elif op is C.BRANCH:
            for branch in av[1]:
                found = _find_group(branch, number)
                if found is not None:
                    return found
    return None


def _entropy(value: str) -> float:
    from kg.redaction.redact import entropy

    return entropy(value)


def provider_cases(redactor, seed: int = 15) -> Iterator[Case]:
    """Generated secrets of every provider rule in five shapes of agent text, and placeholders in the same
    shapes (which must survive)."""
    rng = random.Random(seed)
    for rule in redactor.rules:
        if not rule.keywords or rule.kind in _GENERIC or rule.before_source:
            continue  # (a rule's `before` asks for what stands before its match, a callee's name: no shape holds it)
        keyed = rule.source.startswith("(?i)(?:") and "(?P<secret>" in rule.source  # the assign template
        word = rule.keywords[0].strip("_.-:~ ") or rule.kind
        upper = re.sub(r"\W", "_", word).upper()
        provider = provider_of(rule.kind)
        for _ in range(2):
            sample = sample_secret(rule, rng)
            if sample is None:
                continue
            text, secret = sample
            if keyed:
                shapes = [f"export {upper}_API_KEY={text}", f'{{"{word}_secret": "{text}"}}',
                          f"{word}_token: {text}", f"{word}.apiKey = '{text}';",
                          f'Set {upper}_KEY="{text}" in .env and rerun']
            elif rule.window:
                shapes = [f"export {upper}_TOKEN={text}", f'{{"{word}": "{text}"}}',
                          f"{word} token {text} (rotate it)", f"{upper}={text}",
                          f"the {word} value is {text} now"]
            else:
                shapes = [f"export {upper}_TOKEN={text}", f'{{"token": "{text}", "ok": true}}',
                          f"I set the token to {text} and the call worked",
                          f"curl -H 'Authorization: Bearer {text}' https://api.example.com/v1",
                          f"config:\n  credentials: {text}\n  region: eu-west-1"]
            for text in shapes:
                yield provider, text, secret
        for placeholder in (f"your-{word}-key-here", f"<{word}_token>", f"${{{upper}_API_KEY}}", "xxxxxxxxxxxxxxxx",
                            f"{upper}_API_KEY"):
            yield provider, f"export {upper}_API_KEY={placeholder}", None
            yield provider, f'{{"{word}_secret": "{placeholder}"}}', None


_GENERIC = {"password_assignment", "high_entropy_secret", "env_secret", "key_assignment", "cli_credential",
            "authorization_header", "api_key_header", "bearer_token", "basic_auth", "password_in_url",
            "ci_secure_value", "private_key", "discord_bot_token", "telegram_bot_token", "kubernetes_secret",
            "secret_list", "session_cookie", "azure_sas_token",
            # forms of config files (a line of .npmrc or .yarnrc.yml, a docker config's "auth"), not token formats:
            # the five shapes would take them out of their line or their JSON
            "npm_config_auth", "docker_config_auth",
            # a key file's field named in the match (`"private_key_id": "<hex>"`), not a token format
            "private_key_id"}


# --- hand-labelled cases ----------------------------------------------------------------------------------

# (provider, text, secret); from detect-secrets' plugin tests unless marked kg.
LABELLED: list[Case] = [
    ("discord", "bot token MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
     "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("discord", "DISCORD_TOKEN=Nzk5MjgxNDk0NDc2NDU1OTg3.YABS5g.2lmzECVlZv3vv6miVnUaKPQi2wI",
     "Nzk5MjgxNDk0NDc2NDU1OTg3.YABS5g.2lmzECVlZv3vv6miVnUaKPQi2wI"),
    ("discord", "client.login('MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC') # discord bot",
     "MZ1yGvKTjE0rY0cV8i47CjAa.uRHQPq.Xb1Mk2nEhe-4iUcrGOuegj57zMC"),
    ("discord", "MZ1yGvKTj0rY0cV8i47CjAa.uHQPq.Xb1Mk2nEhe-4icrGOuegj57zMC is not a token", None),
    ("telegram", "bot110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw", "110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw"),
    ("telegram", "TELEGRAM_TOKEN=7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM",
     "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM"),
    ("telegram", "foo:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM", None),
    ("vault", "VAULT_TOKEN=hvs.wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx", "hvs.wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"),
    ("vault", "vault login s.wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx", "s.wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"),
    ("vault", "MyClass.atLeast24CharactersField", None),
    ("vault", "hvs.wWPw5k4aXcaT is short", None),
    ("azure", "AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
     "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ=="),
    ("azure", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=\"lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170X"
     "u592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==\";EndpointSuffix=core.windows.net",
     "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ=="),
    ("azure", "resolution: {integrity: sha512-/AazAV/F+HK4LIywF9C+NYHcJo038zEnWkteilcxC1FM/uK/4NVGDKGrxx7nNq1ybsp"
     "AroRKT4I1"
     "FHfxQzxkUw==}", None),
    ("keyword", 'apikey := "{{h}o)p${e]nob(ody[finds>-_$#thisone}}"', "{{h}o)p${e]nob(ody[finds>-_$#thisone}}"),
    ("keyword", "the_password='hopenobodyfindsthisone'", "hopenobodyfindsthisone"),
    ("keyword", '"theapikey": "hopenobodyfindsthisone1"', "hopenobodyfindsthisone1"),
    ("keyword", "my_password = True", None),
    ("keyword", "login(username=username, password=password)", None),
    ("keyword", "apiKey: this.apiKey,", None),
    ("keyword", "$password = $input;", None),
    ("keyword", "password: ${link}", None),
    ("basic_auth", "https://username:password1@yelp.com", "password1"),
    ("basic_auth", "http://localhost:5000/<%= @variable %>", None),
    # kg: what agents type
    ("curl", "curl -u admin:Sup3rS3cret! https://api.example.com", "Sup3rS3cret!"),
    ("curl", "curl --user deploy:hunter2hunter2 -X POST https://ci.example.com/job", "hunter2hunter2"),
    ("curl", "curl --user=bob:Tr0ub4dor3 https://x.example.com", "Tr0ub4dor3"),
    ("curl", "curl -H 'Authorization: Token 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.example.com",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("curl", 'curl -H "Authorization: Api-Token dt0c01.AB12CD34EF" https://x', "dt0c01.AB12CD34EF"),
    ("curl", "curl -H 'X-Auth-Token: 7c2b0a9e-41f3-4c55-9b1e-23c8d1f0aa42' https://x",
     "7c2b0a9e-41f3-4c55-9b1e-23c8d1f0aa42"),
    ("cli", "mysql -h db -uroot -pMyS3cretPw app", "MyS3cretPw"),
    ("cli", "PGPASSWORD=pgS3cret99 psql -h localhost -U app", "pgS3cret99"),
    ("cli", "docker login -u ci -p dckr_pat_Ab12Cd34Ef56Gh78 registry.example.com", "dckr_pat_Ab12Cd34Ef56Gh78"),
    ("cli", "echo x | sshpass -p 'r00tPassw0rd' ssh root@10.0.0.5", "r00tPassw0rd"),
    ("cli", "pg_dump --password=Secr3tPass --host db", "Secr3tPass"),
    ("cli", "redis-cli -h cache -a R3disPassw0rd ping", "R3disPassw0rd"),
    ("cli", "helm repo add acme https://charts.example.com --username me --password h3lmS3cret", "h3lmS3cret"),
    ("url", "git clone https://oauth2:glpat-Zx9Yw8Xv7Uu6Tt5Ss4Rr@gitlab.example.com/g/p.git",
     "glpat-Zx9Yw8Xv7Uu6Tt5Ss4Rr"),
    ("url", "DATABASE_URL=postgres://app:p4ssW0rdDb@db.internal:5432/app", "p4ssW0rdDb"),
    ("url", "redis://:r3dis-pw@cache:6379/0", "r3dis-pw"),
    ("env", "export STRIPE_SECRET_KEY_LIVE=whsec_51Hx2AbCdEfGhIjKlMnOp", "whsec_51Hx2AbCdEfGhIjKlMnOp"),
    ("env", "SECRET_KEY_BASE=9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d", "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d"),
    ("env", "DB_PASSWORD_PROD='correct horse battery staple'", "correct horse battery staple"),
]

ORDINARY: list[str] = [
    "commit 3f2a9c1e5b7d9f0a1b2c3d4e5f60718293a4b5c6 fixed the flaky test",
    "git show 3f2a9c1 && git log --oneline -5",
    "uuid 203db13e-70c7-462b-9a3d-bf32640cb0be for the session",
    '"integrity": "sha512-/AazAV/F+HK4LIywF9C+NYHcJo038zEnWkteilcxC1FM/uK/4NVGDKGrxx7nNq1ybspAroRKT4I1FHfxQzxkUw=="',
    "image: ghcr.io/acme/api@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAC"
    "hwGA60e6kgAAAABJRU5ErkJggg==)",
    "color: #ff00aa; background: #1e1e1e;",
    "export API_KEY=$TOKEN",
    'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user',
    "TOKEN=${API_KEY:-x} ./run.sh",
    "SUMO_ACCESS_KEY=${SUMO_ACCESS_KEY:=$2}",
    'api_key = "your-key-here"',
    "OPENAI_API_KEY=<token>",
    "password: xxxx",
    "access_token=ACCESS_TOKEN",
    '{"api_key": "insert_key_here"}',
    "see /home/user/projects/kaizen2/src/kg/redact.py:42 and ./tests/unit/test_redact.py",
    "https://github.com/Yelp/detect-secrets/blob/master/README.md?plain=1#L10",
    "https://example.com/wp-content/uploads/2018/05/2018-250-xoxo-indieweb-1.jpg",
    "密码重置流程坏了，令牌过期了",
    "用户说：请记住这个仓库用 pnpm，不要用 npm",
    "max_tokens: 512, temperature: 0.2",
    "token_count = 3",
    "the token: it expires soon",
    "Use a bearer token for auth; basic auth is disabled.",
    "password reset flow is broken",
    "model: claude-sonnet-4-20250514",
    '"tool_use_id": "toolu_01Hx3kQ9ZpL2vN8mR4tY6wB1", "requestId": "req_011CRd9Vb7Wm2sK4pQ8xZ3nL"',
    "task-1234567890abcdefghijk done, disk-usage-report-2024abc ok",
    "git push -u origin main",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "ssh -p 2222 deploy@host",
    "pip install -U pytest --user",
    "npm ci && npm run build -- --mode production",
    "kubectl get secret db-creds -o yaml",
    "const token = await getToken();",
    "password = os.environ['DB_PASSWORD']",
    "secret_key = settings.SECRET_KEY",
    "aws s3 cp s3://bucket/key.json ./key.json",
    "The API key goes in the X-Api-Key header.",
    "Authorization header missing: got 401",
    "Error: ENOENT: no such file or directory, open '/tmp/x.json'",
    "sha256sum dist/kg-0.4.0.tar.gz",
    "AKIANOTREAL is too short",
    "MyClass.atLeast24CharactersField = 3",
    "this.is.a.long.dotted.name.for.something",
    "--mount=type=secret,id=npmrc,target=/root/.npmrc",
    "pytest -k 'test_redact and not slow' -x -q",
    "version 1.2.3-beta.4+build.5678",
    "ERR-20261130-001 and les-20261130-002 are linked",
    "cd ~/work && ls -la ~/.ssh/",
    "export PATH=$HOME/.local/bin:$PATH",
    "secure: true",
    "token: null, secret: false",
    # written for the false-redaction work of issue 15 (general kinds of ordinary text, none from a labelled set):
    # code, config references and templates, placeholders, hashes and ids, paths, shell lines, prose
    "const apiKeyHeaderName = 'X-Api-Key'; const tokenRefreshIntervalMs = 300000;",
    'def get_access_token_from_refresh_token(refresh_token: str) -> str:',
    'secretsManagerClient.getSecretValue({ SecretId: secretArn })',
    'password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())',
    "token = jwt.encode(payload, settings.JWT_SIGNING_KEY, algorithm='HS256')",
    "if (!authToken) throw new UnauthorizedError('missing auth token');",
    'apiKey: process.env.OPENAI_API_KEY,',
    "secret: config.get('session.secret'),",
    'access_key = boto3.Session().get_credentials().access_key',
    "api_key=os.getenv('ANTHROPIC_API_KEY')",
    'token: ${{ secrets.GITHUB_TOKEN }}',
    'password: {{ .Values.postgres.password }}',
    "client_secret = request.form['client_secret']",
    'PRIVATE_KEY_PATH=/etc/ssl/private/server.key',
    'SECRET_KEY_FILE=./config/secret.key',
    'export GITHUB_TOKEN=$(gh auth token)',
    'export NPM_TOKEN="$(cat ~/.npm-token)"',
    'TOKEN=`cat token.txt`',
    'API_KEY="${API_KEY}"',
    'password=%(db_password)s',
    'secret_key: !ENV ${SECRET_KEY}',
    "token = '<YOUR_TOKEN>'",
    'api_key: REPLACE_ME',
    'OPENAI_API_KEY=sk-...',
    'export STRIPE_SECRET_KEY=sk_test_...',
    "password: '********'",
    "apiKey: 'YOUR_API_KEY_HERE'",
    'token: "<redacted>"',
    'access_token: {access_token}',
    'sha1: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12',
    'checksum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'etag: "33a64df551425fcc55e4d42a148795d9f25f89d4"',
    'request_id=8f14e45fceea167a5a36dedd4bea2543',
    "nonce = 'r4nd0mN0nc3V4lu3'",
    'commit_sha: 9fceb02d0ae598e95dc970b74767f19372d61af8',
    'session_id: sess_01JD3K9Z8Y7X6W5V4U3T2S1R0Q',
    'trace_id=4bf92f3577b34da6a3ce929d0e0e4736',
    "buildHash: 'a1b2c3d4e5f6a7b8'",
    'cacheKey: node-modules-v2-Linux-3f5e8c1b9d',
    "key: ${{ runner.os }}-pip-${{ hashFiles('**/requirements.txt') }}",
    "primary_key = 'user_account_id'",
    'sort_key: createdAtTimestamp',
    'partition_key = "tenant#2024-01#region-eu"',
    'keyFile: /var/lib/kubelet/pki/kubelet-client-current.pem',
    'token_path = ~/.config/gh/hosts.yml',
    'credentials: ~/.aws/credentials',
    'secretName: my-app-tls-secret-2024',
    'key: config/master.key',
    'https://storage.googleapis.com/bucket/path/to/object.tar.gz?generation=1700000000000000',
    'see https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/creating-a-personal-access-token',
    'gh secret set API_TOKEN --body "$API_TOKEN"',
    'kubectl create secret generic db --from-literal=password=$DB_PASS',
    'aws configure set aws_secret_access_key $AWS_SECRET_ACCESS_KEY',
    'docker login -u $DOCKER_USER -p $DOCKER_PASS',
    'mysql -u root -p mydb',
    'curl -u "$USER:$PASS" https://api.example.com',
    "ssh-keygen -t ed25519 -C 'me@example.com' -f ~/.ssh/id_ed25519",
    'openssl rand -base64 32',
    'git config --global credential.helper store',
    '--token-file /run/secrets/token',
    '--password-stdin < ~/.docker/pass.txt',
    'The tokenizer splits text into tokens; the key insight is caching.',
    'Rotate the API key monthly and store the secret in Vault.',
    'password must be at least 12 characters',
    'The auth flow: client -> /authorize -> callback -> token exchange',
    'api_version: 2024-06-01',
    'tokenizer: cl100k_base',
    'secret_scanning: enabled',
    'keyboard_layout: us-intl',
    'key_bindings: ctrl+shift+p',
]


def transcript_lines(data: Path, limit: int = 3000) -> list[str]:
    """Lines of the real transcripts (Claude Code JSONL text blocks and SpecStory chats), 20+ characters."""
    lines: list[str] = []
    for path in sorted((data / "transcripts").rglob("*")):
        if path.is_file() and path.suffix in (".md", ".jsonl"):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if 20 <= len(line) <= 2000:
                    lines.append(line)
    rng = random.Random(3)
    rng.shuffle(lines)
    return lines[:limit]


# --- realistic labelled cases (tests/data/secrets) --------------------------------------------------------

CASES_DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets"
REALISTIC_SETS = {"gitleaks": "gitleaks_cases.jsonl", "gitleaks-generated": "gitleaks_generators.jsonl",
                  "detect-secrets": "detect_secrets_cases.jsonl"}
# gitleaks' own sample shapes (`utils.GenerateSampleSecrets` in cmd/generate/config/utils/generate.go, MIT): the
# ways a rule's test puts a generated secret into config files and code. `{i}` is the rule's identifier.
SAMPLE_SHAPES = (
    '{i}Token="{s}"', '{i}Token = "{s}"', "{i}Token={s}", "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}', '\\{\n    \\"{i}_token\\": \\"{s}\\"\n\\}',
    "<{i}Token>{s}</{i}Token>", "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}", "{i}_token: '{s}'", '{i}_token: "{s}"', "{i}_token: |\n  {s}", "{i}_token: >\n  {s}",
    'string {i}Token = "{s}";', 'var {i}Token string = "{s}"', '{i}Token := "{s}"', "{i}Token := `{s}`",
    'String {i}Token = "{s}";', 'var {i}Token = "{s}"', '${i}Token .= "{s}"', "{i}Token = '{s}'",
    '{i}Token = "{s}"', "{i}Token,{s},", '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"', '{i}_TOKEN := "{s}"', '{i}_TOKEN ::= "{s}"', '{i}_TOKEN :::= "{s}"', '{i}_TOKEN ?= "{s}"',
    '{i}_TOKEN += "{s}"',
)
SINGLE_SHAPE = '{i}_api_token = "{s}"'  # `utils.GenerateSampleSecret`


def realistic_cases(name: str) -> list[dict]:
    """One scanner's own labelled examples, copied with attribution (see tests/data/secrets/README.md): dicts
    with provider, text, secret (None for text that must survive), source, and `placeholder` for positives
    that are placeholders by kg's definition (`SKxxxx...`), which kg keeps on purpose. The generators file
    is expanded by `generated_cases`."""
    with open(CASES_DIR / REALISTIC_SETS[name], encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return generated_cases(rows) if name == "gitleaks-generated" else rows


def generated_cases(rows: list[dict], seed: int = 8) -> list[dict]:
    """gitleaks' generated true positives, made the way its rule tests make them: `secrets.NewSecret(regex)`
    (a random string the regex matches; here drawn with a fixed seed) put into the rule's sample shapes.
    Rules with one sample shape get three secrets, so each provider has a few cases."""
    rng = random.Random(seed)
    cases = []
    for row in rows:
        tree = sre_parse.parse(row["regex"])
        shapes = row["shapes"]
        if shapes == "samples":
            shapes, draws = SAMPLE_SHAPES, 1
        else:
            shapes, draws = ([SINGLE_SHAPE] if shapes == "single" else shapes), 3
        for _ in range(draws):
            secret = _sample(tree, rng, False, {})
            for shape in shapes:
                text = shape.replace("{i}", row["identifier"]).replace("{s}", secret)
                cases.append({"provider": row["provider"], "text": text, "secret": secret, "source": row["source"]})
    return cases


def transcript_files(data: Path) -> list[Path]:
    """Every text file of real agent sessions in shared/data: transcripts and runtime payloads (gzip too)."""
    roots = [data / "transcripts", data / "runtimes"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and (p.suffix in (".md", ".jsonl", ".json", ".txt") or p.name.endswith(".jsonl.gz")))


def read_text(path: Path) -> str:
    if path.name.endswith(".gz"):
        import gzip

        return gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    return path.read_text(encoding="utf-8", errors="replace")


# Input built to be slow: runs of keywords, one-character blobs, megabyte values. Redaction stays linear in the
# text on every one (tests/unit/test_redact.py redacts each; bench/redact_quality.py times them).
def adversarial() -> list[str]:
    return [
        "password=" * 120_000,
        "a" * 1_000_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 30_000,
        "-----BEGIN RSA PRIVATE KEY-----\n" + "A" * 1_000_000,
        "://" + "a" * 500_000 + ":" + "b" * 500_000,
        "x://a:" * 150_000,
        "eyJ" + "a" * 1_000_000,
        "eyJaaaaaaaaa.eyJ" * 60_000,
        "sk-" * 300_000,
        "token: " + "x" * 1_000_000,
        'secret: "' + "y" * 1_000_000,
        "k=" + "Ab1" * 300_000,
        "k: a1" * 200_000,
        "Bearer " + "z" * 1_000_000,
        "密码：" * 300_000,
        "| password " * 1_000 + "|\n" + "|---" * 1_000 + "|\n" + ("| x1y2z3 " * 1_000 + "|\n") * 120,
        "|password|\n|---|\n" * 60_000,
        "|pw|\n|---|\n" * 60_000,
        "pass |\n" * 150_000,  # a short keyword on every line of a table that has no separator
        "| Pass | Credentials | Secret |\n|---|---|---|\n"
        + ("| a1/" * 10 + "| admin / " + "a" * 60 + " | x:" + "b1" * 40 + " |\n") * 7_000,  # user/password cells
        "htpasswd -b '" * 80_000,
        "htpasswd -b a b c d e f g h i j " * 30_000,
        "ldapsearch " * 100_000,
        "smbclient -U " * 80_000,
        "openssl -k " * 90_000,
        ("jdbc:oracle:thin:" + "a" * 64 + "/" + "b" * 128 + " ") * 4_500,
        ("-----BEGIN RSA PRIVATE KEY-----\n" + '" +\n "' * 10) * 10_000,  # a key in joined string literals
        "-----BEGIN RSA PRIVATE KEY-----\n" + "> \n" * 330_000,
        "senha_" * 170_000,
        "密码_" * 300_000,
        "machine h" + " login u" * 125_000,  # a .netrc entry that never reaches its password
        "default login x " * 62_000,
        "password=a host=" * 62_000,
        'senha_x: "' * 100_000,
        "zip " * 250_000,  # a tool's name on its own, again and again: each is scanned for its -P
        "mongo -p " * 110_000,
        " -password " * 90_000,
        "echo " * 200_000,
        'key="password" value="' * 45_000,
        " password(" * 100_000,
        "identified by '" * 66_000,
        "'password' => " * 70_000,
        "cookie:" * 140_000,
        "?pass=" * 160_000,
        "&session=a1" * 90_000,
        "auth(" * 200_000,
        "password" * 125_000,  # each one a prompt an expect script might answer
        "set -x A_PASSWORD " * 55_000,
        "security add-generic-password " * 33_000,
        "?token=" * 140_000,
        "psql -W " * 120_000,
        "psql -U a " * 100_000 + "-W Ab1!",  # one -W after a long command line
        "mc alias set a b c " * 50_000,
        "mc admin user add a " * 50_000,
        "rclone config create " * 45_000,
        "rclone config create a s3 key " * 33_000,
        "vercel env add " * 65_000,
        "echo a | vercel " * 60_000,
        "senha: " * 140_000,
        "senha: a" * 120_000,
        "nvapi-" + "a1" * 500_000,
        "ya29." * 200_000,
        "1//0" + "a1" * 500_000,
        "dp.st." * 160_000,
        "sb_secret_" * 100_000,
        "AAAAaaaaaaa:APA91b" * 55_000,
        '"auth": "' * 110_000,
        '"auth": "' + "Ab1/" * 250_000,
        "_auth=" * 160_000,
        "config set _auth " + "Ab1/" * 250_000 + " x",
        "npmAuthToken " * 75_000,
        "cargo login --registry " * 40_000,
        "aws configure set a." * 50_000,
        "poetry config http-basic.a " * 35_000,
        "--with-token a " * 65_000,
        "[your-" * 160_000,
        "re_" + "a1B2c3D4_" * 110_000,  # a provider prefix, each followed by a near-token
        "gsk_" + "a1" * 500_000,
        "sk_" * 330_000,
        "key-" * 250_000,
        "fc-" + "a1" * 500_000,
        "doppler secrets set" + " --a" * 250_000,
        "az keyvault secret set " + "a " * 500_000,
        "supabase secrets set " * 47_000,
        "http" + " -a " * 250_000,
        "http -a a:" + " -a a" * 200_000,
    ]
