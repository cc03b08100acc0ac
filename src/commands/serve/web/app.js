// The analysis board of `oware serve`: plain JavaScript over the JSON API.
//
// A position is kept as the API gives it: 12 counts, the side to move's houses first
// (house 0..5), the opponent's next, in sowing order. The page and its URL show houses 1..6
// (house h + 1 of the API's index h), each house's tooltip both. The page knows which side
// (South, North) is to move and turns the counts onto the board: South's houses along the bottom,
// left to right; North's along the top, right to left, so that sowing runs counter-clockwise.
'use strict';

const SIDES = { S: 'South', N: 'North' };
const other = (side) => (side === 'S' ? 'N' : 'S');
const GAME_SEEDS = [12, 24, 36, 48];

const state = {
  info: null,
  start: null, // { pos: [12], mover: 'S' | 'N', cap: { S, N } }
  moves: [], // houses played (0..5, from the mover's side), ply by ply
  ply: 0, // the ply shown: 0 = the start
  mode: 'analysis', // or the side the user plays: 'S', 'N'
  level: 0, // the oracle's margin, in seeds
  seed: 1,
  hide: false, // in play mode: the values and stars of the user's own moves are hidden
  linkNotice: null, // why the shared URL the page opened with does not read, until the game changes
  editing: false,
  busy: false, // a render is under way: the houses shown may be those of the position before
  generation: 0, // bumped on every change, so that stale answers are dropped
};

const $ = (id) => document.getElementById(id);
const fmt = (v) => (v > 0 ? '+' + v : v < 0 ? '\u2212' + -v : '0');
const category = (d) => (d > 0 ? 'win' : d < 0 ? 'loss' : 'draw');

// ---------------------------------------------------------------- the API

const cache = new Map();

// The probe of a node: { ok: true, data } or { ok: false, status, data } (data holds
// `error`, and for a missing tier `missing_tier`, `generate` and the legal `moves`).
function probe(node) {
  const key = node.pos.join(',') + '|' + node.cap[node.mover] + ',' + node.cap[other(node.mover)];
  if (!cache.has(key)) {
    const q = 'position=' + node.pos.join(',') + '&captured=' + node.cap[node.mover] + ',' + node.cap[other(node.mover)];
    cache.set(key, fetch('/api/v1/probe?' + q)
      .then(async (r) => {
        let data;
        try { data = await r.json(); } catch (e) { data = { error: 'the server sent no JSON (' + r.status + ')' }; }
        // Only answers that hold are kept: a tier generated or a table repaired later is seen.
        if (!r.ok) cache.delete(key);
        return { ok: r.ok, status: r.status, data };
      })
      .catch((e) => {
        cache.delete(key);
        return { ok: false, status: 0, data: { error: 'the server cannot be reached: ' + e.message } };
      }));
  }
  return cache.get(key);
}

// ---------------------------------------------------------------- the game

// The node after playing `move` (an entry of a probe's `moves`) from `node`.
function play(node, move) {
  const cap = { ...node.cap };
  cap[node.mover] += move.captures;
  if (move.position === null) {
    // The move ends the game: its score is the rest of the game for the mover.
    const n = node.pos.reduce((a, b) => a + b, 0);
    const over = move.score === undefined ? null : {
      [node.mover]: node.cap[node.mover] + (n + move.score) / 2,
      [other(node.mover)]: node.cap[other(node.mover)] + (n - move.score) / 2,
    };
    return { pos: null, mover: other(node.mover), cap, over, by: node.mover };
  }
  const pos = move.position.split(' ').map(Number);
  return { pos, mover: other(node.mover), cap, over: null };
}

// Every node from the start up to `upto`, with its probe, for the game as it is when called.
// It stops early at a game's end, at a probe that fails (the last node then holds the error),
// or at an illegal move of a shared URL: then `cut` is the ply from which the moves are not
// legal.
async function line(upto) {
  const start = state.start;
  const moves = state.moves.slice();
  const nodes = [{ ...start, cap: { ...start.cap }, over: null }];
  let cut = null;
  for (let k = 0; k < Math.min(upto, moves.length); k++) {
    const node = nodes[k];
    if (node.pos === null) break;
    node.probe = await probe(node);
    const p = node.probe;
    if (!p.ok && !(p.status === 404 && p.data.moves)) break;
    const move = (p.data.moves || []).find((m) => m.house === moves[k]);
    if (!move) {
      cut = k;
      break;
    }
    node.played = move;
    nodes.push(play(node, move));
  }
  const last = nodes[nodes.length - 1];
  if (last.pos !== null && !last.probe) last.probe = await probe(last);
  return { nodes, cut };
}

