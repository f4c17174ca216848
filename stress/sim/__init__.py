"""The CANN simulator: a C implementation of the subset of the CANN ABI used by the framework
and by typical ctypes scripts, built on first use with the system C compiler.

``root()`` returns a directory laid out like a CANN install (``lib64/libascendcl.so``,
``lib64/libnnopbase.so``, ``lib64/libopapi.so``, ``<arch>-linux/lib64``, ``include/``), so a
script written for CANN runs unchanged with ``ASCEND_HOME_PATH=<root>``.  See
docs/simulator.md for its behaviour and internals.
"""

from stress.sim._build import SimBuildError, build, lib_dir, root

__all__ = ["SimBuildError", "build", "lib_dir", "root"]
