#!/usr/bin/env bash
# hack/tool-stamp.sh DIR STAMP BINARY...: keeps STAMP, the hash of the
# tools module hack/tools/DIR (go.mod, go.sum and any *.go), rewritten
# only when that hash changes; make rebuilds the module's BINARYs when
# STAMP is newer than them. A tool is thus rebuilt when its module
# changes in content, not in mtime: a fresh clone stamps every file new,
# and a bin/ copied into it with its stamps (cp -a) is kept. A first
# stamp (a bin/ from before stamps) takes the oldest BINARY's mtime when
# every BINARY is newer than the module's files (the old mtime rule's
# "up to date"), and now otherwise.
set -euo pipefail
dir=hack/tools/$1 stamp=$2
shift 2
files=("$dir/go.mod" "$dir/go.sum")
for f in "$dir"/*.go; do [[ -e $f ]] && files+=("$f"); done
sum=$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)
if [[ -f $stamp ]]; then
	[[ $(cat "$stamp") == "$sum" ]] && exit 0
	echo "$sum" >"$stamp"
	exit 0
fi
mkdir -p "$(dirname "$stamp")"
echo "$sum" >"$stamp"
oldest=
for b in "$@"; do
	[[ -e $b ]] || exit 0
	for f in "${files[@]}"; do [[ $f -nt $b ]] && exit 0; done
	if [[ -z $oldest || $oldest -nt $b ]]; then oldest=$b; fi
done
[[ -n $oldest ]] && touch -r "$oldest" "$stamp"
exit 0
