# bench/device/tests.sh: bash bench/device.sh tests (sourced by it, after the build).
#
#   tests     the whole test suite (ctest), GPU-only tests included; nothing else.
#             Exits non-zero when a test fails.

run_suite
