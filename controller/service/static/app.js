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
// What a device at fault means for the dealer, in the dealer's words (the technical reason is
// the technician's: it is in the device's tooltip, the supervisor's drawer and the log).
const DEVICE_HELP = {
  shoe: "not reading — stop drawing and call the supervisor (cards can be entered by hand)",
  camera: "not seeing the wagers — call the supervisor (wagers can be entered by hand)",
  store: "database away — play on: every event is kept safe on this PC",
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
function ruleName(rule) {
  return /^\d/.test(rule) ? `Rule ${rule}` :
    ({ shoe: "Shoe", tray: "Tray", slip: "Slip", clock: "Clock changed" })[rule] || rule;
}

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
  $("table-area").classList.toggle("opening", openingShown());
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
    const label = ok ? name : shown === "unknown" ? `${name} ?` : `${name} ${shown.toUpperCase()}`;
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
    parts.push(`${DEVICE_NAMES[name] || name} FAULT: ${DEVICE_HELP[name] || "call the supervisor"}`);
  }
  bar.className = "status" + (kind ? " " + kind : "");
  bar.dataset.state = kind || "ok";
  if (parts.length) {
    bar.replaceChildren(el("span", { id: "fault-text" }, parts.map((p) => el("span", { class: "line" }, p))));
    return;
  }
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
  // Between rounds the table may not be taking bets at all: opening, no shoe, the shoe ended, or
  // the last round's chips still being paid and collected.
  const opening = openingShown();
  const noShoe = !due.shoe || due.shoe.ended;
  const paying = due.phase === "idle" && state.last_round && !(due.boxes || []).length &&
    (state.boxes || []).some((b) => (b.payouts || []).length);
  let prompts = due.prompts || [];
  if (opening || noShoe || paying) prompts = prompts.filter((p) => p !== "place your bets");
  if (opening) prompts = prompts.filter((p) => !p.startsWith("inspection of") && !p.startsWith("load a shoe"));
  if (!parts.length) {
    if (opening) parts.push("Opening the table");
    else if (!due.shoe) parts.push("No shoe: load a new shoe");
    else if (due.shoe.ended) parts.push("Shoe ended");
    else if (paying) parts.push(`Round ${state.last_round.round} — pay and collect`);
    else parts.push({
      betting: "Place your bets", closed: "No more bets — deal", settled: "Round settled — pay and collect",
      void: "Round void — return the wagers", idle: "Place your bets", dealer: "Dealer draws",
    }[due.phase] || (due.phase || "Waiting"));
  }
  if (paying) prompts = [...prompts, "then take the next bets"];
  const said = parts.join(" · ").toLowerCase();
  prompts = prompts.filter((p) => p.toLowerCase() !== said);  // not the same words twice
  box.replaceChildren(el("span", { id: "due-text" }, parts.join(" · ")),
    el("span", { class: "prompts" }, prompts.map((p) => el("span", { class: "prompt" }, p))));
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
        el("div", { class: "row" },
          (state.manual || {}).shoe ? el("button", { class: "btn", type: "button", "data-opening": "by-hand",
            onclick: deckByHand }, "Enter by hand", el("small", {}, "no shoe reader")) : null,
          el("button", { class: "btn ok", type: "button", "data-opening": "inspect_end",
            onclick: () => send({ type: "inspect_end" }) }, "End inspection", el("small", {}, "the whole deck is read"))))
    : el("div", {}, el("button", { class: "btn ok", type: "button", "data-opening": "inspect",
        onclick: inspectDialog }, "Inspect a deck",
        el("small", {}, (state.manual || {}).shoe ? "its serial, then its cards by hand (6.1)" : "read it through the reader (6.1)")));
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

