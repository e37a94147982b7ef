import { ToolError } from "../../src/agent/tools/tool.ts";
import { CopperheadError } from "../../src/errors.ts";

/** Runs `fn` and returns the CopperheadError it throws; anything else fails the test. */
export function thrownCopperheadError(fn: () => unknown): CopperheadError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CopperheadError) return err;
    throw err;
  }
  throw new Error("expected a CopperheadError");
}

/** Awaits `promise` and returns the CopperheadError it rejects with; anything else fails the test. */
export async function rejectedCopperheadError(promise: Promise<unknown>): Promise<CopperheadError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CopperheadError) return err;
    throw err;
  }
  throw new Error("expected a CopperheadError");
}

/** Awaits a tool call and returns the message of the ToolError it rejects with (what the model reads). */
export async function rejectedToolError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ToolError) return err.message;
    throw err;
  }
  throw new Error("expected a ToolError");
}
