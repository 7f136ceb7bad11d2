// baton's page: every call goes to the server's baton.v1 services as Connect JSON.
const $ = (id) => document.getElementById(id);
const keyInput = $('key');
keyInput.value = localStorage.getItem('baton.key') || '';
// A link may carry the key in its fragment (#key=KEY), which browsers never send to
// the server: the page takes it, keeps it like a typed one, and drops it from the
// address bar.
{
  const key = new URLSearchParams(location.hash.slice(1)).get('key');
  if (key) {
    keyInput.value = key;
    localStorage.setItem('baton.key', key);
    history.replaceState(null, '', location.pathname + location.search);
  }
}
// ?poll=MS sets how often the page polls List and Episodes (2000 by default; 0 never):
// Watch brings the trials' states and results at once, the polls what it does not
// carry (the tick of running trials, the episodes they complete, trials started
// elsewhere) and cover for a Watch stream that broke.
const pollMs = (() => {
  const v = new URLSearchParams(location.search).get('poll');
  return v !== null && /^\d+$/.test(v) ? Number(v) : 2000;
})();

// --- Feedback ----------------------------------------------------------------------

// note shows text next to the control that caused it (kind: ok, info or error); ''
// clears it.
function note(id, text, kind = 'info') {
  const e = $(id);
  e.textContent = text || '';
  e.className = 'note' + (text ? ' ' + kind : '');
}

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

const stateName = (s) => (s || 'TRIAL_STATE_UNSPECIFIED').replace('TRIAL_STATE_', '').toLowerCase();

// --- Calls ---------------------------------------------------------------------------

class CallError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
    this.detail = message;
  }
}

// The server's reachability: a call that cannot reach it marks it down, shows the
// banner and tries again every second until it answers; then the page reads every
// trial again and the game goes on.
let down = false;
let upWaiters = [];
let probe = null;

function markDown(why) {
  if (!down) {
    down = true;
    const conn = $('conn');
    conn.textContent = 'The server does not answer: it may have stopped, or the network is down. The page tries again every second; nothing you did here is lost.';
    conn.title = why;
    conn.hidden = false;
  }
  if (!probe) {
    probe = setInterval(async () => {
      try {
        await call('List', { pageSize: 1 });
      } catch { /* still down, or answering with an error: call says which */ }
    }, 1000);
  }
}

function markUp() {
  if (!down) return;
  down = false;
  clearInterval(probe);
  probe = null;
  $('conn').hidden = true;
  note('key-status', '');
  const ws = upWaiters;
  upWaiters = [];
  for (const w of ws) w();
  reconnected();
}

const whenUp = () => (down ? new Promise((resolve) => upWaiters.push(resolve)) : Promise.resolve());

function headers(contentType) {
  const h = { 'Content-Type': contentType, 'Connect-Protocol-Version': '1' };
  if (keyInput.value) h.Authorization = 'Bearer ' + keyInput.value;
  return h;
}

// answered records what an answer says about the key and the server.
function answered(code) {
  markUp();
  if (code === 'unauthenticated') {
    note('key-status', keyInput.value ? 'The server refuses this API key: enter the right one.' : 'This server needs an API key: enter it here.', 'error');
  } else if (code !== 'permission_denied') {
    if ($('key-status').classList.contains('error')) note('key-status', '');
  }
}

