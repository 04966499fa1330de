""" "Which of these are stored", counted first: from ``COUNT_FIRST`` keys the store counts the
stored ones in SQL over a temporary table of the keys, and reads nothing back when all or none
are (an idle rerun's plan, a fresh run's); otherwise, or inside a transaction, it reads them as
before.  Every answer is checked against the keys actually written."""

from __future__ import annotations

import pytest

from rmaudit.store import Store
from rmaudit.store.item_records import StoredResponse
from rmaudit.store.tables import COUNT_FIRST

N = COUNT_FIRST + 500


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "counted.db"
    store = Store.open(path)
    ids = [f"r{i:05d}" for i in range(N)]
    with store.transaction():
        store.items.add_responses(
            StoredResponse(rid, "p", "policy", i, f"text {i}", {}) for i, rid in enumerate(ids)
        )
        store.items.add_scores("rm", {rid: float(i) for i, rid in enumerate(ids[:-100])})
    store.close()
    return path, ids


def statements(store: Store) -> list[str]:
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    return seen


@pytest.mark.parametrize("readonly", [False, True])
def test_all_or_none_stored_is_counted_without_reading_a_key_back(db, readonly):
    path, ids = db
    store = Store.open_readonly(path) if readonly else Store.open(path)
    seen = statements(store)
    scored = ids[:-100]
    assert store.items.scored("rm", scored) == set(scored)
    assert store.items.scored("other-rm", scored) == set()
    assert store.items.stored_responses(ids) == set(ids)
    reads = [s for s in seen if s.lower().startswith("select") and "count(*)" not in s]
    assert reads == []  # every answer came from a count
    store.close()


def test_some_stored_falls_back_to_reading_them(db):
    path, ids = db
    store = Store.open(path)
    unknown = [f"x{i}" for i in range(50)]
    asked = ids + unknown
    assert store.items.scored("rm", asked) == set(ids[:-100])
    assert store.items.stored_responses(asked) == set(ids)
    # a new key list refills the temporary table: its answer is its own
    assert store.items.scored("rm", ids[:COUNT_FIRST]) == set(ids[:COUNT_FIRST])
    store.close()


def test_inside_a_transaction_nothing_is_counted_and_the_answer_is_the_same(db):
    path, ids = db
    store = Store.open(path)
    seen = statements(store)
    with store.transaction():
        assert store.items.scored("rm", ids) == set(ids[:-100])
    assert not any("temp.asked" in s for s in seen)
    store.close()


def test_fewer_keys_than_count_first_are_looked_up(db):
    path, ids = db
    store = Store.open(path)
    seen = statements(store)
    assert store.items.scored("rm", ids[:10]) == set(ids[:10])
    assert not any("temp.asked" in s for s in seen)
    store.close()
