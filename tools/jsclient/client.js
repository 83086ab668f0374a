// A non-Go client of percause, on the OpenTelemetry JavaScript SDK.
//
//   node client.js SCRIPT.json http://127.0.0.1:4318 SEED [--with-units]
//
// SCRIPT.json describes turns span by span (names, attributes, events,
// times; jsclient_test.go writes it from the Go SDK's turns). This client
// records each turn with the JavaScript SDK: a phone tracer and an engine
// tracer with resources of their own, voice.turn as the root of a new trace,
// voice.unit spans as its children, and the engine's tts.take spans under
// the context the phone propagates in a W3C traceparent header. Every span
// is exported in an OTLP/HTTP request of its own, the spans ended in an
// order shuffled by SEED. pippa.turn.units is left out unless --with-units.
// Like most clients it sends each reading as it stands and none of the
// history the Go SDK adds (pippa.live.<kind>.before,
// pippa.pool.resets.before): the collector keeps each launch's turns. Each
// run is a launch of its own (a service.instance.id made at start, as an
// app makes one per launch). It prints one line per turn: "<name> <trace id>".
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const api = require('@opentelemetry/api');
const { W3CTraceContextPropagator } = require('@opentelemetry/core');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { TracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');

const [scriptPath, endpoint, seedArg, ...flags] = process.argv.slice(2);
if (!scriptPath || !endpoint || seedArg === undefined) {
  console.error('usage: node client.js SCRIPT.json OTLP_BASE_URL SEED [--with-units]');
  process.exit(2);
}
const withUnits = flags.includes('--with-units');
const script = JSON.parse(fs.readFileSync(scriptPath, 'utf8'));

// mulberry32: a small seeded generator, so a failing order can be replayed.
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
const random = rng(Number(seedArg));

function provider(resource) {
  // SimpleSpanProcessor exports each span as it ends: one request a span.
  const exporter = new OTLPTraceExporter({ url: endpoint.replace(/\/$/, '') + '/v1/traces' });
  return new TracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
}
// A launch of its own: a new service.instance.id for each process.
const phoneProvider = provider({ ...script.phone_resource, 'service.instance.id': crypto.randomUUID() });
const engineProvider = provider({ ...script.engine_resource, 'service.instance.id': crypto.randomUUID() });
const phone = phoneProvider.getTracer('pippa.voice.js', '1.0.0');
const engine = engineProvider.getTracer('pippa.engine.js', '1.0.0');
const propagator = new W3CTraceContextPropagator();

// attrs turns the script's typed attributes into JavaScript values, without
// the history attributes (*.before) and those in skip.
function attrs(list, skip) {
  const out = {};
  for (const a of list || []) {
    if (a.key.endsWith('.before') || (skip && skip.has(a.key))) continue;
    out[a.key] = a.value;
  }
  return out;
}

function hrtime(ns) {
  // [seconds, nanoseconds], exact for nanosecond timestamps.
  const big = BigInt(ns);
  return [Number(big / 1000000000n), Number(big % 1000000000n)];
}

async function main() {
  const pending = []; // spans to end, with their end time
  const lines = [];
  for (const turn of script.turns) {
    const skip = withUnits ? null : new Set(['pippa.turn.units']);
    let turnSpan, turnCtx;
    for (const s of turn.spans) {
      if (s.name === 'voice.turn') {
        turnSpan = phone.startSpan(s.name, { root: true, startTime: hrtime(s.start), attributes: attrs(s.attributes, skip) },
          api.ROOT_CONTEXT);
        for (const e of s.events || []) turnSpan.addEvent(e.name, attrs(e.attributes), hrtime(e.time));
        turnCtx = api.trace.setSpan(api.ROOT_CONTEXT, turnSpan);
        pending.push([turnSpan, s.end]);
      }
    }
    // The phone's calls carry the turn's traceparent; the engine continues it.
    const carrier = {};
    propagator.inject(turnCtx, carrier, api.defaultTextMapSetter);
    const engineCtx = propagator.extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter);
    for (const s of turn.spans) {
      if (s.name === 'voice.unit') {
        pending.push([phone.startSpan(s.name, { startTime: hrtime(s.start), attributes: attrs(s.attributes) }, turnCtx), s.end]);
      } else if (s.name === 'tts.take') {
        pending.push([engine.startSpan(s.name, { kind: api.SpanKind.SERVER, startTime: hrtime(s.start), attributes: attrs(s.attributes) }, engineCtx), s.end]);
      }
    }
    lines.push(turn.name + ' ' + turnSpan.spanContext().traceId);
  }
  // Shuffle (Fisher–Yates), then end: each end is one export request.
  for (let i = pending.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pending[i], pending[j]] = [pending[j], pending[i]];
  }
  for (const [span, end] of pending) span.end(hrtime(end));
  await phoneProvider.forceFlush();
  await engineProvider.forceFlush();
  await phoneProvider.shutdown();
  await engineProvider.shutdown();
  for (const l of lines) console.log(l);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
