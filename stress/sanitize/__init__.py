"""The sanitizer side of aclnn-stress: findings, msSanitizer logs, `aclnn-stress sanitize`."""

from stress.journal.findings import TOOLS, Access, Finding, finding_from_json, read_jsonl

from .mslog import parse_log
from .rerun import SanitizeResult, sanitize_run

__all__ = [
    "TOOLS",
    "Access",
    "Finding",
    "SanitizeResult",
    "finding_from_json",
    "parse_log",
    "read_jsonl",
    "sanitize_run",
]
