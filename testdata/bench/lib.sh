# shellcheck shell=bash
# lib.sh: helpers shared by wrk-ratio.sh and compare.sh; sourced, not run.

# start_work sets caddy_pin and wrk_pin, the command prefixes that pin
# Caddy and wrk to the cores CADDY_CPU and WRK_CPU name (nothing when
# empty), work, a new temporary directory, and pids, the processes to
# stop; on exit those processes are stopped and the directory removed.
# shellcheck disable=SC2034 # the variables are the sourcing script's
start_work() {
	caddy_pin=() wrk_pin=()
	[[ -n $CADDY_CPU ]] && caddy_pin=(taskset -c "$CADDY_CPU")
	[[ -n $WRK_CPU ]] && wrk_pin=(taskset -c "$WRK_CPU")
	work=$(mktemp -d)
	pids=()
	trap stop_work EXIT
	trap 'exit 130' INT TERM
}

# write_gptbot_ranges writes $work/gptbot.json, the range list
# robots_enforce_block verifies GPTBot against: all of 127.0.0.0/8, so that
# the loads' GPTBot is verified, as a real one would be, offline.
write_gptbot_ranges() {
	printf '{"creationTime": "2026-11-23T00:00:00", "prefixes": [{"ipv4Prefix": "127.0.0.0/8"}]}\n' >"$work/gptbot.json"
}

# robots_enforce_block BODY [OPTIONS] prints the robots_enforce directive
# both scripts measure: enforce mode, an inline robots.txt that denies
# GPTBot /private/ but /private/press/, GPTBot verified against
# $work/gptbot.json; denials answered with the text BODY, or with the
# status alone when it is empty; OPTIONS, lines of more subdirectives.
robots_enforce_block() {
	cat <<'EOF'
	robots_enforce enforce {
		source inline <<ROBOTS
			User-agent: GPTBot
			Disallow: /private/
			Allow: /private/press/

			User-agent: *
			Disallow: /private/
			Disallow: /search
			ROBOTS
EOF
	[[ -z ${1:-} ]] || printf '\t\tbody "%s"\n' "$1"
	[[ -z ${2:-} ]] || printf '\t\t%s\n' "$2"
	printf '\t\tverify {\n\t\t\tbuiltin off\n\t\t\tip_ranges GPTBot %s\n\t\t}\n\t}\n' "$work/gptbot.json"
}

# stop_work stops the processes in pids and removes work.
stop_work() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$work"
}

# cpu_ticks PID: the user + system CPU time of process PID, in clock ticks.
cpu_ticks() {
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) } # past the command name, which may hold spaces
	awk '{ print $12 + $13 }' <<<"$stat"
}

# median: the median of the numbers on standard input, one a line.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "?"; exit }
		printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# handler_share PROFILE: the share of a CPU profile's samples that
# robots_enforce's handler spent on its own work, then its parts, e.g.
# "2.31% (judgeRequest 1.60% publish 0.52% ...)"; "?" when the profile
# holds none of it.
#
# ServeHTTP hands the request on from inside itself, so its cumulative
# share holds the rest of the route too. Its own work is summed instead:
# the cumulative shares of the functions it calls for it, which call one
# another not at all and the next handler never (judgeRequest: gather the
# request and judge it; publish: placeholders, metrics, the record; deny;
# withUsage: the Content-Usage writer; isInternalFetch; the judgement's
# Release), plus ServeHTTP's flat share, its own instructions. What this
# leaves out is a callee the compiler inlined and pprof does not name
# apart (none of them costs more than a field read). The usageWriter's
# WriteHeader runs inside the next handler and is not counted: the share
# is what the handler does before it hands on or answers.
#
# pprof drops nodes under 0.5% by default: -nodefraction=0 keeps them. An
# inlined function is listed with " (inline)" after its name.
handler_share() {
	go tool pprof -top -cum -nodefraction=0 -edgefraction=0 "$1" 2>/dev/null | awk '
		function pct(s) { sub(/%$/, "", s); return s + 0 }
		{ name = $6; sub(/.*\./, "", name) }
		/caddymodule\.\(\*Handler\)\.(judgeRequest|publish|deny|withUsage)( \(inline\))?$/ ||
		/caddymodule\.isInternalFetch( \(inline\))?$/ ||
		/internal\/enforce\.\(\*Judgement\)\.Release( \(inline\))?$/ {
			share[name] += pct($5); total += pct($5); n++
		}
		/caddymodule\.\(\*Handler\)\.ServeHTTP$/ {
			share["ServeHTTP(flat)"] += pct($2); total += pct($2); n++
		}
		END {
			if (!n) { print "?"; exit }
			split("judgeRequest publish deny withUsage isInternalFetch Release ServeHTTP(flat)", order, " ")
			parts = ""
			for (i = 1; i in order; i++)
				if (order[i] in share) parts = parts sprintf(" %s %.2f%%", order[i], share[order[i]])
			printf "%.2f%% (%s)\n", total, substr(parts, 2)
		}'
}
