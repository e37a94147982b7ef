import { describe, expect, test } from "bun:test";
import { containsSecret, makeRedactor, REDACTED, redactDeep, redactSecrets } from "../../src/redact.ts";

const ENV = {
  ANTHROPIC_API_KEY: "canary-anthropic-value-111",
  GITHUB_TOKEN: "canary-token-value-222",
  CLIENT_SECRET: "canary-secret-value-333",
  DB_PASSWORD: "canary-password-444",
  lower_api_key: "canary-lowercase-555",
  SHORT_KEY: "abc1234",
  HOME: "/home/someone-with-a-long-path",
  COPPERHEAD_MODEL: "anthropic:claude-sonnet-5-5",
};

describe("makeRedactor", () => {
  const redact = makeRedactor(ENV);

  test("replaces the values of *_KEY, *_TOKEN, *_SECRET and *_PASSWORD variables", () => {
    const text = `a ${ENV.ANTHROPIC_API_KEY} b ${ENV.GITHUB_TOKEN} c ${ENV.CLIENT_SECRET} d ${ENV.DB_PASSWORD} e ${ENV.lower_api_key} again ${ENV.ANTHROPIC_API_KEY}`;
    const out = redact(text);
    for (const canary of ["111", "222", "333", "444", "555"]) expect(out).not.toContain(`value-${canary}`);
    expect(out).not.toContain("canary");
    expect(out.split(REDACTED)).toHaveLength(7);
  });

  test("leaves short values and non-secret variables alone", () => {
    expect(redact(`${ENV.SHORT_KEY} ${ENV.HOME} ${ENV.COPPERHEAD_MODEL}`)).toBe(
      `${ENV.SHORT_KEY} ${ENV.HOME} ${ENV.COPPERHEAD_MODEL}`,
    );
  });

  test("a secret containing another is replaced whole", () => {
    const r = makeRedactor({ A_KEY: "inner-secret-1", B_KEY: "outer-inner-secret-1-tail" });
    expect(r("x outer-inner-secret-1-tail y")).toBe(`x ${REDACTED} y`);
  });

  test("extra secrets are redacted too", () => {
    expect(makeRedactor({}, ["from-a-file-secret"])("key=from-a-file-secret")).toBe(`key=${REDACTED}`);
  });

  test("known key shapes are redacted even when not in the environment", () => {
    const r = makeRedactor({});
    const samples = [
      "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
      "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
      "sk-AbCdEfGhIjKlMnOpQrSt",
      "xoxb-123456789012-abcdefABCDEF",
      "xoxp-123456789012-abcdefABCDEF",
      "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
      "AKIAIOSFODNN7EXAMPLE",
    ];
    for (const secret of samples) {
      const out = r(`before ${secret} after`);
      expect(out).toBe(`before ${REDACTED} after`);
    }
  });

  test("Bearer tokens lose the token but keep the scheme", () => {
    expect(makeRedactor({})("Authorization: Bearer abc.DEF-123_xyz/+=")).toBe(`Authorization: Bearer ${REDACTED}`);
  });

  test("ordinary text is untouched", () => {
    const text = "R1 10k 0402, net +3V3 -> U1 pin 4; task-list sk-8 ok; Bearer of good news";
    expect(makeRedactor({})(text)).toBe(text);
  });
});

describe("redactDeep", () => {
  test("redacts strings at any depth, object keys included, and leaves other values alone", () => {
    const redact = makeRedactor(ENV);
    const input = {
      [ENV.GITHUB_TOKEN]: "a key is data too",
      nested: { list: [`token ${ENV.GITHUB_TOKEN}`, 42, true, null, { deep: ENV.DB_PASSWORD }] },
      count: 3,
    };
    expect(redactDeep(input, redact)).toEqual({
      [REDACTED]: "a key is data too",
      nested: { list: [`token ${REDACTED}`, 42, true, null, { deep: REDACTED }] },
      count: 3,
    });
    // the input is not mutated
    expect(input.nested.list[0]).toBe(`token ${ENV.GITHUB_TOKEN}`);
  });
});

describe("containsSecret", () => {
  const redact = makeRedactor(ENV);
  test("finds a secret in a value or a key at any depth, and nothing in clean data", () => {
    expect(containsSecret({ fields: { [ENV.CLIENT_SECRET]: "v1" } }, redact)).toBe(true);
    expect(containsSecret({ a: [{ b: `x ${ENV.DB_PASSWORD} y` }] }, redact)).toBe(true);
    expect(containsSecret("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", redact)).toBe(true);
    expect(containsSecret({ ref: "C3", fields: { MPN: "GRM188R71H104KA93D" }, n: 4 }, redact)).toBe(false);
  });
});

describe("redactSecrets", () => {
  test("follows the environment as it changes", () => {
    const name = "COPPERHEAD_REDACT_TEST_TOKEN";
    expect(redactSecrets("value-set-later-12345")).toBe("value-set-later-12345");
    process.env[name] = "value-set-later-12345";
    try {
      expect(redactSecrets("a value-set-later-12345 b")).toBe(`a ${REDACTED} b`);
    } finally {
      delete process.env[name];
    }
    expect(redactSecrets("value-set-later-12345")).toBe("value-set-later-12345");
  });
});
