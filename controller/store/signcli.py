"""``floorctl keygen``, ``floorctl prove`` and ``floorctl verify-proof``: the signed log's
commands (see :mod:`controller.store.heads`, :mod:`controller.store.proof`).

Exit status: 0 done (verify-proof: the proof checks); 1 the proof does not check, or the round
cannot be proved (no signed head marks its end); 2 the command could not run
or the file is not a round proof.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _keygen(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.keys import generate_pair

    try:
        private, public, key = generate_pair(Path(args.out))
    except (StoreError, OSError) as exc:
        print(f"floorctl keygen: {exc}", file=sys.stderr)
        return 2
    print(f"private key: {private} (mode 0600: name it in [store] signing_key)")
    print(f"public key:  {public} (register it on the floor: floorctl floor register-key)")
    print(f"key id:      {key.key_id}")
    return 0


def _prove(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.proof import prove_round
    from controller.store.repository import Store

    out = Path(args.out)
    if out.exists():
        print(f"floorctl prove: {out} already exists", file=sys.stderr)
        return 2
    try:
        with Store.open(args.db, create=False) as store:
            doc = prove_round(store, args.table, args.round)
    except StoreError as exc:
        print(f"floorctl prove: {exc}", file=sys.stderr)
        return 1
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    head = doc["head"]
    print(
        f"table {args.table} round {args.round}: {len(doc['events'])} events (from event "
        f"{doc['events'][0]['seq']} to {doc['events'][-1]['seq']}) proved under signed head "
        f"{head['seq']} ({head['size']} events); written to {out}"
    )
    return 0


def _verify_proof(args: argparse.Namespace) -> int:
    from controller.store.db import StoreError
    from controller.store.keys import load_public_key
    from controller.store.proof import MAX_PROOF_BYTES, MalformedProof, check_proof, parse_proof

    try:
        key = load_public_key(args.key)
        path = Path(args.file)
        if path.is_file() and path.stat().st_size > MAX_PROOF_BYTES:
            raise MalformedProof(f"not a round proof: over {MAX_PROOF_BYTES >> 20} MB")
        proof = parse_proof(path.read_bytes())
    except (StoreError, OSError, MalformedProof) as exc:
        print(f"floorctl verify-proof: {args.file}: {exc}", file=sys.stderr)
        return 2
    result = check_proof(proof, key)
    print(("OK: " if result.ok else "FAILED: ") + f"{args.file}: {result.message}")
    return 0 if result.ok else 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from controller import argtypes

    p = subparsers.add_parser(
        "keygen",
        help="make a table's Ed25519 signing key pair (table.key, table.pub)",
        description="Write DIR/table.key (the private key, mode 0600) and DIR/table.pub. The "
        "table config names the private key ([store] signing_key); the floor registers the "
        "public one. Never overwrites a key.",
    )
    p.add_argument("--out", metavar="DIR", required=True, help="the directory to write them in")
    p.set_defaults(func=_keygen)

    p = subparsers.add_parser(
        "prove",
        help="write one round's events with their proof under the table's signed head",
        description="Write a round's events, from the one after the round before ended to "
        "its settling (or void) event, each with an inclusion proof under the signed head that "
        "marks the round's end, with the head that marks the end of the round before; "
        "floorctl verify-proof checks it with the table's public key alone.",
    )
    p.add_argument("--db", metavar="URL", required=True, help="the store (table or floor)")
    p.add_argument("--table", required=True)
    p.add_argument("--round", type=argtypes.positive_int, required=True, metavar="N")
    p.add_argument("--out", metavar="FILE", required=True, help="the proof file to write")
    p.set_defaults(func=_prove)

    p = subparsers.add_parser(
        "verify-proof",
        help="check a round's proof with the table's public key, without the log",
        description="Check that the proof holds the whole round: both heads signed by the "
        "key and marking the ends of the round and of the round before, every event between "
        "them there, each matching its hash, following the one before and in the log under "
        "the head. Exit 0 if so; 1 naming what is not; 2 for a file that is not a round proof.",
    )
    p.add_argument("file", help="a proof written by floorctl prove")
    p.add_argument("--key", metavar="FILE", required=True, help="the table's table.pub")
    p.set_defaults(func=_verify_proof)
