// check.mjs reads a baton log with the official Arrow JavaScript library (apache-arrow,
// with the pure-JS lz4js and fzstd codecs for compressed bodies), an implementation of
// Arrow independent of the arrow-go one that wrote it, and checks it against the
// layout that datalog/doc.go documents and against figures computed by other readers:
//
//   node check.mjs DIR --dump DUMP.json [--inspect INSPECT.json] [--compression none|lz4|zstd]
//
// DUMP.json is what `go run ./tools/arrowcheck/dump DIR` prints (the Go reader's
// figures); INSPECT.json is what `baton inspect --json DIR` prints. For every file it
// checks that it is an IPC file with a footer, that the footer lists one dictionary per
// dictionary-encoded field, the schema (column names, types, nullability) and the
// schema metadata (format version, table, compression, the agent's spaces as the
// spaces JSON spec, their flat dimensions against the column types), and that reading
// the body as an IPC stream (as a part that lost its footer is read) gives the same
// rows. Then, over every agent's rows: per-row invariants (start rows, reward = sum of
// its sources, actions inside the action space, observations inside Box bounds, the
// transition pairing: a non-start row's tick minus its span_ticks is the tick of the
// previous row of its agent id, which acted), and every figure of DUMP.json and
// INSPECT.json. It exits 1 and lists the failures on any mismatch.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  RecordBatchReader, DataType, Precision, compressionRegistry, CompressionType,
} from 'apache-arrow';
import lz4 from 'lz4js';
import * as fzstd from 'fzstd';

// The codecs: lz4js reads LZ4 frames (what Arrow's LZ4_FRAME is); fzstd returns views
// that may be misaligned for Arrow's typed arrays, so copy them.
compressionRegistry.set(CompressionType.LZ4_FRAME, { decode: (d) => lz4.decompress(d) });
compressionRegistry.set(CompressionType.ZSTD, { decode: (d) => fzstd.decompress(d).slice() });

// ---------------------------------------------------------------------------------
// Arguments and failures.

function parseArgs(argv) {
  const a = { dir: null, dump: null, inspect: null, compression: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--dump' || k === '--inspect' || k === '--compression') {
      if (i + 1 >= argv.length) usage(`${k} needs a value`);
      a[k.slice(2)] = argv[++i];
    } else if (k.startsWith('--')) {
      usage(`unknown flag ${k}`);
    } else if (a.dir === null) {
      a.dir = k;
    } else {
      usage(`unexpected argument ${k}`);
    }
  }
  if (a.dir === null) usage('no log directory');
  if (a.dump === null) usage('--dump is required');
  return a;
}

function usage(msg) {
  console.error(`arrowcheck: ${msg}\nusage: node check.mjs DIR --dump DUMP.json [--inspect INSPECT.json] [--compression none|lz4|zstd]`);
  process.exit(2);
}

const failures = [];
function fail(msg) {
  failures.push(msg);
  if (failures.length <= 50) console.error(`FAIL ${msg}`);
}
function expect(cond, msg) {
  if (!cond) fail(msg);
  return cond;
}
function near(a, b, rel = 1e-9, abs = 1e-9) {
  return Math.abs(a - b) <= Math.max(abs, rel * Math.max(Math.abs(a), Math.abs(b)));
}

// ---------------------------------------------------------------------------------
// Types, as canonical strings: int32, utf8, dictionary<int32,utf8>,
// fixed_size_list<float32>[104], list<struct<source:dictionary<int32,utf8>,value:float32>>.

function typeString(t) {
  if (DataType.isDictionary(t)) return `dictionary<${typeString(t.indices)},${typeString(t.dictionary)}>`;
  if (DataType.isInt(t)) return `${t.isSigned ? 'int' : 'uint'}${t.bitWidth}`;
  if (DataType.isFloat(t)) return { [Precision.HALF]: 'float16', [Precision.SINGLE]: 'float32', [Precision.DOUBLE]: 'float64' }[t.precision];
  if (DataType.isUtf8(t)) return 'utf8';
  if (DataType.isBinary(t)) return 'binary';
  if (DataType.isBool(t)) return 'bool';
  if (DataType.isFixedSizeList(t)) return `fixed_size_list<${typeString(t.children[0].type)}>[${t.listSize}]`;
  if (DataType.isList(t)) return `list<${typeString(t.children[0].type)}>`;
  if (DataType.isStruct(t)) return `struct<${t.children.map((f) => `${f.name}:${typeString(f.type)}`).join(',')}>`;
  return `other(${String(t)})`;
}

const DICT = 'dictionary<int32,utf8>';

