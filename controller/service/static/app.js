// The dealer's touchscreen. State arrives whole over the WebSocket (/ws) after every event;
// taps are POSTed to /api/event with the sequence number the screen was showing, so a tap on a
// screen the table has moved past is refused rather than applied to the wrong moment. What the
// screen offers comes from the state: the engine's open decisions, the flags not yet seen, the
// dealer on duty, the devices in manual mode. Nothing here decides a rule.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let online = false;
let supToken = null;      // supervisor session token (memory only; lost on reload)
let supName = null;
let supExpires = 0;       // Date.now() when the supervisor session ends
let modalRefresh = null;

const LABELS = {
  stand: "Stand", hit: "Hit", double: "Double", split: "Split", surrender: "Surrender",
  insurance: "Insurance", rescue: "Rescue", refuse: "Refuse card", absent: "Player absent",
  peek: "Check hole card",
};
const DEALER_KINDS = new Set(Object.keys(LABELS));
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const DEVICE_NAMES = { shoe: "Shoe reader", camera: "Chip camera", store: "Audit store" };
const DEVICE_HELP = {
  shoe: "Stop drawing. Check the reader's cable; a supervisor can put the shoe in manual mode to enter cards by hand.",
  camera: "Wagers are not seen: a supervisor can put the camera in manual mode to enter them by hand.",
  store: "Play on: every event is kept safe on this PC until the database is back.",
};
const CHIPS = ["1", "5", "25", "100", "500", "1000"];

function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v;
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false)
    n.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return n;
}
function money(v) {
  if (v === null || v === undefined) return "";
  const s = String(v);
  return (s.startsWith("-") ? "−$" + s.slice(1) : "$" + s);
}
function rankText(r) { return r === "T" ? "10" : r; }
function cardEl(code, extra = "") {
  const suit = code.slice(-1), rank = rankText(code.slice(0, -1));
  const red = suit === "H" || suit === "D";
  return el("span", { class: `card ${red ? "red" : ""} ${extra}`, "data-card": code,
    role: "img", "aria-label": `${rank} of ${SUIT_NAMES[suit] || suit}` },
    el("span", { class: "corner", "aria-hidden": "true" }, rank, el("small", {}, SUITS[suit] || suit)),
    el("span", { class: "pip", "aria-hidden": "true" }, SUITS[suit] || suit));
}
function toast(msg, error = false) {
  const t = $("toast");
  t.textContent = msg; t.className = "toast" + (error ? " error" : "");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.add("hidden"), error ? 6000 : 2500);
}
function ruleName(rule) { return /^\d/.test(rule) ? `Rule ${rule}` : rule === "shoe" ? "Shoe" : rule; }

// ---------------------------------------------------------------- rendering
function render() {
  if (!state) return;
  const t = state.table, due = state.due || {};
  $("table-id").textContent = t.table_id;
  $("game").textContent = t.title || t.game;
  const ended = due.phase === "idle" && state.last_round;
  $("round").textContent = ended ? `Round ${state.last_round.round}` :
    (due.round ? `Round ${due.round}` : "No round");
  $("phase").textContent = ended ? state.last_round.status : (due.phase || "—");
  document.documentElement.style.setProperty("--boxes", t.boxes);
  renderDuty(); renderDevices(); renderStatus(); renderDue(); renderDealer(); renderBoxes();
  renderActions(); renderFlags(); renderRecent(); renderAlerts(); renderSignIn(); renderStoreDown();
  document.body.dataset.seq = String(state.seq);  // what the screen shows is as of this event
  if (!$("modal").classList.contains("hidden") && modalRefresh) modalRefresh();
}

function renderDuty() {
  const d = state.on_duty || {};
  const b = $("on-duty");
  b.classList.toggle("hidden", !d.sign_in);
  b.textContent = d.dealer ? `Dealer: ${d.dealer}` : "Dealer: sign in";
  b.dataset.dealer = d.dealer || "";
}

function deviceState(name, s) {
  if (!online) return "unknown";
  if ((state.manual || {})[name]) return "manual";
  return s.state;
}
function renderDevices() {
  const d = $("devices"); d.replaceChildren();
  for (const [name, s] of Object.entries(state.devices || {})) {
    const shown = deviceState(name, s);
    const ok = shown === "connected" || shown === "ok";
    const label = ok ? name : shown === "fault" ? `${name} FAULT` : shown === "down" ? `${name} DOWN` : `${name} ${shown}`;
    d.append(el("span", { class: `dev ${ok ? "ok" : shown}`, "data-device": name, "data-state": shown,
      title: online ? (s.reason || s.state) : "the screen is cut off: unknown" }, label));
  }
}

function renderStatus() {
  const bar = $("status"), parts = [];
  let kind = "";
  for (const [name, m] of Object.entries(state.manual || {})) {
    kind = kind || "manual";
    const what = name === "shoe" ? "cards on the card pad" : "wagers on the chip pad";
    parts.push(`${DEVICE_NAMES[name] || name} MANUAL (${m.reason || "no reason"}): ${what}`);
  }
  for (const [name, s] of Object.entries(state.devices || {})) {
    if (s.state !== "fault" || (state.manual || {})[name]) continue;
    kind = "fault";
    parts.push(`${DEVICE_NAMES[name] || name} FAULT: ${s.reason || "fault"}. ${DEVICE_HELP[name] || ""}`);
  }
  bar.className = "status" + (kind ? " " + kind : "");
  bar.dataset.state = kind || "ok";
  if (parts.length) { bar.replaceChildren(el("span", { id: "fault-text" }, parts.join(" · "))); return; }
  const shoe = state.due && state.due.shoe;
  if (!shoe) { bar.replaceChildren(el("span", { id: "shoe-counter" }, "No shoe loaded")); return; }
  let cut = "no cutting card";
  if (shoe.cut_out) cut = "cutting card out: shuffle after this round";
  else if (shoe.cut_card !== null && shoe.cut_card !== undefined)
    cut = `cutting card in ${Math.max(0, shoe.cut_card - shoe.drawn)}`;
  bar.replaceChildren(el("span", { id: "shoe-counter" },
    `Shoe ${shoe.decks} decks · ${shoe.drawn} dealt · ${shoe.remaining} left · `,
    el("span", { class: "cut" }, cut)));
}

