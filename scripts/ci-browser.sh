#!/usr/bin/env bash
# Install the headless browser that tests/test_serve_browser.py drives:
# Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver).
# Idempotent: does nothing when both are already installed. Selenium itself
# comes from the package's `test` extra; the test points it at these two
# binaries, so Selenium Manager never downloads a driver.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "ci-browser: chromium and chromedriver already installed"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# wait for another apt run (up to 10 min) instead of failing on its lock
LOCK="-o DPkg::Lock::Timeout=600"
$SUDO apt-get $LOCK update -qq
$SUDO apt-get $LOCK install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null
chromium --version
chromedriver --version
