"use strict";

// The SQL engine is @zeit/cosmosdb-query, the one @vercel/cosmosdb-server
// ships with. We resolve it from the server package's own location so we run
// exactly the copy the lockfile pinned for it, and we extend its built-in
// function table where it falls short of Cosmos.

const path = require("path");
const { badRequest } = require("./errors");

const serverDir = path.dirname(require.resolve("@vercel/cosmosdb-server/package.json"));
const engineMain = require.resolve("@zeit/cosmosdb-query", { paths: [serverDir] });
const engine = require(engineMain);
// The compiled query calls functions through this module object, so replacing
// its properties changes what every query sees.
const builtins = require(path.join(path.dirname(engineMain), "builtin-functions.js"));

const compile = engine.default;
const EngineSyntaxError = engine.SyntaxError;
const engineDir = path.dirname(engineMain);
const transform = require(path.join(engineDir, "transformer.js")).default;
const generate = require(require.resolve("@babel/generator", { paths: [engineDir] })).default;

// Cosmos's string functions take an optional third argument, ignoreCase;
// 0.7.2 rejects it ("requires 2 argument(s)") and lacks STRINGEQUALS. Like
// Cosmos, a non-string argument yields undefined, which filters the row out.
function stringPredicate(name, test) {
  return (...args) => {
    if (args.length < 2 || args.length > 3) {
      throw new EngineSyntaxError(`The ${name} function requires 2 or 3 argument(s)`, null, null, null);
    }
    const [a, b, ignoreCase = false] = args;
    if (typeof a !== "string" || typeof b !== "string" || typeof ignoreCase !== "boolean") {
      return undefined;
    }
    return ignoreCase ? test(a.toLowerCase(), b.toLowerCase()) : test(a, b);
  };
}

// Results pass through stripUndefined, whose array branch is also an
// accumulating spread; an equivalent linear version keeps large unpaged
// results (SELECT with x-ms-max-item-count: -1) from going quadratic.
const helpers = require(path.join(engineDir, "helpers.js"));
helpers.stripUndefined = function stripUndefined(value) {
  if (Array.isArray(value)) {
    const out = [];
    for (const v of value) if (v !== undefined) out.push(stripUndefined(v));
    return out;
  }
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = stripUndefined(v);
    return out;
  }
  return value;
};

// Cosmos's = and != on values of different types (or either undefined) are
// undefined, and != between two objects or two arrays is undefined too; a WHERE
// drops undefined, and NOT keeps it undefined. 0.7.2 answered false for = and
// true for != across types, so "c.x != 'y'" matched documents whose x is a
// number, null or missing, and patch conditions along with it. See
// https://learn.microsoft.com/azure/cosmos-db/nosql/query/equality-comparison-operators
const jsonType = v => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const engineEqual = helpers.equal;
helpers.equal = (a, b) => {
  if (a === undefined || b === undefined || jsonType(a) !== jsonType(b)) return undefined;
  return engineEqual(a, b);
};
helpers.notEqual = (a, b) => {
  const type = jsonType(a);
  if (type === "object" || type === "array") return undefined;
  const eq = helpers.equal(a, b);
  return eq === undefined ? undefined : !eq;
};

builtins.STRINGEQUALS = stringPredicate("StringEquals", (a, b) => a === b);
builtins.STARTSWITH = stringPredicate("StartsWith", (a, b) => a.startsWith(b));
builtins.ENDSWITH = stringPredicate("EndsWith", (a, b) => a.endsWith(b));
builtins.CONTAINS = stringPredicate("Contains", (a, b) => a.includes(b));

// The generated JavaScript builds every FROM/JOIN row set with
//   rows.reduce(($, c) => [...$, { c }], [])
// which copies the accumulator once per document: quadratic, about 1.5 s for
// a 20,000-document container. The accumulator is always a fresh [] owned by
// that reduce, so appending in place, ($.push({ c }), $), is equivalent.
const isAccumulator = node => node && node.type === "Identifier" && node.name === "$";

function appendInPlace(body) {
  if (!body) return body;
  if (body.type === "ArrayExpression" && body.elements.length > 0 && body.elements[0] &&
      body.elements[0].type === "SpreadElement" && isAccumulator(body.elements[0].argument)) {
    return {
      type: "SequenceExpression",
      expressions: [
        {
          type: "CallExpression",
          callee: { type: "MemberExpression", object: { type: "Identifier", name: "$" }, property: { type: "Identifier", name: "push" }, computed: false },
          arguments: body.elements.slice(1)
        },
        { type: "Identifier", name: "$" }
      ]
    };
  }
  if (body.type === "ConditionalExpression") {
    body.consequent = appendInPlace(body.consequent);
    body.alternate = appendInPlace(body.alternate);
  }
  return body;
}

function isAccumulatingReduce(node) {
  if (node.type !== "CallExpression" || node.arguments.length !== 2) return false;
  const { callee, arguments: [fn, initial] } = node;
  return callee.type === "MemberExpression" && callee.property && callee.property.name === "reduce" &&
    fn.type === "ArrowFunctionExpression" && isAccumulator(fn.params[0]) &&
    initial.type === "ArrayExpression" && initial.elements.length === 0;
}

function rewriteReduces(root) {
  const seen = new Set();
  const visit = node => {
    if (!node || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node.type && isAccumulatingReduce(node)) {
      node.arguments[0].body = appendInPlace(node.arguments[0].body);
    }
    Object.keys(node).forEach(k => visit(node[k]));
  };
  visit(root);
  return root;
}

// Parsing and code generation dominate small queries, and callers reuse a
// handful of parameterised texts, so compiled queries are cached by text.
const CACHE_LIMIT = 500;
const cache = new Map();

function compileCached(sql) {
  let q = cache.get(sql);
  if (!q) {
    try {
      q = compile(sql);
      // The engine generates code lazily into _code; filling it first makes
      // it use our linear version.
      q._code = generate(rewriteReduces(transform(q.ast))).code;
    } catch (err) {
      throw badRequest(`Syntax error in query: ${err.message}`);
    }
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value);
    cache.set(sql, q);
  }
  return q;
}

// Runs sql over docs. Returns { result: [...], continuation: object|null }.
function run(sql, docs, { parameters, udf, maxItemCount, continuation, compositeIndexes } = {}) {
  const q = compileCached(sql);
  try {
    return q.exec(docs, {
      parameters: parameters || [],
      udf: udf || {},
      maxItemCount: Number.isFinite(maxItemCount) ? maxItemCount : null,
      continuation: continuation || null,
      compositeIndexes: compositeIndexes || []
    });
  } catch (err) {
    // Code generation is lazy, so unsupported constructs surface here too.
    throw badRequest(`Query failed: ${err.message}`);
  }
}

// Evaluates a patch condition ("from c where ...") against one document.
function matchesCondition(condition, doc, udf) {
  const text = condition.trim();
  const sql = /^select\s/i.test(text) ? text : `SELECT * ${text}`;
  return run(sql, [doc], { udf }).result.length > 0;
}

module.exports = { run, matchesCondition };