function renderDue() {
  const due = state.due || {}, box = $("due");
  const parts = [];
  const closing = state.closing;
  if (closing) {  // "no more bets" waits until the cameras have seen the boxes as they stand
    box.replaceChildren(el("span", { id: "due-text", "data-state": "closing" },
      `No more bets — waiting for the ${closing.cameras.join(", ")} to see the boxes as they stand`));
    return;
  }
  const nc = due.next_card;
  if (nc) parts.push(nc.to === "dealer" ? "Next card: dealer" :
    `Next card: box ${nc.box}${nc.hand ? " hand " + (nc.hand + 1) : ""}`);
  const deciding = [...new Set(dealerDecisions().map((d) => d.box).filter((b) => b))];
  if (deciding.length) parts.push(`Decision: box ${deciding.join(", ")}`);
  if (!parts.length) parts.push({
    betting: "Place your bets", closed: "No more bets — deal", settled: "Round settled — pay and collect",
    void: "Round void — return the wagers", idle: "Waiting for bets", dealer: "Dealer draws",
  }[due.phase] || (due.phase || "Waiting"));
  box.replaceChildren(el("span", { id: "due-text" }, parts.join(" · ")),
    ...(due.prompts || []).map((p) => el("span", { class: "prompt" }, p)));
}

function totalEl(total, soft, cards) {
  if (!cards) return null;
  const bust = total > 21;
  return el("span", { class: "total" + (bust ? " bust" : ""), "data-total": total },
    bust ? `BUST ${total}` : soft ? `soft ${total}` : String(total));
}

function renderDealer() {
  const d = state.dealer || { cards: [] };
  const nc = state.due && state.due.next_card;
  const node = $("dealer");
  node.className = "dealer" + (nc && nc.to === "dealer" ? " next" : "");
  const by = (state.dealt_by || []).join(", ");
  node.replaceChildren(...[el("span", { class: "label" }, "Dealer", by ? el("span", { class: "who" }, `dealt by ${by}`) : null),
    el("span", { class: "cards", "data-fan": "" }, (d.cards || []).map((c) => cardEl(c))),
    totalEl(d.total, d.soft, (d.cards || []).length),
    d.bust ? el("span", { class: "badge bust" }, "dealer bust") : null].filter(Boolean));
}

const STATUS_WORDS = { natural: null, bust: "bust", rescued: "rescued", void: "void", surrendered: "surrendered", absent: "absent" };
// The day's opening (6.1-6.3) takes the boxes' place until the first shoe is loaded.
const STEPS = [["spread", "Spread face up for the players (6.2)"], ["chemmy", "Chemmy shuffled (6.3(a))"],
  ["stack", "Stacked (6.3(b))"], ["riffle", "Riffle shuffled (6.3(c))"], ["cut", "Cut"]];
function openingShown() {
  const due = state.due || {};
  return !!due.inspection || (!!due.opening && due.opening.state === "opening" && !due.boxes.length);
}
function renderOpening(wrap) {
  const due = state.due, day = due.opening || { steps: [], to_do: [], decks: { passed: [], failed: [] } };
  const insp = due.inspection;
  const done = Object.fromEntries((day.steps || []).map((s) => [s.step, s.by || "?"]));
  const names = (xs) => xs.length > 12 ? `${xs.slice(0, 12).join(" ")} … (${xs.length})` : xs.join(" ");
  const deckPart = insp
    ? el("div", { class: "inspection", "data-inspection": insp.deck || "" },
        el("div", { class: "deckcount" }, `Deck ${insp.deck || "(serial not read yet)"}: ${insp.read} of ${insp.of} read`),
        el("div", {}, `missing so far: ${insp.missing.length ? names(insp.missing) : "none"}`),
        insp.doubled.length ? el("div", { class: "needs" }, `read twice: ${names(insp.doubled)}`) : null,
        insp.foreign.length ? el("div", { class: "needs" }, `not of this deck: ${names(insp.foreign)}`) : null,
        insp.tens && insp.tens.length ? el("div", { class: "needs" }, `tens (6.1): ${names(insp.tens)}`) : null,
        el("button", { class: "btn ok", type: "button", "data-opening": "inspect_end",
          onclick: () => send({ type: "inspect_end" }) }, "End inspection", el("small", {}, "the whole deck is read")))
    : el("div", {}, el("button", { class: "btn ok", type: "button", "data-opening": "inspect",
        onclick: () => send({ type: "inspect" }) }, "Inspect a deck", el("small", {}, "read it through the reader (6.1)")));
  const decks = day.decks || { passed: [], failed: [] };
  const steps = el("ol", { class: "steps" }, STEPS.map(([step, words]) => el("li", { "data-step": step },
    done[step] ? el("span", { class: "done" }, `✓ ${words} — ${done[step]}`)
      : el("button", { class: "btn", type: "button", "data-opening-step": step, disabled: !!insp,
          onclick: () => send({ type: "opening_step", step }) }, `Confirm: ${words}`))));
  wrap.append(el("div", { class: "opening-panel", "data-opening-panel": "" },
    el("h2", {}, "Opening the table (6.1–6.3)", day.by && day.by.length ? el("span", { class: "muted" }, ` · opened by ${day.by.join(", ")}`) : ""),
    el("div", { class: "row" },
      el("div", { class: "col" }, el("div", { class: "field" }, "Inspect each deck (6.1)"), deckPart,
        el("div", { class: "muted" }, `passed: ${decks.passed.join(" ") || "none"}`),
        decks.failed.length ? el("div", { class: "needs" }, `failed: ${decks.failed.join(" ")}`) : null),
      el("div", { class: "col" }, el("div", { class: "field" }, "Then, one by one (6.2, 6.3)"), steps))));
}

