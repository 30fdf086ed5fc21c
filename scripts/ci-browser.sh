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
# wait for another apt run (up to 10 min) instead of failing on its lock: DPkg::Lock::Timeout covers dpkg's lock,
# not the package lists' or the archives' (an `apt-get update` beside another one fails at once), so a run that
# fails on a lock is tried again every 5 s. Plain bash only: a fresh machine's PATH is all this script may assume.
LOCK="-o DPkg::Lock::Timeout=600"
apt_waiting() {
    local err attempt
    err="$(mktemp)"
    for ((attempt = 1; attempt <= 120; attempt++)); do
        if $SUDO apt-get $LOCK "$@" 2>"$err"; then
            rm -f "$err"
            return 0
        fi
        if [[ "$(<"$err")" != *"Could not get lock"* || "$attempt" -eq 120 ]]; then
            cat "$err" >&2
            rm -f "$err"
            return 1
        fi
        sleep 5
    done
}
apt_waiting update -qq
apt_waiting install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null
chromium --version
chromedriver --version
