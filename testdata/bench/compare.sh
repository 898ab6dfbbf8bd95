#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# compare.sh: the CPU a whole Caddy process spends per request with
# robots_enforce, and with caddy-defender, against the same site bare, all
# from one Caddy binary and one run, with the method's own noise beside
# them.
#
# It builds one Caddy (build-caddy.sh: the standard modules, this module,
# and caddy-defender from the Go module proxy or DEFENDER_DIR) and starts,
# on 127.0.0.1, one process per configuration, each serving `respond "ok"`:
#   plainA, plainB  the site bare, twice: plainB/plainA is the control,
#                   two identical processes, whose spread is the method's
#   robots          robots_enforce, enforce mode, inline robots.txt, GPTBot
#                   verified against a range list of loopback addresses,
#                   compliance records written to a file in the work
#                   directory (a `log` block including
#                   http.handlers.robots_enforce)
#   robotsbody      the same, denials answered with a text (`body`)
#   robotsbuf       robots, its records written through robots_buffered
#                   (this module's buffered log writer) to the same kind
#                   of file: a write(2) per 64 KiB of records, not per
#                   record
#   robotsfleet     with FLEET=1: robots with `distributed` (5 s
#                   intervals), the processes sharing one storage (the
#                   work directory's), so that it writes its part and
#                   reads robots's
#   defpass         caddy-defender, `block` responder, its default ranges
#                   (cloud and AI providers), which do not hold 127.0.0.1
#   defblock        the same ranges and 127.0.0.0/8: it blocks every request
# and three wrk loads, each against the processes it concerns:
#   browser  a browser on an allowed path       plainA plainB robots defpass
#   allowed  GPTBot on a path its group allows  plainA plainB robots defpass
#   denied   GPTBot on a path its group denies  plainA plainB robots
#            (403 and a record, or 403 from     robotsbody robotsbuf
#            defender; 200 from plain)          defblock
# Before measuring it checks each process answers each of its loads as it
# should (status, the records written, the denial's text). Each round runs
# every load against each of its processes in turn, the order reversed
# every other round, and reads each process's user and system CPU time
# from /proc/PID/stat before and after: CPU per request is that over the
# requests wrk completed. It prints every run with its ratio to plainA of
# the same round, then per load and process the median of the rounds'
# ratios, the ratio over all rounds, and the CPU per request over all
# rounds; and per load the control's spread, the min..max of plainB/plainA
# over the rounds: a ratio inside it is not told apart from 1.
#
# Without caddy-defender (neither the proxy nor DEFENDER_DIR has it), it
# runs the rest and says so. Every process serves `respond "ok"`, the
# cheapest site Caddy has, so the ratios are the harshest there are. All
# loads come from 127.0.0.1, one address: caddy-defender's per-address
# cache and robots_enforce's verification of GPTBot see the same address
# on every request, as they would one busy crawler.
#
# Usage, from the repository root (Linux, with wrk, curl and the go
# command):
#
#   DEFENDER_DIR=/tmp/caddy-defender testdata/bench/compare.sh
#   ROUNDS=9 DURATION=10 PROFILE=1 DEFENDER_DIR=… testdata/bench/compare.sh
#   CADDY=/tmp/caddy testdata/bench/compare.sh   # a binary built before
#
# Settings, from the environment:
#   CADDY         a Caddy binary to use (build-caddy.sh builds one);
#                 caddy-defender is compared when it lists the module
#   DEFENDER_DIR  a caddy-defender checkout, for build-caddy.sh
#   PROFILE       1 to also take CPU profiles, under the allowed and the
#                 denied load, of robots (admin endpoint on PORT_ADMIN) and
#                 under the denied load of defblock (PORT_ADMIN+1) and
#                 robotsbuf (PORT_ADMIN+2), of the loads run, and print
#                 the share of the process's CPU each handler's own work
#                 took (handler_share in lib.sh says how it is summed;
#                 defender's is its ServeHTTP's, which hands nothing on when
#                 it blocks). Within one process at one time, a share does
#                 not drift with the machine as a ratio does.
#   PROFILE_DIR   a directory to keep the profiles in (default: deleted)
#   LOADS         the loads to run, of "browser allowed denied" (all)
#   FLEET         1 to add robotsfleet to every load
#   ROUNDS        rounds (3)
#   DURATION      seconds of load per run (10)
#   WARMUP        seconds of load per process and load before the rounds (2)
#   CONNECTIONS   wrk connections (16), on one wrk thread
#   PORT_BASE     loopback ports PORT_BASE..PORT_BASE+7 (18101); PORT_ADMIN
#                 to PORT_ADMIN+2 for the profiles (18109)
#   CADDY_CPU, WRK_CPU  cores taskset pins Caddy and wrk to (1 and 0); set
#                 both empty to not pin
#
# Only 127.0.0.1 is used. Every wrk run is bounded by DURATION (and killed
# 15 s past it); with caddy-defender a round is 14 runs, so a call takes
# about ROUNDS × 14 × (DURATION + 1) s, plus the build, 14 × WARMUP s of
# warm-up and, with PROFILE, 3 × (DURATION + 2) s: about 8 minutes with the
# defaults. Every Caddy process is stopped on exit.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-16}
PORT_BASE=${PORT_BASE:-18101}
PORT_ADMIN=${PORT_ADMIN:-18109}
PROFILE=${PROFILE:-0}
PROFILE_DIR=${PROFILE_DIR:-}
FLEET=${FLEET:-0}
CADDY_CPU=${CADDY_CPU-1}
WRK_CPU=${WRK_CPU-0}

