#!/usr/bin/env bash
# Installs whatever is missing to build and run copperhead on Debian/Ubuntu, then builds
# dist/copperhead. Safe to re-run: each step is skipped when already satisfied.
#   - Bun (from npm), pinned to the version in package.json's devDependencies
#   - KiCad 9 with its stock symbol and footprint libraries (Debian bookworm-backports)
#   - the npm packages, exactly as locked in bun.lock
#   - with --test, what the test suite needs besides: strace (proves commands open no sockets)
#     and python3 (a strict XML parser for the JUnit report)
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

bun_version=$(node -p 'require("./package.json").devDependencies.bun')
if ! command -v bun >/dev/null || [ "$(bun --version)" != "$bun_version" ]; then
  say "installing Bun $bun_version from npm"
  "${SUDO[@]}" npm install --global --no-fund --no-audit "bun@$bun_version" >&2
fi

with_test_tools=false
[ "${1:-}" = "--test" ] && with_test_tools=true

kicad_major() { kicad-cli version 2>/dev/null | head -n1 | cut -d. -f1; }
if ! command -v kicad-cli >/dev/null || [ "$(kicad_major)" -lt 9 ] 2>/dev/null; then
  . /etc/os-release
  if [ "${VERSION_CODENAME:-}" = "bookworm" ]; then
    say "installing KiCad 9 from bookworm-backports"
    "${SUDO[@]}" tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    "${SUDO[@]}" apt-get update -qq >&2
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports \
      --no-install-recommends kicad kicad-symbols kicad-footprints >&2
  elif [ "${ID:-}" = "ubuntu" ]; then
    say "installing KiCad 9 from the KiCad PPA"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq software-properties-common >&2
    "${SUDO[@]}" add-apt-repository -y ppa:kicad/kicad-9.0-releases >&2
    "${SUDO[@]}" apt-get update -qq >&2
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      kicad kicad-symbols kicad-footprints >&2
  else
    say "cannot install KiCad 9 automatically on ${PRETTY_NAME:-this system}; see https://www.kicad.org/download/"
    exit 3
  fi
fi
say "kicad-cli $(kicad-cli version | head -n1)"

if $with_test_tools; then
  missing=()
  command -v strace >/dev/null || missing+=(strace)
  command -v python3 >/dev/null || missing+=(python3)
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
