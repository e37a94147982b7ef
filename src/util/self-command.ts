/**
 * How to start this copperhead again from another process (an agent CLI starting the run's
 * tool bridge): the compiled binary itself, or the Bun runtime with the entry script when
 * running from source.
 */
export function selfCommand(): string[] {
  // A compiled executable's entry lives in Bun's embedded filesystem.
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/i.test(Bun.main);
  return compiled ? [process.execPath] : [process.execPath, Bun.main];
}
