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
