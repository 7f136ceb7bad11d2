// Browser test of baton serve ui, run by scripts/webui-e2e against a server that has an
// API key for the maze and writes an activity log. A person, at 1280x800 and at 390x844:
//
//   - is refused without the key, told so next to the key field, and the page takes
//     the key from its link's fragment;
//   - starts a maze trial, cannot play a masked action (disabled; clicking it or its
//     arrow key sends nothing and says why), sees the server refuse forged actions
//     and a message to an unknown recipient (naming the valid ones) while the trial
//     waits on, plays the strategy to the goal with the mouse and the keyboard
//     (arrow keys move after Enter in the reward field), rewards a past turn chosen
//     in the timeline, and reads the outcome banner, whose numbers equal the trial's
//     Episodes;
//   - sees a trial of six episodes charted with axes; one whose person does not act
//     played by the default policy; one stopped from the list; one left by a reload
//     (wait for ever) found in the list and played on;
//   - plays webtest on its drawn page (no empty slots shown), rock-paper-scissors as
//     two people at one screen to the end (score and outcome), the cart-pole until
//     the pole falls, and the flat maze;
//   - watches a trial two random policies play, drawn, at 1 step a second and then
//     20, and stops it;
//   - keeps the page when its server stops and comes back (a second server on its own
//     port, stopped and started again): a banner says so, then the page reads the
//     trials again and drops those the new server does not have;
//   - with Watch refused, sees a trial end by polling.
//
// On every screen, at both sizes, the page is no wider than the window and axe-core
// (pinned in package-lock.json, run inside the page) finds no serious or critical
// violation. checklog.mjs then finds the reward in the activity log.
//
// Usage: node e2e.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium
//        --modules DIR (the node_modules folder that holds playwright-core and axe-core)
//        --key KEY (the server's key for the maze)
//        --baton BIN (the baton binary, for the server that is stopped and started)
//        [--screenshot-dir DIR] (writes webui-*.png there, at both sizes)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' }, chromium: { type: 'string' }, modules: { type: 'string' }, key: { type: 'string' },
    baton: { type: 'string' }, 'screenshot-dir': { type: 'string' },
  },
});
for (const k of ['base', 'chromium', 'modules', 'key', 'baton']) assert.ok(opts[k], `--${k} is missing`);
const { chromium } = createRequire(join(opts.modules, 'x.js'))('playwright-core');
const axeSource = readFileSync(join(opts.modules, 'axe-core', 'axe.min.js'), 'utf8');
const shots = opts['screenshot-dir'];
if (shots) mkdirSync(shots, { recursive: true });

const laptop = { width: 1280, height: 800 };
const phone = { width: 390, height: 844 };

