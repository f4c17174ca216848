"""Standalone reproducers: a run's failing case(s) as a self-contained ctypes + numpy script."""

from stress.standalone.script import Reproduction, choose_cases, render_script, write_script

__all__ = ["Reproduction", "choose_cases", "render_script", "write_script"]
