#!/usr/bin/env bash
# What `make test` needs beyond the build, installed only when missing, so the README's `make test`
# works on a fresh machine: setpriv (util-linux) runs the read-only store tests as another user;
# python3 with the official SDKs checks that offpeak-sim's answers parse where real clients parse
# them, and drives the croniter, chaos and hang-up tests; promtool (Debian's prometheus package,
# without its recommended exporters) checks the metrics a tick writes. A dependency that cannot be
# installed fails here, by name: the tests must not go green by skipping what needs it. Debian's
# postgresql gives the server programs (initdb, pg_ctl, postgres, psql under
# /usr/lib/postgresql/VERSION/bin) the PostgreSQL store's tests start their own throwaway cluster with
# (Tests/OffpeakTestSupport/PostgresCluster.swift), on a private port; a system server its postinst
# may start is never used by them. iproute2's `ip` puts a host in its own network namespace, reaching
# the store over a veth pair that a test cuts (Tests/EndToEndTests/NetworkCutTests.swift). Debian's
# chromium and chromium-driver, driven from Python's selenium (scripts/browse.py), look at
# `offpeak dashboard` as a person's browser does (Tests/EndToEndTests/DashboardBrowserTests.swift).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh util-linux python3-pip iproute2
# The package's postinst enables its service; where systemd runs without a policy-rc.d it starts a
# Prometheus server on :9090, which the tests do not use.
scripts/install-deps.sh --no-install-recommends prometheus
scripts/install-deps.sh --no-install-recommends postgresql
# Debian's pgbouncer: the multi-host suites run once more behind it in transaction mode
# (Tests/OffpeakTestSupport/PgBouncer.swift); a pooler its postinst may start is never used by them.
scripts/install-deps.sh --no-install-recommends pgbouncer
scripts/install-deps.sh --no-install-recommends chromium chromium-driver fonts-dejavu-core
if ! ls /usr/lib/postgresql/*/bin/initdb /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    echo "error: the PostgreSQL store's tests need initdb and pg_ctl under /usr/lib/postgresql/*/bin" \
        "(Debian's postgresql), and they are missing after installing it" >&2
    exit 1
fi
if ! python3 -c 'import anthropic, openai, google.genai, mistralai.client, croniter, selenium' 2>/dev/null; then
    python3 -m pip install --quiet anthropic openai google-genai mistralai croniter selenium \
        || python3 -m pip install --quiet --break-system-packages anthropic openai google-genai mistralai croniter \
            selenium || true
fi
if ! python3 -c 'import anthropic, openai, google.genai, mistralai.client, croniter, selenium'; then
    echo "error: the tests need the anthropic, openai, google-genai and mistralai SDKs, croniter and selenium," \
        "and they could not be installed" \
        "(python3 -m pip install anthropic openai google-genai mistralai croniter selenium)" >&2
    exit 1
fi
for program in /usr/bin/chromium /usr/bin/chromedriver; do
    [ -x "$program" ] || { echo "error: $program is missing after installing chromium and chromium-driver" >&2; exit 1; }
done
command -v promtool >/dev/null || { echo "error: promtool is missing after installing prometheus" >&2; exit 1; }
