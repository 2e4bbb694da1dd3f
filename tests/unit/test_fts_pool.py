"""The full-text index build's pool is sized by the graph, for an import and for the rebuild after a crash
(kg/store/rebuild.py): at the 1M bench graph a 1024 MB pool fails and 1280 MB builds it."""

from kg.store.rebuild import fts_pool_mb


def test_the_index_pool_grows_with_the_graph_and_never_drops_under_the_workspaces():
    assert fts_pool_mb(1_054_095, 1024) >= 1280  # the 1M bench graph: 1024 MB failed, 1280 MB built it
    assert fts_pool_mb(1_054_095, 4096) == 4096  # a workspace that asks for more keeps it
    assert fts_pool_mb(10_000, 1024) == 1024  # a small graph: the workspace's own pool
    assert fts_pool_mb(2_000_000, 1024) > fts_pool_mb(1_000_000, 1024)