function renderBoxes() {
  const wrap = $("boxes"); wrap.replaceChildren();
  wrap.classList.toggle("opening", openingShown());
  if (openingShown()) { renderOpening(wrap); return; }
  const nc = state.due && state.due.next_card;
  const deciding = new Set(dealerDecisions().map((x) => x.box));
  const naturalName = (state.table.natural_name || "natural");
  for (const b of state.boxes) {
    const isNext = nc && nc.to === "box" && nc.box === b.box;
    const cls = ["box", b.players.length || b.hands.length || b.unsure ? "" : "idle", isNext ? "next" : "",
      deciding.has(b.box) ? "active" : ""].join(" ");
    const head = el("h3", {}, el("span", {}, `Box ${b.box}`),
      b.flags ? el("span", { class: "flagmark", title: "flags on this box" }, `⚑ ${b.flags}`) : null);
    const wagers = el("div", { class: "wagers" }, b.players.map((p) =>
      el("div", { class: "wager" }, el("span", { class: "who" }, (p.controls ? "★ " : "") + p.player),
        el("span", {}, money(p.amount) + (p.insurance ? ` ins ${money(p.insurance)}` : "")))));
    let seen = null;
    const live = !["idle", "settled", "void"].includes(state.due.phase);
    if (b.seen && (Number(b.seen.amount) > 0 || (live && b.players.length))) {
      const mismatch = live && b.players.length && Number(b.seen.amount) !== Number(b.staked);
      seen = el("div", { class: "seen" + (mismatch ? " mismatch" : "") },
        `camera ${money(b.seen.amount)}` + (b.seen.confidence ? ` (${Math.round(b.seen.confidence * 100)}%)` : ""));
    }
    let unsure = null;
    if (b.unsure && !(state.manual || {}).camera) {
      const open = ["idle", "betting"].includes(state.due.phase);
      unsure = el("div", { class: "seen mismatch", "data-unsure": b.box }, `camera cannot read: ${b.unsure}`,
        open ? el("button", { class: "btn ok", type: "button", "data-enter-wager": b.box,
          onclick: () => chipPad(b.box) }, "Enter wager") : null);
    }
    const hands = b.hands.map((h) => el("div", { class: "hand", "data-hand": h.hand },
      el("div", { class: "cards", "data-fan": "" }, h.cards.map((c, i) =>
        cardEl(c, h.doubled && i === h.cards.length - 1 && h.cards.length > 2 ? "sideways" : ""))),
      el("div", { class: "line" }, totalEl(h.total, h.soft, h.cards.length),
        h.status === "natural" ? el("span", { class: "badge natural" }, naturalName) : null,
        h.status && STATUS_WORDS[h.status] && !(h.status === "bust" && h.outcome) ?
          el("span", { class: "badge " + h.status }, STATUS_WORDS[h.status]) : null,
        h.doubled ? el("span", { class: "badge doubled" }, "doubled") : null,
        h.outcome ? el("span", { class: "badge " + h.outcome, "data-outcome": h.outcome }, h.outcome) : null)));
    wrap.append(el("div", { class: cls, "data-box": b.box }, head, wagers, seen, unsure, hands, payoutEl(b)));
  }
  fanCards(document);
}

function payoutEl(b) {
  if (!b.payouts || !b.payouts.length) return null;
  const players = [...new Set(b.payouts.map((p) => p.player))];
  const rows = [];
  for (const who of players) {
    if (players.length > 1) rows.push(el("div", { class: "who" }, who));
    for (const p of b.payouts.filter((x) => x.player === who)) {
      const text = p.action === "push" ? "push" : `${p.action} ${p.amount}`;
      rows.push(el("div", { class: `pay-line ${p.action}`, "data-action": p.action, "data-kind": p.kind },
        el("span", { class: "act" }, text), p.note ? el("span", { class: "note" }, p.note) : null));
    }
  }
  return el("div", { class: "payout", "data-payout": b.box }, rows);
}

// A hand's cards fan out to fit its box; where they would hide each other's corners they go to
// a second row.
function fanCards(root) {
  for (const c of root.querySelectorAll("[data-fan]")) {
    const cards = [...c.querySelectorAll(".card")];
    c.querySelectorAll(".break").forEach((x) => x.remove());
    if (cards.length < 2) continue;
    const W = c.clientWidth, cw = cards[0].offsetWidth;
    if (!W || !cw) continue;
    const minStep = Math.max(26, cw * 0.42);
    const perRow = Math.max(1, Math.floor((W - cw) / minStep) + 1);
    const rows = Math.ceil(cards.length / perRow);
    const k = Math.ceil(cards.length / rows);
    const step = k > 1 ? Math.min(cw + 6, (W - cw) / (k - 1)) : cw;
    c.style.setProperty("--overlap", `${cw - step}px`);
    cards.forEach((card, i) => {
      card.classList.toggle("row-start", i % k === 0);
      card.classList.toggle("row-2", i >= k);
      if (i > 0 && i % k === 0) card.before(el("span", { class: "break", style: "flex-basis:100%;height:0" }));
    });
  }
}

