#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs every build and test dependency of jankwatch from Debian's archive.
# Quiet and quick when everything is present; runs `apt-get update` once when not.
set -euo pipefail

packages=(
	build-essential cmake pkg-config
	clang llvm libclang-rt-14-dev
	libbpf-dev bpftool
	libelf-dev libdw-dev zlib1g-dev
	libcmocka-dev
	python3 valgrind
	procps
	redis-server redis-tools nodejs
	nginx libnginx-mod-http-perl gunicorn
	libglib2.0-dev libuv1-dev libevent-dev
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[[ $status == installed ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
	echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
