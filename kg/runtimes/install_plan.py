"""The plan of one `kg install` or `kg uninstall` (kg/runtimes/integrations.py): what it reads of each file, what
it writes over exactly that (a person's edit since is never replaced: FileChanged), the record of each file's bytes
before kg's install (`memory/.kg/installs.json`) and their restore, kg's AGENTS.md block and `.codex/config.toml`
blocks through the one block editor, and the report of changes and notes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg.core.errors import FileChanged, UsageError
from kg.core.files import check_folder
from kg.ingest.journal import write_atomic
from kg.lifecycle import blocks
from kg.runtimes import codex_toml
from kg.runtimes.agents_block import AGENTS_BLOCK, agents_plan
from kg.runtimes.openclaw_hook import SERVER_NAME


@dataclass
class Change:
    path: str
    action: str  # create | update | remove | unchanged
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "action": self.action, "detail": self.detail}


# -- file helpers -----------------------------------------------------------------------------------------------
def _read_json(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON object `text`, read from `path` (None: no file)."""
    if text is None:
        return {}
    try:
        data = json.loads(text or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it, then run the command again") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold a JSON object")
    return data


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


class _Plan:
    """The changes of one install or uninstall. Every file an install writes is recorded with its bytes before
    (`memory/.kg/installs.json`, by absolute path), so that uninstall can put those bytes back. A file is
    written only over the text this plan first read of it (`seen`): a person's edit of their settings since is
    never replaced (FileChanged; `_carried` runs the install again from a fresh read)."""

    def __init__(self, ws: Any, project: Path, dry_run: bool, force: bool = False, again: str = ""):
        self.ws, self.project, self.dry_run, self.changes = ws, project, dry_run, []
        self.force = force  # kg's parts a person edited are rewritten (install) or taken out (uninstall) all the same
        self.again = again  # the command that does so, for the notes
        self.notes: list[str] = []
        self.seen: dict[str, str | None] = {}  # path → its text when this plan first read it
        self.done: list[Change] = []  # the changes carried out on disk (the report of a retried run keeps them)
        self.record_path = Path(ws.memory) / ".kg" / "installs.json"
        try:
            self.record: dict[str, Any] = json.loads(self.record_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            self.record = {}

    def read(self, path: Path) -> str | None:
        """The file's text now (None: no file); the first read of each file is what a write goes over."""
        text = blocks.read(path)
        self.seen.setdefault(str(path), text)
        return text

    def read_json(self, path: Path) -> dict[str, Any]:
        return _read_json(path, self.read(path))

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.project))
        except ValueError:
            return str(path)

    def write(self, path: Path, text: str, detail: str, runtime: str | None = None, keep_edited: bool = False,
              hooks: dict[str, Any] | None = None) -> None:
        """Write `text` to `path`, recording the bytes before (and `hooks`, kg's own hook entries in it, which tell
        the next install a person's edit of one from kg's text). `keep_edited`: a file wholly kg's (OpenClaw's hook
        folder) that was edited since kg last wrote it is kept, with a note, as uninstall keeps it."""
        check_folder(path)  # a link out of the workspace (AGENTS.md, .claude/) is refused, dry run or not (QA3 #3)
        old = self.read(path)
        last = ((self.record.get(runtime) or {}).get(str(path)) or {}).get("after") if runtime else None
        if keep_edited and not self.force and old is not None and last is not None and old not in (last, text):
            self.changes.append(Change(self.rel(path), "unchanged", f"{detail}: kept, edited since kg wrote it"))
            self.notes.append(f"{self.rel(path)} was edited since kg wrote it: kept; `{self.again}` puts kg's back "
                              "(your edit is lost)")
            return
        if old != text:
            self.changes.append(Change(self.rel(path), "create" if old is None else "update", detail))
            if not self.dry_run:  # carried out by the block editor, whose plans computed the marked files' text
                self.apply(path, text)
                self.done.append(self.changes[-1])
        else:
            self.changes.append(Change(self.rel(path), "unchanged", detail))
        if runtime:  # recorded once written: a file left as its writer left it (FileChanged) keeps its record
            files = self.record.setdefault(runtime, {})
            entry = files.get(str(path))
            if entry is None and (old is None or SERVER_NAME not in old):
                files[str(path)] = {"before": old, "after": text}
            elif entry is not None and "before" in entry and old == entry["after"]:
                files[str(path)] = {"before": entry["before"], "after": text}
            else:  # edited since kg wrote it, or holding an earlier kg's part: no bytes to go back to (uninstall
                # takes out kg's part only), since those bytes would lose the edit or bring kg's old part back
                files[str(path)] = {"after": text}
            if hooks is not None:
                files[str(path)]["hooks"] = hooks

    def apply(self, path: Path, text: str) -> None:
        """Replace `path` with `text`, only if it still holds what this plan first read of it."""
        base = self.seen.get(str(path), blocks.ANY)
        blocks.apply(path, blocks.SyncPlan("update", text, None, "", base=base))

    def remove(self, path: Path, detail: str) -> None:
        if not path.exists():
            return
        check_folder(path)  # unlinking a file in a linked .claude/ would remove the outside file
        self.changes.append(Change(self.rel(path), "remove", detail))
        if not self.dry_run:
            if str(path) in self.seen and blocks.read(path) != self.seen[str(path)]:
                raise FileChanged(f"{self.rel(path)} was written by someone else while kg was taking it out, so kg "
                                  "left it (nothing written to it is lost): run the command again", str(path))
            path.unlink()
            self.done.append(self.changes[-1])
            parent = path.parent
            while parent != self.project and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent

    def restore(self, runtime: str, path: Path) -> bool:
        """Put back the bytes `path` had before kg's install, when the file is still as kg left it."""
        entry = (self.record.get(runtime) or {}).get(str(path))
        if not entry or "before" not in entry or self.read(path) != entry["after"]:
            return False
        if entry["before"] is None:
            self.remove(path, "kg created it; as kg left it")
        else:
            self.changes.append(Change(self.rel(path), "update", "restored byte for byte"))
            if not self.dry_run:
                self.apply(path, entry["before"])
                self.done.append(self.changes[-1])
        return True

    def agents_block(self, path: Path, body: str | None, runtime: str | None) -> None:
        """Write (or, with None, take out) kg's AGENTS.md block through the block editor."""
        key = f"{self.rel(path)}#{AGENTS_BLOCK}"
        state = blocks.load_states(self.ws.kg_dir).get(key) or {}
        old = self.read(path)
        sync = agents_plan(old, body, state, force=self.force, fix=f"run `{self.again}`")
        if sync.action == "flag":
            self.notes.append(f"{self.rel(path)}: kg's block was left as it is: {sync.reason}")
            self.changes.append(Change(self.rel(path), "unchanged", f"flagged: {sync.reason}"))
            return
        if sync.action in ("remove", "delete") and not (sync.text or "").strip():
            self.remove(path, "removed kg's block (nothing else was in it)")
        elif sync.text is not None and sync.text != old:
            self.write(path, sync.text, "how the agent calls kg (a marked block)" if body else "removed kg's block",
                       runtime)
        elif body is not None:
            self.write(path, old or "", "how the agent calls kg (a marked block)", runtime)
        if not self.dry_run:
            created = sync.action == "create" or (bool(state.get("created_file")) and body is not None)
            blocks.save_state(self.ws.kg_dir, key, {"hash": sync.hash, "glue": sync.glue, "created_file": created}
                              if body is not None and sync.hash else None)

    def codex_config(self, path: Path, argv: list[str] | None, runtime: str | None) -> None:
        """Bring kg's blocks in .codex/config.toml to what an install (`runtime`) wants, or take them out
        (None), through the block editor (`kg/runtimes/codex_toml.py`)."""
        rel = self.rel(path)
        states = blocks.load_states(self.ws.kg_dir)
        mine = {name: states.get(f"{rel}#{name}") or {} for name in codex_toml.NAMES}
        old = self.read(path)
        new, plans, notes = codex_toml.sync(old, argv, mine, install=runtime is not None, force=self.force,
                                            fix=f"{codex_toml.FIX}, or run `{self.again}`")
        self.notes += [f"{rel}: {note}" for note in notes]
        if runtime is not None:
            ours = [what for name, what in ((codex_toml.HOOKS_BLOCK, "features.hooks"),
                                            (codex_toml.MCP_BLOCK, f"MCP server {SERVER_NAME!r}"))
                    if new is not None and name in blocks.names(new, blocks.TOML)]  # not a person's own flag
            self.write(path, new or "", " and ".join(ours or ["nothing of kg's"])
                       + (" (marked blocks)" if ours else ""), runtime)
        elif new != old:
            if (new or "").strip():
                self.write(path, new or "", "removed kg's blocks")
            else:
                self.remove(path, "removed kg's blocks (nothing else was in it)")
        if self.dry_run:
            return
        for name, sync in plans.items():
            if sync.action == "flag":
                continue  # kept as the person left it: kg still knows what it wrote there
            created = sync.action == "create" or (bool(mine[name].get("created_file")) and runtime is not None)
            blocks.save_state(self.ws.kg_dir, f"{rel}#{name}", {"hash": sync.hash, "glue": sync.glue,
                                                               "created_file": created}
                              if runtime is not None and sync.hash else None)

    def forget_blocks(self, path: Path, names: tuple[str, ...]) -> None:
        """Forget what kg wrote in the blocks of a file whose bytes from before the install are back."""
        if not self.dry_run:
            for name in names:
                blocks.save_state(self.ws.kg_dir, f"{self.rel(path)}#{name}", None)

    def wrote_hooks(self, runtime: str, path: Path) -> dict[str, Any] | None:
        """kg's hook entries as kg last wrote them in `path` (by event), or None when it does not know. An install
        before kg kept them overwrote its entries every time: the file as it left it holds them."""
        entry = (self.record.get(runtime) or {}).get(str(path)) or {}
        if isinstance(entry.get("hooks"), dict):
            return entry["hooks"]
        try:
            hooks = json.loads(entry["after"]).get("hooks")
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError):
            return None
        return hooks if isinstance(hooks, dict) else None

    def forget(self, runtime: str) -> None:
        self.record.pop(runtime, None)

    def save(self) -> None:
        if self.dry_run:
            return
        self.record_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.record_path, (json.dumps(self.record, indent=1, sort_keys=True) + "\n").encode("utf-8"))

    def json_edit(self, path: Path, new: dict[str, Any], detail: str, *, existed: bool) -> None:
        if not new and existed:
            self.remove(path, detail + " (nothing else was in it)")
        elif new or existed:
            self.write(path, _dump(new), detail)

    def result(self, runtime: str, nxt: list[str]) -> dict[str, Any]:
        return {"runtime": runtime, "project": str(self.project), "dry_run": self.dry_run,
                "changes": [c.as_dict() for c in self.changes], "notes": self.notes, "next": nxt}
