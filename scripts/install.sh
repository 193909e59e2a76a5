#!/usr/bin/env bash
# make install: scripts/install.sh BIN_DIR ROOT MAN_DATE
# Puts offpeak and offpeak-sim from BIN_DIR in ROOT/bin, and offpeak's completions (from
# `offpeak --generate-completion-script`) and man page (from swift-argument-parser's
# generate-manual in BIN_DIR) where Debian's bash-completion, zsh, fish and man look under ROOT.
# Everything is generated into a temporary folder first, so a failure leaves nothing half-written.
set -euo pipefail
bin=$1 root=$2 date=$3
for tool in offpeak offpeak-sim generate-manual; do
    [ -x "$bin/$tool" ] || { echo "install: $bin/$tool is missing; build first" >&2; exit 69; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$bin/offpeak" --generate-completion-script bash > "$stage/offpeak.bash"
"$bin/offpeak" --generate-completion-script zsh > "$stage/_offpeak"
"$bin/offpeak" --generate-completion-script fish > "$stage/offpeak.fish"
"$bin/generate-manual" "$bin/offpeak" --date "$date" --section 1 --output-directory "$stage"
[ -s "$stage/offpeak.1" ] || { echo "install: generate-manual wrote no offpeak.1" >&2; exit 70; }

install -d "$root/bin" "$root/share/bash-completion/completions" "$root/share/zsh/site-functions" \
    "$root/share/fish/vendor_completions.d" "$root/share/man/man1"
install -m 755 "$bin/offpeak" "$bin/offpeak-sim" "$root/bin/"
install -m 644 "$stage/offpeak.bash" "$root/share/bash-completion/completions/offpeak"
install -m 644 "$stage/_offpeak" "$root/share/zsh/site-functions/_offpeak"
install -m 644 "$stage/offpeak.fish" "$root/share/fish/vendor_completions.d/offpeak.fish"
install -m 644 "$stage/offpeak.1" "$root/share/man/man1/offpeak.1"
echo "installed offpeak $("$bin/offpeak" --version) under $root"
