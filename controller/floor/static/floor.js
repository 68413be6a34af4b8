// The floor's pages: the floor refreshed by short polling, and a round watched again step by
// step, drawn as the dealer's screen drew it (the screen's state after each event comes from
// the server: the engine's due() and the dealer's screen's own box views).
"use strict";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v; else n.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false)
    n.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return n;
}
function cardEl(code, isNew) {
  const suit = code.slice(-1), rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
  const red = suit === "H" || suit === "D";
  return el("span", { class: `card${red ? " red" : ""}${isNew ? " new" : ""}`, "data-card": code },
    rank + (SUITS[suit] || suit));
}

// ---------------------------------------------------------------- the floor, live
const FloorLive = {
  start() { this.refresh(); setInterval(() => this.refresh(), 2000); },
  async refresh() {
    let doc;
    try {
      const res = await fetch("/api/floor", { credentials: "same-origin" });
      if (!res.ok) return;
      doc = await res.json();
    } catch (e) { return; }
    document.getElementById("as-of").textContent = `as of ${doc.at.local}`;
    const body = document.getElementById("floor-rows");
    body.replaceChildren(...doc.tables.map((t) => tile(t, doc.today)));
  },
};
function since(seconds) {
  if (seconds === null || seconds === undefined) return "never";
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}
// One table of the pit: its game, dealer, round, status (marked when the table has gone silent),
// when it was last heard, its devices at fault, its open flags (each opening its round) and the
// day's report, rounds and flags a click away.
function tile(t, today) {
  const q = `table=${encodeURIComponent(t.table)}`;
  const rnd = t.round_in_play ? el("a", { href: `/round?${q}&round=${t.round_in_play}` }, String(t.round_in_play)) : "–";
  return el("section", { class: `tile status-${t.status.replace(/ /g, "-")}${t.stale ? " stale" : ""}`, "data-table": t.table },
    el("h2", {}, el("span", { class: "tid" }, t.table), " ", el("span", { class: "status" }, t.status),
      t.stale ? [" ", el("span", { class: "stale-mark" }, `silent ${since(t.silent_for).replace(" ago", "")}`)] : null),
    el("div", { class: "game" }, `${t.game} · ${t.boxes} boxes`),
    el("div", {}, "Dealer ", el("strong", {}, t.dealer || "–"), " · round ", rnd, ` · ${t.rounds_played || 0} played`),
    el("div", { class: "heard" }, `last heard ${since(t.silent_for)}`, el("span", { class: "muted" }, ` (${t.last_event.local || "–"} ${t.last_event_type || ""})`)),
    t.devices.map((d) => el("div", { class: "fault" }, `${d.device}: ${d.reason}`)),
    el("ul", { class: "open-flags" }, (t.newest_flags || []).map((f) => el("li", {},
      el("a", { href: `/round?${q}&round=${f.round}` }, el("span", { class: "rule" }, f.rule), ` round ${f.round}`), ` ${f.message}`)),
      t.open_flags > (t.newest_flags || []).length ? el("li", { class: "muted" }, `and ${t.open_flags - t.newest_flags.length} more`) : null),
    el("nav", { class: "links" },
      el("a", { "data-report": "", href: `/report?${q}&date=${today}` }, "today's report"), " ",
      el("a", { href: `/rounds?${q}&date=${today}` }, "rounds"), " ",
      el("a", { href: `/flags?${q}&date=${today}` }, "flags")));
}

