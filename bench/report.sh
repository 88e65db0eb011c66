# SPDX-License-Identifier: GPL-2.0-only
# scripts/bench.sh's report: the verdicts against the budget, each build's table, jankwatch's own
# costs, and the plot. Sourced, not run; reads the arrays scripts/bench.sh fills.

# Prints the configurations measured on build @1, in the order of the tables.
configs_of()
{
	local cfg
	local -a all=(none floor floor-clock "${PROBE_CONFIGS[@]:2}")

	[[ $1 != syscall ]] || all=("${SYSCALL_CONFIGS[@]}")
	[[ " ${SITE_BUILDS[*]} " != *" $1 "* ]] || all=("${SITE_CONFIGS[@]}")
	for cfg in "${all[@]}"; do
		[[ -z ${NS[$1,$cfg]:-} ]] || printf '%s\n' "$cfg"
	done
}

# True when some configuration of build @1 ran on a busy machine (see NOISY_SPREAD_PCT): its
# repetitions spread too far (their x-ref where there is one) or the loop was off the CPU.
noisy()
{
	local cfg

	while read -r cfg; do
		# Where a twin carries the floor, the paired ratio is what the verdicts use.
		awk -v s="${XREF_SPREAD[$1,$cfg]:-${SPREAD[$1,$cfg]}}" -v c="${ON_CPU[$1,$cfg]}" \
			-v ms="$NOISY_SPREAD_PCT" \
			-v mc="$MIN_ON_CPU_PCT" 'BEGIN { exit !(s > ms || c < mc) }' && return 0
	done < <(configs_of "$1")
	return 1
}

# The budget lines of build @1; @2 is its floor configuration. On the uprobe builds every
# figure is the one measured against the floor on dispatch_ref() in the same windows (x-ref).
print_verdicts()
{
	local name=$1 floor=$2 jw peer r spread

	jw=$(added "$name" jankwatch)
	case $name in
	fp)
		# To the third decimal, as x-ref is printed: 1.105 is over 1.1, not 1.10.
		r=${XREF[fp,jankwatch]}
		printf '  budget: jankwatch/floor %s <= 1.1: %s\n' "$r" "$(verdict "$r" "<=" 1.1)"
		if [[ -n ${XREF[fp,floor-clock]:-} ]]; then
			printf '  (a clock read in each of the floor'"'"'s probes, the least that times a task: x-ref %s;\n' \
				"${XREF[fp,floor-clock]}"
			printf '   jankwatch is %s of that)\n' \
				"$(ratio "${XREF[fp,jankwatch]}" "${XREF[fp,floor-clock]}")"
		fi
		for peer in bpftrace funclatency funclatency-bpfcc; do
			[[ -n ${NS[fp,$peer]:-} ]] || continue
			r=$(ratio "${XREF[fp,jankwatch]}" "${XREF[fp,$peer]}")
			printf '  budget: jankwatch/%s %s < 1: %s\n' "$peer" "$r" \
				"$(verdict "$r" "<" 1)"
		done
		;;
	syscall)
		read -r r spread < <(paired syscall jankwatch "$floor")
		printf '  budget: jankwatch/the wait'"'"'s two tracepoints %s <= 1.1: %s\n' "$r" \
			"$(verdict "$r" "<=" 1.1)"
		printf '  (the median of the %d repetitions'"'"' own ratios, spread %s%%; of the medians: %s)\n' \
			"$REPS" "$spread" "$(ratio "$jw" "$(added syscall "$floor")")"
		r=$(ratio "$(added syscall jankwatch-up)" "$(added syscall "$floor")")
		printf '  (jankwatch with wait_tracepoints=0, uprobes on libc'"'"'s wait functions: %s of' "$r"
		printf ' the wait'"'"'s two tracepoints)\n'
		r=$(ratio "$jw" "$(added syscall tp-floor)")
		printf '  (jankwatch against the raw sys_enter/sys_exit pair, when it runs on them: %s)\n' \
			"$r"
		# What timing alone costs there: below it no tool that times the wait on them goes.
		printf '  (a clock read in each of the raw pair, the least that times a wait on them: %s of\n' \
			"$(ratio "$(added syscall tp-floor-clock)" "$(added syscall "$floor")")"
		printf '   the wait'"'"'s two tracepoints; jankwatch is %s of that)\n' \
			"$(ratio "$jw" "$(added syscall tp-floor-clock)")"
		;;
	*)
		r=$(ratio "${XREF[$name,jankwatch]}" "${XREF[$name,bpftrace]}")
		printf '  budget: jankwatch/bpftrace %s <= 0.25: %s\n' "$r" \
			"$(verdict "$r" "<=" 0.25)"
		# The quarter is for entries the kernel would single-step; an emulated one leaves
		# jankwatch nothing to move past, and its logic against bpftrace's is all there is.
		[[ ! ${FIRST_INSN[$name]} =~ ^(push|call|jmp) ]] ||
			printf '  (this entry, %s, is emulated: no probe moves, as on the fp build)\n' \
				"${FIRST_INSN[$name]}"
		;;
	esac
}

