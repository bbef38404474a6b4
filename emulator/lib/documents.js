"use strict";

// Handlers for everything under /dbs/{db}/colls/{coll}/docs and .../pkranges:
// point operations, queries, transactional batches and the change feed.
// Each returns { status, body, headers, charge }, charge being the modelled
// request charge in hundredths of an RU (charge.js); errors are thrown as
// CosmosError.

const pk = require("./partition-key");
const query = require("./query");
const charge = require("./charge");
const { applyPatch } = require("./patch");
const { itemKey, entryJson } = require("./store");
const { CosmosError, badRequest, notFound, conflict, preconditionFailed, partitionKeyRangeGone } = require("./errors");

const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
const MAX_BATCH_OPERATIONS = 100;
// Cosmos's page size when x-ms-max-item-count is absent.
const DEFAULT_PAGE_SIZE = 100;
// We model a container as a single physical partition; this is its range.
const RANGE_ID = "0";
const PKRANGES_ETAG = '"1"';

const trueHeader = (req, name) => String(req.headers[name] || "").toLowerCase() === "true";

// azcosmos sends "Prefer: return=minimal" on writes unless the client enables
// EnableContentResponseOnWrite; Cosmos then answers without a body.
const wantsMinimal = req => /return=minimal/i.test(String(req.headers.prefer || ""));

function pageSize(req) {
  const raw = req.headers["x-ms-max-item-count"];
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const n = Number.parseInt(raw, 10);
  if (Number.isNaN(n)) throw badRequest(`Invalid x-ms-max-item-count '${raw}'.`);
  return n > 0 ? n : Infinity;
}

