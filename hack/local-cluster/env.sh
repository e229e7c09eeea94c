#!/usr/bin/env bash
# Prints the admin kubeconfig path of the local cluster: export KUBECONFIG=$(hack/local-cluster/env.sh)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -f "$KUBECONFIG_FILE" ] || { echo "local cluster not up (no $KUBECONFIG_FILE)" >&2; exit 1; }
echo "$KUBECONFIG_FILE"
