/**
 * Secret redaction: keys are never logged, written, committed or returned.
 *
 * Two nets, because neither alone is enough:
 * - the *values* of secret-looking environment variables, which catches keys of any shape the
 *   user actually has (a self-hosted server's token looks like nothing in particular);
 * - well-known key *shapes*, which catches a key that reached the text some other way — pasted
 *   into a request, echoed back by a server, read from a file — without being in our env.
 *
 * Redaction is applied where text leaves the process, not where it is produced, so a new
 * producer cannot forget it: the logger (every stderr line), stdout (`--json`, reports), the
 * MCP transport (every frame), the transcript and run summary, provider error messages, and
 * what the agent loop sends to the model or hands to a tool. Design files are the exception
 * that proves the rule: a tool argument that holds a secret is refused there, not redacted
 * (see the agent loop), so no secret — and no `[REDACTED]` — is ever drawn into a schematic.
 */

export const REDACTED = "[REDACTED]";

/** Env var names whose values are secrets. */
const SECRET_NAME = /(?:_KEY|_TOKEN|_SECRET|_PASSWORD)$/i;

/**
 * Shorter values are not redacted: a 3-character "secret" would shred ordinary text, and real
 * keys are far longer than this.
 */
const MIN_SECRET_LENGTH = 8;

/** Known credential shapes. Each needs enough tail that ordinary words never match. */
const KEY_PATTERNS: readonly RegExp[] = [
  // Anthropic (sk-ant-…), OpenAI (sk-…, sk-proj-…) and the many servers that copied the shape.
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  // Slack bot, app and user tokens.
  /\bxox[bap]-[A-Za-z0-9-]{10,}/g,
  // GitHub classic tokens (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained tokens.
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  // AWS access key ids (long-term AKIA…, temporary ASIA…).
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
];

/** `Authorization: Bearer <token>`: keep the scheme so the text still reads, drop the token. */
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;

/**
 * A redactor over the secrets in `env` (snapshotted now) plus `extraSecrets` (e.g. a key that
 * came from somewhere other than the environment) and the known key shapes.
 */
export function makeRedactor(
  env: Record<string, string | undefined> = process.env,
  extraSecrets: readonly string[] = [],
): (text: string) => string {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && SECRET_NAME.test(name) && value.length >= MIN_SECRET_LENGTH) values.add(value);
  }
  for (const value of extraSecrets) if (value.length >= MIN_SECRET_LENGTH) values.add(value);
  // Longest first, so a secret that contains another is replaced whole.
  const secrets = [...values].sort((a, b) => b.length - a.length);

  return (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    for (const pattern of KEY_PATTERNS) out = out.replace(pattern, REDACTED);
    return out.replace(BEARER, `$1${REDACTED}`);
  };
}

/**
 * The redactor for the environment as it is now. Cheap to call per line: it is rebuilt only
 * when a secret-looking variable changed (tests and MCP hosts set keys at run time).
 */
export function redactSecrets(text: string): string {
  const values: string[] = [];
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && SECRET_NAME.test(name)) values.push(`${name}=${value}`);
  const stamp = values.join("\0");
  if (stamp !== current.stamp) current = { stamp, redact: makeRedactor(process.env) };
  return current.redact(text);
}

let current: { stamp: string | undefined; redact: (text: string) => string } = {
  stamp: undefined,
  redact: (text) => text,
};

/**
 * Redacts every string inside plain JSON-like data (arrays and plain objects), object keys
 * included — a key can be data too (`fields: { "<a key>": "v" }` from a model) — and returns
 * a copy. Callers bound the nesting of outside data first (`exceedsNesting`).
 */
export function redactDeep<T>(value: T, redact: (text: string) => string = redactSecrets): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && isPlainObject(v)) {
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [redact(k), walk(item)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * `value` as JSON, with every string and object key redacted before JSON escapes it: JSON
 * spells a control character, a quote or a backslash in a key as an escape, after which the
 * redactor no longer finds the key in the text.
 */
export function redactedJson(
  value: unknown,
  options: { redact?: (text: string) => string; space?: number } = {},
): string {
  const redact = options.redact ?? redactSecrets;
  return JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (typeof v === "string") return redact(v);
      if (v !== null && typeof v === "object" && !Array.isArray(v) && isPlainObject(v)) {
        return Object.fromEntries(Object.entries(v).map(([k, item]) => [redact(k), item]));
      }
      return v;
    },
    options.space,
  );
}

/** Whether any string in `value`, object keys included, holds something `redact` would hide. */
export function containsSecret(value: unknown, redact: (text: string) => string = redactSecrets): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (redact(v) !== v) return true;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        if (redact(k) !== k) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
