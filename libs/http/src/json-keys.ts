import { tokenize } from '@humanwhocodes/momoa';

interface Frame {
  keys: Set<string> | null;
  /** In an object: the next string token is a key. */
  expectKey: boolean;
}

/** A key a JSON body may not carry, and why. */
export interface RefusedKey {
  key: string;
  /** `twice`: in one object; `reserved`: `__proto__`, which joi skips unseen (an unknown key let through). */
  reason: 'twice' | 'reserved';
}

/**
 * The first key that appears twice in one object of a JSON text, decoded (`"a"` and `"\u0061"` are
 * the same key), or a `__proto__` key at any depth, or undefined. JSON.parse keeps the last of two
 * equal keys while other parsers keep the first: a body that means different things to different
 * readers is refused instead. JSON.parse makes `__proto__` an own key, which joi's object schemas
 * ignore, so no route's "unknown key" check would see it. Works on the token stream (iterative:
 * bodies may nest thousands of levels); malformed text is left to JSON.parse to report.
 */
export function refusedKey(body: string): RefusedKey | undefined {
  // A leading byte-order mark: the JSON parser skips it (RFC 8259 8.1 allows that), the tokenizer does not.
  const text = body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  let tokens: ReturnType<typeof tokenize>;
  try {
    tokens = tokenize(text);
  } catch {
    return undefined;
  }
  const stack: Frame[] = [];
  for (const t of tokens) {
    const top = stack[stack.length - 1];
    switch (t.type) {
      case 'LBrace':
        stack.push({ keys: new Set(), expectKey: true });
        break;
      case 'LBracket':
        stack.push({ keys: null, expectKey: false });
        break;
      case 'RBrace':
      case 'RBracket':
        stack.pop();
        break;
      case 'Comma':
        if (top?.keys) top.expectKey = true;
        break;
      case 'String':
        if (top?.keys && top.expectKey) {
          top.expectKey = false;
          const key = JSON.parse(text.slice(t.loc.start.offset, t.loc.end.offset)) as string;
          if (key === '__proto__') return { key, reason: 'reserved' };
          if (top.keys.has(key)) return { key, reason: 'twice' };
          top.keys.add(key);
        }
        break;
      default:
        break;
    }
  }
  return undefined;
}
