// The page of `tiengow serve`: it draws what the server says and sends the person's clicks.
// All game state is on the server (one match per browser session); see tiengow/web/app.py.
"use strict";

const $ = (sel) => document.querySelector(sel);
const ui = {
  meta: null, match: null, tab: "play", selected: new Set(), paused: true, timer: null,
  replay: null, frame: 0, suggested: null, epoch: 0, bots: { play: {}, watch: {} }, sending: false,
  calls: new Set(),  // requests on their way: {tab it was sent from, slow}
};

// ----------------------------------------------------------------------------- helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function put(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

async function api(path, body) {
  const call = { tab: ui.tab, slow: false };
  ui.calls.add(call);
  const busy = setTimeout(() => { call.slow = true; showBusy(); }, 400);  // a bot that searches long
  try { return await request(path, body); } finally {
    clearTimeout(busy);
    ui.calls.delete(call);
    showBusy();
  }
}

function showBusy() {
  // "working…" for a slow request of the tab shown, not for one a tab left behind is still waiting for.
  if ([...ui.calls].some((c) => c.slow && c.tab === ui.tab)) document.body.dataset.busy = "1";
  else delete document.body.dataset.busy;
}

async function gameRequest(path, body) {
  // A request of Play or Watch, its match drawn; false (nothing drawn) when the person has left the
  // tab meanwhile: coming back fetches the match as it is then.
  const tab = ui.tab;
  const data = await api(path, body);
  if (ui.tab !== tab) return false;
  ui.selected.clear();
  setMatch(data.match);
  return true;
}

async function request(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  let data;
  try { data = await response.json(); } catch { data = { error: `${response.status} ${response.statusText}` }; }
  if (!response.ok) {
    const err = new Error(data.error || `request failed (${response.status})`);
    err.data = data;
    err.status = response.status;
    throw err;
  }
  return data;
}

const signed = (n) => (n > 0 ? `+${n}` : `${n}`);
const seatLabel = (m, s) => (m.me === s ? "You" : `Seat ${s}`);

function showError(target, err) {
  $(target).textContent = err ? (err.message || String(err)) : "";
}

// ----------------------------------------------------------------------------- setup
function currentPreset() {
  return ui.meta.presets.find((p) => p.name === $("#rules").value) || ui.meta.presets[0];
}

function buildSeatInputs() {
  const players = currentPreset().players;
  const seatSelect = $("#seat");
  const keep = Number(seatSelect.value || 0);
  put(seatSelect, ...Array.from({ length: players }, (_, s) => el("option", { value: s, text: `seat ${s}` })));
  seatSelect.value = String(Math.min(keep, players - 1));
  const me = ui.tab === "play" ? Number(seatSelect.value) : null;
  const box = $("#bot-inputs");
  const before = ui.bots[ui.tab];  // each tab keeps its own bots
  put(box);
  for (let s = 0; s < players; s++) {
    if (s === me) continue;
    const fallback = ui.tab === "watch" ? ["ppo", "pimc", "expert", "greedy"][s % 4] : "expert";
    box.append(el("label", { class: "bot" }, `Seat ${s} `,
      el("input", { "data-seat": s, list: "agent-specs", value: before[s] || fallback, size: 8, name: `bot${s}`,
        oninput: (e) => { before[s] = e.target.value; } })));
  }
}

function setupBody() {
  const bots = [...$("#bot-inputs").querySelectorAll("input")].map((i) => i.value.trim());
  const body = { mode: ui.tab, rules: $("#rules").value, bots, hands: Number($("#hands").value) };
  if (ui.tab === "play") body.seat = Number($("#seat").value);
  if ($("#seed").value !== "") body.seed = Number($("#seed").value);
  return body;
}

async function start(event) {
  event.preventDefault();
  showError("#setup-error", null);
  stopWatching();
  try {
    if (await gameRequest("/api/new", setupBody()) && ui.tab === "watch") { ui.paused = false; scheduleStep(); }
  } catch (err) { showError("#setup-error", err); }
}

// ----------------------------------------------------------------------------- the table
function setMatch(match) {
  ui.epoch++;
  ui.match = match;
  if (match && (match.mode !== ui.tab)) selectTab(match.mode, false);
  drawMatch();
}

