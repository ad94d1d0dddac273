#!/usr/bin/env bash
# Install bubblewrap (`bwrap`) and util-linux (`prlimit`): evalkit runs every setup, solution,
# verifier and agent shell command inside a bwrap sandbox (docs/security.md), and the sandbox
# tests (tests/security/) use it for real. Idempotent. Needs root (or sudo).
set -euo pipefail

if command -v bwrap >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; then
    echo "bubblewrap: already installed ($(bwrap --version))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "bubblewrap: bwrap is missing and this is not root; run: apt-get install -y bubblewrap util-linux" >&2
        exit 1
    fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "bubblewrap: no apt-get here; install the 'bubblewrap' package with your package manager" >&2
    exit 1
fi

echo "bubblewrap: installing the Debian packages bubblewrap and util-linux"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq bubblewrap util-linux >/dev/null
bwrap --version
