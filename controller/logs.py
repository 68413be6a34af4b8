"""structlog set up for floorctl: one JSON object per line on stderr (the journal), or lines
for a person to read (structlog's console renderer) when `floorctl demo` runs on a terminal.

Every line carries the table id; the shoe (the sequence number of its load record) and the
round are bound as they change, through structlog's context variables, so a line logged by a
device thread or a web request names the table, shoe and round it happened in.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}

# The ids every line carries; updated by the service as shoes and rounds change.
_context: dict[str, Any] = {}


class _Stderr:
    """Standard error as it is when a line is written, not when logging was configured.

    ``clear_line``: each line starts by clearing the terminal's line (a progress line drawn
    with a carriage return is overwritten, then drawn again below the log line)."""

    def __init__(self, clear_line: bool = False) -> None:
        self.clear_line = clear_line

    def write(self, text: str) -> int:
        if self.clear_line and text.strip():
            text = "\r\x1b[2K" + text
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "info", stream: TextIO | None = None, *, human: bool = False) -> None:
    """Route structlog (and the standard logging of uvicorn) to JSON lines on `stream`, or
    with ``human`` to lines for a person (time, level, what happened, then its fields)."""
    out: Any = _Stderr(clear_line=human) if stream is None else stream
    renderer: Any
    if human:
        renderer = structlog.dev.ConsoleRenderer(
            colors=stream is None and sys.stderr.isatty(), sort_keys=False
        )
    else:
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            _add_table_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso" if not human else "%H:%M:%S", utc=not human),
            structlog.processors.format_exc_info if not human else _no_op,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        logging.Formatter("%(asctime)s [%(levelname)s] %(name)s: %(message)s", "%H:%M:%S")
        if human
        else _JsonStdlibFormatter()
    )
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        std = logging.getLogger(name)
        std.handlers = [handler]
        std.propagate = False
        std.setLevel(logging.WARNING if name == "uvicorn.access" else _LEVELS[level])


def _no_op(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    return event_dict  # the console renderer formats exceptions itself


def quiet_opencv() -> None:
    """OpenCV's own warnings (it prints them on standard error, outside any log) are not
    interleaved with the log: only its errors are printed."""
    import os

    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
    try:
        import cv2
    except ImportError:
        return
    setter = getattr(cv2, "setLogLevel", None)
    if setter is not None:
        setter(2)  # cv2.utils.logging.LOG_LEVEL_ERROR


def bind_table(**ids: Any) -> None:
    """Set the table/shoe/round ids that every later log line carries (None removes one)."""
    for key, value in ids.items():
        if value is None:
            _context.pop(key, None)
        else:
            _context[key] = value


def _add_table_context(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    for key, value in _context.items():
        event_dict.setdefault(key, value)
    return event_dict


class _JsonStdlibFormatter(logging.Formatter):
    """Standard-library records (uvicorn's) as the same JSON lines."""

    def format(self, record: logging.LogRecord) -> str:
        import json
        from datetime import UTC, datetime

        body: dict[str, Any] = {
            "event": record.getMessage(),
            "logger": record.name,
            "level": record.levelname.lower(),
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(),
        }
        body.update({k: v for k, v in _context.items() if k not in body})
        if record.exc_info:
            body["exception"] = self.formatException(record.exc_info)
        return json.dumps(body, default=str)
