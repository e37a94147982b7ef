#!/bin/sh
# Installs the copperhead release binary for this machine, verified against the release's
# SHA256SUMS. POSIX sh; needs curl or wget (or a file:// release URL), tar (unzip on Windows)
# and sha256sum or shasum. Never uses sudo: when the install directory is not writable it
# says so and stops.
#
#   curl -fsSL https://raw.githubusercontent.com/OWNER/copperhead/main/install.sh | sh
#   sh install.sh [--version VERSION] [--prefix PREFIX] [--release-url URL]
#
#   --version VERSION    a release such as 0.1.0 (default: latest; env COPPERHEAD_VERSION)
#   --prefix PREFIX      install into PREFIX/bin (default: ~/.local/bin;
#                        env COPPERHEAD_INSTALL_DIR names the bin directory itself)
#   --release-url URL    where SHA256SUMS and the archives are (default: the GitHub release;
#                        env COPPERHEAD_RELEASE_URL; file:// URLs work, for mirrors and tests)
set -eu

# The GitHub repository releases come from; OWNER is a placeholder until the project is
# published (package.json `repository` holds the same, and a test keeps them equal).
REPO_URL="https://github.com/OWNER/copperhead"

say() { printf 'copperhead install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

version=${COPPERHEAD_VERSION:-latest}
install_dir=${COPPERHEAD_INSTALL_DIR:-}
release_url=${COPPERHEAD_RELEASE_URL:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --version) [ $# -ge 2 ] || die "--version needs a value"; version=$2; shift 2 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a value"; install_dir=$2/bin; shift 2 ;;
    --release-url) [ $# -ge 2 ] || die "--release-url needs a value"; release_url=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done
install_dir=${install_dir:-$HOME/.local/bin}
if [ -z "$release_url" ]; then
  case "$version" in
    latest) release_url=$REPO_URL/releases/latest/download ;;
    *) release_url=$REPO_URL/releases/download/v${version#v} ;;
  esac
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*) os=windows ;;
  *) die "no release binary for $(uname -s); build from source with Bun instead (see the README)" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no release binary for $(uname -m); build from source with Bun instead (see the README)" ;;
esac
# A shell running under Rosetta reports x86_64 on an Apple silicon Mac; take the native binary.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ]; then
  arch=arm64
fi
if [ "$os" = windows ]; then ext=zip; exe=copperhead.exe; else ext=tar.gz; exe=copperhead; fi

fetch() { # URL FILE
  case "$1" in
    file://*) cp "${1#file://}" "$2" ;;
    *)
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 3 -o "$2" "$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
      else
        die "need curl or wget to download $1"
      fi
      ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    die "need sha256sum or shasum to verify the download"
  fi
}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t copperhead)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

fetch "$release_url/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $release_url/SHA256SUMS"
# The archive is the SHA256SUMS entry for this platform, which is how "latest" needs no version.
suffix="-$os-$arch.$ext"
entry=$(awk -v s="$suffix" '{ sub(/^\*/, "", $2) } length($2) > length(s) && substr($2, length($2) - length(s) + 1) == s { print $1, $2; exit }' "$tmp/SHA256SUMS")
[ -n "$entry" ] || die "the release at $release_url has no archive for $os-$arch"
expected=${entry%% *}
archive=${entry#* }

say "downloading $archive"
fetch "$release_url/$archive" "$tmp/$archive" || die "could not download $release_url/$archive"
actual=$(sha256 "$tmp/$archive")
[ "$actual" = "$expected" ] || die "checksum mismatch for $archive: expected $expected, got $actual; nothing was installed"

mkdir "$tmp/x"
if [ "$ext" = zip ]; then unzip -q "$tmp/$archive" -d "$tmp/x"; else tar -xzf "$tmp/$archive" -C "$tmp/x"; fi
[ -f "$tmp/x/$exe" ] || die "$archive does not contain $exe"

mkdir -p "$install_dir" 2>/dev/null || true
if [ ! -d "$install_dir" ] || [ ! -w "$install_dir" ]; then
  die "$install_dir is not writable. Choose another place with --prefix (e.g. --prefix \"\$HOME/.local\"), or run this script as a user who may write there (for example with sudo, if you mean to)."
fi
# Copy next to the target, then rename over it: an old copperhead that is running keeps working.
cp "$tmp/x/$exe" "$install_dir/.$exe.partial"
chmod 755 "$install_dir/.$exe.partial"
mv -f "$install_dir/.$exe.partial" "$install_dir/$exe"

installed=$("$install_dir/$exe" --version) || die "$install_dir/$exe was installed but does not run"
say "installed copperhead $installed to $install_dir/$exe"
command_name=copperhead
case ":$PATH:" in
  *":$install_dir:"*) ;;
  *)
    command_name=$install_dir/$exe
    say "$install_dir is not on your PATH; add it, e.g. in ~/.profile:"
    # shellcheck disable=SC2016 # a literal $PATH, for the user to paste
    printf '  export PATH="%s:$PATH"\n' "$install_dir" >&2
    ;;
esac
say "copperhead needs KiCad 9 (kicad-cli): https://www.kicad.org/download/ ('copperhead doctor' checks)"
say "register it with an AI host as a stdio MCP server, e.g. for Claude Code:"
printf '  claude mcp add copperhead -- %s mcp\n' "$command_name" >&2
