#!/usr/bin/env bash
# Installs what the real node (make node) needs beside the kubelet built
# from hack/tools/kubelet: containerd and runc, and the CNI plugins (only
# /usr/lib/cni/loopback is used), from Debian's packages `containerd`,
# `runc` and `containernetworking-plugins`. Does nothing when they are
# already there. Needs root (apt-get); prints one line saying what is
# missing and exits 1 when they cannot be installed.
set -euo pipefail

CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
missing=()
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[[ -x $CNI_BIN_DIR/loopback ]] || missing+=(containernetworking-plugins)
if ((${#missing[@]} == 0)); then
	exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	echo "node: missing ${missing[*]} and cannot install them (needs root and apt-get): install the Debian packages ${missing[*]}" >&2
	exit 1
fi
echo "node: installing ${missing[*]} (apt-get)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
	echo "node: apt-get install ${missing[*]} failed: $(tail -n 1 "$log")" >&2
	exit 1
fi
# Debian's package starts containerd as a system service on /run/containerd;
# the real node runs a containerd of its own (its own socket, root and
# state under the control plane's work directory), so the system one is
# left as the package set it up.
