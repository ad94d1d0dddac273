#!/usr/bin/env bash
# Install what the test suite starts for itself and pip cannot provide: bubblewrap (the
# command sandbox and its tests), a headless Chromium (report tests) and the real agent CLIs
# at pinned versions (provider tests).
# Each step is idempotent and quick when its tool is already installed.
set -euo pipefail
cd "$(dirname "$0")"
for step in install-bubblewrap.sh install-chromium.sh install-agent-clis.sh; do
    if [[ -x "$step" ]]; then
        echo "== $step"
        "./$step"
    fi
done
