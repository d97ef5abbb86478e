# Writes the build's identity (version, git commit, build type) into a C++ source,
# run at every build so the commit is the one the binary was built from. The file is
# replaced only when its text changes, so an unchanged tree relinks nothing.
#
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -DBUILD_TYPE=... -P BuildInfo.cmake
#
# Without git (a source tarball), AMPBENCH_COMMIT from the environment names the commit.
set(commit "$ENV{AMPBENCH_COMMIT}")
if(commit STREQUAL "")
    find_package(Git QUIET)
    if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
        execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                        OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                        RESULT_VARIABLE rc ERROR_QUIET)
        if(NOT rc EQUAL 0)
            set(commit "")
        else()
            # Tracked files that differ from the commit make the binary something else.
            execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" diff --quiet HEAD --
                            RESULT_VARIABLE dirty ERROR_QUIET)
            if(dirty EQUAL 1)
                string(APPEND commit "-dirty")
            endif()
        endif()
    endif()
endif()
if(commit STREQUAL "")
    set(commit "unknown")
endif()
set(text "// Generated at build time by cmake/BuildInfo.cmake; do not edit.
#include \"core/config/BuildInfo.h\"

namespace ampbench::config {
const char* buildVersion() { return \"${VERSION}\"; }
const char* buildCommit() { return \"${commit}\"; }
const char* buildType() { return \"${BUILD_TYPE}\"; }
}  // namespace ampbench::config
")
set(previous "")
if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" previous)
endif()
if(NOT previous STREQUAL text)
    file(WRITE "${OUTPUT}" "${text}")
endif()