// Etags compare by value whether or not a client kept the quotes.
const bareEtag = etag => String(etag).replace(/^W\//, "").replace(/^"(.*)"$/, "$1");

function checkIfMatch(ifMatch, entry) {
  if (ifMatch === undefined || ifMatch === null || ifMatch === "" || ifMatch === "*") return;
  if (bareEtag(ifMatch) !== bareEtag(entry.doc._etag)) throw preconditionFailed();
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new CosmosError(413, "Request size is too large.");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readJson(req) {
  const raw = await readBody(req);
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw badRequest(`The request body is not valid JSON: ${err.message}`);
  }
}

function containerStore(ctx) {
  const { account, stores, params } = ctx;
  const collection = account.database(params.dbId).collection(params.collId);
  if (!collection.read()) throw notFound("Resource Not Found: the database or container does not exist.");
  return stores.for(collection);
}

// The partition key of a point operation, which Cosmos requires in full.
function pointPartitionKey(req, store) {
  const components = pk.fromHeader(req);
  if (components === null) {
    if (store.paths.length === 0) return [];
    throw badRequest("PartitionKey value must be supplied for this operation.");
  }
  if (components.length !== store.paths.length) {
    throw badRequest(
      `Partition key ${JSON.stringify(components)} has ${components.length} component(s); the container's definition has ${store.paths.length}.`
    );
  }
  return components;
}

// A physical-range id addressed by azcosmos (change feed, ReadManyItems).
function checkRangeId(req) {
  const id = req.headers["x-ms-documentdb-partitionkeyrangeid"];
  if (id !== undefined && id !== RANGE_ID) throw partitionKeyRangeGone(id);
}

function validateDocument(body) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest("The input content is invalid: a document must be a JSON object.");
  }
  const { id, ttl } = body;
  if (id === undefined || id === null || id === "") {
    throw badRequest("The input content is invalid because the required properties - 'id; ' - are missing.");
  }
  if (typeof id !== "string") throw badRequest("The input content is invalid: 'id' must be a string.");
  if (/[/\\?#]/.test(id)) throw badRequest(`The id '${id}' contains '/', '\\', '?' or '#', which Cosmos does not allow.`);
  if (Buffer.byteLength(id) > 1023) throw badRequest("The id is longer than 1023 bytes.");
  if (ttl !== undefined && ttl !== null && !(Number.isInteger(ttl) && (ttl > 0 || ttl === -1) && ttl <= 2147483647)) {
    throw badRequest(`The value of 'ttl' (${JSON.stringify(ttl)}) is invalid: it must be a positive integer or -1.`);
  }
}

function checkPartitionKeyMatches(expected, components) {
  if (pk.key(expected) !== pk.key(components)) {
    throw badRequest(
      `PartitionKey extracted from document ${pk.key(components)} doesn't match the one specified in the header ${pk.key(expected)}.`
    );
  }
}

function stage(txn, store, key, components, body, previous) {
  const entry = store.newEntry(key, components, body, previous, txn.now);
  if (Buffer.byteLength(entryJson(entry)) > MAX_DOCUMENT_BYTES) {
    throw new CosmosError(413, "Request size is too large: a document may not exceed 2 MB.");
  }
  txn.put(entry);
  return entry;
}

const itemBytes = entry => Buffer.byteLength(entryJson(entry));

// The result of a write: a create, replace, upsert or patch of entry.
const written = (statusCode, entry) => ({ statusCode, entry, charge: charge.write(itemBytes(entry)) });

// The operations, shared by point requests and batches. Each works on a
// transaction and returns { statusCode, entry?, charge }, charge being the
// modelled request charge in hundredths of an RU (see charge.js).
const operations = {
  create(txn, store, partition, { resourceBody }) {
    validateDocument(resourceBody);
    const components = pk.extract(resourceBody, store.paths);
    checkPartitionKeyMatches(partition, components);
    const key = itemKey(components, resourceBody.id);
    if (txn.get(key)) throw conflict();
    return written(201, stage(txn, store, key, components, resourceBody, null));
  },

  // Replace semantics (If-Match honoured) when the item exists, create
  // semantics otherwise: Cosmos ignores If-Match for a missing item.
  upsert(txn, store, partition, { resourceBody, ifMatch }) {
    validateDocument(resourceBody);
    const components = pk.extract(resourceBody, store.paths);
    checkPartitionKeyMatches(partition, components);
    const key = itemKey(components, resourceBody.id);
    const existing = txn.get(key);
    if (existing) checkIfMatch(ifMatch, existing);
    return written(existing ? 200 : 201, stage(txn, store, key, components, resourceBody, existing));
  },

  replace(txn, store, partition, { id, resourceBody, ifMatch }) {
    validateDocument(resourceBody);
    if (resourceBody.id !== id) {
      throw badRequest(`The id '${resourceBody.id}' in the document does not match the id '${id}' being replaced.`);
    }
    const components = pk.extract(resourceBody, store.paths);
    checkPartitionKeyMatches(partition, components);
    const key = itemKey(partition, id);
    const existing = txn.get(key);
    if (!existing) throw notFound();
    checkIfMatch(ifMatch, existing);
    return written(200, stage(txn, store, key, components, resourceBody, existing));
  },

  read(txn, store, partition, { id }) {
    const existing = txn.get(itemKey(partition, id));
    if (!existing) throw notFound();
    return { statusCode: 200, entry: existing, charge: charge.read(itemBytes(existing)) };
  },

  delete(txn, store, partition, { id, ifMatch }) {
    const key = itemKey(partition, id);
    const existing = txn.get(key);
    if (!existing) throw notFound();
    checkIfMatch(ifMatch, existing);
    txn.remove(key);
    return { statusCode: 204, charge: charge.write(itemBytes(existing)) };
  },

  // resourceBody is azcosmos's PatchOperations: {"condition"?, "operations"}.
  patch(txn, store, partition, { id, resourceBody, ifMatch }) {
    const spec = Array.isArray(resourceBody) ? { operations: resourceBody } : resourceBody || {};
    const key = itemKey(partition, id);
    const existing = txn.get(key);
    if (!existing) throw notFound();
    checkIfMatch(ifMatch, existing);
    if (spec.condition && !query.matchesCondition(spec.condition, existing.doc, store.udf)) {
      throw preconditionFailed("The condition specified in the patch request is not satisfied.");
    }
    const protectedPaths = new Set(["/id", ...store.paths]);
    const patched = applyPatch(existing.doc, spec.operations, protectedPaths);
    validateDocument(patched);
    return written(200, stage(txn, store, key, existing.components, patched, existing));
  }
};

function itemReply(req, store, { statusCode, entry, charge: hundredths }, isWrite) {
  const headers = { "x-ms-session-token": `0:-1#${store.lsn}` };
  if (!entry) return { status: statusCode, headers, charge: hundredths };
  headers.etag = entry.doc._etag;
  const body = isWrite && wantsMinimal(req) ? "" : entryJson(entry);
  return { status: statusCode, body, headers, charge: hundredths };
}

// Runs one operation in its own transaction.
function single(ctx, store, operation, input, isWrite) {
  const txn = store.begin(Date.now());
  const result = operations[operation](txn, store, pointPartitionKey(ctx.req, store), input);
  txn.commit();
  return itemReply(ctx.req, store, result, isWrite);
}

// Bodies are read before the container is looked up: nothing may await
// between resolving the store and committing to it.
async function createDocument(ctx) {
  const resourceBody = await readJson(ctx.req);
  const store = containerStore(ctx);
  return single(ctx, store, "create", { resourceBody }, true);
}

async function upsertDocument(ctx) {
  const resourceBody = await readJson(ctx.req);
  const store = containerStore(ctx);
  return single(ctx, store, "upsert", { resourceBody, ifMatch: ctx.req.headers["if-match"] }, true);
}

async function replaceDocument(ctx) {
  const resourceBody = await readJson(ctx.req);
  const store = containerStore(ctx);
  const input = { id: ctx.params.docId, resourceBody, ifMatch: ctx.req.headers["if-match"] };
  return single(ctx, store, "replace", input, true);
}

async function patchDocument(ctx) {
  const resourceBody = await readJson(ctx.req);
  const store = containerStore(ctx);
  const input = { id: ctx.params.docId, resourceBody, ifMatch: ctx.req.headers["if-match"] };
  return single(ctx, store, "patch", input, true);
}

function deleteDocument(ctx) {
  const store = containerStore(ctx);
  return single(ctx, store, "delete", { id: ctx.params.docId, ifMatch: ctx.req.headers["if-match"] }, true);
}

function readDocument(ctx) {
  const store = containerStore(ctx);
  const reply = single(ctx, store, "read", { id: ctx.params.docId }, false);
  const ifNoneMatch = ctx.req.headers["if-none-match"];
  if (ifNoneMatch && bareEtag(ifNoneMatch) === bareEtag(reply.headers.etag)) {
    return { status: 304, headers: reply.headers, charge: charge.NOT_MODIFIED };
  }
  return reply;
}

// Transactional batch: every operation succeeds, or none is applied and the
// answer is 207 with the failing operation's status and 424 for the others.
async function batch(ctx) {
  const { req } = ctx;
  const ops = await readJson(req);
  const store = containerStore(ctx);
  if (!Array.isArray(ops) || ops.length === 0) throw badRequest("A batch request must be a non-empty array of operations.");
  if (ops.length > MAX_BATCH_OPERATIONS) {
    throw badRequest(`A batch may contain at most ${MAX_BATCH_OPERATIONS} operations; this one has ${ops.length}.`);
  }
  const partition = pointPartitionKey(req, store);
  const atomic = trueHeader(req, "x-ms-cosmos-batch-atomic");
  const continueOnError = trueHeader(req, "x-ms-cosmos-batch-continue-on-error");
  const minimal = wantsMinimal(req);

  const run = (txn, op) => {
    const name = String((op && op.operationType) || "").toLowerCase();
    if (!Object.prototype.hasOwnProperty.call(operations, name)) {
      throw badRequest(`Operation type '${op && op.operationType}' is not supported in a batch.`);
    }
    let opPartition = partition;
    if (op.partitionKey !== undefined) {
      // Other SDKs send each operation's key, as a JSON string like the header.
      const raw = typeof op.partitionKey === "string" ? op.partitionKey : JSON.stringify(op.partitionKey);
      opPartition = pk.fromHeader({ headers: { [pk.HEADER]: raw } });
      checkPartitionKeyMatches(partition, opPartition);
    }
    return operations[name](txn, store, opPartition, op);
  };
  const success = ({ statusCode, entry, charge: hundredths }, op) => {
    const out = { statusCode, requestCharge: charge.ru(hundredths) };
    if (entry) {
      out.eTag = entry.doc._etag;
      if (!minimal || String(op.operationType).toLowerCase() === "read") out.resourceBody = entry.doc;
    }
    return out;
  };
  const failure = err => {
    if (!(err instanceof CosmosError)) throw err;
    const out = { statusCode: err.statusCode, requestCharge: charge.ru(charge.failure(err.statusCode)) };
    if (err.subStatus) out.subStatusCode = err.subStatus;
    return out;
  };
  const headers = () => ({ "x-ms-session-token": `0:-1#${store.lsn}` });
  // A batch costs what its operations cost; requestCharge values are exact
  // hundredths, so rounding recovers the integers.
  const total = results => results.reduce((sum, r) => sum + Math.round(r.requestCharge * 100), 0);

  if (atomic) {
    const txn = store.begin(Date.now());
    const results = [];
    for (let i = 0; i < ops.length; i += 1) {
      try {
        results.push(success(run(txn, ops[i]), ops[i]));
      } catch (err) {
        const failed = failure(err);
        // Nothing was committed; every other operation failed on account of this one.
        const body = ops.map((_, j) => (j === i ? failed : { statusCode: 424, requestCharge: 0 }));
        return { status: 207, body, headers: headers(), charge: total(body) };
      }
    }
    txn.commit();
    return { status: 200, body: results, headers: headers(), charge: total(results) };
  }

  // Non-atomic (bulk-style) batch: each operation commits on its own.
  const results = [];
  let failedAny = false;
  for (const op of ops) {
    if (failedAny && !continueOnError) {
      results.push({ statusCode: 424, requestCharge: 0 });
      continue;
    }
    const txn = store.begin(Date.now());
    try {
      results.push(success(run(txn, op), op));
      txn.commit();
    } catch (err) {
      results.push(failure(err));
      failedAny = true;
    }
  }
  return { status: failedAny ? 207 : 200, body: results, headers: headers(), charge: total(results) };
}

function parseContinuation(req) {
  const raw = req.headers["x-ms-continuation"];
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw);
    if (parsed && typeof parsed.token === "string") return parsed;
  } catch (err) {
    // fall through
  }
  throw badRequest(`Invalid continuation token ${raw}.`);
}

