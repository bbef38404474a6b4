"use strict";

// The request handler: our routes for documents, partition key ranges and
// account discovery, then @vercel/cosmosdb-server's own handlers for
// databases, containers and UDFs, all answered in Cosmos's wire format.

const crypto = require("crypto");
const documents = require("./documents");
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

// Injected failures, for testing clients' retry paths: Cosmos throttles with
// 429 under load, which the emulator otherwise never does. Managed through
//   POST   /_emulator/faults {"status":429,"count":2,"retryAfterMs":10,"method":"GET","path":"/dbs/db"}
//   DELETE /_emulator/faults
// The next `count` requests whose method and path prefix match fail with status.
class Faults {
  constructor() {
    this.pending = [];
  }

  add(spec) {
    const status = Number(spec && spec.status);
    if (!Number.isInteger(status) || status < 400 || status > 599) throw new CosmosError(400, "A fault needs a status between 400 and 599.");
    const count = spec.count === undefined ? 1 : Number(spec.count);
    if (!Number.isInteger(count) || count < 1) throw new CosmosError(400, "A fault's count must be a positive integer.");
    this.pending.push({
      status,
      remaining: count,
      retryAfterMs: Number(spec.retryAfterMs) || 0,
      method: spec.method ? String(spec.method).toUpperCase() : null,
      path: spec.path ? String(spec.path) : null
    });
  }

  clear() {
    this.pending = [];
  }

  // Consumes and returns the first fault that applies to req, if any.
  take(req, pathname) {
    const i = this.pending.findIndex(f => (!f.method || f.method === req.method) && (!f.path || pathname.startsWith(f.path)));
    if (i < 0) return null;
    const fault = this.pending[i];
    fault.remaining -= 1;
    if (fault.remaining === 0) this.pending.splice(i, 1);
    return fault;
  }

  reply(fault) {
    const headers = {};
    if (fault.retryAfterMs) headers["x-ms-retry-after-ms"] = String(fault.retryAfterMs);
    // 3200 is Cosmos's "request rate too large" sub-status.
    if (fault.status === 429) headers["x-ms-substatus"] = "3200";
    return { status: fault.status, body: { code: codeFor(fault.status), message: "Fault injected by the emulator." }, headers };
  }
}

function createApp({ endpoint, account, stores, latencyMs = 0, log = () => {} }) {
  const faults = new Faults();

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

  async function control(req) {
    if (req.method === "POST") faults.add(await documents.readJson(req));
    else if (req.method === "DELETE") faults.clear();
    else throw new CosmosError(405, "Use POST or DELETE on /_emulator/faults.");
    return { status: 204 };
  }

  async function dispatch(req, res) {
    const segments = pathSegments(req.url);
    if (segments.length === 2 && segments[0] === "_emulator" && segments[1] === "faults") return control(req);
    const fault = faults.pending.length > 0 ? faults.take(req, `/${segments.join("/")}`) : null;
    if (fault) return faults.reply(fault);
    if (segments.length === 0 && req.method === "GET") return accountReply();
    const matched = route(req, segments);
    if (matched) {
      const [params, handler] = matched;
      return handler({ req, res, account, stores, params });
    }
    return delegate(req, res, segments);
  }

  function send(req, res, { status, body, headers = {} }) {
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
    // We have no request units; a constant keeps clients that read it happy.
    res.setHeader("x-ms-request-charge", "1");
    if (status === 204 || status === 304 || payload === undefined || payload === "") {
      res.end();
      return;
    }
    res.setHeader("content-type", "application/json");
    res.end(typeof payload === "string" ? payload : JSON.stringify(payload));
  }

  function fail(req, res, err) {
    if (!(err instanceof CosmosError)) {
      log(`${req.method} ${req.url}: ${err && err.stack ? err.stack : err}`);
    }
    const status = err instanceof CosmosError ? err.statusCode : 500;
    const headers = err instanceof CosmosError && err.subStatus ? { "x-ms-substatus": String(err.subStatus) } : {};
    const message = err && err.message ? err.message : String(err);
    send(req, res, { status, body: { code: codeFor(status), message }, headers });
  }

  const handle = async (req, res) => {
    if (latencyMs > 0) await new Promise(resolve => setTimeout(resolve, latencyMs));
    try {
      send(req, res, await dispatch(req, res));
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
