"use strict";

// The request handler: our routes for documents, partition key ranges and
// account discovery, then @vercel/cosmosdb-server's own handlers for
// databases, containers and UDFs, all answered in Cosmos's wire format.

const crypto = require("crypto");
const documents = require("./documents");
const charges = require("./charge");
const { CosmosError, codeFor, defaultMessage } = require("./errors");

const packageRoutes = require("@vercel/cosmosdb-server/lib/routes").default;

const isTrue = (req, name) => String(req.headers[name] || "").toLowerCase() === "true";

// POST .../docs means one of four things, told apart by headers exactly as
// the package's router does.
function postDocsHandler(req) {
  if (isTrue(req, "x-ms-documentdb-isquery") || /^application\/query\+json/i.test(String(req.headers["content-type"] || ""))) {
    return documents.queryDocuments;
  }
  if (isTrue(req, "x-ms-documentdb-is-upsert")) return documents.upsertDocument;
  if (isTrue(req, "x-ms-cosmos-is-batch-request")) return documents.batch;
  return documents.createDocument;
}

function route(req, segments) {
  const [dbs, dbId, colls, collId, kind, docId, ...rest] = segments;
  if (dbs !== "dbs" || colls !== "colls" || rest.length > 0) return null;
  const params = { dbId, collId, docId };
  if (kind === "docs" && docId === undefined) {
    if (req.method === "GET") {
      return [params, req.headers["a-im"] ? documents.changeFeed : documents.readDocuments];
    }
    if (req.method === "POST") return [params, postDocsHandler(req)];
  }
  if (kind === "docs" && docId !== undefined) {
    const handler = {
      GET: documents.readDocument,
      PUT: documents.replaceDocument,
      PATCH: documents.patchDocument,
      DELETE: documents.deleteDocument
    }[req.method];
    if (handler) return [params, handler];
  }
  if (kind === "pkranges" && docId === undefined && req.method === "GET") {
    return [params, documents.readPartitionKeyRanges];
  }
  return null;
}

// Splits the path before decoding, so an escaped "/" stays inside its
// segment. Not new URL(): some SDKs send a doubled leading slash, which URL
// would read as a host name.
function pathSegments(url) {
  const [pathname] = url.split("?");
  return pathname
    .split("/")
    .filter(s => s !== "")
    .map(s => {
      try {
        return decodeURIComponent(s);
      } catch (err) {
        throw new CosmosError(400, `Invalid path segment '${s}'.`);
      }
    });
}

// Injected faults, for testing clients' retry paths and for chaos tests:
// Cosmos throttles with 429 under load, loses etag races with 412 and has
// slow moments, none of which the emulator does on its own. A fault matches
// requests by method, path prefix and (ifMatchOnly) the presence of If-Match,
// and then fires either for the next `count` matching requests or, with
// `rate`, for each matching request with that probability. Firing delays the
// request by latencyMs and then, with a status, answers that status instead
// of running the request; without a status the request runs normally after
// the delay. The first fault that matches and fires wins.
const FAULT_FIELDS = new Set(["status", "count", "rate", "latencyMs", "retryAfterMs", "method", "path", "ifMatchOnly"]);

function nonNegativeInteger(spec, name) {
  if (spec[name] === undefined || spec[name] === null) return 0;
  const n = Number(spec[name]);
  if (!Number.isInteger(n) || n < 0) throw new CosmosError(400, `A fault's ${name} must be a non-negative integer.`);
  return n;
}

class Faults {
  constructor() {
    this.active = [];
    this.seq = 0;
  }

  // Validates spec and adds the fault; returns its description (with id).
  add(spec) {
    if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw new CosmosError(400, "A fault must be a JSON object.");
    const unknown = Object.keys(spec).filter(k => !FAULT_FIELDS.has(k));
    if (unknown.length > 0) {
      throw new CosmosError(400, `Unknown fault field(s) ${unknown.join(", ")}; known: ${[...FAULT_FIELDS].join(", ")}.`);
    }
    const status = nonNegativeInteger(spec, "status");
    const latencyMs = nonNegativeInteger(spec, "latencyMs");
    if (status !== 0 && (status < 400 || status > 599)) throw new CosmosError(400, "A fault's status must be between 400 and 599.");
    if (status === 0 && latencyMs === 0) throw new CosmosError(400, "A fault needs a status between 400 and 599, a latencyMs, or both.");
    let rate = null;
    if (spec.rate !== undefined && spec.rate !== null) {
      rate = Number(spec.rate);
      if (typeof spec.rate !== "number" || !(rate > 0 && rate <= 1)) throw new CosmosError(400, "A fault's rate must be a number in (0, 1].");
    }
    // A count-based fault fires once unless told otherwise; a rate-based one
    // until it is removed, or `count` times if that is given too.
    let count = rate === null ? 1 : null;
    if (spec.count !== undefined && spec.count !== null) {
      count = Number(spec.count);
      if (!Number.isInteger(count) || count < 1) throw new CosmosError(400, "A fault's count must be a positive integer.");
    }
    if (spec.ifMatchOnly !== undefined && typeof spec.ifMatchOnly !== "boolean") {
      throw new CosmosError(400, "A fault's ifMatchOnly must be true or false.");
    }
    this.seq += 1;
    const fault = {
      id: `f${this.seq}`,
      status,
      count,
      rate,
      latencyMs,
      retryAfterMs: nonNegativeInteger(spec, "retryAfterMs"),
      method: spec.method ? String(spec.method).toUpperCase() : null,
      path: spec.path ? String(spec.path) : null,
      ifMatchOnly: spec.ifMatchOnly === true,
      hits: 0
    };
    this.active.push(fault);
    return Faults.describe(fault);
  }

