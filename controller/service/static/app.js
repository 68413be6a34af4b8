// The dealer's touchscreen. State arrives whole over the WebSocket (/ws) after every event;
// taps are POSTed to /api/event with the sequence number the screen was showing, so a tap on a
// screen the table has moved past is refused rather than applied to the wrong moment.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let supToken = null;      // supervisor session token (memory only; lost on reload)
let supName = null;
let supTimer = null;

const LABELS = {
  stand: "Stand", hit: "Hit", double: "Double", split: "Split", surrender: "Surrender",
  insurance: "Insurance", rescue: "Rescue", refuse: "Refuse card", absent: "Player absent",
  peek: "Check hole card",
};
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };

function el(tag, attrs = {}, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
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
function signed(v) { const s = String(v); return s.startsWith("-") ? money(s) : "+" + money(s); }
function cardEl(code, extra = "") {
  const suit = code.slice(-1), rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
  const red = suit === "H" || suit === "D";
  return el("span", { class: `card ${red ? "red" : ""} ${extra}`, "data-card": code, title: code },
    rank + (SUITS[suit] || suit));
}
function toast(msg, error = false) {
  const t = $("toast");
  t.textContent = msg; t.className = "toast" + (error ? " error" : "");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.add("hidden"), error ? 6000 : 2500);
}

// ---------------------------------------------------------------- rendering
function render() {
  if (!state) return;
  const t = state.table, due = state.due || {};
  $("table-id").textContent = t.table_id;
  $("game").textContent = t.title || t.game;
  // Between rounds the screen still shows the round just ended, with its payouts.
  const ended = due.phase === "idle" && state.last_round;
  $("round").textContent = ended ? `Round ${state.last_round.round}` :
    (due.round ? `Round ${due.round}` : "No round");
  $("phase").textContent = ended ? state.last_round.status : (due.phase || "—");
  document.documentElement.style.setProperty("--boxes", t.boxes);
  renderDevices(); renderDue(); renderDealer(); renderBoxes(); renderActions(); renderFlags(); renderRecent();
  renderStoreDown();
  document.body.dataset.seq = String(state.seq);  // what the screen shows is as of this event
  if (!$("modal").classList.contains("hidden") && modalRefresh) modalRefresh();
}

