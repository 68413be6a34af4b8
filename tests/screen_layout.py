"""Looking at a screen as a person does: is every control on the screen, is any text cut off,
does anything scroll?

``layout_faults(page)`` measures the page as it is drawn (bounding boxes, the clipping of every
``overflow`` ancestor, scroll sizes against client sizes) and returns one line per fault:

- a control (button, input, link) partly or wholly outside the viewport, or cut by an ancestor
  that clips it (a drawer whose Unlock button is below its edge); a button under 48x48 px;
- text cut off: a line of text running past its clipping ancestor or the viewport, or an
  element with ``text-overflow: ellipsis`` whose text does not fit;
- the page itself scrolling, or any element that scrolls because what it holds does not fit.

An element marked ``data-tail`` is a list shown newest first whose older lines may fall off its
bottom edge (the dealer's log): text cut there is by design and not reported. Anything else
that does not fit is a fault. Any panel added to a screen can be held to the same check:
``assert_fits(page, "the chip-count pad")``.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

_MEASURE = r"""
() => {
  const W = window.innerWidth, H = window.innerHeight, out = [];
  const SLACK = 1.5, FINGER = 48;
  const label = (e) => {
    let s = e.tagName.toLowerCase();
    if (e.id) s += "#" + e.id;
    for (const a of e.attributes) if (a.name.startsWith("data-")) { s += `[${a.name}="${a.value}"]`; break; }
    const t = (e.innerText || e.value || e.getAttribute("aria-label") || "").trim().replace(/\s+/g, " ");
    return t ? `${s} "${t.slice(0, 50)}"` : s;
  };
  const drawn = (e) => {
    for (let a = e; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.display === "none" || s.visibility === "hidden" || Number(s.opacity) === 0) return false;
    }
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const clips = (s) => s.overflowX !== "visible" || s.overflowY !== "visible";
  // The area an element can be seen in: the viewport cut by every clipping ancestor.
  const clipOf = (e, self = false) => {
    let box = { l: 0, t: 0, r: W, b: H, by: "the viewport" };
    for (let a = e; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if ((self || a !== e) && clips(s) && a !== document.documentElement && a !== document.body) {
        const r = a.getBoundingClientRect();
        const l = r.left + a.clientLeft, t = r.top + a.clientTop;
        const c = { l, t, r: l + a.clientWidth, b: t + a.clientHeight };
        if (c.l > box.l) { box.l = c.l; box.by = label(a); }
        if (c.t > box.t) { box.t = c.t; box.by = label(a); }
        if (c.r < box.r) { box.r = c.r; box.by = label(a); }
        if (c.b < box.b) { box.b = c.b; box.by = label(a); }
      }
      if (s.position === "fixed") break;
    }
    return box;
  };
  const inside = (r, c) => r.left >= c.l - SLACK && r.top >= c.t - SLACK &&
    r.right <= c.r + SLACK && r.bottom <= c.b + SLACK;
  const tail = (e) => !!e.closest("[data-tail]");

  const doc = document.documentElement;
  if (doc.scrollHeight > H + SLACK || doc.scrollWidth > W + SLACK)
    out.push(`the page scrolls: ${doc.scrollWidth}x${doc.scrollHeight} in ${W}x${H}`);

  for (const e of document.querySelectorAll("body *")) {
    if (!drawn(e) || tail(e)) continue;
    const s = getComputedStyle(e);
    if ((s.overflowY === "auto" || s.overflowY === "scroll") && e.scrollHeight > e.clientHeight + SLACK)
      out.push(`${label(e)} scrolls: ${e.scrollHeight}px of content in ${e.clientHeight}px`);
    if ((s.overflowX === "auto" || s.overflowX === "scroll") && e.scrollWidth > e.clientWidth + SLACK)
      out.push(`${label(e)} scrolls sideways: ${e.scrollWidth}px of content in ${e.clientWidth}px`);
    if (s.textOverflow === "ellipsis" && e.scrollWidth > e.clientWidth + SLACK && e.innerText.trim())
      out.push(`${label(e)} is truncated: ${e.scrollWidth}px of text in ${e.clientWidth}px`);
  }

  const controls = 'button, input, select, textarea, a[href], [role="button"]';
  for (const e of document.querySelectorAll(controls)) {
    if (!drawn(e) || tail(e)) continue;
    const r = e.getBoundingClientRect(), c = clipOf(e);
    if (e.matches("button, [role=button]") && (r.width < FINGER - SLACK || r.height < FINGER - SLACK))
      out.push(`${label(e)} is smaller than a finger: ${Math.round(r.width)}x${Math.round(r.height)} px`);
    if (!inside(r, c))
      out.push(`${label(e)} is not wholly on screen: ` +
        `[${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.right)},${Math.round(r.bottom)}] ` +
        `outside ${c.by} [${Math.round(c.l)},${Math.round(c.t)} ${Math.round(c.r)},${Math.round(c.b)}]`);
  }

  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const host = n.parentElement;
    if (!host || !n.textContent.trim() || !drawn(host) || tail(host)) continue;
    if (host.closest("script, style")) continue;
    const c = clipOf(host, true), range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1 || inside(r, c)) continue;
      const key = label(host);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(`text cut off in ${key}: ` +
          `[${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.right)},${Math.round(r.bottom)}] ` +
          `outside ${c.by}`);
      }
      break;
    }
  }
  return out;
}
"""


def layout_faults(page: Page) -> list[str]:
    """Every control off the screen, every text cut off, everything that scrolls (see above)."""
    found: list[str] = page.evaluate(_MEASURE)
    return found


def assert_fits(page: Page, where: str) -> None:
    """Fail naming each fault of the page as it is now."""
    faults = layout_faults(page)
    size: Any = page.viewport_size or {}
    assert not faults, f"{where} at {size.get('width')}x{size.get('height')}:\n" + "\n".join(
        faults
    )
