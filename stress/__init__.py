"""aclnn-stress: stress-test CANN aclnn operators for concurrency bugs, unwritten outputs and
wrong gradients, on a real NPU or on the bundled CANN simulator."""

__version__ = "0.1.0"

__all__ = ["__version__"]