const DEVICE_NAMES = { shoe: "Shoe reader", camera: "Chip camera", store: "Audit store" };
function renderDevices() {
  const d = $("devices"); d.replaceChildren();
  const faults = [];
  for (const [name, s] of Object.entries(state.devices || {})) {
    const ok = s.state === "connected" || s.state === "ok";
    const label = ok ? name : s.state === "fault" ? `${name} fault` : `${name} ${s.state}`;
    d.append(el("span", { class: `dev ${ok ? "ok" : s.state}`, "data-device": name,
      "data-state": s.state, title: s.reason || s.state }, label));
    if (s.state === "fault") faults.push(`${DEVICE_NAMES[name] || name}: ${s.reason || "fault"}`);
  }
  const bar = $("faults");
  bar.textContent = faults.join(" · ");
  bar.classList.toggle("hidden", !faults.length);
  document.documentElement.style.setProperty("--banner", faults.length ? `${bar.offsetHeight}px` : "0px");
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

function renderDue() {
  const due = state.due || {}, box = $("due");
  const parts = [];
  const nc = due.next_card;
  if (nc) parts.push(nc.to === "dealer" ? "Next card: dealer" :
    `Next card: box ${nc.box}${nc.hand ? " hand " + (nc.hand + 1) : ""}`);
  if ((due.decisions || []).length) {
    const boxes = [...new Set(due.decisions.map((d) => d.box))];
    parts.push(`Decision: box ${boxes.join(", ")}`);
  }
  if (!parts.length) parts.push({
    betting: "Place your bets", closed: "No more bets — deal", settled: "Round settled — pay and collect",
    void: "Round void — return the wagers", idle: "Waiting for bets", dealer: "Dealer draws",
  }[due.phase] || (due.phase || "Waiting"));
  box.replaceChildren(el("span", { id: "due-text" }, parts.join(" · ")),
    ...(due.prompts || []).map((p) => el("span", { class: "prompt" }, p)));
}

function renderDealer() {
  const d = state.dealer || { cards: [] };
  const nc = state.due && state.due.next_card;
  const node = $("dealer");
  node.className = "dealer" + (nc && nc.to === "dealer" ? " next" : "");
  node.replaceChildren(...[el("span", { class: "label" }, "Dealer"),
    el("span", { class: "cards" }, (d.cards || []).map((c) => cardEl(c))),
    d.cards && d.cards.length ? el("span", { class: "total" }, `= ${d.total}`) : null].filter(Boolean));
}

function renderBoxes() {
  const wrap = $("boxes"); wrap.replaceChildren();
  const nc = state.due && state.due.next_card;
  const deciding = new Set((state.due.decisions || []).map((x) => x.box));
  for (const b of state.boxes) {
    const isNext = nc && nc.to === "box" && nc.box === b.box;
    const cls = ["box", b.players.length || b.hands.length ? "" : "idle", isNext ? "next" : "",
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
    const hands = b.hands.map((h) => el("div", { class: "hand", "data-hand": h.hand },
      el("div", { class: "cards" }, h.cards.map((c, i) =>
        cardEl(c, h.doubled && i === h.cards.length - 1 && h.cards.length > 2 ? "sideways" : ""))),
      el("div", {}, el("span", { class: "total" }, h.cards.length ? String(h.total) : ""),
        h.doubled ? el("span", { class: "badge" }, "doubled") : null,
        h.status ? el("span", { class: "badge" }, h.status) : null,
        h.outcome ? el("span", { class: "badge " + h.outcome }, h.outcome) : null)));
    const pay = b.payouts.length ? el("div", { class: "payout", "data-payout": b.box },
      b.payouts.map((p) => el("div", { class: "pay-row" },
        el("div", { class: "who" }, p.player + (p.kind !== "hand" ? ` · ${p.kind.replace("_", " ")}` : "")),
        el("div", { class: "net " + (String(p.net).startsWith("-") ? "neg" : "pos") },
          Number(p.returned) > 0 ? `pay ${money(p.returned)}` : "collect",
          el("small", {}, ` ${signed(p.net)}`))))) : null;
    wrap.append(el("div", { class: cls, "data-box": b.box }, head, wagers, seen, hands, pay));
  }
}

function renderActions() {
  const wrap = $("actions"); wrap.replaceChildren();
  const due = state.due || {};
  // The dealer's own announcements first: an offer comes before the player's decision.
  for (const a of state.table_actions || []) {
    wrap.append(el("button", { class: "btn table", type: "button", "data-action": a.type,
      "data-box": a.box || null, onclick: () => tableAction(a) }, a.label));
  }
  for (const d of due.decisions || []) {
    // A hit is the next card drawn from the shoe; a button only for taking an offered card (16.4).
    if (d.action === "hit" && due.next_card) continue;
    const who = d.player ? ` ${d.player}` : "";
    const hand = d.hand ? ` hand ${d.hand + 1}` : "";
    const label = d.action === "hit" ? "Take the card" : (LABELS[d.action] || d.action);
    const where = d.box ? `box ${d.box}${hand}${who}` : "";
    const btn = el("button", { class: `btn ${d.action}`, type: "button", "data-action": d.action,
      "data-box": d.box || null, "data-player": d.player || null, onclick: () => decide(d) },
      label, el("small", {}, where + (d.max ? ` · up to ${money(d.max)}` : "")));
    wrap.append(btn);
  }
  if (due.next_card && (due.decisions || []).some((d) => d.action === "hit"))
    wrap.append(el("span", { class: "hint" }, "Hit: draw the next card from the shoe"));
}

function renderFlags() {
  const list = $("flags"); list.replaceChildren();
  const flags = state.flags || [];
  $("flag-count").textContent = flags.length ? String(flags.length) : "";
  for (const f of [...flags].reverse()) {
    list.append(el("li", { class: "flag", "data-rule": f.rule },
      el("div", {}, el("span", { class: "rule" }, /^\d/.test(f.rule) ? `Rule ${f.rule}` : f.rule),
        el("span", { class: "where" }, `  round ${f.round ?? "—"}${f.box ? " · box " + f.box : ""}`)),
      f.words ? el("div", { class: "words" }, `“${f.words}”`) : null,
      el("div", { class: "msg" }, f.message)));
  }
}

function renderRecent() {
  const list = $("recent"); list.replaceChildren();
  for (const r of [...(state.recent || [])].reverse().slice(0, 14)) {
    list.append(el("li", {}, `#${r.seq} ${r.text} `, r.actor || r.source && r.source !== "shoe" ?
      el("span", { class: "src" }, `[${r.actor ? r.actor : r.source}]`) : null));
  }
}

// ---------------------------------------------------------------- talking to the service
async function post(url, body, headers = {}) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body) });
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
  if (flags.length) toast(flags.map((f) => `Rule ${f.rule}: ${f.message}`).join(" · "), true);
}

