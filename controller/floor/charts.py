"""Small SVG charts for the game-protection pages (drawn here: no chart library in the
browser). Values are numbers the analysis computed; the SVG holds no text from a user except
through :func:`html.escape`."""

from __future__ import annotations

import html
from collections.abc import Sequence

from markupsafe import Markup

W, H, PAD = 420, 240, 36


def _scale(lo: float, hi: float, a: float, b: float) -> tuple[float, float]:
    if hi <= lo:
        hi = lo + 1.0
    k = (b - a) / (hi - lo)
    return k, a - lo * k


def _frame(
    x_label: str, y_label: str, xs: tuple[float, float], ys: tuple[float, float]
) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" role="img">',
        f'<rect x="{PAD}" y="8" width="{W - PAD - 8}" height="{H - PAD - 8}" fill="#fff" '
        'stroke="#cfd8d3"/>',
        f'<text x="{W / 2}" y="{H - 6}" font-size="11" text-anchor="middle">'
        f"{html.escape(x_label)} ({xs[0]:g} to {xs[1]:g})</text>",
        f'<text x="10" y="{H / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 10 {H / 2})">'
        f"{html.escape(y_label)} ({ys[0]:g} to {ys[1]:g})</text>",
    ]


def scatter(points: Sequence[tuple[float, float]], x_label: str, y_label: str) -> Markup:
    if not points:
        return Markup("<p class='muted small'>no rounds</p>")
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = 0.0, max(ys)
    kx, bx = _scale(x0, x1, PAD + 4, W - 12)
    ky, by = _scale(y0, y1, H - PAD - 4, 12)
    out = _frame(x_label, y_label, (round(x0, 1), round(x1, 1)), (y0, y1))
    for x, y in points:
        out.append(
            f'<circle cx="{kx * x + bx:.1f}" cy="{ky * y + by:.1f}" r="2.2" '
            'fill="#1f5f8b" fill-opacity="0.45"/>'
        )
    out.append("</svg>")
    return Markup("".join(out))


def lines(series: Sequence[Sequence[float]], x_label: str, y_label: str) -> Markup:
    flat = [v for s in series for v in s]
    if not flat:
        return Markup("<p class='muted small'>no rounds</p>")
    n = max(len(s) for s in series)
    y0, y1 = min([*flat, 0.0]), max([*flat, 0.0])
    kx, bx = _scale(0, max(n - 1, 1), PAD + 4, W - 12)
    ky, by = _scale(y0, y1, H - PAD - 4, 12)
    out = _frame(x_label, y_label, (1, n), (round(y0), round(y1)))
    out.append(
        f'<line x1="{PAD}" x2="{W - 8}" y1="{by:.1f}" y2="{by:.1f}" stroke="#999" '
        'stroke-width="0.5"/>'
    )
    for s, dash in zip(series, ("", ' stroke-dasharray="5 3"'), strict=False):
        pts = " ".join(f"{kx * i + bx:.1f},{ky * v + by:.1f}" for i, v in enumerate(s))
        out.append(
            f'<polyline points="{pts}" fill="none" stroke="#1f5f8b" stroke-width="1.4"{dash}/>'
        )
    out.append("</svg>")
    return Markup("".join(out))
