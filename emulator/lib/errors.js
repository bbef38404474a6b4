"use strict";

// Errors carry the HTTP status and Cosmos's error code so every handler can
// just throw; app.js turns them into Cosmos's JSON error body
// {"code":"NotFound","message":"..."}, which azcosmos surfaces verbatim in
// azcore.ResponseError.

const CODES = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  408: "RequestTimeout",
  409: "Conflict",
  410: "Gone",
  412: "PreconditionFailed",
  413: "RequestEntityTooLarge",
  424: "FailedDependency",
  429: "TooManyRequests",
  500: "InternalServerError",
  503: "ServiceUnavailable"
};

class CosmosError extends Error {
  constructor(statusCode, message, { subStatus } = {}) {
    super(message);
    this.statusCode = statusCode;
    this.code = CODES[statusCode] || "Error";
    this.subStatus = subStatus;
  }

  toBody() {
    return { code: this.code, message: this.message };
  }
}

const codeFor = statusCode => CODES[statusCode] || "Error";

// For the package's handlers, which often answer errors with an empty body.
const DEFAULT_MESSAGES = {
  404: "Resource Not Found.",
  409: "Resource with specified id or name already exists."
};
const defaultMessage = statusCode => DEFAULT_MESSAGES[statusCode] || `Request failed with status ${statusCode}.`;

const badRequest = message => new CosmosError(400, message);

const notFound = (message = "Entity with the specified id does not exist in the system.") =>
  new CosmosError(404, message);

const conflict = (message = "Entity with the specified id already exists in the system.") =>
  new CosmosError(409, message);

const preconditionFailed = (
  message = "Operation cannot be performed because one of the specified precondition is not met."
) => new CosmosError(412, message);

// 410 with sub-status 1002 is what Cosmos answers for a partition key range
// that no longer exists; azcosmos refreshes its routing map when it sees it.
const partitionKeyRangeGone = id =>
  new CosmosError(410, `The partition key range ${id} is gone.`, { subStatus: 1002 });

module.exports = {
  CosmosError,
  codeFor,
  defaultMessage,
  badRequest,
  notFound,
  conflict,
  preconditionFailed,
  partitionKeyRangeGone
};