function feedReply(store, documents, continuation) {
  const headers = { "x-ms-item-count": String(documents.length) };
  if (continuation) headers["x-ms-continuation"] = JSON.stringify(continuation);
  return {
    status: 200,
    body: { _rid: store.rid, Documents: documents, _count: documents.length },
    headers,
    charge: charge.feedPage(documents.length)
  };
}

function runQuery(ctx, store, sql, parameters, prefix) {
  const docs = [];
  for (const entry of store.live(Date.now(), prefix)) docs.push(entry.doc);
  const { result, continuation } = query.run(sql, docs, {
    parameters,
    udf: store.udf,
    maxItemCount: pageSize(ctx.req),
    continuation: parseContinuation(ctx.req),
    compositeIndexes: store.compositeIndexes
  });
  return feedReply(store, result, continuation);
}

// Queries honour the partition-key header even though azcosmos always sends
// x-ms-documentdb-query-enablecrosspartition: true; without the header the
// query spans all partitions (only when cross-partition is enabled).
async function queryDocuments(ctx) {
  const { req } = ctx;
  const spec = await readJson(req);
  const store = containerStore(ctx);
  if (!spec || typeof spec.query !== "string" || spec.query.trim() === "") throw badRequest("The query text is missing.");
  checkRangeId(req);
  const prefix = pk.fromHeader(req);
  const scoped = prefix !== null && prefix.length > 0;
  if (!scoped && store.paths.length > 0 && !trueHeader(req, "x-ms-documentdb-query-enablecrosspartition") &&
      req.headers["x-ms-documentdb-partitionkeyrangeid"] === undefined) {
    throw badRequest(
      "Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception."
    );
  }
  return runQuery(ctx, store, spec.query, spec.parameters, scoped ? prefix : null);
}