// A deck's inspection begins with its serial when the shoe reader cannot read it (the reader
// decodes it from the cards otherwise; typing it is then optional).
function inspectDialog() {
  openModal("Inspect a deck (6.1)", (body) => {
    const err = el("div", { class: "error-text" });
    const serial = keyboard(() => { err.textContent = ""; }, { name: "deck-serial", max: 12 });
    const start = (deck) => { closeModal(); send(deck ? { type: "inspect", deck } : { type: "inspect" }); };
    body.append(el("div", { class: "field" }, "The deck's serial (4–12 letters and digits, on the box)"), serial.node, err,
      el("div", { class: "row" },
        el("button", { class: "btn ok", type: "button", "data-ok": "", onclick: () => {
          const v = serial.get().toUpperCase();
          if (!/^[A-Z0-9]{4,12}$/.test(v)) { err.textContent = "4 to 12 letters and digits"; return; }
          start(v);
        } }, "Start inspection"),
        (state.manual || {}).shoe ? null : el("button", { class: "btn", type: "button", "data-no-serial": "",
          onclick: () => start(null) }, "The reader reads it")));
  }, null, { wide: true });
}
// A deck entered by hand (the shoe in manual mode): one tap a card on the deck's grid, or, once
// the dealer and the supervisor have checked the spread deck complete (6.1), every card not yet
// entered recorded in one go. What is recorded is a card event each, entered by hand.
async function nextState(before) {
  for (let i = 0; i < 200 && state.seq === before; i++) await new Promise((ok) => setTimeout(ok, 25));
}
function deckByHand() {
  const build = (body) => {
    const insp = state.due.inspection;
    if (!insp) { closeModal(); return; }
    const missing = new Set(insp.missing);
    const ranks = (state.table.ranks || "A23456789TJQK").split("");
    const grid = el("div", { class: "deckgrid", style: `--ranks:${ranks.length}` },
      Object.keys(SUITS).flatMap((suit) => ranks.map((r) => {
        const code = r + suit, left = missing.has(code);
        return el("button", { class: "btn deckcard" + (left ? "" : " done") + (suit === "H" || suit === "D" ? " red" : ""),
          type: "button", "data-deck-card": code, disabled: !left, "aria-label": `${rankText(r)} of ${SUIT_NAMES[suit]}`,
          onclick: () => send({ type: "card", card: code }) }, rankText(r) + SUITS[suit]);
      })));
    const rest = [...missing];
    body.append(el("div", { class: "deckcount" }, `Deck ${insp.deck || ""}: ${insp.read} of ${insp.of} entered`),
      el("div", { class: "muted" }, "Tap each card as it is turned over, or check the spread deck and record the rest."),
      grid,
      el("div", { class: "row" },
        el("button", { class: "btn ok", type: "button", "data-deck-rest": rest.length, disabled: !rest.length,
          onclick: async () => {
            for (const card of rest) {
              const before = state.seq;
              const r = await send({ type: "card", card });
              if (!r.ok) return;
              await nextState(before);
            }
          } }, `Deck checked complete`, el("small", {}, `record the ${rest.length} not entered`)),
        el("button", { class: "btn", type: "button", "data-ok": "", onclick: () => { closeModal(); send({ type: "inspect_end" }); } },
          "End inspection")));
  };
  openModal("Deck by hand (6.1)", build, () => { const b = $("modal-body"); b.replaceChildren(); build(b); }, { wide: true });
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
      onclick: () => dealerConfirm("End of shoe? The cards left are read out next; no more rounds from this shoe.",
        "Yes, end the shoe", () => send({ type: "shoe_end" })) },
      "End of shoe", el("small", {}, "read out the cards left")));
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
// A flag of the round on the table (or the one just ended, still shown) stops the table: one at a
// time in a compact sheet over the decision buttons. Flags of rounds already over are counted at
// the top of the side column, each named, until seen: never hidden while unacknowledged.
function currentRound() {
  const due = state.due || {};
  if (due.phase && due.phase !== "idle") return due.round;
  return state.last_round ? state.last_round.round : due.round;
}
function renderAlerts() {
  const alerts = state.alerts || [];
  const now = currentRound();
  const older = alerts.filter((a) => a.round !== null && a.round !== undefined && now && a.round < now);
  const current = alerts.filter((a) => !older.includes(a));
  renderOlder(older);
  const box = $("alerts");
  const show = current.length > 0 && !(state.store || {}).halted;
  box.classList.toggle("hidden", !show);
  if (!show) return;
  const a = current[0];
  const act = a.needs === "supervisor"
    ? el("div", {}, el("div", { class: "needs" }, "Supervisor needed"),
        el("button", { class: "btn sup", type: "button", "data-call-supervisor": a.seq,
          onclick: () => (supToken ? supervisorPanel() : loginDialog()) }, "Supervisor"))
    : el("button", { class: "btn ok", type: "button", "data-ack": a.seq, "data-rule": a.rule,
        onclick: () => acknowledge(a) }, "Seen");
  const where = [a.box ? `box ${a.box}` : "", a.round ? `round ${a.round}` : ""].filter(Boolean).join(" · ");
  const extra = (a.messages || []).length > 1 ? el("div", { class: "more" }, (a.messages || []).slice(1, 4).join(" · ")) : null;
  const node = el("div", { class: "alert", "data-rule": a.rule, "data-case": a.case, "data-needs": a.needs },
    el("div", {},
      el("div", { class: "rule" }, ruleName(a.rule), where ? el("span", { class: "where" }, `  ${where}`) : null),
      a.words ? el("div", { class: "words" }, `“${a.words}”`) : null,
      el("div", { class: "msg" }, a.message), extra,
      el("div", { class: "now" }, "Now: ", a.direction)),
    act);
  const rest = current.length > 1 ? el("div", { class: "more", "data-more": current.length - 1 },
    `then ${current.length - 1} more: ${current.slice(1).map((x) => ruleName(x.rule)).join(" · ")}`) : null;
  $("alert-list").replaceChildren(node, ...(rest ? [rest] : []));
  coverActions();
}
// The sheet reaches at least to the top of the actions row: no decision can be tapped under it.
function coverActions() {
  const top = $("actions").getBoundingClientRect().top;
  document.documentElement.style.setProperty("--alert-min", `${Math.max(0, window.innerHeight - top + 4)}px`);
}
function renderOlder(older) {
  const box = $("older");
  box.classList.toggle("hidden", !older.length);
  if (!older.length) { box.replaceChildren(); return; }
  const rounds = [...new Set(older.map((a) => a.round))];
  const mine = older.filter((a) => a.needs !== "supervisor");
  const sup = older.length - mine.length;
  box.replaceChildren(...[
    el("div", { class: "head" }, `${older.length} flag${older.length > 1 ? "s" : ""} of round${rounds.length > 1 ? "s" : ""} ${rounds.join(", ")} not seen`),
    el("div", { class: "rules" }, older.map((a) => `${ruleName(a.rule)}${a.box ? " box " + a.box : ""}`).join(" · ")),
    sup ? el("div", { class: "needs" }, `${sup} need the supervisor`) : null,
    mine.length ? el("button", { class: "btn ok", type: "button", "data-ack-older": mine.length,
      onclick: () => acknowledgeAll(mine) }, `Seen (${mine.length})`) : null].filter(Boolean));
}
async function acknowledge(a) {
  const r = await post("/api/event", { event: { type: "acknowledge", flag_event: a.seq, rule: a.rule }, seq: state.seq });
  if (!r.ok) toast(r.data.error || `refused (${r.status})`, true);
  return r;
}
// One "Seen" for several flags: each acknowledged in turn, once the screen has the table's answer
// to the one before (every tap names the event the screen was showing).
async function acknowledgeAll(list) {
  for (const a of list) {
    const before = state.seq;
    const r = await acknowledge(a);
    if (!r.ok) return;
    for (let i = 0; i < 100 && state.seq === before; i++) await new Promise((ok) => setTimeout(ok, 30));
  }
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
$("on-duty").addEventListener("click", () => openModal("Change the dealer on duty", (body) => signInForm(body, closeModal), null, { wide: true }));

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
  body.replaceChildren(el("div", { class: "cols" },
    el("div", {}, el("div", { class: "field" }, "Dealer id"), ids.node),
    el("div", {}, el("div", { class: "field" }, "PIN"), pad.node, err, ok)));
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
function openModal(title, build, refresh = null, { wide = false } = {}) {
  $("modal").classList.toggle("wide", wide);
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
// The on-screen keyboard, ten keys a row. For an id (dealers and supervisors are not listed by
// the screen): digits, letters and . _ - (an id may hold them). For a name or a reason
// (text: true): the same and a space and a shift key. Keys carry data-idkey (id) or
// data-textkey (text) with the key's face.
const KBD_ROWS = ["1234567890", "QWERTYUIOP", "ASDFGHJKL-", "ZXCVBNM._"];
function keyboard(onChange, { name = "", text = false, max = 32, initial = "" } = {}) {
  let value = initial, shift = text && !initial;
  const attr = text ? "data-textkey" : "data-idkey";
  const readout = el("div", { class: "readout", [text ? "data-text-readout" : "data-id-readout"]: name, "aria-live": "polite" });
  const pad = el("div", { class: "kbd" });
  const show = () => { readout.textContent = value || " "; onChange(value); draw(); };
  const key = (k, face, cls = "") => el("button", { class: `btn ${cls}`, type: "button", [attr]: k,
    "aria-label": { "⌫": "delete", "␣": "space", "⇧": "shift" }[k] || face, onclick: () => {
      if (k === "⌫") value = value.slice(0, -1);
      else if (k === "⇧") { shift = !shift; draw(); return; }
      else if (value.length < max) {
        const ch = k === "␣" ? " " : text && !shift ? k.toLowerCase() : text ? k : k.toLowerCase();
        value += ch;
        if (text) shift = ch === " ";
      }
      show();
    } }, face);
  const draw = () => {
    const keys = KBD_ROWS.join("").split("").map((k) => key(k, text && !shift ? k.toLowerCase() : k));
    keys.push(key("⌫", "⌫"));
    if (text) keys.push(key("⇧", "⇧ Shift", "mid" + (shift ? " on" : "")), key("␣", "space", "wide"), key("'", "'"));
    pad.replaceChildren(...keys);
  };
  show();
  return { node: el("div", {}, readout, pad), get: () => value,
    set: (v) => { value = v; shift = text && !v; show(); } };
}
function idPad(onChange, name) { return keyboard(onChange, { name }); }

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
// The chips as the dealer counts them onto the pad: one tap a chip, the stack listed and added
// up; "Undo" takes the last chip off, "Clear" all of them.
function chipStack(onChange) {
  let stack = [];
  const total = () => stack.reduce((t, v) => t + Number(v), 0);
  const readout = el("div", { class: "readout", "data-readout": "" });
  const list = el("div", { class: "chip-list", "data-chip-list": "" });
  const show = () => {
    readout.textContent = money(String(total()));
    list.textContent = stack.length ? stack.join(" + ") : "no chips";
    onChange(String(total()));
  };
  const pad = el("div", { class: "chips" },
    (state.table.chips || CHIPS).map((v) => el("button", { class: "btn chip", type: "button",
      "data-chip": v, "aria-label": `add ${v}`, onclick: () => { stack.push(v); show(); } }, v)),
    el("button", { class: "btn", type: "button", "data-chip": "undo", onclick: () => { stack.pop(); show(); } }, "Undo"),
    el("button", { class: "btn", type: "button", "data-chip": "clear", onclick: () => { stack = []; show(); } }, "Clear"));
  show();
  return { node: el("div", {}, pad, readout, list), get: () => String(total()) };
}
function chipPad(boxNumber = null) {
  openModal("Chip pad — a wager by hand", (body) => {
    let box = boxNumber, who = null;
    const boxes = el("div", { class: "grid" });
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
    };
    const chips = chipStack(() => { err.textContent = ""; });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      if (!box) { err.textContent = "Choose the box"; return; }
      const r = await send({ type: "bet", box, player: who || `box${box}`, amount: chips.get() });
      if (r.ok) closeModal();
    } }, "Record wager");
    draw();
    body.append(el("div", { class: "cols" },
      el("div", {}, el("div", { class: "field" }, "Box"), boxes, el("div", { class: "field" }, "Player"), names),
      el("div", {}, el("div", { class: "field" }, "Chips (none withdraws the wager)"), chips.node, err, ok)));
  }, null, { wide: true });
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
    body.append(el("div", { class: "cols" },
      el("div", {}, el("div", { class: "field" }, "Supervisor id"), ids.node),
      el("div", {}, el("div", { class: "field" }, "PIN"), pad.node, err, ok)));
  }, null, { wide: true });
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
      onclick: () => confirmThen("Open the table? The decks are inspected next (6.1).", () => supSend({ type: "open_table" }),
        { danger: false }) },
      "Open the table", el("small", {}, (state.on_duty || {}).dealer ? `with ${(state.on_duty || {}).dealer}` : ""))
    : el("button", { class: "btn", type: "button", "data-sup": "close-table", disabled: !idle,
      onclick: () => confirmThen(due.shoe && !due.shoe.ended ? "The shoe has not ended: end it and read out its cards first. Close anyway?" :
        "Close the table for the day?", () => supSend({ type: "close_table" })) }, "Close the table"),
    el("button", { class: "btn", type: "button", "data-sup": "tray", disabled: !idleTray(), onclick: trayPanel },
      "The tray", el("small", {}, "counts, slips, markers"))));
  body.append(el("div", { class: "field" }, "Manual mode"), el("div", { class: "grid" },
    ["shoe", "camera"].map((device) => {
      const on = (state.manual || {})[device];
      const s = (state.devices || {})[device] || { state: "not configured" };
      const up = s.state === "ok" || s.state === "connected";
      if (on) return el("button", { class: "btn", type: "button", "data-sup": `manual-off-${device}`,
        onclick: () => supSend({ type: "manual_mode", device, on: false, reason: "ended by the supervisor" }) },
        `End manual: ${device}`);
      return el("button", { class: "btn", type: "button", "data-sup": `manual-on-${device}`, disabled: up,
        onclick: () => manualDialog(device) }, `Manual mode: ${device}`,
        el("small", { "data-reason-shown": device }, up ? "working" : (s.reason || s.state)));
    })));
  body.append(el("div", { class: "field" }, "By hand"),
    el("div", { class: "grid" },
      el("button", { class: "btn", type: "button", "data-sup": "manual-card",
        onclick: () => cardPicker("Enter a card by hand", (card) => supSend({ type: "card", card })) }, "Enter a card"),
      state.boxes.map((b) => el("button", { class: "btn", type: "button", "data-sup": `wager-${b.box}`,
        onclick: () => manualWager(b) }, `Wager box ${b.box}`))),
    cameraNone() ? el("div", { class: "muted" }, "no chip camera configured: wagers are entered by hand")
      : cameraDown() ? el("div", { class: "muted" }, "chip camera not working: wagers are entered by hand") : "",
    el("div", { class: "row" }, el("button", { class: "btn", type: "button", "data-sup": "lock",
      onclick: lockSupervisor }, "Lock")));
}
// ---------------------------------------------------------------- the chip tray
// Chips counted by denomination: tap a denomination, key in how many. The total shows as the
// chips are entered; what the tray should hold is shown only after the count is recorded.
function chipCounter(onChange = () => {}) {
  const denoms = [...CHIPS].reverse();
  const counts = {};
  let current = denoms[0];
  const row = el("div", { class: "denoms" });
  const total = el("div", { class: "readout", "data-tray-total": "" });
  const value = () => denoms.reduce((sum, d) => sum + Number(d) * (counts[d] || 0), 0);
  const pad = keypad((v) => {
    if (v === undefined) return;
    counts[current] = v === "" ? 0 : Number(v);
    draw();
  });
  function draw() {
    row.replaceChildren(...denoms.map((d) => el("button", { class: "btn denom" + (d === current ? " sel" : ""),
      type: "button", "data-denom": d, onclick: () => {
        current = d; pad.set(counts[d] ? String(counts[d]) : ""); draw(); } },
      el("span", { class: "face" }, `$${d}`), el("small", {}, `× ${counts[d] || 0}`))));
    total.textContent = money(value().toFixed(2).replace(/\.00$/, ""));
    onChange(value());
  }
  draw();
  return {
    node: el("div", {}, row, el("div", { class: "row tray-pad" }, pad.node, total)),
    chips: () => Object.fromEntries(denoms.filter((d) => counts[d]).map((d) => [d, counts[d]])),
    value,
  };
}
const COUNT_NAMES = { opener: "Opener", check: "Check count", closer: "Closer" };
function trayCount(kind) {
  openModal(`Tray — ${COUNT_NAMES[kind]}`, (body) => {
    const err = el("div", { class: "error-text" });
    const counter = chipCounter(() => { err.textContent = ""; });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      const chips = counter.chips();
      if (!Object.keys(chips).length) { err.textContent = "Count the chips first"; return; }
      const r = await supSend({ type: "tray_count", kind, chips });
      if (!r.ok) return;
      const c = r.data.count || {};
      const diff = Number(c.difference || 0);
      body.replaceChildren(el("div", { class: "tray-result" + (diff ? " bad" : ""), "data-tray-result": "" },
        el("div", {}, "Counted ", el("strong", {}, money(c.counted))),
        c.expected === null || c.expected === undefined
          ? el("div", { class: "muted" }, "The first count: nothing to compare it with.")
          : el("div", {}, "The tray should hold ", el("strong", { "data-tray-expected": "" }, money(c.expected))),
        c.expected === null || c.expected === undefined ? "" :
          el("div", { "data-tray-difference": "" }, diff ? `${money(Math.abs(diff).toFixed(2))} ${diff < 0 ? "short" : "over"}` : "It agrees.")),
        el("button", { class: "btn", type: "button", "data-ok": "", onclick: closeModal }, "Done"));
    } }, "Record the count");
    body.append(el("div", { class: "muted" }, "Tap a denomination, enter how many. Counted blind: the figure to compare shows after the count is recorded."),
      counter.node, err, ok);
  });
}
function slipDialog(kind) {
  // Three steps, each one screen: the slip's number, the runner's id, the chips.
  openModal(`Tray — ${kind === "fill" ? "Fill" : "Credit"} slip`, (body) => {
    let slip = "", runner = "";
    const step = (label, pad, next, check) => {
      const err = el("div", { class: "error-text" });
      body.replaceChildren(el("div", { class: "field" }, label), pad.node, err,
        el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: () => {
          const why = check(); if (why) { err.textContent = why; return; } next(); } }, "Next"));
    };
    const chipsStep = () => {
      body.replaceChildren();
      const err = el("div", { class: "error-text" });
      const counter = chipCounter(() => { err.textContent = ""; });
      body.append(el("div", { class: "field" }, `Slip ${slip}, carried by ${runner}: the chips`), counter.node, err,
        el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
          const chips = counter.chips();
          if (!Object.keys(chips).length) { err.textContent = "Enter the slip's chips"; return; }
          const r = await supSend({ type: kind, slip, chips, runner });
          if (r.ok) closeModal();
        } }, `Record the ${kind}`));
    };
    const runnerStep = () => step("Runner's id", idPad((v) => { runner = v; }, "runner-id"), chipsStep,
      () => runner ? "" : "Enter the runner's id");
    step("Slip number", keypad((v) => { slip = v; }), runnerStep, () => slip ? "" : "Enter the slip's number");
  });
}
function trayPanel() {
  openModal("Tray — supervisor", (body) => {
    body.append(el("div", { class: "muted" }, "Between rounds only. The dealer counts with you; you both sign."),
      el("div", { class: "field" }, "Count the tray"), el("div", { class: "grid" },
        ["opener", "check", "closer"].map((kind) => el("button", { class: "btn", type: "button", "data-tray": kind,
          onclick: () => trayCount(kind) }, COUNT_NAMES[kind]))),
      el("div", { class: "field" }, "Slips and markers"), el("div", { class: "grid" },
        ["fill", "credit"].map((kind) => el("button", { class: "btn", type: "button", "data-tray": kind,
          onclick: () => slipDialog(kind) }, kind === "fill" ? "Fill slip" : "Credit slip")),
        el("button", { class: "btn", type: "button", "data-tray": "marker", onclick: () => buyIn(true) }, "Marker buy-in")));
  });
}
// The chips to give for an amount, largest first.
function chipsFor(amount) {
  let left = Math.round(Number(amount) * 100);
  const out = [];
  for (const d of [...CHIPS].reverse()) {
    const cents = Math.round(Number(d) * 100);
    const n = Math.floor(left / cents);
    if (n) { out.push([d, n]); left -= n * cents; }
  }
  if (left) out.push(["0.01", left]);
  return out;
}
function buyIn(marker = false) {
  openModal(marker ? "Tray — Marker buy-in" : "Buy-in", (body) => {
    let box = null;
    const err = el("div", { class: "error-text" });
    const pad = keypad(() => { err.textContent = ""; }, { decimal: true });
    const boxes = el("div", { class: "grid" });
    const draw = () => boxes.replaceChildren(...Array.from({ length: state.table.boxes || 7 }, (_, i) => i + 1).map((n) =>
      el("button", { class: "btn" + (n === box ? " sel" : ""), type: "button", "data-buyin-box": n,
        onclick: () => { box = box === n ? null : n; draw(); } }, `Box ${n}`)));
    draw();
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      const amount = pad.get();
      if (!/^\d+(\.\d{1,2})?$/.test(amount) || Number(amount) <= 0) { err.textContent = "Enter the amount"; return; }
      const ev = { type: "buy_in", kind: marker ? "marker" : "cash", amount };
      if (box) ev.box = box;
      const r = marker ? await supSend(ev) : await send(ev);
      if (!r.ok) return;
      body.replaceChildren(el("div", { class: "field" }, `Give ${box ? "box " + box : "the player"} chips worth ${money(amount)}:`),
        el("ul", { class: "give", "data-give": "" }, chipsFor(amount).map(([d, n]) => el("li", { "data-give-denom": d }, `${n} × $${d}`))),
        el("button", { class: "btn", type: "button", "data-ok": "", onclick: closeModal }, "Done"));
    } }, marker ? "Record the marker" : "Record the buy-in");
    body.append(el("div", { class: "field" }, marker ? "Marker amount" : "Cash amount"), pad.node,
      el("div", { class: "field" }, "Box (if seated)"), boxes, err, ok);
  });
}
$("buy-in").addEventListener("click", () => buyIn(false));