// stepFields returns the documented [name, type, nullable] of an agent's columns.
function stepFields(obsDim, actType, maskLen) {
  const f = [
    ['trial_id', DICT, false],
    ['episode', 'int32', false],
    ['tick', 'int64', false],
    ['index', 'int32', false],
    ['agent_id', DICT, false],
    ['parent_agent_id', DICT, true],
    ['start', 'bool', false],
    ['acting', 'bool', false],
    ['observation', `fixed_size_list<float32>[${obsDim}]`, false],
    ['action', actType, true],
  ];
  if (maskLen > 0) f.push(['action_mask', `fixed_size_list<bool>[${maskLen}]`, true]);
  f.push(
    ['reward', 'float32', false],
    ['reward_sources', `list<struct<source:${DICT},value:float32>>`, false],
    ['terminated', 'bool', false],
    ['truncated', 'bool', false],
    ['span_ticks', 'int32', false],
    ['messages', 'list<struct<from:utf8,to:utf8,payload:binary,sent:int64>>', false],
  );
  return f;
}

const sideFields = {
  trials: [
    ['trial_id', 'utf8', false], ['index', 'int64', true], ['env', 'utf8', true], ['config', 'utf8', true],
    ['seed', 'uint64', true], ['episodes', 'int64', true], ['max_ticks', 'int64', true], ['agents', 'utf8', true],
    ['policies', 'utf8', true], ['defines_success', 'bool', true], ['state', 'utf8', false], ['error', 'utf8', true],
    ['task', 'utf8', true],
  ],
  episodes: [
    ['trial_id', 'utf8', false], ['episode', 'int32', false], ['seed', 'uint64', false], ['ticks', 'int64', false],
    ['truncated', 'bool', false], ['success', 'bool', true], ['returns', 'list<struct<agent:utf8,value:float64>>', false],
    ['metrics', 'list<struct<name:utf8,value:float64>>', false],
  ],
  rewards: [
    ['trial_id', 'utf8', false], ['episode', 'int32', false], ['tick', 'int64', false], ['agent', 'utf8', false],
    ['agent_id', 'utf8', false], ['source', 'utf8', false], ['value', 'float32', false],
    ['arrived_episode', 'int32', false], ['arrived_tick', 'int64', false],
  ],
};

function checkFields(where, schema, want) {
  const got = schema.fields.map((f) => [f.name, typeString(f.type), f.nullable]);
  if (!expect(got.length === want.length, `${where}: ${got.length} columns (${got.map((g) => g[0]).join(', ')}); want ${want.length} (${want.map((w) => w[0]).join(', ')})`)) return;
  for (let i = 0; i < want.length; i++) {
    const [gn, gt, gnull] = got[i];
    const [wn, wt, wnull] = want[i];
    expect(gn === wn, `${where}: column ${i} is ${gn}; want ${wn}`);
    expect(gt === wt, `${where}: column ${gn} has type ${gt}; want ${wt}`);
    expect(gnull === wnull, `${where}: column ${gn} nullable=${gnull}; want ${wnull}`);
  }
}

// ---------------------------------------------------------------------------------
// The spaces JSON spec (spaces/doc.go): validate it and compute the flat dimension.

function bound(v, where) {
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  if (typeof v !== 'number') throw new Error(`${where}: bound ${JSON.stringify(v)} is not a number, "inf" or "-inf"`);
  return v;
}

function onlyKeys(spec, keys, where) {
  for (const k of Object.keys(spec)) {
    if (k !== 'type' && !keys.includes(k)) throw new Error(`${where}: unknown field ${k}`);
  }
}

function isDims(a, min) {
  return Array.isArray(a) && a.every((d) => Number.isInteger(d) && d >= min);
}

