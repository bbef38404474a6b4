#!/usr/bin/env node
"use strict";

// hcpsched's local Azure Cosmos DB (NoSQL) emulator: @vercel/cosmosdb-server
// behind our own HTTP front end, which fixes what azcosmos needs (see
// README.md). Usage:
//
//   node server.js --port N [--host 127.0.0.1] [--latency-ms M] [--verbose]
//
// Once listening it prints one line to stdout, {"listening":"http://HOST:PORT"},
// so a parent started with --port 0 learns the port. It exits on SIGTERM or
// SIGINT, and when its stdin is a pipe that reaches EOF (the parent died).
// --latency-ms is only the starting latency: PUT /_emulator/latency changes
// it, and /_emulator/faults injects failures (README.md, lib/app.js).

const fs = require("fs");
const http = require("http");
const Account = require("@vercel/cosmosdb-server/lib/account").default;
const { createApp } = require("./lib/app");
const { Stores } = require("./lib/store");

const TTL_SWEEP_MS = 1000;
// Longer than any client's idle-connection timeout (Go's default transport
// uses 90 s), so the client, not the server, closes idle keep-alive
// connections and a request never races a server-side close.
const KEEP_ALIVE_MS = 120 * 1000;

function usage(message) {
  if (message) process.stderr.write(`${message}\n`);
  process.stderr.write("usage: node server.js --port N [--host 127.0.0.1] [--latency-ms M] [--verbose]\n");
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { host: "127.0.0.1", port: null, latencyMs: 0, verbose: false };
  const number = (name, value) => {
    const n = Number(value);
    if (value === undefined || !Number.isInteger(n) || n < 0) usage(`${name} needs a non-negative integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    switch (arg) {
      case "--port":
      case "-p":
        opts.port = number(arg, argv[(i += 1)]);
        break;
      case "--host":
        opts.host = argv[(i += 1)];
        break;
      case "--latency-ms":
        opts.latencyMs = number(arg, argv[(i += 1)]);
        break;
      case "--verbose":
        opts.verbose = true;
        break;
      case "--help":
      case "-h":
        usage();
        break;
      default:
        usage(`unknown argument ${arg}`);
    }
  }
  if (opts.port === null || opts.port > 65535) usage("--port is required (0 picks a free port)");
  // The account document advertises host:port as the endpoint clients must
  // use, so it has to be a concrete address, never a wildcard.
  if (!opts.host || ["0.0.0.0", "::", "[::]"].includes(opts.host)) usage("--host must be a concrete address such as 127.0.0.1");
  return opts;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const log = message => process.stderr.write(`${new Date().toISOString()} ${message}\n`);
  const stores = new Stores();
  let app = null;

  const server = http.createServer((req, res) => {
    if (opts.verbose) {
      const started = process.hrtime.bigint();
      res.on("finish", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log(`${req.method} ${req.url} ${res.statusCode} ${ms.toFixed(1)}ms`);
      });
    }
    app(req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000;

  server.on("error", err => {
    log(`cannot listen on ${opts.host}:${opts.port}: ${err.message}`);
    process.exit(1);
  });

  server.listen(opts.port, opts.host, () => {
    const { port } = server.address();
    const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
    const endpoint = `http://${host}:${port}`;
    const account = new Account(opts.host, port);
    app = createApp({ endpoint, account, stores, latencyMs: opts.latencyMs, log });
    setInterval(() => stores.sweep(Date.now()), TTL_SWEEP_MS).unref();
    process.stdout.write(`${JSON.stringify({ listening: endpoint })}\n`);
  });

  let stopping = false;
  const stop = reason => {
    if (stopping) return;
    stopping = true;
    if (opts.verbose) log(`stopping: ${reason}`);
    server.close(() => process.exit(0));
    server.closeAllConnections();
    // Nothing we hold needs flushing; do not wait on stragglers.
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  // A parent that holds our stdin as a pipe (the Go harness) dies => EOF.
  // Only pipes count: under a terminal or with stdin at /dev/null (make, CI,
  // nohup) there is no parent pipe to watch.
  let stdinIsPipe = false;
  try {
    stdinIsPipe = fs.fstatSync(0).isFIFO();
  } catch (err) {
    stdinIsPipe = false;
  }
  if (stdinIsPipe) {
    process.stdin.on("end", () => stop("stdin closed"));
    process.stdin.on("error", () => stop("stdin error"));
    process.stdin.resume();
  }
}

main();
