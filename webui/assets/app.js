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

class CallError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}${code === 'unauthenticated' ? ' (enter the API key above)' : ''}`);
    this.code = code;
  }
}

function headers(contentType) {
  const h = { 'Content-Type': contentType, 'Connect-Protocol-Version': '1' };
  if (keyInput.value) h.Authorization = 'Bearer ' + keyInput.value;
  return h;
}

// call makes a unary call of TrialService.
async function call(method, body, signal) {
  const r = await fetch('/baton.v1.TrialService/' + method, {
    method: 'POST', headers: headers('application/json'), body: JSON.stringify(body), signal,
  });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new CallError(j.code || String(r.status), j.message || r.statusText);
  return j;
}

// stream makes a server-streaming call of TrialService and yields its messages.
async function* stream(method, body, signal) {
  const payload = new TextEncoder().encode(JSON.stringify(body));
  const env = new Uint8Array(5 + payload.length);
  new DataView(env.buffer).setUint32(1, payload.length);
  env.set(payload, 5);
  const r = await fetch('/baton.v1.TrialService/' + method, {
    method: 'POST', headers: headers('application/connect+json'), body: env, signal,
  });
  if (!r.ok) {
    const j = await r.json().catch(() => ({}));
    throw new CallError(j.code || String(r.status), j.message || r.statusText);
  }
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
    const { value, done } = await reader.read();
    if (done) return;
    const nb = new Uint8Array(buf.length + value.length);
    nb.set(buf);
    nb.set(value, buf.length);
    buf = nb;
  }
}

function say(text, isError) {
  const s = $('status');
  s.textContent = text;
  s.className = isError ? 'error' : '';
}

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  for (const c of children) e.append(c);
  return e;
}

// --- Start form --------------------------------------------------------------------

let envs = [];

async function loadEnvs() {
  envs = await (await fetch('/ui/envs.json')).json();
  const sel = $('env');
  sel.replaceChildren(...envs.map((e) => el('option', { value: e.name, textContent: e.name })));
  sel.onchange = showActors;
  showActors();
}

function showActors() {
  const e = envs.find((x) => x.name === $('env').value);
  $('env-desc').textContent = e ? e.description : '';
  const box = $('actors');
  box.replaceChildren(el('legend', { textContent: 'Agents' }));
  for (const a of (e ? e.agents : [])) {
    const choice = el('select', { name: 'choice' },
      ...a.policies.map((p) => el('option', { value: 'policy:' + p, textContent: p })),
      el('option', { value: 'human', textContent: 'human (play here)' }),
      el('option', { value: 'remote', textContent: 'remote agent…' }));
    const remote = el('input', { name: 'remote', placeholder: 'grpc://HOST:PORT', hidden: true });
    const timeout = el('input', { name: 'timeout', type: 'number', min: 0, value: 0, title: 'ms to wait for each action; 0 waits' });
    const fallback = el('input', { name: 'default', type: 'number', value: 0, title: 'raw action taken when the time is up' });
    const fallbackPolicy = el('select', { name: 'default-policy', title: 'policy that acts when the time is up' },
      el('option', { value: '', textContent: 'the default action' }),
      ...a.policies.map((p) => el('option', { value: p, textContent: p })));
    const human = el('span', { hidden: true }, 'timeout ms ', timeout, ' then ', fallbackPolicy, ' default action ', fallback);
    choice.onchange = () => {
      remote.hidden = choice.value !== 'remote';
      human.hidden = choice.value !== 'human';
    };
    const row = el('div', { className: 'actor' }, el('span', { className: 'name', textContent: a.name }), choice, remote, human);
    row.dataset.agent = a.name;
    box.append(row);
  }
}

$('start').onsubmit = async (ev) => {
  ev.preventDefault();
  const actors = {};
  const humans = [];
  for (const row of $('actors').querySelectorAll('.actor')) {
    const name = row.dataset.agent;
    const choice = row.querySelector('[name=choice]').value;
    if (choice === 'human') {
      actors[name] = {
        client: {
          timeoutMs: row.querySelector('[name=timeout]').value || '0',
          defaultAction: row.querySelector('[name=default]').value || '0',
          defaultPolicy: row.querySelector('[name=default-policy]').value,
        },
      };
      humans.push(name);
    } else if (choice === 'remote') {
      actors[name] = { remote: row.querySelector('[name=remote]').value };
    } else {
      actors[name] = { policy: choice.slice('policy:'.length) };
    }
  }
  const spec = {
    env: $('env').value, config: $('config').value.trim(), seed: $('seed').value || '0',
    episodes: $('episodes').value || '1', maxTicks: $('max-ticks').value || '0', actors,
  };
  try {
    const { ids } = await call('Start', { spec });
    say(`started ${ids.join(', ')}`);
    for (const id of ids) trials.set(id, { id, env: spec.env, state: 'TRIAL_STATE_PENDING', live: [] });
    follow(ids);
    renderTrials();
    if (humans.length) play(ids[0], humans);
  } catch (e) {
    say(e.message, true);
  }
};

// --- Playing -----------------------------------------------------------------------

let game = null; // { trial, agents, turn, queued: [], steps: [], selected, abort }

async function play(trial, agents) {
  if (game) game.abort.abort();
  game = { trial, agents, turn: null, queued: [], steps: [], selected: null, abort: new AbortController() };
  const g = game;
  clearQueued();
  renderTrials();
  $('play-panel').hidden = false;
  $('play-title').textContent = `${agents.join(', ')} in ${trial}`;
  renderTimeline();
  const wait = agents.length > 1 ? 500 : 15000;
  try {
    for (;;) {
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
        showTurn(acting);
        await new Promise((resolve) => { g.next = resolve; });
        continue;
      }
      const state = last.state || 'TRIAL_STATE_UNSPECIFIED';
      $('play-state').textContent = `${state.replace('TRIAL_STATE_', '').toLowerCase()}${last.error ? ': ' + last.error : ''}`;
      if (state !== 'TRIAL_STATE_RUNNING' && state !== 'TRIAL_STATE_PENDING') {
        $('actions').replaceChildren();
        g.turn = null;
        return;
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') say(e.message, true);
  }
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

function showTurn(t) {
  const g = game;
  g.turn = t;
  $('play-state').textContent = `${t.agentId} to act at tick ${t.tick || 0}, episode ${t.episode || 0}`;
  const f = t.frame || {};
  const fig = $('frame');
  if (f.svg) {
    fig.replaceChildren(el('img', { alt: 'the environment', src: 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(f.svg) }));
  } else if (f.sceneJson) {
    fig.replaceChildren(el('pre', { textContent: JSON.stringify(JSON.parse(f.sceneJson), null, 1) }));
  } else {
    fig.replaceChildren(el('pre', { textContent: f.text || '(nothing drawn)' }));
  }
  const buttons = (t.actions || []).map((a, i) => {
    const b = el('button', { type: 'button', disabled: !a.allowed, title: a.allowed ? '' : 'masked' },
      el('kbd', { textContent: i < 9 ? String(i + 1) : '' }), a.name);
    b.dataset.name = a.name;
    b.onclick = () => act(a);
    return b;
  });
  $('actions').replaceChildren(...buttons);
  // The messages go to the receivers the server names for this turn, and no others.
  const to = $('msg-to');
  const chosen = to.value;
  to.replaceChildren(...(t.receivers || []).map((r) => el('option', { value: r, textContent: r })));
  if ((t.receivers || []).includes(chosen)) to.value = chosen;
  $('inbox').replaceChildren(...(t.inbox || []).map((m) => el('p', { className: 'muted', textContent: `message from ${m.from}: ${m.payload}` })));
  countdown(t);
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
    out.textContent = `${(left / 1000).toFixed(1)} s before the default action`;
    if (left) return;
    clearInterval(timer);
    // The trial took the default action: ask for the next turn.
    if (game && game.turn === t && game.next) {
      game.turn = null;
      $('actions').replaceChildren();
      game.next();
    }
  };
  tick();
  timer = setInterval(tick, 100);
}

async function act(a) {
  const g = game;
  const t = g && g.turn;
  if (!t || !a.allowed) return; // a masked action is not sent, however it was clicked
  try {
    await call('ClientAct', { trial: g.trial, agent: t.agent, tick: t.tick || '0', name: a.name, messages: g.queued });
  } catch (e) {
    if (e.code === 'invalid_argument' && / messages\[\d+\]\.to: /.test(' ' + e.message)) {
      // The server refused a message, and with it the action: the messages are
      // dropped, so that the next action goes through.
      clearQueued();
      say(`${e.message} (the queued messages were dropped: play the action again)`, true);
      return;
    }
    say(e.message, true);
    if (e.code !== 'failed_precondition') return; // the turn is still ours
  }
  clearQueued();
  g.steps.push({ agentId: t.agentId, episode: t.episode || '0', tick: t.tick || '0', action: a.name });
  renderTimeline();
  g.turn = null;
  $('actions').replaceChildren();
  clearInterval(timer);
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
  $('reward-target').textContent = s ? `for ${s.agentId} at tick ${s.tick} (episode ${s.episode})` : 'for the next step';
}

async function reward(toNext) {
  const g = game;
  if (!g) return;
  const value = Number($('reward-value').value);
  const s = toNext || g.selected === null ? null : g.steps[g.selected];
  const agentId = s ? s.agentId : (g.turn ? g.turn.agentId : (g.steps.at(-1) || {}).agentId);
  if (!agentId) {
    say('no agent to reward yet', true);
    return;
  }
  const req = { trial: g.trial, agentId, value, source: 'human' };
  if (s) Object.assign(req, { episode: s.episode, tick: s.tick });
  else req.nextStep = true;
  try {
    await call('Reward', req);
    say(`rewarded ${agentId} ${value}${s ? ' at tick ' + s.tick : ''}`);
  } catch (e) {
    say(e.message, true);
  }
}

$('reward').onsubmit = (ev) => { ev.preventDefault(); reward(false); };
$('reward-now').onclick = () => reward(true);

$('message').onsubmit = (ev) => {
  ev.preventDefault();
  if (!game) return;
  const to = $('msg-to').value;
  const receivers = (game.turn && game.turn.receivers) || [];
  if (!receivers.includes(to)) {
    say(`no message to "${to}": wait for the turn, then choose one of its receivers (${receivers.join(', ') || 'none yet'})`, true);
    return;
  }
  game.queued.push({ to, payload: $('msg-payload').value });
  $('msg-payload').value = '';
  $('msg-queued').textContent = `${game.queued.length} queued for the next action`;
  $('msg-clear').hidden = false;
};

function clearQueued() {
  if (game) game.queued = [];
  $('msg-queued').textContent = '';
  $('msg-clear').hidden = true;
}
$('msg-clear').onclick = clearQueued;

const arrows = { ArrowUp: 'UP', ArrowRight: 'RIGHT', ArrowDown: 'DOWN', ArrowLeft: 'LEFT' };
document.addEventListener('keydown', (ev) => {
  if (!game || !game.turn || ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) return;
  const buttons = [...$('actions').querySelectorAll('button')];
  let b = null;
  if (/^[1-9]$/.test(ev.key)) b = buttons[Number(ev.key) - 1];
  else if (arrows[ev.key]) b = buttons.find((x) => x.dataset.name === arrows[ev.key]);
  if (b && !b.disabled) {
    ev.preventDefault();
    b.click();
  }
});

// --- Trials ------------------------------------------------------------------------

const trials = new Map(); // id -> { id, env, state, episode, tick, error, result, live, agents, changes, lastRead, reading }

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
      say(`watching trials: ${e.message}`, true);
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
      say(e.message, true);
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
async function refresh() {
  try {
    const list = [];
    let token = '';
    do {
      const r = await call('List', { pageToken: token });
      list.push(...(r.trials || []));
      token = r.nextPageToken || '';
    } while (token);
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
    renderTrials();
  } catch (e) {
    say(e.message, true);
  }
}

const colours = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const svgNS = 'http://www.w3.org/2000/svg';

// chart draws each agent's return per episode.
function chart(result) {
  const eps = result.episodes || [];
  const agents = result.agents || [];
  const w = 240, h = 70, pad = 4;
  const svg = document.createElementNS(svgNS, 'svg');
  svg.setAttribute('class', 'chart');
  svg.setAttribute('width', w);
  svg.setAttribute('height', h + 14 * Math.ceil(agents.length / 3));
  const all = eps.flatMap((e) => (e.returns || []));
  if (!all.length) return svg;
  const lo = Math.min(0, ...all), hi = Math.max(0, ...all);
  const x = (i) => pad + (eps.length > 1 ? i * (w - 2 * pad) / (eps.length - 1) : (w - 2 * pad) / 2);
  const y = (v) => h - pad - (hi === lo ? 0.5 : (v - lo) / (hi - lo)) * (h - 2 * pad);
  agents.forEach((name, a) => {
    const pts = eps.map((e, i) => `${x(i)},${y((e.returns || [])[a] || 0)}`);
    const line = document.createElementNS(svgNS, eps.length > 1 ? 'polyline' : 'circle');
    if (eps.length > 1) {
      line.setAttribute('points', pts.join(' '));
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', colours[a % colours.length]);
    } else {
      const [cx, cy] = pts[0].split(',');
      Object.entries({ cx, cy, r: 3, fill: colours[a % colours.length] }).forEach(([k, v]) => line.setAttribute(k, v));
    }
    const title = document.createElementNS(svgNS, 'title');
    title.textContent = `${name}: ${eps.map((e) => ((e.returns || [])[a] || 0).toFixed(3)).join(', ')}`;
    line.append(title);
    svg.append(line);
    const label = document.createElementNS(svgNS, 'text');
    Object.entries({ x: 4 + (a % 3) * 80, y: h + 11 + 14 * Math.floor(a / 3), fill: colours[a % colours.length], 'font-size': 11 }).forEach(([k, v]) => label.setAttribute(k, v));
    label.textContent = name;
    svg.append(label);
  });
  return svg;
}

function renderTrials() {
  const rows = [...trials.values()].map((t) => {
    const state = (t.state || '').replace('TRIAL_STATE_', '').toLowerCase();
    const stop = el('button', { type: 'button', textContent: 'Stop', hidden: !['pending', 'running'].includes(state) });
    stop.onclick = () => call('Stop', { ids: [t.id] }).catch((e) => say(e.message, true));
    // A trial whose agents people play, which this page does not play (it was
    // reloaded, or another started it), is played on from here.
    const resume = el('button', { type: 'button', textContent: 'Play', hidden: state !== 'running' || !(t.clients || []).length || (game && game.trial === t.id) });
    resume.onclick = () => play(t.id, t.clients);
    // Why a trial waits: in the state's tooltip, and below a pending trial's state.
    const why = state === 'pending' || state === 'running' ? t.reason || '' : '';
    const stateCell = el('td', { textContent: state + (t.error ? ': ' + t.error : ''), className: t.error ? 'error' : '', title: why });
    if (why && state === 'pending') stateCell.append(el('div', { className: 'muted reason', textContent: why }));
    return el('tr', {},
      el('td', { textContent: t.id }), el('td', { textContent: t.env || '' }),
      stateCell,
      el('td', { textContent: String(t.episode || 0) }), el('td', { textContent: String(t.tick || 0) }),
      el('td', {}, t.result ? chart(t.result) : (t.live && t.live.length ? chart({ agents: t.agents, episodes: t.live }) : '')),
      el('td', {}, stop, resume));
  });
  $('trials').replaceChildren(...rows);
}

keyInput.onchange = () => {
  localStorage.setItem('baton.key', keyInput.value);
  watched.clear();
  refresh();
};

loadEnvs().catch((e) => say(e.message, true));
refresh();
if (pollMs > 0) setInterval(refresh, pollMs);
