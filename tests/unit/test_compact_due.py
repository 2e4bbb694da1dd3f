"""When the graph file is rebuilt compact (kg/store/compact.py `due`): pure, the rule's numbers as given; and the pool
a compaction after a full pool rebuilds with, from rules/policy.toml (`full_pool_mb`)."""

import pytest

from kg.core.errors import RulesError
from kg.store.compact import MB, due, full_pool_mb
from kg.workspace import Workspace


def test_a_file_past_the_factor_of_its_data_and_the_floor_is_due():
    assert due(150 * MB, 60 * MB, 2.0, 64)  # bench/growth.py without compaction at 5k entries: 142 MB for 62 MB
    assert not due(100 * MB, 60 * MB, 2.0, 64)  # within the factor


def test_below_the_floor_nothing_is_due_whatever_the_factor():
    # a rebuilt file holds ~15 MB more than its tables' pages (a 300-entry graph: 16 MB for 3 MB): a small one
    # would come out larger than it went in
    assert not due(60 * MB, 3 * MB, 2.0, 64)


def test_the_size_after_the_last_compaction_holds_it_off_as_its_data_does():
    # 2k entries: the rebuilt file was 23 MB for 6.6 MB of pages; against the pages alone it was rebuilt again
    # after every batch of the ingest
    assert not due(40 * MB, 7 * MB, 2.0, 16, last=23 * MB)
    assert due(50 * MB, 7 * MB, 2.0, 16, last=23 * MB)


def _policy(tmp_path, store: str):
    root = tmp_path / "ws"
    (root / "memory" / ".kg").mkdir(parents=True, exist_ok=True)
    (root / "kg.toml").write_text(f"[rules.policy.store]\n{store}")
    return Workspace(root).policy


def test_the_pool_of_a_compaction_after_a_full_pool_is_the_rules_to_say(tmp_path):
    # rules/policy.toml: twice the workspace's pool and at least 1 GB; a workspace's kg.toml changes either
    assert full_pool_mb(_policy(tmp_path, "")) == 2048
    assert full_pool_mb(_policy(tmp_path, "buffer_pool_mb = 400\n")) == 1024
    assert full_pool_mb(_policy(tmp_path, "buffer_pool_mb = 400\nfull_pool_factor = 3\nfull_pool_floor_mb = 0\n")) \
        == 1200


def test_a_bad_full_pool_setting_is_refused_with_its_name(tmp_path):
    for bad, named in (("full_pool_factor = 0.5", "store.full_pool_factor"),
                       ("full_pool_floor_mb = -1", "store.full_pool_floor_mb"),
                       ('full_pool_floor_mb = "big"', "store.full_pool_floor_mb")):
        with pytest.raises(RulesError, match=named):
            _policy(tmp_path, bad + "\n")
