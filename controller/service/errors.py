"""The service's start-up error, apart from the modules that serve (so `run --check` needs
none of them)."""

from __future__ import annotations


class StartError(RuntimeError):
    """The service could not start (the message says what and where).

    ``exit_code``: what `floorctl run` exits with: 1, a fault a restart may clear (a store
    that cannot be reached); :class:`~controller.service.startup.StartRefused` is 2."""

    exit_code = 1