function dealerDecisions() {
  return (state.open || []).filter((d) => d.by !== "supervisor" && DEALER_KINDS.has(d.kind));
}

function renderActions() {
  const wrap = $("actions"); wrap.replaceChildren();
  const due = state.due || {};
  for (const a of state.table_actions || []) {
    wrap.append(el("button", { class: "btn table", type: "button", "data-action": a.type,
      "data-box": a.box || null, onclick: () => tableAction(a) }, a.label, a.due ? el("small", {}, a.due) : null));
  }
  const manual = state.manual || {};
  if (manual.shoe) wrap.append(el("button", { class: "btn ok", type: "button", "data-manual": "card",
    onclick: cardPad }, "Enter card", el("small", {}, due.next_card ? nextCardText(due.next_card) : "card pad")));
  if (manual.camera && ["idle", "betting"].includes(due.phase)) wrap.append(el("button", { class: "btn ok",
    type: "button", "data-manual": "wager", onclick: () => chipPad() }, "Enter wager", el("small", {}, "chip pad")));
  const idle = !state.due.boxes.length && !state.due.inspection;
  const shoe = state.due.shoe;
  if (idle && shoe && !shoe.ended && !(state.due.opening && state.due.opening.state === "opening"))
    wrap.append(el("button", { class: "btn", type: "button", "data-action": "shoe_end",
      onclick: () => send({ type: "shoe_end" }) }, "End of shoe", el("small", {}, "read out the cards left")));
  const decisions = dealerDecisions();
  for (const d of decisions) {
    // A hit is the next card drawn from the shoe; a button only for taking an offered card (16.4).
    if (d.kind === "hit" && !d.card) continue;
    const hand = d.hand ? ` hand ${d.hand + 1}` : "";
    const who = d.player && d.by !== "controller" ? ` ${d.player}` : "";
    const label = d.kind === "hit" ? `Take the ${d.card}` : (LABELS[d.kind] || d.kind);
    const where = d.box ? `box ${d.box}${hand}${who}` : "";
    wrap.append(el("button", { class: `btn ${d.kind}`, type: "button", "data-action": d.kind,
      "data-box": d.box || null, "data-player": d.player || null, onclick: () => decide(d) },
      label, el("small", {}, where + (d.max && d.kind !== "split" ? ` · up to ${money(d.max)}` : ""))));
  }
  if (decisions.some((d) => d.kind === "hit" && !d.card))
    wrap.append(el("span", { class: "hint" }, manual.shoe ? "Hit: enter the next card on the card pad"
      : "Hit: draw the next card from the shoe"));
}
function nextCardText(nc) {
  return nc.to === "dealer" ? "next: the dealer" : `next: box ${nc.box}`;
}

function renderFlags() {
  const list = $("flags"); list.replaceChildren();
  const flags = state.flags || [];
  const waiting = flags.filter((f) => f.state === "waiting").length;
  $("flag-count").textContent = waiting ? String(waiting) : "";
  for (const f of [...flags].reverse()) {
    list.append(el("li", { class: "flag " + (f.state || ""), "data-rule": f.rule, "data-state": f.state },
      el("div", {}, el("span", { class: "rule" }, ruleName(f.rule)),
        el("span", { class: "muted" }, `  round ${f.round ?? "—"}${f.box ? " · box " + f.box : ""}`)),
      el("div", { class: "msg" }, f.message),
      f.resolution ? el("div", { class: "res" }, f.resolution) : null));
  }
}

function renderRecent() {
  const list = $("recent"); list.replaceChildren();
  for (const r of [...(state.recent || [])].reverse().slice(0, 14)) {
    const who = r.actor ? r.actor : r.source && r.source !== "shoe" ? r.source : null;
    list.append(el("li", {}, `#${r.seq} ${r.text} `, who ? el("span", { class: "src" }, `[${who}]`) : null));
  }
}

// ---------------------------------------------------------------- flags that stop the table
function renderAlerts() {
  const alerts = state.alerts || [];
  const box = $("alerts");
  const show = alerts.length > 0 && !(state.store || {}).halted;
  box.classList.toggle("hidden", !show);
  if (!show) return;
  const list = alerts.slice(0, 3).map((a) => {
    const more = (a.messages || []).length > 1 ? el("div", { class: "more" },
      (a.messages || []).slice(1, 6).join(" · ")) : null;
    const act = a.needs === "supervisor"
      ? el("div", {}, el("div", { class: "needs" }, "Supervisor needed"),
          el("button", { class: "btn sup", type: "button", "data-call-supervisor": a.seq,
            onclick: () => (supToken ? supervisorPanel() : loginDialog()) }, "Supervisor"))
      : el("button", { class: "btn ok", type: "button", "data-ack": a.seq, "data-rule": a.rule,
          onclick: () => acknowledge(a) }, "Seen");
    return el("div", { class: "alert", "data-rule": a.rule, "data-case": a.case, "data-needs": a.needs },
      el("div", {},
        el("div", { class: "rule" }, ruleName(a.rule), a.box ? `  · box ${a.box}` : "", a.round ? `  · round ${a.round}` : ""),
        a.words ? el("div", { class: "words" }, `“${a.words}”`) : null,
        el("div", { class: "msg" }, a.message), more,
        el("div", { class: "now" }, "Now: ", a.direction)),
      act);
  });
  const rest = alerts.length > 3 ? el("div", { class: "more" }, `and ${alerts.length - 3} more flags after these`) : null;
  $("alert-list").replaceChildren(...list, ...(rest ? [rest] : []));
}
async function acknowledge(a) {
  const r = await post("/api/event", { event: { type: "acknowledge", flag_event: a.seq, rule: a.rule }, seq: state.seq });
  if (!r.ok) toast(r.data.error || `refused (${r.status})`, true);
}