  // What GET and POST answer: the spec as applied, and hits so far. Fields
  // that do not apply (no count, no rate, any method, any path) are left out.
  static describe(f) {
    return {
      id: f.id,
      status: f.status,
      count: f.count === null ? undefined : f.count,
      rate: f.rate === null ? undefined : f.rate,
      latencyMs: f.latencyMs,
      retryAfterMs: f.retryAfterMs,
      method: f.method || undefined,
      path: f.path || undefined,
      ifMatchOnly: f.ifMatchOnly,
      hits: f.hits
    };
  }

  list() {
    return this.active.map(Faults.describe);
  }

  get(id) {
    const fault = this.active.find(f => f.id === id);
    return fault ? Faults.describe(fault) : null;
  }

  remove(id) {
    const i = this.active.findIndex(f => f.id === id);
    if (i >= 0) this.active.splice(i, 1);
    return i >= 0;
  }

  clear() {
    this.active = [];
  }

  // The first fault that matches req and fires, if any, with its hit
  // counted; a fault whose count is used up is dropped.
  take(req, pathname) {
    for (let i = 0; i < this.active.length; i += 1) {
      const f = this.active[i];
      if (f.method && f.method !== req.method) continue;
      if (f.path && !pathname.startsWith(f.path)) continue;
      // A lost etag race (412) only exists for conditional writes.
      if (f.ifMatchOnly && !req.headers["if-match"]) continue;
      if (f.rate !== null && Math.random() >= f.rate) continue;
      f.hits += 1;
      if (f.count !== null && f.hits >= f.count) this.active.splice(i, 1);
      return f;
    }
    return null;
  }