print_build()
{
	local name=$1 cfg floor=floor add

	[[ $name == syscall ]] && floor=sys-floor
	if [[ $name == syscall ]]; then
		printf '\nsyscall mode: a task is one epoll_wait(); libc epoll_wait starts with: %s\n' \
			"${FIRST_INSN[$name]}"
		printf '  probe at: sys-floor: syscalls:sys_enter_epoll_wait + sys_exit_epoll_wait, the\n'
		printf '  wait'"'"'s own tracepoints (empty programs); tp-floor: raw_tp sys_enter +\n'
		printf '  sys_exit, which every system call passes (empty programs); tp-floor-clock: the\n'
		printf '  same, each reading the clock once;\n'
		printf '  jankwatch (-p PID, no --probe, wait_tracepoints=2): %s\n' "$JW_WAITS" |
			fold -s -w 96 | sed '2,$s/^/    /'
		printf '  jankwatch-up: -p PID --set wait_tracepoints=0: on libc epoll_wait: %s\n' \
			"${JW_PLACE[$name]:-?}"
	else
		printf '\n%s build: dispatch starts with: %s\n' "$name" "${FIRST_INSN[$name]}"
		printf '  probe at: floor, bpftrace, funclatency: the entry (%s);\n' \
			"${FIRST_INSN[$name]}"
		printf '  jankwatch: %s\n' "${JW_PLACE[$name]:-?}"
	fi
	printf '  %-18s %10s %9s %10s %8s %7s %7s %7s %7s\n' config ns/task x-none "added ns" \
		x-floor spread x-ref spread on-cpu
	while read -r cfg; do
		add=$(added "$name" "$cfg")
		printf '  %-18s %10s %9s %10s %8s %6s%% %7s %6s%% %6s%%\n' "$cfg" "${NS[$name,$cfg]}" \
			"$(ratio "${NS[$name,$cfg]}" "${NS[$name,none]}")" "$add" \
			"$(ratio "$add" "$(added "$name" "$floor")")" "${SPREAD[$name,$cfg]}" \
			"${XREF[$name,$cfg]:--}" "${XREF_SPREAD[$name,$cfg]:--}" "${ON_CPU[$name,$cfg]}"
	done < <(configs_of "$name")
	print_verdicts "$name" "$floor"
	if noisy "$name"; then
		printf '  WARNING: busy machine (spread over %s%% or loop on a CPU under %s%%);\n' \
			"$NOISY_SPREAD_PCT" "$MIN_ON_CPU_PCT"
		printf '  these ratios are unreliable: rerun when the machine is idle\n'
	fi
}

