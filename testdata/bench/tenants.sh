#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# tenants.sh: what one Caddy holding many sites' robots.txt costs, as a
# platform runs it: one catch-all site in front of its tenants' origin,
# robots_enforce with the upstream source, and HOSTS distinct Hosts, each
# a site whose robots.txt is drawn from testdata/robots (Host tN gets file
# N mod 39, in the order of their names: the median file 4 KB, the 500 KiB
# synthetic one every 39th).
#
# For each max_memory of MEMORIES it starts that Caddy afresh (max_hosts
# MAX_HOSTS, new_hosts NEW_HOSTS per second, so that memory is the bound)
# and measures:
#   first   every Host asked for once (GET /articles/1 as GPTBot): each
#           request is a site's first, which fetches its robots.txt
#           through the route and waits for it. Caddy's CPU per request,
#           the latencies, and then its resident memory (VmRSS) over what
#           it held before, per site held (caddy_robots_enforce_robots_txt_hosts),
#           beside the octets the sites hold by the module's own count
#           (caddy_robots_enforce_robots_txt_bytes), and what the bounds did
#           (sites forgotten, fetched again). The same requests against
#           plainA, for what a request costs without the module.
#   steady  STEADY_HOSTS other Hosts, asked for twice a second apart (so
#           that they are in use), then asked for in turn for DURATION
#           seconds, ROUNDS times: no request fetches (the script checks
#           the fetch counter), each is judged against a site held. The
#           same load against two Caddy processes without robots_enforce
#           (plainA, plainB: the same site, reverse_proxy alone) in the same
#           rounds, in turn: plainB/plainA is the control, the method's own
#           spread, and robots/plainA is what the handler adds.
# It prints each run's line (see tenants/main.go), then a summary per
# max_memory.
#
# The load asks for /articles/1 as a crawler no file names, which the "*"
# group of most of the files lets pass (ExampleCrawler): those requests go
# to the origin as plainA's and plainB's all do.
#
# Usage, from the repository root (Linux, with curl, taskset and the go
# command):
#
#   testdata/bench/tenants.sh                          # ~15 minutes
#   HOSTS=20000 MEMORIES=1GiB testdata/bench/tenants.sh
#
# Settings, from the environment:
#   CADDY         a Caddy binary with this module (default: built from
#                 cmd/caddy)
#   HOSTS         distinct Hosts of the first requests (100000)
#   MEMORIES      max_memory settings, "default" for none given
#                 ("default 1GiB")
#   MAX_HOSTS     max_hosts (100000); NEW_HOSTS, new_hosts per second
#                 (100000)
#   STEADY_HOSTS  Hosts of the steady load (1000)
#   ROUNDS        steady rounds (3); DURATION, seconds per steady run (10)
#   WORKERS       connections of the load (8)
#   PORT_BASE     loopback ports PORT_BASE..PORT_BASE+5 (18201)
#   CADDY_CPU, WRK_CPU  cores taskset pins Caddy, and the load and the
#                 origin, to (1 and 0); set both empty to not pin
#
# Only 127.0.0.1 is used, and every process is stopped on exit.
set -euo pipefail

HOSTS=${HOSTS:-100000}
MEMORIES=${MEMORIES:-default 1GiB}
MAX_HOSTS=${MAX_HOSTS:-100000}
NEW_HOSTS=${NEW_HOSTS:-100000}
STEADY_HOSTS=${STEADY_HOSTS:-1000}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WORKERS=${WORKERS:-8}
PORT_BASE=${PORT_BASE:-18201}
CADDY_CPU=${CADDY_CPU-1}
WRK_CPU=${WRK_CPU-0}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

start_work
(cd "$repo" && go build -tags bench -o "$work/tenants" ./testdata/bench/tenants)
if [[ -z ${CADDY:-} ]]; then
	(cd "$repo" && go build -o "$work/caddy" ./cmd/caddy)
	CADDY=$work/caddy
