// Browser test of baton serve ui, run by scripts/webui-e2e against a server that has an
// API key for the maze and writes an activity log. The page refuses to work without
// the key and takes it from the link's fragment. A person starts a maze trial in the
// page, cannot play a masked action (its button is disabled, and clicking it anyway
// sends nothing), sees the server refuse forged actions (masked, outside the space)
// and a call without the key while the trial waits on, plays the strategy agent to
// the goal with the mouse and the keyboard, rewards a past turn chosen in the
// timeline, and sees the trial end with the agents' returns charted; then a trial of
// six episodes played by policies, charted per episode; then one whose person does
// not act, played by the default policy; then one stopped from the list; then one
// the person finds in the list and plays on after the page was loaded again; then it
// loads the page again and finds the finished trials charted. The page polls once an
// hour there, so every state and chart it shows came through Watch. Last, with Watch
// refused, a page that polls sees a trial end, charted.
// checklog.mjs then finds the reward in the activity log.
//
// Usage: node e2e.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium
//        --modules DIR (the node_modules folder that holds playwright-core)
//        --key KEY (the server's key for the maze)
//        [--screenshot-dir DIR] (writes webui-play.png and webui-trials.png there)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' }, chromium: { type: 'string' }, modules: { type: 'string' }, key: { type: 'string' },
    'screenshot-dir': { type: 'string' },
  },
});
for (const k of ['base', 'chromium', 'modules', 'key']) assert.ok(opts[k], `--${k} is missing`);
const { chromium } = createRequire(join(opts.modules, 'x.js'))('playwright-core');
const shots = opts['screenshot-dir'];
if (shots) mkdirSync(shots, { recursive: true });

