// Drives baton serve env and baton serve ui with third-party RPC clients, on the one
// address each serves: grpc-js (with @grpc/proto-loader reading the contract),
// Connect for Node in its binary and JSON forms, and gRPC-Web from Connect for the
// web (fetch, as browsers call) and for Node. Each makes, resets and closes an
// environment's session, gets a refused call's google.rpc.BadRequest detail, and is
// refused without a key; each watches a trial of serve ui to its end.
//
// Run by scripts/rpcclients, with node --test and these variables:
//   BATON_BIN          the baton command
//   BATON_PROTO        the folder of the contract (remote/proto)
//   BATON_DESCRIPTORS  the contract as a FileDescriptorSet (buf build -o FILE)
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";

import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport as createNodeGrpcWebTransport } from "@connectrpc/connect-node";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const need = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`clients.test.mjs: set ${name} (scripts/rpcclients does)`);
  return v;
};
const baton = need("BATON_BIN");
const protoRoot = need("BATON_PROTO");
const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(need("BATON_DESCRIPTORS"))));
const EnvService = registry.getService("baton.v1.EnvService");
const TrialService = registry.getService("baton.v1.TrialService");
const trialState = (name) => registry.getEnum("baton.v1.TrialState").values.find((v) => v.name === name).number;

// google.rpc.BadRequest, described here from google/rpc/error_details.proto, to read
// the details of refused calls.
const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, MESSAGE } = FieldDescriptorProto_Type;
const BadRequest = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "google/rpc/error_details.proto",
    package: "google.rpc",
    syntax: "proto3",
    messageType: [
      {
        name: "BadRequest",
        field: [{ name: "field_violations", jsonName: "fieldViolations", number: 1, label: REPEATED, type: MESSAGE, typeName: ".google.rpc.BadRequest.FieldViolation" }],
        nestedType: [
          {
            name: "FieldViolation",
            field: [
              { name: "field", jsonName: "field", number: 1, label: OPTIONAL, type: STRING },
              { name: "description", jsonName: "description", number: 2, label: OPTIONAL, type: STRING },
            ],
          },
        ],
      },
    ],
  }),
  () => undefined,
).getMessage("google.rpc.BadRequest");

const key = "rpcclients-" + Math.random().toString(36).slice(2).padEnd(16, "0");
const dir = mkdtempSync(join(tmpdir(), "baton-rpcclients-"));
const keyFile = join(dir, "keys");
writeFileSync(keyFile, `maze=${key}\n`);

// serve starts `baton serve KIND` on a free loopback port and returns its address
// and the process.
async function serve(kind) {
  const proc = spawn(baton, ["serve", kind, "--addr", "127.0.0.1:0", "--key-file", keyFile, "--quiet"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (b) => (stderr += b));
  const lines = createInterface({ input: proc.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    proc.once("exit", (code) => reject(new Error(`baton serve ${kind} exited ${code}: ${stderr}`)));
  });
  const m = /on grpc:\/\/(\S+?),?(\s|$)/.exec(first);
  assert.ok(m, `no address in ${JSON.stringify(first)}`);
  return { addr: m[1], proc };
}

// stop ends a server with SIGTERM and waits for it: a graceful shutdown exits 0.
async function stop(s) {
  if (!s || s.proc.exitCode !== null) return;
  const exited = new Promise((resolve) => s.proc.once("exit", (code, signal) => resolve(code ?? signal)));
  s.proc.kill("SIGTERM");
  assert.equal(await exited, 0, "a graceful shutdown");
}

let env, ui;
before(async () => {
  [env, ui] = await Promise.all([serve("env"), serve("ui")]);
});
after(async () => {
  await Promise.all([stop(env), stop(ui)]);
  rmSync(dir, { recursive: true, force: true });
});

const bearer = (k) => (next) => async (req) => {
  req.header.set("Authorization", "Bearer " + k);
  return next(req);
};

// The Connect clients: Connect in binary (connect-node's default form) and JSON,
// and gRPC-Web (binary) over fetch and over node:http.
const connectTransports = {
  "connect-node binary": (addr, k) => createConnectTransport({ baseUrl: `http://${addr}`, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(k)] }),
  "connect-node JSON": (addr, k) => createConnectTransport({ baseUrl: `http://${addr}`, httpVersion: "1.1", useBinaryFormat: false, interceptors: [bearer(k)] }),
  "connect-web gRPC-Web": (addr, k) => createGrpcWebTransport({ baseUrl: `http://${addr}`, useBinaryFormat: true, interceptors: [bearer(k)] }),
  "connect-node gRPC-Web": (addr, k) => createNodeGrpcWebTransport({ baseUrl: `http://${addr}`, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(k)] }),
};

