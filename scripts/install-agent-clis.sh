#!/usr/bin/env bash
# Install the real agent CLIs the provider tests run (tests/providers/) at pinned versions into a
# project-local npm prefix (.tools/npm, git-ignored). Their native binaries arrive as npm
# optional dependencies and Claude Code's postinstall links its binary, so optional
# dependencies and install scripts must stay enabled.
# Also makes sure npm, strace, bubblewrap and socat are there (Debian packages).
# Idempotent: when everything is already there it only prints so (well under 1 s).
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="${EVALKIT_TOOLS_PREFIX:-$ROOT/.tools/npm}"
STAMP="$PREFIX/.installed-claude-$CLAUDE_CODE_VERSION-codex-$CODEX_VERSION"
CLAUDE="$PREFIX/node_modules/.bin/claude"
CODEX="$PREFIX/node_modules/.bin/codex"

# Debian tools: npm (and Node.js) to install the CLIs; for the tests, strace (checks the CLIs
# contact nothing but loopback), bubblewrap and socat (Claude Code's command sandbox, used with
# scrub_subprocess_env=true).
missing=()
for tool in npm:npm strace:strace bwrap:bubblewrap socat:socat; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "agent CLIs: installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "agent CLIs: missing ${missing[*]}; install them (Debian: apt-get install -y ${missing[*]})" >&2
        exit 1
    fi
fi

if [[ -f "$STAMP" && -x "$CLAUDE" && -x "$CODEX" ]]; then
    echo "agent CLIs: already installed in $PREFIX (claude-code $CLAUDE_CODE_VERSION, codex $CODEX_VERSION)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "agent CLIs: npm is missing; install Node.js 18+ and npm (Debian: apt-get install -y nodejs npm)" >&2
    exit 1
fi

echo "agent CLIs: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $PREFIX"
mkdir -p "$PREFIX"
rm -f "$PREFIX"/.installed-*
# No telemetry, no funding/audit chatter; optional dependencies (the native binaries) and
# install scripts (postinstall) must run, whatever the user's npm config says.
npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error \
    --include=optional --ignore-scripts=false \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION"

for bin in "$CLAUDE" "$CODEX"; do
    if [[ ! -x "$bin" ]]; then
        echo "agent CLIs: $bin is missing after npm install" >&2
        exit 1
    fi
done
# Both must start (the native binary was found); never contacts the network.
"$CLAUDE" --version
"$CODEX" --version
touch "$STAMP"
