# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: the suite's one test on the host. The VM saved a raw capture of
# jw_target's busy tasks (tests/vm/capture_raw.py); the host's build (HOST_BUILD) names it with
# `jankwatch symbolize`, the VM's binaries found by build-id, and its events and stack logs must
# name busy_work and main. Needs: SRC, HOST_BUILD, IMAGE_TARGETS.

# host_debug_dir BUILD DIR: DIR/.build-id/xx/yyyy links to BUILD's test targets.
host_debug_dir()
{
	local t file id
	for t in "${IMAGE_TARGETS[@]}"; do
		file=$1/tests/targets/$t
		id=$(readelf -n "$file" 2>/dev/null | sed -n 's/.*Build ID: //p' | head -n 1)
		[[ -n $id ]] || continue
		mkdir -p "$2/.build-id/${id:0:2}"
		ln -sfn "$file" "$2/.build-id/${id:0:2}/${id:2}"
	done
}

# host_check OUT: why the symbolized capture in OUT falls short, empty when it does not.
host_check()
{
	local events=$1/symbolize.out logs=$1/symbolized
	[[ -s $events ]] || { echo "no event"; return; }
	grep -q 'busy_work' "$events" || { echo "no event names busy_work"; return; }
	grep -q 'main' "$events" || { echo "no event names main"; return; }
	grep -qs '(busy_work+' "$logs"/stack-* || { echo "no stack log names busy_work"; return; }
	grep -qs '(main+' "$logs"/stack-* || { echo "no stack log names main"; return; }
}

# host_test OUT: runs the test on the VM's output directory OUT; prints its PASS or FAIL line
# (and what went wrong); returns non-zero on failure.
host_test()
{
	local out=$1 name=host_symbolize start why='' rc=0
	start=$(date +%s.%N)
	if [[ ! -s $out/capture.raw ]]; then
		echo "FAIL $name (the VM saved no raw capture)"
		[[ -f $out/capture.log ]] && sed 's/^/    /' "$out/capture.log"
		return 1
	fi
	host_debug_dir "$BUILD_DIR" "$out/debug"
	"$HOST_BUILD/jankwatch" symbolize "$out/capture.raw" --debug-dir "$out/debug" \
		--log-dir "$out/symbolized" >"$out/symbolize.out" 2>"$out/symbolize.err" || rc=$?
	if ((rc)); then
		why="jankwatch symbolize exits $rc"
	else
		why=$(host_check "$out")
	fi
	if [[ -z $why ]]; then
		echo "PASS $name ($(awk -v a="$start" -v b="$(date +%s.%N)" \
			'BEGIN { printf "%.1f", b - a }') s)"
		return 0
	fi
	echo "FAIL $name ($why)"
	sed 's/^/    /' "$out/symbolize.err" "$out/symbolize.out"
	return 1
}
