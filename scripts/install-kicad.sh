#!/usr/bin/env bash
# Makes sure KiCad 9 (kicad-cli with the stock symbol and footprint libraries) is installed,
# and prints the kicad-cli path on stdout. An existing kicad-cli >= 9 is used as is.
# Shared by scripts/setup.sh and the CI action (action.yml); it installs from:
#   - Debian bookworm: bookworm-backports (apt, as root or through sudo, said first)
#   - Ubuntu: the KiCad 9 PPA (same)
#   - macOS: the Homebrew cask `kicad`
#   - Windows (Git Bash, e.g. a GitHub runner): the Chocolatey package `kicad`
# Anything else exits 3 pointing at https://www.kicad.org/download/.
# With --demos it also installs KiCad's demo projects (the package kicad-demos, to
# /usr/share/kicad/demos), which the test suite runs over as a corpus of real designs.
set -euo pipefail

with_demos=false
[ "${1:-}" = "--demos" ] && with_demos=true

say() { printf '\033[1minstall-kicad:\033[0m %s\n' "$*" >&2; }

# PATH first, then the standard install locations copperhead also searches
# (src/kicad/cli/install.ts); on Windows the last KiCad\<version> folder in name order.
find_kicad_cli() {
  command -v kicad-cli && return
  local found="" candidate
  local program_files="/c/Program Files"
  command -v cygpath >/dev/null && program_files=$(cygpath -u "${PROGRAMFILES:-C:\\Program Files}")
  for candidate in /Applications/KiCad/KiCad.app/Contents/MacOS/kicad-cli "$program_files"/KiCad/*/bin/kicad-cli.exe; do
    [ -x "$candidate" ] && found=$candidate
  done
  [ -n "$found" ] && echo "$found"
}

kicad_major() { "$1" version 2>/dev/null | head -n1 | cut -d. -f1; }

has_kicad_9() {
  local cli
  cli=$(find_kicad_cli) || return 1
  [ "$(kicad_major "$cli")" -ge 9 ] 2>/dev/null
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    command -v sudo >/dev/null || { say "need root (or sudo) to install KiCad with apt"; exit 3; }
    sudo "$@"
  fi
}

apt_install() {
  as_root apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

DEMOS_DIR=/usr/share/kicad/demos

# Prints "kicad-demos" when --demos asked for the demos and they are not installed yet.
demos_package() {
  if $with_demos && [ ! -d "$DEMOS_DIR" ]; then echo kicad-demos; fi
}

install_demos() {
  # shellcheck disable=SC1091
  [ -r /etc/os-release ] && . /etc/os-release
  if [ "${VERSION_CODENAME:-}" = "bookworm" ]; then
    say "installing KiCad's demo projects from bookworm-backports"
    apt_install -t bookworm-backports kicad-demos
  elif [ "${ID:-}" = "ubuntu" ]; then
    say "installing KiCad's demo projects"
    apt_install kicad-demos
  else
    say "cannot install KiCad's demo projects automatically on ${PRETTY_NAME:-$(uname -s)}; install the kicad-demos package"
    exit 3
  fi
}

install_kicad() {
  case "$(uname -s)" in
    Darwin)
      say "installing KiCad 9 with Homebrew (brew install --cask kicad)"
      brew install --cask kicad >&2
      return
      ;;
    MINGW* | MSYS* | CYGWIN*)
      say "installing KiCad 9 with Chocolatey (choco install kicad)"
      choco install kicad -y --no-progress >&2
      return
      ;;
  esac
  # shellcheck disable=SC1091
  [ -r /etc/os-release ] && . /etc/os-release
  [ "$(id -u)" -eq 0 ] || say "installing KiCad with apt needs root; using sudo"
  if [ "${VERSION_CODENAME:-}" = "bookworm" ]; then
    say "installing KiCad 9 from bookworm-backports"
    as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_install -t bookworm-backports kicad kicad-symbols kicad-footprints $(demos_package)
  elif [ "${ID:-}" = "ubuntu" ]; then
    say "installing KiCad 9 from the KiCad PPA"
    apt_install software-properties-common
    as_root add-apt-repository -y ppa:kicad/kicad-9.0-releases >&2
    apt_install kicad kicad-symbols kicad-footprints $(demos_package)
  else
    say "cannot install KiCad 9 automatically on ${PRETTY_NAME:-$(uname -s)}; see https://www.kicad.org/download/"
    exit 3
  fi
}

if ! has_kicad_9; then
  install_kicad
  has_kicad_9 || { say "KiCad was installed but no kicad-cli >= 9 was found; see https://www.kicad.org/download/"; exit 3; }
fi
# Board edits refill zones with KiCad's Python module; Debian's and Ubuntu's kicad package puts
# it in /usr/bin/python3's dist-packages (the macOS and Windows installers ship their own Python).
if [ "$(uname -s)" = Linux ] && ! /usr/bin/python3 -c "import pcbnew" 2>/dev/null; then
  say "KiCad's Python module pcbnew does not import in /usr/bin/python3; board edits on boards with pours need it (apt-get install kicad)"
  exit 3
fi
if $with_demos && [ ! -d "$DEMOS_DIR" ]; then
  install_demos
  [ -d "$DEMOS_DIR" ] || { say "kicad-demos was installed but $DEMOS_DIR is missing"; exit 3; }
fi
find_kicad_cli
