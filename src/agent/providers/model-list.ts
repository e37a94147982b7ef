/**
 * The models a provider serves, from its own list (`GET {base}/v1/models` on Anthropic,
 * `GET {base}/models` on OpenAI and the servers that copy its API), kept for a day in the
 * user's cache folder (`~/.cache/copperhead/models/`; only model ids and dates, never a key).
 *
 * Two uses. With no model chosen, the default Anthropic model is the built-in default when the
 * provider lists it, and otherwise the newest model of the same family it does list: a default
 * id can be retired, or not yet served where the key lives, and a run should not fail on a
 * guess. And a "model not found" answer lists the models the server does serve.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CopperheadError } from "../../errors.ts";
import { log } from "../../log.ts";
import { userCacheDir } from "../../util/user-dirs.ts";
import type { ModelProvider, ModelRequest } from "../conversation.ts";
import { getJson, type JsonPost } from "./http.ts";

export interface ListedModel {
  id: string;
  /** When the provider released it (epoch ms); 0 when the server does not say. */
  created: number;
}

/** Where the list is, and how to ask for it (the provider's own auth headers). */
export type ModelListing = Omit<JsonPost, "body">;

/** A list older than this is asked for again: models come and go over weeks, not minutes. */
const CACHE_MS = 24 * 60 * 60 * 1000;
/** Anthropic pages its list (20 a page unless asked); a list longer than this many pages is not a model list. */
const MAX_PAGES = 10;
/** How many models a "not found" error names. */
const NAMED_IN_ERRORS = 20;

/** The models the server lists, newest first; from the cache while it is less than a day old. */
export async function listModels(
  listing: ModelListing,
  env: Record<string, string | undefined> = process.env,
  now: number = Date.now(),
): Promise<ListedModel[]> {
  const file = join(
    userCacheDir(env),
    "models",
    `${createHash("sha256").update(listing.url).digest("hex").slice(0, 32)}.json`,
  );
  try {
    const cached = JSON.parse(readFileSync(file, "utf8")) as { url?: unknown; fetchedAt?: unknown; models?: unknown };
    if (
      cached.url === listing.url &&
      typeof cached.fetchedAt === "number" &&
      now - cached.fetchedAt < CACHE_MS &&
      cached.fetchedAt <= now
    ) {
      return parseModels(cached.models);
    }
  } catch {
    // no cache yet, or one that cannot be read: ask the server
  }
  const models = await fetchModels(listing);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(`${file}.tmp`, JSON.stringify({ url: listing.url, fetchedAt: now, models }), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch (err) {
    log.debug(`the model list was not cached: ${err instanceof Error ? err.message : String(err)}`);
  }
  return models;
}

async function fetchModels(listing: ModelListing): Promise<ListedModel[]> {
  const models: ListedModel[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL(listing.url);
    url.searchParams.set("limit", "1000");
    if (after) url.searchParams.set("after_id", after);
    const body = (await getJson({ ...listing, url: url.toString() })) as {
      data?: unknown;
      has_more?: unknown;
      last_id?: unknown;
    };
    models.push(...parseModels(body?.data));
    if (body?.has_more !== true || typeof body.last_id !== "string") break;
    after = body.last_id;
  }
  return models.sort((a, b) => b.created - a.created || b.id.localeCompare(a.id));
}

/** Anthropic's `{ id, created_at: "<RFC 3339>" }` and OpenAI's `{ id, created: <epoch s> }`. */
function parseModels(data: unknown): ListedModel[] {
  if (!Array.isArray(data)) return [];
  return data.flatMap((entry) => {
    const { id, created, created_at } = (entry ?? {}) as { id?: unknown; created?: unknown; created_at?: unknown };
    if (typeof id !== "string" || !id) return [];
    const when =
      typeof created_at === "string"
        ? Date.parse(created_at)
        : typeof created === "number"
          ? created > 1e11
            ? created
            : created * 1000
          : 0;
    return [{ id, created: Number.isFinite(when) ? when : 0 }];
  });
}

/**
 * `preferred` when the list has it (or has nothing to go on); else the newest listed model of
 * its family, the id without its version (`claude-sonnet-5-5` → `claude-sonnet-…`).
 */
export function pickDefaultModel(models: ListedModel[], preferred: string): string {
  if (models.length === 0 || models.some((m) => m.id === preferred)) return preferred;
  const family = preferred.replace(/(-\d+)+$/, "");
  return (
    models
      .filter((m) => m.id.startsWith(`${family}-`))
      .sort((a, b) => b.created - a.created || b.id.localeCompare(a.id))[0]?.id ?? preferred
  );
}

export interface ModelListOptions {
  listing: ModelListing;
  /** No model was chosen: `model` is the built-in default, checked against the list at preflight. */
  defaultModel: boolean;
  /** Where the model is chosen, for the "not found" fix (`howToPickModel` in index.ts). */
  howToPickModel: string;
  env?: Record<string, string | undefined>;
}

/**
 * A keyed provider that knows the provider's model list: `make(id)` builds it for a model id.
 * Only `preflight` (for the default) and a 404 ask for the list; every other call is the inner
 * provider's own.
 */
export function withModelList(
  make: (model: string) => ModelProvider,
  model: string,
  options: ModelListOptions,
): ModelProvider {
  let inner = make(model);
  return {
    provider: inner.provider,
    get model() {
      return inner.model;
    },
    get label() {
      return inner.label;
    },
    supportsImages: inner.supportsImages,
    async preflight() {
      if (!options.defaultModel) return;
      const models = await listModels(options.listing, options.env).catch((err: unknown) => {
        // A server (a gateway) that has no model list cannot tell: the default stands.
        if (err instanceof CopperheadError && [404, 405, 501].includes(Number(err.details.status))) return [];
        throw err;
      });
      const picked = pickDefaultModel(models, model);
      if (picked === model) return;
      inner = make(picked);
      log.info(
        `${model} is not among the models ${new URL(options.listing.url).origin} lists; using ${picked}, the newest of its family`,
      );
    },
    async complete(request: ModelRequest, signal?: AbortSignal) {
      try {
        return await inner.complete(request, signal);
      } catch (err) {
        if (!(err instanceof CopperheadError) || err.details.status !== 404) throw err;
        throw await withAvailableModels(err, inner.model, options);
      }
    },
  };
}

/** A 404's error, its fix naming the models the server lists (when it lists any). */
async function withAvailableModels(
  err: CopperheadError,
  model: string,
  options: ModelListOptions,
): Promise<CopperheadError> {
  let models: ListedModel[];
  try {
    models = await listModels(options.listing, options.env);
  } catch {
    return err;
  }
  if (models.length === 0 || models.some((m) => m.id === model)) return err;
  const ids = models.slice(0, NAMED_IN_ERRORS).map((m) => m.id);
  const more = models.length > ids.length ? `, and ${models.length - ids.length} more` : "";
  return new CopperheadError(err.code, err.message, {
    ...err.details,
    available: ids,
    fix: `The server has no model ${JSON.stringify(model)}; it serves ${ids.join(", ")}${more} (newest first). Pick one with ${options.howToPickModel}.`,
  });
}
