"use strict";

// A model of Cosmos DB request units (RU), sent as x-ms-request-charge, so
// that "RU per operation" measured against the emulator means something.
// Real charges depend on the account, the indexing policy and the item's
// shape; this is an approximation with round numbers, not a reproduction.
//
//   operation                               charge (RU)
//   --------------------------------------  ------------------------------------------
//   point read (GET .../docs/{id})          max(1, ceil(item KB))
//   point read answered 304 (If-None-Match) 1
//   create, replace, upsert, patch, delete  5.7 per KB of the item, rounded up to 0.01,
//                                           at least 5.7
//   query, read feed, change feed page      2 + 1 per returned item
//   change feed 304 (nothing new)           1
//   transactional batch                     sum of its operations' charges (each
//                                           operation's requestCharge in the body)
//   404, 409, 412 and other 4xx failures    1 (injected ones too)
//   429 and every 5xx (injected or not)     0
//   anything else (account, databases,      1
//   containers, partition key ranges)
//   /_emulator control endpoints            0
//
// "Item KB" is the UTF-8 size of the stored JSON, system properties included,
// divided by 1024: the item written (for a delete, the item removed) or read.
// 5.7 RU is roughly what Cosmos charges to write a 1 KB item under the default
// indexing policy (index every path); a narrower policy costs less, and a
// larger or deeper item more than the linear rule here.
//
// Charges are kept in hundredths of an RU, integers, so sums are exact.

const KB = 1024;
// 5.7 RU per KB, in hundredths of an RU.
const WRITE_PER_KB = 570;
const WRITE_MIN = 570;
const FEED_BASE = 200;
const FEED_PER_ITEM = 100;
const ONE = 100;

// Hundredths of an RU for a point read of an item of `bytes`.
const read = bytes => Math.max(1, Math.ceil(bytes / KB)) * ONE;

// Hundredths of an RU for a write of an item of `bytes`. The division by a
// power of two is exact in floating point, so the ceiling is too.
const write = bytes => Math.max(WRITE_MIN, Math.ceil((WRITE_PER_KB * bytes) / KB));

// Hundredths of an RU for one page of a query, read feed or change feed.
const feedPage = items => FEED_BASE + FEED_PER_ITEM * items;

// Hundredths of an RU for a failed request, by status.
const failure = status => (status === 429 || status >= 500 ? 0 : ONE);

const NOT_MODIFIED = ONE;
const OTHER = ONE;
const NONE = 0;

// The RU number for a charge in hundredths: what goes on the wire, both as
// the header and as a batch operation's requestCharge.
const ru = hundredths => hundredths / 100;

module.exports = { read, write, feedPage, failure, ru, NOT_MODIFIED, OTHER, NONE };
