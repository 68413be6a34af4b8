"""A table's Merkle tree as stored: subtree roots kept as the log grows, for proofs in
O(log n) reads.

The tree is :mod:`controller.store.merkle`'s (RFC 9162). Every perfect, aligned subtree of
:data:`BLOCK` leaves or more (level ``L >= BLOCK_LEVEL``: the ``2**L`` leaves from
``idx * 2**L``) has its root in ``merkle_nodes`` (table, level, idx, hash): about one row per
128 events. The recorder writes them with each signed head (:class:`HeadLog
<controller.store.heads.HeadLog>`: the frontier's merges give them), and a store whose rows
are missing (made before they were kept) gets them on open (:func:`ensure_nodes`).

A proof's hashes are roots of subtrees: a perfect subtree of a block or more is one row read;
a smaller one is hashed from its block's leaves (at most :data:`BLOCK` record hashes, read in
one range); the tree's ragged right edge splits into at most log2(n) perfect subtrees. So an
inclusion proof costs O(log n) reads whatever the log's length, and the proofs of a round's
events share nearly all of them.

The rows are a cache, not the record: whatever they hold, a proof is checked against the
signed root; :class:`StoredTree` checks its own answers and, on a row that does not agree,
hashes from the leaves instead (and says so).
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
import structlog

from controller.store import merkle
from controller.store.heads import iter_hashes
from controller.store.merkle import EMPTY_ROOT, KEPT_LEVEL, node_hash
from controller.store.repository import Store
from controller.store.schema import MERKLE_NODES

log = structlog.get_logger("floorctl.store")

BLOCK_LEVEL = KEPT_LEVEL
BLOCK = 1 << BLOCK_LEVEL


def _split(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)


class StoredTree:
    """The tree of a table's first ``size`` leaves, read from the store on demand."""

    def __init__(self, store: Store, table_id: str, size: int, *, use_nodes: bool = True) -> None:
        self.store = store
        self.table_id = table_id
        self.size = size
        self.use_nodes = use_nodes
        self._blocks: dict[int, list[bytes]] = {}
        self._roots: dict[tuple[int, int], bytes] = {}
        self.reads = 0  # database reads made (rows looked up or ranges of leaves)
        self.leaves_read = 0  # record hashes read

    # -- reading ------------------------------------------------------------------------

    def _leaves(self, lo: int, hi: int) -> list[bytes]:
        self.reads += 1
        self.leaves_read += hi - lo
        found = [
            merkle.leaf_hash(h)
            for _s, h in iter_hashes(self.store, self.table_id, after=lo - 1, upto=hi - 1)
        ]
        if len(found) != hi - lo:
            raise ValueError(f"table {self.table_id}: events {lo} to {hi - 1} are not all stored")
        return found

    def _block(self, b: int) -> list[bytes]:
        found = self._blocks.get(b)
        if found is None:
            lo = b * BLOCK
            found = self._blocks[b] = self._leaves(lo, min(lo + BLOCK, self.size))
        return found

    def _node(self, level: int, idx: int) -> bytes | None:
        if not self.use_nodes:
            return None
        self.reads += 1
        with self.store.connection() as conn:
            row = conn.execute(
                sa.select(MERKLE_NODES.c.hash).where(
                    MERKLE_NODES.c.table_id == self.table_id,
                    MERKLE_NODES.c.level == level,
                    MERKLE_NODES.c.idx == idx,
                )
            ).first()
        return None if row is None else bytes.fromhex(str(row[0]))

    def perfect(self, lo: int, level: int) -> bytes:
        """The root of the aligned perfect subtree of ``2**level`` leaves from ``lo``."""
        width = 1 << level
        if level < BLOCK_LEVEL:
            block = self._block(lo >> BLOCK_LEVEL)
            return merkle._perfect(block, lo & (BLOCK - 1), width)
        found = self._node(level, lo >> level)
        if found is None:  # not kept (yet): hashed from its leaves, in one range
            found = merkle._perfect(self._leaves(lo, lo + width), 0, width)
        return found

    def root(self, lo: int = 0, hi: int | None = None) -> bytes:
        """MTH of leaves ``lo`` to ``hi - 1`` (a subtree of the RFC's recursion)."""
        hi = self.size if hi is None else hi
        n = hi - lo
        if n == 0:
            return EMPTY_ROOT
        got = self._roots.get((lo, hi))
        if got is None:
            if n & (n - 1) == 0 and lo % n == 0:
                got = self.perfect(lo, n.bit_length() - 1)
            else:
                k = _split(n)
                got = node_hash(self.root(lo, lo + k), self.root(lo + k, hi))
            self._roots[(lo, hi)] = got
        return got

    # -- proofs -------------------------------------------------------------------------

    def inclusion_proof(self, index: int) -> list[bytes]:
        """The audit path of leaf ``index`` (RFC 9162 2.1.3.1), from the leaf up."""
        if not 0 <= index < self.size:
            raise ValueError(f"leaf {index} is not in a tree of {self.size} leaves")
        path: list[bytes] = []
        lo, hi = 0, self.size
        while hi - lo > 1:
            k = _split(hi - lo)
            if index < lo + k:
                path.append(self.root(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.root(lo, lo + k))
                lo = lo + k
        path.reverse()
        return path

    def consistency_proof(self, first: int) -> list[bytes]:
        """The proof that the tree of ``first`` leaves is a prefix of this one (2.1.4.1)."""
        second = self.size
        if not 0 <= first <= second:
            raise ValueError(f"no consistency proof from {first} to {second} leaves")
        if first in (0, second):
            return []
        out: list[bytes] = []

        def sub(m: int, lo: int, hi: int, whole: bool) -> None:
            n = hi - lo
            if m == n:
                if not whole:
                    out.append(self.root(lo, hi))
                return
            k = _split(n)
            if m <= k:
                sub(m, lo, lo + k, whole)
                out.append(self.root(lo + k, hi))
            else:
                sub(m - k, lo + k, hi, False)
                out.append(self.root(lo, lo + k))

        sub(first, 0, second, True)
        return out


# ----- keeping the nodes -----------------------------------------------------------------


def node_rows(table_id: str, nodes: Iterable[tuple[int, int, bytes]]) -> list[dict[str, object]]:
    return [
        {"table_id": table_id, "level": level, "idx": idx, "hash": digest.hex()}
        for level, idx, digest in nodes
    ]


def kept_leaves(store: Store, table_id: str) -> int:
    """How many leaves the stored nodes cover from the start (whole blocks)."""
    with store.connection() as conn:
        top = conn.execute(
            sa.select(sa.func.max(MERKLE_NODES.c.idx)).where(
                MERKLE_NODES.c.table_id == table_id, MERKLE_NODES.c.level == BLOCK_LEVEL
            )
        ).scalar()
    return 0 if top is None else (int(top) + 1) * BLOCK


def ensure_nodes(store: Store, table_id: str, size: int, *, batch: int = 1 << 16) -> int:
    """Store the nodes of the first ``size`` leaves that are not stored yet (a store made
    before they were kept, or one a ship filled); returns how many were added.

    From the last whole block the nodes cover: its blocks' roots, and every higher node
    they complete (the frontier of the covered part, read back, is the left side of each)."""
    done = kept_leaves(store, table_id)
    end = size - size % BLOCK
    if done >= end:
        return 0
    # The frontier of the covered part: its perfect subtrees, which later ones pair with.
    frontier = merkle.Frontier()
    if done:
        tree = StoredTree(store, table_id, done)
        lo, nodes = 0, []
        for bit in reversed(range(done.bit_length())):
            if done >> bit & 1:
                nodes.append(tree.perfect(lo, bit))
                lo += 1 << bit
        frontier = merkle.Frontier(done, nodes)
    added = 0
    pending: list[tuple[int, int, bytes]] = []
    for _s, digest in iter_hashes(store, table_id, after=done - 1, upto=end - 1):
        frontier.append(merkle.leaf_hash(digest), pending)
        if len(pending) >= batch:
            added += _insert(store, table_id, pending)
            pending = []
    added += _insert(store, table_id, pending)
    if frontier.size != end:
        raise ValueError(f"table {table_id}: events {frontier.size} to {end - 1} are missing")
    return added


def _insert(store: Store, table_id: str, nodes: list[tuple[int, int, bytes]]) -> int:
    if not nodes:
        return 0
    with store.engine.begin() as conn:
        conn.execute(store.insert_ignore_statement(MERKLE_NODES), node_rows(table_id, nodes))
    return len(nodes)
