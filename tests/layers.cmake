# The layers, checked on every test run (cmake -P tests/layers.cmake from the
# project root, or `ctest -R Layers`): each rule is a way the architecture could
# quietly rot.
#   1. core/ includes no Qt: the CLI builds on a GPU server without it.
#   2. The torch-free libraries (config, run, util, store, stream, analysis, launch) include
#      nothing of the engine (amp, data, models, parallel, probe, train), nothing of script/ and
#      no LibTorch.
#   3. core/ includes nothing of ui/ or app/; ui/ nothing of app/.
#   4. A header in a `private/` folder is included only by its own module (the folder
#      that holds `private/`) and by tests.
#   5. core/util/ is the ground floor: anything may include it, and it includes
#      nothing of the project outside itself.
#   6. core/script/ (a Python training script as the model) includes no LibTorch and of
#      the engine only its torch-free public headers (train/, probe/): it starts a
#      process and reads its stream; nothing below it includes it.
#   7. ui/draw/ (the palette and heatmap the plots and the report share) includes nothing
#      of ui/ outside itself; ui/report/ nothing of ui/ but ui/draw/: the CLI links the
#      report without the GUI's library.
#   8. Within the engine, core/amp/ (the precision formats, which prepare a model) sits
#      above core/models/: models include nothing of amp. Both switch autocast through
#      core/autocast/, which includes nothing of the project.
#   9. ui/remote/ (hosts, transports, remote runs, the hosts dialog) includes nothing of ui/
#      outside itself: the settings and the window above it read and keep its hosts, it never
#      reaches up to them (no cycle between ui/Settings.h and ui/remote/).
cmake_minimum_required(VERSION 3.16)
if(NOT DEFINED ROOT)
    set(ROOT ${CMAKE_CURRENT_LIST_DIR}/..)
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)

set(problems "")
file(GLOB_RECURSE sources RELATIVE "${ROOT}"
     "${ROOT}/core/*.h" "${ROOT}/core/*.cpp" "${ROOT}/ui/*.h" "${ROOT}/ui/*.cpp"
     "${ROOT}/app/*.h" "${ROOT}/app/*.cpp" "${ROOT}/bench/*.h" "${ROOT}/bench/*.cpp")
foreach(source IN LISTS sources)
    file(STRINGS "${ROOT}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line IN LISTS includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*$" "\\1" header
                             "${line}")
        if(source MATCHES "^core/")
            if(header MATCHES "^Q[A-Za-z]+$|^Q[A-Za-z]+/|^qcustomplot")
                string(APPEND problems "${source}: includes Qt (${header})\n")
            endif()
            if(header MATCHES "^(ui|app)/")
                string(APPEND problems "${source}: includes ${header} (core is below ui and app)\n")
            endif()
        endif()
        if(source MATCHES "^core/(config|run|util|store|stream|analysis|launch)/")
            if(header MATCHES "^core/(amp|autocast|data|models|parallel|probe|train|script)/|^(torch|ATen|c10)/")
                string(APPEND problems "${source}: includes ${header} (a torch-free library)\n")
            endif()
        endif()
        if(source MATCHES "^core/(amp|autocast|data|models|numerics|parallel|probe|train)/"
           AND header MATCHES "^core/script/")
            string(APPEND problems "${source}: includes ${header} (the engine is below script)\n")
        endif()
        if(source MATCHES "^core/script/"
           AND header MATCHES "^core/(amp|autocast|data|models|numerics|parallel)/|^(torch|ATen|c10)/")
            string(APPEND problems "${source}: includes ${header} (script needs no LibTorch)\n")
        endif()
        if(source MATCHES "^core/models/" AND header MATCHES "^core/amp/")
            string(APPEND problems "${source}: includes ${header} (amp is above models)\n")
        endif()
        if(source MATCHES "^core/autocast/" AND header MATCHES "^(core|ui|app|bench)/"
           AND NOT header MATCHES "^core/autocast/")
            string(APPEND problems "${source}: includes ${header} (autocast is below the engine)\n")
        endif()
        if(source MATCHES "^core/util/" AND header MATCHES "^(core|ui|app|bench)/"
           AND NOT header MATCHES "^core/util/")
            string(APPEND problems "${source}: includes ${header} (util is the ground floor)\n")
        endif()
        if(source MATCHES "^ui/draw/" AND header MATCHES "^ui/" AND NOT header MATCHES "^ui/draw/")
            string(APPEND problems "${source}: includes ${header} (ui/draw is below the rest of ui)\n")
        endif()
        if(source MATCHES "^ui/report/" AND header MATCHES "^ui/"
           AND NOT header MATCHES "^ui/(report|draw)/")
            string(APPEND problems "${source}: includes ${header} (the report is below the GUI)\n")
        endif()
        if(source MATCHES "^ui/remote/" AND header MATCHES "^ui/"
           AND NOT header MATCHES "^ui/remote/")
            string(APPEND problems "${source}: includes ${header} (ui/remote is below the rest of ui)\n")
        endif()
        if(source MATCHES "^ui/" AND header MATCHES "^app/")
            string(APPEND problems "${source}: includes ${header} (ui is below app)\n")
        endif()
        if(header MATCHES "^(.+)/private/[^/]+$")
            set(owner "${CMAKE_MATCH_1}/")
            string(LENGTH "${owner}" n)
            string(SUBSTRING "${source}" 0 ${n} prefix)
            if(NOT prefix STREQUAL owner)
                string(APPEND problems "${source}: includes ${header}, private to ${owner}\n")
            endif()
        endif()
    endforeach()
endforeach()

if(problems)
    message(FATAL_ERROR "layering broken:\n${problems}")
endif()
list(LENGTH sources count)
message(STATUS "layers hold in ${count} files")
