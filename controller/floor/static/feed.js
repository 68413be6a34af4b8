// Surveillance's live feed on the floor page: flags and game-protection alerts pushed by the
// server (server-sent events on /api/protect/feed), each linking to its round, with who
// acknowledged it and when; a short tone for each new one when "sound" is ticked.
"use strict";

const Feed = {
  items: new Map(),
  audio: null,
  start() {
    const state = document.getElementById("feed-state");
    const source = new EventSource("/api/protect/feed");
    source.onopen = () => { state.textContent = "live"; };
    source.onerror = () => { state.textContent = "reconnecting…"; };
    source.addEventListener("flag", (e) => this.show(JSON.parse(e.data), "flag"));
    source.addEventListener("alert", (e) => this.show(JSON.parse(e.data), "alert"));
    document.getElementById("feed-sound").addEventListener("change", (e) => {
      if (e.target.checked && !this.audio) this.audio = new AudioContext();
    });
  },
  key(d, kind) {
    return kind === "flag" ? `f/${d.table_id}/${d.event}/${d.rule}`
      : `a/${d.kind}/${d.table_id || ""}/${d.player || d.dealer}`;
  },
  show(d, kind) {
    const key = this.key(d, kind);
    const fresh = !this.items.has(key);
    const old = this.items.get(key);
    if (old && kind === "alert" && old.dataset.level === d.level) return;
    const li = document.createElement("li");
    li.dataset.level = d.level || "";
    if (kind === "flag") {
      const a = document.createElement("a");
      a.href = `/round?table=${encodeURIComponent(d.table_id)}&round=${d.round}`;
      a.textContent = `${d.table_id} round ${d.round}`;
      li.append(`${d.at} · flag ${d.rule} · `, a, ` · ${d.message}`);
      li.append(d.acknowledged_at ? ` · acknowledged by ${d.acknowledged_by || "?"} at ${d.acknowledged_at}`
        : " · not acknowledged");
      if (d.acknowledged_at) li.className = "acked";
    } else {
      li.className = `v-${d.level}`;
      const who = d.kind === "player" ? `player ${d.player} at ${d.table_id}` : `dealer ${d.dealer}`;
      const link = document.createElement("a");
      link.href = d.kind === "player"
        ? `/protect/player?table=${encodeURIComponent(d.table_id)}&player=${encodeURIComponent(d.player)}&date=${d.date}`
        : `/protect/dealer?dealer=${encodeURIComponent(d.dealer)}&date=${d.date}`;
      link.textContent = who;
      const rate = d.false_alarm_rate == null ? "" : ` (honest: ${(d.false_alarm_rate * 100).toFixed(2)}%)`;
      li.append(`${d.level.toUpperCase()} · `, link, `${rate} · ${(d.reasons || []).join("; ")}`);
      if (d.round) {
        const r = document.createElement("a");
        r.href = `/round?table=${encodeURIComponent(d.table_id)}&round=${d.round}`;
        r.textContent = ` round ${d.round}`;
        li.append(" · last", r);
      }
    }
    if (old) old.replaceWith(li); else document.getElementById("feed-items").prepend(li);
    this.items.set(key, li);
    if (fresh) this.beep(kind === "alert" ? 880 : 660);
  },
  beep(freq) {
    if (!this.audio || !document.getElementById("feed-sound").checked) return;
    const o = this.audio.createOscillator(), g = this.audio.createGain();
    o.frequency.value = freq; g.gain.value = 0.1;
    o.connect(g).connect(this.audio.destination);
    o.start(); o.stop(this.audio.currentTime + 0.15);
  },
};
