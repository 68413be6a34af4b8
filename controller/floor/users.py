"""The floor's own accounts: surveillance and pit, apart from the tables' supervisors.

Passwords are hashed with argon2id (argon2-cffi's defaults); only the hash is stored, in
``floor_users``. ``floorctl floor user add NAME --role surveillance|pit`` creates an account
(the password read from the terminal, or from standard input with ``--password-stdin``);
``user passwd``, ``user disable`` and ``user list`` do the rest. Each is logged in the lookup
log. What each role may see:

- ``pit``: the floor, rounds (watched again too), flags, the shift and day reports;
- ``surveillance``: all of that, the evidence packages, the lookup log and game protection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from controller.floor.audit import Who, log_lookup
from controller.floor.schema import Floor
from controller.floor.settings import InputError, NotFound

ROLES = ("surveillance", "pit")
PERMISSIONS: dict[str, frozenset[str]] = {
    "pit": frozenset({"floor", "round", "rounds", "flags", "report"}),
    "surveillance": frozenset(
        {"floor", "round", "rounds", "flags", "report", "evidence", "lookups", "protect"}
    ),
}
MIN_PASSWORD = 10
_NAME = re.compile(r"[a-z][a-z0-9._-]{1,31}")
_hasher = PasswordHasher()


@dataclass(frozen=True)
class User:
    name: str
    role: str

    def may(self, what: str) -> bool:
        return what in PERMISSIONS.get(self.role, frozenset())


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InputError(
            f"{name!r} is not an account name (2-32 characters: lower-case letters first, then "
            "letters, digits, '.', '_' or '-')"
        )
    return name


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise InputError(f"the password must be at least {MIN_PASSWORD} characters")
    return password


def add_user(floor: Floor, who: Who, name: str, role: str, password: str) -> None:
    check_name(name)
    if role not in ROLES:
        raise InputError(f"{role!r} is not a role (one of {', '.join(ROLES)})")
    check_password(password)
    with floor.engine.begin() as conn:
        exists = conn.exec_driver_sql(
            "SELECT 1 FROM floor_users WHERE name = %(n)s", {"n": name}
        ).first()
        if exists is not None:
            raise InputError(f"there is already an account {name!r}")
        conn.exec_driver_sql(
            "INSERT INTO floor_users (name, role, password_hash, created_by) VALUES "
            "(%(n)s, %(r)s, %(h)s, %(by)s)",
            {"n": name, "r": role, "h": _hasher.hash(password), "by": who.name},
        )
    log_lookup(floor, who, "user add", {"name": name, "role": role}, "ok")


def set_password(floor: Floor, who: Who, name: str, password: str) -> None:
    check_password(password)
    with floor.engine.begin() as conn:
        done = conn.exec_driver_sql(
            "UPDATE floor_users SET password_hash = %(h)s WHERE name = %(n)s",
            {"n": name, "h": _hasher.hash(password)},
        ).rowcount
    if not done:
        raise NotFound(f"no account {name!r}")
    log_lookup(floor, who, "user passwd", {"name": name}, "ok")


def disable_user(floor: Floor, who: Who, name: str) -> None:
    with floor.engine.begin() as conn:
        done = conn.exec_driver_sql(
            "UPDATE floor_users SET disabled_at = now() WHERE name = %(n)s AND disabled_at IS NULL",
            {"n": name},
        ).rowcount
    if not done:
        raise NotFound(f"no account {name!r} that is not already disabled")
    log_lookup(floor, who, "user disable", {"name": name}, "ok")


def list_users(floor: Floor) -> list[dict[str, Any]]:
    with floor.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, role, created_at, created_by, disabled_at FROM floor_users ORDER BY name"
        ).all()
    return [
        {
            "name": r[0],
            "role": r[1],
            "created": floor.settings.local(r[2]),
            "created_by": r[3],
            "disabled": floor.settings.local(r[4]) if r[4] is not None else None,
        }
        for r in rows
    ]


def current(floor: Floor, user: User) -> User | None:
    """The account as it is now, if it is still enabled with the same role (else None)."""
    with floor.engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT role FROM floor_users WHERE name = %(n)s AND disabled_at IS NULL",
            {"n": user.name},
        ).first()
    return user if row is not None and str(row[0]) == user.role else None


def authenticate(floor: Floor, name: str, password: str) -> User | None:
    """The account, if the name and password match an account that is not disabled."""
    with floor.engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT role, password_hash, disabled_at FROM floor_users WHERE name = %(n)s",
            {"n": name},
        ).first()
    if row is None:
        _hasher.hash(password)  # the same work as a real check: no timing tells names apart
        return None
    try:
        _hasher.verify(str(row[1]), password)
    except (VerificationError, InvalidHashError):
        return None
    if row[2] is not None:
        return None
    if _hasher.check_needs_rehash(str(row[1])):
        with floor.engine.begin() as conn:
            conn.exec_driver_sql(
                "UPDATE floor_users SET password_hash = %(h)s WHERE name = %(n)s",
                {"n": name, "h": _hasher.hash(password)},
            )
    return User(name, str(row[0]))