// The tray's events come between rounds: no round's cards out, no wager down.
function idleTray() { const due = state.due || {}; return !(due.boxes || []).length; }
function cameraDown() { const c = (state.devices || {}).camera; return !!c && c.state !== "ok" && c.state !== "connected"; }
function cameraNone() { return !(state.devices || {}).camera; }

function manualDialog(device) {
  const presets = device === "shoe"
    ? ["shoe reader fault", "no shoe reader at this table", "reader cable being replaced"]
    : ["chip camera fault", "no chip camera at this table", "camera being recalibrated"];
  openModal(`Supervisor — manual mode: ${device}`, (body) => {
    let reason = "";
    const err = el("div", { class: "error-text" });
    const choices = el("div", { class: "grid" });
    const draw = () => choices.replaceChildren(...presets.map((p) => el("button", { class: "btn" + (p === reason ? " sel" : ""),
      type: "button", "data-reason": p, onclick: () => { reason = p; typed.set(""); draw(); } }, p)));
    const typed = keyboard((v) => { if (v.trim()) { reason = v.trim(); draw(); } }, { name: "reason", text: true, max: 80 });
    draw();
    body.append(el("div", { class: "field" }, "Why (recorded with your id)"), choices,
      el("div", { class: "field" }, "or type the reason"), typed.node, err,
      el("div", { class: "row" }, el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
        if (!reason) { err.textContent = "Choose or type the reason"; return; }
        const r = await supSend({ type: "manual_mode", device, on: true, reason });
        if (r.ok) supervisorPanel();
      } }, "Start manual mode"), el("button", { class: "btn", type: "button", onclick: supervisorPanel }, "Back")));
  });
}
// A question before an act: "Yes" is green when the act is the ordinary next step (opening the
// table), red when it undoes or stops something (a void, closing the day).
function confirmThen(question, action, { danger = true } = {}) {
  openModal("Supervisor — confirm", (body) => {
    body.append(el("p", {}, question), el("div", { class: "row" },
      el("button", { class: `btn ${danger ? "danger" : "ok"}`, type: "button", "data-ok": "", onclick: async () => {
        await action(); supervisorPanel(); } }, "Yes"),
      el("button", { class: "btn", type: "button", "data-no": "", onclick: supervisorPanel }, "No")));
  });
}
function dealerConfirm(question, yes, action) {
  openModal("Confirm", (body) => {
    body.append(el("p", {}, question), el("div", { class: "row" },
      el("button", { class: "btn ok", type: "button", "data-ok": "", onclick: () => { closeModal(); action(); } }, yes),
      el("button", { class: "btn", type: "button", "data-no": "", onclick: closeModal }, "No")));
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
    const typed = keyboard((v) => { if (v.trim()) { who = v.trim(); drawNames(); } },
      { name: "player", text: true, max: 40 });
    const drawNames = () => whoRow.replaceChildren(...names.map((n) => el("button", {
      class: "btn" + (n === who ? " sel" : ""), type: "button", "data-player": n,
      onclick: () => { who = n; typed.set(""); drawNames(); } }, n)));
    drawNames();
    const chips = chipStack(() => { err.textContent = ""; });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      if (!who) { err.textContent = "Choose the player"; return; }
      const r = await supSend({ type: "bet", box: b.box, player: who, amount: chips.get() });
      if (r.ok) supervisorPanel();
    } }, "Record wager");
    body.append(el("div", { class: "cols" },
      el("div", {}, el("div", { class: "field" }, "Player"), whoRow,
        el("div", { class: "field" }, "or type the player's name"), typed.node),
      el("div", {}, el("div", { class: "field" }, "Chips (none withdraws the wager)"), chips.node, err, ok)));
  }, null, { wide: true });
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
window.addEventListener("resize", () => { fanCards(document); coverActions(); });
connect();
