/**
 * The user's own folders for what copperhead keeps between runs outside any repository: the
 * XDG base directories, with their usual defaults.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** `$XDG_CACHE_HOME/copperhead` (default `~/.cache/copperhead`): what can be rebuilt at any time. */
export function userCacheDir(env: Record<string, string | undefined> = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "copperhead");
}

/**
 * copperhead's folder for what stays with this user on this machine: `$XDG_STATE_HOME/copperhead`,
 * by default `~/.local/state/copperhead` (`%LOCALAPPDATA%\copperhead` on Windows).
 */
export function userStateDir(env: Record<string, string | undefined> = process.env): string {
  if (process.platform === "win32") return join(env.LOCALAPPDATA || join(homedir(), "AppData", "Local"), "copperhead");
  return join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "copperhead");
}
