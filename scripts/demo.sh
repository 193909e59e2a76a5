#!/usr/bin/env bash
# Starts offpeak-sim on a free port, runs the `digest` job over samples/*.md through it, shows the
# outputs, the cost and the status, then stops the sim. Usage: scripts/demo.sh BIN_DIR
set -euo pipefail
bin="${1:?usage: demo.sh BIN_DIR}"
cd "$(dirname "$0")/.."
log="$(mktemp)"
"$bin/offpeak-sim" --port 0 --latency-ms 20 >"$log" 2>&1 &
sim=$!
trap 'kill "$sim" 2>/dev/null || true; rm -f "$log"' EXIT
url=""
for _ in $(seq 1 100); do
    url="$(sed -n 's/^offpeak-sim listening on \(http[^ ]*\).*/\1/p' "$log" | head -n 1)"
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "offpeak-sim did not start:"; cat "$log"; exit 69; }
echo "offpeak-sim is listening on $url"
echo
"$bin/offpeak" run digest --provider sim --base-url "$url"
echo
echo "outputs:"
for file in out/digest/*.md; do
    printf '  %s: %s\n' "$file" "$(head -c 100 "$file" | tr '\n' ' ')..."
done
echo
"$bin/offpeak" status --limit 3
echo
"$bin/offpeak" costs --by model
