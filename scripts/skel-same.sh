#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# skel-same.sh FULL.skel.h COMPAT.skel.h FULL_NAME COMPAT_NAME: fails unless the two skeletons
# declare the same structure (maps, programs, links, and the variables of .rodata, .data and
# .bss at the same offsets) once their names are made one. User space opens the compatible
# object through the full one's skeleton (user/attach/object.c), so any drift would be a
# silent misread.
set -euo pipefail
full=$1 compat=$2 full_name=$3 compat_name=$4

# layout FILE NAME: the skeleton's struct NAME, from its opening line to its closing one.
layout()
{
	sed -n "/^struct $2 {/,/^};/p" "$1" | sed "s/$2/SKEL/g"
}

if ! diff <(layout "$full" "$full_name") <(layout "$compat" "$compat_name") >&2; then
	echo "skel-same.sh: $compat declares another layout than $full (above): give both" \
		"builds of the object the same maps, programs and variables" >&2
	exit 1
fi
[[ -n $(layout "$full" "$full_name") ]] || { echo "skel-same.sh: no struct $full_name in $full" >&2; exit 1; }