// ---------------------------------------------------------------- watch it again
const Watch = {
  start() {
    this.doc = JSON.parse(document.getElementById("round-data").textContent);
    this.steps = this.doc.steps || [];
    this.i = 0;
    this.timer = null;
    const list = document.getElementById("steps");
    list.replaceChildren(...this.steps.map((s, i) => el("li", {
      "data-step": i, "data-seq": s.seq, class: s.flags.length ? "flagged" : null,
    }, `#${s.seq} ${s.local.slice(11, 19)} ${s.text}`)));
    list.addEventListener("click", (e) => {
      const li = e.target.closest("li"); if (li) this.go(Number(li.dataset.step));
    });
    document.getElementById("first").onclick = () => this.go(0);
    document.getElementById("prev").onclick = () => this.go(this.i - 1);
    document.getElementById("next").onclick = () => this.go(this.i + 1);
    document.getElementById("last").onclick = () => this.go(this.steps.length - 1);
    document.getElementById("play").onclick = () => this.toggle();
    document.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight") this.go(this.i + 1);
      if (e.key === "ArrowLeft") this.go(this.i - 1);
    });
    this.go(0);
  },
  toggle() {
    const button = document.getElementById("play");
    if (this.timer) { clearInterval(this.timer); this.timer = null; button.textContent = "▶ Play"; return; }
    button.textContent = "❚❚ Pause";
    this.timer = setInterval(() => {
      if (this.i >= this.steps.length - 1) { this.toggle(); return; }
      this.go(this.i + 1);
    }, 900);
  },
  go(i) {
    if (!this.steps.length) return;
    this.i = Math.max(0, Math.min(this.steps.length - 1, i));
    const step = this.steps[this.i];
    document.body.dataset.step = String(this.i);
    document.body.dataset.seq = String(step.seq);
    document.getElementById("step-label").textContent =
      `step ${this.i + 1} of ${this.steps.length} · event #${step.seq} · ${step.local} (${step.utc})`;
    for (const li of document.querySelectorAll("#steps li"))
      li.classList.toggle("current", Number(li.dataset.step) === this.i);
    const current = document.querySelector(`#steps li[data-step="${this.i}"]`);
    if (current) current.scrollIntoView({ block: "nearest" });
    this.draw(step);
  },
  draw(step) {
    const s = step.screen;
    const fresh = new Set((step.moved || []).map((m) => `${m.to}:${m.box || 0}:${m.hand || 0}:${m.card}`));
    // Before this round's first wager the table still shows the round before: the heading says
    // so rather than name the other round as if it were this page's.
    const mine = this.doc.round;
    const before = mine && (!s.shown_round || s.shown_round < mine);
    document.getElementById("s-round").textContent = before
      ? `Round ${mine} — not begun${s.shown_round ? ` (the screen still shows round ${s.shown_round})` : ""}`
      : (s.shown_round ? `Round ${s.shown_round}` : "No round");
    document.getElementById("s-phase").textContent = before ? "before" : s.phase;
    const due = document.getElementById("s-due");
    const nc = s.next_card;
    const parts = nc ? [nc.to === "dealer" ? "Next card: dealer" : `Next card: box ${nc.box}${nc.hand ? " hand " + (nc.hand + 1) : ""}`] : [];
    due.replaceChildren(el("span", {}, parts.join(" · ") || (s.phase === "idle" ? "Between rounds" : s.phase)),
      ...(s.prompts || []).map((p) => el("span", { class: "prompt" }, p)));
    const d = s.dealer || { cards: [] };
    const dealer = document.getElementById("s-dealer");
    dealer.className = "dealer" + (nc && nc.to === "dealer" ? " next" : "");
    dealer.replaceChildren(el("strong", {}, "Dealer"),
      el("span", {}, (d.cards || []).map((c) => cardEl(c, fresh.has(`dealer:0:0:${c}`)))),
      d.cards && d.cards.length ? el("span", {}, `= ${d.total}`) : "");
    const boxes = document.getElementById("s-boxes");
    const live = !["idle", "settled", "void"].includes(s.phase);
    boxes.replaceChildren(...s.boxes.map((b) => {
      const isNext = nc && nc.to === "box" && nc.box === b.box;
      const wagers = b.players.map((p) => el("div", {}, (p.controls ? "★ " : "") + `${p.player} $${p.amount}` +
        (p.insurance ? ` ins $${p.insurance}` : "")));
      let seen = null;
      if (b.seen && (Number(b.seen.amount) > 0 || (live && b.players.length))) {
        const mismatch = live && b.players.length && Number(b.seen.amount) !== Number(b.staked);
        seen = el("div", { class: "seen" + (mismatch ? " mismatch" : "") }, `camera $${b.seen.amount}`);
      }
      const hands = b.hands.map((h) => el("div", { class: "hand", "data-hand": h.hand },
        el("div", {}, h.cards.map((c) => cardEl(c, fresh.has(`box:${b.box}:${h.hand}:${c}`)))),
        el("div", {}, h.cards.length ? el("strong", {}, String(h.total)) : "",
          h.doubled ? el("span", { class: "badge" }, "doubled") : null,
          h.status ? el("span", { class: "badge" }, h.status) : null,
          h.outcome ? el("span", { class: "badge" }, h.outcome) : null)));
      // The chips the dealer had to move, as the dealer's screen said them: pay, take, return, push.
      const pay = b.payouts.length ? el("div", { class: "payout" }, b.payouts.map((p) =>
        el("div", { class: `pay-line ${p.action}`, "data-action": p.action },
          `${p.player}${p.kind !== "hand" ? " · " + p.kind : ""}: `,
          el("strong", {}, p.action === "push" ? "push" : `${p.action} ${p.amount}`),
          p.note ? el("span", { class: "note" }, ` — ${p.note}`) : null))) : null;
      return el("div", { class: `box${b.players.length || b.hands.length ? "" : " idle"}${isNext ? " next" : ""}`, "data-box": b.box },
        el("h3", {}, `Box ${b.box}`, b.flags ? ` ⚑${b.flags}` : ""), wagers, seen, hands, pay);
    }));
    const who = step.who || {};
    const by = who.role ? ` — by ${who.role}${who.name ? " " + who.name : ""}${who.source && who.source !== "dealer" && who.source !== who.role ? " [" + who.source + "]" : ""}` : "";
    const moved = (step.moved || []).map((m) => `${m.card} to ${m.text}`).join(", ");
    const cardNote = step.card && !step.card.to ? ` — not dealt: ${step.card.not_dealt}` : "";
    document.getElementById("s-event").textContent =
      `#${step.seq} ${step.local}: ${step.text}${by}${moved ? " → " + moved : ""}${cardNote}`;
    document.getElementById("s-flags").replaceChildren(...step.flags.map((f) =>
      el("li", { "data-rule": f.rule }, `Rule ${f.rule}${f.box ? " box " + f.box : ""}: ${f.message}`,
        f.words ? el("div", { class: "words" }, `“${f.words}”`) : null)));
  },
};
