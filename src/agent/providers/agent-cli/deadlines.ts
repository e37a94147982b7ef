/**
 * The two deadlines of one model call to an agent CLI, in one place.
 *
 * A call is the wait for the CLI's next move: a tool call, or the end of its turn. The CLI may
 * stay silent for the idle timeout (`--provider-timeout`: no output on stdout or stderr for that
 * long), and the whole wait may last the total deadline (`--provider-deadline`), however much it
 * prints meanwhile. Time the CLI spends waiting on copperhead (a tool running a full check) is
 * not the CLI's: the clock runs only between the run's answer and the CLI's next move.
 */
import { CopperheadError } from "../../../errors.ts";

export interface CallLimits {
  /** No output for this long ends the call. */
  idleMs: number;
  /** The call may last this long in all. */
  deadlineMs: number;
}

export type Expiry = { kind: "idle" | "deadline"; ms: number };

export class CallDeadlines {
  /** Which deadline passed, once one has. */
  fired: Expiry | undefined;
  private idle: ReturnType<typeof setTimeout>;
  private readonly total: ReturnType<typeof setTimeout>;

  /** Starts both clocks; `onFire` is told once, when the first of them passes. */
  constructor(
    private readonly limits: CallLimits,
    private readonly onFire: () => void,
  ) {
    this.idle = this.armIdle();
    this.total = setTimeout(() => this.fire({ kind: "deadline", ms: limits.deadlineMs }), limits.deadlineMs);
  }

  /** The CLI printed something: the idle clock starts over. */
  touch(): void {
    if (this.fired) return;
    clearTimeout(this.idle);
    this.idle = this.armIdle();
  }

  stop(): void {
    clearTimeout(this.idle);
    clearTimeout(this.total);
  }

  private armIdle(): ReturnType<typeof setTimeout> {
    return setTimeout(() => this.fire({ kind: "idle", ms: this.limits.idleMs }), this.limits.idleMs);
  }

  private fire(expiry: Expiry): void {
    if (this.fired) return;
    this.fired = expiry;
    this.stop();
    this.onFire();
  }
}

/** The `provider_error` of a call that ran out of time, naming the setting that would give it more. */
export function expiredError(product: string, expiry: Expiry): CopperheadError {
  const seconds = `${Math.round(expiry.ms / 100) / 10} s`;
  return expiry.kind === "idle"
    ? new CopperheadError("provider_error", `${product} printed nothing for ${seconds}; copperhead stopped it`, {
        idleTimeoutMs: expiry.ms,
        fix: `Check that the CLI works on its own and can reach its model. If it is just slow, raise providerTimeoutSeconds in .copperhead/config.json (or --provider-timeout, COPPERHEAD_PROVIDER_TIMEOUT).`,
      })
    : new CopperheadError(
        "provider_error",
        `${product} ran past the model call's deadline of ${seconds} without finishing its move; copperhead stopped it`,
        {
          deadlineMs: expiry.ms,
          fix: "If the model needs longer for one move, raise providerDeadlineSeconds in .copperhead/config.json (or --provider-deadline, COPPERHEAD_PROVIDER_DEADLINE).",
        },
      );
}