BROWSER_UA='Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
CRAWLER_UA='Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)'
ALLOWED_PATH=/blog/post.html
DENIED_PATH=/private/report.html
DENY_BODY='Disallowed by robots.txt'
# caddy-defender's default ranges (its plugin.go, DefaultRanges), named so
# that both of its processes hold the same table but for 127.0.0.0/8.
DEFENDER_RANGES='aws gcloud azurepubliccloud openai deepseek githubcopilot'

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

start_work

if [[ -z ${CADDY:-} ]]; then
	"$here/build-caddy.sh" "$work/caddy"
	CADDY=$work/caddy
fi
modules=$("$CADDY" list-modules)
grep -qx 'http.handlers.robots_enforce' <<<"$modules" || {
	echo "$CADDY has no robots_enforce" >&2
	exit 1
}
procs=(plainA plainB robots robotsbody)
buffered=0
if grep -qx 'caddy.logging.writers.robots_buffered' <<<"$modules"; then
	procs+=(robotsbuf)
	buffered=1
else
	echo "this caddy has no robots_buffered log writer: comparing without robotsbuf" >&2
fi
[[ $FLEET == 1 ]] && procs+=(robotsfleet)
if grep -qx 'http.handlers.defender' <<<"$modules"; then
	procs+=(defpass defblock)
	defender=1
else
	echo "this caddy has no caddy-defender: comparing without it" >&2
	defender=0
fi

# The loads: User-Agent, path, and the processes each runs against.
declare -A load_ua load_path load_procs
load_ua[browser]=$BROWSER_UA load_path[browser]=$ALLOWED_PATH
load_ua[allowed]=$CRAWLER_UA load_path[allowed]=$ALLOWED_PATH
load_ua[denied]=$CRAWLER_UA load_path[denied]=$DENIED_PATH
load_procs[browser]="plainA plainB robots"
load_procs[allowed]="plainA plainB robots"
load_procs[denied]="plainA plainB robots robotsbody"
((buffered)) && load_procs[denied]+=" robotsbuf"
if [[ $FLEET == 1 ]]; then
	for l in browser allowed denied; do
		load_procs[$l]+=" robotsfleet"
	done
fi
if ((defender)); then
	load_procs[browser]+=" defpass"
	load_procs[allowed]+=" defpass"
	load_procs[denied]+=" defblock"
fi
read -ra loads <<<"${LOADS:-browser allowed denied}"
for l in "${loads[@]}"; do
	[[ -n ${load_ua[$l]:-} ]] || {
		echo "LOADS: no load named $l (browser, allowed, denied)" >&2
		exit 2
	}
done

# want LOAD PROC: the status PROC answers LOAD with.
want() {
	[[ $1 == denied && $2 != plain* ]] && echo 403 || echo 200
}

# caddyfile PROC PORT: the configuration of process PROC.
caddyfile() {
	local admin=off
	if [[ $PROFILE == 1 ]]; then
		[[ $1 == robots ]] && admin=127.0.0.1:$PORT_ADMIN
		[[ $1 == defblock ]] && admin=127.0.0.1:$((PORT_ADMIN + 1))
		[[ $1 == robotsbuf ]] && admin=127.0.0.1:$((PORT_ADMIN + 2))
	fi
	printf '{\n\tadmin %s\n\tpersist_config off\n\tstorage file_system %s\n' "$admin" "$work/storage"
	if [[ $1 == robots* ]]; then
		# Rolled files are kept uncompressed: gzip in the middle of a
		# run would be counted against one round only.
		local output="file $work/$1.records.log {
			roll_size 50MiB
			roll_keep 2
			roll_uncompressed
		}"
		if [[ $1 == robotsbuf ]]; then
			output="robots_buffered {
			output $output
		}"
		fi
		cat <<EOF
	log records {
		output $output
		format json
		include http.handlers.robots_enforce
	}