// parseSpace returns {type, flatDim, ...} for a spec, or throws.
function parseSpace(spec, where = '') {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw new Error(`${where}: not an object`);
  const prod = (a) => a.reduce((p, d) => p * d, 1);
  switch (spec.type) {
    case 'discrete':
      onlyKeys(spec, ['n', 'start'], where);
      if (!Number.isInteger(spec.n) || spec.n < 1) throw new Error(`${where}.n: ${spec.n}`);
      if (spec.start !== undefined && !Number.isInteger(spec.start)) throw new Error(`${where}.start: ${spec.start}`);
      return { type: 'discrete', n: spec.n, start: spec.start ?? 0, flatDim: spec.n };
    case 'box': {
      onlyKeys(spec, ['shape', 'dtype', 'low', 'high'], where);
      if (!isDims(spec.shape, 0)) throw new Error(`${where}.shape: ${JSON.stringify(spec.shape)}`);
      if (spec.dtype !== undefined && spec.dtype !== 'float32') throw new Error(`${where}.dtype: ${spec.dtype}`);
      const n = prod(spec.shape);
      const bounds = (b, name) => {
        if (Array.isArray(b)) {
          if (b.length !== n) throw new Error(`${where}.${name}: ${b.length} entries; want ${n}`);
          return b.map((v, i) => bound(v, `${where}.${name}[${i}]`));
        }
        const v = bound(b, `${where}.${name}`);
        return new Array(n).fill(v);
      };
      const low = bounds(spec.low, 'low');
      const high = bounds(spec.high, 'high');
      for (let i = 0; i < n; i++) if (!(low[i] <= high[i])) throw new Error(`${where}: low[${i}] > high[${i}]`);
      return { type: 'box', shape: spec.shape, low, high, flatDim: n };
    }
    case 'multi_discrete':
      onlyKeys(spec, ['nvec'], where);
      if (!isDims(spec.nvec, 1)) throw new Error(`${where}.nvec: ${JSON.stringify(spec.nvec)}`);
      return { type: 'multi_discrete', nvec: spec.nvec, flatDim: spec.nvec.reduce((s, v) => s + v, 0) };
    case 'multi_binary':
      onlyKeys(spec, ['shape'], where);
      if (!isDims(spec.shape, 1)) throw new Error(`${where}.shape: ${JSON.stringify(spec.shape)}`);
      return { type: 'multi_binary', shape: spec.shape, flatDim: prod(spec.shape) };
    case 'dict': {
      onlyKeys(spec, ['spaces'], where);
      if (!Array.isArray(spec.spaces)) throw new Error(`${where}.spaces: not an array`);
      const keys = new Set();
      const entries = spec.spaces.map((e, i) => {
        if (typeof e?.key !== 'string' || e.key === '' || keys.has(e.key)) throw new Error(`${where}.spaces[${i}].key: ${JSON.stringify(e?.key)}`);
        keys.add(e.key);
        return { key: e.key, space: parseSpace(e.space, `${where}.spaces[${i}].space`) };
      });
      return { type: 'dict', entries, flatDim: entries.reduce((s, e) => s + e.space.flatDim, 0) };
    }
    case 'tuple': {
      onlyKeys(spec, ['spaces'], where);
      if (!Array.isArray(spec.spaces)) throw new Error(`${where}.spaces: not an array`);
      const elems = spec.spaces.map((s, i) => parseSpace(s, `${where}.spaces[${i}]`));
      return { type: 'tuple', elems, flatDim: elems.reduce((s, e) => s + e.flatDim, 0) };
    }
    case 'text':
      onlyKeys(spec, ['min_length', 'max_length', 'charset'], where);
      if (!Number.isInteger(spec.min_length) || !Number.isInteger(spec.max_length) || spec.min_length < 0 || spec.min_length > spec.max_length) {
        throw new Error(`${where}: lengths ${spec.min_length}..${spec.max_length}`);
      }
      return { type: 'text', flatDim: spec.max_length };
    default:
      throw new Error(`${where}.type: unknown ${JSON.stringify(spec.type)}`);
  }
}

// actionType is the action column's type for an action space.
function actionType(sp) {
  switch (sp.type) {
    case 'discrete': return { type: 'int64', dim: 1 };
    case 'box': return { type: `fixed_size_list<float32>[${sp.flatDim}]`, dim: sp.flatDim };
    case 'multi_discrete': return { type: `fixed_size_list<int64>[${sp.nvec.length}]`, dim: sp.nvec.length };
    case 'multi_binary': return { type: `fixed_size_list<int64>[${sp.flatDim}]`, dim: sp.flatDim };
  }
  return { type: `no action column for a ${sp.type} space`, dim: -1 };
}

// ---------------------------------------------------------------------------------
// Files.

const MAGIC = 'ARROW1';

function listLog(dir) {
  const tables = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) {
      fail(`${path}: a file at the top of the log`);
      continue;
    }
    let table;
    let agent = null;
    if (name.startsWith('agent=')) {
      table = 'steps';
      agent = decodeURIComponent(name.slice('agent='.length));
    } else if (['_trials', '_episodes', '_rewards'].includes(name)) {
      table = name.slice(1);
    } else {
      fail(`${path}: unexpected folder`);
      continue;
    }
    const parts = [];
    for (const f of readdirSync(path)) {
      const m = /^part-(?:(.+)-)?(\d+)\.arrow$/.exec(f);
      if (!expect(m !== null, `${join(path, f)}: not a part's name (part-[SHARD-]NNNNN.arrow)`)) continue;
      parts.push({ path: join(path, f), shard: m[1] ?? '', number: Number(m[2]) });
    }
    parts.sort((a, b) => (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : a.number - b.number));
    tables.push({ table, agent, folder: name, parts });
  }
  return tables;
}

function countDictionaries(fields) {
  let n = 0;
  for (const f of fields) {
    if (DataType.isDictionary(f.type)) n++;
    n += countDictionaries(f.type.children ?? []);
  }
  return n;
}

