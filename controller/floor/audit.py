"""The audit of the auditors: every lookup on the floor, with who made it.

``floor_lookups`` is insert-only (a trigger refuses UPDATE, DELETE and TRUNCATE). Each row says
when, who (a floor account on the web; ``cli:<os user>`` on the command line), their role, how
(``web`` or ``cli``), what was looked up (``floor``, ``round``, ``rounds``, ``flags``,
``report``, ``evidence``, ``lookups``; ``login``, ``logout``, ``user add`` ...) with its
parameters, and the outcome (``ok``, or the message the person was given).
"""

from __future__ import annotations

import getpass
import json
import socket
from dataclasses import dataclass
from typing import Any

from controller.floor.schema import Floor


@dataclass(frozen=True)
class Who:
    """Who is asking, and how."""

    name: str
    role: str
    via: str  # "web" or "cli"
    client: str | None = None

    @classmethod
    def cli(cls) -> Who:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
        return cls(f"cli:{user}", "cli", "cli", socket.gethostname())


def log_lookup(floor: Floor, who: Who, what: str, params: dict[str, Any], outcome: str) -> None:
    with floor.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO floor_lookups (who, role, via, what, params, outcome, client) VALUES "
            "(%(who)s, %(role)s, %(via)s, %(what)s, %(params)s, %(outcome)s, %(client)s)",
            {
                "who": who.name,
                "role": who.role,
                "via": who.via,
                "what": what,
                "params": json.dumps(params, default=str, sort_keys=True),
                "outcome": outcome[:500],
                "client": who.client,
            },
        )


def lookups(floor: Floor, *, who: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The newest lookups first (all, or one person's)."""
    sql = "SELECT id, at, who, role, via, what, params, outcome, client FROM floor_lookups"
    params: dict[str, Any] = {"n": limit}
    if who is not None:
        sql += " WHERE who = %(who)s"
        params["who"] = who
    sql += " ORDER BY id DESC LIMIT %(n)s"
    with floor.engine.connect() as conn:
        rows = conn.exec_driver_sql(sql, params).all()
    out = []
    for r in rows:
        out.append(
            {
                "id": int(r[0]),
                "at": floor.settings.local(r[1]),
                "utc": floor.settings.utc(r[1]),
                "who": r[2],
                "role": r[3],
                "via": r[4],
                "what": r[5],
                "params": r[6] if isinstance(r[6], dict) else json.loads(str(r[6])),
                "outcome": r[7],
                "client": r[8],
            }
        )
    return out