// ---------------------------------------------------------------- the oracle as a player

// A 32-bit FNV-1a hash of a string.
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

// mulberry32: a small seeded generator; the same seed gives the same numbers.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The oracle's move at `node` (ply `ply`): at level 0, the oracle's first move (the best
// score and, among equal scores, the one that converts: the shortest distance to the next
// capture when winning, the longest when losing); otherwise one of the moves within `level`
// seeds of the best, drawn from the seed, the ply and the position, so that a game replays
// the same.
function oracleMove(node, ply) {
  const moves = node.probe.data.moves || [];
  if (moves.length === 0) return null;
  if (state.level === 0 && node.probe.ok) return moves[0];
  const scored = moves.filter((m) => m.score !== undefined);
  const best = scored.length ? Math.max(...scored.map((m) => m.score)) : 0;
  const pool = scored.length === moves.length ? moves.filter((m) => m.score >= best - state.level) : moves;
  const r = rng(hash(state.seed + '/' + ply + '/' + node.pos.join(',')))();
  return pool[Math.min(pool.length - 1, Math.floor(r * pool.length))];
}

// ---------------------------------------------------------------- drawing

function notice(html, id = 'notice') {
  const n = $(id);
  if (html) { n.innerHTML = html; n.hidden = false; } else { n.hidden = true; n.innerHTML = ''; }
}

// Whether the values of `side`'s moves are hidden (play mode, the user's side, `hide` on).
function hidden(side) {
  return state.hide && state.mode !== 'analysis' && side === state.mode;
}

// The result of the game for `side` after a move whose final difference is `d`.
function resultText(side, d) {
  return d > 0 ? SIDES[side] + ' wins' : d < 0 ? SIDES[other(side)] + ' wins' : 'a draw';
}

function escape(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
}

// The counts of `side`'s houses 0..5 at `node`.
function housesOf(node, side, pos) {
  return side === node.mover ? pos.slice(0, 6) : pos.slice(6, 12);
}

function drawBoard(node, prev) {
  const pos = node.pos || prev.pos.map(() => 0);
  const movesByHouse = new Map();
  let best = null;
  if (node.pos !== null && node.probe) {
    for (const m of node.probe.data.moves || []) movesByHouse.set(m.house, m);
    if (node.probe.ok && node.probe.data.moves.length) best = node.probe.data.moves[0].score;
  }
  const userTurn = state.mode === 'analysis' || state.mode === node.mover;
  for (const side of ['S', 'N']) {
    const row = $('row-' + side);
    row.innerHTML = '';
    const counts = housesOf(node, side, pos);
    for (let h = 0; h < 6; h++) {
      const b = document.createElement('button');
      b.className = 'house';
      b.dataset.side = side;
      b.dataset.house = h;
      // North's houses run right to left along the top.
      b.style.gridColumn = side === 'S' ? h + 2 : 7 - h;
      b.innerHTML = '<span class="label">' + (h + 1) + '</span><span class="count">' + counts[h] + '</span>';
      // Both numberings: the page's 1..6 and the index 0..5 of the command line and the API.
      const name = SIDES[side] + ' house ' + (h + 1) + ' (index ' + h + ')';
      b.title = name;
      b.setAttribute('aria-label', name + ', ' + counts[h] + ' seeds');
      if (node.pos !== null && side === node.mover) {
        const m = movesByHouse.get(h);
        const v = document.createElement('span');
        v.className = 'value';
        if (!m) {
          b.classList.add('illegal');
          v.textContent = counts[h] ? 'illegal' : '\u2013';
          b.disabled = true;
        } else {
          if (m.score !== undefined && node.probe.ok && hidden(side)) {
            // Play mode with the values hidden: no value, colour nor star.
            b.classList.add('masked');
            v.textContent = '?';
          } else if (m.score !== undefined && node.probe.ok) {
            // The badge's colour is the move's value's sign; the game's result, with the
            // seeds captured so far, is shown apart, below it.
            const d = node.cap[node.mover] - node.cap[other(node.mover)] + m.score;
            b.classList.add(category(m.score));
            if (m.score === best) b.classList.add('best');
            v.textContent = fmt(m.score);
            b.dataset.score = m.score;
            b.dataset.result = category(d);
            const r = document.createElement('span');
            r.className = 'result ' + category(d);
            r.textContent = d > 0 ? 'wins' : d < 0 ? 'loses' : 'draws';
            b.title = name + ': value ' + fmt(m.score) + ' for ' + SIDES[side] + '; the game ends ' + resultText(side, d);
            b.appendChild(v);
            if (m.score !== 0 && m.distance !== null && m.distance !== undefined) {
              // The distance to conversion: plies to the next capture under play that keeps the score.
              const t = document.createElement('span');
              t.className = 'distance';
              t.textContent = m.distance + (m.distance === 1 ? ' ply' : ' plies');
              b.dataset.distance = m.distance;
              b.title += '; ' + t.textContent + ' to the next capture';
              b.appendChild(t);
            }
            b.appendChild(r);
          } else {
            v.textContent = '?';
          }
          if (userTurn) {
            b.classList.add('playable');
            b.addEventListener('click', () => userPlays(h));
          } else {
            b.disabled = true;
          }
        }
        if (!v.parentNode) b.appendChild(v);
      } else {
        b.disabled = true;
        b.tabIndex = -1;
      }
      if (prev && prev.played && prev.played.house === h && prev.mover === side) b.classList.add('last');
      row.appendChild(b);
    }
  }
  $('cap-S').textContent = node.cap.S;
  $('cap-N').textContent = node.cap.N;
}

