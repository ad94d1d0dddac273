#!/usr/bin/env bash
# Install what the test suite starts for itself and pip cannot provide.
# Idempotent: does nothing when everything is already there.
set -euo pipefail
echo "system dependencies: nothing to install"
