#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The VM suite, run by tests/vm/init inside scripts/vmtest.sh's VM: each integration test named in
# tests/vm/tests.list, one line each (`PASS name (12.3 s)`, or `FAIL name (...)` followed by the
# test's output); a skip (exit 77) is a failure. Then the raw capture that vmtest.sh symbolizes on
# the host (/jw/out/capture.raw, its output in /jw/out/capture.log). Its last line,
# `@@jw-suite PASSED FAILED@@`, is for vmtest.sh, which prints the totals.

# What vmtest.sh asked for (JW_HIDE_BTF, JW_TEST_BTF).
. /etc/jw/config
export JW_BIN=/jw/bin/jankwatch JW_TARGETS=/jw/targets JW_SRC=/jw/src PYTHONUNBUFFERED=1
export JW_STATIC_BIN=/jw/bin/jankwatch-static
export JW_TEST_VERBOSE=1
TEST_TIMEOUT=${JW_VM_TEST_TIMEOUT:-900}
passed=0
failed=0

# now: seconds since boot, to 10 ms.
now()
{
	cut -d' ' -f1 /proc/uptime
}

# run_test NAME: runs test_NAME.py and prints its line, and its output when it fails.
run_test()
{
	local start out=/tmp/jw-test.out rc secs why
	start=$(now)
	timeout -s KILL "$TEST_TIMEOUT" python3 "$JW_SRC/tests/integration/test_$1.py" >"$out" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc = 0 ]; then
		echo "PASS $1 ($secs s)"
		passed=$((passed + 1))
		return
	fi
	case $rc in
	77) why="skipped" ;;
	137) why="killed after ${TEST_TIMEOUT} s" ;;
	*) why="exit $rc" ;;
	esac
	echo "FAIL $1 ($why, $secs s)"
	# The checks that failed first, then the whole output: a display that keeps only the head
	# of a long output (CI's) still shows why.
	grep -E '^(FAIL|SKIP|Traceback)' "$out" | sed 's/^/  ! /'
	sed 's/^/    /' "$out"
	failed=$((failed + 1))
}

# capture: the raw capture of jw_target's busy tasks, for the host's test.
capture()
{
	rm -f /jw/out/capture.raw
	timeout -s KILL "$TEST_TIMEOUT" python3 /jw/vm/capture_raw.py /jw/out/capture.raw \
		>/jw/out/capture.log 2>&1 ||
		echo "vm: the raw capture for the host failed (exit $?)"
}

# vmtest.sh --hide-btf: the kernel's BTF is hidden; test_btf_file.py gives it with --btf.
extra=
if [ "$JW_HIDE_BTF" = 1 ]; then
	export JW_TEST_BTF
	extra=btf_file
fi
# on_kernel WORD...: whether this VM is one the words name: kernel versions (its release begins
# with one of them; none: any kernel), machines (x86_64, aarch64: uname -m; none: any) and the
# kernel's BTF (own-btf, hidden-btf: vmtest.sh --hide-btf; none: either).
on_kernel()
{
	local v kernels=0 kernel_ok=0 machines=0 machine_ok=0 btf_ok=1
	for v in "$@"; do
		case $v in
		[0-9]*)
			kernels=1
			case $(uname -r) in "$v".*) kernel_ok=1 ;; esac
			;;
		own-btf) [ "$JW_HIDE_BTF" = 1 ] && btf_ok=0 ;;
		hidden-btf) [ "$JW_HIDE_BTF" = 1 ] || btf_ok=0 ;;
		*)
			machines=1
			[ "$v" = "$(uname -m)" ] && machine_ok=1
			;;
		esac
	done
	[ $kernels = 0 -o $kernel_ok = 1 ] && [ $machines = 0 -o $machine_ok = 1 ] && [ $btf_ok = 1 ]
}

grep -v '^#' /jw/vm/tests.list | while read -r name kernels; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086 # the versions, one word each
	on_kernel $kernels && echo "$name"
done >/tmp/jw-tests
for name in $(cat /tmp/jw-tests) $extra; do
	run_test "$name"
done
capture
echo "@@jw-suite $passed $failed@@"
[ $failed = 0 ]
