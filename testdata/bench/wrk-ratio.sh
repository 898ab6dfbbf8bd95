#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# wrk-ratio.sh: the CPU a whole Caddy process spends per request with
# robots_enforce, against the same site without it.
#
# It starts two Caddy processes on 127.0.0.1: one serving a site behind
# robots_enforce (inline robots.txt, enforce mode), one serving the same
# site without it. The site (SITE) is `respond "ok"`, the cheapest Caddy
# has and so the harshest ratio; `file_server` of testdata/demo; or
# `reverse_proxy` to a third Caddy process answering `respond "ok"`, whose
# CPU is not counted. Each round loads the two with the same wrk load, once
# with a browser's User-Agent and once with a crawler's (GPTBot, on a path
# its robots.txt group allows), reads each process's user and system CPU
# time from /proc/PID/stat before and after, and divides it by the
# requests wrk completed.
# The order of the two processes alternates from round to round. It
# prints every run, then per User-Agent each round's ratio with/without and
# their median, and the ratio of their CPU per request over all rounds.
#
# Usage, from the repository root (Linux, with wrk and curl installed):
#
#   testdata/bench/wrk-ratio.sh
#   CADDY=/tmp/caddy ROUNDS=5 DURATION=10 testdata/bench/wrk-ratio.sh
#   SITE=reverse_proxy testdata/bench/wrk-ratio.sh
#
# Settings, from the environment:
#   CADDY        a Caddy binary with robots_enforce; default: ./cmd/caddy,
#                built into a temporary directory
#   SITE         respond (the default), file_server or reverse_proxy
#   CONTROL      1 to serve the site without robots_enforce in both
#                processes: the ratios then show the method's own spread
#                and bias, which the real ratios are read against
#   PROFILE      1 to also take, per User-Agent, a CPU profile of the
#                process with robots_enforce under the same load (through
#                its admin endpoint, on PORT_ADMIN, 18094) and print the
#                share of its CPU the handler's own work took (the sum of
#                its parts, see handler_share in lib.sh): measured
#                within one process at one time, that share does not drift
#                with the machine as the ratio does. Needs the go command.
#   ROUNDS       rounds (3)
#   DURATION     seconds of load per run (10)
#   CONNECTIONS  wrk connections (16), on one wrk thread
#   PORT_WITH, PORT_WITHOUT, PORT_UPSTREAM  loopback ports (18091-18093)
#   CADDY_CPU, WRK_CPU       cores taskset pins Caddy and wrk to (1 and 0;
#                            reverse_proxy's upstream shares wrk's core);
#                            set both empty to not pin
#
# Only 127.0.0.1 is used. Every wrk run is bounded by DURATION (and killed
# 15 s past it); a whole call takes about ROUNDS × 4 × (DURATION + 1) s plus
# a few seconds of warm-up, about 2.5 minutes with the defaults. Every
# Caddy process is stopped on exit.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-16}
PORT_WITH=${PORT_WITH:-18091}
PORT_WITHOUT=${PORT_WITHOUT:-18092}
PORT_UPSTREAM=${PORT_UPSTREAM:-18093}
SITE=${SITE:-respond}
CONTROL=${CONTROL:-0}
PROFILE=${PROFILE:-0}
PORT_ADMIN=${PORT_ADMIN:-18094}
CADDY_CPU=${CADDY_CPU-1}
WRK_CPU=${WRK_CPU-0}

BROWSER_UA='Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
CRAWLER_UA='Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)'
ALLOWED_PATH=/blog/post.html # a file of testdata/demo
DENIED_PATH=/private/report.html # also a file of testdata/demo

case $SITE in
respond | file_server | reverse_proxy) ;;
*)
	echo "SITE=$SITE: want respond, file_server or reverse_proxy" >&2
	exit 2
	;;
esac
demo=$(cd "$(dirname "$0")/../demo" && pwd)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
start_work

if [[ -z ${CADDY:-} ]]; then
	echo "building ./cmd/caddy" >&2
	go build -o "$work/caddy" ./cmd/caddy
	CADDY=$work/caddy
fi

# site PORT WITH: a Caddyfile serving SITE on PORT, behind robots_enforce
# when WITH is 1.
site() {
	local admin=off
	[[ $2 == 1 && $PROFILE == 1 ]] && admin=127.0.0.1:$PORT_ADMIN
	printf '{\n\tadmin %s\n\tpersist_config off\n}\n' "$admin"
	printf 'http://:%s {\n\tbind 127.0.0.1\n' "$1"
	[[ $2 == 1 ]] && robots_enforce_block ""
	case $SITE in
	respond) printf '\trespond "ok"\n' ;;
	file_server) printf '\troot * %s\n\tfile_server\n' "$demo" ;;
	reverse_proxy) printf '\treverse_proxy 127.0.0.1:%s\n' "$PORT_UPSTREAM" ;;
	esac
	printf '}\n'
}

write_gptbot_ranges

if [[ $SITE == reverse_proxy ]]; then
	printf '{\n\tadmin off\n\tpersist_config off\n}\nhttp://:%s {\n\tbind 127.0.0.1\n\trespond "ok"\n}\n' \
		"$PORT_UPSTREAM" >"$work/upstream.caddyfile"
	"${wrk_pin[@]}" "$CADDY" run --adapter caddyfile --config "$work/upstream.caddyfile" >"$work/upstream.log" 2>&1 &
	pids+=("$!")
fi

