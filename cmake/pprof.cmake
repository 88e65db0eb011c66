# SPDX-License-Identifier: GPL-2.0-only
# pprof's profile.proto (Debian's golang-github-google-pprof-dev) compiled by protoc-c into a
# static library, jw_profile_proto, for user/output/pprof.c; zlib gzips the profiles.
set(JW_PROFILE_PROTO /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
    CACHE FILEPATH "pprof's profile.proto")
if(NOT EXISTS ${JW_PROFILE_PROTO})
	message(FATAL_ERROR "jankwatch: no ${JW_PROFILE_PROTO}: "
		"apt-get install golang-github-google-pprof-dev (scripts/setup.sh does)")
endif()
# The compiler runs on the build machine, also in a cross build.
find_program(JW_PROTOC_C NAMES protoc-c NO_CMAKE_FIND_ROOT_PATH)
if(NOT JW_PROTOC_C)
	message(FATAL_ERROR "jankwatch: no protoc-c: apt-get install protobuf-c-compiler "
		"(scripts/setup.sh does)")
endif()
pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)

get_filename_component(_jw_proto_dir ${JW_PROFILE_PROTO} DIRECTORY)
set(_jw_gen ${CMAKE_BINARY_DIR}/gen)
add_custom_command(
	OUTPUT ${_jw_gen}/profile.pb-c.c ${_jw_gen}/profile.pb-c.h
	COMMAND ${CMAKE_COMMAND} -E make_directory ${_jw_gen}
	COMMAND ${JW_PROTOC_C} --proto_path=${_jw_proto_dir} --c_out=${_jw_gen} ${JW_PROFILE_PROTO}
	DEPENDS ${JW_PROFILE_PROTO}
	COMMENT "protoc-c: profile.proto"
	VERBATIM)
# Generated code: built with the project's flags but its own warnings left to protoc-c.
add_library(jw_profile_proto STATIC ${_jw_gen}/profile.pb-c.c)
target_include_directories(jw_profile_proto PUBLIC ${_jw_gen})
target_link_libraries(jw_profile_proto PUBLIC PkgConfig::PROTOBUFC)
set_target_properties(jw_profile_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