// ---------------------------------------------------------------- the dealer on duty
function renderSignIn() {
  const d = state.on_duty || {};
  const need = d.sign_in && !d.dealer;
  const box = $("signin");
  const was = !box.classList.contains("hidden");
  box.classList.toggle("hidden", !need);
  if (need && !was) signInForm($("signin-body"), null);
}
$("on-duty").addEventListener("click", () => openModal("Change the dealer on duty", (body) => signInForm(body, closeModal)));

function signInForm(body, done) {
  let who = "";
  const err = el("div", { class: "error-text", id: "signin-error" });
  const ids = idPad((v) => { who = v; err.textContent = ""; }, "dealer-id");
  const pad = keypad(() => { err.textContent = ""; }, { mask: true });
  const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
    if (!who) { err.textContent = "Enter your dealer id"; return; }
    const r = await post("/api/dealer/signin", { dealer: who, pin: pad.get() });
    if (r.ok) { toast(`Dealer on duty: ${r.data.dealer}`); if (done) done(); }
    else { pad.set(""); err.textContent = r.data.error || "refused"; }
  } }, "Sign in");
  body.replaceChildren(el("div", { class: "field" }, "Dealer id"), ids.node,
    el("div", { class: "row" }, el("div", {}, el("div", { class: "field" }, "PIN"), pad.node),
      el("div", {}, err, ok)));
}

// The audit store can take nothing: the whole screen says so, and lists what the shoe read.
function renderStoreDown() {
  const s = state.store || {}, panel = $("store-down");
  panel.classList.toggle("hidden", !s.halted);
  document.body.classList.toggle("halted", !!s.halted);
  if (!s.halted) return;
  const since = s.since ? ` (since ${new Date(s.since).toLocaleTimeString()})` : "";
  $("store-down-reason").textContent = (s.reason || "the store refuses every write") + since;
  const held = s.held || [];
  $("store-down-held").classList.toggle("hidden", !held.length && !s.held_lost);
  const items = held.map((h) => el("li", {}, h.text));
  if (s.held_lost) items.push(el("li", { class: "lost" }, `${s.held_lost} more read and LOST (memory full)`));
  $("store-down-list").replaceChildren(...items);
}

// ---------------------------------------------------------------- talking to the service
async function post(url, body, headers = {}) {
  let res;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body) });
  } catch (e) {
    return { ok: false, status: 0, data: { error: "the table service cannot be reached" } };
  }
  let data = {};
  try { data = await res.json(); } catch (e) { /* empty */ }
  return { ok: res.ok, status: res.status, data };
}
async function send(event) {
  const r = await post("/api/event", { event, seq: state.seq });
  report(r);
  return r;
}
function report(r) {
  if (!r.ok) { toast(r.data.error || `refused (${r.status})`, true); return; }
  const flags = r.data.flags || [];
  if (flags.length) toast(flags.map((f) => `${ruleName(f.rule)}: ${f.message}`).join(" · "), true);
}

function decide(d) {
  const ev = { type: d.kind, box: d.box };
  if (d.player && ["double", "insurance", "rescue"].includes(d.kind)) ev.player = d.player;
  if (d.kind === "split" && d.by === "back_bettor") ev.player = d.player;
  if (d.kind === "peek") delete ev.box;
  if (d.kind === "double" || d.kind === "insurance") {
    // The full amount is offered first: one more tap confirms it.
    amountPad(`${LABELS[d.kind]} — box ${d.box}${d.player ? " · " + d.player : ""}`, d.max || "", d.max,
      (amount) => send({ ...ev, amount }));
    return;
  }
  send(ev);
}
function tableAction(a) {
  if (a.type === "shuffle") { shuffleDialog(a); return; }
  const ev = { type: a.type };
  if (a.box) ev.box = a.box;
  send(ev);
}

// ---------------------------------------------------------------- dialogs
function openModal(title, build, refresh = null) {
  $("modal-title").textContent = title;
  const body = $("modal-body"); body.replaceChildren();
  build(body);
  modalRefresh = refresh;
  $("modal").classList.remove("hidden");
  updateTimer();
}
function closeModal() { $("modal").classList.add("hidden"); modalRefresh = null; }
$("modal-close").addEventListener("click", closeModal);

function keypad(onChange, { decimal = false, initial = "", mask = false } = {}) {
  let value = String(initial || "");
  const readout = el("div", { class: "readout", "data-readout": "", "aria-live": "polite" });
  const show = () => { readout.textContent = mask ? "•".repeat(value.length) : (value || " "); onChange(value); };
  const keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", decimal ? "." : "", "0", "⌫"];
  const pad = el("div", { class: "keypad" }, keys.map((k) => k === "" ? el("span") :
    el("button", { class: "btn", type: "button", "data-key": k, "aria-label": k === "⌫" ? "delete" : k, onclick: () => {
      if (k === "⌫") value = value.slice(0, -1);
      else if (value.length < 9) value += k;
      show();
    } }, k)));
  show();
  return { node: el("div", {}, readout, pad), get: () => value, set: (v) => { value = v; show(); } };
}
// Letters and digits for an id: dealers and supervisors are not listed by the screen.
function idPad(onChange, name) {
  let value = "";
  const readout = el("div", { class: "readout", "data-id-readout": name, "aria-live": "polite" });
  const show = () => { readout.textContent = value || " "; onChange(value); };
  const keys = "1234567890QWERTYUIOPASDFGHJKLZXCVBNM".split("").concat(["⌫"]);
  const pad = el("div", { class: "idpad" }, keys.map((k) => el("button", { class: "btn", type: "button",
    "data-idkey": k, "aria-label": k === "⌫" ? "delete" : k, onclick: () => {
      if (k === "⌫") value = value.slice(0, -1);
      else if (value.length < 32) value += k.toLowerCase();
      show();
    } }, k)));
  show();
  return { node: el("div", {}, readout, pad), get: () => value };
}

