"use strict";

// Cosmos partial document update (PATCH and the batch Patch operation).
// Semantics follow Cosmos's documentation rather than RFC 6902 where they
// differ: "set" creates or overwrites, "incr" creates a missing field, "add"
// on an array index inserts, and every failure is a 400 for the whole patch.

const { badRequest } = require("./errors");

const MAX_OPERATIONS = 10;

function parsePath(path, what = "path") {
  if (typeof path !== "string" || !path.startsWith("/") || path === "/") {
    throw badRequest(`Invalid patch ${what} '${path}'.`);
  }
  return path
    .slice(1)
    .split("/")
    .map(s => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

const isContainer = v => v !== null && typeof v === "object";

// Returns [parent, key] for the last segment, requiring every ancestor to
// exist: Cosmos never creates intermediate objects.
function locate(doc, segments, path) {
  let parent = doc;
  for (const segment of segments.slice(0, -1)) {
    const next = Array.isArray(parent) ? parent[arrayIndex(parent, segment, path, false)] : parent[segment];
    if (!isContainer(next)) throw badRequest(`The path '${path}' does not exist: '${segment}' is missing or not an object or array.`);
    parent = next;
  }
  return [parent, segments[segments.length - 1]];
}

function arrayIndex(array, segment, path, allowEnd) {
  if (!/^\d+$/.test(segment)) throw badRequest(`'${segment}' in '${path}' is not a valid array index.`);
  const index = Number(segment);
  if (index > array.length || (!allowEnd && index === array.length)) {
    throw badRequest(`Index ${index} in '${path}' is out of the array's bounds.`);
  }
  return index;
}

function has(parent, key) {
  return Array.isArray(parent) ? /^\d+$/.test(key) && Number(key) < parent.length : Object.prototype.hasOwnProperty.call(parent, key);
}

function remove(doc, segments, path) {
  const [parent, key] = locate(doc, segments, path);
  if (!has(parent, key)) throw badRequest(`The path '${path}' to remove does not exist.`);
  const value = parent[key];
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return value;
}

function add(doc, segments, path, value) {
  const [parent, key] = locate(doc, segments, path);
  if (Array.isArray(parent)) {
    if (key === "-") parent.push(value);
    else parent.splice(arrayIndex(parent, key, path, true), 0, value);
  } else {
    parent[key] = value;
  }
}

function applyOne(doc, op, protectedPaths) {
  const { op: kind, path, value, from } = op || {};
  const segments = parsePath(path);
  if (segments[0].startsWith("_")) throw badRequest(`The system property '${segments[0]}' cannot be patched.`);
  if (protectedPaths.has(path)) throw badRequest(`The path '${path}' is the id or the partition key and cannot be patched.`);
  switch (kind) {
    case "add":
      add(doc, segments, path, value);
      return;
    case "set": {
      const [parent, key] = locate(doc, segments, path);
      if (Array.isArray(parent)) parent[arrayIndex(parent, key, path, false)] = value;
      else parent[key] = value;
      return;
    }
    case "replace": {
      const [parent, key] = locate(doc, segments, path);
      if (!has(parent, key)) throw badRequest(`The path '${path}' to replace does not exist.`);
      parent[key] = value;
      return;
    }
    case "remove":
      remove(doc, segments, path);
      return;
    case "incr": {
      if (typeof value !== "number") throw badRequest(`The increment value for '${path}' must be a number.`);
      const [parent, key] = locate(doc, segments, path);
      if (Array.isArray(parent)) arrayIndex(parent, key, path, false);
      const current = parent[key];
      if (current === undefined) parent[key] = value;
      else if (typeof current === "number") parent[key] = current + value;
      else throw badRequest(`The value at '${path}' is not a number and cannot be incremented.`);
      return;
    }
    case "move": {
      const fromSegments = parsePath(from, "from path");
      if (fromSegments[0].startsWith("_") || protectedPaths.has(from)) throw badRequest(`'${from}' cannot be moved.`);
      if (path === from || path.startsWith(`${from}/`)) throw badRequest(`'${from}' cannot be moved to '${path}'.`);
      add(doc, segments, path, remove(doc, fromSegments, from));
      return;
    }
    default:
      throw badRequest(`Unsupported patch operation '${kind}'.`);
  }
}

// Applies operations to a deep copy of doc and returns the copy.
// protectedPaths: the id and partition-key paths, which Cosmos refuses.
function applyPatch(doc, operations, protectedPaths) {
  if (!Array.isArray(operations) || operations.length === 0) {
    throw badRequest("The patch request must contain at least one operation.");
  }
  if (operations.length > MAX_OPERATIONS) {
    throw badRequest(`The number of patch operations cannot exceed ${MAX_OPERATIONS}.`);
  }
  const copy = structuredClone(doc);
  operations.forEach((op, i) => {
    try {
      applyOne(copy, op, protectedPaths);
    } catch (err) {
      err.message = `Patch operation ${i}: ${err.message}`;
      throw err;
    }
  });
  return copy;
}

module.exports = { applyPatch };
