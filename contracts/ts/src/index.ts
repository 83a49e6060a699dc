// @accord/contract: the generated contract (src/generated) and the helpers written over it.
export * from "./generated/index.js";
export * from "./codes.js";
export * from "./lifecycle.js";
