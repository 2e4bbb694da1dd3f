"""When the graph file is rebuilt compact (kg/store/compact.py `due`): pure, the rule's numbers as given."""

from kg.store.compact import MB, due


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
