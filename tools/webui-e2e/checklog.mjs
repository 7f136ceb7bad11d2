// Checks the activity log of the server that e2e.mjs played against, as
// `go run ./tools/arrowcheck/dump -rows DIR` prints it (a JSON object on stdin): the
// reward given in the page for trial-1's turn at tick 2 is in the rewards table with
// the source "human", and trial-1's strategy took the actions the person chose, none
// of the masked or forged ones.
//
// Usage: go run ./tools/arrowcheck/dump -rows DIR | node checklog.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const log = JSON.parse(readFileSync(0, 'utf8'));
const retro = (log.retro || []).map(({ trial_id, episode, tick, agent_id, source, value }) => ({ trial_id, episode, tick, agent_id, source, value }));
assert.deepEqual(retro, [{ trial_id: 'trial-1', episode: 0, tick: 2, agent_id: 'strategy_0', source: 'human', value: 1.5 }],
  'the rewards table holds the reward given in the page, and no other');

const rows = log.agents.strategy.row_values.filter((r) => r.trial_id === 'trial-1');
const step2 = rows.filter((r) => r.tick === 2);
assert.equal(step2.length, 1, 'trial-1 strategy rows at tick 2');
assert.deepEqual(step2[0].retro, [{ source: 'human', value: 1.5 }], 'the row at tick 2 carries the retroactive reward');
// A row holds the action of the agent's previous turn, which it scores. UP 0, RIGHT 1,
// DOWN 2, LEFT 3: the turns played in the page, in order.
const acted = rows.filter((r) => r.action !== null).map((r) => r.action);
assert.deepEqual(acted, [3, 2, 3, 0, 0, 3, 0], 'trial-1 strategy actions');
console.log('e2e: the activity log holds the reward at tick 2 with the source human, and the actions played');
