"""The Merkle log of the signed heads: RFC 9162's tree, inclusion and consistency proofs."""

from __future__ import annotations

import hashlib

import pytest

from controller.store import merkle


def leaves(n: int) -> list[bytes]:
    return [merkle.leaf_hash(hashlib.sha256(str(i).encode()).hexdigest()) for i in range(n)]


def reference_root(items: list[bytes]) -> bytes:
    """RFC 9162's MTH, written straight from its definition."""
    if not items:
        return hashlib.sha256(b"").digest()
    if len(items) == 1:
        return items[0]
    k = 1
    while k * 2 < len(items):
        k *= 2
    return hashlib.sha256(b"\x01" + reference_root(items[:k]) + reference_root(items[k:])).digest()


def test_the_leaf_and_node_hashes_are_domain_separated() -> None:
    h = "ab" * 32
    assert merkle.leaf_hash(h) == hashlib.sha256(b"\x00" + bytes.fromhex(h)).digest()
    a, b = leaves(2)
    assert merkle.node_hash(a, b) == hashlib.sha256(b"\x01" + a + b).digest()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13, 64, 100])
def test_the_root_and_the_frontier_agree_with_the_definition(n: int) -> None:
    items = leaves(n)
    frontier = merkle.Frontier()
    frontier.extend(items)
    assert merkle.root(items) == reference_root(items) == frontier.root()
    again = merkle.Frontier.from_hex(n, frontier.to_hex())
    assert again.root() == frontier.root()


def test_every_inclusion_proof_checks_and_a_wrong_leaf_does_not() -> None:
    items = leaves(37)
    for size in range(1, 38):
        top = merkle.root(items[:size])
        for i in range(size):
            path = merkle.inclusion_proof(i, items, size)
            assert merkle.root_from_inclusion(i, size, items[i], path) == top
            other = items[(i + 1) % len(items)]
            if other != items[i]:
                assert merkle.root_from_inclusion(i, size, other, path) != top
            if size > 1:
                with pytest.raises(merkle.ProofError):
                    merkle.root_from_inclusion(i, size, items[i], [*path, path[0]])


def test_every_consistency_proof_checks_and_a_changed_prefix_does_not() -> None:
    items = leaves(33)
    for second in range(1, 34):
        for first in range(1, second + 1):
            proof = merkle.consistency_proof(first, second, items)
            r1, r2 = merkle.root(items[:first]), merkle.root(items[:second])
            merkle.check_consistency(first, second, r1, r2, proof)
            forged = [*items[: first - 1], merkle.leaf_hash("00" * 32), *items[first:second]]
            with pytest.raises(merkle.ProofError):
                merkle.check_consistency(first, second, merkle.root(forged[:first]), r2, proof)
            if first < second:
                with pytest.raises(merkle.ProofError):
                    merkle.check_consistency(first, second, r1, merkle.root(forged), proof)