function totals(t) {
  return 'South ' + t.S + ' \u2013 North ' + t.N;
}

function drawStatus(node) {
  const status = $('status');
  const outcome = $('outcome');
  notice('');
  if (node.pos === null) {
    status.textContent = 'Game over: ' + SIDES[node.by] + '\u2019s move ended it.';
    outcome.textContent = node.over ? 'Final totals: ' + totals(node.over) + '.' : '';
    return;
  }
  const seeds = node.pos.reduce((a, b) => a + b, 0);
  const p = node.probe;
  const moves = (p && p.data.moves) || [];
  if (p && p.ok && moves.length === 0) {
    status.textContent = 'Game over: ' + SIDES[node.mover] + ' has no legal move; each side takes its own seeds.';
  } else {
    let who = SIDES[node.mover] + ' to move';
    if (state.mode !== 'analysis') who += node.mover === state.mode ? ' (you)' : ' (the oracle)';
    status.textContent = who + ' \u00b7 ' + seeds + ' seeds on the board';
  }
  outcome.textContent = '';
  if (!p) return;
  if (p.ok) {
    const o = p.data.outcome;
    if (o) {
      const t = { [node.mover]: o.mover_total, [other(node.mover)]: o.opponent_total };
      const verdict = o.difference === 0 ? 'a draw'
        : SIDES[o.difference > 0 ? node.mover : other(node.mover)] + ' wins';
      outcome.textContent = (moves.length ? 'With perfect play from here: ' : 'Final totals: ')
        + totals(t) + ' (' + verdict + '; score ' + fmt(p.data.score) + ' for ' + SIDES[node.mover] + ').';
    }
  } else if (p.status === 404 && p.data.missing_tier !== undefined) {
    notice('Tier ' + p.data.missing_tier + ' is not in the tables, so the moves have no values here. '
      + 'Generate it with <code>' + escape(p.data.generate) + '</code>.');
  } else {
    notice('The oracle cannot answer: ' + escape(p.data.error));
  }
}

function drawMoves(nodes) {
  const list = $('movelist');
  list.innerHTML = '';
  const start = document.createElement('li');
  start.className = 'start' + (state.ply === 0 ? ' current' : '');
  start.textContent = 'start';
  start.addEventListener('click', () => go(0));
  list.appendChild(start);
  for (let k = 0; k < state.moves.length; k++) {
    const li = document.createElement('li');
    const node = nodes[k];
    let text = SIDES[moverAt(k)] + ' ' + (state.moves[k] + 1);
    if (node && node.played) {
      if (node.played.captures) text += ' takes ' + node.played.captures;
      if (node.played.score !== undefined && node.probe.ok && !hidden(moverAt(k))) text += ' (' + fmt(node.played.score) + ')';
    }
    li.textContent = text;
    li.dataset.ply = k + 1;
    li.value = k + 1;
    if (k + 1 === state.ply) li.className = 'current';
    li.addEventListener('click', () => go(k + 1));
    list.appendChild(li);
  }
  const cur = list.querySelector('.current');
  if (cur) cur.scrollIntoView({ block: 'nearest' });
}