EOF
	fi
	printf '}\nhttp://:%s {\n\tbind 127.0.0.1\n' "$2"
	case $1 in
	robots | robotsbuf) robots_enforce_block "" ;;
	robotsfleet) robots_enforce_block "" "distributed" ;;
	robotsbody) robots_enforce_block "$DENY_BODY" ;;
	defpass) printf '\tdefender block {\n\t\tranges %s\n\t}\n' "$DEFENDER_RANGES" ;;
	defblock) printf '\tdefender block {\n\t\tranges %s 127.0.0.0/8\n\t}\n' "$DEFENDER_RANGES" ;;
	esac
	printf '\trespond "ok"\n}\n'
}

write_gptbot_ranges

declare -A port pid
i=0
for p in "${procs[@]}"; do
	port[$p]=$((PORT_BASE + i))
	i=$((i + 1))
	caddyfile "$p" "${port[$p]}" >"$work/$p.caddyfile"
	# taskset execs Caddy: $! is Caddy's own PID.
	"${caddy_pin[@]}" "$CADDY" run --adapter caddyfile --config "$work/$p.caddyfile" >"$work/$p.log" 2>&1 &
	pid[$p]=$!
	pids+=("$!")
done
for p in "${procs[@]}"; do
	for _ in $(seq 50); do
		[[ $(curl -so /dev/null -w '%{http_code}' "http://127.0.0.1:${port[$p]}/") != 000 ]] && continue 2
		sleep 0.2
	done
	echo "caddy ($p) did not start:" >&2
	cat "$work/$p.log" >&2
	exit 1
done

# Each process must answer each of its loads as its configuration says,
# robots_enforce must write the denial's record, and robotsbody must answer
# with its text: else the figures would measure something else.
for l in "${loads[@]}"; do
	for p in ${load_procs[$l]}; do
		got=$(curl -s -o "$work/body" -w '%{http_code}' -A "${load_ua[$l]}" "http://127.0.0.1:${port[$p]}${load_path[$l]}")
		if [[ $got != "$(want "$l" "$p")" ]]; then
			echo "unexpected status: $p answers the $l load with $got, want $(want "$l" "$p")" >&2
			exit 1
		fi
		# robotsbuf writes its records within its flush interval.
		if [[ $l == denied && $p == robots* ]] && ! for _ in $(seq 20); do
			grep -q "\"msg\":\"robots.txt decision\".*\"$DENIED_PATH\"" "$work/$p.records.log" 2>/dev/null && break
			sleep 0.1
			false
		done; then
			echo "$p wrote no record of its denial to $work/$p.records.log" >&2
			exit 1
		fi
		if [[ $l == denied && $p == robotsbody && $(<"$work/body") != "$DENY_BODY" ]]; then
			echo "robotsbody answers its denial with \"$(<"$work/body")\", want \"$DENY_BODY\"" >&2
			exit 1
		fi
	done
done

# run LOAD PROC SECONDS: load PROC with LOAD for SECONDS; print the
# requests wrk completed. Every answer must have LOAD's status for PROC
# (wrk counts the others as Non-2xx or 3xx), and no socket may fail.
run() {
	local out n bad
	out=$("${wrk_pin[@]}" timeout $(($3 + 15)) wrk -t1 -c"$CONNECTIONS" -d"${3}s" \
		-H "User-Agent: ${load_ua[$1]}" "http://127.0.0.1:${port[$2]}${load_path[$1]}")
	n=$(awk '/ requests in / { print $1 }' <<<"$out")
	bad=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' <<<"$out")
	if [[ -z $n ]] || grep -q 'Socket errors' <<<"$out" ||
		{ [[ $(want "$1" "$2") == 200 ]] && [[ -n $bad ]]; } ||
		{ [[ $(want "$1" "$2") != 200 ]] && [[ $bad != "$n" ]]; }; then
		echo "wrk: the $1 load against $2 saw answers other than $(want "$1" "$2"), or errors:" >&2
		echo "$out" >&2
		return 1
	fi
	echo "$n"
}

for l in "${loads[@]}"; do
	for p in ${load_procs[$l]}; do
		run "$l" "$p" "$WARMUP" >/dev/null
	done
done