# The handler sites' loop @1 (glib, libuv, libev, sdevent, qt): its table, and what the sites add
# per callback, against glib's (measured first).
print_sites()
{
	local name=$1 cfg add sites

	printf '\n%s loop: an idle callback per iteration, the loop polling between them\n' "$name"
	printf '  jankwatch-nosites: -p PID --set handler_sites=0 (the waits alone);\n'
	printf '  jankwatch-sites: -p PID --set handler_sites=1000000 (sites kept at any rate): %s\n' \
		"${JW_PLACE[$name]:-?}" | fold -s -w 96 | sed '2,$s/^/    /'
	printf '  the default, -p PID (handler_sites=500), for 3 s: %s\n' "${JW_GUARD[$name]:-?}" |
		fold -s -w 96 | sed '2,$s/^/    /'
	printf '  %-18s %10s %9s %10s %7s %7s\n' config ns/task x-none "added ns" spread on-cpu
	while read -r cfg; do
		add=$(added "$name" "$cfg")
		printf '  %-18s %10s %9s %10s %6s%% %6s%%\n' "$cfg" "${NS[$name,$cfg]}" \
			"$(ratio "${NS[$name,$cfg]}" "${NS[$name,none]}")" "$add" \
			"${SPREAD[$name,$cfg]}" "${ON_CPU[$name,$cfg]}"
	done < <(configs_of "$name")
	sites=$(awk -v a="$(added "$name" jankwatch-sites)" -v b="$(added "$name" jankwatch-nosites)" \
		'BEGIN { printf "%.1f", a - b }')
	printf '  handler sites: %s ns per callback (a call and its return site), %s times the\n' \
		"$sites" "$(ratio "$sites" "$(added "$name" jankwatch-nosites)")"
	printf '  waits'"'"' own cost per iteration\n'
	[[ $name == glib ]] && GLIB_SITES=$sites
	[[ $name == glib || -z ${GLIB_SITES:-} ]] ||
		printf '  against glib'"'"'s handler sites per callback: %s x\n' \
			"$(ratio "$sites" "$GLIB_SITES")"
	if noisy "$name"; then
		printf '  WARNING: busy machine (spread over %s%% or loop on a CPU under %s%%);\n' \
			"$NOISY_SPREAD_PCT" "$MIN_ON_CPU_PCT"
		printf '  these figures are unreliable: rerun when the machine is idle\n'
	fi
}

print_own_costs()
{
	local growth

	growth=$((RSS_LAST - RSS_BASE))
	printf '\njankwatch itself, watching jw_target --fast 1 (%s tasks/s, no jank) for %ss:\n' \
		"$WATCH_TASKS_S" "$WATCH_S"
	printf '  CPU (utime+stime): %s%% of a core (%s ticks of 1/%s s); budget < 1%%: %s\n' \
		"$WATCH_CPU_PCT" "$WATCH_TICKS" "$(getconf CLK_TCK)" "$(verdict "$WATCH_CPU_PCT" "<" 1)"
	printf '  RSS kB every %ss: %s\n' "$RSS_EVERY_S" "$RSS_SERIES"
	printf '  warm-up (the first %ss) %s kB; then %s kB over %ss; flat: %s\n' "$RSS_EVERY_S" \
		"$((RSS_BASE - RSS_FIRST))" "$growth" "$((WATCH_S - RSS_EVERY_S))" \
		"$( ((growth <= 0)) && echo met || echo "NOT met")"
	printf '  of which anonymous (RssAnon, kB): %s\n' "$ANON_SERIES"
	printf 'event latency, a 160 ms task'"'"'s end to its line on stdout, over %s janks:\n' \
		"$LAT_N"
	printf '  median %s ms, max %s ms; budget median < 100 ms: %s\n' "$LAT_MEDIAN" "$LAT_MAX" \
		"$(verdict "$LAT_MEDIAN" "<" 100)"
}

