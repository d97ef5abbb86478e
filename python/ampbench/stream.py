"""The record stream (NDJSON v1) as the workbench's C++ writer writes it.

One JSON object a line. Doubles are written in the shortest form that reads back to
the same bits (Python's repr of a float), NaN and the infinities as the strings
"NaN", "Infinity" and "-Infinity"; integers as integers. Standard library only.
"""

import json
import math

STREAM_VERSION = 1

#: Event kinds the workbench reads (run::EventKind).
EVENT_KINDS = ("skipped_step", "out_of_memory", "non_finite", "warning", "info", "device_busy")
#: Final run states and failure kinds (run::RunStatus, run::FailureKind).
STATUSES = ("queued", "running", "finished", "failed", "cancelled", "interrupted")
FAILURES = ("", "out_of_memory", "non_finite", "data", "setup", "runtime", "recording",
            "cancelled", "interrupted")

_INT64_MAX = 2**63 - 1

#: The longest name (an experiment's, an arm's) a stream may bring, in UTF-8 bytes:
#: stream::kMaxNameLength in core/stream/RecordStream.h, the rule `ingest` applies.
MAX_NAME_BYTES = 200


def name_problem(name):
    """What is wrong with a name for the stream, as `ingest` words it; "" when it may be stored.

    The same rule as stream::nameProblem: at most MAX_NAME_BYTES bytes of UTF-8, and no
    control character (below U+0020, or DEL).
    """
    size = len(name.encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES:
        return "must be at most %d bytes long (it is %d)" % (MAX_NAME_BYTES, size)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "must not contain control characters (line breaks, escapes)"
    return ""


def valid_text(text):
    """`text` as valid UTF-8 would read: bytes a file-system name brought that are not
    UTF-8 (Python's surrogate escapes) become U+FFFD, as the workbench stores them."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def storable_name(name):
    """`name` made to follow the rule: control characters as spaces, cut to whole characters."""
    cleaned = "".join(" " if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)
    data = cleaned.encode("utf-8", "replace")[:MAX_NAME_BYTES]
    return data.decode("utf-8", "ignore")


def number(value):
    """A double as the stream writes it: a float, or "NaN"/"Infinity"/"-Infinity"."""
    v = float(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def plain(value, name):
    """A numpy or PyTorch scalar (or one-value array or tensor) as the Python value it
    holds, so that one rule judges both: np.float32(16.5) is 16.5, np.bool_(True) is
    True. Any other value is returned as it is; ValueError for several values."""
    module = type(value).__module__.split(".")[0]
    if module not in ("numpy", "torch") or not hasattr(value, "item"):
        return value
    size = value.numel() if module == "torch" else getattr(value, "size", 1)
    if size != 1:
        raise ValueError("%s must be a single value, not %d values of shape %s"
                         % (name, size, tuple(getattr(value, "shape", ()))))
    return value.item()


def whole(value, name, low=-_INT64_MAX - 1, high=_INT64_MAX):
    """An integer field; bools, text and numbers with a fraction are refused by name,
    numpy's and PyTorch's as Python's (see plain)."""
    value = plain(value, name)
    if isinstance(value, (bool, str, bytes)):
        raise ValueError("%s must be a whole number, not %r" % (name, value))
    try:
        as_int = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError("%s must be a whole number, not %r" % (name, value)) from None
    if as_int != value:
        raise ValueError("%s must be a whole number, not %r" % (name, value))
    if not low <= as_int <= high:
        raise ValueError("%s must be from %d to %d, not %d" % (name, low, high, as_int))
    return as_int


def encode(record):
    """One record (a dict with "type" first) as one line of JSON, without the newline."""
    # allow_nan=False: a bare NaN would not be JSON; every double went through number().
    return json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def header(environment, version, database_id=""):
    record = {
        "type": "header",
        "stream_version": STREAM_VERSION,
        "ampbench_version": version,
        "ampbench_commit": "",
    }
    if database_id:
        record["database_id"] = database_id
    record["environment"] = environment
    return record
