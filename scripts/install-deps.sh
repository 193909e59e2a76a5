#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet; does nothing when all are there.
# Fails, naming them, when any is still not installed afterwards. Options before the names
# (`--no-install-recommends`) go to apt-get.
set -euo pipefail
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
options=()
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
    options+=("$1")
    shift
done
missing=()
for package in "$@"; do
    installed "$package" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ${options[@]+"${options[@]}"} "${missing[@]}"
still=()
for package in "${missing[@]}"; do
    installed "$package" || still+=("$package")
done
if [ ${#still[@]} -gt 0 ]; then
    echo "error: could not install: ${still[*]}" >&2
    exit 1
fi
