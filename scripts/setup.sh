#!/usr/bin/env bash
# Installs whatever is missing to build and run copperhead on Debian/Ubuntu, then builds
# dist/copperhead. Safe to re-run: each step is skipped when already satisfied.
#   - Bun (from npm), pinned to the version in package.json's devDependencies
#   - KiCad 9 with its stock symbol and footprint libraries (scripts/install-kicad.sh: Debian
#     bookworm-backports, or the KiCad PPA on Ubuntu)
#   - the npm packages, exactly as locked in bun.lock
#   - with --test, what the test suite needs besides: KiCad's demo projects (kicad-demos, a
#     corpus of real designs the fidelity tests run over), strace (proves commands open no sockets),
#     python3 (a strict XML parser for the JUnit report), zip (the Windows release archive) and
#     rsvg-convert (librsvg2-bin: the render tests open copperhead's SVGs as viewers do)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

# Root runs apt and npm -g directly; anyone else goes through sudo, and is told so first.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { say "need root (or sudo) to install system packages"; exit 3; }
  SUDO=(sudo)
  say "installing system packages needs root; using sudo"
fi

with_test_tools=false
[ "${1:-}" = "--test" ] && with_test_tools=true

bun_version=$(node -p 'require("./package.json").devDependencies.bun')
if ! command -v bun >/dev/null || [ "$(bun --version)" != "$bun_version" ]; then
  say "installing Bun $bun_version from npm"
  "${SUDO[@]}" npm install --global --no-fund --no-audit "bun@$bun_version" >&2
fi

if $with_test_tools; then
  bash scripts/install-kicad.sh --demos >/dev/null
else
  bash scripts/install-kicad.sh >/dev/null
fi
say "kicad-cli $(kicad-cli version | head -n1)"

if $with_test_tools; then
  missing=()
  command -v strace >/dev/null || missing+=(strace)
  command -v python3 >/dev/null || missing+=(python3)
  command -v zip >/dev/null || missing+=(zip)
  command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing test tools: ${missing[*]}"
    "${SUDO[@]}" apt-get update -qq >&2
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
fi

say "installing packages from bun.lock"
bun install --frozen-lockfile >&2

say "building dist/copperhead"
bun run build >&2
