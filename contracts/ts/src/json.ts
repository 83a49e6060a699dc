// Hand-written: JSON values, and JSON text written as Python's `json.dumps` writes it, so a
// text an Accord server builds that way (an ErrorInfo's details, an MCP error's text block) is
// the same string from TypeScript.

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `json.dumps(value, ensure_ascii=False, sort_keys=sortKeys)`: Python's default separators
 * (", " and ": "). A number is written as JavaScript holds it, so a float with no fraction
 * (Python's `2.0`) reads `2`: TypeScript cannot tell the two apart.
 */
export function pythonJsonDumps(value: JsonValue, sortKeys = false): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) {
      // Python writes NaN and Infinity, which are not JSON: refuse rather than differ.
      throw new RangeError("JSON has no form for a non-finite number");
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => pythonJsonDumps(v, sortKeys)).join(", ")}]`;
  }
  const keys = Object.keys(value);
  if (sortKeys) keys.sort(byCodePoint);
  const items = keys.map((k) => {
    const item = value[k];
    return `${JSON.stringify(k)}: ${pythonJsonDumps(item === undefined ? null : item, sortKeys)}`;
  });
  return `{${items.join(", ")}}`;
}

// Python sorts str keys by code point; JavaScript's default sort compares UTF-16 units, which
// orders characters beyond the BMP differently.
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