function positions(match) {
  // Seats placed around the table from the person's seat (or seat 0), counter-clockwise.
  const order = match.players === 3 ? ["bottom", "right", "left"] : ["bottom", "right", "top", "left"];
  const base = match.me ?? 0;
  const pos = {};
  for (let k = 0; k < match.players; k++) pos[(base + k) % match.players] = order[k];
  return pos;
}

function drawMatch() {
  const m = ui.match;
  $("#game").classList.toggle("empty", !m);
  document.body.dataset.mode = ui.tab;
  if (!m) {
    for (const slot of document.querySelectorAll(".seat-slot")) slot.replaceChildren();
    put($("#trick"), el("p", { class: "hint", text: ui.tab === "play"
      ? "Choose the rules, your seat, the bots and the number of hands, then Start."
      : "Choose four bots and the number of hands, then Start: they play at the speed you set." }),
    gallery());
    $("#settlement").classList.add("hidden");
    put($("#match-info"), el("h3", { text: "How a hand goes" }), ...HOW_TO.map((line) => el("p", { class: "small", text: line })));
    put($("#log")); put($("#explain"));
    put($("#hand")); put($("#moves"));
    return;
  }
  document.body.dataset.version = `${m.hand}.${m.version}`;  // tests wait for it to change
  const pos = positions(m);
  for (const slot of document.querySelectorAll(".seat-slot")) slot.replaceChildren();
  for (const seat of m.seats) {
    const slot = document.querySelector(`.seat-slot[data-pos="${pos[seat.seat]}"]`);
    if (slot) slot.append(seatPanel(m, seat));
  }
  drawTrick(m, pos);
  drawInfo(m);
  drawLog(m);
  drawExplain(m);
  drawYou(m);
  drawSettlement(m);
  $("#log").scrollTop = $("#log").scrollHeight;  // once the hand and settlement have set the log's height
}

const HOW_TO = [
  "The leader plays any combination: a single tile, a pair, a triplet or a quartet.",
  "Each other seat in turn answers with as many tiles: a combination of the same class that is strictly stronger than the best so far, or any tiles face down.",
  "The trick's winner takes as many columns as the lead had tiles, and leads next.",
  "The winner of the last trick settles with every other seat, by columns against par, with the banker's and the last trick's multipliers.",
  "Click tiles to select them, then Lead, Beat or Discard; or click a listed legal move.",
];

function gallery() {
  // Every tile type, strongest first: the civil suit, then the military suit.
  const row = (suit) => el("div", { class: "gallery-row" }, ...ui.meta.tiles.filter((t) => t.suit === suit).map((t) =>
    el("span", { class: "gallery-tile", title: `${t.name} ${t.title}` }, tileEl(t.name, "md"), el("span", { text: t.title }))));
  return el("div", { class: "gallery" }, el("div", { class: "caption", text: "Civil tiles, highest first" }), row("civil"),
    el("div", { class: "caption", text: "Military tiles, highest first (equal pips tie)" }), row("military"));
}

function seatPanel(m, seat) {
  const badges = [];
  if (seat.banker) badges.push(el("span", { class: "badge banker", text: m.streak > 1 ? `banker · streak ${m.streak}` : "banker" }));
  if (seat.to_act && !m.settlement) badges.push(el("span", { class: "badge act", text: "to act" }));
  const who = seat.you ? "You" : `Seat ${seat.seat}`;
  const panel = el("div", { class: `seat${seat.to_act && !m.settlement ? " acting" : ""}`, "data-seat": seat.seat },
    el("div", { class: "seat-head" }, el("b", { text: who }),
      seat.agent ? el("span", { class: "agent", text: seat.agent }) : null, ...badges),
    el("div", { class: "stats" },
      stat("tiles", seat.tiles_left), stat("columns", seat.columns),
      stat("face down", seat.face_down), stat("chips", signed(seat.chips), seat.chips > 0 ? "pos" : seat.chips < 0 ? "neg" : "")));
  if (seat.hand && !(seat.you && m.mode === "play")) {
    const tiles = el("div", { class: "seat-tiles" });
    for (const g of seat.hand) tiles.append(el("span", { class: "group", title: g.title || "" }, tilesRow(g.tiles, "sm")));
    panel.append(tiles);
  } else if (!seat.you) {
    panel.append(el("div", { class: "seat-tiles backs" }, tilesRow(Array(seat.tiles_left).fill(null), "xs")));
  }
  if (seat.down && seat.down.length && m.mode === "watch") {
    panel.append(el("div", { class: "down" }, "face down: ", tilesRow(seat.down, "xs")));
  }
  return panel;
}

