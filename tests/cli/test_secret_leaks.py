"""Issue 15's done-when: secrets of every supported kind go through every command that writes, then every byte
of the workspace (Kùzu files, WAL, journal, daily logs, .learnings, sessions, skills, preferences, exports) is
scanned for them, also lowercased and in 16-character pieces (a cut or lowercased secret is still a leak), and so
is everything the commands printed (hook output, inject and search answers, messages).

Speed: secrets share commands in batches (ten `kg log` calls instead of one per secret), so the test makes about
forty kg calls against one workspace and scans it once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every write path, each a few kg processes: minutes

# (kind, the text an agent would type, the secret in it). Values are made up; each is distinct.
SECRETS = [
    ("aws_access_key", "AKIAHUGO274PAFHSG4A7", "AKIAHUGO274PAFHSG4A7"),
    ("github_token", "ghp_Runzqw7wZyVGOeUvfJIssDj4PTTKtb2TxxDB", "ghp_Runzqw7wZyVGOeUvfJIssDj4PTTKtb2TxxDB"),
    ("openai_key", "sk-proj-fz5LJF3hBGZW3M4Fz6Hq2AK7EGHZbKoXi0d9", "sk-proj-fz5LJF3hBGZW3M4Fz6Hq2AK7EGHZbKoXi0d9"),
    ("anthropic_key", "sk-ant-api03-TH4QgTNBEjE4o24hOSDRET79IqJzQtJZPGSEZ4zBms1racjP",
     "sk-ant-api03-TH4QgTNBEjE4o24hOSDRET79IqJzQtJZPGSEZ4zBms1racjP"),
    ("slack_token", "xoxb-9787534778768-0457178472671-Pr5FxgmV2AjC6afaCLI71fNY",
     "xoxb-9787534778768-0457178472671-Pr5FxgmV2AjC6afaCLI71fNY"),
    ("slack_webhook", "https://hooks.slack.com/services/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",
     "mphNcWI9rQWOwjauQLKX783F"),
    ("stripe_key", "sk_live_SU8iIoELi9M4SGsfAQk7iYY6Lt", "sk_live_SU8iIoELi9M4SGsfAQk7iYY6Lt"),
    ("google_api_key", "AIzaGAyZjHZmya9gy4ed1wPw7X8bbGEuRtCu6hF", "AIzaGAyZjHZmya9gy4ed1wPw7X8bbGEuRtCu6hF"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJ8DKNZkjLHnBNvDMoRTeJzcmP6lcPI71dC3WPmETR."
     "4biPHnY4H59ikQ2lyrBIA3fytlwlqDFX0AsDluHEChH",
     "eyJ8DKNZkjLHnBNvDMoRTeJzcmP6lcPI71dC3WPmETR.4biPHnY4H59ikQ2lyrBIA3fytlwlqDFX0AsDluHEChH"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\n"
     "MIIEpAIBAAKCAQEAYHYr0g2noa9f4DPvAIY122Ql9bw2kwJRKYInhNTrJWKUnKsK\n"
     "-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAYHYr0g2noa9f4DPvAIY122Ql9bw2kwJRKYInhNTrJWKUnKsK"),
    ("password_in_url", "postgres://app:rQJigYqg9Bkg@db:5432/app", "rQJigYqg9Bkg"),
    ("cli_credential", "curl -u admin:RdWwUZlPOgGu https://ci.example.com", "RdWwUZlPOgGu"),
    ("bearer_token", "Authorization: Bearer rL1es7ukqqeaA355XqA9adgpbthg", "rL1es7ukqqeaA355XqA9adgpbthg"),
    ("authorization_header", "Authorization: Token bae1ca6ed3b8c9b1d09a939d", "bae1ca6ed3b8c9b1d09a939d"),
    ("password_assignment", "password=uL5bI9vmJdUh", "uL5bI9vmJdUh"),
    ("env_secret", "DB_PASSWORD_PROD=kNhhciHwMPPt", "kNhhciHwMPPt"),
    ("cli_credential", "mysql -uroot -pbBLiwAyypXA app", "bBLiwAyypXA"),
    ("gitlab_pat", "glpat-QoXilIbQT7IRJz4qYjob", "glpat-QoXilIbQT7IRJz4qYjob"),
    ("pypi_upload_token", "pypi-AgEIcHlwaS5vcmcbrIEAq9ui8OLf1lJcP390G0qvOHWVudQ1aOpEdoRG3j7V53zTx8YoJ1rv3mx",
     "pypi-AgEIcHlwaS5vcmcbrIEAq9ui8OLf1lJcP390G0qvOHWVudQ1aOpEdoRG3j7V53zTx8YoJ1rv3mx"),
    ("vault_service_token", "vault login s.wDODJZE5YRLtmkOAjF5a8w09", "s.wDODJZE5YRLtmkOAjF5a8w09"),
    ("sendgrid_api_token", "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",
     "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"),
    ("telegram_bot_token", "bot309765828:AAbluIjkb4hGQ4TPXa1xextnIjMNpiguFg3",
     "309765828:AAbluIjkb4hGQ4TPXa1xextnIjMNpiguFg3"),
    ("discord_bot_token", "discord bot MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
     "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("npm_access_token", "npm_1UeyqNtPhwE6FhJHp1wR0D6LwfeXfZFXtqWQ", "npm_1UeyqNtPhwE6FhJHp1wR0D6LwfeXfZFXtqWQ"),
    ("api_key_header", "curl -H 'X-Api-Key: okuBGJvu65UQ2FzulmZDo3S6wWY' https://x", "okuBGJvu65UQ2FzulmZDo3S6wWY"),
    ("1password_service_account_token", "OP_TOKEN=ops_eyJ" + "wA1ZLynjCVKQViBrv1hur13CqjI" * 24,
     "ops_eyJ" + "wA1ZLynjCVKQViBrv1hur13CqjI" * 24),
    # bare formats from detect-secrets' plugins, a Kubernetes Secret, and gitleaks' assignment shapes (YAML block,
    # escaped JSON, CSV)
    ("discord_bot_token", "NzA3Mjk2MTQ1NTM2MzI3NzEx.XkP2aQ.Hq8vRw3LzT1nYb6Ue0cJmKs9D2f",
     "NzA3Mjk2MTQ1NTM2MzI3NzEx.XkP2aQ.Hq8vRw3LzT1nYb6Ue0cJmKs9D2f"),
    ("okta_api_token", "okta says 00Oj5TZd2WLVG8n-4CPs-rf-pb7IjWH7aWZAfHc8hx",
     "00Oj5TZd2WLVG8n-4CPs-rf-pb7IjWH7aWZAfHc8hx"),
    ("gitlab_token", "GL_SCIM=glsoat-VG9indb0dfQFS_XDpIGTMnGr8SDNJuhqx8cfpMXK",
     "glsoat-VG9indb0dfQFS_XDpIGTMnGr8SDNJuhqx8cfpMXK"),
    ("azure_function_key",
     "https://kgfunc.azurewebsites.net/api/ingest?code=i5rh08put2UaR4kCp5jRnBnTWDaalr1uRfTbMuJG9CFRgdc2gRey-b==",
     "i5rh08put2UaR4kCp5jRnBnTWDaalr1uRfTbMuJG9CFRgdc2gRey-b=="),
    ("kubernetes_secret",
     "apiVersion: v1\nkind: Secret\ndata:\n  extra: c3VwZXItc2VjcmV0LWRiLXBhc3N3b3JkLWZvci1rZw==\n",
     "c3VwZXItc2VjcmV0LWRiLXBhc3N3b3JkLWZvci1rZw=="),
    ("cloudflare_api_key", "cloudflare_token: |\n  5peyuouy5e5fzq2es79y5ipftgajcmifqqc322gp",
     "5peyuouy5e5fzq2es79y5ipftgajcmifqqc322gp"),
    ("fastly_api_token", '\\{\\n  \\"fastly_token\\": \\"6unvbcesg75725s3abzv6xs8rz3d5aue\\"\\n\\}',
     "6unvbcesg75725s3abzv6xs8rz3d5aue"),
    ("linear_api_key", "linearToken,lin_api_tnCHOl7x4fflF5uBi0llUQgc3uGL0WL67B7xrKnK,",
     "lin_api_tnCHOl7x4fflF5uBi0llUQgc3uGL0WL67B7xrKnK"),
    # credentials as an agent lists them (a Markdown label, a value in backticks) and under a label in Russian
    ("password_in_prose", "- **Password:** `Wq83!mZpTkv`", "Wq83!mZpTkv"),
    ("password_in_prose", "Пароль: Gh47!bNqXyr", "Gh47!bNqXyr"),
]
BLOB = "\n".join(text for _, text, _ in SECRETS)
ONE_LINE = " ; ".join(text for _, text, _ in SECRETS if "\n" not in text and len(text) < 100)
NOW = ["--now", "2026-03-02T10:00"]


def _needles(secret: str) -> set[bytes]:
    """The secret, lowercased too, and every 16-character piece of it (a cut secret is still a leak)."""
    pieces = {secret} if len(secret) <= 16 else {secret[i:i + 16] for i in range(len(secret) - 15)}
    return {p.encode() for p in pieces} | {p.lower().encode() for p in pieces}


def _finder() -> tuple[re.Pattern[bytes], list[tuple[str, set[bytes]]]]:
    """Each kind's needles, lowercased (the text they are looked for in is lowercased too), and a regex for the
    runs of printable characters long enough to hold the shortest needle (no secret here holds a space)."""
    shortest = min(len(secret) if len(secret) < 16 else 16 for _, _, secret in SECRETS)
    runs = re.compile(rb"[!-~]{%d,}" % shortest)
    assert all(runs.fullmatch(secret.encode()) for _, _, secret in SECRETS)
    return runs, [(kind, {piece.lower() for piece in _needles(secret)}) for kind, _, secret in SECRETS]


def _found_in(data: bytes, finder: tuple[re.Pattern[bytes], list[tuple[str, set[bytes]]]]) -> set[str]:
    """Kinds whose needles occur in `data`. Only its runs of printable characters can hold one, so they are cut
    out first (one regex pass): a 36 MB Kùzu file is mostly pages of zeros, and the needles are then looked for
    in a far smaller text instead of 1,200 times over the whole file."""
    runs, needles = finder
    text = b"\n".join(runs.findall(data)).lower()
    return {kind for kind, pieces in needles if any(piece in text for piece in pieces)}


def _files(root: Path) -> list[Path]:
    """Every file of the workspace but the parsed packaged rules (memory/.kg/cache, kg/redaction/cache.py): built
    from rules/secrets*.toml alone, never from anything logged, they hold each provider's fixed prefix by design
    (pypi's `pypi-AgEIcHlwaS5vcmc`), as the rule files do. (`rules-checked`, the digest of a kg.toml's rules
    checked, is scanned like any file.)"""
    cache = root / "memory" / ".kg" / "cache"
    parsed = [p for p in cache.glob("*") if p.name.startswith("secret-rules-") and p.suffix == ".marshal"]
    assert {p.name for p in cache.glob("*")} - {p.name for p in parsed} <= {"rules-checked"}  # nothing else
    return sorted(p for p in root.rglob("*") if p.is_file() and p not in parsed)


def _leaks(root: Path) -> list[tuple[str, str]]:
    finder = _finder()
    return [(str(path.relative_to(root)), kind) for path in _files(root)
            for kind in sorted(_found_in(path.read_bytes(), finder))]


def test_the_scan_finds_a_cut_or_lowercased_secret(tmp_path):
    secret = SECRETS[1][2]
    (tmp_path / "a").write_bytes(b"x" + secret[3:20].lower().encode() + b"y")
    (tmp_path / "b").write_bytes(b"nothing here " * 1000)
    short = SECRETS[10][2]  # 12 characters, alone between a space and a zero byte
    (tmp_path / "c").write_bytes(b"\x00" * 4096 + b"pw " + short.encode() + b"\x00" * 4096)
    assert _leaks(tmp_path) == [("a", SECRETS[1][0]), ("c", SECRETS[10][0])]


def _short(kind: str, text: str, secret: str) -> str:
    one_line = text.replace("\n", " ")
    return one_line if len(one_line) <= 190 else secret


def _batches() -> list[list[tuple[str, str, str]]]:
    """The secrets in groups whose short forms fit in one --area (200 characters, with room for ' ; '); the limit
    is checked after redaction, so a secret longer than that alone still fits as its marker."""
    from kg.redaction.redact import redact_text

    def size(item: tuple[str, str, str]) -> int:  # as kg checks it: after redaction
        return max(len(_short(*item)), len(redact_text(_short(*item))))

    out: list[list[tuple[str, str, str]]] = [[]]
    for item in SECRETS:
        fits = sum(size(s) + 3 for s in out[-1]) + size(item) <= 190
        if out[-1] and not fits:
            out.append([])
        out[-1].append(item)
    return out


def test_batches_cover_every_secret_and_fit_the_area_limit():
    batches = _batches()
    assert [s for b in batches for s in b] == SECRETS and len(batches) < len(SECRETS) / 2
    # a lone secret may be longer than 200 characters: its marker is what the limit then sees
    assert all(len(" ; ".join(_short(*s) for s in b)) <= 200 for b in batches if len(b) > 1)


def test_every_supported_kind_is_redacted_by_itself():
    from kg.redaction.redact import load_default

    for kind, text, secret in SECRETS:
        result = load_default().redact(text)
        assert secret not in result.text, kind


def test_no_secret_reaches_the_workspace_through_any_command(run_kg, ws, tmp_path):
    printed: list[tuple[str, str]] = []  # what every command printed (hook output, answers, messages)

    def ok(args, **kw):
        r = run_kg(args, **kw)
        assert r.exit_code == 0, (args[:80] if isinstance(args, str) else args[:3], r.stdout, r.stderr)
        printed.append((" ".join(args[:2]), r.stdout + r.stderr))
        return r

    ok(["session", "start", *NOW])
    for i, batch in enumerate(_batches()):
        # every field gets each secret with the words around it that make it recognisable (a bare password is
        # just a word); area and pattern key are the ones kg lowercases. Several secrets share one command (the
        # area holds at most 200 characters), so a scan still sees every kind in every field.
        texts = [text for _, text, _ in batch]
        one_line = " ; ".join(t.replace("\n", " ") for t in texts)
        short = " ; ".join(_short(kind, text, secret) for kind, text, secret in batch)
        args = ["log", "error", f"push failed with {one_line}", "--error", "\n".join(texts), "--details", BLOB,
                "--context", one_line, "--action", f"rotate {one_line}", "--area", short,
                "--pattern-key", f"auth {short}", "--now", f"2026-03-02T10:{i:02d}"]
        for item in batch:  # repeated options: a comma inside a secret would split a comma-separated list
            args += ["--tags", item[1].replace("\n", " "), "--files", f"cfg/{_short(*item)}"]
        ok(args)
    ok(["log", "learning", f"use the key {SECRETS[2][1]}", "--category", "correction", "--details", BLOB, *NOW])
    ok(["log", "feature", f"store {SECRETS[1][1]}", "--user-context", BLOB, *NOW])
    node = ok(["node", "add", "lesson", f"never paste {SECRETS[0][1]} into chat", "--tags", SECRETS[1][2],
               "--json", *NOW]).json["id"]
    other = ok(["node", "add", "principle", "keep credentials in the vault", "--json", *NOW]).json["id"]
    ok(["edge", "add", node, other, "supports", "--reason", f"key {SECRETS[2][1]} and {SECRETS[13][1]}", *NOW])
    ok(["pref", "set", "deploy_token", SECRETS[1][1], *NOW])
    ok(["pref", "set", "notes", ONE_LINE[:ONE_LINE.rfind(" ; ", 0, 450)], *NOW])
    ok(["skill", "new", "call-api", "-d", f"call with {SECRETS[6][1]}", "--tool",
        "curl -H 'x-key: sk-abc123def456ghi789jkl0'", "--tool", SECRETS[24][1], "--step", SECRETS[11][1],
        "--trigger", SECRETS[17][1], "--pitfall", SECRETS[14][1], "--check", SECRETS[16][1], *NOW])
    ok(["skill", "update", "call-api", "--tool", SECRETS[19][1], "--step", SECRETS[20][1], *NOW])
    ok(["score", "8", "8", "8", "8", "8", "--notes", ONE_LINE, *NOW])
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": f"curl -u admin:RdWwUZlPOgGu -H 'Authorization: Bearer {SECRETS[12][2]}'"},
               "tool_response": {"exit_code": 1, "stderr": ("x" * 3990) + SECRETS[1][2] + "\n" + BLOB}}
    ok(["hook", "post-tool-use", *NOW], input=json.dumps(payload))
    transcript = tmp_path / "chat.md"
    transcript.write_text("".join(
        f"_**User**_\n\nNo, that's wrong: use {text} instead, remember this.\n\n---\n\n"
        f"_**Assistant**_\n\nRunning it.\n\n---\n\n" for _, text, _ in SECRETS), encoding="utf-8")
    ok(["reflect", str(transcript), "--apply", *NOW])
    ok(["hook", "session-end", "--transcript", str(transcript), *NOW])
    ok(["session", "start", *NOW])
    ok(["session", "end", "--summary", f"done with {SECRETS[0][1]}", "--task", SECRETS[3][1], "--learning",
        SECRETS[18][1], "--feedback", SECRETS[21][1], "--open", SECRETS[22][1], *NOW])
    trail = tmp_path / "trail.json"
    trail.write_text(json.dumps({"version": 1, "entries": [], "graph": {
        "nodes": [{"id": "les-20260301-901", "type": "lesson", "content": f"lesson {SECRETS[7][1]}",
                   "tags": [SECRETS[8][1], SECRETS[5][1]], "source": SECRETS[9][1], "created": "2026-03-01"},
                  {"id": "les-20260301-902", "type": "lesson", "content": "second", "created": "2026-03-01"}],
        "edges": [{"from": "les-20260301-901", "to": "les-20260301-902", "type": "supports",
                   "properties": {"reason": f"key {SECRETS[2][1]}", "note": SECRETS[23][1]}}]}}), encoding="utf-8")
    ok(["import", "trail", str(trail), *NOW])
    for fmt in ("json", "graphml", "gexf", "mermaid", "dot", "cypher"):
        ok(["export", "graph", "--format", fmt, "--out", str(ws.root / f"export.{fmt}"), *NOW])
    ok(["export", "trail", "--learnings", *NOW])
    ok(["export", "memory", *NOW])
    ok(["cycle", "--now", "2026-04-15T06:00"])
    ok(["index", "build", *NOW])
    ok(["search", SECRETS[1][2], *NOW])
    ok(["inject", "--message", f"deploy with {SECRETS[6][1]}", *NOW])
    ok(["hook", "session-start", "-m", f"use {SECRETS[0][1]}", *NOW])
    ok(["status"])
    leaks = _leaks(ws.root)
    assert leaks == []
    # every output, `kg search` echoing its query included, holds no secret
    finder = _finder()
    shown = [(command, kind) for command, out in printed for kind in sorted(_found_in(out.encode(), finder))]
    assert shown == []


def test_mcp_answers_are_gated(ws):
    from kg.runtimes.mcp_server import build_server

    search = build_server(ws.root)._tool_manager.get_tool("search")
    for kind, text, secret in SECRETS[:3]:
        answer = search.fn(query=f"why {text}")  # the query is echoed back in the answer
        assert secret not in json.dumps(answer) and answer["query"].startswith("why "), kind


def test_the_journal_holds_no_secret_before_it_is_applied(ws):
    import kg

    w = kg.open_workspace(ws.root)
    for _kind, text, _ in SECRETS:
        w.log("error", f"failed: {text}"[:300].replace("\n", " "), error_text=text, area=text[:150],
              now="2026-03-02T10:00", apply=False)
    journal = w.journal.path  # this store's lane (kg/ingest/journal.py)
    assert journal.stat().st_size > 0
    data = journal.read_bytes()
    assert [kind for kind, _, secret in SECRETS if any(p in data for p in _needles(secret))] == []


@pytest.mark.embedded_only("the read server serves embedded graphs; a team graph is not served")
def test_no_secret_reaches_the_workspace_through_the_read_server(tmp_path):
    """The same scan with the read server on (kg/serve/: the rest of the suite runs with KG_SERVER=0): logs made
    while it holds the graph (it applies the journal), every read it answers with a secret in the question, the
    hook output, and whatever it keeps under memory/.kg (socket, lock, status), all scanned after it stopped."""
    import os
    import subprocess
    import sys

    kg_bin = str(Path(sys.executable).with_name("kg"))
    root = tmp_path / "ws"

    def kg(*args: str, server: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, "KG_SERVER": "1" if server else "0"}
        out = subprocess.run([kg_bin, "-w", str(root), *args], capture_output=True, text=True, input=input,
                             env=env, timeout=300)
        assert out.returncode == 0, (args[:2], out.stdout[-500:], out.stderr[-500:])
        return out

    assert subprocess.run([kg_bin, "init", str(root)], capture_output=True, env={**os.environ, "KG_SERVER": "0"},
                          timeout=300).returncode == 0
    printed: list[str] = []
    try:
        started = json.loads(kg("serve", "start", "--json").stdout)
        assert started["running"]
        for i, batch in enumerate(_batches()):
            one_line = " ; ".join(text.replace("\n", " ") for _, text, _ in batch)
            printed.append(kg("log", "error", f"deploy failed with {one_line}", "--details", BLOB, "--area",
                              " ; ".join(_short(*item) for item in batch), "--now", f"2026-03-02T11:{i:02d}").stdout)
        for batch in _batches():  # each read asks about several secrets at once (and is answered with them)
            one_line = " ; ".join(text.replace("\n", " ") for _, text, _ in batch)
            for args in (["search", "--", batch[0][1].replace("\n", " ")], ["search", "--json", "--", one_line],
                         ["inject", "-m", f"use {one_line}"], ["recall", "--message", f"where is {one_line}", "--json"],
                         ["hook", "session-start", "-m", f"deploy with {one_line}"]):
                printed.append(f"{args[:2]}: " + kg("--now", "2026-03-02T12:00", *args).stdout)
        printed.append(kg("hook", "session-start", "--runtime", "claude-code", "--now", "2026-03-02T12:00",
                          input=json.dumps({"prompt": f"rotate {SECRETS[1][1]}", "session_id": "s1"})).stdout)
        printed.append(kg("status", "--json").stdout)
        assert json.loads(kg("serve", "status", "--json").stdout)["pid"] == started["pid"]  # it answered them
    finally:
        subprocess.run([kg_bin, "-w", str(root), "serve", "stop"], capture_output=True, timeout=300,
                       env={**os.environ, "KG_SERVER": "0"})
    assert _leaks(root) == []
    finder = _finder()
    assert [(out[:30], kind) for out in printed for kind in sorted(_found_in(out.encode(), finder))] == []


def _every_kind() -> list[tuple[str, str, str]]:
    """(kind, text, secret): one secret of every kind the packaged rules find, generated from the rule's own regex
    and put in agent text as bench/redact_cases.py does (the first shape in which kg redacts it: whether each kind is
    found is measured by the bench; here, whether a found one can get past the gate anywhere)."""
    import sys

    from kg.redaction.redact import load_default

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from redact_cases import provider_cases
    finally:
        sys.path.pop(0)
    redactor = load_default()
    out: dict[str, tuple[str, str, str]] = {}
    for _provider, text, secret in provider_cases(redactor):
        if secret is None or len(secret) < 8 or " " in secret:
            continue
        around = text.replace(secret, " ").lower().encode()
        if any(piece in around for piece in _needles(secret)):
            continue  # the variable name made from the rule's keyword holds a piece of the secret: not a leak
        kinds = redactor.redact(text).kinds
        if len(kinds) == 1 and kinds[0] not in out and secret not in redactor.redact(text).text:
            out[kinds[0]] = (kinds[0], text, secret)
    return list(out.values())


def _scan(root: Path, printed: list[tuple[str, str]], secrets: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """(where, kind) of every secret in `secrets` found in the workspace's bytes or in what was printed."""
    shortest = min(min(len(secret), 16) for _, _, secret in secrets)
    finder = (re.compile(rb"[!-~]{%d,}" % shortest),
              [(kind, {piece.lower() for piece in _needles(secret)}) for kind, _, secret in secrets])
    found = [(str(path.relative_to(root)), kind) for path in _files(root)
             for kind in sorted(_found_in(path.read_bytes(), finder))]
    return found + [(where, kind) for where, out in printed for kind in sorted(_found_in(out.encode(), finder))]


