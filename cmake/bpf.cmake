# SPDX-License-Identifier: GPL-2.0-only
# Compiles a BPF program with clang and turns it into a libbpf skeleton with bpftool.
# vmlinux.h is generated from the running kernel's BTF at build time.

find_program(JW_CLANG NAMES clang clang-14 REQUIRED)
find_program(JW_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)
find_program(JW_LLVM_STRIP NAMES llvm-strip llvm-strip-14 REQUIRED)

# The architecture: bpf/arch/<JW_BPF_ARCH>.h on the kernel side, user/arch/<JW_USER_ARCH>.c.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
	set(JW_BPF_ARCH x86)
	set(JW_USER_ARCH x86_64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
	set(JW_BPF_ARCH arm64)
	set(JW_USER_ARCH arm64)
else()
	message(FATAL_ERROR "jankwatch: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# vmlinux.h: from the running kernel's BTF, or in a cross build from the BTF of Debian's kernel
# package for the target (6.1, the oldest kernel tested: CO-RE relocates it on newer ones). A
# cached path that is gone (the cache was moved or cleaned) is looked up again.
if(CMAKE_CROSSCOMPILING AND (NOT JW_VMLINUX_BTF OR NOT EXISTS "${JW_VMLINUX_BTF}"))
	execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/kernel-btf.sh ${JW_USER_ARCH} 6.1
			OUTPUT_VARIABLE jw_btf OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE jw_rc)
	if(NOT jw_rc EQUAL 0)
		message(FATAL_ERROR "jankwatch: no BTF of an ${JW_USER_ARCH} kernel for vmlinux.h "
			"(scripts/setup.sh --arch ${JW_USER_ARCH}, or -DJW_VMLINUX_BTF=FILE)")
	endif()
	set(JW_VMLINUX_BTF ${jw_btf} CACHE FILEPATH "kernel BTF that vmlinux.h is made from" FORCE)
endif()
set(JW_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "kernel BTF that vmlinux.h is made from")
set(JW_BPF_GEN ${CMAKE_BINARY_DIR}/bpf)
file(MAKE_DIRECTORY ${JW_BPF_GEN})

add_custom_command(
	OUTPUT ${JW_BPF_GEN}/vmlinux.h
	COMMAND sh -c "${JW_BPFTOOL} btf dump file ${JW_VMLINUX_BTF} format c > ${JW_BPF_GEN}/vmlinux.h.tmp"
	COMMAND ${CMAKE_COMMAND} -E rename ${JW_BPF_GEN}/vmlinux.h.tmp ${JW_BPF_GEN}/vmlinux.h
	DEPENDS ${JW_VMLINUX_BTF}
	COMMENT "Generating vmlinux.h from ${JW_VMLINUX_BTF}"
	VERBATIM)

# jw_bpf_skeleton(NAME SOURCE) -> interface target NAME_skel providing NAME.skel.h and
# NAME_compat.skel.h: the object built twice (bpf/kernel.bpf.h), the full one for kernels with
# every facility it uses and the compatible one (-DJW_COMPAT=1) for older kernels and kernels
# without BTF. Both have the same maps, programs and variables, laid out alike, so that user
# space opens either through the one skeleton: scripts/skel-same.sh checks it at build time.
function(jw_bpf_skeleton name source)
	file(GLOB bpf_headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.h ${CMAKE_SOURCE_DIR}/bpf/arch/*.h
	     ${CMAKE_SOURCE_DIR}/include/jankwatch/*.h)
	set(skels)
	foreach(variant full compat)
		if(variant STREQUAL full)
			set(stem ${name})
			set(compat 0)
		else()
			set(stem ${name}_compat)
			set(compat 1)
		endif()
		set(obj ${JW_BPF_GEN}/${stem}.bpf.o)
		set(skel ${JW_BPF_GEN}/${stem}.skel.h)
		add_custom_command(
			OUTPUT ${obj}
			COMMAND ${JW_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${JW_BPF_ARCH}
				-DJW_COMPAT=${compat} -Wall -Werror
				-I${JW_BPF_GEN} -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_SOURCE_DIR}/bpf
				-c ${source} -o ${obj}
			# The DWARF -g leaves beside the BTF: libbpf reads none of it, and the
			# skeleton would carry it into the binary (most of the object's size).
			COMMAND ${JW_LLVM_STRIP} -g ${obj}
			DEPENDS ${source} ${bpf_headers} ${JW_BPF_GEN}/vmlinux.h
			COMMENT "Compiling BPF object ${stem}.bpf.o"
			VERBATIM)
		add_custom_command(
			OUTPUT ${skel}
			COMMAND sh -c "${JW_BPFTOOL} gen skeleton ${obj} name ${stem}_bpf > ${skel}.tmp"
			COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
			DEPENDS ${obj}
			COMMENT "Generating BPF skeleton ${stem}.skel.h"
			VERBATIM)
		list(APPEND skels ${skel})
	endforeach()
	set(same ${JW_BPF_GEN}/${name}.skel-same)
	add_custom_command(
		OUTPUT ${same}
		COMMAND ${CMAKE_SOURCE_DIR}/scripts/skel-same.sh ${skels} ${name}_bpf ${name}_compat_bpf
		COMMAND ${CMAKE_COMMAND} -E touch ${same}
		DEPENDS ${skels} ${CMAKE_SOURCE_DIR}/scripts/skel-same.sh
		COMMENT "Checking that the two builds of ${name}.bpf.o share one skeleton layout"
		VERBATIM)
	add_custom_target(${name}_skel_gen DEPENDS ${skels} ${same})
	add_library(${name}_skel INTERFACE)
	add_dependencies(${name}_skel ${name}_skel_gen)
	target_include_directories(${name}_skel INTERFACE ${JW_BPF_GEN})
endfunction()