let oracleTimer = null;

async function render() {
  const generation = ++state.generation;
  state.busy = true;
  clearTimeout(oracleTimer);
  writeUrl();
  const { nodes, cut } = await line(state.ply);
  if (generation !== state.generation) return;
  let message = null;
  if (cut !== null) {
    message = 'Move ' + (cut + 1) + ' (house ' + (state.moves[cut] + 1) + ') is not legal; the game is cut there.';
    state.moves.length = cut;
    state.ply = Math.min(state.ply, cut);
    writeUrl();
  }
  // A probe that failed on the way shows its error where the line stops.
  const shownPly = Math.min(state.ply, nodes.length - 1);
  const node = nodes[shownPly];
  drawBoard(node, shownPly > 0 ? nodes[shownPly - 1] : null);
  drawStatus(node);
  if (message) notice(escape(message));
  notice(state.linkNotice ? escape(state.linkNotice) : '', 'link-notice');
  drawMoves(nodes);
  state.busy = false;
  $('undo').disabled = state.ply === 0;
  $('first').disabled = state.ply === 0;
  $('redo').disabled = state.ply >= state.moves.length;
  $('last').disabled = state.ply >= state.moves.length;
  // For scripts that drive the page (scripts/browser-check): what is shown.
  document.body.dataset.position = node.pos ? node.pos.join(' ') : '';
  document.body.dataset.mover = node.mover;
  document.body.dataset.ply = String(state.ply);
  document.body.dataset.ready = String(generation);
  // The oracle answers at the end of the game's line when it is its turn.
  if (state.mode !== 'analysis' && node.pos !== null && node.mover !== state.mode
      && shownPly === state.moves.length && node.probe) {
    const m = oracleMove(node, state.ply);
    if (m) {
      document.body.dataset.ready = 'thinking';
      oracleTimer = setTimeout(() => {
        if (generation === state.generation) playHouse(m.house);
      }, 350);
    }
  }
}

// ---------------------------------------------------------------- actions

function playHouse(h) {
  if (state.ply < state.moves.length && state.moves[state.ply] === h) {
    state.ply += 1;
  } else {
    state.moves.length = state.ply;
    state.moves.push(h);
    state.ply += 1;
  }
  render();
}

// A click or key on a house: ignored while the board is being redrawn (the houses shown may
// be those of the position before), while editing, and on the oracle's turn.
function userPlays(h) {
  if (state.editing || state.busy) return;
  if (state.mode !== 'analysis' && moverAt(state.ply) !== state.mode) return;
  state.linkNotice = null;
  playHouse(h);
}

function go(ply) {
  state.ply = Math.max(0, Math.min(ply, state.moves.length));
  render();
}

function undo() {
  let p = state.ply - 1;
  // Against the oracle, go back to the user's own turn (not before the oracle's first move
  // when it opens the game).
  if (state.mode !== 'analysis' && p >= 0 && moverAt(p) !== state.mode) p = p > 0 ? p - 1 : p + 1;
  go(p);
}

function moverAt(ply) {
  return ply % 2 === 0 ? state.start.mover : other(state.start.mover);
}

// ---------------------------------------------------------------- edit mode

function openEditor() {
  state.editing = true;
  $('edit').hidden = false;
  $('edit-error').textContent = '';
  line(state.ply).then(({ nodes }) => {
    const node = nodes[Math.min(state.ply, nodes.length - 1)];
    const pos = node.pos || new Array(12).fill(0);
    fillEditor(pos, node.mover, node.cap);
  });
}

function fillEditor(pos, mover, cap) {
  for (const side of ['S', 'N']) {
    const row = $('edit-' + side);
    row.innerHTML = '';
    const counts = side === mover ? pos.slice(0, 6) : pos.slice(6, 12);
    const order = side === 'S' ? [0, 1, 2, 3, 4, 5] : [5, 4, 3, 2, 1, 0];
    for (const h of order) {
      const input = document.createElement('input');
      input.type = 'number';
      input.min = 0;
      input.max = 48;
      input.value = counts[h];
      input.id = 'edit-' + side + h;
      input.title = SIDES[side] + ' house ' + (h + 1);
      row.appendChild(input);
    }
  }
  $('edit-cap-S').value = cap.S;
  $('edit-cap-N').value = cap.N;
  $('edit-side').value = mover;
}

