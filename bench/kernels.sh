#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What jankwatch adds to a task on the kernels of the VM matrix, in the same emulator, one VM
# after the other: the fp build of bench_loop.c (dispatch() hooked, dispatch_ref() its unhooked
# twin in alternate batches) inside scripts/vmtest.sh's x86_64 VM of each kernel, with nothing
# attached, then with `jankwatch --probe LOOP:dispatch` as that kernel takes it, then (where the
# kernel has the full programs) with the compatible ones forced (JW_KERNEL_HIDE). The added ns
# per task of a window is dispatch()'s ns less its twin's in that window; the figure is the median
# over the windows. Under TCG the absolute ns are an emulator's; compare within a run.
# Usage: bench/kernels.sh [KERNEL...]   (default: 5.10 6.1; root, an x86_64 build in build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kernels=("$@")
((${#kernels[@]})) || kernels=(5.10 6.1)
loop=$root/build/bench/jw_bench_loop_fp
[[ -x $loop ]] || cmake --build "$root/build" --target jw_bench_loop_fp >/dev/null
share=$(mktemp -d)
trap 'rm -rf "$share"' EXIT
cp "$loop" "$share/loop"
# The VM's side: busybox sh; LOOP windows of 250 ms, 4 s per configuration.
cat >"$share/cost.sh" <<'EOF'
# median FILE: the median of the added ns of the windows in FILE after the first two.
median()
{
	awk 'NR > 2 { print $3 - $6 }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "-" }'
}

# measure NAME [ENV JANKWATCH ARGS...]: 4 s of windows, with jankwatch running when asked.
measure()
{
	name=$1
	shift
	# Appending, so that the file can be emptied under it once the configuration is in.
	: >"$name.out"
	./loop 250 >>"$name.out" &
	pid=$!
	sleep 1
	if [ $# -gt 0 ]; then
		env "$@" jankwatch -p "$pid" --probe "$PWD/loop:dispatch" --set ignore_startup_time=3 \
			>/dev/null 2>"$name.err" &
		jw=$!
		# Loading the programs takes seconds under emulation: measured once they are in.
		n=0
		while ! grep -q "ready" "$name.err" && [ $n -lt 120 ]; do
			sleep 0.5
			n=$((n + 1))
		done
		sleep 1
	fi
	: >"$name.out"
	sleep 4
	kill "$pid"
	[ $# -gt 0 ] && kill -INT "$jw"
	wait 2>/dev/null
	printf '  %-22s %10s ns added per task (%s windows)\n' "$name" "$(median "$name.out")" \
		"$(wc -l <"$name.out")"
}

echo "kernel $(uname -r):"
measure none
measure jankwatch JW_=
if grep -q "compatible programs" jankwatch.err; then
	echo "  (this kernel takes the compatible programs)"
fi
measure jankwatch-compat JW_KERNEL_HIDE=task_storage,task_btf,task_pt_regs,attach_cookie,find_vma,loop
EOF
for k in "${kernels[@]}"; do
	"$root/scripts/vmtest.sh" --arch x86_64 --kernel "$k" --share "$share" -- sh cost.sh
done
