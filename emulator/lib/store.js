"use strict";

// Document storage, one ContainerStore per container (keyed by the
// container's _rid). The package keeps databases, containers, UDFs and the
// partition-key-range record; we keep documents ourselves because Cosmos
// semantics we need live here: a per-container log sequence number (the
// change feed continuation), partition-scoped keys, TTL, and transactions.

const crypto = require("crypto");
const pk = require("./partition-key");

// An item is identified by (partition key, id) as in Cosmos; NUL cannot occur
// in the JSON-encoded key, so the concatenation is unambiguous.
const itemKey = (components, id) => `${pk.key(components)}\u0000${id}`;

// Cosmos etags are quoted GUID-like strings, e.g. "\"00000000-...\"", and
// clients hand them back verbatim in If-Match.
const newEtag = () => `"${crypto.randomUUID()}"`;

// Seconds after the last write at which the item expires, or 0 for never.
// As in Cosmos, item ttl only counts when the container has defaultTtl set
// (-1 = no default expiry); without it TTL is off and item ttl is ignored.
function ttlSeconds(itemTtl, defaultTtl) {
  if (defaultTtl === undefined || defaultTtl === null) return 0;
  const ttl = Number.isInteger(itemTtl) ? itemTtl : defaultTtl;
  return ttl > 0 ? ttl : 0;
}

class ContainerStore {
  constructor(collection) {
    const data = collection.read();
    this.rid = data._rid;
    this.self = data._self;
    // Iteration order is ascending lsn: every write re-inserts its entry at
    // the end, which is what the change feed walks.
    this.entries = new Map();
    this.lsn = 0;
    this.docCount = 0;
    this.refresh(collection);
  }

  // The package replaces its Collection object on container replace; take
  // the current one (and its policy) on every request.
  refresh(collection) {
    const data = collection.read();
    this.collection = collection;
    this.paths = pk.definitionPaths(data);
    this.defaultTtl = data.defaultTtl;
    this.compositeIndexes = (data.indexingPolicy && data.indexingPolicy.compositeIndexes) || [];
  }

  get udf() {
    return this.collection.userDefinedFunctions.functions;
  }

  isExpired(entry, now) {
    const ttl = ttlSeconds(entry.doc.ttl, this.defaultTtl);
    return ttl > 0 && now >= entry.writtenAt + ttl * 1000;
  }

  // Expired items are dropped when touched, so reads never see them even
  // between sweeps.
  get(key, now) {
    const entry = this.entries.get(key);
    if (entry && this.isExpired(entry, now)) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  // Live entries in lsn order; prefix (partition-key components) scopes them.
  *live(now, prefix) {
    for (const entry of this.entries.values()) {
      if (this.isExpired(entry, now)) continue;
      if (prefix && !pk.matchesPrefix(entry.components, prefix)) continue;
      yield entry;
    }
  }

  sweep(now) {
    if (this.defaultTtl === undefined || this.defaultTtl === null) return;
    for (const [key, entry] of this.entries) {
      if (this.isExpired(entry, now)) this.entries.delete(key);
    }
  }

  newRid() {
    this.docCount += 1;
    // The package's own document _rid scheme (container rid + counter).
    return this.collection.documents._rid(this.docCount);
  }

  // A stored version of body: user properties plus fresh system properties.
  // A replace keeps the item's _rid, as Cosmos does.
  newEntry(key, components, body, previous, now) {
    // eslint-disable-next-line no-unused-vars
    const { _rid, _self, _etag, _ts, _attachments, _lsn, ...user } = body;
    const rid = previous ? previous.doc._rid : this.newRid();
    const doc = {
      ...user,
      _rid: rid,
      _self: `${this.self.replace(/^\//, "")}/docs/${rid}/`,
      _etag: newEtag(),
      _attachments: "attachments/",
      _ts: Math.floor(now / 1000)
    };
    return { key, components, doc, json: null, writtenAt: now, lsn: 0 };
  }

  begin(now) {
    return new Transaction(this, now);
  }
}

const entryJson = entry => entry.json || (entry.json = JSON.stringify(entry.doc));

// Stages writes and applies them all at commit, so a failing operation in a
// transactional batch leaves nothing behind. The server is single-threaded
// and a transaction never awaits, so no other request interleaves.
class Transaction {
  constructor(store, now) {
    this.store = store;
    this.now = now;
    this.staged = new Map(); // key -> entry, or null for a delete
  }

  get(key) {
    if (this.staged.has(key)) return this.staged.get(key) || undefined;
    return this.store.get(key, this.now);
  }

  put(entry) {
    this.staged.delete(entry.key);
    this.staged.set(entry.key, entry);
  }

  remove(key) {
    this.staged.delete(key);
    this.staged.set(key, null);
  }

  // Each write gets its own lsn, in operation order, so change-feed pages can
  // split anywhere without losing or repeating a document.
  commit() {
    const { store } = this;
    for (const [key, entry] of this.staged) {
      store.lsn += 1;
      store.entries.delete(key);
      if (entry) {
        entry.lsn = store.lsn;
        store.entries.set(key, entry);
      }
    }
    this.staged.clear();
  }
}

class Stores {
  constructor() {
    this.byRid = new Map();
  }

  // The store for a live package Collection (collection.read() is set).
  for(collection) {
    const { _rid: rid } = collection.read();
    let store = this.byRid.get(rid);
    if (store) store.refresh(collection);
    else this.byRid.set(rid, (store = new ContainerStore(collection)));
    return store;
  }

  dropContainer(rid) {
    this.byRid.delete(rid);
  }

  dropDatabase(dbSelf) {
    for (const [rid, store] of this.byRid) {
      if (store.self.startsWith(`${dbSelf}/`)) this.byRid.delete(rid);
    }
  }

  sweep(now) {
    for (const store of this.byRid.values()) store.sweep(now);
  }
}

module.exports = { Stores, itemKey, entryJson };
