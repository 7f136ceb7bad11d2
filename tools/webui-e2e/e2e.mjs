// Browser test of baton serve ui: a person starts a maze trial in the page, plays the
// strategy agent to the goal with the mouse and the keyboard, rewards a past turn
// chosen in the timeline, and sees the trial end with the agents' returns charted;
// then a trial of three episodes played by policies, charted per episode; then one
// whose person does not act, played by the default policy.
//
// Usage: node e2e.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium
//        --modules DIR (the node_modules folder that holds playwright-core)
//        [--screenshot FILE.png] (the page at the end)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' }, chromium: { type: 'string' }, modules: { type: 'string' }, screenshot: { type: 'string' },
  },
});
for (const k of ['base', 'chromium', 'modules']) assert.ok(opts[k], `--${k} is missing`);
const { chromium } = createRequire(join(opts.modules, 'x.js'))('playwright-core');

const profile = mkdtempSync(join(tmpdir(), 'baton-e2e-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: opts.chromium,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const step = (what) => console.log(`e2e: ${what}`);
try {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.setDefaultTimeout(15000);

  await page.goto(opts.base);
  await page.locator('#env option[value=maze]').waitFor({ state: 'attached' });
  step('the page lists the environments');
  await page.selectOption('#env', 'maze');
  await page.fill('#seed', '3');
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'human');
  await page.selectOption('.actor[data-agent=motion] select[name=choice]', 'policy:forward');
  await page.click('#start button[type=submit]');
  await page.locator('#play-panel').waitFor();
  step('started a trial with the strategy played here');

  // turn waits for the strategy's turn at tick, and checks what the page shows.
  const turn = async (tick) => {
    await page.locator('#play-state', { hasText: `to act at tick ${tick},` }).waitFor();
    await page.locator('#actions button').first().waitFor();
  };

  await turn(0);
  assert.match(await page.locator('#frame img').getAttribute('src'), /^data:image\/svg\+xml/);
  const enabled = async (name) => !(await page.locator(`#actions button[data-name=${name}]`).isDisabled());
  assert.deepEqual(
    { UP: await enabled('UP'), RIGHT: await enabled('RIGHT'), DOWN: await enabled('DOWN'), LEFT: await enabled('LEFT') },
    { UP: true, RIGHT: false, DOWN: false, LEFT: true }, 'the mask disables RIGHT and DOWN at tick 0');
  step('the maze is drawn, masked actions disabled');
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
    await page.keyboard.press(key);
  }
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  step('played to the goal: the trial ended');

  const row = page.locator('#trials tr', { hasText: 'ended' });
  await row.locator('svg.chart').waitFor();
  const titles = await row.locator('svg.chart title').allTextContents();
  assert.ok(titles.includes('strategy: 2.500'), `chart titles: ${titles}`);
  assert.equal(await page.locator('#timeline li').count(), 7);
  step('the trial list charts the returns (strategy 2.500: the goal and the reward)');

  // A trial of three episodes played by policies: its row charts three returns per agent.
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'policy:oracle');
  await page.fill('#episodes', '3');
  await page.click('#start button[type=submit]');
  const second = page.locator('#trials tr', { hasText: 'trial-2' });
  await second.locator('td', { hasText: /^ended$/ }).waitFor();
  await second.locator('svg.chart polyline').first().waitFor({ state: 'attached' }); // a flat line has no height
  const lines = await second.locator('svg.chart title').allTextContents();
  assert.equal(lines.length, 2, `chart titles: ${lines}`);
  for (const l of lines) assert.match(l, /^(strategy|motion): -?[\d.]+, -?[\d.]+, -?[\d.]+$/);
  step('a trial of three episodes charts three returns per agent');

  // A person who does not act: after 50 ms a turn is the oracle's.
  await page.fill('#episodes', '1');
  await page.selectOption('.actor[data-agent=strategy] select[name=choice]', 'human');
  await page.fill('.actor[data-agent=strategy] input[name=timeout]', '50');
  await page.selectOption('.actor[data-agent=strategy] select[name=default-policy]', 'oracle');
  await page.click('#start button[type=submit]');
  await page.locator('#play-title', { hasText: 'trial-3' }).waitFor();
  await page.locator('#trials tr', { hasText: 'trial-3' }).locator('td', { hasText: /^ended$/ }).waitFor();
  await page.locator('#play-state', { hasText: 'ended' }).waitFor();
  step('the oracle played the turns nobody played in time');

  assert.deepEqual(errors, [], 'the page logged errors');
  if (opts.screenshot) await page.screenshot({ path: opts.screenshot, fullPage: true });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log('e2e: ok');
