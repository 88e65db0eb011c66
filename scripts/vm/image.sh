# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by scripts/vmtest.sh: the VM's busybox initramfs, assembled in a staging directory:
# busybox, the build (jankwatch and the test targets), Debian's python3.11 of the architecture,
# every shared library these need (found by walking DT_NEEDED), the kernel modules, the test
# sources and tests/vm/. Needs: apt.sh, kernel.sh, die(), SRC, ARCH_* (set by vmtest.sh).

# The python3.11 packages: the interpreter and its standard library.
IMAGE_PYTHON_PACKAGES=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib)
# Parts of the standard library the tests never import.
IMAGE_PYTHON_SKIP=(test tests idle_test idlelib tkinter turtledemo ensurepip lib2to3 pydoc_data
		   __pycache__ config-3.11-*)
# Libraries loaded with dlopen(), which DT_NEEDED does not name: glibc's unwinder for
# pthread_exit() and pthread_cancel().
IMAGE_DLOPENED=(libgcc_s.so.1)
# The test targets the VM suite runs (the musl ones with musl's loader, which is its libc.so).
IMAGE_TARGETS=(jw_target jw_target_nofp jw_chain jw_service_box jw_target_musl
	       jw_target_musl_nofp)

# image_layout ROOT: the merged-/usr tree, as Debian 12 has it.
image_layout()
{
	local root=$1 d
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/"$ARCH_TRIPLET",usr/lib64,etc/jw,proc,sys,dev,tmp}
	mkdir -p "$root"/{run,root,mnt,jw/bin,jw/targets,jw/src/tests,jw/out}
	for d in bin sbin lib lib64; do
		ln -sfn "usr/$d" "$root/$d"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
		>"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$root/etc/hosts"
}

# image_busybox ROOT: the static busybox of the architecture (the host's for x86_64; for arm64
# busybox-static:arm64 unpacked, as it cannot be installed beside the host's).
image_busybox()
{
	local src=/bin/busybox pkg
	if [[ $ARCH_DEB != "$(dpkg --print-architecture)" ]]; then
		pkg=$(apt_unpack busybox-static "$ARCH_DEB")
		src=$pkg/bin/busybox
	fi
	[[ -x $src ]] || die "no static busybox at $src (apt-get install busybox-static)"
	cp "$src" "$1/usr/bin/busybox"
}

# image_build ROOT BUILD: jankwatch and the test targets of build directory BUILD, and the
# static jankwatch of IMAGE_STATIC_BUILD at /jw/bin/jankwatch-static.
image_build()
{
	local root=$1 build=$2 t
	cp "$build/jankwatch" "$root/jw/bin/jankwatch"
	cp "$IMAGE_STATIC_BUILD/jankwatch" "$root/jw/bin/jankwatch-static"
	for t in "${IMAGE_TARGETS[@]}"; do
		[[ -x $build/tests/targets/$t ]] || die "$build/tests/targets/$t was not built"
		cp "$build/tests/targets/$t" "$root/jw/targets/$t"
	done
}

# image_sources ROOT: the integration tests, the targets' sources and scripts, tests/vm/, and the
# systemd unit (test_service.py runs jankwatch with its capabilities).
image_sources()
{
	local root=$1
	cp -r "$SRC/tests/integration" "$SRC/tests/targets" "$root/jw/src/tests/"
	mkdir -p "$root/jw/src/scripts"
	cp "$SRC/scripts/jankwatch.service.in" "$root/jw/src/scripts/"
	cp -r "$SRC/tests/vm" "$root/jw/vm"
	find "$root/jw/src" -name __pycache__ -prune -exec rm -rf {} +
	cp "$SRC/tests/vm/init" "$root/init"
	chmod 755 "$root/init"
}

# image_python_packages DEB_ARCH: the python3.11 packages and the libraries they depend on that
# are not installed on this machine for DEB_ARCH, one a line.
image_python_packages()
{
	apt_closure "$1" image_python_follow "${IMAGE_PYTHON_PACKAGES[@]}"
}

# image_python_follow PKG DEB_ARCH: whether image_python_packages takes dependency PKG: a library
# not installed on this machine for DEB_ARCH.
image_python_follow()
{
	[[ $1 == lib* ]] && ! apt_installed "$1" "$2"
}