@pytest.mark.baseline_wait_off("approves a proposal on the first days: the test is about secrets")
def test_every_kind_and_the_other_commands_and_mcp_tools_keep_secrets_out(run_kg, ws, tmp_path):
    """The commands the scan above does not run (bulk `kg ingest`, pattern keys given to `patterns split`, `resolve`,
    `why`, `show`, `list`, `recall`, the proposals' `skip` reason and `approve`, the codex and openclaw hooks, the
    session brief written to a file, `doctor`) and every MCP tool, with a secret of every kind the rules know; then
    every byte of the workspace and everything printed or answered is scanned for them. As in the scan above, each
    field gets the secret with the words that make it recognisable (the area and pattern key, which kg lowercases,
    included): a bare random string is no secret to any rule."""
    every = _every_kind()
    assert len(every) >= 150  # about two hundred kinds: gitleaks' providers and kg's own
    secrets = SECRETS + every
    printed: list[tuple[str, str]] = []

    def ok(args, **kw):
        r = run_kg(args, **kw)
        assert r.exit_code == 0, (args[:3], r.stdout[-300:], r.stderr[-300:])
        printed.append((" ".join(args[:2]), r.stdout + r.stderr))
        return r

    # every kind through bulk logging: each secret in the summary, details, tags and area of its own entry
    lines = [json.dumps({"kind": "error", "summary": f"call failed: {text}".replace("\n", " ")[:300],
                         "details": text, "tags": [_short(kind, text, secret)], "area": _short(kind, text, secret),
                         "pattern_key": f"auth {_short(kind, text, secret)}", "session": "bulk",
                         "at": "2026-03-02T09:00"}) for kind, text, secret in secrets]
    (tmp_path / "bulk.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ok(["ingest", str(tmp_path / "bulk.jsonl"), *NOW])
    every_blob = "\n".join(text for _, text, _ in every)
    eid = ok(["log", "error", "deploy failed", "--details", every_blob, "--error", every_blob[:8000],
              "--json", *NOW]).json["id"]
    # two patterns of three sessions each become proposals whose texts carry secrets: one approved, one skipped
    # with a secret in the reason
    for key, action in (("deploy.token", f"Export {SECRETS[1][1]} first"), ("ci.creds", f"Use {SECRETS[11][1]}")):
        for i in range(3):
            lid = ok(["log", "learning", f"deploy broke again with {SECRETS[0][1]}", "--category", "workflow",
                      "--pattern-key", key, "--session", f"s{key}{i}", "--action", action, "--json",
                      "--now", f"2026-06-0{i + 1}T10:00"]).json["id"]
    ok(["cycle", "--now", "2026-06-03T12:00"])
    ok(["propose", "--now", "2026-06-03T12:00"])
    ok(["approve", "1", "--now", "2026-06-03T13:00"])
    ok(["skip", "2", "--reason", f"not with {SECRETS[2][1]} in it", "--now", "2026-06-03T13:00"])
    ok(["patterns", "split", "ci.creds", lid, "--key", f"auth {SECRETS[13][1]}", "--json", *NOW])
    ok(["resolve", eid, "--status", "resolved", *NOW])
    ok(["show", eid, "--json"])
    ok(["list", "--json"])
    ok(["recall", "--message", f"deploy with {SECRETS[6][1]}", "--json", *NOW])
    # a fragment of the approved line, secret and all: echoed redacted, and found as the redacted line it is
    assert "Export [REDACTED:github_token]" in ok(["why", f"Export {SECRETS[1][2]}", *NOW]).stdout
    ok(["hook", "session-start", "--write", "--runtime", "claude-code", *NOW],
       input=json.dumps({"hook_event_name": "SessionStart", "session_id": "cc1", "source": "startup",
                         "prompt": f"rotate {SECRETS[1][1]}"}))
    codex = {"hook_event_name": "PostToolUse", "session_id": "cx1", "turn_id": "t1", "tool_name": "Bash",
             "tool_use_id": "call_1", "cwd": str(ws.root), "model": "gpt-5", "permission_mode": "default",
             "transcript_path": None, "tool_input": {"command": f"deploy --token {SECRETS[4][2]}"},
             "tool_response": f"Exit code 1\nerror: bad credentials {SECRETS[5][1]}"}
    ok(["hook", "post-tool-use", "--runtime", "codex", *NOW], input=json.dumps(codex))
    openclaw = {"toolName": "exec", "params": {"command": f"mysql -uroot -p{SECRETS[16][2]} app"},
                "error": f"ERROR 1045: denied, key {SECRETS[6][1]}", "sessionKey": "oc1"}
    ok(["hook", "post-tool-use", "--runtime", "openclaw", *NOW], input=json.dumps(openclaw))
    ok(["doctor", *NOW])

    mcp = pytest.importorskip("kg.runtimes.mcp_server", reason="the MCP server needs the mcp extra")
    tools = mcp.build_server(ws.root)._tool_manager
    for kind, text, secret in SECRETS[:8]:
        answer = tools.get_tool("log").fn(kind="error", summary=f"failed: {text}".replace("\n", " ")[:200],
                                          details=every_blob, action=f"rotate {text}", area=_short(kind, text, secret),
                                          error_text=text, pattern_key=f"auth {_short(kind, text, secret)}")
        printed.append(("mcp log", json.dumps(answer)))
    asked = " ".join(text.replace("\n", " ") for _, text, _ in SECRETS[:6])
    for name, args in (("search", {"query": asked}), ("recall", {"message": asked}), ("inject", {"message": asked}),
                       ("brief", {"message": asked}), ("status", {}), ("propose", {})):
        printed.append((f"mcp {name}", json.dumps(tools.get_tool(name).fn(**args), default=str)))
    ok(["status"])  # applies what the MCP server journaled
    assert _scan(ws.root, printed, secrets) == []
