// An agent's skill schemas from its Agent Card alone, as a client in any language finds them:
// the card's Accord contract extension names the schema document (params.skillSchemas: url and
// sha256); the document is fetched without a credential from the card's own origin, its bytes
// are checked against the digest, and its schemas are compiled with ajv (JSON Schema 2020-12).
// Nothing is read from the repository. Used by refund_conversation.mjs and a2a_policy.mjs.
import { createHash } from "node:crypto";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export const CONTRACT_EXTENSION = "https://accord.dev/a2a/ext/contract/v1";
const CARD_PATH = "/.well-known/agent-card.json";

async function get(url, headers = {}) {
  const response = await fetch(url, { headers: { Accept: "application/json", ...headers }, redirect: "error" });
  return { response, body: Buffer.from(await response.arrayBuffer()) };
}

export async function schemasFromCard(baseUrl) {
  const cardUrl = baseUrl.replace(/\/$/, "") + CARD_PATH;
  const card = JSON.parse((await get(cardUrl)).body.toString("utf8"));
  const ext = (card.capabilities?.extensions ?? []).find((e) => e.uri === CONTRACT_EXTENSION);
  const ref = ext?.params?.skillSchemas;
  if (!ref?.url || !ref?.sha256) throw new Error(`${cardUrl} names no skillSchemas`);
  if (new URL(ref.url).origin !== new URL(cardUrl).origin) {
    throw new Error(`skillSchemas at ${ref.url} is not on the card's origin`);
  }
  const { response, body } = await get(ref.url);
  if (response.status !== 200) throw new Error(`GET ${ref.url}: HTTP ${response.status}`);
  const sha256 = createHash("sha256").update(body).digest("hex");
  if (sha256 !== ref.sha256) throw new Error(`${ref.url}: sha256 ${sha256}, the card names ${ref.sha256}`);
  const etag = response.headers.get("etag");
  const again = (await get(ref.url, { "If-None-Match": etag })).response;

  const doc = JSON.parse(body.toString("utf8"));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  const compiled = new Map();
  const compile = (key, schema) => {
    if (!schema) throw new Error(`${ref.url} has no ${key} schema`);
    if (!compiled.has(key)) compiled.set(key, ajv.compile(schema));
    return compiled.get(key);
  };
  return {
    // What a cache needs: the digest the card names, the ETag, and that a revalidation is a 304.
    seen: {
      url: ref.url, sha256, etag, cacheControl: response.headers.get("cache-control"),
      revalidated: again.status, skills: Object.keys(doc.skills),
    },
    input: (skill) => compile(`${skill} input`, doc.skills[skill]?.input),
    output: (skill) => compile(`${skill} output`, doc.skills[skill]?.output),
    error: compile("error", doc.schemas?.error),
    status: compile("status", doc.schemas?.status),
  };
}