// GET .../docs without A-IM: the document feed, scoped like a query.
function readDocuments(ctx) {
  const store = containerStore(ctx);
  checkRangeId(ctx.req);
  const prefix = pk.fromHeader(ctx.req);
  return runQuery(ctx, store, "SELECT * FROM c", [], prefix && prefix.length ? prefix : null);
}

// The change feed in Cosmos's "latest version" mode. Its continuation is the
// container lsn, sent as the etag and returned in If-None-Match:
//   no If-None-Match          from the beginning (or If-Modified-Since)
//   If-None-Match: *          from now
//   If-None-Match: "<lsn>"    everything written after that lsn
// Each live document appears once, at its latest version, in lsn order; hard
// deletes and TTL expiries do not appear. 304 means nothing new.
function changeFeed(ctx) {
  const { req } = ctx;
  const store = containerStore(ctx);
  checkRangeId(req);
  const prefix = pk.fromHeader(req);
  const limit = pageSize(req);

  let after = 0;
  let since = null;
  const ifNoneMatch = req.headers["if-none-match"];
  if (ifNoneMatch === "*") {
    after = store.lsn;
  } else if (ifNoneMatch) {
    const bare = bareEtag(ifNoneMatch);
    if (!/^\d+$/.test(bare)) throw badRequest(`Invalid change feed continuation (If-None-Match) '${ifNoneMatch}'.`);
    after = Number(bare);
  } else if (req.headers["if-modified-since"]) {
    since = Date.parse(req.headers["if-modified-since"]);
    if (Number.isNaN(since)) throw badRequest(`Invalid If-Modified-Since '${req.headers["if-modified-since"]}'.`);
  }

  const page = [];
  let more = false;
  for (const entry of store.live(Date.now(), prefix && prefix.length ? prefix : null)) {
    if (entry.lsn <= after || (since !== null && entry.writtenAt < since)) continue;
    if (page.length === limit) {
      more = true;
      break;
    }
    page.push(entry);
  }

  // A full page continues after its last document; otherwise nothing that
  // matches exists up to the container's current lsn.
  const next = more ? page[page.length - 1].lsn : Math.max(after, store.lsn);
  const headers = { etag: `"${next}"`, lsn: String(store.lsn), "x-ms-session-token": `0:-1#${store.lsn}` };
  if (page.length === 0) return { status: 304, headers, charge: charge.NOT_MODIFIED };
  headers["x-ms-item-count"] = String(page.length);
  const documents = page.map(e => {
    const json = entryJson(e);
    return `${json.slice(0, -1)},"_lsn":${e.lsn}}`;
  });
  return {
    status: 200,
    body: `{"_rid":${JSON.stringify(store.rid)},"Documents":[${documents.join(",")}],"_count":${page.length}}`,
    headers,
    charge: charge.feedPage(page.length)
  };
}

// The container's single partition key range, with its id as the string
// azcosmos expects (the package stores it as the number 0). Answers the
// A-IM (incremental) form azcosmos's routing-map cache uses: 304 once the
// client has our etag.
function readPartitionKeyRanges(ctx) {
  const { req } = ctx;
  const store = containerStore(ctx);
  const headers = { etag: PKRANGES_ETAG };
  if (req.headers["a-im"] && req.headers["if-none-match"] === PKRANGES_ETAG) return { status: 304, headers };
  const { result } = store.collection.partitionKeyRanges.read({});
  const ranges = result.map(r => ({ ...r, id: String(r.id), parents: r.parents || [], lsn: store.lsn }));
  headers["x-ms-item-count"] = String(ranges.length);
  return { status: 200, body: { _rid: store.rid, PartitionKeyRanges: ranges, _count: ranges.length }, headers };
}

module.exports = {
  readJson,
  createDocument,
  upsertDocument,
  replaceDocument,
  patchDocument,
  deleteDocument,
  readDocument,
  readDocuments,
  queryDocuments,
  batch,
  changeFeed,
  readPartitionKeyRanges
};