function stat(label, value, cls = "") {
  return el("span", { class: `stat ${cls}` }, el("i", { text: label }), el("b", { text: String(value) }));
}

function drawTrick(m, pos) {
  const box = $("#trick");
  put(box);
  const t = m.trick;
  let caption;
  if (m.settlement) caption = `Hand ${m.hand} is over`;
  else if (!t || t.winner !== null) {
    const last = t ? `Trick ${t.number}: ${seatLabel(m, t.winner)} won ${t.size} column${t.size > 1 ? "s" : ""} with ${t.winning}. ` : "";
    caption = `${last}Trick ${m.trick_number}: ${seatLabel(m, m.to_act)} to lead.`;
  } else {
    const best = t.best_seat !== null ? ` Best so far: ${seatLabel(m, t.best_seat)}.` : "";
    caption = `Trick ${t.number}: ${seatLabel(m, t.leader)} led ${t.size} tile${t.size > 1 ? "s" : ""}.${best}`;
  }
  box.append(el("div", { class: "caption", text: caption }));
  if (m.phase === "declare" && !m.settlement) {
    box.append(el("div", { class: "caption", text: `${seatLabel(m, m.to_act)} holds exactly one red pip and may declare One Red Dot.` }));
  }
  if (!t) return;
  const spots = el("div", { class: "spots" });
  for (const move of t.moves) {
    const best = move.seat === t.best_seat && (move.kind === "lead" || move.kind === "beat");
    const tiles = move.tiles ? tilesRow(move.tiles, "md") : tilesRow(Array(move.count).fill(null), "md");
    const you = move.seat === m.me;
    const verb = you
      ? { lead: "lead", beat: "beat", discard: "discard", forced: "must discard", declare: "declare", decline: "decline" }[move.kind]
      : { lead: "leads", beat: "beats", discard: "discards", forced: "must discard", declare: "declares", decline: "declines" }[move.kind];
    const spot = el("div", { class: `spot ${pos[move.seat]}${best ? " best" : ""}${move.tiles ? "" : " hidden-tiles"}`, title: move.text },
      tiles, el("div", { class: "spot-label", text: `${seatLabel(m, move.seat)} ${verb}${best ? (t.winner !== null ? " · won" : " · best") : ""}` }));
    spots.append(spot);
  }
  box.append(spots);
  if (t.bonus_text) box.append(el("div", { class: "caption bonus", text: t.bonus_text }));
}

function drawInfo(m) {
  const rows = m.seats.map((s) => el("tr", {}, el("td", { text: s.you ? "you" : `seat ${s.seat}` }),
    el("td", { text: s.agent || "" }), el("td", { class: `num ${s.chips > 0 ? "pos" : s.chips < 0 ? "neg" : ""}`, text: signed(s.chips) })));
  const files = m.finished.filter((f) => f.record).map((f) => f.record);
  const saved = files.length ? el("p", { class: "small" }, `Saved: ${files.join(", ")}`) : null;
  put($("#match-info"),
    el("h3", { text: `Hand ${m.hand} of ${m.hands}` }),
    el("p", { class: "small", text: `${m.rules} rules · seed ${m.seed} · banker ${seatLabel(m, m.banker).toLowerCase()}${m.streak > 1 ? ` (streak ${m.streak})` : ""}` }),
    el("table", { class: "chips" }, el("thead", {}, el("tr", {}, el("th", { text: "seat" }), el("th", { text: "agent" }), el("th", { text: "match chips" }))), el("tbody", {}, rows)),
    saved);
}