# image_python ROOT: Debian's python3.11 of the architecture at /usr/bin/python3.11, python3 a
# link to it, its standard library without IMAGE_PYTHON_SKIP; sets IMAGE_PKG_ROOTS, the unpacked
# packages, where image_libraries looks for libraries first.
image_python()
{
	local root=$1 pkgs pkg dir skip=() s
	for s in "${IMAGE_PYTHON_SKIP[@]}"; do
		skip+=(--exclude="$s")
	done
	IMAGE_PKG_ROOTS=()
	pkgs=$(image_python_packages "$ARCH_DEB")
	for pkg in $pkgs; do
		dir=$(apt_unpack "$pkg" "$ARCH_DEB")
		IMAGE_PKG_ROOTS+=("$dir")
		[[ $pkg == *python3.11* ]] || continue
		tar -C "$dir" -cf - "${skip[@]}" --exclude=./usr/share --exclude=.unpacked . |
			tar -C "$root" -xf - --keep-directory-symlink
	done
	[[ -x $root/usr/bin/python3.11 ]] || die "the python3.11 packages hold no /usr/bin/python3.11"
	ln -sfn python3.11 "$root/usr/bin/python3"
}

# image_lib_dirs: where the architecture's shared libraries are looked for, in order.
image_lib_dirs()
{
	local dir sub
	for dir in "${IMAGE_PKG_ROOTS[@]}" ""; do
		for sub in "lib/$ARCH_TRIPLET" "usr/lib/$ARCH_TRIPLET"; do
			[[ -d $dir/$sub ]] && echo "$dir/$sub"
		done
	done
	[[ -d /usr/$ARCH_TRIPLET/lib ]] && echo "/usr/$ARCH_TRIPLET/lib"
	return 0
}

# image_needed FILE: the sonames ELF file FILE names in DT_NEEDED, one a line.
image_needed()
{
	readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# image_interpreter FILE: the program interpreter ELF file FILE asks for, empty for none.
image_interpreter()
{
	readelf -l "$1" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p'
}

# image_libraries ROOT: copies into ROOT/usr/lib/<triplet> every library the ELF files in ROOT
# need, transitively, those of IMAGE_DLOPENED, and the dynamic loader; fails naming a library
# found nowhere.
image_libraries()
{
	local root=$1 file soname interp
	local -a queue=() dirs=()
	local -A have=()
	mapfile -t dirs < <(image_lib_dirs)
	for soname in "${IMAGE_DLOPENED[@]}"; do
		image_add_library "$soname" "dlopen()"
	done
	while read -r file; do
		[[ $(head -c 4 "$file" | od -An -c | tr -d ' ') == 177ELF ]] && queue+=("$file")
	done < <(find "$root" -type f \( -perm -u+x -o -name '*.so*' \) ! -path '*/lib/modules/*')
	while ((${#queue[@]})); do
		file=${queue[0]}
		queue=("${queue[@]:1}")
		interp=$(image_interpreter "$file")
		if [[ -n $interp && ! -e $root$interp ]]; then
			[[ -e $interp ]] || die "no dynamic loader $interp for ${file#"$root"}"
			cp -L "$interp" "$root$interp"
		fi
		for soname in $(image_needed "$file"); do
			# musl's loader is its libc.so: a musl program needs no other.
			[[ $interp == */ld-musl-* && $soname == libc.so ]] && continue
			image_add_library "$soname" "${file#"$root"}"
		done
	done
}

# image_add_library SONAME USER: copies library SONAME, which USER needs, from the first of dirs
# that has it, and queues it (image_libraries' locals).
image_add_library()
{
	local dir dest=$root/usr/lib/$ARCH_TRIPLET/$1
	[[ -n ${have[$1]:-} ]] && return 0
	have[$1]=1
	[[ -e $dest ]] && return 0
	for dir in "${dirs[@]}"; do
		if [[ -e $dir/$1 ]]; then
			cp -L "$dir/$1" "$dest"
			queue+=("$dest")
			return 0
		fi
	done
	die "no $ARCH_DEB library $1 (needed by $2)"
}

# image_pack ROOT OUT: ROOT as a gzip-compressed newc cpio archive at OUT.
image_pack()
{
	(cd "$1" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$2" ||
		die "cannot pack the initramfs $2"
}

# image_assemble ROOT BUILD OUT HOOK: the whole initramfs at OUT, staged in ROOT, with the build
# directory BUILD (none when empty); HOOK ROOT is called before it is packed.
image_assemble()
{
	local root=$1
	rm -rf "$root"
	image_layout "$root"
	image_busybox "$root"
	[[ -z $2 ]] || image_build "$root" "$2"
	image_python "$root"
	image_libraries "$root"
	kernel_stage_modules "$root"
	image_sources "$root"
	"$4" "$root"
	image_pack "$root" "$3"
}