function decide(d) {
  const ev = { type: d.action, box: d.box };
  if (d.player && ["double", "insurance", "rescue"].includes(d.action)) ev.player = d.player;
  if (d.action === "split" && d.player) {
    // Without a player a split is the controller's; with one, a back-bettor matching it.
    const b = state.boxes.find((x) => x.box === d.box);
    const ctl = b && b.players.find((p) => p.controls);
    if (!ctl || ctl.player !== d.player) ev.player = d.player;
  }
  if (d.action === "double" || d.action === "insurance") {
    // The full amount is offered first: one more tap confirms it.
    amountPad(`${LABELS[d.action]} — box ${d.box}${d.player ? " · " + d.player : ""}`, d.max || "", d.max,
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

// ---------------------------------------------------------------- modals
let modalRefresh = null;
function openModal(title, build, refresh = null) {
  $("modal-title").textContent = title;
  const body = $("modal-body"); body.replaceChildren();
  build(body);
  modalRefresh = refresh;
  $("modal").classList.remove("hidden");
}
function closeModal() { $("modal").classList.add("hidden"); modalRefresh = null; }
$("modal-close").addEventListener("click", closeModal);

function keypad(onChange, { decimal = false, initial = "", mask = false } = {}) {
  let value = String(initial || "");
  const readout = el("div", { class: "readout", "data-readout": "" });
  const show = () => { readout.textContent = mask ? "•".repeat(value.length) : (value || " "); onChange(value); };
  const keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", decimal ? "." : "", "0", "⌫"];
  const pad = el("div", { class: "keypad" }, keys.map((k) => k === "" ? el("span") :
    el("button", { class: "btn", type: "button", "data-key": k, onclick: () => {
      if (k === "⌫") value = value.slice(0, -1);
      else if (value.length < 9) value += k;
      show();
    } }, k)));
  show();
  return { node: el("div", {}, readout, pad), get: () => value, set: (v) => { value = v; show(); } };
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

// ---------------------------------------------------------------- supervisor
$("sup-open").addEventListener("click", () => supToken ? supervisorPanel() : loginDialog());

function loginDialog() {
  let who = (state.supervisors || [])[0] || "";
  openModal("Supervisor PIN", (body) => {
    const err = el("div", { class: "error-text", id: "pin-error" });
    const ids = el("div", { class: "grid" });
    const drawIds = () => {
      ids.replaceChildren(...(state.supervisors || []).map((s) => el("button", {
        class: "btn" + (s === who ? " sel" : ""), type: "button", "data-supervisor": s,
        onclick: () => { who = s; drawIds(); } }, s)));
    };
    drawIds();
    const pad = keypad(() => { err.textContent = ""; }, { mask: true });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", onclick: async () => {
      const r = await post("/api/supervisor/login", { supervisor: who, pin: pad.get() });
      if (r.ok) {
        supToken = r.data.token; supName = r.data.supervisor;
        $("sup-open").textContent = `Supervisor: ${supName}`;
        clearTimeout(supTimer);
        supTimer = setTimeout(lockSupervisor, r.data.expires_in * 1000);
        supervisorPanel();
      } else {
        pad.set("");
        err.textContent = r.data.error || "refused";
      }
    } }, "Unlock");
    body.append(el("div", { class: "field" }, "Who are you?"), ids,
      el("div", { class: "field" }, "PIN"), pad.node, err, ok);
  });
}
function lockSupervisor() {
  if (supToken) post("/api/supervisor/logout", {}, { "x-supervisor-token": supToken });
  supToken = null; supName = null;
  $("sup-open").textContent = "Supervisor";
  if (!$("modal").classList.contains("hidden") && $("modal-title").textContent.startsWith("Supervisor")) closeModal();
}
async function supSend(event) {
  const r = await post("/api/supervisor/event", { event, seq: state.seq }, { "x-supervisor-token": supToken });
  if (r.status === 401) { lockSupervisor(); toast("Supervisor session ended: enter the PIN again", true); return r; }
  report(r);
  if (r.ok) toast(`Recorded: ${event.type} by ${supName}`);
  return r;
}

function supervisorPanel() {
  openModal(`Supervisor — ${supName}`, (body) => {
    const due = state.due || {};
    const boxesInPlay = state.boxes.filter((b) => b.players.length || b.hands.length).map((b) => b.box);
    const misreads = state.misreads || [];
    body.append(
      el("div", { class: "field" }, "Void (16.5)"),
      el("div", { class: "grid" },
        el("button", { class: "btn danger", type: "button", "data-sup": "void-round",
          onclick: () => confirmThen(`Void round ${due.round || ""}?`, () => supSend({ type: "void" })) }, "Void round"),
        boxesInPlay.map((b) => el("button", { class: "btn danger", type: "button", "data-sup": `void-box-${b}`,
          onclick: () => confirmThen(`Void box ${b}?`, () => supSend({ type: "void", box: b })) }, `Void box ${b}`))),
      el("div", { class: "field" }, "Shoe"),
      el("div", { class: "grid" },
        el("button", { class: "btn", type: "button", "data-sup": "reshuffle", onclick: reshuffleDialog },
          "Reshuffle discards (16.7)"),
        el("button", { class: "btn", type: "button", "data-sup": "manual-card",
          onclick: () => cardPicker("Enter a card by hand", (card) => supSend({ type: "card", card })) },
          "Enter card by hand")),
      el("div", { class: "field" }, `Misreads to correct (${misreads.length})`),
      el("div", { class: "grid" }, misreads.length ? misreads.map((m) => el("button", { class: "btn",
        type: "button", "data-sup": `correct-${m.seq}`, onclick: () => cardPicker(`Correct misread #${m.seq} (“${m.raw}”)`,
          (card) => supSend({ type: "card", card, correction_of: m.seq })) }, `#${m.seq}`, el("small", {}, m.raw)))
        : el("span", { class: "muted" }, "none")),
      el("div", { class: "field" }, "Wagers" + (cameraDown() ? " — camera down: enter them by hand" : "")),
      el("div", { class: "grid" }, state.boxes.map((b) => el("button", { class: "btn", type: "button",
        "data-sup": `wager-${b.box}`, onclick: () => manualWager(b) }, `Wager box ${b.box}`))),
      el("div", { class: "row" }, el("button", { class: "btn", type: "button", "data-sup": "lock",
        onclick: lockSupervisor }, "Lock")));
  });
}
function cameraDown() { const c = (state.devices || {}).camera; return !c || (c.state !== "ok" && c.state !== "connected"); }

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
  let rank = null, suit = null;
  openModal(`Supervisor — ${title}`, (body) => {
    const ranks = el("div", { class: "grid" }), suits = el("div", { class: "grid" });
    const ok = el("button", { class: "btn stand", type: "button", "data-ok": "", disabled: true, onclick: async () => {
      await done(rank + suit); supervisorPanel(); } }, "Record card");
    const draw = () => {
      ranks.replaceChildren(...(state.table.ranks || "A23456789TJQK").split("").map((r) => el("button", {
        class: "btn" + (r === rank ? " sel" : ""), type: "button", "data-rank": r,
        onclick: () => { rank = r; draw(); } }, r === "T" ? "10" : r)));
      suits.replaceChildren(...Object.entries(SUITS).map(([s, sym]) => el("button", {
        class: "btn" + (s === suit ? " sel" : ""), type: "button", "data-suit": s,
        onclick: () => { suit = s; draw(); } }, sym)));
      ok.disabled = !(rank && suit);
    };
    draw();
    body.append(el("div", { class: "field" }, "Rank"), ranks, el("div", { class: "field" }, "Suit"), suits, ok);
  });
}
function manualWager(b) {
  openModal(`Supervisor — wager by hand, box ${b.box}`, (body) => {
    const names = [...new Set([...b.players.map((p) => p.player), `box${b.box}`])];
    let who = names[0];
    const err = el("div", { class: "error-text" });
    const who_row = el("div", { class: "grid" });
    const input = el("input", { class: "text", type: "text", placeholder: "or type a player's name",
      "data-player-input": "", oninput: (e) => { who = e.target.value.trim(); drawNames(); } });
    const drawNames = () => who_row.replaceChildren(...names.map((n) => el("button", {
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
    body.append(el("div", { class: "field" }, "Player"), who_row, input,
      el("div", { class: "field" }, "Amount"), pad.node, err, ok);
  });
}

// ---------------------------------------------------------------- live updates
function connect() {
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.onmessage = (m) => { state = JSON.parse(m.data); $("conn").classList.add("hidden"); render(); };
  ws.onclose = () => { $("conn").classList.remove("hidden"); setTimeout(connect, 1000); };
  ws.onerror = () => ws.close();
}
connect();
