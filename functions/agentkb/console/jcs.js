// Canonical JSON (RFC 8785 style, as services/snapshot/canonical_json.py writes it) and its SHA-256: object keys
// sorted by UTF-16 code units (what Array.prototype.sort compares), strings and numbers as JSON.stringify writes
// them (ECMAScript's forms are the canonical ones), no whitespace.

export function canonical(value) {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

export async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** {expected, actual, ok}: the snapshot's `hash` against the sha256 of its canonical JSON without `hash`. */
export async function verifySnapshot(snapshot) {
  const { hash, ...rest } = snapshot;
  const actual = await sha256Hex(canonical(rest));
  return { expected: hash, actual, ok: actual === hash };
}