fi
echo "caddy: $("$CADDY" version)"
echo "hosts $HOSTS, max_hosts $MAX_HOSTS, new_hosts $NEW_HOSTS/s, steady hosts $STEADY_HOSTS, $ROUNDS rounds of ${DURATION}s, $WORKERS connections"

origin=127.0.0.1:$PORT_BASE
"${wrk_pin[@]}" "$work/tenants" origin -listen "$origin" -corpus "$repo/testdata/robots" &
pids+=($!)

# start_caddy NAME PORT ADMIN OPTIONS: starts Caddy with a catch-all site
# on PORT in front of the origin, robots_enforce with OPTIONS unless
# OPTIONS is "-", and sets pid_NAME.
start_caddy() {
	local name=$1 port=$2 admin=$3 options=$4
	{
		printf '{\n\tadmin %s\n\tpersist_config off\n\tstorage file_system %s\n}\n' "$admin" "$work/storage-$name"
		printf 'http://:%s {\n\tbind 127.0.0.1\n' "$port"
		if [[ $options != - ]]; then
			printf '\trobots_enforce {\n\t\tverify off\n%s\n\t}\n' "$options"
		fi
		printf '\treverse_proxy %s\n}\n' "$origin"
	} >"$work/$name.caddyfile"
	"${caddy_pin[@]}" "$CADDY" run --config "$work/$name.caddyfile" --adapter caddyfile >"$work/$name.log" 2>&1 &
	pids+=($!)
	printf -v "pid_$name" '%s' "$!"
	local _
	for _ in $(seq 100); do
		curl -fsS -o /dev/null -H 'Host: warm0' "http://127.0.0.1:$port/" 2>/dev/null && return
		sleep 0.1
	done
	echo "caddy $name did not start:" >&2
	cat "$work/$name.log" >&2
	exit 1
}

# metric ADMIN NAME [LABELS]: the sum of metric NAME's series with LABELS.
metric() {
	curl -fsS "http://$1/metrics" | awk -v name="$2" -v labels="${3:-}" '
		index($0, name "{") == 1 || index($0, name " ") == 1 {
			if (labels == "" || index($0, labels)) sum += $NF
		}
		END { printf "%.0f\n", sum }'
}

# vmrss PID: the resident memory of process PID, in octets.
vmrss() { awk '/^VmRSS:/ { printf "%d\n", $2 * 1024 }' "/proc/$1/status"; }

# calc EXPR: EXPR, an awk expression, to one decimal.
calc() { awk "BEGIN { printf \"%.1f\", $1 }"; }

# field LINE KEY: the value of KEY=value in LINE.
field() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

run_load() { "${wrk_pin[@]}" "$work/tenants" load -workers "$WORKERS" "$@"; }