for (const [name, transport] of Object.entries(connectTransports)) {
  describe(name, () => {
    test("a session of serve env: Make, Reset, CloseSession", async () => {
      const c = createClient(EnvService, transport(env.addr, key));
      const made = await c.make({ env: "maze" });
      assert.match(made.session, /^[0-9a-f]{16,}$/);
      assert.equal(made.spec.env, "maze");
      const turn = await c.reset({ session: made.session, seed: 1n });
      assert.equal(turn.next, "strategy_0");
      await c.closeSession({ session: made.session });
      await assert.rejects(c.reset({ session: made.session, seed: 1n }), (e) => ConnectError.from(e).code === Code.NotFound);
    });

    test("a refused call's google.rpc.BadRequest detail", async () => {
      const c = createClient(EnvService, transport(env.addr, key));
      const err = await c.make({ env: "maze", config: '{"nope": 1}' }).then(
        () => assert.fail("a configuration with an unknown field is refused"),
        (e) => ConnectError.from(e),
      );
      assert.equal(err.code, Code.InvalidArgument, err.message);
      assert.match(err.rawMessage, /nope/);
      const details = err.findDetails(BadRequest);
      assert.equal(details.length, 1, `details: ${JSON.stringify(err.details)}`);
      assert.equal(details[0].fieldViolations[0].field, "config");
      assert.match(details[0].fieldViolations[0].description, /nope/);
    });

    test("no key is unauthenticated, with the server's message", async () => {
      const c = createClient(EnvService, transport(env.addr, "not-the-key-0123456789"));
      const err = await c.envs({}).then(() => assert.fail("refused"), (e) => ConnectError.from(e));
      assert.equal(err.code, Code.Unauthenticated, err.message);
      assert.match(err.rawMessage, /invalid API key/);
    });

    test("Watch of serve ui: a trial to its end, and a refused Watch", async () => {
      const c = createClient(TrialService, transport(ui.addr, key));
      const id = `watch-${name.replaceAll(" ", "-")}`;
      const started = await c.start({ spec: { id, env: "maze", seed: 1n, maxTicks: 20n } });
      assert.deepEqual(started.ids, [id]);
      const states = [];
      let last;
      for await (const ch of c.watch({ ids: [id] })) {
        states.push(ch.state);
        last = ch;
      }
      assert.equal(states.at(-1), trialState("TRIAL_STATE_ENDED"), `states ${states}`);
      assert.equal(last.result.episodes.length, 1);
      await assert.rejects(
        (async () => {
          for await (const _ of c.watch({ ids: ["nope"] }));
        })(),
        (e) => ConnectError.from(e).code === Code.PermissionDenied && /does not grant trial "nope"/.test(ConnectError.from(e).rawMessage),
      );
    });
  });
}

describe("grpc-js", () => {
  const pkg = grpc.loadPackageDefinition(
    protoLoader.loadSync("baton/v1/baton.proto", { includeDirs: [protoRoot], longs: String, enums: String, defaults: true }),
  ).baton.v1;
  const md = (k) => {
    const m = new grpc.Metadata();
    m.set("authorization", "Bearer " + k);
    return m;
  };
  const call = (client, method, req, k = key) => promisify(client[method].bind(client))(req, md(k));

  test("a session of serve env, and close() is the client's own", async () => {
    const c = new pkg.EnvService(env.addr, grpc.credentials.createInsecure());
    assert.equal(c.close, grpc.Client.prototype.close, "no method of the contract shadows Client.close");
    const made = await call(c, "make", { env: "maze" });
    const turn = await call(c, "reset", { session: made.session, seed: "1" });
    assert.equal(turn.next, "strategy_0");
    await call(c, "closeSession", { session: made.session });
    await assert.rejects(call(c, "reset", { session: made.session, seed: "1" }), (e) => e.code === grpc.status.NOT_FOUND);

    const err = await call(c, "make", { env: "maze", config: '{"nope": 1}' }).then(() => assert.fail("refused"), (e) => e);
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT, err.message);
    assert.ok(err.metadata.get("grpc-status-details-bin").length > 0, "the status's details");
    c.close();
    assert.equal(c.getChannel().getConnectivityState(false), grpc.connectivityState.SHUTDOWN);
  });

  test("Watch of serve ui", async () => {
    const c = new pkg.TrialService(ui.addr, grpc.credentials.createInsecure());
    try {
      await call(c, "start", { spec: { id: "watch-grpc-js", env: "maze", seed: "1", maxTicks: "20" } });
      const states = [];
      await new Promise((resolve, reject) => {
        const s = c.watch({ ids: ["watch-grpc-js"] }, md(key));
        s.on("data", (ch) => states.push(ch.state));
        s.on("error", reject);
        s.on("end", resolve);
      });
      assert.equal(states.at(-1), "TRIAL_STATE_ENDED", `states ${states}`);
    } finally {
      c.close();
    }
  });
});