function drawLog(m) {
  put($("#log"), el("h3", { text: "This hand" }), ...m.lines.map((line) => el("div", { class: line.startsWith("Trick") ? "line trick-line" : "line", text: line })));
}

function drawExplain(m) {
  const box = $("#explain");
  const x = m.explain;
  if (m.mode !== "watch" || !x) { put(box, el("h3", { text: "The bot's view" }), el("p", { class: "small", text: "Each bot's view of its last choice shows here." })); return; }
  const head = el("h3", { text: `Seat ${x.seat} (${x.agent})` });
  if (!x.kind) {
    put(box, head, el("p", { class: "small", text: `${x.agent} does not explain its choices.` }));
    return;
  }
  const values = x.bars.map((b) => b.value);
  const lo = x.kind === "probabilities" ? 0 : Math.min(0, ...values);
  const hi = x.kind === "probabilities" ? Math.max(...values, 1e-9) : Math.max(0, ...values);
  const span = hi - lo || 1;
  const bars = x.bars.map((b) => {
    const width = (100 * (b.value - lo)) / span;
    const text = x.kind === "probabilities" ? `${(100 * b.value).toFixed(1)}%` : `${b.value >= 0 ? "+" : ""}${b.value.toFixed(2)}`;
    const bar = el("span", { class: `bar ${b.value < 0 ? "neg" : ""}` });
    bar.style.width = `${Math.max(1, width)}%`;
    return el("div", { class: `bar-row${b.chosen ? " chosen" : ""}`, title: b.label },
      el("span", { class: "bar-label", text: b.label }), el("span", { class: "bar-track" }, bar), el("span", { class: "bar-value", text }));
  });
  put(box, head,
    el("p", { class: "small", text: x.kind === "probabilities" ? "policy probability of each legal move (chosen in bold)" : "mean chips of each legal move over sampled deals (chosen in bold)" }),
    ...bars, x.more ? el("p", { class: "small", text: `and ${x.more} more` }) : null);
}

// ----------------------------------------------------------------------------- the person
function handTiles(m) {
  const me = m.seats.find((s) => s.you);
  return me && me.hand ? me.hand : [];
}

function selectedNames(m) {
  const flat = handTiles(m).flatMap((g) => g.tiles);
  return [...ui.selected].sort((a, b) => a - b).map((i) => flat[i]).filter(Boolean);
}

function drawYou(m) {
  if (m.mode !== "play") return;
  const hand = $("#hand");
  put(hand);
  let index = 0;
  for (const group of handTiles(m)) {
    const g = el("span", { class: "group", title: group.title || "" });
    for (const name of group.tiles) {
      const i = index++;
      const tile = tileEl(name, "lg");
      tile.dataset.index = i;
      tile.classList.toggle("selected", ui.selected.has(i));
      tile.classList.add("clickable");
      tile.tabIndex = 0;  // selectable from the keyboard too: Tab to a tile, Enter or Space
      tile.setAttribute("role", "button");
      tile.setAttribute("aria-pressed", String(ui.selected.has(i)));
      tile.addEventListener("click", () => toggleTile(i));
      tile.addEventListener("keydown", (e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        toggleTile(i);
        const again = document.querySelector(`#hand .tile[data-index="${i}"]`);  // the hand was drawn afresh
        if (again) again.focus();
      });
      g.append(tile);
    }
    if (group.title) g.append(el("span", { class: "group-title", text: group.title }));
    hand.append(g);
  }
  const mine = m.your_turn && !m.settlement;
  const chosen = selectedNames(m);
  const over = Boolean(m.settlement);  // the buttons go with the hand; Next hand is on the settlement
  $("#act-play").textContent = m.phase === "follow" ? "Beat" : "Lead";
  $("#act-play").classList.toggle("hidden", over || m.phase === "declare");
  $("#act-discard").classList.toggle("hidden", over || m.phase !== "follow");
  $("#act-declare").classList.toggle("hidden", over || m.phase !== "declare");
  $("#act-decline").classList.toggle("hidden", over || m.phase !== "declare");
  $("#act-clear").classList.toggle("hidden", over);
  for (const b of ["#act-play", "#act-discard", "#act-declare", "#act-decline"]) $(b).disabled = !mine;
  $("#act-play").disabled = !mine || !chosen.length;
  $("#act-discard").disabled = !mine || !chosen.length;
  $("#act-clear").disabled = !chosen.length;
  let prompt = "";
  if (m.settlement) prompt = "The hand is over.";
  else if (!mine) prompt = `Waiting for ${seatLabel(m, m.to_act).toLowerCase()}.`;
  else if (m.phase === "lead") prompt = "You lead: select tiles of one combination, then Lead.";
  else if (m.phase === "follow") prompt = `Answer with ${m.size} tile${m.size > 1 ? "s" : ""}: beat the best, or discard face down.`;
  else prompt = "You hold exactly one red pip: declare One Red Dot and win the hand, or decline and play.";
  $("#prompt").textContent = chosen.length ? `${prompt} Selected: ${chosen.join(" ")}` : prompt;
  const moves = $("#moves");
  put(moves, ...m.moves.map((mv) => el("button", {
    class: "move", "data-option": mv.option, "data-action": JSON.stringify(mv.action), text: mv.label,
    onclick: () => send({ option: mv.option }),
  })), m.unlisted ? el("span", { class: "small", text: `and ${m.unlisted} more: select their tiles` }) : null);
  $("#moves-box").classList.toggle("hidden", !mine);
}

