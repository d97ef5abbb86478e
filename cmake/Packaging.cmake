# Install of the documentation, and CPack's Debian package:
#   cmake --build build/cpu --target package   ->  build/cpu/ampbench_<version>_amd64.deb
# The package holds both programs, the desktop integration and the man pages
# (resources/). Its Depends are what the binaries link, as dpkg-shlibdeps reads them
# from the ELF files (Qt 6, QCustomPlot, LibTorch 1.13, SQLite, ...); Fashion-MNIST is
# a Recommends, since a run on the user's own data needs no dataset. Desktop, icon and
# MIME caches are refreshed by Debian's file triggers, so the package needs no scripts.
# packaging/deb/check.sh builds, installs, exercises and removes it.
include(GNUInstallDirs)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES packaging/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The recorder for the user's own training scripts (`run --script`), where Debian's
# python3 finds it without PYTHONPATH; the CLI also finds it next to its binary.
install(DIRECTORY python/ampbench DESTINATION lib/python3/dist-packages
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ampbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "AMP Workbench maintainers")
set(AMPBENCH_MAINTAINER "AMP Workbench maintainers <maintainers@ampbench.invalid>" CACHE STRING
    "The .deb's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${AMPBENCH_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "workbench for FP32 against mixed-precision (AMP) training, with a headless CLI")
set(CPACK_PACKAGE_DESCRIPTION
    "AMP Workbench trains a model in FP32 against automatic mixed precision (fp16 with
dynamic loss scaling, bf16) and against mixed precision with gradient accumulation,
records every step in SQLite, and answers with numbers: how much faster, how much
less memory, how much larger a batch fits, and whether the loss curves stay within
seed noise. The package has the desktop workbench (ampbench) and the headless
command-line tool (ampbench-cli).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ampbench_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE "")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
include(CPack)
