/** Objects and arrays nested deeper than this are refused on every route (docs/http-conventions.md). */
export const MAX_JSON_DEPTH = 32;

/** What a JSON body may not carry, and why. */
export type RefusedJson =
  /** `twice`: a key in one object; `reserved`: `__proto__`, which joi skips unseen (an unknown key let through). */
  | { reason: 'twice' | 'reserved'; key: string }
  /** Nested deeper than MAX_JSON_DEPTH. */
  | { reason: 'deep' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/**
 * The first thing in a JSON text that no route may receive, or undefined: an object or array nested
 * deeper than MAX_JSON_DEPTH, a key that appears twice in one object, decoded (`"a"` and `"\u0061"`
 * are the same key), or a `__proto__` key at any depth. JSON.parse keeps the last of two equal keys
 * while other parsers keep the first: a body that means different things to different readers is
 * refused instead. JSON.parse makes `__proto__` an own key, which joi's object schemas ignore, so no
 * route's "unknown key" check would see it. The depth cap keeps recursive readers after the parser
 * (joi) within their stack.
 *
 * One pass over the text holding only the open objects' keys and at most MAX_JSON_DEPTH frames:
 * memory never grows faster than the body (a tokenizer's array of every token did, 16 MB of `{` ran
 * the process out of memory). Exact for valid JSON; on malformed text it may answer anything, and
 * JSON.parse, which runs next, reports the text as malformed.
 */
export function refusedJson(body: string): RefusedJson | undefined {
  // A frame per open object (its keys so far) or array (null).
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  // A leading byte-order mark: the JSON parser skips it (RFC 8259 8.1 allows that).
  for (let i = body.charCodeAt(0) === 0xfeff ? 1 : 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(body, i);
      if (end < 0) return undefined;
      const keys = open[open.length - 1];
      if (keys && expectKey) {
        expectKey = false;
        const raw = body.slice(i + 1, end);
        let key = raw;
        if (raw.includes('\\')) {
          try {
            key = JSON.parse(body.slice(i, end + 1)) as string;
          } catch {
            return undefined;
          }
        }
        if (key === '__proto__') return { key, reason: 'reserved' };
        if (keys.has(key)) return { key, reason: 'twice' };
        keys.add(key);
      }
      i = end;
    } else if (c === LBRACE || c === LBRACKET) {
      if (open.length >= MAX_JSON_DEPTH) return { reason: 'deep' };
      open.push(c === LBRACE ? new Set() : null);
      expectKey = c === LBRACE;
    } else if (c === RBRACE || c === RBRACKET) {
      open.pop();
      expectKey = false;
    } else if (c === COMMA) {
      expectKey = open.length > 0 && open[open.length - 1] !== null;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start`, or -1. */
function closingQuote(text: string, start: number): number {
  for (let j = text.indexOf('"', start + 1); j >= 0; j = text.indexOf('"', j + 1)) {
    // Escaped when an odd number of backslashes precede it (each run is counted once: linear).
    let backslashes = 0;
    while (text.charCodeAt(j - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
  return -1;
}