start_caddy plainA $((PORT_BASE + 1)) off -
start_caddy plainB $((PORT_BASE + 2)) off -
# shellcheck disable=SC2154 # set by start_caddy
pidA=$pid_plainA pidB=$pid_plainB
declare -A summary
for mem in $MEMORIES; do
	echo
	echo "== max_memory $mem"
	options=$(printf '\t\tmax_hosts %s\n\t\tnew_hosts %s per 1s\n' "$MAX_HOSTS" "$NEW_HOSTS")
	[[ $mem == default ]] || options+=$(printf '\n\t\tmax_memory %s\n' "$mem")
	admin=127.0.0.1:$((PORT_BASE + 4))
	start_caddy robots $((PORT_BASE + 3)) "$admin" "$options"
	# shellcheck disable=SC2154 # set by start_caddy
	pid=$pid_robots
	sleep 1
	base=$(vmrss "$pid")

	first=$(run_load -target 127.0.0.1:$((PORT_BASE + 3)) -pid "$pid" -prefix t -count "$HOSTS")
	echo "first   $first"
	plainFirst=$(run_load -target 127.0.0.1:$((PORT_BASE + 1)) -pid "$pidA" -prefix t -count "$HOSTS")
	echo "first   plainA $plainFirst"
	sleep 2
	rss=$(vmrss "$pid")
	held=$(metric "$admin" caddy_robots_enforce_robots_txt_hosts)
	bytes=$(metric "$admin" caddy_robots_enforce_robots_txt_bytes)
	fetches=$(metric "$admin" caddy_robots_enforce_robots_fetches_total)
	printf 'held    sites=%s bytes_mb=%s rss_mb=%s (%s before) rss_per_site_kb=%s bytes_per_site_kb=%s fetches=%s forgotten_memory=%s forgotten_hosts=%s refetched=%s\n' \
		"$held" "$(calc "$bytes/1e6")" "$(calc "$rss/1e6")" "$(calc "$base/1e6")" \
		"$(calc "($rss-$base)/$held/1e3")" "$(calc "$bytes/$held/1e3")" "$fetches" \
		"$(metric "$admin" caddy_robots_enforce_sites_forgotten_total 'reason="max_memory"')" \
		"$(metric "$admin" caddy_robots_enforce_sites_forgotten_total 'reason="max_hosts"')" \
		"$(metric "$admin" caddy_robots_enforce_sites_refetched_total)"

	run_load -target 127.0.0.1:$((PORT_BASE + 3)) -pid "$pid" -prefix s -count "$STEADY_HOSTS" >/dev/null
	sleep 1.1
	run_load -target 127.0.0.1:$((PORT_BASE + 3)) -pid "$pid" -prefix s -count "$STEADY_HOSTS" >/dev/null
	before=$(metric "$admin" caddy_robots_enforce_robots_fetches_total)
	ratios=() controls=()
	for round in $(seq "$ROUNDS"); do
		order=(robots plainA plainB)
		((round % 2)) || order=(plainB plainA robots)
		declare -A cost=()
		for p in "${order[@]}"; do
			case $p in
			robots) port=$((PORT_BASE + 3)) ppid=$pid ;;
			plainA) port=$((PORT_BASE + 1)) ppid=$pidA ;;
			plainB) port=$((PORT_BASE + 2)) ppid=$pidB ;;
			esac
			line=$(run_load -target "127.0.0.1:$port" -pid "$ppid" -prefix s -count "$STEADY_HOSTS" -duration "${DURATION}s")
			cost[$p]=$(field "$line" cpu_us_per_req)
			echo "steady  round=$round $p $line"
		done
		ratios+=("$(awk "BEGIN { printf \"%.3f\", ${cost[robots]}/${cost[plainA]} }")")
		controls+=("$(awk "BEGIN { printf \"%.3f\", ${cost[plainB]}/${cost[plainA]} }")")
	done
	steadyFetches=$(($(metric "$admin" caddy_robots_enforce_robots_fetches_total) - before))
	summary[$mem]=$(printf 'first: %s us CPU a request (plainA %s), p50 %s ms, p99 %s ms; held: %s sites in %s MB by its count, %s KB a site; resident %s MB over %s MB before, %s KB a site; steady: robots/plainA median %s, control plainB/plainA %s (min..max), %s fetches while steady' \
		"$(field "$first" cpu_us_per_req)" "$(field "$plainFirst" cpu_us_per_req)" "$(field "$first" p50_ms)" "$(field "$first" p99_ms)" \
		"$held" "$(calc "$bytes/1e6")" "$(calc "$bytes/$held/1e3")" "$(calc "($rss-$base)/1e6")" "$(calc "$base/1e6")" \
		"$(calc "($rss-$base)/$held/1e3")" \
		"$(printf '%s\n' "${ratios[@]}" | median)" \
		"$(printf '%s\n' "${controls[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f..%.3f", lo, hi }')" \
		"$steadyFetches")
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done

echo
for mem in $MEMORIES; do
	echo "max_memory $mem: ${summary[$mem]}"
done
