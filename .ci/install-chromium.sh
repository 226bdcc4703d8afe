#!/usr/bin/env bash
# Installs Debian's Chromium (/usr/bin/chromium) for the GraphiQL end-to-end test
# (test/e2e/graphiql.test.ts drives it through playwright-core). Playwright's own browser
# download is not used: it needs internet access beyond the package registries.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: /usr/bin/chromium"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

# env, not export: sudo would drop an exported DEBIAN_FRONTEND.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium

test -x /usr/bin/chromium
/usr/bin/chromium --version 2>/dev/null || true
