"""How often kuzu 0.11.3's CHECKPOINT tears a list column, in each form kg could write one (kg/store/remake.py).

Random histories on kg's own schema (plain Kùzu, a fresh graph per trial): a few sessions of autocommitted writes
(rows made, rows' lists written again), each closed with or without a CHECKPOINT (kg closes without one), then a
CHECKPOINT; a trial is torn when a row's lists are not what was last written. The forms: `set`, the lists SET in
place (kg before); `remake`, the row deleted and made again (kg now, as PatternOcc since the last session). Tables:
`change` (Change.evidence) and `meta` (Meta's topic keywords, skill triggers and tools, proposal evidence and tally
rows with none, one table). Counts; never asserts.

    .venv/bin/python bench/list_tears.py [--trials 200] [--seed 1] [--tables change,meta] [--forms set,remake]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

LISTS = {"change": {"change": ("evidence",)},
         "meta": {"topic": ("keywords",), "skill": ("triggers", "tools"), "proposal": ("evidence",), "tally": ()}}
SET_KINDS = {"change": ("change",), "meta": ("topic", "skill")}  # the rows kg wrote again


def fresh(folder: Path) -> Path:
    """A new graph with kg's schema in `folder` (which exists), closed: plain Kùzu writes on it next."""
    from kg.store import Store

    path = folder / "graph.kuzu"
    with Store.open(path, lock_path=folder / "graph.lock", lock_timeout=10):
        pass  # kg's schema
    return path


def session(path: Path, statements: list[tuple[str, dict]], checkpoint: bool, read: str | None = None) -> list:
    """One plain Kùzu session on `path`: the statements autocommitted, a CHECKPOINT if asked, then the rows of
    `read` (if given); closed without a checkpoint, as kg closes. (tests/integration's checkpoint tests use it.)"""
    import kuzu

    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    conn.execute("CALL force_checkpoint_on_close=false")
    try:
        for q, params in statements:
            conn.execute(q, params)
        if checkpoint:
            conn.execute("CHECKPOINT")
        if read is None:
            return []
        result = conn.execute(read)
        return [result.get_next() for _ in range(result.get_num_tuples())]
    finally:
        conn.close()
        db.close()


def _rows(path: Path, table: str) -> dict[str, dict]:
    import kuzu

    db = kuzu.Database(str(path))
    conn = kuzu.Connection(db)
    conn.execute("CALL force_checkpoint_on_close=false")
    try:
        q = ("MATCH (c:Change) RETURN c.id, c" if table == "change" else "MATCH (c:Meta) WHERE c.kind <> 'meta' "
             "RETURN c.key, c")
        result = conn.execute(q)
        out = {}
        while result.has_next():
            key, row = result.get_next()
            out[key] = row
        return out
    finally:
        conn.close()
        db.close()


def _statements(table: str, kind: str, key: str, lists: dict[str, list[str]], new: bool, form: str):
    label, pk = ("Change", "id") if table == "change" else ("Meta", "key")
    cols = {pk: key, **({} if table == "change" else {"kind": kind}), **lists}
    make = (f"CREATE (:{label} {{{', '.join(f'{c}: ${c}' for c in cols)}}})", cols)
    if new:
        return [make]
    if form == "set":
        sets = ", ".join(f"c.{c} = ${c}" for c in lists) or f"c.{pk} = c.{pk}"
        return [(f"MATCH (c:{label} {{{pk}: ${pk}}}) SET {sets}", {pk: key, **lists})]
    return [(f"MATCH (c:{label} {{{pk}: ${pk}}}) DETACH DELETE c", {pk: key}), make]


def trial(table: str, form: str, rng: random.Random, folder: Path) -> bool:
    """One random history; True when a row's lists came out wrong."""
    path = fresh(folder)
    want: dict[str, tuple[str, dict[str, list[str]]]] = {}
    longest = rng.choice([3, 8, 30])

    def items() -> list[str]:
        if rng.random() < 0.1:
            return []
        return [f"w{rng.randrange(10 ** rng.randrange(1, 8))}" * rng.choice([1, 1, 3])
                for _ in range(rng.randrange(1, longest))]

    n = 0
    for _ in range(rng.randrange(2, 7)):
        statements = []
        for _ in range(rng.randrange(1, 25)):
            again = [k for k, (kind, _) in want.items() if kind in SET_KINDS[table]]
            if again and rng.random() < 0.6:
                key = rng.choice(sorted(again))
                kind, new = want[key][0], False
            else:
                n += 1
                kind = rng.choice(sorted(LISTS[table]))
                key, new = f"{kind}:{n:03d}", True
            lists = {c: items() for c in LISTS[table][kind]}
            want[key] = (kind, lists)
            statements += _statements(table, kind, key, lists, new, form)
        session(path, statements, checkpoint=rng.random() < 0.5)
    session(path, [], checkpoint=True)
    got = _rows(path, table)
    every = {c for cols in LISTS[table].values() for c in cols}
    return any(got.get(key, {}).get(c) != lists.get(c) for key, (_, lists) in want.items() for c in every)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", default="change,meta")
    ap.add_argument("--forms", default="set,remake")
    args = ap.parse_args()
    print("| table | form | torn trials | of | seeds |\n|---|---|---|---|---|")
    for table in args.tables.split(","):
        for form in args.forms.split(","):
            torn = []
            for i in range(args.trials):
                seed = args.seed * 100000 + i
                folder = Path(tempfile.mkdtemp(prefix="kg-tears-"))
                try:
                    if trial(table, form, random.Random(seed), folder):
                        torn.append(seed)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
            print(f"| {table} | {form} | {len(torn)} | {args.trials} | {' '.join(map(str, torn[:8]))} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