function amountPad(title, initial, max, done) {
  openModal(title, (body) => {
    const err = el("div", { class: "error-text" });
    const pad = keypad(() => { err.textContent = ""; }, { decimal: true, initial });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: () => {
      const v = pad.get();
      if (!/^\d+(\.\d{1,2})?$/.test(v) || Number(v) <= 0) { err.textContent = "Enter an amount"; return; }
      closeModal(); done(v);
    } }, "Confirm");
    body.append(max ? el("div", { class: "muted" }, `Up to ${money(max)}`) : "", pad.node, err, ok);
  });
}

function shuffleDialog(a) {
  openModal("New shoe loaded", (body) => {
    const pad = keypad(() => {}, { initial: a.cut_card_default || "" });
    body.append(el("div", { class: "field" }, "Cards before the cutting card"), pad.node,
      el("div", { class: "row" },
        el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: () => {
          closeModal(); send({ type: "shuffle", decks: a.decks, cut_card: Number(pad.get() || 0) });
        } }, "Shoe loaded"),
        el("button", { class: "btn", type: "button", onclick: () => {
          closeModal(); send({ type: "shuffle", decks: a.decks, cut_card: null });
        } }, "No cutting card")));
  });
}

// ---------------------------------------------------------------- play by hand (manual mode)
function pickCard(body, onPick) {
  let rank = null, suit = null;
  const ranks = el("div", { class: "grid" }), suits = el("div", { class: "grid" });
  const draw = () => {
    ranks.replaceChildren(...(state.table.ranks || "A23456789TJQK").split("").map((r) => el("button", {
      class: "btn" + (r === rank ? " sel" : ""), type: "button", "data-rank": r, "aria-pressed": String(r === rank),
      onclick: () => { rank = r; draw(); } }, rankText(r))));
    suits.replaceChildren(...Object.entries(SUITS).map(([s, sym]) => el("button", {
      class: "btn" + (s === suit ? " sel" : ""), type: "button", "data-suit": s, "aria-label": SUIT_NAMES[s],
      "aria-pressed": String(s === suit), onclick: () => { suit = s; draw(); } }, sym)));
    onPick(rank && suit ? rank + suit : null);
  };
  draw();
  body.append(el("div", { class: "field" }, "Rank"), ranks, el("div", { class: "field" }, "Suit"), suits);
}
function cardPad() {
  openModal("Card pad — the card as it left the shoe", (body) => {
    let card = null;
    const where = el("div", { class: "muted" });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", disabled: true, onclick: async () => {
      const r = await send({ type: "card", card });
      if (r.ok) cardPad();  // ready for the next card
    } }, "Record card");
    const showWhere = () => { const nc = state.due.next_card; where.textContent = nc ? nextCardText(nc) : "no hand is due a card"; };
    showWhere();
    body.append(where);
    pickCard(body, (c) => { card = c; ok.disabled = !c; });
    body.append(ok);
    modalRefresh = showWhere;
  });
}
function chipPad(boxNumber = null) {
  openModal("Chip pad — a wager by hand", (body) => {
    let box = boxNumber, amount = "0", who = null;
    const boxes = el("div", { class: "grid" }), chips = el("div", { class: "row" });
    const readout = el("div", { class: "readout", "data-readout": "" });
    const names = el("div", { class: "grid" });
    const err = el("div", { class: "error-text" });
    const draw = () => {
      boxes.replaceChildren(...state.boxes.map((b) => el("button", { class: "btn" + (b.box === box ? " sel" : ""),
        type: "button", "data-pad-box": b.box, onclick: () => { box = b.box; who = null; draw(); } }, `Box ${b.box}`)));
      const b = state.boxes.find((x) => x.box === box);
      const options = b ? [...new Set([...b.players.map((p) => p.player), `box${b.box}`])] : [];
      if (who === null && options.length) who = options[0];
      names.replaceChildren(...options.map((n) => el("button", { class: "btn" + (n === who ? " sel" : ""),
        type: "button", "data-player": n, onclick: () => { who = n; draw(); } }, n)));
      readout.textContent = money(amount);
    };
    chips.replaceChildren(...(state.table.chips || CHIPS).map((v) => el("button", { class: "btn chip", type: "button",
      "data-chip": v, "aria-label": `add ${v}`, onclick: () => { amount = String(Number(amount) + Number(v)); draw(); } }, v)),
      el("button", { class: "btn", type: "button", "data-chip": "clear", onclick: () => { amount = "0"; draw(); } }, "Clear"));
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      if (!box) { err.textContent = "Choose the box"; return; }
      const r = await send({ type: "bet", box, player: who || `box${box}`, amount });
      if (r.ok) closeModal();
    } }, "Record wager");
    draw();
    body.append(el("div", { class: "field" }, "Box"), boxes, el("div", { class: "field" }, "Player"), names,
      el("div", { class: "field" }, "Chips (0 withdraws the wager)"), chips, readout, err, ok);
  });
}

// ---------------------------------------------------------------- supervisor
$("sup-open").addEventListener("click", () => supToken ? supervisorPanel() : loginDialog());

