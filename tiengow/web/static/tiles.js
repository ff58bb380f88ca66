// Chinese dominoes drawn in SVG (RULES.md section 1).
// A tile is tall: the high half on top. Pips are laid out as on dice, the six in two columns of
// three. A half showing 1 or 4 has red pips; Heaven (6-6) has one red six (half its twelve pips),
// which /api/meta says through each tile's "red" halves. Civil tiles have an ivory face with a
// red-brown rim, military tiles a pale blue face with a navy rim, so the suits differ at a glance.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const TILE_W = 48, TILE_H = 92;
const PIP_SPOTS = (() => {
  const d = 10.5;
  return {
    1: [[0, 0]],
    2: [[-d, -d], [d, d]],
    3: [[-d, -d], [0, 0], [d, d]],
    4: [[-d, -d], [d, -d], [-d, d], [d, d]],
    5: [[-d, -d], [d, -d], [0, 0], [-d, d], [d, d]],
    6: [[-d, -d * 1.1], [d, -d * 1.1], [-d, 0], [d, 0], [-d, d * 1.1], [d, d * 1.1]],
  };
})();

let TILE_INFO = {};  // name -> {suit, title, pips, red: [high, low]}, from /api/meta

function setTileInfo(tiles) {
  TILE_INFO = {};
  for (const t of tiles) TILE_INFO[t.name] = t;
}

function svgEl(tag, attrs) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function drawHalf(svg, pips, red, cy) {
  const cx = TILE_W / 2;
  for (const [dx, dy] of PIP_SPOTS[pips]) {
    const r = pips === 1 ? 6.4 : 4.3;
    svg.appendChild(svgEl("circle", {
      cx: cx + dx, cy: cy + dy, r,
      class: red ? "pip red" : "pip",
    }));
  }
}

// A tile as an inline SVG; `name` is "6-6", "4-1", ... or null for a tile face down.
function tileSvg(name) {
  const svg = svgEl("svg", { viewBox: `0 0 ${TILE_W} ${TILE_H}`, class: "domino", role: "img" });
  if (!name) {
    svg.classList.add("back");
    svg.appendChild(svgEl("rect", { x: 1, y: 1, width: TILE_W - 2, height: TILE_H - 2, rx: 6, class: "back-face" }));
    svg.appendChild(svgEl("rect", { x: 7, y: 7, width: TILE_W - 14, height: TILE_H - 14, rx: 3, class: "back-inlay" }));
    svg.setAttribute("aria-label", "a tile face down");
    return svg;
  }
  const info = TILE_INFO[name] || { suit: "civil", red: [false, false], title: name };
  const [high, low] = name.split("-").map(Number);
  svg.classList.add(info.suit);
  svg.appendChild(svgEl("rect", { x: 1, y: 1, width: TILE_W - 2, height: TILE_H - 2, rx: 6, class: "face" }));
  svg.appendChild(svgEl("rect", { x: 3.5, y: 3.5, width: TILE_W - 7, height: TILE_H - 7, rx: 4, class: "rim" }));
  svg.appendChild(svgEl("line", { x1: 8, y1: TILE_H / 2, x2: TILE_W - 8, y2: TILE_H / 2, class: "divider" }));
  drawHalf(svg, high, info.red[0], TILE_H / 4 + 0.5);
  drawHalf(svg, low, info.red[1], (3 * TILE_H) / 4 - 0.5);
  const title = svgEl("title", {});
  title.textContent = `${name} ${info.title} (${info.suit})`;
  svg.appendChild(title);
  svg.setAttribute("aria-label", `${name} ${info.title}, ${info.suit}`);
  return svg;
}

// A tile wrapped for the page: <span class="tile SIZE" data-tile="6-6">.
function tileEl(name, size = "md") {
  const span = document.createElement("span");
  span.className = `tile ${size}`;
  if (name) span.dataset.tile = name;
  span.appendChild(tileSvg(name));
  return span;
}

function tilesRow(names, size = "md") {
  const row = document.createElement("span");
  row.className = "tiles";
  for (const n of names) row.appendChild(tileEl(n, size));
  return row;
}