function closeEditor() {
  state.editing = false;
  $('edit').hidden = true;
}

function count(text, what) {
  const t = String(text).trim();
  if (!/^\d+$/.test(t) || Number(t) > 48) throw new Error(what + ' is \u201c' + t + '\u201d, not a count in 0..48');
  return Number(t);
}

// The start read from the editor, or an error naming what is wrong.
function readEditor() {
  const mover = $('edit-side').value;
  const side = (s) => [0, 1, 2, 3, 4, 5].map((h) => count($('edit-' + s + h).value, SIDES[s] + ' house ' + (h + 1)));
  const mine = side(mover);
  const theirs = side(other(mover));
  const cap = { S: count($('edit-cap-S').value, 'South\u2019s captured total'), N: count($('edit-cap-N').value, 'North\u2019s captured total') };
  return validate({ pos: mine.concat(theirs), mover, cap });
}

function validate(start) {
  const board = start.pos.reduce((a, b) => a + b, 0);
  if (board > 48) throw new Error('the board holds ' + board + ' seeds; a game has at most 48');
  const all = board + start.cap.S + start.cap.N;
  if (!GAME_SEEDS.includes(all)) {
    throw new Error(board + ' seeds on the board and ' + start.cap.S + ' + ' + start.cap.N
      + ' captured make ' + all + '; a game has 48 seeds (or 12, 24, 36 from 1, 2, 3 per house)');
  }
  return start;
}

function readPaste() {
  const text = $('edit-paste').value.trim();
  const fields = text.split(/[\s,]+/).filter((f) => f.length);
  if (fields.length !== 12) throw new Error('a position is 12 counts, the side to move\u2019s houses first; found ' + fields.length);
  const pos = fields.map((f, i) => count(f, 'field ' + (i + 1)));
  const board = pos.reduce((a, b) => a + b, 0);
  if (board > 48) throw new Error('the board holds ' + board + ' seeds; a game has at most 48');
  const mover = $('edit-side').value;
  // Captured totals: keep them if they fit, else split the rest of the game's seeds evenly.
  let cap = { S: Number($('edit-cap-S').value) || 0, N: Number($('edit-cap-N').value) || 0 };
  if (!GAME_SEEDS.includes(board + cap.S + cap.N)) {
    const game = GAME_SEEDS.find((g) => g >= board);
    const rest = game - board;
    cap = { [mover]: Math.floor(rest / 2), [other(mover)]: rest - Math.floor(rest / 2) };
  }
  fillEditor(pos, mover, cap);
}

function guard(f) {
  try {
    $('edit-error').textContent = '';
    f();
  } catch (e) {
    $('edit-error').textContent = e.message;
  }
}

// ---------------------------------------------------------------- the URL

function writeUrl() {
  const s = state.start;
  const parts = [
    'pos=' + s.pos.join(','), 'side=' + s.mover, 'cap=' + s.cap.S + ',' + s.cap.N,
    'moves=' + state.moves.map((h) => h + 1).join(''), 'ply=' + state.ply,
  ];
  if (state.mode !== 'analysis') parts.push('mode=' + state.mode, 'level=' + state.level, 'seed=' + state.seed);
  if (state.hide) parts.push('hide=1');
  history.replaceState(null, '', '#' + parts.join('&'));
}

