#!/usr/bin/env bash
# Runs before `npm test`: makes sure the real components the suite uses are on the machine —
# PostgreSQL server binaries (the suite starts its own throwaway server) and Debian's Chromium (the report
# page is tested in a headless browser). Installs them with apt-get when missing and we may.
set -euo pipefail
need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ -n "${TEST_DATABASE_URL:-}" ] || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "The test suite needs: ${need[*]} (Debian packages). Install them, or set TEST_DATABASE_URL for PostgreSQL." >&2
  exit 1
fi
echo "installing for the test suite: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