  static reply(fault) {
    const headers = {};
    if (fault.retryAfterMs) headers["x-ms-retry-after-ms"] = String(fault.retryAfterMs);
    // 3200 is Cosmos's "request rate too large" sub-status.
    if (fault.status === 429) headers["x-ms-substatus"] = "3200";
    return { status: fault.status, body: { code: codeFor(fault.status), message: `Fault ${fault.id} injected by the emulator.` }, headers };
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

function createApp({ endpoint, account, stores, latencyMs: initialLatencyMs = 0, log = () => {} }) {
  const faults = new Faults();
  // Added to every request but the control endpoints'; PUT /_emulator/latency
  // changes it at run time.
  let latencyMs = initialLatencyMs;

  function accountReply() {
    // The SDK routes to the endpoints advertised here; the package would
    // advertise https://, which is not what we serve.
    const locations = [{ name: "South Central US", databaseAccountEndpoint: `${endpoint}/` }];
    return { status: 200, body: { ...account.read(), writableLocations: locations, readableLocations: locations } };
  }

  // Runs the package's handler for a route we do not own, then keeps our
  // stores in step with container and database deletes.
  async function delegate(req, res, segments) {
    const matched = packageRoutes(req);
    if (!matched) {
      throw new CosmosError(400, `The emulator does not support ${req.method} ${req.url}.`);
    }
    const [params, handler] = matched;
    const isDelete = req.method === "DELETE" && segments[0] === "dbs";
    let dropped = null;
    if (isDelete && segments.length === 4 && segments[2] === "colls") {
      const data = account.database(params.dbId).collection(params.collId).read();
      dropped = data && (() => stores.dropContainer(data._rid));
    } else if (isDelete && segments.length === 2) {
      const data = account.database(params.dbId).read();
      dropped = data && (() => stores.dropDatabase(data._self));
    }
    let body;
    try {
      body = await handler(account, req, res, params);
    } catch (err) {
      // The package parses request bodies with JSON.parse and lets it throw.
      if (err instanceof SyntaxError) throw new CosmosError(400, `The request body is not valid JSON: ${err.message}`);
      throw err;
    }
    if (dropped && res.statusCode < 300) dropped();
    const headers = {};
    if (body && body._etag) headers.etag = body._etag;
    return { status: res.statusCode, body, headers };
  }

  // The /_emulator control endpoints (segments after "_emulator"). They are
  // never delayed nor faulted, and cost no request units.
  //   GET    faults        {"faults":[{id, ..., hits}]}
  //   POST   faults        add one (body: see Faults.add); 201 with its id
  //   DELETE faults        remove all; 204
  //   GET    faults/{id}   one fault
  //   DELETE faults/{id}   remove one; 204, or 404 when there is no such fault
  //   GET    latency       {"ms": N}
  //   PUT    latency       {"ms": N}: the added latency from now on
  async function control(req, segments) {
    const reply = (status, body) => ({ status, body, charge: charges.NONE });
    const methods = allowed => {
      if (!allowed.includes(req.method)) {
        throw new CosmosError(405, `Use ${allowed.join(" or ")} on /_emulator/${segments.join("/")}.`);
      }
    };
    const [resource, id, ...rest] = segments;
    if (resource === "faults" && id === undefined) {
      methods(["GET", "POST", "DELETE"]);
      if (req.method === "GET") return reply(200, { faults: faults.list() });
      if (req.method === "POST") return reply(201, faults.add(await documents.readJson(req)));
      faults.clear();
      return reply(204);
    }
    if (resource === "faults" && rest.length === 0) {
      methods(["GET", "DELETE"]);
      const fault = faults.get(id);
      if (!fault) throw new CosmosError(404, `There is no fault ${id}.`);
      if (req.method === "GET") return reply(200, fault);
      faults.remove(id);
      return reply(204);
    }
    if (resource === "latency" && id === undefined) {
      methods(["GET", "PUT"]);
      if (req.method === "PUT") {
        const spec = await documents.readJson(req);
        const ms = spec && typeof spec === "object" ? spec.ms : undefined;
        if (!Number.isInteger(ms) || ms < 0) throw new CosmosError(400, "The latency must be {\"ms\": N} with N a non-negative integer.");
        latencyMs = ms;
      }
      return reply(200, { ms: latencyMs });
    }
    throw new CosmosError(404, `The emulator has no control endpoint /_emulator/${segments.join("/")}.`);
  }

  async function dispatch(req, res, segments) {
    if (segments.length === 0 && req.method === "GET") return accountReply();
    const matched = route(req, segments);
    if (matched) {
      const [params, handler] = matched;
      return handler({ req, res, account, stores, params });
    }
    return delegate(req, res, segments);
  }

  function send(req, res, { status, body, headers = {}, charge }) {
    let payload = body;
    if (status >= 400 && (payload === undefined || payload === null || typeof payload !== "object" || !payload.code)) {
      // The package answers some errors with {} or {message}; Cosmos always
      // sends a code and a message.
      const packageMessage = payload && typeof payload === "object" && payload.message;
      const message = packageMessage && packageMessage !== "conflict" ? packageMessage : defaultMessage(status);
      payload = { code: codeFor(status), message };
    }
    res.statusCode = status;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.setHeader("x-ms-activity-id", req.headers["x-ms-activity-id"] || crypto.randomUUID());
    // Handlers tag what they did; anything untagged is a failure or an
    // operation the model prices flat (charge.js).
    const hundredths = charge !== undefined ? charge : status >= 400 ? charges.failure(status) : charges.OTHER;
    res.setHeader("x-ms-request-charge", String(charges.ru(hundredths)));
    if (status === 204 || status === 304 || payload === undefined || payload === "") {
      res.end();
      return;
    }
    res.setHeader("content-type", "application/json");
    res.end(typeof payload === "string" ? payload : JSON.stringify(payload));
  }

  function fail(req, res, err, charge) {
    if (!(err instanceof CosmosError)) {
      log(`${req.method} ${req.url}: ${err && err.stack ? err.stack : err}`);
    }
    const status = err instanceof CosmosError ? err.statusCode : 500;
    const headers = err instanceof CosmosError && err.subStatus ? { "x-ms-substatus": String(err.subStatus) } : {};
    const message = err && err.message ? err.message : String(err);
    send(req, res, { status, body: { code: codeFor(status), message }, headers, charge });
  }

  const handle = async (req, res) => {
    try {
      let segments = null;
      let badPath = null;
      try {
        segments = pathSegments(req.url);
      } catch (err) {
        badPath = err;
      }
      if (segments && segments[0] === "_emulator") {
        let reply;
        try {
          reply = await control(req, segments.slice(1));
        } catch (err) {
          fail(req, res, err, charges.NONE);
          return;
        }
        send(req, res, reply);
        return;
      }
      // Decided on arrival, so count-based faults hit requests in the order
      // they came in, whatever their delays.
      const fault = segments ? faults.take(req, `/${segments.join("/")}`) : null;
      const delay = latencyMs + (fault ? fault.latencyMs : 0);
      if (delay > 0) await sleep(delay);
      if (badPath) throw badPath;
      send(req, res, fault && fault.status ? Faults.reply(fault) : await dispatch(req, res, segments));
    } catch (err) {
      if (res.headersSent) {
        res.destroy(err);
        return;
      }
      fail(req, res, err);
    }
  };

  return (req, res) => {
    handle(req, res).catch(err => {
      log(`unhandled: ${err && err.stack ? err.stack : err}`);
      res.destroy();
    });
  };
}

module.exports = { createApp };