// The state of a shared URL. Only a fragment that reads whole is taken (what it leaves out
// takes its default); otherwise the game shown stays, with a notice that stays until the game
// changes. Houses are 1..6 in `moves`.
function readUrl() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (!h.has('pos')) return false;
  try {
    const pos = h.get('pos').split(',').map((f, i) => count(f, 'house ' + (i + 1)));
    if (pos.length !== 12) throw new Error('the position has ' + pos.length + ' counts, not 12');
    const mover = h.get('side') === 'N' ? 'N' : 'S';
    const c = (h.get('cap') || '0,0').split(',');
    if (c.length !== 2) throw new Error('the captured totals are not two counts');
    const cap = { S: count(c[0], 'South\u2019s total'), N: count(c[1], 'North\u2019s total') };
    const start = validate({ pos, mover, cap });
    const text = h.get('moves') || '';
    if (!/^[1-6]*$/.test(text)) throw new Error('the moves \u201c' + text + '\u201d are not houses 1..6');
    const moves = [...text].map((d) => Number(d) - 1);
    let ply = moves.length;
    if (h.has('ply')) {
      if (!/^\d+$/.test(h.get('ply'))) throw new Error('the ply \u201c' + h.get('ply') + '\u201d is not a count');
      ply = Math.min(Number(h.get('ply')), moves.length);
    }
    const mode = h.get('mode') === 'S' || h.get('mode') === 'N' ? h.get('mode') : 'analysis';
    let level = 0;
    if (h.has('level')) {
      if (![...$('level').options].some((o) => o.value === h.get('level'))) throw new Error('no oracle level \u201c' + h.get('level') + '\u201d');
      level = Number(h.get('level'));
    }
    let seed = 1;
    if (h.has('seed')) {
      if (!/^\d+$/.test(h.get('seed'))) throw new Error('the seed \u201c' + h.get('seed') + '\u201d is not a count');
      seed = Number(h.get('seed')) >>> 0;
    }
    const hide = h.get('hide') === '1';
    Object.assign(state, { start, moves, ply, mode, level, seed, hide, linkNotice: null });
    $('mode').value = mode;
    $('level').value = String(level);
    $('seed').value = seed;
    $('hide').checked = hide;
    return true;
  } catch (e) {
    state.linkNotice = 'The shared link does not read, so the game shown is not its game: ' + e.message + '.';
    return false;
  }
}

// ---------------------------------------------------------------- start

function defaultStart(info) {
  // The largest start position (1..4 seeds per house) whose every tier is present.
  let k = 4;
  while (k > 1 && (info.complete_to === null || info.complete_to < 12 * k)) k -= 1;
  return { pos: new Array(12).fill(k), mover: 'S', cap: { S: 0, N: 0 } };
}

async function main() {
  const r = await fetch('/api/v1/info');
  state.info = await r.json();
  $('tables').textContent = 'rules ' + state.info.rules + ' \u00b7 ' + state.info.summary;
  if (!readUrl()) state.start = defaultStart(state.info);

  $('first').addEventListener('click', () => go(0));
  $('undo').addEventListener('click', undo);
  $('redo').addEventListener('click', () => go(state.ply + 1));
  $('last').addEventListener('click', () => go(state.moves.length));
  $('edit-toggle').addEventListener('click', () => (state.editing ? closeEditor() : openEditor()));
  $('edit-cancel').addEventListener('click', closeEditor);
  $('edit-read').addEventListener('click', () => guard(readPaste));
  $('edit').addEventListener('submit', (e) => {
    e.preventDefault();
    guard(() => {
      state.start = readEditor();
      state.linkNotice = null;
      state.moves = [];
      state.ply = 0;
      closeEditor();
      render();
    });
  });
  $('mode').addEventListener('change', () => { state.mode = $('mode').value; render(); });
  $('level').addEventListener('change', () => { state.level = Number($('level').value); render(); });
  $('seed').addEventListener('change', () => { state.seed = Number($('seed').value) >>> 0; render(); });
  $('hide').addEventListener('change', () => { state.hide = $('hide').checked; render(); });
  document.addEventListener('keydown', (e) => {
    if (state.editing || e.target.closest('input, select, textarea') || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key >= '1' && e.key <= '6') {
      const b = document.querySelector('#row-' + moverAt(state.ply) + ' .house.playable[data-house="' + (Number(e.key) - 1) + '"]');
      if (b) b.click();
    } else if (e.key === 'ArrowLeft') { undo(); e.preventDefault(); }
    else if (e.key === 'ArrowRight') { go(state.ply + 1); e.preventDefault(); }
    else if (e.key === 'Home') { go(0); e.preventDefault(); }
    else if (e.key === 'End') { go(state.moves.length); e.preventDefault(); }
  });
  // A fragment typed or pasted into the address bar (the page's own changes do not fire it).
  window.addEventListener('hashchange', () => {
    readUrl();
    render();
  });
  render();
}

main().catch((e) => notice('The page cannot start: ' + escape(e.message)));
