#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests of the HTML reports (tests/report/).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo).
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
    echo "chromium: already installed ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"))"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "chromium: $CHROMIUM is missing and this is not root; run: apt-get install -y chromium" >&2
        exit 1
    fi
fi

echo "chromium: installing the Debian package (about a minute)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
"$CHROMIUM" --version 2>/dev/null
