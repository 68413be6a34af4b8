"""The store's and the shoe's fault settings in the table config: defaults, checks, and a
PostgreSQL table that has nowhere to spool refusing to start."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_service_config import SERVICE_SECTIONS, example_table_and_camera, write

from controller.service.app import StartError, open_table
from controller.service.config import ConfigError, load_config
from controller.service.pin import hash_pin


def config_with(tmp_path: Path, shoe: str = "", store: str = "") -> Path:
    text = SERVICE_SECTIONS.replace("heartbeat_timeout = 3.0\n", "heartbeat_timeout = 3.0\n" + shoe)
    text = text.replace('floorctl.db"\n', 'floorctl.db"\n' + store, 1)
    return write(tmp_path, example_table_and_camera() + text)


def test_the_defaults_are_those_the_readme_gives(tmp_path: Path) -> None:
    cfg = load_config(config_with(tmp_path))
    assert (cfg.shoe.noise_misreads, cfg.shoe.noise_window) == (5, 10.0)
    assert (cfg.store.spool_dir, cfg.store.spool_reserve_kib) == (None, 1024)


def test_the_settings_are_read(tmp_path: Path) -> None:
    cfg = load_config(
        config_with(
            tmp_path,
            "noise_misreads = 20\nnoise_window = 30\n",
            'spool_dir = "/var/spool/floorctl"\nspool_reserve_kib = 4096\n',
        )
    )
    assert (cfg.shoe.noise_misreads, cfg.shoe.noise_window) == (20, 30.0)
    assert (cfg.store.spool_dir, cfg.store.spool_reserve_kib) == ("/var/spool/floorctl", 4096)


@pytest.mark.parametrize(
    ("shoe", "store", "named"),
    [
        ("noise_misreads = 0\n", "", r"\[shoe\] noise_misreads = 0"),
        ('noise_window = "soon"\n', "", r'\[shoe\] noise_window = "soon": not a number of seconds'),
        ("", 'spool_dir = "spool"\n', r'\[store\] spool_dir = "spool": not an absolute'),
        ("", "spool_reserve_kib = 1\n", r"\[store\] spool_reserve_kib = 1"),
    ],
)
def test_a_bad_value_is_refused_naming_the_key(
    tmp_path: Path, shoe: str, store: str, named: str
) -> None:
    with pytest.raises(ConfigError, match=named):
        load_config(config_with(tmp_path, shoe, store))


def test_a_postgresql_table_with_nowhere_to_spool_refuses_to_start(
    store_pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    line = {"type": "table", "game": "pontoon-nz-2000", "table_id": "T07", "boxes": 7}
    line |= {"min_bet": 5, "max_bet": 1000}
    with pytest.raises(StartError, match=r"spool_dir"):
        open_table(line, store_pg_url, {"jsmith": hash_pin("2468", iterations=1000)})
