#!/bin/sh
# Post-install step of the solgate sample VNF: a placeholder that only reports where it ran.
set -eu
echo "sample VNF configured on $(hostname)"
