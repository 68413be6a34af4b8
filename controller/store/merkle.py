"""A table's log as a Merkle tree, the way RFC 6962/9162 (Certificate Transparency) builds one.

The leaves are a table's events in sequence order: leaf *i* is event *i* (the table line is
leaf 0), and its leaf hash is ``SHA-256(0x00 || H)`` where ``H`` is the event's record hash
(the 32 bytes of the hash chain's SHA-256 of its canonical record). An interior node is
``SHA-256(0x01 || left || right)``; a tree of *n* leaves splits at the largest power of two
below *n*. A signed head names the root of the first *n* leaves; from it anyone can check

- an **inclusion proof**: that an event is leaf *i* under a head, with about log2(n) hashes;
- a **consistency proof**: that a later head's tree extends an earlier one's (no leaf of the
  earlier tree changed or went), with about log2(n) hashes.

The functions here work on leaf hashes (32-byte ``bytes``); hashes leave this module as hex.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

_sha256 = hashlib.sha256
EMPTY_ROOT = _sha256(b"").digest()
KEPT_LEVEL = 8  # the smallest subtrees a store keeps the roots of: 256 leaves


class ProofError(ValueError):
    """A proof does not check."""


def leaf_hash(record_hash: str) -> bytes:
    """The leaf of an event, from its record hash (hex)."""
    return _sha256(b"\x00" + bytes.fromhex(record_hash)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def _perfect(leaves: Sequence[bytes], lo: int, size: int) -> bytes:
    """The root of the perfect subtree of ``size`` (a power of two) leaves from ``lo``."""
    level = list(leaves[lo : lo + size])
    while len(level) > 1:
        level = [
            _sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level), 2)
        ]
    return level[0]


def subtree_root(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH of leaves[lo:hi]."""
    n = hi - lo
    if n == 0:
        return EMPTY_ROOT
    if n & (n - 1) == 0:
        return _perfect(leaves, lo, n)
    k = _split(n)
    return node_hash(_perfect(leaves, lo, k), subtree_root(leaves, lo + k, hi))


def root(leaves: Sequence[bytes]) -> bytes:
    return subtree_root(leaves, 0, len(leaves))


def inclusion_proof(
    index: int,
    leaves: Sequence[bytes],
    size: int | None = None,
    cache: dict[tuple[int, int], bytes] | None = None,
) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of the first ``size`` leaves.

    ``cache`` (a dict kept between calls) keeps the subtree roots computed, so the proofs of
    many nearby leaves (a round's events) cost about one pass over the tree."""
    memo: dict[tuple[int, int], bytes] = {} if cache is None else cache

    def sub(lo: int, hi: int) -> bytes:
        found = memo.get((lo, hi))
        if found is None:
            found = memo[(lo, hi)] = subtree_root(leaves, lo, hi)
        return found

    n = len(leaves) if size is None else size
    if not 0 <= index < n <= len(leaves):
        raise ValueError(f"leaf {index} is not in a tree of {n} leaves")
    path: list[bytes] = []
    lo, hi = 0, n
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(sub(lo + k, hi))
            hi = lo + k
        else:
            path.append(sub(lo, lo + k))
            lo = lo + k
    path.reverse()  # from the leaf up
    return path


def root_from_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes:
    """The root that ``path`` gives for ``leaf`` at ``index`` in a tree of ``size`` leaves
    (RFC 9162 section 2.1.3.2); raises :class:`ProofError` if the path has the wrong shape."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size} leaves")
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise ProofError("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is shorter than the tree is deep")
    return r


def consistency_proof(first: int, second: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The proof that the tree of ``first`` leaves is a prefix of that of ``second``."""
    if not 0 <= first <= second <= len(leaves):
        raise ValueError(f"no consistency proof from {first} to {second} leaves")
    if first in (0, second):
        return []
    out: list[bytes] = []

    def sub(m: int, lo: int, hi: int, whole: bool) -> None:
        n = hi - lo
        if m == n:
            if not whole:
                out.append(subtree_root(leaves, lo, hi))
            return
        k = _split(n)
        if m <= k:
            sub(m, lo, lo + k, whole)
            out.append(subtree_root(leaves, lo + k, hi))
        else:
            sub(m - k, lo + k, hi, False)
            out.append(subtree_root(leaves, lo, lo + k))

    sub(first, 0, second, True)
    return out


def check_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows the tree of ``first`` leaves (root
    ``first_root``) is a prefix of the tree of ``second`` (root ``second_root``) (RFC 9162
    section 2.1.4.2)."""
    if not 0 <= first <= second:
        raise ProofError(f"a tree of {second} leaves cannot extend one of {first}")
    if first == 0:
        return
    if first == second:
        if proof:
            raise ProofError("a proof between equal trees must be empty")
        if first_root != second_root:
            raise ProofError("two heads of the same size have different roots")
        return
    if not proof:
        raise ProofError("the consistency proof is empty")
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is shorter than the tree is deep")
    if fr != first_root:
        raise ProofError("the consistency proof does not give the earlier head's root")
    if sr != second_root:
        raise ProofError("the consistency proof does not give the later head's root")


class Frontier:
    """The roots of the perfect subtrees a log of ``size`` leaves splits into, largest first
    (one per set bit of the size): enough to append a leaf or give the root in O(log n)."""

    def __init__(self, size: int = 0, nodes: Iterable[bytes] = ()) -> None:
        self.size = size
        self.nodes = list(nodes)
        if len(self.nodes) != bin(size).count("1"):
            raise ValueError(f"a frontier of {size} leaves has {bin(size).count('1')} nodes")

    def append(self, leaf: bytes, made: list[tuple[int, int, bytes]] | None = None) -> None:
        """Add a leaf. ``made``: where to add the perfect subtrees this completes, of
        :data:`KEPT_LEVEL` or more, as (level, index, root) (the ones a store keeps)."""
        nodes = self.nodes
        nodes.append(leaf)
        size = self.size
        level = 0
        while size & 1:  # each carry merges the two last (equal) subtrees
            right = nodes.pop()
            nodes[-1] = _sha256(b"\x01" + nodes[-1] + right).digest()
            size >>= 1
            level += 1
            if made is not None and level >= KEPT_LEVEL:
                made.append((level, ((self.size + 1) >> level) - 1, nodes[-1]))
        self.size += 1

    def extend(self, leaves: Iterable[bytes]) -> None:
        for leaf in leaves:
            self.append(leaf)

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        r = self.nodes[-1]
        for left in reversed(self.nodes[:-1]):
            r = node_hash(left, r)
        return r

    def copy(self) -> Frontier:
        return Frontier(self.size, self.nodes)

    def to_hex(self) -> list[str]:
        return [n.hex() for n in self.nodes]

    @classmethod
    def from_hex(cls, size: int, nodes: Sequence[str]) -> Frontier:
        return cls(size, (bytes.fromhex(n) for n in nodes))