tck=$(getconf CLK_TCK)
declare -A us ticks requests ratio line
row() { printf '%-5s  %-7s  %-10s  %9s  %7s  %10s  %8s\n' "$@"; }
((ROUNDS > 0)) && row round load process requests cpu_s cpu_us/req 'to plainA'
for round in $(seq "$ROUNDS"); do
	for l in "${loads[@]}"; do
		read -ra order <<<"${load_procs[$l]}"
		if ((round % 2 == 0)); then
			for ((i = 0, j = ${#order[@]} - 1; i < j; i++, j--)); do
				t=${order[i]} order[i]=${order[j]} order[j]=$t
			done
		fi
		for p in "${order[@]}"; do
			start=$(cpu_ticks "${pid[$p]}")
			n=$(run "$l" "$p" "$DURATION")
			t=$(($(cpu_ticks "${pid[$p]}") - start))
			ticks[$l,$p]=$((${ticks[$l,$p]:-0} + t))
			requests[$l,$p]=$((${requests[$l,$p]:-0} + n))
			us[$round,$l,$p]=$(awk -v t="$t" -v hz="$tck" -v n="$n" 'BEGIN { printf "%.3f", t / hz / n * 1e6 }')
			line[$p]="$n $(awk -v t="$t" -v hz="$tck" 'BEGIN { printf "%.2f", t / hz }')"
		done
		# In the order they ran, each with its ratio to plainA, known
		# once the whole load has run.
		for p in "${order[@]}"; do
			read -r n cpu <<<"${line[$p]}"
			ratio[$round,$l,$p]=$(awk -v a="${us[$round,$l,$p]}" -v b="${us[$round,$l,plainA]}" 'BEGIN { printf "%.3f", a / b }')
			row "$round" "$l" "$p" "$n" "$cpu" "${us[$round,$l,$p]}" "${ratio[$round,$l,$p]}"
		done
	done
done

if [[ $PROFILE == 1 ]]; then
	pdir=${PROFILE_DIR:-$work}
	mkdir -p "$pdir"
	echo
	printf '%-7s  %-8s  %s\n' load process "share of the process's CPU in the handler's own work"
	# profile LOAD PROC ADMIN-PORT: a CPU profile of PROC under LOAD.
	profile() {
		run "$1" "$2" $((DURATION + 2)) >/dev/null &
		local loading=$!
		sleep 1
		curl -fso "$pdir/$2-$1.pprof" "http://127.0.0.1:$3/debug/pprof/profile?seconds=$DURATION"
		wait "$loading"
	}
	for l in allowed denied; do
		[[ " ${loads[*]} " == *" $l "* ]] || continue
		profile "$l" robots "$PORT_ADMIN"
		printf '%-7s  %-8s  %s\n' "$l" robots "$(handler_share "$pdir/robots-$l.pprof")"
	done
	has_denied=0
	[[ " ${loads[*]} " == *" denied "* ]] && has_denied=1
	if ((buffered && has_denied)); then
		profile denied robotsbuf $((PORT_ADMIN + 2))
		printf '%-7s  %-8s  %s\n' denied robotsbuf "$(handler_share "$pdir/robotsbuf-denied.pprof")"
	fi
	if ((defender && has_denied)); then
		profile denied defblock $((PORT_ADMIN + 1))
		# Blocking, defender's ServeHTTP calls no next handler: its
		# cumulative share is all its work.
		share=$(go tool pprof -top -cum -nodefraction=0 "$pdir/defblock-denied.pprof" 2>/dev/null |
			awk '/caddy-defender\.Defender\.ServeHTTP$/ { print $5; found = 1; exit } END { if (!found) print "?" }')
		printf '%-7s  %-8s  %s\n' denied defblock "$share"
	fi
	[[ -n $PROFILE_DIR ]] && echo "profiles kept in $PROFILE_DIR"
fi

((ROUNDS > 0)) || exit 0
echo
printf '%-7s  %-10s  %-32s  %-6s  %-10s  %s\n' load process 'ratio to plainA, by round' median 'all rounds' 'cpu_us/req, all rounds'
for l in "${loads[@]}"; do
	for p in ${load_procs[$l]}; do
		[[ $p == plainA ]] && continue
		rs=()
		for round in $(seq "$ROUNDS"); do
			rs+=("${ratio[$round,$l,$p]}")
		done
		pooled=$(awk -v tp="${ticks[$l,$p]}" -v np="${requests[$l,$p]}" \
			-v ta="${ticks[$l,plainA]}" -v na="${requests[$l,plainA]}" 'BEGIN { printf "%.3f", tp / np / (ta / na) }')
		printf '%-7s  %-10s  %-32s  %-6s  %-10s  %s\n' "$l" "$p" "${rs[*]}" \
			"$(printf '%s\n' "${rs[@]}" | median)" "$pooled" \
			"$(awk -v t="${ticks[$l,$p]}" -v hz="$tck" -v n="${requests[$l,$p]}" 'BEGIN { printf "%.3f", t / hz / n * 1e6 }')"
	done
done
echo
printf 'control spread, plainB/plainA over the rounds (min..max):'
for l in "${loads[@]}"; do
	printf ' %s' "$l $(for round in $(seq "$ROUNDS"); do echo "${ratio[$round,$l,plainB]}"; done |
		sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }')"
done
echo
((defender)) || echo "caddy-defender was not compared: this caddy does not have it (see build-caddy.sh)"