// readPart reads a part as an IPC file (footer) and again as the IPC stream after its
// leading magic, checks that both give the same batches, and returns the file's.
function readPart(path) {
  const bytes = new Uint8Array(readFileSync(path)); // a copy: aligned, not pooled
  const head = Buffer.from(bytes.subarray(0, 8)).toString('latin1');
  const tail = Buffer.from(bytes.subarray(bytes.length - 6)).toString('latin1');
  expect(head === `${MAGIC}\0\0`, `${path}: does not start with ARROW1 and padding`);
  if (!expect(tail === MAGIC, `${path}: does not end with ARROW1: no footer`)) return null;

  const file = RecordBatchReader.from(bytes);
  file.open();
  expect(file.isFile(), `${path}: the JavaScript reader does not read it as an IPC file`);
  const { schema, numRecordBatches, numDictionaries } = file;
  const batches = [...file];
  expect(batches.length === numRecordBatches, `${path}: read ${batches.length} batches; the footer lists ${numRecordBatches}`);
  expect(batches.length > 0, `${path}: no record batch`);
  const ndict = countDictionaries(schema.fields);
  expect(numDictionaries === ndict, `${path}: the footer lists ${numDictionaries} dictionaries; the schema has ${ndict} dictionary fields (one full dictionary each)`);

  // The body as a stream, as a part without its footer is read.
  const stream = RecordBatchReader.from(bytes.subarray(8));
  stream.open();
  expect(stream.isStream(), `${path}: the body after the magic is not an IPC stream`);
  const sbatches = [...stream];
  expect(sbatches.length === batches.length, `${path}: the stream has ${sbatches.length} batches; the file ${batches.length}`);
  for (let i = 0; i < Math.min(sbatches.length, batches.length); i++) {
    const a = batches[i];
    const b = sbatches[i];
    if (!expect(a.numRows === b.numRows, `${path}: batch ${i}: ${a.numRows} rows in the file, ${b.numRows} in the stream`)) continue;
    // Compare every value: the dictionaries of the stream grow by deltas, the
    // file's are the full ones of the footer.
    const ja = JSON.stringify(a.toArray().map(rowJSON));
    const jb = JSON.stringify(b.toArray().map(rowJSON));
    expect(ja === jb, `${path}: batch ${i}: the file and the stream read differ`);
  }
  return { schema, batches, bytes: bytes.length };
}

function rowJSON(row) {
  return JSON.parse(JSON.stringify(row.toJSON(), (k, v) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return Array.from(v);
    return v;
  }));
}

function metadataOf(schema) {
  return Object.fromEntries(schema.metadata);
}

function checkCommonMetadata(where, md, table, compression) {
  expect(md['baton.format_version'] === '2', `${where}: baton.format_version is ${md['baton.format_version']}; want 2`);
  expect(typeof md['baton.version'] === 'string' && md['baton.version'] !== '', `${where}: no baton.version`);
  expect(md['baton.table'] === table, `${where}: baton.table is ${md['baton.table']}; want ${table}`);
  expect(['none', 'lz4', 'zstd'].includes(md['baton.compression']), `${where}: baton.compression is ${md['baton.compression']}`);
  if (compression) expect(md['baton.compression'] === compression, `${where}: baton.compression is ${md['baton.compression']}; want ${compression}`);
}

// ---------------------------------------------------------------------------------
// The steps of an agent.

function checksum(list) {
  let s = 0;
  for (let j = 0; j < list.length; j++) s += (j + 1) * Number(list[j]);
  return s;
}

function newAgentFigures() {
  return {
    rows: 0, batches: 0, trials: new Set(), ids: new Set(), parent_null: 0, start: 0, acting: 0, terminated: 0, truncated: 0,
    episode_sum: 0, tick_sum: 0, index_sum: 0, span_ticks_sum: 0, obs_checksum: 0,
    action_null: 0, action_checksum: 0, mask_null: 0, mask_true: 0, reward_sum: 0, retro_sum: 0,
    sources: {}, messages: 0, message_bytes: 0, returns: new Map(), retro_in_episode: new Map(),
  };
}

