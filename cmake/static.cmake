# SPDX-License-Identifier: GPL-2.0-only
# -DJW_STATIC=ON: jankwatch linked with no shared library and no program interpreter, one file
# that starts on any Linux userland (bionic, musl, any glibc): Debian's static libraries (the
# -dev packages' .a, for the host or, with the cross toolchain, for arm64) and glibc's libc.a.
# The libraries are named to the linker (-lbpf, ...) as pkg-config --static lists them, so the
# static link takes their .a; the unit tests of such a build, linked without -static, take the
# shared ones. Only the `jankwatch` target is meant to be built (scripts/dist.sh).
#
# What glibc can only do through its shared world is not linked in: no name service (--user
# reads the passwd and group files itself: process/accounts.c), and no dynamic loader: libdw's
# debuginfod client calls dlopen() only when DEBUGINFOD_URLS is set; here its dlopen, dlsym and
# dlclose are wrapped (-Wl,--wrap) to the stand-ins of base/noloader.c, which load nothing.
set(JW_STATIC_PACKAGES LIBBPF LIBDW LIBELF ZLIB PROTOBUFC)
foreach(pkg ${JW_STATIC_PACKAGES})
	set_property(TARGET PkgConfig::${pkg} PROPERTY INTERFACE_LINK_LIBRARIES
		     ${${pkg}_STATIC_LIBRARIES})
	set_property(TARGET PkgConfig::${pkg} PROPERTY INTERFACE_LINK_DIRECTORIES
		     ${${pkg}_STATIC_LIBRARY_DIRS})
	set_property(TARGET PkgConfig::${pkg} PROPERTY INTERFACE_LINK_OPTIONS
		     ${${pkg}_STATIC_LDFLAGS_OTHER})
endforeach()
# libdw.a's decompressors: its .pc names bz2, z and lzma; 0.188 also reads zstd-compressed
# sections.
set_property(TARGET PkgConfig::LIBDW APPEND PROPERTY INTERFACE_LINK_LIBRARIES zstd)
# -u: the stand-ins are taken from the core library before libdw.a asks for them.
set(JW_STATIC_LINK_OPTIONS -static -Wl,--wrap=dlopen,--wrap=dlsym,--wrap=dlclose
    -Wl,-u,__wrap_dlopen,-u,__wrap_dlsym,-u,__wrap_dlclose)
