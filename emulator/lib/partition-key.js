"use strict";

const { badRequest } = require("./errors");

const HEADER = "x-ms-documentdb-partitionkey";

// Cosmos's "undefined" partition-key component (the document lacks the
// property) travels as {} in the header: ["a", {}].
const UNDEFINED = Object.freeze({});

function definitionPaths(collectionData) {
  const pk = collectionData && collectionData.partitionKey;
  return (pk && Array.isArray(pk.paths) && pk.paths) || [];
}

function splitPath(path) {
  return path
    .slice(1)
    .split("/")
    .map(segment => {
      // Paths may quote segments that are not identifiers: /"my key"/x
      const quoted = /^"(.*)"$/.exec(segment);
      return quoted ? quoted[1] : segment;
    });
}

function valueAt(doc, segments) {
  let current = doc;
  for (const segment of segments) {
    if (current === null || typeof current !== "object") return undefined;
    current = current[segment];
  }
  return current;
}

// The partition-key tuple of a document, one component per definition path.
function extract(doc, paths) {
  return paths.map(path => {
    const value = valueAt(doc, splitPath(path));
    return value === undefined ? UNDEFINED : value;
  });
}

// Parses the header into a component array; null when absent. azcosmos never
// sends the header for an empty PartitionKey (its cross-partition marker).
function fromHeader(req) {
  let raw = req.headers[HEADER];
  if (Array.isArray(raw)) [raw] = raw;
  if (raw === undefined || raw === "") return null;
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw badRequest(`The partition key ${raw} is invalid: it must be a JSON array.`);
  }
  if (!Array.isArray(parsed)) parsed = [parsed];
  return parsed.map(v => (v !== null && typeof v === "object" && Object.keys(v).length === 0 ? UNDEFINED : v));
}

// A canonical string for a component tuple, used as a map key. JSON keeps
// "1" and 1 apart and renders the undefined marker as {}.
const key = components => JSON.stringify(components);

// Hierarchical (MultiHash) containers accept a prefix of the components when
// querying; for single-path containers this is plain equality.
function matchesPrefix(docComponents, prefix) {
  if (prefix.length > docComponents.length) return false;
  for (let i = 0; i < prefix.length; i += 1) {
    if (JSON.stringify(docComponents[i]) !== JSON.stringify(prefix[i])) return false;
  }
  return true;
}

module.exports = { HEADER, definitionPaths, extract, fromHeader, key, matchesPrefix, splitPath };
