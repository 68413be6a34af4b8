"""The audit store: an append-only, hash-chained log of every event a table hears.

See ``controller.store.recorder`` for the live-table path, ``verify``, ``export`` and
``ship`` for surveillance, and ``api.record_scenario`` for recording a scenario file.
"""
