#!/usr/bin/env bash
# build-caddy.sh: builds one Caddy binary with Caddy's standard modules,
# robots_enforce from this repository and, when it can be had,
# caddy-defender, so that compare.sh loads both from the same binary.
#
# Usage, from anywhere (Linux or macOS, with the go command):
#
#   testdata/bench/build-caddy.sh /tmp/caddy
#   DEFENDER_DIR=/tmp/caddy-defender testdata/bench/build-caddy.sh /tmp/caddy
#
# It writes a temporary Go module (a main package and its go.mod) whose
# go.mod replaces github.com/robotsenforce/caddy-robots-enforce with this
# working tree, so the binary has the module as it is on disk, committed
# or not. caddy-defender (module pkg.jsn.cam/caddy-defender) comes:
#   1. from the Go module proxy, its latest version, when the proxy has it;
#   2. else from a local checkout named by DEFENDER_DIR, through a replace
#      in the temporary go.mod. The proxy has answered 403 Forbidden for
#      that module path (`go list -m -versions pkg.jsn.cam/caddy-defender`),
#      and where it does a checkout is the way to build it in:
#      git clone https://github.com/JasonLovesDoggo/caddy-defender;
#   3. else not at all: the binary is built without it, and the script says
#      so on standard error.
# The versions built in (Caddy, caddy-defender, and the checkout's commit)
# are printed on standard error. Nothing of caddy-defender is kept in this
# repository; its code is only ever read from the proxy or DEFENDER_DIR.
#
# Settings, from the environment:
#   DEFENDER_DIR  a caddy-defender checkout, used when the proxy fails
#   DEFENDER      0 to build without caddy-defender, asking nobody
#
# The exit status is 0 when a binary was built, with or without
# caddy-defender; `OUT list-modules` tells which.
set -euo pipefail

[[ $# == 1 ]] || {
	echo "usage: $0 OUTPUT-BINARY" >&2
	exit 2
}
out=$1
[[ $out == /* ]] || out=$PWD/$out
DEFENDER=${DEFENDER:-1}
DEFENDER_DIR=${DEFENDER_DIR:-}
defender_module=pkg.jsn.cam/caddy-defender
repo=$(cd "$(dirname "$0")/../.." && pwd)
robots_module=$(awk '$1 == "module" { print $2; exit }' "$repo/go.mod")

mod=$(mktemp -d)
trap 'rm -rf "$mod"' EXIT
cd "$mod"
export GOWORK=off GOFLAGS=-mod=mod

# The go line of this module's go.mod, so the build needs no newer Go than
# the module does. The go.sum is a head start: most sums are the same.
{
	echo 'module robotsbench'
	echo
	grep -m1 '^go ' "$repo/go.mod"
	echo
	echo "require $robots_module v0.0.0"
	echo "replace $robots_module => $repo"
} >go.mod
cp "$repo/go.sum" go.sum

# defender_from: how caddy-defender is built in ("proxy", "checkout"), or
# "" when it is not.
defender_from=
if [[ $DEFENDER == 0 ]]; then
	echo "DEFENDER=0: building without caddy-defender" >&2
elif answer=$(timeout 60 go list -m -versions "$defender_module" 2>&1) &&
	answer=$(timeout 300 go get "$defender_module@latest" 2>&1); then
	defender_from=proxy
else
	echo "the Go module proxy does not serve $defender_module:" >&2
	printf '  %s\n' "${answer//$'\n'/$'\n  '}" >&2
	if [[ -z $DEFENDER_DIR ]]; then
		echo "building without caddy-defender: set DEFENDER_DIR to a checkout of" >&2
		echo "  https://github.com/JasonLovesDoggo/caddy-defender to compare with it" >&2
	elif [[ $(awk '$1 == "module" { print $2; exit }' "$DEFENDER_DIR/go.mod" 2>/dev/null) != "$defender_module" ]]; then
		echo "DEFENDER_DIR=$DEFENDER_DIR holds no go.mod of $defender_module" >&2
		exit 1
	else
		dir=$(cd "$DEFENDER_DIR" && pwd)
		printf 'require %s v0.0.0\nreplace %s => %s\n' "$defender_module" "$defender_module" "$dir" >>go.mod
		defender_from=checkout
		commit=$(git -C "$dir" describe --always --dirty --abbrev=12 2>/dev/null || echo "not a git checkout")
		echo "taking $defender_module from DEFENDER_DIR=$dir (commit $commit)" >&2
	fi
fi

{
	echo '// Command caddy: Caddy with robots_enforce and caddy-defender, for compare.sh.'
	echo 'package main'
	echo
	echo 'import ('
	printf '\tcaddycmd "github.com/caddyserver/caddy/v2/cmd"\n\n'
	printf '\t_ "github.com/caddyserver/caddy/v2/modules/standard"\n'
	printf '\t_ "%s"\n' "$robots_module"
	if [[ -n $defender_from ]]; then
		printf '\t_ "%s"\n' "$defender_module"
	fi
	echo ')'
	echo
	echo 'func main() { caddycmd.Main() }'
} >main.go

echo "building caddy into $out" >&2
go mod tidy
go build -o "$out" .
{
	echo "built with:"
	go list -m github.com/caddyserver/caddy/v2 "$robots_module" | sed 's/^/  /'
	if [[ -n $defender_from ]]; then
		echo "  $(go list -m "$defender_module") (from the $defender_from)"
	fi
} >&2
