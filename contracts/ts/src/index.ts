// @accord/contract: the generated contract (src/generated) and the helpers written over it.
// Platform-neutral (a browser may use it); the Node-only service keys are
// "@accord/contract/service-keys".
export * from "./generated/index.js";
export * from "./codes.js";
export * from "./envelope.js";
export * from "./error.js";
export * from "./json.js";
export * from "./lifecycle.js";
export * from "./status_wire.js";
