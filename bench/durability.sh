#!/usr/bin/env bash
# The kill -9 run of the Durability issue (see bench/durability.py):
#   bench/durability.sh [instances] [runs] [binary]     e.g. bench/durability.sh 200 4
# Builds the release binary unless one is given.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
instances=${1:-200}
runs=${2:-4}
binary=${3:-}
if [ -z "$binary" ]; then
    cargo build --release -q -p solgate
    binary=target/release/solgate
fi
exec python3 bench/durability.py "$binary" "$instances" "$runs"