const profile = mkdtempSync(join(tmpdir(), 'baton-e2e-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: opts.chromium,
  headless: true,
  viewport: { width: 1200, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const step = (what) => console.log(`e2e: ${what}`);
try {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  let refusals = false; // the browser logs the 4xx answers the test asks for as errors
  let watchRefused = 0; // and the Watch calls the test makes fail, counted once it does
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (refusals && /status of 40[01]/.test(m.text())) return;
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

  // Without the key the server refuses the page, and the page says so.
  refusals = true;
  await page.goto(opts.base);
  await page.locator('#status.error', { hasText: 'unauthenticated' }).waitFor();
  for (const key of [null, 'not-the-key-0123456789']) {
    const r = await gateway('List', {}, key);
    assert.equal(r.status, 401, `List with key ${key}`);
    assert.equal(r.body.code, 'unauthenticated');
  }
  refusals = false;
  step('without the key the page and a request are refused (401 unauthenticated)');

  // The key in the link's fragment; ?poll=3600000 leaves the page to Watch.
  await page.goto(`${opts.base}?poll=3600000#key=${encodeURIComponent(opts.key)}`);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  assert.equal(await page.inputValue('#key'), opts.key);
  assert.equal(new URL(page.url()).hash, '', 'the key stays in the address bar');
  await page.waitForFunction(() => document.getElementById('status').textContent === '');
  const lists = calls.List;
  step('the page took the key from its link and lists the environments');

  await page.selectOption('#env', 'maze');
  await page.fill('#seed', '3');
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'human');
  await page.selectOption('.actor[data-agent=motion] select[name=choice]', 'policy:forward');
  await page.click('#start button[type=submit]');
  await page.locator('#play-panel').waitFor();
  await page.locator('#trials tr', { hasText: 'trial-1' }).locator('td', { hasText: /^running$/ }).waitFor();
  step('started a trial with the strategy played here; Watch shows it running');

  // turn waits for the strategy's turn at tick, and checks what the page shows.
  const turn = async (tick) => {
    await page.locator('#play-state', { hasText: `to act at tick ${tick},` }).waitFor();
    await page.locator('#actions button').first().waitFor();
  };
  // waiting checks, with the server, that trial-1's strategy still waits at tick.
  const waiting = async (tick) => {
    const p = await gateway('Pending', { trial: 'trial-1', agent: 'strategy' });
    assert.equal(p.status, 200);
    assert.deepEqual({ acting: p.body.acting, tick: p.body.tick }, { acting: true, tick: String(tick) });
    await turn(tick);
  };

  await turn(0);
  assert.match(await page.locator('#frame img').getAttribute('src'), /^data:image\/svg\+xml/);
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
  await waiting(0);
  assert.equal(calls.ClientAct, 0, 'a masked action was sent');
  step('the maze is drawn; masked actions are disabled, and clicking them anyway does nothing');

  // Forged actions, sent from the page with its key: refused with the reason, and
  // the trial waits on.
  refusals = true;
  const forged = [
    [{ name: 'RIGHT' }, 400, 'invalid_argument', /^name: RIGHT is masked at tick 0 \(allowed: UP, LEFT\)$/],
    [{ raw: '1' }, 400, 'invalid_argument', /^raw: 1 \(RIGHT\) is masked at tick 0/],
    [{ raw: '7' }, 400, 'invalid_argument', /^raw: 7 is outside the action space of strategy_0 \(0 to 3\)$/],
    [{ name: 'JUMP' }, 400, 'invalid_argument', /^name: "JUMP" is not an action of strategy_0/],
  ];
  for (const [action, code, name, message] of forged) {
    const r = await gateway('ClientAct', { trial: 'trial-1', agent: 'strategy', tick: '0', ...action });
    assert.equal(r.status, code, JSON.stringify(action));
    assert.equal(r.body.code, name, JSON.stringify(action));
    assert.match(r.body.message, message);
  }
  const keyless = await gateway('ClientAct', { trial: 'trial-1', agent: 'strategy', tick: '0', name: 'LEFT' }, null);
  assert.deepEqual([keyless.status, keyless.body.code], [401, 'unauthenticated'], 'an action without the key');
  refusals = false;
  await waiting(0);
  step('forged actions get 400 naming why (masked, outside the space), one without the key 401; the trial waits on');
  await page.keyboard.press('ArrowLeft');

  await turn(2);
  await page.click('#actions button[data-name=DOWN]');

  await turn(5);
  // Reward the turn at tick 2, chosen in the timeline.
  await page.click('#timeline button:text-is("2: DOWN")');
  await page.locator('#reward-target', { hasText: 'at tick 2' }).waitFor();
  await page.fill('#reward-value', '1.5');
  await page.click('#reward button[type=submit]');
  await page.locator('#status', { hasText: 'rewarded strategy_0 1.5 at tick 2' }).waitFor();
  step('rewarded the turn at tick 2 from the timeline');
  await page.keyboard.press('4'); // LEFT, the fourth action

  const rest = [[9, 'ArrowUp'], [12, 'ArrowUp'], [16, 'ArrowLeft'], [18, 'ArrowUp']];
  for (const [tick, key] of rest) {
    await turn(tick);
    if (shots && tick === 16) {
      await page.locator('#play-panel').evaluate((e) => e.scrollIntoView());
      await page.screenshot({ path: join(shots, 'webui-play.png') });
    }
    await page.keyboard.press(key);
  }
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  step('played to the goal: the trial ended');

  const row = page.locator('#trials tr', { hasText: 'trial-1' });
  await row.locator('td', { hasText: /^ended$/ }).waitFor();
  await row.locator('svg.chart').waitFor();
  const titles = await row.locator('svg.chart title').allTextContents();
  assert.ok(titles.includes('strategy: 2.500'), `chart titles: ${titles}`);
  assert.equal(await page.locator('#timeline li').count(), 7);
  step('the trial list charts the returns (strategy 2.500: the goal and the reward)');

  // A trial of six episodes played by policies: its row charts six returns per agent.
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'policy:oracle');
  await page.selectOption('.actor[data-agent=motion] select[name=choice]', 'policy:random');
  await page.fill('#episodes', '6');
  await page.click('#start button[type=submit]');
  const second = page.locator('#trials tr', { hasText: 'trial-2' });
  await second.locator('td', { hasText: /^ended$/ }).waitFor();
  await second.locator('svg.chart polyline').first().waitFor({ state: 'attached' }); // a flat line has no height
  const lines = await second.locator('svg.chart title').allTextContents();
  assert.equal(lines.length, 2, `chart titles: ${lines}`);
  for (const l of lines) assert.match(l, /^(strategy|motion): -?[\d.]+(, -?[\d.]+){5}$/);
  assert.equal(await second.locator('td').nth(3).textContent(), '5', 'the last episode');
  step('a trial of six episodes charts six returns per agent');

  // A person who does not act: after 50 ms a turn is the oracle's.
  await page.fill('#episodes', '1');
  await page.selectOption('.actor[data-agent=motion] select[name=choice]', 'policy:forward');
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'human');
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '50');
  await page.selectOption('.actor[data-agent=strategy] select[name=default-policy]', 'oracle');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-3' }).waitFor();
  await page.locator('#trials tr', { hasText: 'trial-3' }).locator('td', { hasText: /^ended$/ }).waitFor();
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  step('the oracle played the turns nobody played in time');

  // A running trial stopped from the list: Watch brings the change at once.
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '0');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-4' }).waitFor();
  await turn(0);
  const fourth = page.locator('#trials tr', { hasText: 'trial-4' });
  await fourth.locator('td', { hasText: /^running$/ }).waitFor();
  await fourth.locator('button', { hasText: 'Stop' }).click();
  await fourth.locator('td', { hasText: /^stopped/ }).waitFor();
  await page.locator('#play-state', { hasText: 'stopped' }).waitFor();
  assert.equal(calls.List, lists, 'the page polled List: the states above may not have come through Watch');
  step('a trial stopped from the list shows stopped; no poll since the page loaded, all of it through Watch');

  // A person who lost the page (loaded again) finds the trial in the list, where it
  // waits for them, and plays on.
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-5' }).waitFor();
  await turn(0);
  await page.reload();
  const resumed = page.locator('#trials tr', { hasText: 'trial-5' });
  await resumed.locator('td', { hasText: /^running$/ }).waitFor();
  assert.match(await resumed.locator('td').nth(2).getAttribute('title'), /^waiting for the client of agent strategy /);
  assert.ok(await page.locator('#play-panel').isHidden());
  await resumed.locator('button', { hasText: 'Play' }).click();
  await page.locator('#play-title', { hasText: 'trial-5' }).waitFor();
  await turn(0);
  await page.keyboard.press('ArrowLeft');
  await turn(2);
  await resumed.locator('button', { hasText: 'Stop' }).click();
  await resumed.locator('td', { hasText: /^stopped/ }).waitFor();
  step('loaded again, the page finds the trial waiting for its person in the list, who plays on');

  // The page loaded again (the key from the browser's storage) shows the finished
  // trials with their results, which Watch replays.
  await page.reload();
  assert.equal(await page.inputValue('#key'), opts.key);
  const again = page.locator('#trials tr', { hasText: 'trial-2' });
  await again.locator('td', { hasText: /^ended$/ }).waitFor();
  await again.locator('svg.chart polyline').first().waitFor({ state: 'attached' });
  assert.deepEqual(await again.locator('svg.chart title').allTextContents(), lines);
  await page.locator('#trials tr', { hasText: 'trial-4' }).locator('td', { hasText: /^stopped/ }).waitFor();
  step('loaded again, the page shows the finished trials with their returns');
  if (shots) {
    await page.locator('#trials-panel').evaluate((e) => e.scrollIntoView());
    await page.screenshot({ path: join(shots, 'webui-trials.png') });
  }

  // Polling is the fallback: with Watch refused by the network, a page that polls
  // every 300 ms still sees a trial end, charted.
  await page.route('**/baton.v1.TrialService/Watch', (r) => r.abort());
  watchRefused = 1;
  await page.goto(`${opts.base}?poll=300`);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  await page.selectOption('#env', 'maze');
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'policy:oracle');
  await page.selectOption('.actor[data-agent=motion] select[name=choice]', 'policy:random');
  await page.fill('#episodes', '3');
  await page.click('#start button[type=submit]');
  const sixth = page.locator('#trials tr', { hasText: 'trial-6' });
  await sixth.locator('td', { hasText: /^ended$/ }).waitFor();
  await sixth.locator('svg.chart polyline').first().waitFor({ state: 'attached' });
  assert.equal((await sixth.locator('svg.chart title').allTextContents()).length, 2);
  assert.ok(watchRefused > 1, 'the page did not call Watch');
  step('with Watch refused, polling shows a trial end and its returns');

  assert.deepEqual(errors, [], 'the page logged errors');
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log('e2e: ok');