function checkAgent(name, parts, compression, retro) {
  const where = `agent=${name}`;
  const fig = newAgentFigures();
  let spaces = null;
  const last = new Map(); // trial/episode/agent_id -> {tick, acting}
  for (const p of parts) {
    const r = readPart(p.path);
    if (r === null) continue;
    const md = metadataOf(r.schema);
    const pw = `${where}/${p.path.split('/').pop()}`;
    checkCommonMetadata(pw, md, 'steps', compression);
    expect(md['baton.agent'] === name, `${pw}: baton.agent is ${md['baton.agent']}; want ${name}`);
    for (const k of ['baton.env', 'baton.trial']) expect(typeof md[k] === 'string' && md[k] !== '', `${pw}: no ${k}`);
    expect(/^\d+$/.test(md['baton.seed'] ?? ''), `${pw}: baton.seed is ${md['baton.seed']}`);
    if (md['baton.env_config']) {
      try { JSON.parse(md['baton.env_config']); } catch (e) { fail(`${pw}: baton.env_config is not JSON: ${e.message}`); }
    }
    let obs;
    let act;
    try {
      obs = parseSpace(JSON.parse(md['baton.observation_space']), 'observation_space');
      act = parseSpace(JSON.parse(md['baton.action_space']), 'action_space');
    } catch (e) {
      fail(`${pw}: the spaces JSON does not parse as the spaces spec: ${e.message}`);
      continue;
    }
    const obsDim = Number(md['baton.observation_dim']);
    const maskLen = Number(md['baton.mask_len']);
    const at = actionType(act);
    expect(obsDim === obs.flatDim, `${pw}: baton.observation_dim ${obsDim}; the observation space flattens to ${obs.flatDim}`);
    expect(Number(md['baton.action_dim']) === at.dim, `${pw}: baton.action_dim ${md['baton.action_dim']}; want ${at.dim} for ${act.type}`);
    expect(Number.isInteger(maskLen) && maskLen >= 0, `${pw}: baton.mask_len ${md['baton.mask_len']}`);
    if (act.type === 'discrete' && maskLen > 0) expect(maskLen === act.n, `${pw}: mask_len ${maskLen} for Discrete(${act.n})`);
    checkFields(pw, r.schema, stepFields(obsDim, at.type, maskLen));
    const sp = { obs: md['baton.observation_space'], act: md['baton.action_space'], obsDim, maskLen, actDim: at.dim };
    if (spaces === null) spaces = sp;
    else expect(JSON.stringify(sp) === JSON.stringify(spaces), `${pw}: the spaces differ from the agent's first part`);

    fig.batches += r.batches.length;
    for (const batch of r.batches) {
      const col = (n) => batch.getChild(n);
      const c = {
        trial: col('trial_id'), episode: col('episode'), tick: col('tick'), index: col('index'), id: col('agent_id'),
        parent: col('parent_agent_id'), start: col('start'), acting: col('acting'), obs: col('observation'),
        action: col('action'), mask: col('action_mask'), reward: col('reward'), sources: col('reward_sources'),
        term: col('terminated'), trunc: col('truncated'), span: col('span_ticks'), msgs: col('messages'),
      };
      if (Object.entries(c).some(([k, v]) => v === null && !(k === 'mask' && maskLen === 0))) {
        fail(`${pw}: a column is missing`);
        continue;
      }
      for (let i = 0; i < batch.numRows; i++) {
        const rw = `${pw}: row ${fig.rows}`;
        fig.rows++;
        const trial = c.trial.get(i);
        const episode = c.episode.get(i);
        const tick = Number(c.tick.get(i));
        const id = c.id.get(i);
        const start = c.start.get(i);
        const acting = c.acting.get(i);
        const span = c.span.get(i);
        fig.trials.add(trial);
        fig.ids.add(`${trial}/${id}`);
        if (c.parent.get(i) === null) fig.parent_null++;
        fig.start += start ? 1 : 0;
        fig.acting += acting ? 1 : 0;
        fig.terminated += c.term.get(i) ? 1 : 0;
        fig.truncated += c.trunc.get(i) ? 1 : 0;
        fig.episode_sum += episode;
        fig.tick_sum += tick;
        fig.index_sum += c.index.get(i);
        fig.span_ticks_sum += span;

        const o = c.obs.get(i).toArray();
        expect(o.length === obsDim, `${rw}: observation of ${o.length} values`);
        fig.obs_checksum += checksum(o);
        if (obs.type === 'box') {
          for (let j = 0; j < o.length; j++) {
            if (!(o[j] >= obs.low[j] && o[j] <= obs.high[j])) {
              fail(`${rw}: observation[${j}] = ${o[j]} outside [${obs.low[j]}, ${obs.high[j]}]`);
              break;
            }
          }
        }

        const a = c.action.get(i);
        if (start) {
          expect(a === null, `${rw}: a start row with an action`);
          expect(span === 0, `${rw}: a start row with span_ticks ${span}`);
          expect(c.reward.get(i) === 0, `${rw}: a start row with reward ${c.reward.get(i)}`);
          fig.action_null++;
        } else if (expect(a !== null, `${rw}: no action on a row that is not a start row`)) {
          if (act.type === 'discrete') {
            const v = Number(a);
            expect(Number.isInteger(v) && v >= act.start && v < act.start + act.n, `${rw}: action ${a} outside Discrete(${act.n}, start=${act.start})`);
            fig.action_checksum += v;
          } else {
            const v = a.toArray();
            expect(v.length === at.dim, `${rw}: action of ${v.length} values; want ${at.dim}`);
            fig.action_checksum += checksum(v);
          }
        }

        if (maskLen > 0) {
          const m = c.mask.get(i);
          if (m === null) fig.mask_null++;
          else for (const x of m.toArray()) fig.mask_true += x ? 1 : 0;
        }

        const reward = c.reward.get(i);
        fig.reward_sum += reward;
        const srcs = c.sources.get(i);
        let srcSum = 0;
        for (let j = 0; j < srcs.length; j++) {
          const s = srcs.get(j);
          const sname = s.source;
          const sval = s.value;
          if (j === 0) expect(sname === 'env', `${rw}: first reward source is ${sname}; want env`);
          const ss = fig.sources[sname] ?? { count: 0, sum: 0 };
          ss.count++;
          ss.sum += sval;
          fig.sources[sname] = ss;
          srcSum += sval;
        }
        expect(near(reward, srcSum, 1e-5, 1e-5), `${rw}: reward ${reward} is not the sum of its sources ${srcSum}`);

        const msgs = c.msgs.get(i);
        fig.messages += msgs.length;
        for (let j = 0; j < msgs.length; j++) fig.message_bytes += msgs.get(j).payload.length;

        // Retroactive rewards for this step.
        const key = `${trial}\u0000${episode}\u0000${tick}\u0000${id}`;
        let total = reward;
        let inEpisode = reward;
        for (const rr of retro.get(key) ?? []) {
          fig.retro_sum += rr.value;
          total += rr.value;
          if (rr.arrived_episode === episode) inEpisode += rr.value;
        }
        const ek = `${trial}/${episode}`;
        fig.returns.set(ek, (fig.returns.get(ek) ?? 0) + total);
        fig.retro_in_episode.set(ek, (fig.retro_in_episode.get(ek) ?? 0) + inEpisode);

        // The transition pairing of datalog/doc.go.
        const sk = `${trial}\u0000${episode}\u0000${id}`;
        const prev = last.get(sk);
        if (start) {
          expect(prev === undefined, `${rw}: a start row for ${id} after other rows of it in episode ${episode} of ${trial}`);
        } else if (expect(prev !== undefined, `${rw}: ${id}'s first row in episode ${episode} of ${trial} is not a start row`)) {
          expect(prev.acting, `${rw}: the previous row of ${id} did not act`);
          expect(tick - span === prev.tick, `${rw}: tick ${tick} - span_ticks ${span} is not the previous row's tick ${prev.tick}`);
          expect(!prev.done, `${rw}: a row of ${id} after its sub-episode ended`);
        }
        last.set(sk, { tick, acting, done: c.term.get(i) || c.trunc.get(i) });
      }
    }
  }
  return { fig, spaces };
}