function loginDialog() {
  openModal("Supervisor PIN", (body) => {
    let who = "";
    const err = el("div", { class: "error-text", id: "pin-error" });
    const ids = idPad((v) => { who = v; err.textContent = ""; }, "supervisor-id");
    const pad = keypad(() => { err.textContent = ""; }, { mask: true });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      const r = await post("/api/supervisor/login", { supervisor: who, pin: pad.get() });
      if (r.ok) {
        supToken = r.data.token; supName = r.data.supervisor;
        supExpires = Date.now() + r.data.expires_in * 1000;
        updateTimer();
        supervisorPanel();
      } else {
        pad.set("");
        err.textContent = r.data.error || "refused";
      }
    } }, "Unlock");
    body.append(el("div", { class: "field" }, "Supervisor id"), ids.node,
      el("div", { class: "field" }, "PIN"), pad.node, err, ok);
  });
}
function updateTimer() {
  const left = Math.max(0, Math.round((supExpires - Date.now()) / 1000));
  const text = supToken ? `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}` : "";
  $("sup-open").textContent = supToken ? `Supervisor ${supName} · ${text}` : "Supervisor";
  $("modal-timer").textContent = supToken && $("modal-title").textContent.startsWith("Supervisor") ? `locks in ${text}` : "";
  if (supToken && left <= 0) lockSupervisor();
}
setInterval(updateTimer, 1000);

function lockSupervisor() {
  if (supToken) post("/api/supervisor/logout", {}, { "x-supervisor-token": supToken });
  supToken = null; supName = null; supExpires = 0;
  updateTimer();
  if (!$("modal").classList.contains("hidden") && $("modal-title").textContent.startsWith("Supervisor")) closeModal();
}
async function supSend(event) {
  const r = await post("/api/supervisor/event", { event, seq: state.seq }, { "x-supervisor-token": supToken });
  if (r.status === 401) { lockSupervisor(); toast("Supervisor session ended: enter the PIN again", true); return r; }
  report(r);
  if (r.ok) toast(`Recorded: ${event.type.replace("_", " ")} by ${supName}`);
  return r;
}

function supervisorPanel() {
  openModal(`Supervisor — ${supName}`, buildPanel, () => {
    const body = $("modal-body");
    if ($("modal-title").textContent.startsWith("Supervisor —")) { body.replaceChildren(); buildPanel(body); }
  });
}
function buildPanel(body) {
  const resolve = (state.alerts || []).filter((a) => a.needs === "supervisor");
  const misreads = state.misreads || [];
  const acts = state.supervisor_actions || [];
  body.append(el("div", { class: "field" }, `Flags to resolve (${resolve.length})`),
    el("div", { class: "grid" }, resolve.length ? resolve.map((a) => {
      const misread = misreads.find((m) => m.seq === a.seq && a.case === "shoe:misread");
      return misread
        ? el("button", { class: "btn", type: "button", "data-sup": `correct-${misread.seq}`,
            onclick: () => cardPicker(`Correct misread #${misread.seq} (“${misread.raw}”)`,
              (card) => supSend({ type: "card", card, correction_of: misread.seq })) },
            `Enter the card #${misread.seq}`, el("small", {}, misread.raw))
        : el("button", { class: "btn", type: "button", "data-sup": `resolve-${a.seq}-${a.rule}`,
            onclick: () => supSend({ type: "acknowledge", flag_event: a.seq, rule: a.rule }) },
            `Resolved: ${ruleName(a.rule)}`, el("small", {}, `#${a.seq}`));
    }) : el("span", { class: "muted" }, "none")));
  if (misreads.some((m) => !resolve.find((a) => a.seq === m.seq))) {
    body.append(el("div", { class: "grid" }, misreads.filter((m) => !resolve.find((a) => a.seq === m.seq)).map((m) =>
      el("button", { class: "btn", type: "button", "data-sup": `correct-${m.seq}`,
        onclick: () => cardPicker(`Correct misread #${m.seq} (“${m.raw}”)`,
          (card) => supSend({ type: "card", card, correction_of: m.seq })) }, `Misread #${m.seq}`, el("small", {}, m.raw)))));
  }
  body.append(el("div", { class: "field" }, "This round"),
    el("div", { class: "grid" }, acts.length ? acts.map((a) => el("button", {
      class: "btn " + (a.type === "void" ? "danger" : ""), type: "button",
      "data-sup": a.type === "void" ? (a.box ? `void-box-${a.box}` : "void-round") : "reshuffle",
      onclick: () => a.type === "void"
        ? confirmThen(`${a.label}?`, () => supSend(a.box ? { type: "void", box: a.box } : { type: "void" }))
        : reshuffleDialog() }, a.label)) : el("span", { class: "muted" }, "no round in progress")));
  const due = state.due || {};
  const idle = !due.boxes.length && !due.inspection;
  body.append(el("div", { class: "field" }, "The table's day"), el("div", { class: "grid" },
    !due.opening ? el("button", { class: "btn ok", type: "button", "data-sup": "open-table", disabled: !idle,
      onclick: () => confirmThen("Open the table? The decks are inspected next (6.1).", () => supSend({ type: "open_table" })) },
      "Open the table", el("small", {}, (state.on_duty || {}).dealer ? `with ${(state.on_duty || {}).dealer}` : ""))
    : el("button", { class: "btn", type: "button", "data-sup": "close-table", disabled: !idle,
      onclick: () => confirmThen(due.shoe && !due.shoe.ended ? "The shoe has not ended: end it and read out its cards first. Close anyway?" :
        "Close the table for the day?", () => supSend({ type: "close_table" })) }, "Close the table")));
  body.append(el("div", { class: "field" }, "Manual mode"), el("div", { class: "grid" },
    ["shoe", "camera"].map((device) => {
      const on = (state.manual || {})[device];
      const s = (state.devices || {})[device] || { state: "off" };
      const up = s.state === "ok" || s.state === "connected";
      if (on) return el("button", { class: "btn", type: "button", "data-sup": `manual-off-${device}`,
        onclick: () => supSend({ type: "manual_mode", device, on: false, reason: "ended by the supervisor" }) },
        `End manual: ${device}`);
      return el("button", { class: "btn", type: "button", "data-sup": `manual-on-${device}`, disabled: up,
        onclick: () => manualDialog(device) }, `Manual mode: ${device}`, el("small", {}, up ? "working" : s.state));
    })));
  body.append(el("div", { class: "field" }, "By hand"),
    el("div", { class: "grid" },
      el("button", { class: "btn", type: "button", "data-sup": "manual-card",
        onclick: () => cardPicker("Enter a card by hand", (card) => supSend({ type: "card", card })) }, "Enter a card"),
      state.boxes.map((b) => el("button", { class: "btn", type: "button", "data-sup": `wager-${b.box}`,
        onclick: () => manualWager(b) }, `Wager box ${b.box}`))),
    cameraDown() ? el("div", { class: "muted" }, "camera down: wagers entered by hand") : "",
    el("div", { class: "row" }, el("button", { class: "btn", type: "button", "data-sup": "lock",
      onclick: lockSupervisor }, "Lock")));
}
function cameraDown() { const c = (state.devices || {}).camera; return !c || (c.state !== "ok" && c.state !== "connected"); }

