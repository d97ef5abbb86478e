# Trains the experiment the report tests read, once per ctest run (the fixture
# setup of every test_report test): the smoke preset into DIR/runs.db, with what the
# CLI printed in DIR/train.txt and its exit code in DIR/code.txt. It always succeeds:
# a training that failed is each test's failure to report, with that output.
#
#   cmake -DCLI=ampbench-cli -DDIR=folder -P report-fixture.cmake
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
execute_process(COMMAND "${CLI}" --db "${DIR}/runs.db" run --preset smoke -q
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(WRITE "${DIR}/train.txt" "${out}")
# Written last: the tests take the folder as trained once this file is there.
file(WRITE "${DIR}/code.txt" "${code}")