async function post(method, body, contentType, signal) {
  try {
    return await fetch('/baton.v1.TrialService/' + method, { method: 'POST', headers: headers(contentType), body, signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    markDown(e.message);
    throw new CallError('unavailable', 'the server does not answer');
  }
}

// call makes a unary call of TrialService.
async function call(method, body, signal) {
  const r = await post(method, JSON.stringify(body), 'application/json', signal);
  const j = await r.json().catch(() => ({}));
  answered(r.ok ? '' : j.code);
  if (!r.ok) throw new CallError(j.code || String(r.status), j.message || r.statusText);
  return j;
}

// stream makes a server-streaming call of TrialService and yields its messages.
async function* stream(method, body, signal) {
  const payload = new TextEncoder().encode(JSON.stringify(body));
  const env = new Uint8Array(5 + payload.length);
  new DataView(env.buffer).setUint32(1, payload.length);
  env.set(payload, 5);
  const r = await post(method, env, 'application/connect+json', signal);
  if (!r.ok) {
    const j = await r.json().catch(() => ({}));
    answered(j.code);
    throw new CallError(j.code || String(r.status), j.message || r.statusText);
  }
  answered('');
  const reader = r.body.getReader();
  let buf = new Uint8Array(0);
  for (;;) {
    while (buf.length >= 5) {
      const n = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
      if (buf.length < 5 + n) break;
      const flags = buf[0];
      const msg = JSON.parse(new TextDecoder().decode(buf.subarray(5, 5 + n)));
      buf = buf.slice(5 + n);
      if (flags & 2) {
        if (msg.error) throw new CallError(msg.error.code, msg.error.message);
        return;
      }
      yield msg;
    }
    let got;
    try {
      got = await reader.read();
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      markDown(e.message);
      throw new CallError('unavailable', 'the server does not answer');
    }
    if (got.done) return;
    const nb = new Uint8Array(buf.length + got.value.length);
    nb.set(buf);
    nb.set(got.value, buf.length);
    buf = nb;
  }
}

// --- What each environment shows people ---------------------------------------------

const swatch = (colour, text) => el('span', {}, el('i', { style: `background:${colour}` }), text);
const configOf = (t) => { try { return JSON.parse(t.config || '{}') || {}; } catch { return {}; } };

// guides say, per shipped environment, what its picture shows (a legend), the budget
// of a turn's agent, and what its success means. Another environment gets none.
const guides = {
  maze: {
    legend: () => [swatch('#74c476', 'goal'), swatch('#9ecae1', 'start'), swatch('#de2d26', 'you (the arrow points where you head)'), swatch('#333333', 'wall'), swatch('#ffffff', 'floor')],
    budget: (g, turn) => {
      const cfg = configOf(g);
      if (turn.agent === 'strategy') {
        const max = (cfg.strategy && cfg.strategy.max_steps) || 20;
        return `Decision ${g.decisions + 1} of ${max}: the strategy has ${max} decisions per episode to reach the goal. Each decision sends the motion agent (${g.others.motion || 'random'}) walking in that direction.`;
      }
      const max = (cfg.motion && cfg.motion.max_steps) || 10;
      return `Move ${g.decisions + 1} of at most ${max} for this direction.`;
    },
    success: ['goal reached', 'goal not reached'],
    alt: 'The maze from above: walls dark, the start light blue, the goal green, and a red arrow where the agent is, pointing where it heads.',
  },
  'maze-flat': {
    legend: () => guides.maze.legend(),
    budget: (g, turn) => `Move ${Number(turn.tick || 0) + 1}: each move is one tile; reach the goal.`,
    success: ['goal reached', 'goal not reached'],
    alt: 'The maze from above: walls dark, the start light blue, the goal green, and a red arrow where the agent is, pointing where it last moved.',
  },
  cartpole: {
    legend: () => [el('span', {}, 'Push the cart LEFT or RIGHT to keep the pole within 12° of upright and the cart on the track.')],
    budget: (g, turn) => `Step ${Number(turn.tick || 0) + 1} of 500: the episode succeeds when the pole stays up for 500 steps.`,
    success: ['balanced for 500 steps', 'the pole fell or the cart left the track'],
    alt: 'The cart on its track with the pole on it.',
  },
  webtest: {
    legend: () => [el('span', {}, 'The page under test: its links and forms are your actions. ✓ marks elements already tested.')],
    budget: (g, turn) => {
      const s = turn.scene || {};
      return s.budget !== undefined ? `Budget: ${s.budget} steps left; coverage ${(100 * (s.coverage || 0)).toFixed(1)}%; defects found: ${(s.defects || []).length}.` : '';
    },
    success: ['every defect found', 'not every defect found'],
  },
  rps: {
    legend: () => [el('span', {}, 'Rock beats scissors, scissors beat paper, paper beats rock. Both players choose at once.')],
    budget: (g, turn) => {
      const s = turn.scene || {};
      return s.max_cycles ? `${s.round || 0} of ${s.max_cycles} rounds played; your move is for round ${Number(s.round || 0) + 1}.` : '';
    },
  },
};
const guideOf = (env) => guides[env] || { legend: () => [], budget: () => '' };

// --- Start form ------------------------------------------------------------------------

let envs = [];

async function loadEnvs() {
  for (;;) {
    try {
      const r = await fetch('/ui/envs.json');
      envs = await r.json();
      break;
    } catch (e) {
      markDown(e.message);
      await whenUp();
    }
  }
  const sel = $('env');
  sel.replaceChildren(...envs.map((e) => el('option', { value: e.name, textContent: e.name })));
  sel.onchange = showActors;
  showActors();
}

function showActors() {
  const e = envs.find((x) => x.name === $('env').value);
  $('env-desc').textContent = e ? e.description : '';
  const box = $('actors');
  box.replaceChildren(el('legend', { textContent: 'Who plays each agent' }));
  for (const a of (e ? e.agents : [])) {
    const id = `actor-${a.name}`;
    const choice = el('select', { name: 'choice', id },
      ...a.policies.map((p, i) => el('option', { value: 'policy:' + p, textContent: i === 0 ? `${p} (default policy)` : p })),
      el('option', { value: 'human', textContent: 'me, in this page' }),
      el('option', { value: 'remote', textContent: 'an agent served elsewhere…' }));
    const remoteId = `${id}-remote`;
    const remote = el('div', { hidden: true }, el('label', { htmlFor: remoteId, textContent: 'Its address' }),
      el('input', { name: 'remote', id: remoteId, placeholder: 'grpc://HOST:PORT' }));
    const timeout = el('input', { name: 'timeout', id: `${id}-timeout`, type: 'number', min: 0, step: 'any', value: 60 });
    const fallback = el('select', { name: 'default-policy', id: `${id}-fallback` },
      ...a.policies.map((p) => el('option', { value: p, textContent: `the ${p} policy` })),
      el('option', { value: '', textContent: 'the first allowed action' }));
    const human = el('p', { className: 'human', hidden: true },
      'If you have not moved within ', timeout,
      ' seconds (0: wait for ever), ', fallback, ' moves for you.');
    timeout.setAttribute('aria-label', `seconds to wait for your move as ${a.name} (0: wait for ever)`);
    fallback.setAttribute('aria-label', `who moves for ${a.name} when you have not`);
    choice.onchange = () => {
      remote.hidden = choice.value !== 'remote';
      human.hidden = choice.value !== 'human';
    };
    const row = el('div', { className: 'actor' }, el('label', { htmlFor: id, textContent: a.name }), choice, remote, human);
    row.dataset.agent = a.name;
    box.append(row);
  }
}

$('start').onsubmit = async (ev) => {
  ev.preventDefault();
  const actors = {};
  const humans = [];
  const others = {};
  for (const row of $('actors').querySelectorAll('.actor')) {
    const name = row.dataset.agent;
    const choice = row.querySelector('[name=choice]').value;
    if (choice === 'human') {
      const s = Number(row.querySelector('[name=timeout]').value || '0');
      actors[name] = {
        client: {
          timeoutMs: String(Math.max(0, Math.round(s * 1000))),
          defaultAction: '0',
          defaultPolicy: row.querySelector('[name=default-policy]').value,
        },
      };
      humans.push(name);
    } else if (choice === 'remote') {
      actors[name] = { remote: row.querySelector('[name=remote]').value };
      others[name] = 'a remote agent';
    } else {
      actors[name] = { policy: choice.slice('policy:'.length) };
      others[name] = choice.slice('policy:'.length);
    }
  }
  const config = $('config').value.trim();
  if (config) {
    try {
      JSON.parse(config);
    } catch (e) {
      note('start-status', `The configuration is not JSON: ${e.message}`, 'error');
      $('options').open = true;
      $('config').focus();
      return;
    }
  }
  const spec = {
    env: $('env').value, config, seed: $('seed').value || '0',
    episodes: $('episodes').value || '1', maxTicks: $('max-ticks').value || '0', actors,
  };
  // A trial policies play is started watched, so that it is drawn from its first
  // step at the speed chosen, however soon it ends.
  const req = { spec };
  if (!humans.length) Object.assign(req, { watched: true, watchPaceMs: $('start-watch').value });
  note('start-status', 'Starting…');
  try {
    const { ids } = await call('Start', req);
    note('start-status', `Started ${ids.join(', ')}${humans.length ? ': your move below' : ': watch it below, and find its returns in the trial list'}.`, 'ok');
    for (const id of ids) trials.set(id, { id, env: spec.env, state: 'TRIAL_STATE_PENDING', live: [], spec });
    follow(ids);
    renderTrials();
    if (humans.length) {
      play(ids[0], humans, { env: spec.env, config, others });
      $('play-panel').scrollIntoView({ block: 'start' });
    } else {
      if (game && game.over) closeGame();
      $('watch-speed').value = $('start-watch').value;
      watch(ids[0]);
    }
  } catch (e) {
    note('start-status', e.detail || e.message, 'error');
  }
};

// --- Playing -------------------------------------------------------------------------

let game = null; // { trial, agents, env, config, others, turn, queued, steps, selected, episode, decisions, abort, over }

function closeGame() {
  if (game) game.abort.abort();
  game = null;
  clearInterval(timer);
  $('play-panel').hidden = true;
  $('nav-play').hidden = true;
}

async function play(trial, agents, info = {}) {
  if (game) game.abort.abort();
  const t = trials.get(trial) || {};
  const env = info.env || t.env || '';
  game = {
    trial, agents, env, config: info.config || '', others: info.others || {}, turn: null, queued: [], steps: [],
    selected: null, episode: 0, decisions: 0, shown: -1, lastPicture: null, score: [0, 0], abort: new AbortController(), over: false,
  };
  const g = game;
  clearQueued();
  renderTrials();
  $('play-panel').hidden = false;
  $('play-panel').classList.remove('over');
  $('nav-play').hidden = false;
  $('play-title').textContent = `${agents.join(' and ')} in ${trial} (${env})`;
  $('reward-value').value = '1';
  $('outcome').hidden = true;
  $('frame').replaceChildren(el('p', { className: 'muted', textContent: 'Waiting for your first turn…' }));
  $('legend').replaceChildren(...guideOf(env).legend());
  $('budget').textContent = '';
  showLastReward(null);
  $('actions').replaceChildren();
  $('inbox').replaceChildren();
  for (const id of ['play-status', 'reward-status']) note(id, '');
  $('play-state').textContent = 'Waiting for the trial…';
  renderTimeline();
  const wait = agents.length > 1 ? 500 : 15000;
  for (;;) {
    try {
      let acting = null;
      let last = null;
      for (const agent of agents) {
        const p = await call('Pending', { trial, agent, waitMs: wait }, g.abort.signal);
        last = p;
        if (p.acting) {
          acting = { ...p, agent };
          break;
        }
      }
      if (g !== game) return;
      if (acting) {
        await showTurn(acting);
        await new Promise((resolve) => { g.next = resolve; });
        continue;
      }
      const state = last.state || 'TRIAL_STATE_UNSPECIFIED';
      if (state !== 'TRIAL_STATE_RUNNING' && state !== 'TRIAL_STATE_PENDING') {
        g.over = true;
        g.turn = null;
        $('actions').replaceChildren();
        $('countdown').textContent = '';
        clearInterval(timer);
        $('play-panel').classList.add('over');
        note('play-status', '');
        $('play-state').textContent = `The trial ${stateName(state)}${last.error ? ': ' + last.error : '.'}`;
        await finalFrame(g);
        await outcomes(g, true);
        renderTrials();
        return;
      }
      $('play-state').textContent = state === 'TRIAL_STATE_PENDING'
        ? `The trial waits to start${(trials.get(trial) || {}).reason ? ': ' + trials.get(trial).reason : '.'}`
        : 'The other agents are playing…';
    } catch (e) {
      if (e.name === 'AbortError' || g !== game) return;
      if (e.code === 'unavailable') {
        $('play-state').textContent = 'The server does not answer; the game goes on when it is back.';
        await whenUp();
        continue;
      }
      if (e.code === 'not_found') {
        g.over = true;
        $('actions').replaceChildren();
        $('play-state').textContent = `The server no longer has ${trial} (it was restarted, or forgot the trial).`;
        return;
      }
      note('play-status', e.detail || e.message, 'error');
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// outcomes shows the outcome of the episodes that ended since the last shown, as the
// trial's Episodes report them.
async function outcomes(g, final) {
  let eps;
  try {
    eps = await call('Episodes', { trial: g.trial, from: String(g.shown + 1) });
  } catch (e) {
    return;
  }
  const got = eps.episodes || [];
  if (!got.length) {
    if (final) showOutcome(g, null, final);
    return;
  }
  const first = Number(eps.first || 0);
  const last = got.at(-1);
  g.shown = first + got.length - 1;
  showOutcome(g, { index: g.shown, ep: last, agents: eps.agents || [] }, final);
}

function showOutcome(g, o, final) {
  const box = $('outcome');
  box.hidden = false;
  const spec = (trials.get(g.trial) || {}).spec || {};
  const total = Number(spec.episodes || 0);
  if (!o) {
    box.className = 'outcome fail';
    box.replaceChildren(el('h3', { textContent: 'The trial is over' }), el('p', { textContent: 'It completed no episode.' }));
    return;
  }
  const { ep, agents, index } = o;
  const guide = guideOf(g.env);
  let verdict;
  if (ep.truncated) verdict = 'cut at the tick limit';
  else if (guide.success) verdict = guide.success[ep.success ? 0 : 1];
  else verdict = ep.complete ? 'ended' : 'not complete';
  if (g.env === 'rps') {
    const [a, b] = ep.returns || [];
    verdict = `${(a || 0) === (b || 0) ? 'a draw' : agents[(a || 0) > (b || 0) ? 0 : 1] + ' wins'}, ${a || 0} to ${b || 0}`;
  }
  const good = ep.success || (!guide.success && ep.complete);
  box.className = 'outcome' + (good ? '' : ' fail');
  box.dataset.episode = String(index);
  box.dataset.ticks = String(ep.ticks || 0);
  box.dataset.success = String(Boolean(ep.success));
  box.dataset.returns = JSON.stringify(Object.fromEntries(agents.map((a, i) => [a, (ep.returns || [])[i] || 0])));
  const returns = agents.map((a, i) => `${a} ${((ep.returns || [])[i] || 0).toFixed(2)}`).join(', ');
  const next = final ? 'The trial is over.' : `Episode ${index + 1}${total ? ' of ' + total : ''} begins: the picture shows its start.`;
  box.replaceChildren(
    el('h3', { textContent: `Episode ${index}${total ? ` of ${total}` : ''}: ${verdict}` }),
    el('p', { textContent: `${ep.ticks || 0} ticks. Return: ${returns}.` }),
    el('p', { className: 'small', textContent: next }));
}

// stopPlaying takes back the turn of a trial that finished while the page waited for
// its person (stopped from the list, or failed): the game asks Pending once more,
// which says how the trial finished.
function stopPlaying() {
  const g = game;
  if (!g.turn) return;
  g.turn = null;
  clearInterval(timer);
  $('countdown').textContent = '';
  $('actions').replaceChildren();
  if (g.next) g.next();
}

// finalFrame draws the trial's last frame, which it drew because the page asked for
// its frames when the person acted (/ui/frame); else it says that the picture is the
// one of the last turn.
async function finalFrame(g) {
  try {
    const f = await frameOf(g.trial, 0);
    if (g === game && f.seq && f.episode === g.episode) {
      draw($('frame'), g.env, f, f.scene || null, [], null);
      $('frame').append(el('figcaption', { className: 'final muted small', textContent: 'The final position: the episode ended here.' }));
      return;
    }
  } catch { /* a server without /ui/frame: the last turn's picture stays */ }
  lastSeen();
}

// lastSeen says that the picture is the one of the last turn, before the episode
// ended: the moves after it (the other agents', the last one's effect) are not drawn.
function lastSeen() {
  const fig = $('frame');
  fig.classList.add('ended');
  if (!fig.querySelector('figcaption.last')) {
    fig.append(el('figcaption', { className: 'last muted small', textContent: 'The picture is from your last turn; the episode ended after it, so the final moves are not drawn.' }));
  }
}

// emptySlot is an action that stands for no element of the page (webtest's unused
// slots): never shown.
const emptySlot = (a) => !a.allowed && /^slot \d+ \(empty\)$/.test(a.name);

async function showTurn(t) {
  const g = game;
  t.scene = null;
  const f = t.frame || {};
  if (f.sceneJson) {
    try { t.scene = JSON.parse(f.sceneJson); } catch { /* drawn from text */ }
  }
  const episode = Number(t.episode || 0);
  if (episode !== g.episode) {
    lastSeen();
    g.episode = episode;
    g.decisions = 0;
    g.score = [0, 0];
    await outcomes(g, false);
  } else {
    g.decisions = g.steps.filter((s) => Number(s.episode) === episode && s.agent === t.agent).length;
  }
  if (g.env === 'rps' && t.scene && t.scene.winner >= 0 && t.scene.round !== g.scoredRound) {
    g.scoredRound = t.scene.round;
    g.score[t.scene.winner]++;
  }
  g.turn = t;
  $('play-panel').classList.remove('over');
  $('play-state').textContent = `Your move as ${t.agentId}: episode ${episode}, tick ${t.tick || 0}.`;
  const picture = f.svg || f.text || f.sceneJson || '';
  if (g.lastPicture !== null && picture === g.lastPicture && g.steps.length && g.env === 'maze') {
    const motion = g.others.motion || 'another';
    note('play-status', `You are where you were: the motion agent (${motion} policy) did not take you anywhere new. A random motion agent often walks into walls or back; choose again.`, 'info');
  }
  g.lastPicture = picture;
  drawFrame(t);
  $('budget').textContent = (guideOf(g.env).budget || (() => ''))(g, t) || '';
  showLastReward(t);
  const visible = (t.actions || []).filter((a) => !emptySlot(a));
  const buttons = visible.map((a, i) => {
    const b = el('button', { type: 'button', disabled: !a.allowed, title: a.allowed ? '' : 'not allowed at this turn' },
      el('kbd', { textContent: i < 9 ? String(i + 1) : '' }), a.name);
    b.dataset.name = a.name;
    b.onclick = () => act(a);
    return b;
  });
  $('actions').replaceChildren(...buttons);
  const masked = visible.filter((a) => !a.allowed).map((a) => a.name);
  $('keys-help').textContent = `Keys: 1–${Math.min(9, visible.length)} by position${visible.some((a) => Object.values(arrows).includes(a.name)) ? ', or the arrow keys' : ''}.${masked.length ? ` Greyed: not allowed now (${masked.join(', ')}).` : ''}`;
  // The messages go to the receivers the server names for this turn, and no others.
  const to = $('msg-to');
  const chosen = to.value;
  to.replaceChildren(...(t.receivers || []).map((r) => el('option', { value: r, textContent: r })));
  if ((t.receivers || []).includes(chosen)) to.value = chosen;
  $('inbox').replaceChildren(...(t.inbox || []).map((m) => el('p', { className: 'note info', textContent: `Message from ${m.from}: ${m.payload}` })));
  countdown(t);
}

// showLastReward says what the agent received for its previous turn in the episode
// (PendingResponse.last_reward, every source included); nothing at its first turn.
function showLastReward(t) {
  const out = $('last-reward');
  const r = t && t.lastReward !== undefined && t.lastReward !== null ? Number(t.lastReward) : NaN;
  if (Number.isNaN(r)) {
    out.textContent = '';
    delete out.dataset.reward;
    return;
  }
  out.dataset.reward = String(r);
  out.textContent = `Last turn: ${r > 0 ? '+' : ''}${Number.isInteger(r) ? r.toFixed(1) : String(Number(r.toFixed(4)))}`;
}

// drawFrame draws the turn's environment for people: the page under test as a page,
// else the environment's SVG, else its text.
function drawFrame(t) {
  const extra = game.env === 'rps' ? el('p', { className: 'score', textContent: `Score: ${game.score[0]} to ${game.score[1]} (player_0 to player_1)` }) : null;
  draw($('frame'), game.env, t.frame || {}, t.scene, t.actions || [], extra);
}

// draw draws a frame of env into fig: webtest's page as a page (its elements play
// actions when given), else the SVG, else the text.
function draw(fig, env, f, s, actions, extra) {
  fig.classList.remove('ended');
  if (s && s.kind === 'page') {
    fig.replaceChildren(webPage(s, { actions }));
    return;
  }
  const parts = [];
  if (f.svg) {
    const guide = guideOf(env);
    const alt = guide.alt || (f.text ? f.text.trim() : `${env} drawn`);
    parts.push(el('img', { alt, className: env.startsWith('maze') ? 'pixel' : '', src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(f.svg) }));
    if (extra) parts.push(extra);
    if (f.text && !env.startsWith('maze')) parts.push(el('figcaption', { className: 'muted small', textContent: f.text.trim().split('\n').at(-1) }));
  } else if (f.text) {
    parts.push(el('pre', { textContent: f.text }));
  } else if (s) {
    parts.push(el('pre', { textContent: JSON.stringify(s, null, 1) }));
  } else {
    parts.push(el('p', { className: 'muted', textContent: '(this environment draws nothing)' }));
  }
  fig.replaceChildren(...parts);
}

// webPage draws webtest's page: its title and address, its elements as buttons that
// play the element's action, with what is tested marked, and the session.
function webPage(s, t) {
  const bySlot = new Map((t.actions || []).map((a) => [Number(a.raw), a]));
  const items = (s.elements || []).map((e) => {
    const a = bySlot.get(Number(e.slot));
    const b = el('button', { type: 'button', className: 'element', disabled: !a || !a.allowed },
      `${e.kind === 'form' ? '▤ ' : ''}${e.label}`, e.covered ? el('span', { className: 'tested', textContent: ' ✓', title: 'tested' }) : null);
    if (a) b.onclick = () => act(a);
    const li = el('li', {}, b);
    if (e.fields && e.fields.length) li.append(el('span', { className: 'muted small', textContent: ' fields: ' + e.fields.map((x) => `${x.label}${x.value ? ' = ' + x.value : ''}`).join(', ') }));
    return li;
  });
  const sess = s.session || {};
  return el('div', { className: 'webpage' },
    el('div', { className: 'addr', textContent: s.url || '/' }),
    el('h4', { textContent: s.title || s.page || '' }),
    el('ul', {}, ...items),
    el('p', { className: 'muted small', textContent: `Session: ${sess.logged_in ? 'logged in' : 'logged out'}, cart ${sess.cart || 0}. Coverage ${(100 * (s.coverage || 0)).toFixed(1)}%${(s.defects || []).length ? ', defects: ' + s.defects.join(', ') : ''}.` }));
}

let timer = null;
function countdown(t) {
  clearInterval(timer);
  const out = $('countdown');
  if (!Number(t.remainingMs)) {
    out.textContent = '';
    return;
  }
  const end = Date.now() + Number(t.remainingMs);
  const tick = () => {
    const left = Math.max(0, end - Date.now());
    out.textContent = `${(left / 1000).toFixed(0)} s left before the default moves for you.`;
    if (left) return;
    clearInterval(timer);
    // The trial took the default action: ask for the next turn.
    if (game && game.turn === t && game.next) {
      game.turn = null;
      $('actions').replaceChildren();
      note('play-status', 'Time was up: the default moved for you.', 'info');
      game.next();
    }
  };
  tick();
  timer = setInterval(tick, 250);
}

async function act(a) {
  const g = game;
  const t = g && g.turn;
  if (!t) return;
  if (!a.allowed) {
    note('play-status', `${a.name} is not allowed at this turn.`, 'error');
    return; // a masked action is not sent, however it was clicked
  }
  // The trial draws the steps that follow, so that the page can show the final
  // position of an episode this action ends.
  await frameOf(g.trial, 0).catch(() => {});
  try {
    await call('ClientAct', { trial: g.trial, agent: t.agent, tick: t.tick || '0', name: a.name, messages: g.queued });
  } catch (e) {
    if (e.code === 'invalid_argument' && / messages\[\d+\]\.to: /.test(' ' + e.detail)) {
      // The server refused a message, and with it the action: the messages are
      // dropped, so that the next action goes through.
      clearQueued();
      note('msg-queued', `Not sent: ${e.detail}. The queued messages were removed; play your move again.`, 'error');
      note('play-status', 'Your move was not taken because of a message: play it again.', 'error');
      return;
    }
    note('play-status', e.detail || e.message, 'error');
    if (e.code !== 'failed_precondition') return; // the turn is still ours
  }
  note('play-status', `You played ${a.name} at tick ${t.tick || 0}.`, 'ok');
  if (g.queued.length) note('msg-queued', `${g.queued.length} message${g.queued.length > 1 ? 's' : ''} sent.`, 'ok');
  clearQueued(true);
  g.steps.push({ agent: t.agent, agentId: t.agentId, episode: t.episode || '0', tick: t.tick || '0', action: a.name });
  renderTimeline();
  g.turn = null;
  $('actions').replaceChildren();
  clearInterval(timer);
  $('countdown').textContent = '';
  if (g.next) g.next();
}

function renderTimeline() {
  const g = game;
  const items = g.steps.map((s, i) => {
    const b = el('button', { type: 'button', textContent: `${s.tick}: ${s.action}`, title: `${s.agentId}, episode ${s.episode}` });
    b.setAttribute('aria-pressed', String(g.selected === i));
    b.onclick = () => {
      g.selected = g.selected === i ? null : i;
      renderTimeline();
    };
    return el('li', {}, b);
  });
  $('timeline').replaceChildren(...items);
  const s = g.selected === null ? null : g.steps[g.selected];
  $('reward-target').textContent = s
    ? `Goes to ${s.agentId} for its turn at tick ${s.tick} (episode ${s.episode}).`
    : "Goes to the agent's next step; choose a turn in the timeline to reward it instead.";
  $('reward-give').textContent = s ? `Reward the turn at tick ${s.tick}` : 'Reward the next step';
  $('reward-now').hidden = !s;
}

async function reward(toNext) {
  const g = game;
  if (!g) return;
  const raw = $('reward-value').value.trim();
  if (raw === '' || !Number.isFinite(Number(raw))) {
    note('reward-status', 'Enter a number to give as the reward.', 'error');
    return;
  }
  const value = Number(raw);
  const s = toNext || g.selected === null ? null : g.steps[g.selected];
  const agentId = s ? s.agentId : (g.turn ? g.turn.agentId : (g.steps.at(-1) || {}).agentId);
  if (!agentId) {
    note('reward-status', 'Nothing to reward yet: wait for your first turn.', 'error');
    return;
  }
  const req = { trial: g.trial, agentId, value, source: 'human' };
  if (s) Object.assign(req, { episode: s.episode, tick: s.tick });
  else req.nextStep = true;
  try {
    await call('Reward', req);
    note('reward-status', `Rewarded ${agentId} ${value}${s ? ' at tick ' + s.tick : ' for its next step'}.`, 'ok');
    note('play-status', `Rewarded ${agentId} ${value}${s ? ' at tick ' + s.tick : ' for its next step'}.`, 'ok');
  } catch (e) {
    note('reward-status', e.detail || e.message, 'error');
  }
}

$('reward').onsubmit = (ev) => {
  ev.preventDefault();
  // The arrow keys play again once the reward is given.
  document.activeElement.blur();
  reward(false);
};
$('reward-now').onclick = () => reward(true);

$('message').onsubmit = (ev) => {
  ev.preventDefault();
  if (!game) return;
  const to = $('msg-to').value;
  const receivers = (game.turn && game.turn.receivers) || [];
  if (!receivers.includes(to)) {
    note('msg-queued', `No message to "${to}": wait for your turn, then choose one of its receivers (${receivers.join(', ') || 'none yet'}).`, 'error');
    return;
  }
  game.queued.push({ to, payload: $('msg-payload').value });
  $('msg-payload').value = '';
  note('msg-queued', `${game.queued.length} queued; ${game.queued.length > 1 ? 'they go' : 'it goes'} with your next move.`, 'info');
  $('msg-clear').hidden = false;
};

function clearQueued(keepNote) {
  if (game) game.queued = [];
  if (!keepNote) note('msg-queued', '');
  $('msg-clear').hidden = true;
}
$('msg-clear').onclick = () => {
  clearQueued();
  note('msg-queued', 'Queued messages removed.', 'info');
};

const arrows = { ArrowUp: 'UP', ArrowRight: 'RIGHT', ArrowDown: 'DOWN', ArrowLeft: 'LEFT' };
document.addEventListener('keydown', (ev) => {
  if (!game || !game.turn || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) return;
  const buttons = [...$('actions').querySelectorAll('button')];
  let b = null;
  if (/^[1-9]$/.test(ev.key)) b = buttons[Number(ev.key) - 1];
  else if (arrows[ev.key]) b = buttons.find((x) => x.dataset.name === arrows[ev.key]);
  else return;
  ev.preventDefault();
  if (!b) {
    note('play-status', `No action for the key ${ev.key} at this turn.`, 'error');
  } else if (b.disabled) {
    const allowed = buttons.filter((x) => !x.disabled).map((x) => x.dataset.name);
    note('play-status', `${b.dataset.name} is not allowed at this turn (allowed: ${allowed.join(', ')}).`, 'error');
  } else {
    b.click();
  }
});

// --- Watching ------------------------------------------------------------------------

// The page watches one trial at a time, drawn frame by frame (/ui/frame): each call
// keeps the trial drawing its steps for a while, at the pace the speed asks for.
let watching = null; // { trial, env, abort, seq }

async function frameOf(trial, pace, signal) {
  let r;
  try {
    r = await fetch(`/ui/frame?trial=${encodeURIComponent(trial)}&pace=${pace}`, { headers: headers('application/json'), signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    markDown(e.message);
    throw new CallError('unavailable', 'the server does not answer');
  }
  const j = await r.json().catch(() => ({}));
  answered(r.ok ? '' : j.code);
  if (!r.ok) throw new CallError(j.code || String(r.status), j.message || r.statusText);
  return j;
}

function stopWatching() {
  if (watching) watching.abort.abort();
  watching = null;
  $('watch-panel').hidden = true;
  renderTrials();
}

async function watch(trial) {
  if (watching) watching.abort.abort();
  const t = trials.get(trial) || {};
  const w = { trial, env: t.env || '', abort: new AbortController(), seq: 0 };
  watching = w;
  $('watch-panel').hidden = false;
  $('watch-title').textContent = `${trial} (${w.env})`;
  $('watch-legend').replaceChildren(...guideOf(w.env).legend());
  $('watch-frame').replaceChildren(el('p', { className: 'muted', textContent: 'Waiting for its next step…' }));
  $('watch-state').textContent = '';
  renderTrials();
  for (;;) {
    const pace = Number($('watch-speed').value);
    try {
      const f = await frameOf(trial, pace, w.abort.signal);
      if (w !== watching) return;
      if (f.seq !== w.seq && f.seq) {
        w.seq = f.seq;
        let scene = null;
        if (f.scene) scene = f.scene;
        draw($('watch-frame'), w.env, f, scene, [], null);
      }
      const done = ['ended', 'stopped', 'failed'].includes(f.state);
      if (done && !w.seq) {
        $('watch-frame').replaceChildren();
        $('watch-state').textContent = `The trial ${f.state} before the page could draw it; its returns are in the trial list.`;
      } else if (!w.seq) {
        $('watch-state').textContent = `${f.state}: waiting for its next step…`;
      } else {
        $('watch-state').textContent = `${f.state}: episode ${f.episode}, tick ${f.tick}${done ? ' (its last step drawn)' : ''}`;
      }
      if (done) return;
    } catch (e) {
      if (e.name === 'AbortError' || w !== watching) return;
      if (e.code === 'unavailable') {
        await whenUp();
        continue;
      }
      $('watch-state').textContent = e.detail || e.message;
      return;
    }
    await new Promise((r) => setTimeout(r, Math.max(100, Math.min(pace, 500))));
  }
}

$('watch-close').onclick = stopWatching;

// --- Trials --------------------------------------------------------------------------

const trials = new Map(); // id -> { id, env, state, episode, tick, error, result, live, agents, changes, lastRead, reading, spec }

const finished = (t) => ['TRIAL_STATE_ENDED', 'TRIAL_STATE_STOPPED', 'TRIAL_STATE_FAILED'].includes(t.state);

// The page follows every trial it knows of with one Watch stream (a browser keeps few
// HTTP/1.1 connections per server, and a stream holds one): following another trial
// replaces the stream by one that watches all those whose result the page lacks.
// Watch replays each trial's changes from its first, so the page skips the ones it
// has seen.
const watched = new Set();
let watchAbort = null;

function follow(ids) {
  const fresh = ids.filter((id) => !watched.has(id));
  if (!fresh.length) return;
  for (const id of fresh) watched.add(id);
  rewatch();
}

function rewatch() {
  if (watchAbort) watchAbort.abort();
  watchAbort = null;
  // A trial that finished before the page knew it is watched for its result.
  const ids = [...watched].filter((id) => !(trials.get(id) || {}).result);
  if (!ids.length) return;
  const abort = new AbortController();
  watchAbort = abort;
  const seen = new Map(); // id -> changes of this stream
  (async () => {
    try {
      for await (const ch of stream('Watch', { ids }, abort.signal)) {
        const t = trials.get(ch.trial) || { id: ch.trial, live: [] };
        trials.set(ch.trial, t);
        const n = (seen.get(ch.trial) || 0) + 1;
        seen.set(ch.trial, n);
        if (n <= (t.changes || 0)) continue; // replayed
        t.changes = n;
        changed(t, ch);
      }
      if (watchAbort === abort) watchAbort = null;
    } catch (e) {
      if (e.name === 'AbortError') return;
      if (watchAbort === abort) watchAbort = null; // the next poll watches again
      if (e.code !== 'unavailable') note('trials-status', `Following the trials: ${e.detail || e.message}`, 'error');
    }
  })();
}

// changed applies a change Watch reported, and reads the returns it changed.
async function changed(t, ch) {
  t.state = ch.state;
  t.error = ch.error || '';
  if (ch.result) {
    t.result = ch.result;
    const eps = ch.result.episodes || [];
    if (eps.length) Object.assign(t, { episode: Number(ch.result.firstEpisode || 0) + eps.length - 1, tick: Number(eps.at(-1).ticks || 0) });
  }
  renderTrials();
  if (finished(t) && game && game.trial === t.id) stopPlaying();
  if (t.state === 'TRIAL_STATE_RUNNING' && !t.result) {
    try {
      await episodes(t);
      renderTrials();
    } catch (e) {
      if (e.code !== 'unavailable') note('trials-status', e.detail || e.message, 'error');
    }
  }
}

// episodes reads the episodes a trial completed since the last look, one read of a
// trial at a time (Watch and the polls both ask), so that none is counted twice. The
// server keeps a window of a long trial's last episodes, and so does the page.
const keptEpisodes = 1000;
function episodes(t) {
  const read = async () => {
    t.live = t.live || [];
    const eps = await call('Episodes', { trial: t.id, from: String(t.next || 0) });
    t.agents = eps.agents || [];
    const got = eps.episodes || [];
    t.next = Number(eps.first || 0) + got.length;
    t.live.push(...got);
    if (t.live.length > keptEpisodes) t.live.splice(0, t.live.length - keptEpisodes);
  };
  t.reading = (t.reading || Promise.resolve()).catch(() => {}).then(read);
  return t.reading;
}

// refresh polls every trial's state (List) and the episodes that running trials
// completed since the last look (Episodes), and follows the trials it did not know.
// With forget, the trials the server no longer has leave the list (it restarted).
async function refresh(forget) {
  try {
    const list = [];
    let token = '';
    do {
      const r = await call('List', { pageToken: token });
      list.push(...(r.trials || []));
      token = r.nextPageToken || '';
    } while (token);
    if (forget) {
      const ids = new Set(list.map((s) => s.id));
      for (const id of [...trials.keys()]) {
        if (!ids.has(id)) {
          trials.delete(id);
          watched.delete(id);
        }
      }
    }
    for (const s of list) {
      const t = trials.get(s.id) || { id: s.id, live: [] };
      Object.assign(t, { env: s.env, episode: s.episode || 0, tick: s.tick || 0, reason: s.reason || '', clients: s.clients || [] });
      if (!t.result) Object.assign(t, { state: s.state, error: s.error || '' });
      trials.set(s.id, t);
      // Without Watch's result (the stream broke), a finished trial's episodes are
      // read once more, for its chart.
      if (!t.result && !t.lastRead && (s.state === 'TRIAL_STATE_RUNNING' || finished(s))) {
        await episodes(t);
        t.lastRead = finished(s);
      }
    }
    if (watchAbort) follow(list.map((s) => s.id));
    else {
      for (const s of list) watched.add(s.id);
      rewatch();
    }
    if ($('trials-status').classList.contains('error')) note('trials-status', '');
    renderTrials();
  } catch (e) {
    if (e.code !== 'unavailable' && e.code !== 'unauthenticated') note('trials-status', e.detail || e.message, 'error');
  }
}

// reconnected reads everything again once the server answers after it did not: the
// trials it has now (one that restarted has forgotten the old ones), and the stream.
function reconnected() {
  if (watchAbort) watchAbort.abort();
  watchAbort = null;
  for (const t of trials.values()) t.changes = 0;
  note('trials-status', 'The server answers again.', 'ok');
  setTimeout(() => { if ($('trials-status').textContent === 'The server answers again.') note('trials-status', ''); }, 4000);
  refresh(true);
}

const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#b35806', '#8c564b'];
const svgNS = 'http://www.w3.org/2000/svg';

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));

// chart draws each agent's return per episode, with its axes: the episodes along x,
// the return along y (its least and greatest value labelled), and each agent's last
// return. opts.what names what is drawn (for screen readers) and opts.xLabel(i) the
// i-th point along x (a model's curve in bins of episodes).
function chart(result, opts = {}) {
  const eps = result.episodes || [];
  const agents = result.agents || [];
  const first = Number(result.firstEpisode || 0);
  const xLabel = opts.xLabel || ((i) => `ep ${first + i}`);
  const w = 260, h = 96, left = 38, right = 8, top = 8, bottom = 20;
  const rows = Math.ceil(agents.length / 2);
  const svg = svgEl('svg', { class: 'chart', width: w, height: h + 14 * rows, viewBox: `0 0 ${w} ${h + 14 * rows}`, role: 'img' });
  const all = eps.flatMap((e) => (e.returns || []));
  if (!all.length) return svg;
  const lo = Math.min(0, ...all), hi = Math.max(0, ...all);
  const span = hi === lo ? 1 : hi - lo;
  const x = (i) => left + (eps.length > 1 ? i * (w - left - right) / (eps.length - 1) : (w - left - right) / 2);
  const y = (v) => h - bottom - (v - lo) / span * (h - top - bottom);
  svg.setAttribute('aria-label', `${opts.what || 'Return per episode'}, ${xLabel(0)} to ${xLabel(eps.length - 1)}: ` +
    agents.map((name, a) => `${name} last ${fmt((eps.at(-1).returns || [])[a] || 0)}`).join('; '));
  // Axes, with the least and greatest return and the first and last episode.
  svg.append(svgEl('line', { x1: left, y1: top, x2: left, y2: h - bottom, stroke: '#9ca3af' }));
  svg.append(svgEl('line', { x1: left, y1: y(0), x2: w - right, y2: y(0), stroke: '#9ca3af' }));
  for (const v of hi === lo ? [lo] : [lo, hi]) svg.append(svgEl('text', { x: left - 4, y: y(v) + 3, 'text-anchor': 'end' }, fmt(v)));
  if (lo < 0 && hi > 0) svg.append(svgEl('text', { x: left - 4, y: y(0) + 3, 'text-anchor': 'end' }, '0'));
  svg.append(svgEl('text', { x: x(0), y: h - 6, 'text-anchor': eps.length > 1 ? 'start' : 'middle' }, xLabel(0)));
  if (eps.length > 1) svg.append(svgEl('text', { x: w - right, y: h - 6, 'text-anchor': 'end' }, xLabel(eps.length - 1)));
  agents.forEach((name, a) => {
    const colour = colours[a % colours.length];
    const pts = eps.map((e, i) => [x(i), y((e.returns || [])[a] || 0)]);
    const g = svgEl('g', {});
    g.append(svgEl('title', {}, `${name}: ${eps.map((e) => ((e.returns || [])[a] || 0).toFixed(3)).join(', ')}`));
    if (eps.length > 1) g.append(svgEl('polyline', { points: pts.map((p) => p.join(',')).join(' '), fill: 'none', stroke: colour, 'stroke-width': 1.5 }));
    for (const [cx, cy] of eps.length <= 30 ? pts : [pts.at(-1)]) g.append(svgEl('circle', { cx, cy, r: 2.5, fill: colour }));
    svg.append(g);
    const last = (eps.at(-1).returns || [])[a] || 0;
    const label = svgEl('text', { x: 4 + (a % 2) * 128, y: h + 10 + 14 * Math.floor(a / 2) });
    label.append(svgEl('tspan', { style: `fill:${colour}` }, '● '), `${name}: ${fmt(last)} last`);
    svg.append(label);
  });
  return svg;
}

// The rows of the trial list, redrawn only when what they show changed (so that a
// tooltip or a focused button survives a poll).
const rowsById = new Map();

function renderTrials() {
  const body = $('trials');
  const order = [];
  for (const t of trials.values()) {
    const state = stateName(t.state);
    const data = t.result ? t.result : { agents: t.agents, episodes: t.live || [] };
    const playing = game && game.trial === t.id && !game.over;
    const canPlay = state === 'running' && (t.clients || []).length && !playing;
    const sig = JSON.stringify([state, t.error, t.reason, t.episode, t.tick, (data.episodes || []).length, Boolean(t.result), canPlay, playing, watching && watching.trial === t.id]);
    let row = rowsById.get(t.id);
    if (!row || row.sig !== sig) {
      const fresh = trialRow(t, state, data, canPlay, playing);
      fresh.sig = sig;
      if (row) row.replaceWith(fresh);
      row = fresh;
      rowsById.set(t.id, row);
    }
    order.push(row);
  }
  $('no-trials').hidden = trials.size > 0;
  for (const [id, row] of rowsById) {
    if (!trials.has(id)) {
      row.remove();
      rowsById.delete(id);
    }
  }
  order.forEach((row, i) => {
    if (body.children[i] !== row) body.insertBefore(row, body.children[i] || null);
  });
}

function trialRow(t, state, data, canPlay, playing) {
  const stop = el('button', { type: 'button', textContent: 'Stop', hidden: !['pending', 'running'].includes(state) });
  stop.setAttribute('aria-label', `Stop ${t.id}`);
  stop.onclick = () => call('Stop', { ids: [t.id] }).then(() => {
    const msg = `Stopping ${t.id}.`;
    note('trials-status', msg, 'info');
    setTimeout(() => { if ($('trials-status').textContent === msg) note('trials-status', ''); }, 3000);
  }, (e) => note('trials-status', e.detail || e.message, 'error'));
  // A trial whose agents people play, which this page does not play (it was
  // reloaded, or another started it), is played on from here.
  const resume = el('button', { type: 'button', className: canPlay ? 'primary' : '', textContent: 'Play', hidden: !canPlay });
  resume.setAttribute('aria-label', `Play ${t.id} (${(t.clients || []).join(', ')})`);
  resume.onclick = () => {
    play(t.id, t.clients, { env: t.env });
    $('play-panel').scrollIntoView({ block: 'start' });
  };
  const watchB = el('button', { type: 'button', textContent: 'Watch', hidden: !['pending', 'running'].includes(state) || (watching && watching.trial === t.id) });
  watchB.setAttribute('aria-label', `Watch ${t.id} drawn`);
  watchB.onclick = () => {
    watch(t.id);
    $('watch-panel').scrollIntoView({ block: 'start' });
  };
  // Why a trial waits: below a pending or running trial's state.
  const why = state === 'pending' || state === 'running' ? t.reason || '' : '';
  const stateCell = el('td', { className: t.error ? 'error' : '', title: why }, state + (t.error ? ': ' + t.error : '') + (playing ? ' (you play it)' : ''));
  stateCell.dataset.state = state;
  if (why) stateCell.append(el('div', { className: 'muted reason', textContent: why }));
  const cells = [
    ['Trial', el('td', { textContent: t.id })], ['Environment', el('td', { textContent: t.env || '' })], ['State', stateCell],
    ['Episode', el('td', { textContent: String(t.episode || 0) })], ['Tick', el('td', { textContent: String(t.tick || 0) })],
    ['Return per episode', el('td', {}, (data.episodes || []).length ? chart(data) : '')],
    ['Actions', el('td', {}, ...[stop, resume, watchB].filter((b) => !b.hidden))],
  ];
  for (const [label, td] of cells) td.dataset.label = label;
  const tr = el('tr', {}, ...cells.map((c) => c[1]));
  tr.dataset.trial = t.id;
  return tr;
}

// --- Models --------------------------------------------------------------------------

// With baton serve ui --models DIR, the page lists the registry's models the key
// grants, each with the learning curve of its newest version (/ui/models.json: mean
// return and success rate in bins of episodes), and looks again at every poll, so
// that a learner's new checkpoint shows as it arrives. A row is redrawn only when its
// model has a new version.
const modelRowsByName = new Map();

async function refreshModels() {
  let r;
  try {
    r = await fetch('/ui/models.json', { headers: headers('application/json') });
  } catch {
    return; // the trials' calls say that the server does not answer
  }
  const j = await r.json().catch(() => ({}));
  if (r.ok && !j.served) return; // the server shows no models
  $('models-panel').hidden = false;
  $('nav-models').hidden = false;
  if (!r.ok) {
    note('models-status', j.code === 'unauthenticated' ? 'The server shows its models to a key it knows: enter it at the top.' : (j.message || r.statusText), 'error');
    return;
  }
  if ($('models-status').classList.contains('error')) note('models-status', '');
  renderModels(j.models || []);
}

function renderModels(list) {
  const body = $('models');
  const order = [];
  for (const m of list) {
    let row = modelRowsByName.get(m.name);
    const sig = `${m.ref} ${m.episodes}`;
    if (!row || row.sig !== sig) {
      const fresh = modelRow(m);
      fresh.sig = sig;
      if (row) row.replaceWith(fresh);
      row = fresh;
      modelRowsByName.set(m.name, row);
    }
    order.push(row);
  }
  const names = new Set(list.map((m) => m.name));
  for (const [name, row] of modelRowsByName) {
    if (!names.has(name)) {
      row.remove();
      modelRowsByName.delete(name);
    }
  }
  order.forEach((row, i) => {
    if (body.children[i] !== row) body.insertBefore(row, body.children[i] || null);
  });
  $('no-models').hidden = list.length > 0;
}

function modelRow(m) {
  const bins = m.curve || [];
  const xLabel = (i) => (bins[i].first === bins[i].last ? `ep ${bins[i].first}` : `ep ${bins[i].first}-${bins[i].last}`);
  const curve = (what, name, key) => chart({ agents: [name], episodes: bins.map((b) => ({ returns: [b[key]] })) }, { what, xLabel });
  const figures = Object.entries(m.figures || {}).map(([k, v]) => `${k} ${fmt(v)}`).join(', ');
  const created = m.created ? new Date(m.created).toLocaleString() : '';
  const cells = [
    ['Model', el('td', {}, el('strong', { textContent: m.ref }), el('div', { className: 'muted small', textContent: created }))],
    ['Acts for', el('td', { textContent: [m.env, m.agent].filter(Boolean).join(' / ') })],
    ['Figures', el('td', { className: 'small', textContent: figures })],
    ['Episodes', el('td', { textContent: String(m.episodes || 0) })],
    ['Learning curve', el('td', {}, bins.length ? el('div', { className: 'curves' },
      curve('Mean return per bin of episodes', 'mean return', 'return'),
      curve('Success rate per bin of episodes', 'success rate', 'success'),
    ) : el('span', { className: 'muted', textContent: 'no curve' }))],
  ];
  for (const [label, td] of cells) td.dataset.label = label;
  const tr = el('tr', {}, ...cells.map((c) => c[1]));
  tr.dataset.model = m.name;
  return tr;
}

keyInput.onchange = () => {
  localStorage.setItem('baton.key', keyInput.value);
  note('key-status', 'Key saved in this browser.', 'ok');
  watched.clear();
  refresh();
  refreshModels();
};

loadEnvs();
refresh();
refreshModels();
if (pollMs > 0) {
  setInterval(refresh, pollMs);
  setInterval(refreshModels, pollMs);
}