declare -A port pid
port[with]=$PORT_WITH
port[without]=$PORT_WITHOUT
for variant in with without; do
	site "${port[$variant]}" "$([[ $variant == with && $CONTROL != 1 ]] && echo 1 || echo 0)" >"$work/$variant.caddyfile"
	# taskset execs Caddy: $! is Caddy's own PID.
	"${caddy_pin[@]}" "$CADDY" run --adapter caddyfile --config "$work/$variant.caddyfile" >"$work/$variant.log" 2>&1 &
	pid[$variant]=$!
	pids+=("$!")
done
for variant in with without; do
	for _ in $(seq 50); do
		curl -fso /dev/null "http://127.0.0.1:${port[$variant]}/" && break
		sleep 0.2
	done
	curl -fso /dev/null "http://127.0.0.1:${port[$variant]}/" || {
		echo "caddy ($variant robots_enforce) did not start:" >&2
		cat "$work/$variant.log" >&2
		exit 1
	}
done
# The module must be in force in one, and only one, of the two (in
# neither for the control).
want_with=403
[[ $CONTROL == 1 ]] && want_with=200
denied=$(curl -so /dev/null -w '%{http_code}' -A "$CRAWLER_UA" "http://127.0.0.1:${port[with]}$DENIED_PATH")
passed=$(curl -so /dev/null -w '%{http_code}' -A "$CRAWLER_UA" "http://127.0.0.1:${port[without]}$DENIED_PATH")
if [[ $denied != "$want_with" || $passed != 200 ]]; then
	echo "unexpected statuses: $denied from the first process (want $want_with), $passed from the second (want 200)" >&2
	exit 1
fi

load() { # load VARIANT UA SECONDS: run wrk, print the requests it completed
	local out
	out=$("${wrk_pin[@]}" timeout $(($3 + 15)) wrk -t1 -c"$CONNECTIONS" -d"${3}s" \
		-H "User-Agent: $2" "http://127.0.0.1:${port[$1]}$ALLOWED_PATH")
	if grep -q 'Non-2xx' <<<"$out"; then
		echo "wrk saw errors against $1:" >&2
		echo "$out" >&2
		exit 1
	fi
	awk '/ requests in / { print $1 }' <<<"$out"
}

tck=$(getconf CLK_TCK)
for variant in with without; do # warm up both
	load "$variant" "$BROWSER_UA" 2 >/dev/null
	load "$variant" "$CRAWLER_UA" 2 >/dev/null
done

declare -A per_req ticks requests
# note ROUND UA VARIANT REQUESTS TICKS: keep and print one run's figures.
note() {
	local cpu us
	ticks[$2,$3]=$((${ticks[$2,$3]:-0} + $5))
	requests[$2,$3]=$((${requests[$2,$3]:-0} + $4))
	read -r cpu us <<<"$(awk -v t="$5" -v hz="$tck" -v n="$4" \
		'BEGIN { printf "%.2f %.3f", t / hz, t / hz / n * 1e6 }')"
	per_req[$1,$2,$3]=$us
	printf '%-5s  %-7s  %-7s  %10s  %8s  %12s\n' "$1" "$2" "$3" "$4" "$cpu" "$us"
}

printf '%-5s  %-7s  %-7s  %10s  %8s  %12s\n' round ua caddy requests cpu_s cpu_us/req
for round in $(seq "$ROUNDS"); do
	for ua in browser crawler; do
		header=$BROWSER_UA
		[[ $ua == crawler ]] && header=$CRAWLER_UA
		order="without with"
		((round % 2 == 0)) && order="with without"
		for variant in $order; do
			start=$(cpu_ticks "${pid[$variant]}")
			done_requests=$(load "$variant" "$header" "$DURATION")
			note "$round" "$ua" "$variant" "$done_requests" $(($(cpu_ticks "${pid[$variant]}") - start))
		done
	done
done

if [[ $PROFILE == 1 && $CONTROL != 1 ]]; then
	echo
	printf '%-7s  %s\n' ua "share of the CPU of the process with robots_enforce in the handler's own work"
	for ua in browser crawler; do
		header=$BROWSER_UA
		[[ $ua == crawler ]] && header=$CRAWLER_UA
		load with "$header" $((DURATION + 2)) >/dev/null &
		loading=$!
		sleep 1
		curl -fso "$work/$ua.pprof" "http://127.0.0.1:$PORT_ADMIN/debug/pprof/profile?seconds=$DURATION"
		wait "$loading" || exit 1
		# The handler's own work, summed over its parts (lib.sh says which).
		printf '%-7s  %s\n' "$ua" "$(handler_share "$work/$ua.pprof")"
	done
fi

((ROUNDS > 0)) || exit 0
echo
printf '%-7s  %-40s  %-6s  %s\n' ua 'ratio with/without, by round' median 'all rounds'
for ua in browser crawler; do
	ratios=()
	for round in $(seq "$ROUNDS"); do
		ratios+=("$(awk -v a="${per_req[$round,$ua,with]}" -v b="${per_req[$round,$ua,without]}" \
			'BEGIN { printf "%.3f", a / b }')")
	done
	median=$(printf '%s\n' "${ratios[@]}" | median)
	pooled=$(awk -v tw="${ticks[$ua,with]}" -v nw="${requests[$ua,with]}" \
		-v to="${ticks[$ua,without]}" -v no="${requests[$ua,without]}" 'BEGIN { printf "%.3f", tw / nw / (to / no) }')
	printf '%-7s  %-40s  %-6s  %s\n' "$ua" "${ratios[*]}" "$median" "$pooled"
done