function toggleTile(i) {
  if (ui.selected.has(i)) ui.selected.delete(i); else ui.selected.add(i);
  showError("#move-error", null);
  $("#act-instead").classList.add("hidden");
  drawYou(ui.match);
}

async function send(move) {
  if (ui.sending) return;  // a second click while the first move is on its way
  ui.sending = true;
  showError("#move-error", null);
  $("#act-instead").classList.add("hidden");
  try {
    await gameRequest("/api/move", { ...move, version: ui.match.version });
  } catch (err) {
    if (err.status === 409) await refresh();  // the game moved on (another tab, a second click): draw it as it is
    showError("#move-error", err);
    if (err.data && err.data.discard) {
      ui.suggested = err.data.discard;
      $("#act-instead").classList.remove("hidden");
    }
  } finally {
    ui.sending = false;
  }
}

// ----------------------------------------------------------------------------- settlement
function settlementBlock(s, name) {
  const table = el("table", { class: "settle" },
    el("thead", {}, el("tr", {}, ...s.header.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...s.rows.map((r) => el("tr", {}, ...r.map((c, k) => el("td", { class: k === 1 || k === 4 ? "num" : "", text: c }))))));
  const chips = (values) => values.map((v, i) => `${name(i)} ${signed(v)}`).join(" · ");
  return el("div", { class: "settle-block" },
    el("p", { class: "settle-head", text: s.head }),
    el("div", { class: "small" }, "Multipliers:", el("ul", {}, ...s.multipliers.map((n) => el("li", { text: n })))),
    table,
    s.trick_bonus.some((v) => v) ? el("p", { text: `Trick bonuses: ${chips(s.trick_bonus)}` }) : null,
    el("p", { class: "net" }, el("b", { text: "Net this hand: " }), el("span", { "data-net": JSON.stringify(s.net), text: chips(s.net) })));
}

function drawSettlement(m) {
  const box = $("#settlement");
  if (!m.settlement) { box.classList.add("hidden"); return; }
  const name = (s) => (m.me === s ? "you" : `seat ${s}`);
  const s = m.settlement;
  const last = m.finished[m.finished.length - 1];
  const next = m.match_over
    ? el("button", { class: "primary", id: "new-match", text: "New match", onclick: () => { ui.match = null; stopWatching(); drawMatch(); } })
    : el("button", { class: "primary", id: "next-hand", text: "Next hand", onclick: nextHand });
  put(box,
    el("h2", { text: m.match_over ? `Match over after ${m.hands} hand${m.hands > 1 ? "s" : ""}` : `Hand ${m.hand} of ${m.hands} is over` }),
    el("p", { text: `Columns: ${s.columns.map((c, i) => `${name(i)} ${c}`).join(" · ")}` }),
    settlementBlock(s, name),
    el("p", {}, el("b", { text: "Match chips: " }), s.chips_after.map((c, i) => `${name(i)} ${signed(c)}`).join(" · ")),
    last && last.record ? el("p", { class: "small", "data-record": last.record, text: `Record saved: ${last.record}` }) : null,
    last && !last.record ? el("p", { class: "error", text: `Record not saved: ${last.save_error}` }) : null,
    next);
  box.classList.remove("hidden");
}

async function nextHand() {
  if (ui.sending) return;  // a second click while the first is on its way
  ui.sending = true;
  try { await gameRequest("/api/next", {}); } catch (err) {
    if (err.status === 409) await refresh();  // the next hand was started already (a second click, another tab)
    else showError("#setup-error", err);
  } finally {
    ui.sending = false;
  }
}

async function refresh() {
  // The server's match as it is now, drawn afresh (the selection belonged to the old view).
  try { await gameRequest("/api/state"); } catch (err) { showError("#setup-error", err); }
}

// ----------------------------------------------------------------------------- watching
function delay() {
  const v = Number($("#speed").value) / 100;
  return Math.round(50 + 2450 * (1 - v) * (1 - v));
}

function showSpeed() {
  $("#speed-label").textContent = `${(delay() / 1000).toFixed(2)} s a move`;
  $("#pause").textContent = ui.paused ? "Resume" : "Pause";
}

function stopWatching() {
  ui.paused = true;
  clearTimeout(ui.timer);
  showSpeed();
}

function scheduleStep() {
  clearTimeout(ui.timer);
  showSpeed();
  if (ui.paused || !ui.match || ui.match.mode !== "watch") return;
  const m = ui.match;
  if (m.match_over) { ui.paused = true; showSpeed(); return; }
  ui.timer = setTimeout(watchStep, m.settlement ? Math.max(1500, 3 * delay()) : delay());
}

async function watchStep() {
  const m = ui.match;
  if (!m || m.mode !== "watch") return;
  try {
    await gameRequest(m.settlement ? "/api/next" : "/api/step", {});
  } catch (err) {
    showError("#setup-error", err);
    ui.paused = true;
  }
  scheduleStep();
}

// ----------------------------------------------------------------------------- replay
async function loadFiles() {
  try {
    const data = await api("/api/records");
    const fill = (select, kind) => {
      const keep = select.value;
      const files = data.files.filter((f) => f.kind === kind);
      put(select, ...files.map((f) => el("option", { value: f.path, text: `${f.path}${f.count > 1 ? ` (${f.count})` : ""}` })));
      if (files.some((f) => f.path === keep)) select.value = keep;
      if (!files.length) select.append(el("option", { value: "", text: `no ${kind === "hands" ? "records" : "league files"} in ${data.root}` }));
    };
    fill($("#replay-file"), "hands");
    fill($("#league-file"), "league");
  } catch (err) { showError("#replay-error", err); }
}

async function openReplay() {
  showError("#replay-error", null);
  const path = $("#replay-file").value;
  try {
    const q = new URLSearchParams({ path, index: $("#replay-index").value || "1" });
    ui.replay = await api(`/api/replay?${q}`);
    ui.frame = 0;
    drawReplay();
  } catch (err) { ui.replay = null; put($("#replay-view")); $("#replay-pos").textContent = ""; showError("#replay-error", err); }
}

function stepReplay(to) {
  if (!ui.replay) return;
  ui.frame = Math.max(0, Math.min(ui.replay.frames.length - 1, to));
  drawReplay();
}

function drawReplay() {
  const r = ui.replay;
  const f = r.frames[ui.frame];
  $("#replay-pos").textContent = `${ui.frame + 1} / ${r.frames.length}: ${f.title}`;
  const moves = {};
  if (f.trick) for (const mv of f.trick.moves) moves[mv.seat] = mv;
  const rows = [];
  for (let s = 0; s < r.players; s++) {
    const mv = moves[s];
    const best = f.trick && f.trick.winner === s;
    rows.push(el("tr", { class: best ? "winner" : "" },
      el("td", {}, el("b", { text: `seat ${s}` }), s === r.banker ? el("span", { class: "badge banker", text: r.streak > 1 ? `banker · streak ${r.streak}` : "banker" }) : null),
      el("td", {}, tilesRow(f.hands[s], "sm")),
      el("td", {}, mv ? el("div", { class: "replay-move" }, tilesRow(mv.tiles || [], "md"), el("div", { class: "small", text: mv.text + (best ? " · wins" : "") })) : null),
      el("td", { class: "num", text: String(f.columns[s]) })));
  }
  const view = $("#replay-view");
  put(view,
    el("p", { class: "small", text: `${r.path}, hand ${r.index} of ${r.count} · ${r.rules} rules · banker seat ${r.banker}` }),
    el("table", { class: "replay" }, el("thead", {}, el("tr", {}, el("th", { text: "seat" }),
      el("th", { text: f.trick ? "tiles before the trick" : ui.frame === 0 ? "dealt tiles" : "tiles left" }),
      el("th", { text: "move" }), el("th", { text: "columns" }))), el("tbody", {}, rows)),
    ...f.text.map((line) => el("div", { class: "line", text: line })),
    f.settlement ? settlementBlock(f.settlement, (s) => `seat ${s}`) : null,
    r.error && ui.frame === r.frames.length - 1 ? el("p", { class: "error", text: r.error }) : null);
}

// ----------------------------------------------------------------------------- league
async function openLeague(upload) {
  showError("#league-error", null);
  try {
    let data;
    if (upload) {
      const text = await upload.text();
      let parsed;
      try { parsed = JSON.parse(text); } catch (e) { throw new Error(`${upload.name} is not JSON: ${e.message}`); }
      data = await api("/api/league", parsed);
      data.path = upload.name;
    } else {
      data = await api(`/api/league?${new URLSearchParams({ path: $("#league-file").value })}`);
    }
    drawLeague(data);
  } catch (err) { put($("#league-view")); showError("#league-error", err); }
}

function heatColour(v, bound) {
  const t = Math.max(-1, Math.min(1, v / (bound || 1)));
  const [r, g, b] = t >= 0 ? [255 - 190 * t, 255 - 120 * t, 255 - 40 * t] : [255 + 40 * t, 255 + 175 * t, 255 + 175 * t];
  return `rgb(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)})`;
}

function drawLeague(d) {
  const bound = Math.max(1e-9, ...d.matrix.flat().filter((v) => v !== null).map(Math.abs));
  const head = el("tr", {}, el("th", { text: "candidate \\ opponent" }), ...d.agents.map((a) => el("th", { text: a })));
  const body = d.agents.map((a, i) => el("tr", {}, el("th", { text: a }), ...d.agents.map((b, j) => {
    const v = d.matrix[i][j];
    if (i === j) return el("td", { class: "diag", text: "—" });
    if (v === null) return el("td", { class: "missing", text: "?" });
    const ci = d.ci[i][j];
    const details = d.details[i][j] ? Object.entries(d.details[i][j]).map(([k, x]) => `${k}: ${x}`).join("\n") : "";
    const td = el("td", { class: "heat", title: `${a} vs ${b}\n${details}` },
      el("b", { text: `${v >= 0 ? "+" : ""}${v.toFixed(2)}` }),
      ci ? el("div", { class: "ci", text: `[${ci[0].toFixed(2)}, ${ci[1].toFixed(2)}]` }) : null);
    td.style.background = heatColour(v, bound);
    return td;
  })));
  const info = Object.entries(d.info).map(([k, v]) => `${k} ${v}`).join(" · ");
  put($("#league-view"),
    el("p", { class: "small", text: `${d.path || "uploaded"}${info ? ` · ${info}` : ""}` }),
    el("div", { class: "league-grid" },
      el("div", {}, el("h3", { text: "Ranking" }), el("table", { class: "ranking" },
        el("thead", {}, el("tr", {}, el("th", { text: "#" }), ...d.ranking.columns.map((c) => el("th", { text: c.replaceAll("_", " ") })))),
        el("tbody", {}, ...d.ranking.rows.map((row, k) => el("tr", {}, el("td", { text: String(k + 1) }), ...row.map((c) => el("td", { text: c }))))))),
      el("div", {}, el("h3", { text: "Chips per hand, candidate against three copies of the opponent" }),
        el("table", { class: "heatmap" }, el("thead", {}, head), el("tbody", {}, body)),
        el("p", { class: "small", text: "Blue: the candidate wins chips; red: it loses them. 95% confidence intervals below the means where the file has them." }))));
}

// ----------------------------------------------------------------------------- tabs and start
function selectTab(tab, redraw = true) {
  ui.tab = tab;
  document.body.dataset.mode = tab;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
  const game = tab === "play" || tab === "watch";
  $("#setup").classList.toggle("hidden", !game);
  $("#game").classList.toggle("hidden", !game);
  $("#replay").classList.toggle("hidden", tab !== "replay");
  $("#league").classList.toggle("hidden", tab !== "league");
  if (tab !== "watch") stopWatching();
  showBusy();
  if (game) {
    buildSeatInputs();
    if (redraw) {
      const epoch = ++ui.epoch;
      api("/api/state").then((d) => {
        if (epoch !== ui.epoch) return;  // a match started (or changed) meanwhile: keep it
        ui.match = d.match && d.match.mode === tab ? d.match : null;
        drawMatch();
      }).catch((err) => showError("#setup-error", err));
    }
  } else {
    loadFiles();
  }
}

function legend() {
  const sample = (name, text) => el("span", { class: "legend-item" }, tileEl(name, "xs"), text);
  put($("#legend"), sample("6-6", "civil"), sample("6-3", "military"),
    el("span", { class: "legend-item small", text: "red pips: halves of 1 and 4, and one six of Heaven" }));
}

async function init() {
  ui.meta = await api("/api/meta");
  setTileInfo(ui.meta.tiles);
  legend();
  put($("#rules"), ...ui.meta.presets.map((p) => el("option", { value: p.name, text: p.players === 4 ? p.name : `${p.name} (${p.players} players)` })));
  const examples = [...new Set([...ui.meta.agents, "pimc:64", "pimc:16"])].sort();
  put($("#agent-specs"), ...examples.map((a) => el("option", { value: a })));
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => selectTab(b.dataset.tab));
  $("#rules").addEventListener("change", buildSeatInputs);
  $("#seat").addEventListener("change", buildSeatInputs);
  $("#setup-form").addEventListener("submit", start);
  $("#speed").addEventListener("input", showSpeed);
  $("#pause").addEventListener("click", () => { ui.paused = !ui.paused; scheduleStep(); });
  $("#step").addEventListener("click", () => { ui.paused = true; clearTimeout(ui.timer); watchStep(); });
  $("#act-play").addEventListener("click", () => send({ play: selectedNames(ui.match) }));
  $("#act-discard").addEventListener("click", () => send({ discard: selectedNames(ui.match) }));
  $("#act-declare").addEventListener("click", () => send({ declare: true }));
  $("#act-decline").addEventListener("click", () => send({ declare: false }));
  $("#act-clear").addEventListener("click", () => { ui.selected.clear(); drawYou(ui.match); });
  $("#act-instead").addEventListener("click", () => send({ discard: ui.suggested }));
  $("#replay-open").addEventListener("click", openReplay);
  $("#replay-first").addEventListener("click", () => stepReplay(0));
  $("#replay-prev").addEventListener("click", () => stepReplay(ui.frame - 1));
  $("#replay-next").addEventListener("click", () => stepReplay(ui.frame + 1));
  $("#replay-last").addEventListener("click", () => stepReplay(Infinity));
  $("#league-open").addEventListener("click", () => openLeague(null));
  $("#league-upload").addEventListener("change", (e) => e.target.files[0] && openLeague(e.target.files[0]));
  document.addEventListener("keydown", (e) => {
    if (ui.tab !== "replay" || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight") stepReplay(ui.frame + 1);
    if (e.key === "ArrowLeft") stepReplay(ui.frame - 1);
  });
  const state = await api("/api/state");
  selectTab(state.match ? state.match.mode : "play", false);
  setMatch(state.match);
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", () => init().catch((err) => showError("#setup-error", err)));