const profile = mkdtempSync(join(tmpdir(), 'baton-e2e-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: opts.chromium,
  headless: true,
  viewport: laptop,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const step = (what) => console.log(`e2e: ${what}`);
let spare = null; // the second server
try {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  let refusals = false; // the browser logs the 4xx answers the test asks for as errors
  let watchRefused = 0; // and the Watch calls the test makes fail, counted once it does
  let offline = false; // and the calls to a server that is stopped
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (refusals && /status of 40[01]/.test(m.text())) return;
    if (offline && /net::ERR_CONNECTION_REFUSED|net::ERR_EMPTY_RESPONSE|Failed to fetch/.test(m.text())) return;
    if (watchRefused && /net::ERR_FAILED/.test(m.text())) {
      watchRefused++;
      return;
    }
    errors.push(m.text());
  });
  const calls = { List: 0, ClientAct: 0 };
  page.on('request', (r) => {
    const m = new URL(r.url()).pathname.split('/').at(-1);
    if (m in calls) calls[m]++;
  });
  // The browser logs every 4xx answer as an error without its address; the answers
  // are kept here, so that a failure names them.
  const answers4xx = [];
  page.on('response', (r) => {
    if (r.status() === 401 && !refusals) errors.push(`401 from ${new URL(r.url()).pathname}`);
    if (r.status() >= 400 && r.status() < 500) answers4xx.push(`${r.status()} ${new URL(r.url()).pathname}${new URL(r.url()).search}`);
  });
  page.setDefaultTimeout(15000);

  // gateway sends a request from the page, as a forger with the page's key would:
  // key undefined takes the key the page holds, null sends none.
  const gateway = (method, body, key) => page.evaluate(async ([method, body, key]) => {
    const h = { 'Content-Type': 'application/json' };
    const k = key === undefined ? document.getElementById('key').value : key;
    if (k) h.Authorization = 'Bearer ' + k;
    const r = await fetch('/baton.v1.TrialService/' + method, { method: 'POST', headers: h, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  }, [method, body, key]);

  // screen checks what the page shows now, at the window's size: it is no wider
  // than the window, and axe-core finds no serious or critical violation. With a
  // name, it saves a screenshot of the window, scrolled to the element of scrollTo.
  const screen = async (name, scrollTo) => {
    const size = page.viewportSize();
    const what = `${name || 'screen'} at ${size.width}x${size.height}`;
    if (scrollTo) await page.locator(scrollTo).evaluate((e) => e.scrollIntoView({ block: 'start' }));
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= size.width, `${what}: the page is ${width} px wide`);
    if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axeSource);
    const found = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
        .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')})`);
    });
    assert.deepEqual(found, [], `${what}: axe-core`);
    if (shots && name) await page.screenshot({ path: join(shots, `webui-${name}-${size.width === phone.width ? 'phone' : 'laptop'}.png`) });
  };
  // both runs screen at both sizes, and returns to the laptop's.
  const both = async (name, scrollTo) => {
    for (const size of [phone, laptop]) {
      await page.setViewportSize(size);
      await screen(name, scrollTo);
    }
  };

  // Without the key the server refuses the page, and the page says so by the key.
  refusals = true;
  await page.goto(opts.base);
  await page.locator('#key-status.error', { hasText: 'needs an API key' }).waitFor();
  for (const key of [null, 'not-the-key-0123456789']) {
    const r = await gateway('List', {}, key);
    assert.equal(r.status, 401, `List with key ${key}`);
    assert.equal(r.body.code, 'unauthenticated');
  }
  await page.fill('#key', 'not-the-key-0123456789');
  await page.locator('#key').evaluate((e) => e.dispatchEvent(new Event('change')));
  await page.locator('#key-status.error', { hasText: 'refuses this API key' }).waitFor();
  await both('key');
  refusals = false;
  step('without the key the page and a request are refused (401), and the page says so by the key field');

  // The key in the link's fragment; ?poll=3600000 leaves the page to Watch. The
  // refusal shown before is gone.
  await page.goto(`${opts.base}?poll=3600000#key=${encodeURIComponent(opts.key)}`);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  assert.equal(await page.inputValue('#key'), opts.key);
  assert.equal(new URL(page.url()).hash, '', 'the key stays in the address bar');
  await page.waitForFunction(() => document.getElementById('key-status').textContent === '');
  const lists = calls.List;
  await both('start');
  step('the page took the key from its link and lists the environments; no horizontal overflow, axe clean');

  const choose = async (agent, value) => page.selectOption(`.actor[data-agent=${agent}] select[name=choice]`, value);
  const stateOf = (id, state) => page.locator(`#trials tr[data-trial="${id}"] td[data-state="${state}"]`);
  const openOptions = async () => {
    if (!(await page.locator('#options').evaluate((e) => e.open))) await page.click('#options summary');
  };

  await page.selectOption('#env', 'maze');
  await openOptions();
  await page.fill('#seed', '3');
  await choose('strategy', 'human');
  await choose('motion', 'policy:forward');
  assert.equal(await page.inputValue('.actor[data-agent=strategy] input[name=timeout]'), '60', 'a person gets 60 s by default');
  assert.equal(await page.inputValue('.actor[data-agent=strategy] select[name=default-policy]'), 'oracle', 'and the default policy');
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '0');
  await page.click('#start button[type=submit]');
  await page.locator('#play-panel').waitFor();
  await stateOf('trial-1', 'running').waitFor();
  step('started a trial with the strategy played here; Watch shows it running');

  // turn waits for the turn at tick, and checks what the page shows.
  const turn = async (tick) => {
    await page.locator('#play-state', { hasText: `tick ${tick}.` }).waitFor();
    await page.locator('#actions button').first().waitFor();
  };
  // waiting checks, with the server, that trial-1's strategy still waits at tick.
  const waiting = async (tick) => {
    const p = await gateway('Pending', { trial: 'trial-1', agent: 'strategy' });
    assert.equal(p.status, 200);
    assert.deepEqual({ acting: p.body.acting, tick: p.body.tick }, { acting: true, tick: String(tick) });
    await turn(tick);
  };

  // shown reads the reward the page shows for the last turn, and checks it is what
  // the server's Pending reports (last_reward; unset at the first turn of an episode).
  const shown = async (tick) => {
    const p = await gateway('Pending', { trial: 'trial-1', agent: 'strategy' });
    assert.equal(p.body.tick, String(tick));
    const attr = await page.locator('#last-reward').getAttribute('data-reward');
    if (p.body.lastReward === undefined || p.body.lastReward === null) {
      assert.equal(attr, null, `tick ${tick}: the page shows a reward the server did not report`);
      assert.equal(await page.locator('#last-reward').textContent(), '');
      return null;
    }
    assert.equal(Number(attr), Number(p.body.lastReward), `tick ${tick}: the reward shown`);
    assert.match(await page.locator('#last-reward').textContent(), /^Last turn: [+-]?\d+(\.\d+)?$/);
    return Number(attr);
  };
  await turn(0);
  assert.equal(await shown(0), null, 'the first turn follows no turn');
  assert.match(await page.locator('#frame img').getAttribute('src'), /^data:image\/svg\+xml/);
  assert.match(await page.locator('#frame img').getAttribute('alt'), /red arrow/);
  assert.deepEqual(await page.locator('#legend span').allTextContents(), ['goal', 'start', 'you (the arrow points where you head)', 'wall', 'floor']);
  await page.locator('#budget', { hasText: 'Decision 1 of 20' }).waitFor();
  assert.deepEqual(await page.locator('#msg-to option').allTextContents(), ['strategy', 'motion'],
    'messages go to the receivers the server names (the maze takes none itself)');
  const enabled = async (name) => !(await page.locator(`#actions button[data-name=${name}]`).isDisabled());
  assert.deepEqual(
    { UP: await enabled('UP'), RIGHT: await enabled('RIGHT'), DOWN: await enabled('DOWN'), LEFT: await enabled('LEFT') },
    { UP: true, RIGHT: false, DOWN: false, LEFT: true }, 'the mask disables RIGHT and DOWN at tick 0');
  await page.locator('#actions button[data-name=RIGHT]').click({ force: true });
  await page.locator('#actions button[data-name=RIGHT]').dispatchEvent('click');
  await page.keyboard.press('2'); // RIGHT, the second action
  await page.keyboard.press('ArrowDown');
  await page.locator('#play-status.error', { hasText: 'DOWN is not allowed at this turn (allowed: UP, LEFT)' }).waitFor();
  await waiting(0);
  assert.equal(calls.ClientAct, 0, 'a masked action was sent');
  step('the maze is drawn with its legend and budget; masked actions are disabled, and their keys say why');

  // Forged actions, sent from the page with its key: refused with the reason, and
  // the trial waits on.
  refusals = true;
  const forged = [
    [{ name: 'RIGHT' }, 400, 'invalid_argument', /^name: RIGHT is masked at tick 0 \(allowed: UP, LEFT\)$/],
    [{ raw: '1' }, 400, 'invalid_argument', /^raw: 1 \(RIGHT\) is masked at tick 0/],
    [{ raw: '7' }, 400, 'invalid_argument', /^raw: 7 is outside the action space of strategy_0 \(0 to 3\)$/],
    [{ name: 'JUMP' }, 400, 'invalid_argument', /^name: "JUMP" is not an action of strategy_0/],
    [{ name: 'LEFT', messages: [{ to: 'nobody', payload: 'hi' }] }, 400, 'invalid_argument',
      /^messages\[0\]\.to: "nobody" is not a receiver of the trial's messages \(receivers: strategy, motion\); no message was sent and the action was not taken$/],
  ];
  for (const [action, code, name, message] of forged) {
    const r = await gateway('ClientAct', { trial: 'trial-1', agent: 'strategy', tick: '0', ...action });
    assert.equal(r.status, code, JSON.stringify(action));
    assert.equal(r.body.code, name, JSON.stringify(action));
    assert.match(r.body.message, message);
  }
  const keyless = await gateway('ClientAct', { trial: 'trial-1', agent: 'strategy', tick: '0', name: 'LEFT' }, null);
  assert.deepEqual([keyless.status, keyless.body.code], [401, 'unauthenticated'], 'an action without the key');
  await waiting(0);
  // A message the page queued for a recipient the server does not know (an old
  // option): refused with the move, the queue emptied, and the move then goes through.
  await page.locator('#msg-to').evaluate((s) => s.append(new Option('nobody', 'nobody')));
  await page.selectOption('#msg-to', 'nobody');
  await page.fill('#msg-payload', 'hello');
  await page.click('#message button[type=submit]');
  await page.locator('#msg-queued.error', { hasText: 'No message to "nobody"' }).waitFor();
  refusals = false;
  await page.selectOption('#msg-to', 'motion');
  await page.fill('#msg-payload', 'head west');
  await page.click('#message button[type=submit]');
  await page.locator('#msg-queued', { hasText: '1 queued' }).waitFor();
  await page.click('#msg-clear');
  await page.locator('#msg-queued', { hasText: 'removed' }).waitFor();
  step('forged actions and a message to an unknown recipient get 400 naming why and the valid recipients; the page refuses it at once');
  await page.keyboard.press('ArrowLeft');

  await turn(2);
  await page.click('#actions button[data-name=DOWN]');

  await turn(5);
  // Reward the turn at tick 2, chosen in the timeline; Enter in the field gives it,
  // and the arrow keys then move again.
  await page.click('#timeline button:text-is("2: DOWN")');
  await page.locator('#reward-target', { hasText: 'at tick 2' }).waitFor();
  await page.fill('#reward-value', '');
  await page.click('#reward-give');
  await page.locator('#reward-status.error', { hasText: 'Enter a number' }).waitFor();
  await page.fill('#reward-value', '1.5');
  await page.press('#reward-value', 'Enter');
  await page.locator('#reward-status', { hasText: 'Rewarded strategy_0 1.5 at tick 2' }).waitFor();
  await page.locator('#play-status', { hasText: 'Rewarded strategy_0 1.5 at tick 2' }).waitFor();
  step('rewarded the turn at tick 2 from the timeline, with Enter; an empty reward is refused in words');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.inputValue('#reward-value'), '1.5', 'the arrow key changed the reward');

  // The rewards shown for the last turn: the server's, summed over the turns; a
  // reward of 0.5 for the next step, given at tick 9, shows at a later turn.
  let lastRewards = 0;
  const rest = [[9, 'ArrowUp'], [12, 'ArrowUp'], [16, 'ArrowLeft'], [18, 'ArrowUp']];
  for (const [tick, key] of rest) {
    await turn(tick);
    lastRewards += await shown(tick);
    if (tick === 9) {
      await page.fill('#reward-value', '0.5');
      await page.click('#reward-now');
      await page.locator('#reward-status', { hasText: 'Rewarded strategy_0 0.5 for its next step' }).waitFor();
    }
    if (tick === 16) await both('maze', '#play-panel');
    await page.keyboard.press(key);
  }
  assert.equal(lastRewards, 0.5, 'the next-step reward shows as the reward of a later turn');
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  const banner = page.locator('#outcome');
  await banner.locator('h3', { hasText: 'Episode 0 of 1: goal reached' }).waitFor();
  await page.locator('#frame figcaption', { hasText: 'The final position' }).waitFor();
  const eps = await gateway('Episodes', { trial: 'trial-1' });
  const ep = eps.body.episodes[0];
  assert.equal(await banner.getAttribute('data-ticks'), String(ep.ticks));
  assert.equal(await banner.getAttribute('data-success'), String(Boolean(ep.success)));
  assert.deepEqual(JSON.parse(await banner.getAttribute('data-returns')),
    Object.fromEntries(eps.body.agents.map((a, i) => [a, ep.returns[i]])));
  assert.match(await banner.textContent(), new RegExp(`${ep.ticks} ticks\\. Return: strategy ${ep.returns[0].toFixed(2)}, motion ${ep.returns[1].toFixed(2)}`));
  await both('maze-outcome', '#play-panel');
  step(`played to the goal: the banner says goal reached in ${ep.ticks} ticks, strategy ${ep.returns[0]}, as Episodes does`);
  assert.equal(ep.returns[0], 1 + 1.5 + lastRewards, 'the return: the goal, the reward at tick 2, and the last-turn rewards shown');
  step('each turn shows the reward of the last one as Pending reports it; with the goal and the reward at tick 2 they make the return');

  const row = page.locator('#trials tr[data-trial="trial-1"]');
  await stateOf('trial-1', 'ended').waitFor();
  await row.locator('svg.chart').waitFor();
  const titles = await row.locator('svg.chart title').allTextContents();
  assert.ok(titles.includes('strategy: 3.000'), `chart titles: ${titles}`);
  assert.equal(await page.locator('#timeline li').count(), 7);
  step('the trial list charts the returns (strategy 3.000: the goal and the rewards)');

  // A trial of six episodes played by policies: its row charts six returns per agent,
  // with axes and values; the play panel leaves the finished game.
  await choose('strategy', 'policy:oracle');
  await choose('motion', 'policy:random');
  await openOptions();
  await page.fill('#episodes', '6');
  await page.click('#start button[type=submit]');
  await page.locator('#play-panel').waitFor({ state: 'hidden' }); // the finished game leaves the play panel
  const second = page.locator('#trials tr[data-trial="trial-2"]');
  await stateOf('trial-2', 'ended').waitFor();
  await second.locator('svg.chart polyline').first().waitFor({ state: 'attached' }); // a flat line has no height
  const lines = await second.locator('svg.chart title').allTextContents();
  assert.equal(lines.length, 2, `chart titles: ${lines}`);
  for (const l of lines) assert.match(l, /^(strategy|motion): -?[\d.]+(, -?[\d.]+){5}$/);
  const labels = await second.locator('svg.chart text').allTextContents();
  assert.ok(labels.includes('ep 0') && labels.includes('ep 5'), `x axis: ${labels}`);
  assert.ok(labels.some((l) => /^● strategy: -?[\d.]+ last$/.test(l)), `values: ${labels}`);
  assert.equal(await second.locator('td').nth(3).textContent(), '5', 'the last episode');
  await both('trials', '#trials-panel');
  step('a trial of six episodes charts six returns per agent, with axes and the last values');

  // A person who does not act: after 50 ms a turn is the oracle's.
  await page.fill('#episodes', '1');
  await choose('motion', 'policy:forward');
  await choose('strategy', 'human');
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '0.05');
  await page.selectOption('.actor[data-agent=strategy] select[name=default-policy]', 'oracle');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-3' }).waitFor();
  await stateOf('trial-3', 'ended').waitFor();
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  await page.locator('#outcome h3', { hasText: 'goal reached' }).waitFor();
  assert.equal(await page.inputValue('#reward-value'), '1', 'the reward value of the last game');
  step('the oracle played the turns nobody played in time');

  // A running trial stopped from the list: Watch brings the change at once.
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '0');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-4' }).waitFor();
  await turn(0);
  await stateOf('trial-4', 'running').waitFor();
  await page.locator('#trials tr[data-trial="trial-4"] button', { hasText: 'Stop' }).click();
  await stateOf('trial-4', 'stopped').waitFor();
  await page.locator('#play-state', { hasText: 'stopped' }).waitFor();
  assert.equal(calls.List, lists, 'the page polled List: the states above may not have come through Watch');
  step('a trial stopped from the list shows stopped; no poll since the page loaded, all of it through Watch');

  // A person who lost the page (loaded again) with a trial that waits for ever
  // finds the trial in the list, where it waits for them, and plays on.
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-5' }).waitFor();
  await turn(0);
  await page.reload();
  await stateOf('trial-5', 'running').waitFor();
  assert.match(await page.locator('#trials tr[data-trial="trial-5"] td[data-state]').getAttribute('title'), /^waiting for the client of agent strategy /);
  assert.ok(await page.locator('#play-panel').isHidden());
  await both('resume', '#trials tr[data-trial="trial-5"]');
  await page.locator('#trials tr[data-trial="trial-5"] button', { hasText: 'Play' }).click();
  await page.locator('#play-title', { hasText: 'trial-5' }).waitFor();
  await turn(0);
  await page.keyboard.press('ArrowLeft');
  await turn(2);
  await page.locator('#trials tr[data-trial="trial-5"] button', { hasText: 'Stop' }).click();
  await stateOf('trial-5', 'stopped').waitFor();
  step('loaded again, the page finds the trial waiting for its person in the list, who plays on');

  // The page loaded again (the key from the browser's storage) shows the finished
  // trials with their results, which Watch replays.
  await page.reload();
  assert.equal(await page.inputValue('#key'), opts.key);
  await stateOf('trial-2', 'ended').waitFor();
  const again = page.locator('#trials tr[data-trial="trial-2"]');
  await again.locator('svg.chart polyline').first().waitFor({ state: 'attached' });
  assert.deepEqual(await again.locator('svg.chart title').allTextContents(), lines);
  await stateOf('trial-4', 'stopped').waitFor();
  step('loaded again, the page shows the finished trials with their returns');

  // webtest: the page under test drawn as a page, its elements as buttons.
  await page.selectOption('#env', 'webtest');
  await choose('strategy', 'human');
  await choose('motion', 'policy:scripted');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-6' }).waitFor();
  await page.locator('#frame .webpage h4', { hasText: 'Home' }).waitFor();
  assert.equal(await page.locator('#actions button', { hasText: 'empty' }).count(), 0, 'empty slots shown');
  await page.locator('#budget', { hasText: 'Budget: 1000 steps left' }).waitFor();
  await page.locator('#frame .webpage button', { hasText: 'Catalogue' }).click();
  await page.locator('#frame .webpage .addr', { hasText: /catalog/i }).waitFor();
  await both('webtest', '#play-panel');
  await page.locator('#actions button[data-name=finish]').click();
  await page.locator('#outcome h3', { hasText: 'Episode 0 of 1:' }).waitFor();
  step('webtest is drawn as a page whose links are buttons, with its budget and coverage; finish ends it with its outcome');

  // Rock-paper-scissors, two people at one screen: hands, a score, and the outcome.
  await page.selectOption('#env', 'rps');
  await choose('player_0', 'human');
  await choose('player_1', 'human');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-7' }).waitFor();
  for (let round = 0; round < 15; round++) {
    for (const [player, move] of [['player_0', 'PAPER'], ['player_1', round % 3 === 0 ? 'ROCK' : 'PAPER']]) {
      await page.locator('#play-state', { hasText: `as ${player}_0: episode 0, tick ${round}.` }).waitFor();
      if (round === 3 && player === 'player_0') await both('rps', '#play-panel');
      await page.click(`#actions button[data-name=${move}]`);
    }
  }
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  // The banner follows the trial's Episodes, read once the trial has ended.
  await page.locator('#outcome h3', { hasText: 'player_0' }).waitFor();
  assert.equal(await page.locator('#outcome h3').textContent(), 'Episode 0 of 1: player_0 wins, 5 to -5');
  const rps = await gateway('Episodes', { trial: 'trial-7' });
  assert.deepEqual(JSON.parse(await page.locator('#outcome').getAttribute('data-returns')),
    Object.fromEntries(rps.body.agents.map((a, i) => [a, rps.body.episodes[0].returns[i] || 0])));
  step('two people played rock-paper-scissors to the end: player_0 wins, 5 to -5, as Episodes says');

  // The cart-pole, pushed right until the pole falls.
  await page.selectOption('#env', 'cartpole');
  await choose('cartpole', 'human');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-8' }).waitFor();
  for (let i = 0; i < 200; i++) {
    const over = await page.locator('#outcome h3').isVisible();
    if (over) break;
    const b = page.locator('#actions button[data-name=RIGHT]');
    try {
      await b.waitFor({ timeout: 2000 });
      if (i === 3) await both('cartpole', '#play-panel');
      await b.click({ timeout: 2000 });
    } catch { /* the episode ended meanwhile */ }
  }
  await page.locator('#outcome h3', { hasText: 'the pole fell' }).waitFor();
  step('the cart-pole, pushed right, falls: the banner says so');

  // The flat maze: a move, then stopped.
  await page.selectOption('#env', 'maze-flat');
  await choose('walker', 'human');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-9' }).waitFor();
  await page.locator('#actions button[data-name=UP]').click();
  await page.locator('#timeline li').first().waitFor();
  await page.locator('#frame img[src^="data:image/svg+xml"]').waitFor();
  assert.equal(await page.locator('#legend span').count(), 5, 'the maze legend');
  await both('maze-flat', '#play-panel');
  await page.locator('#trials tr[data-trial="trial-9"] button', { hasText: 'Stop' }).click();
  await page.locator('#play-state', { hasText: 'stopped' }).waitFor();
  step('the flat maze is drawn as the maze is, with its legend, played and stopped');

  // A trial policies play, watched drawn at the speed chosen, then stopped. Its
  // episodes are many, so that it runs on while the page watches.
  await page.selectOption('#env', 'rps');
  await choose('player_0', 'policy:random');
  await choose('player_1', 'policy:random');
  await openOptions();
  await page.fill('#episodes', '100000');
  await page.click('#start button[type=submit]');
  await page.locator('#watch-title', { hasText: 'trial-10' }).waitFor();
  await page.locator('#watch-frame img[src^="data:image/svg+xml"]').waitFor();
  const tickOf = async () => Number((await page.locator('#watch-state').textContent()).match(/tick (\d+)/)[1]);
  await page.locator('#watch-state', { hasText: /^running: episode \d+, tick \d+$/ }).waitFor();
  // The slow pace holds once the page has asked for it: two frames read at it.
  const paced = () => page.waitForResponse((r) => r.url().includes('/ui/frame?') && r.url().endsWith('pace=1000'));
  const asked = paced();
  await page.selectOption('#watch-speed', '1000');
  await asked;
  await paced();
  const slow = await tickOf();
  await page.waitForTimeout(1500);
  const slower = await tickOf();
  assert.ok(slower - slow <= 3, `at 1 step a second the trial went from tick ${slow} to ${slower} in 1.5 s`);
  await page.selectOption('#watch-speed', '50');
  await page.waitForFunction((t) => {
    const m = document.getElementById('watch-state').textContent.match(/tick (\d+)/);
    return m && Math.abs(Number(m[1]) - t) >= 5;
  }, slower);
  await both('watch', '#watch-panel');
  await page.locator('#trials tr[data-trial="trial-10"] button', { hasText: 'Stop' }).click();
  await page.locator('#watch-state', { hasText: /^stopped/ }).waitFor();
  await page.fill('#episodes', '1');
  step('a trial policies play is watched drawn, at 1 step a second and then 20, and stopped');

  // A one-episode maze of the oracle (microseconds at full speed), started watched at
  // 4 steps a second: the page draws it from its first steps.
  await page.selectOption('#env', 'maze');
  await choose('strategy', 'policy:oracle');
  await choose('motion', 'policy:forward');
  await openOptions();
  await page.selectOption('#start-watch', '250');
  await page.click('#start button[type=submit]');
  await page.locator('#watch-title', { hasText: 'trial-11' }).waitFor();
  await page.locator('#watch-state', { hasText: /^running: episode 0, tick \d+$/ }).waitFor();
  const firstTick = await tickOf();
  assert.ok(firstTick <= 1, `the first step drawn is at tick ${firstTick}, not 0 or 1`);
  await page.locator('#watch-frame img[src^="data:image/svg+xml"]').waitFor();
  assert.equal(await page.inputValue('#watch-speed'), '250', 'the watch goes on at the speed chosen at the start');
  await page.locator('#trials tr[data-trial="trial-11"] button', { hasText: 'Stop' }).click();
  await page.locator('#watch-state', { hasText: /^stopped/ }).waitFor();
  await page.selectOption('#start-watch', '0');
  step(`a short trial started watched at 4 steps a second is drawn from its first steps (tick ${firstTick} first)`);

  // A server stopped and started again: a second one, on its own port.
  const startSpare = async (addr) => {
    const p = spawn(opts.baton, ['serve', 'ui', '--addr', addr, '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise((resolve, reject) => {
      const rl = createInterface({ input: p.stdout });
      rl.once('line', resolve);
      p.once('exit', (code) => reject(new Error(`baton serve ui exited with ${code}`)));
    });
    return { p, base: line.match(/the page on (http:\/\/\S+)$/)[1] };
  };
  const stopSpare = async () => {
    const p = spare.p;
    spare = null;
    const exited = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGINT');
    await exited;
  };
  spare = await startSpare('127.0.0.1:0');
  const spareBase = spare.base;
  await page.goto(spareBase);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  await page.selectOption('#env', 'maze');
  await choose('strategy', 'policy:oracle');
  await page.click('#start button[type=submit]');
  await stateOf('trial-1', 'ended').waitFor();
  offline = true;
  await stopSpare();
  await page.locator('#conn', { hasText: 'The server does not answer' }).waitFor();
  await both('offline');
  spare = await startSpare(new URL(spareBase).host);
  await page.locator('#conn').waitFor({ state: 'hidden' });
  await page.locator('#trials tr').first().waitFor({ state: 'detached' });
  offline = false;
  await page.click('#start button[type=submit]');
  await stateOf('trial-1', 'ended').waitFor();
  await stopSpare();
  step('a stopped server: the banner says so; started again, the page reads its trials afresh (the old ones gone) and starts one');

  // Polling is the fallback: with Watch refused by the network, a page that polls
  // every 300 ms still sees a trial end, charted.
  await page.route('**/baton.v1.TrialService/Watch', (r) => r.abort());
  watchRefused = 1;
  await page.goto(`${opts.base}?poll=300`);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  await page.selectOption('#env', 'maze');
  await choose('strategy', 'policy:oracle');
  await choose('motion', 'policy:random');
  await openOptions();
  await page.fill('#episodes', '3');
  await page.click('#start button[type=submit]');
  const last = page.locator('#trials tr[data-trial="trial-12"]');
  await stateOf('trial-12', 'ended').waitFor();
  await last.locator('svg.chart polyline').first().waitFor({ state: 'attached' });
  assert.equal((await last.locator('svg.chart title').allTextContents()).length, 2);
  assert.ok(watchRefused > 1, 'the page did not call Watch');
  step('with Watch refused, polling shows a trial end and its returns');

  // A frame asked for a trial the server no longer has (one that ended as the page
  // asked, or of a server started again) is answered 404, which the page takes as the
  // end of the pictures; the browser logs it. Any other 404 is an error.
  const frames404 = answers4xx.length > 0 && answers4xx.filter((a) => a.startsWith('404 ')).every((a) => a.startsWith('404 /ui/frame'));
  const logged = errors.filter((e) => !(frames404 && /status of 404/.test(e)));
  assert.deepEqual(logged, [], `the page logged errors (4xx answers: ${answers4xx.join(', ') || 'none'})`);
} finally {
  if (spare) spare.p.kill('SIGKILL');
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log('e2e: ok');
