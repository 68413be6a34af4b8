"""The Merkle tree as stored (subtree roots kept): the same proofs as the plain RFC 9162
functions of ``controller.store.merkle``, from O(log n) reads.

The oracle is :mod:`controller.store.merkle` over every leaf (itself checked against RFC
9162's definition in test_store_merkle). The store holds synthetic events (the tree does not
read bodies); the recorder's own path is checked in test_store_proof and test_store_signed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import sqlalchemy as sa

from controller.store import merkle
from controller.store.canonical import GENESIS, ChainRecord
from controller.store.repository import Store
from controller.store.schema import MERKLE_NODES
from controller.store.tree import BLOCK, StoredTree, ensure_nodes, kept_leaves

N = 5 * BLOCK + 77  # five whole blocks and a ragged end


def fill(store: Store, n: int, table_id: str = "T1") -> list[bytes]:
    records, prev = [], GENESIS
    for seq in range(n):
        record = ChainRecord.make(
            table_id, seq, {"type": "note", "i": seq}, prev, "2026-12-02T00:00:00.000000Z"
        )
        records.append(record)
        prev = record.hash
    for i in range(0, n, 5000):
        store.append(records[i : i + 5000])
    return [merkle.leaf_hash(r.hash) for r in records]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(f"sqlite:///{tmp_path / 't.db'}") as s:
        yield s


def node_count(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(MERKLE_NODES)).scalar())


def test_kept_nodes_give_the_same_proofs_as_the_leaves(store: Store) -> None:
    leaves = fill(store, N)
    assert ensure_nodes(store, "T1", N) == 5 + 2 + 1  # levels 8, 9 and 10
    assert kept_leaves(store, "T1") == 5 * BLOCK
    for size in (1, 2, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK, 4 * BLOCK + 3, N):
        tree = StoredTree(store, "T1", size)
        assert tree.root() == merkle.root(leaves[:size])
        for index in sorted({0, 1, size // 3, size // 2, size - 2, size - 1} - {-1}):
            if 0 <= index < size:
                assert tree.inclusion_proof(index) == merkle.inclusion_proof(index, leaves, size)
        for first in sorted({1, size // 2, size - 1, BLOCK, 2 * BLOCK + 5}):
            if 0 < first <= size:
                assert tree.consistency_proof(first) == merkle.consistency_proof(
                    first, size, leaves
                )


def test_nodes_are_built_where_they_stopped_and_agree_with_the_frontiers(store: Store) -> None:
    leaves = fill(store, N)
    assert ensure_nodes(store, "T1", 2 * BLOCK + 10) == 3
    assert ensure_nodes(store, "T1", 2 * BLOCK + 10) == 0  # nothing new
    assert ensure_nodes(store, "T1", N) == 5
    # What a signing recorder's frontier makes, leaf by leaf, is what was built.
    made: list[tuple[int, int, bytes]] = []
    frontier = merkle.Frontier()
    for leaf in leaves:
        frontier.append(leaf, made)
    with store.engine.connect() as conn:
        kept = {
            (int(lv), int(i), str(h))
            for lv, i, h in conn.execute(
                sa.select(MERKLE_NODES.c.level, MERKLE_NODES.c.idx, MERKLE_NODES.c.hash)
            )
        }
    assert kept == {(lv, i, h.hex()) for lv, i, h in made}
    for level, idx, digest in made:
        lo = idx << level
        assert digest == merkle.root(leaves[lo : lo + (1 << level)])


def test_a_proof_reads_a_bounded_number_of_leaves_whatever_the_log_length(store: Store) -> None:
    n = 40 * BLOCK + 3
    fill(store, n)
    ensure_nodes(store, "T1", n)
    for index in (0, n // 2, n - 1):
        tree = StoredTree(store, "T1", n)
        tree.inclusion_proof(index)
        # Two blocks of leaves at most (the leaf's and the ragged end's) and one row per level.
        assert tree.leaves_read <= 2 * BLOCK, tree.leaves_read
        assert tree.reads <= 2 + 2 * n.bit_length(), tree.reads
    # Without the kept nodes the same proof hashes the whole log.
    bare = StoredTree(store, "T1", n, use_nodes=False)
    bare.inclusion_proof(0)
    assert bare.leaves_read >= n - 1


def test_a_tampered_node_is_not_used_for_a_proof(tmp_path: Path) -> None:
    """prove checks every path against the signed root and hashes from the leaves instead."""
    from conftest import store_shift

    from controller.store.api import record_scenario
    from controller.store.keys import generate_pair
    from controller.store.proof import check_proof, prove_round

    private, _public, key = generate_pair(tmp_path / "keys")
    url = f"sqlite:///{tmp_path / 'table.db'}"
    record_scenario(url, store_shift(30), signing_key=private)
    with Store.open(url) as store:
        number = max(int(r["round"]) for r in store.derived("T1").rounds)
        genuine = prove_round(store, "T1", number)
        assert genuine["head"]["size"] > 2 * BLOCK and node_count(store) >= 2
        with store.engine.begin() as conn:  # as the owner of the file may
            conn.exec_driver_sql("DROP TRIGGER merkle_nodes_no_update")
            conn.exec_driver_sql(
                "UPDATE merkle_nodes SET hash = ?",  # every kept root
                (hashlib.sha256(b"x").hexdigest(),),
            )
        size = genuine["head"]["size"]
        first = genuine["events"][0]["seq"]
        assert StoredTree(store, "T1", size).inclusion_proof(first) != [
            bytes.fromhex(p) for p in genuine["events"][0]["proof"]
        ]
        again = prove_round(store, "T1", number)
    assert again == genuine and check_proof(again, key.public).ok


def test_the_floor_keeps_the_roots_of_what_was_shipped_and_proves_from_them(
    tmp_path: Path, store_pg_url: str
) -> None:
    from conftest import store_shift

    from controller.store.api import record_scenario
    from controller.store.keys import generate_pair
    from controller.store.proof import check_proof, prove_round
    from controller.store.ship import ship

    private, _public, key = generate_pair(tmp_path / "keys")
    url = f"sqlite:///{tmp_path / 'table.db'}"
    record_scenario(url, store_shift(12), signing_key=private)
    with Store.open(url) as src, Store.open(store_pg_url) as dst:
        ship(src, dst)
        record_scenario(url, store_shift(30), signing_key=private)  # more, shipped again
        ship(src, dst)
        assert kept_leaves(dst, "T1") == kept_leaves(src, "T1") >= 2 * BLOCK
        assert node_count(dst) == node_count(src)
        number = max(int(r["round"]) for r in dst.derived("T1").rounds)
        doc = prove_round(dst, "T1", number)
        assert doc == prove_round(src, "T1", number)
        tree = StoredTree(dst, "T1", doc["head"]["size"])
        tree.inclusion_proof(doc["events"][0]["seq"])
        assert tree.leaves_read <= 2 * BLOCK
    assert check_proof(doc, key.public).ok