// ---------------------------------------------------------------------------------
// Side tables.

function readSide(t, compression) {
  const rows = [];
  for (const p of t?.parts ?? []) {
    const r = readPart(p.path);
    if (r === null) continue;
    const pw = `_${t.table}/${p.path.split('/').pop()}`;
    checkCommonMetadata(pw, metadataOf(r.schema), t.table, compression);
    checkFields(pw, r.schema, sideFields[t.table]);
    for (const b of r.batches) for (const row of b.toArray()) rows.push(row.toJSON());
  }
  return rows;
}

// ---------------------------------------------------------------------------------

function stats(xs) {
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  const std = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / n);
  return { mean, std, min: Math.min(...xs), max: Math.max(...xs) };
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const dump = JSON.parse(readFileSync(args.dump, 'utf8'));
  const inspect = args.inspect ? JSON.parse(readFileSync(args.inspect, 'utf8')) : null;
  const tables = listLog(args.dir);
  const side = Object.fromEntries(tables.filter((t) => t.table !== 'steps').map((t) => [t.table, t]));
  const agents = tables.filter((t) => t.table === 'steps');
  const nparts = tables.reduce((s, t) => s + t.parts.length, 0);
  expect(nparts === dump.parts, `${nparts} parts; the Go reader found ${dump.parts}`);
  expect(agents.length > 0, 'no agent folder');

  // Side tables first: the retroactive rewards join the steps.
  const trialRows = readSide(side.trials, args.compression);
  const episodeRows = readSide(side.episodes, args.compression);
  const rewardRows = readSide(side.rewards, args.compression);
  const retro = new Map();
  for (const r of rewardRows) {
    const key = `${r.trial_id}\u0000${r.episode}\u0000${Number(r.tick)}\u0000${r.agent_id}`;
    if (!retro.has(key)) retro.set(key, []);
    retro.get(key).push({ value: r.value, arrived_episode: r.arrived_episode });
  }
  expect(rewardRows.length === dump.rewards, `_rewards: ${rewardRows.length} rows; the Go reader read ${dump.rewards}`);

  // Trials: the latest state of each, with the fields of its row that has them.
  const trials = new Map();
  for (const r of trialRows) {
    const t = trials.get(r.trial_id) ?? { id: r.trial_id, state: '', env: '', seed: '0', episodes: 0, agents: null };
    t.state = r.state;
    if (r.env !== null) {
      t.env = r.env;
      t.seed = String(r.seed);
      t.episodes = Number(r.episodes);
      t.agents = JSON.parse(r.agents);
      JSON.parse(r.policies);
      if (r.config !== null) JSON.parse(r.config);
    }
    trials.set(r.trial_id, t);
  }
  const jsTrials = [...trials.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const goTrials = dump.trials ?? [];
  expect(jsTrials.length === goTrials.length, `_trials: ${jsTrials.length} trials; the Go reader read ${goTrials.length}`);
  for (let i = 0; i < Math.min(jsTrials.length, goTrials.length); i++) {
    const { agents: _, ...js } = jsTrials[i];
    expect(JSON.stringify(js) === JSON.stringify(goTrials[i]), `_trials: ${JSON.stringify(js)}; the Go reader read ${JSON.stringify(goTrials[i])}`);
  }

  // Episodes.
  const goEps = dump.episodes ?? [];
  expect(episodeRows.length === goEps.length, `_episodes: ${episodeRows.length} rows; the Go reader read ${goEps.length}`);
  // baton inspect's returns are the episodes table's plus the retroactive rewards
  // that arrived in a later episode.
  const late = new Map();
  for (const r of rewardRows) {
    if (r.arrived_episode > r.episode) {
      const k = `${r.trial_id}/${r.episode}/${r.agent}`;
      late.set(k, (late.get(k) ?? 0) + r.value);
    }
  }
  const epReturns = new Map(); // agent -> [return]
  const epByKey = new Map();
  let successes = 0;
  let judged = 0;
  for (let i = 0; i < episodeRows.length; i++) {
    const r = episodeRows[i];
    const returns = {};
    if (r.success !== null) {
      judged++;
      successes += r.success ? 1 : 0;
    }
    for (const x of r.returns) {
      returns[x.agent] = x.value;
      if (!epReturns.has(x.agent)) epReturns.set(x.agent, []);
      epReturns.get(x.agent).push(x.value + (late.get(`${r.trial_id}/${r.episode}/${x.agent}`) ?? 0));
    }
    epByKey.set(`${r.trial_id}/${r.episode}`, returns);
    const metrics = {};
    for (const x of r.metrics) {
      metrics[x.name] = x.value;
    }
    const js = { trial: r.trial_id, episode: r.episode, seed: String(r.seed), ticks: Number(r.ticks), truncated: r.truncated, success: r.success, returns, metrics };
    const go = goEps[i];
    if (go === undefined) continue;
    const same = js.trial === go.trial && js.episode === go.episode && js.seed === go.seed && js.ticks === go.ticks
      && js.truncated === go.truncated && js.success === go.success
      && Object.keys(returns).length === Object.keys(go.returns).length
      && Object.entries(returns).every(([k, v]) => near(v, go.returns[k]))
      && Object.keys(metrics).length === Object.keys(go.metrics ?? {}).length
      && Object.entries(metrics).every(([k, v]) => near(v, go.metrics[k]));
    expect(same, `_episodes row ${i}: ${JSON.stringify(js)}; the Go reader read ${JSON.stringify(go)}`);
  }

  // Agents.
  const goAgents = dump.agents ?? {};
  expect(JSON.stringify(agents.map((a) => a.agent).sort()) === JSON.stringify(Object.keys(goAgents).sort()),
    `agents ${agents.map((a) => a.agent)}; the Go reader found ${Object.keys(goAgents)}`);
  const summary = [];
  let jsRows = 0;
  for (const t of agents) {
    const { fig, spaces } = checkAgent(t.agent, t.parts, args.compression, retro);
    const go = goAgents[t.agent];
    if (!expect(go !== undefined, `agent ${t.agent}: not in the Go reader's figures`)) continue;
    const js = {
      ...fig, trials: fig.trials.size, agent_ids: fig.ids.size, episodes: fig.returns.size,
    };
    jsRows += js.rows;
    for (const k of ['rows', 'trials', 'episodes', 'agent_ids', 'parent_null', 'start', 'acting', 'terminated', 'truncated',
      'episode_sum', 'tick_sum', 'index_sum', 'span_ticks_sum', 'action_null', 'mask_null', 'mask_true', 'messages', 'message_bytes']) {
      expect(js[k] === go[k], `agent ${t.agent}: ${k} ${js[k]}; the Go reader ${go[k]}`);
    }
    for (const k of ['obs_checksum', 'action_checksum', 'reward_sum', 'retro_sum']) {
      expect(near(js[k], go[k]), `agent ${t.agent}: ${k} ${js[k]}; the Go reader ${go[k]}`);
    }
    const srcNames = Object.keys(js.sources).sort();
    expect(JSON.stringify(srcNames) === JSON.stringify(Object.keys(go.sources).sort()), `agent ${t.agent}: reward sources ${srcNames}; the Go reader ${Object.keys(go.sources)}`);
    for (const s of srcNames) {
      const a = js.sources[s];
      const b = go.sources[s] ?? { count: -1, sum: NaN };
      expect(a.count === b.count && near(a.sum, b.sum), `agent ${t.agent}: source ${s}: ${JSON.stringify(a)}; the Go reader ${JSON.stringify(b)}`);
    }
    expect(fig.returns.size === Object.keys(go.returns).length, `agent ${t.agent}: ${fig.returns.size} episodes with rows; the Go reader ${Object.keys(go.returns).length}`);
    for (const [k, v] of fig.returns) {
      expect(k in go.returns && near(v, go.returns[k]), `agent ${t.agent}: return of ${k} ${v}; the Go reader ${go.returns[k]}`);
    }
    if (spaces !== null) {
      expect(JSON.stringify(JSON.parse(spaces.obs)) === JSON.stringify(go.observation_space), `agent ${t.agent}: observation space differs from the Go reader's`);
      expect(JSON.stringify(JSON.parse(spaces.act)) === JSON.stringify(go.action_space), `agent ${t.agent}: action space differs from the Go reader's`);
      expect(spaces.obsDim === go.observation_dim && spaces.actDim === go.action_dim && spaces.maskLen === go.mask_len, `agent ${t.agent}: dimensions differ from the Go reader's`);
      // The trials table describes the same spaces.
      for (const tr of jsTrials) {
        const a = tr.agents?.find((x) => x.name === t.agent);
        if (a === undefined) continue;
        expect(JSON.stringify(a.observation_space) === JSON.stringify(JSON.parse(spaces.obs))
          && JSON.stringify(a.action_space) === JSON.stringify(JSON.parse(spaces.act)) && a.mask_len === spaces.maskLen,
        `agent ${t.agent}: trial ${tr.id}'s agents JSON describes other spaces than the parts' metadata`);
      }
    }
    // The returns that the episodes table recorded at the end of each episode are the
    // rows' rewards (logged as float32) with the retroactive rewards received so far.
    for (const [k, v] of fig.retro_in_episode) {
      const rets = epByKey.get(k);
      if (rets === undefined || !(t.agent in rets)) continue; // an episode that did not end
      expect(near(v, rets[t.agent], 1e-5, 1e-4), `agent ${t.agent}: episode ${k}: the rows' rewards sum to ${v}; the episodes table says ${rets[t.agent]}`);
    }

    if (inspect !== null) {
      const ins = inspect.agents?.[t.agent];
      if (expect(ins !== undefined, `agent ${t.agent}: not in baton inspect --json`)) {
        expect(ins.rows === js.rows, `agent ${t.agent}: ${js.rows} rows; baton inspect says ${ins.rows}`);
        const eps = epReturns.get(t.agent) ?? [];
        expect(ins.episodes === eps.length, `agent ${t.agent}: ${eps.length} episodes in the episodes table; baton inspect says ${ins.episodes}`);
        if (eps.length > 0 && expect(ins.return && typeof ins.return.mean === 'number', `agent ${t.agent}: baton inspect gives no return mean`)) {
          const want = stats(eps);
          for (const k of ['mean', 'std', 'min', 'max']) {
            if (k in ins.return) expect(near(ins.return[k], want[k], 1e-6, 1e-6), `agent ${t.agent}: return ${k} ${want[k]} (population std) from the episodes table; baton inspect says ${ins.return[k]}`);
          }
        }
      }
    }
    summary.push(`${t.agent}: ${js.rows} rows in ${t.parts.length} parts, ${fig.batches} batches`);
  }
  if (inspect !== null) {
    // The log's totals, where baton inspect gives them.
    const states = { ended: 0, stopped: 0, failed: 0, unfinished: 0 };
    for (const t of jsTrials) {
      if (t.state in states && t.state !== 'unfinished') states[t.state]++;
      else states.unfinished++;
    }
    const bytes = tables.reduce((s, t) => s + t.parts.reduce((b, p) => b + statSync(p.path).size, 0), 0);
    const rows = jsRows;
    const want = {
      trials: jsTrials.length, ...states, episodes: episodeRows.length, rows, parts: nparts, bytes,
      envs: [...new Set(jsTrials.map((t) => t.env).filter((e) => e !== ''))],
    };
    if (judged > 0) want.successes = successes;
    for (const [k, v] of Object.entries(want)) {
      if (k in inspect) expect(JSON.stringify(inspect[k]) === JSON.stringify(v), `log: ${k} ${JSON.stringify(v)}; baton inspect says ${JSON.stringify(inspect[k])}`);
    }
    if ('success_rate' in inspect && judged > 0) {
      expect(near(inspect.success_rate, successes / judged), `log: success rate ${successes / judged}; baton inspect says ${inspect.success_rate}`);
    }
    for (const name of Object.keys(inspect.agents ?? {})) {
      const rows = inspect.agents[name]?.rows ?? 0;
      expect(rows === 0 || agents.some((a) => a.agent === name), `baton inspect gives agent ${name} ${rows} rows; the log has no folder for it`);
    }
  }

  const what = `${args.dir} (${args.compression ?? 'any'} compression${inspect ? ', baton inspect' : ''})`;
  if (failures.length > 0) {
    console.error(`arrowcheck: ${failures.length} failures in ${what}`);
    process.exit(1);
  }
  console.log(`arrowcheck: ok: ${what}: ${summary.join('; ')}; ${trialRows.length} trial rows, ${episodeRows.length} episodes, ${rewardRows.length} retroactive rewards; ${nparts} files`);
}

main();