function manualDialog(device) {
  const presets = device === "shoe"
    ? ["shoe reader fault", "no shoe reader at this table", "reader cable being replaced"]
    : ["chip camera fault", "no chip camera at this table", "camera being recalibrated"];
  openModal(`Supervisor — manual mode: ${device}`, (body) => {
    let reason = "";
    const err = el("div", { class: "error-text" });
    const choices = el("div", { class: "grid" });
    const draw = () => choices.replaceChildren(...presets.map((p) => el("button", { class: "btn" + (p === reason ? " sel" : ""),
      type: "button", "data-reason": p, onclick: () => { reason = p; draw(); } }, p)));
    draw();
    const input = el("input", { class: "text", type: "text", placeholder: "or type the reason", "aria-label": "reason",
      "data-reason-input": "", oninput: (e) => { reason = e.target.value.trim(); draw(); } });
    body.append(el("div", { class: "field" }, "Why (recorded with your id)"), choices, input, err,
      el("div", { class: "row" }, el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
        if (!reason) { err.textContent = "Choose or type the reason"; return; }
        const r = await supSend({ type: "manual_mode", device, on: true, reason });
        if (r.ok) supervisorPanel();
      } }, "Start manual mode"), el("button", { class: "btn", type: "button", onclick: supervisorPanel }, "Back")));
  });
}
function confirmThen(question, action) {
  openModal("Supervisor — confirm", (body) => {
    body.append(el("p", {}, question), el("div", { class: "row" },
      el("button", { class: "btn danger", type: "button", "data-ok": "", onclick: async () => {
        await action(); supervisorPanel(); } }, "Yes"),
      el("button", { class: "btn", type: "button", onclick: supervisorPanel }, "No")));
  });
}
function reshuffleDialog() {
  openModal("Supervisor — reshuffle the discards", (body) => {
    const pad = keypad(() => {});
    body.append(el("div", { class: "field" }, "Cards before the cutting card"), pad.node,
      el("div", { class: "row" },
        el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
          await supSend({ type: "reshuffle_discards", cut_card: Number(pad.get() || 0) }); supervisorPanel(); } },
          "Discards loaded"),
        el("button", { class: "btn", type: "button", onclick: async () => {
          await supSend({ type: "reshuffle_discards", cut_card: null }); supervisorPanel(); } }, "No cutting card")));
  });
}
function cardPicker(title, done) {
  openModal(`Supervisor — ${title}`, (body) => {
    let card = null;
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", disabled: true, onclick: async () => {
      await done(card); supervisorPanel(); } }, "Record card");
    pickCard(body, (c) => { card = c; ok.disabled = !c; });
    body.append(ok);
  });
}
function manualWager(b) {
  openModal(`Supervisor — wager by hand, box ${b.box}`, (body) => {
    const names = [...new Set([...b.players.map((p) => p.player), `box${b.box}`])];
    let who = names[0];
    const err = el("div", { class: "error-text" });
    const whoRow = el("div", { class: "grid" });
    const input = el("input", { class: "text", type: "text", placeholder: "or type a player's name",
      "aria-label": "player's name", "data-player-input": "",
      oninput: (e) => { who = e.target.value.trim(); drawNames(); } });
    const drawNames = () => whoRow.replaceChildren(...names.map((n) => el("button", {
      class: "btn" + (n === who ? " sel" : ""), type: "button", "data-player": n,
      onclick: () => { who = n; input.value = ""; drawNames(); } }, n)));
    drawNames();
    const pad = keypad(() => { err.textContent = ""; }, { decimal: true });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      const v = pad.get();
      if (!who) { err.textContent = "Choose the player"; return; }
      if (!/^\d+(\.\d{1,2})?$/.test(v)) { err.textContent = "Enter an amount (0 withdraws)"; return; }
      const r = await supSend({ type: "bet", box: b.box, player: who, amount: v });
      if (r.ok) supervisorPanel();
    } }, "Record wager");
    body.append(el("div", { class: "field" }, "Player"), whoRow, input,
      el("div", { class: "field" }, "Amount"), pad.node, err, ok);
  });
}

// ---------------------------------------------------------------- live updates
function setOnline(now) {
  online = now;
  $("conn").classList.toggle("hidden", now);
  if (state) { renderDevices(); }
}
function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onmessage = (m) => { state = JSON.parse(m.data); setOnline(true); render(); };
  ws.onclose = () => { setOnline(false); setTimeout(connect, 1000); };
  ws.onerror = () => ws.close();
}
window.addEventListener("resize", () => fanCards(document));
connect();