print_report()
{
	local machine=bare-metal name

	grep -qw hypervisor /proc/cpuinfo && machine=VM
	printf 'jankwatch bench, %s: %s, %s CPUs, %s, kernel %s\n' "$(date -u '+%F %H:%M UTC')" \
		"$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" \
		"$machine" "$(uname -r)"
	printf 'tools: %s; libbpf-tools %s; gnuplot %s\n' "$(bpftrace --version)" \
		"$(dpkg-query -W -f '${Version}' libbpf-tools)" \
		"$(dpkg-query -W -f '${Version}' gnuplot-nox 2>/dev/null || echo '?')"
	printf '%d repetitions, configurations interleaved (rotated order); per repetition the\n' \
		"$REPS"
	printf 'median of %d windows of %d ms after %d thrown away; figures: median over the\n' \
		"$MEASURE_WINDOWS" "$WINDOW_MS" "$SKIP_WINDOWS"
	printf 'repetitions. x-none: ns/task over "none"; added ns: over "none"; x-floor: added\n'
	printf 'over the floor'"'"'s added; spread: range of the repetitions but the highest and\n'
	printf 'the lowest, over the median; on-cpu: median share of a window the loop ran.\n'
	printf 'x-ref (uprobe builds): the loop calls dispatch() and a twin, dispatch_ref(), in\n'
	printf 'alternate batches; the floor stays on dispatch_ref() all along, so each window\n'
	printf 'measures a configuration and the floor side by side: x-ref is the added ns over\n'
	printf 'the floor'"'"'s in the same windows (median over the repetitions); the budget lines\n'
	printf 'use it. "floor" on dispatch() shows what x-ref gives for the same probe: ~1.00\n'
	printf 'load average at the start: %s\n' "$LOADAVG"
	[[ -z $BCC_SKIPPED ]] || printf 'funclatency-bpfcc (bcc) skipped: %s\n' "$BCC_SKIPPED"
	for name in "${BUILDS[@]}"; do
		print_build "$name"
	done
	for name in "${SITE_BUILDS[@]}"; do
		print_sites "$name"
	done
	print_own_costs
}

# The ns configuration @2 adds per task on build @1, as plotted: on a uprobe build, its ratio to
# the floor measured side by side times the floor's own median (the unpaired medians move with
# the host between windows); in syscall mode, the unpaired median.
plotted()
{
	if [[ -n ${XREF[$1,$2]:-} && $2 != floor ]]; then
		awk -v x="${XREF[$1,$2]}" -v f="$(added "$1" floor)" 'BEGIN { printf "%.1f", x * f }'
	else
		added "$1" "$2"
	fi
}

# Plots the ns each tool adds per task, by build, to PLOT (log scale: a single-stepped entry
# costs ten times an emulated one).
plot()
{
	local dat=$WORK/plot.dat name cfg v bcc=", '' using 7 title \"funclatency-bpfcc\""

	{
		printf '# build floor jankwatch jankwatch-up bpftrace funclatency funclatency-bpfcc\n'
		for name in "${BUILDS[@]}"; do
			printf '%s' "$name"
			for cfg in floor jankwatch jankwatch-up bpftrace funclatency funclatency-bpfcc; do
				[[ $name == syscall && $cfg == floor ]] && cfg=sys-floor
				v='?'
				[[ -z ${NS[$name,$cfg]:-} ]] || v=$(plotted "$name" "$cfg")
				printf ' %s' "$v"
			done
			printf '\n'
		done
	} >"$dat"
	[[ -z $BCC_SKIPPED ]] || bcc=''
	gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,540 noenhanced font ",10"
set output "$PLOT"
set title "ns added per task over nothing attached (uprobe builds: the floor's median times each tool's ratio to it side by side), $REPS runs\njankwatch bench, $(date -u +%F), $(uname -r)"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set yrange [10:*]
set ylabel "ns added per task (log scale)"
set xlabel "build of the loop (syscall: one epoll_wait per task; its floor is the wait's own two tracepoints)"
set key top left
set grid ytics
plot "$dat" using 2:xtic(1) title "floor", '' using 3 title "jankwatch", \
	'' using 4 title "jankwatch, wait_tracepoints=0", '' using 5 title "bpftrace", \
	'' using 6 title "funclatency (libbpf-tools)"$bcc
EOF
	log "plot: $PLOT"
}
