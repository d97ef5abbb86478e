"""Recorder: a training script's steps, evaluations and events as the record stream.

Standard library only at import; PyTorch is used when the script hands it tensors, a
GradScaler or a CUDA device, and is never imported before that.
"""

import atexit
import contextlib
import datetime
import json
import os
import platform
import socket
import sys
import time
import uuid

from ampbench import stream
from ampbench.destination import READER_WAIT_S, open_stream_file
from ampbench.settings import ArmSettings, under_workbench

__all__ = ["Recorder", "RecorderError"]

#: Rows are read back from the device (one synchronisation) every this many steps,
#: and no sooner than `read_back_ms` after the last read-back, as the C++ recorder does.
READ_BACK_STEPS = 20
READ_BACK_MS = 100.0


#: A recording problem in the training loop is written into the run as an event this
#: many times; later ones are only counted (the count goes into the run when it ends).
PROBLEM_EVENTS = 10


class RecorderError(RuntimeError):
    """The recorder was used in a way it cannot record (the message says how)."""


class _Refused(ValueError):
    """A value given to step(), eval() or event() that cannot be recorded."""


def _strict_from(env):
    return (env.get("AMPBENCH_STRICT", "") or "0") not in ("0", "false", "no")


def _torch():
    """PyTorch if the script imported it (the recorder never imports it first)."""
    return sys.modules.get("torch")


def _is_tensor(value):
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rss_bytes():
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _peak_rss_bytes():
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except (ImportError, OSError):
        return 0


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _environment(device):
    torch = _torch()
    env = {
        "ampbench_version": "python-recorder " + _version(),
        "cpu_model": _cpu_model(),
        "device": device or "cpu",
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "python_version": platform.python_version(),
        "cpu_threads": os.cpu_count() or 0,
    }
    if torch is not None:
        env["libtorch_version"] = getattr(torch, "__version__", "")
        if device.startswith("cuda") and torch.cuda.is_available():
            index = torch.device(device).index or 0
            props = torch.cuda.get_device_properties(index)
            env["device_name"] = props.name
            env["device_memory"] = int(props.total_memory)
            env["compute_capability"] = "%d.%d" % (props.major, props.minor)
            env["cuda_version"] = torch.version.cuda or ""
    return env


class _Pending:
    """One step whose device values are not read back yet."""

    __slots__ = ("step", "samples", "loss", "lr", "scale_before", "scale_after", "grad_norm",
                 "host_ms", "end_event", "data_wait_ms", "timed", "mem", "wall_s")


class Recorder:
    """Records one run of a training script.

    rec = ampbench.Recorder()                 # arm, seed, precision ... from the workbench
    for batch in loader:
        with rec.autocast():
            loss = model(x)
        ...
        rec.step(loss, lr=opt.param_groups[0]["lr"], scaler=scaler, samples=len(x))
    rec.eval(metric=accuracy, loss=val_loss)
    rec.close()

    The stream goes where the workbench says (AMPBENCH_STREAM_FD), else to `path`, else
    to the file AMPBENCH_STREAM names; with none of them nothing is recorded (a warning
    says so) and the script trains as it would without the recorder. A FIFO waits up to
    `reader_wait` seconds for its reader to open it (it may still be starting).

    What cannot be recorded is refused where it enters: a name or a stream file that
    cannot be used raises RecorderError here, before training starts. In the training
    loop a value that is not a number (step(None)), or a stream that can no longer be
    written, never raises: the recorder says so once on stderr, writes a warning into
    the run, keeps every row before it and training goes on. `strict=True` (or
    AMPBENCH_STRICT=1) raises RecorderError instead.
    """

    def __init__(self, path=None, *, settings=None, environ=None, device=None,
                 experiment=None, read_back_steps=READ_BACK_STEPS, read_back_ms=READ_BACK_MS,
                 strict=None, reader_wait=READER_WAIT_S, **given):
        env = os.environ if environ is None else environ
        try:
            self.settings = settings or ArmSettings.from_environment(env, **given)
        except TypeError as e:
            raise RecorderError("Recorder: %s" % e) from None
        self.strict = _strict_from(env) if strict is None else bool(strict)
        self._problems = 0
        self._first_problem = ""
        self._out = None
        s = self.settings
        self.device = device or s.device or self._guess_device()
        self._read_back_steps = max(1, int(read_back_steps))
        self._read_back_s = max(0.0, float(read_back_ms)) / 1000.0
        self._seq = 0
        self._step = 0
        self._samples = 0
        self._pending = []
        self._last_read_back = time.perf_counter()
        self._start = time.perf_counter()
        self._mark = self._start
        self._mark_event = None
        self._scale_after = None  # the scaler's scale after the last step's update
        self._closed = False
        self._exception = None
        self._warned_samples = False
        self._bound = False  # the workbench reads this stream into a run it planned
        self._run_record = None
        self._reader_wait = reader_wait
        self._out = self._open(path, env, experiment)
        self._run = s.run_id if self._bound else 1
        if self._out is not None:
            try:
                self._begin(self._experiment_name(experiment))
            except BaseException:
                if self._out is not None:
                    self._out.close()
                    self._out = None
                raise
        atexit.register(self._at_exit)
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook

    # ----- where the stream goes -----

    def _open(self, path, env, experiment):
        fd_text = env.get("AMPBENCH_STREAM_FD", "") if path is None else ""
        target = path if path is not None else env.get("AMPBENCH_STREAM", "")
        if not fd_text and not target:
            sys.stderr.write("ampbench: no record stream (not started by ampbench-cli run "
                             "--script, no path given, AMPBENCH_STREAM unset); recording "
                             "nothing\n")
            return None
        # Names first: a run refused for its name must not empty its file.
        self.settings.arm = stream.valid_text(self.settings.arm)
        self.settings.experiment = stream.valid_text(self.settings.experiment or "")
        self._check_name("arm", self.settings.arm, "AMPBENCH_ARM")
        self._experiment_name(experiment)
        if fd_text:
            try:
                fd = int(fd_text)
                raw = os.fdopen(fd, "wb", buffering=0, closefd=True)
            except (ValueError, OSError) as e:
                raise RecorderError("AMPBENCH_STREAM_FD=%r cannot be written: %s" % (fd_text, e)) from None
            self._bound = under_workbench(env)
            return raw
        try:
            return open_stream_file(target, self._reader_wait,
                                    lambda message: sys.stderr.write("ampbench: %s\n" % message))
        except OSError as e:
            raise RecorderError("cannot write the record stream: %s" % e) from None

    @staticmethod
    def _check_name(what, name, variable):
        problem = stream.name_problem(name)
        if problem:
            shown = name if len(name) <= 60 else name[:60] + "..."
            raise RecorderError("the %s name %r (%s or %s=) %s; ampbench-cli ingest would "
                                "refuse the run" % (what, shown, variable, what, problem))

    def _experiment_name(self, given):
        """The experiment's name: given or AMPBENCH_EXPERIMENT (checked), else the script's."""
        name = stream.valid_text(given or self.settings.experiment or "")
        if name:
            self._check_name("experiment", name, "AMPBENCH_EXPERIMENT")
            return name
        script = stream.valid_text(os.path.basename(sys.argv[0] or "script"))
        return stream.storable_name(script or "script")

    def _problem(self, message):
        """A recording problem in the training loop: raised when strict, else said once."""
        if self.strict:
            raise RecorderError(message)
        self._problems += 1
        if self._problems == 1:
            self._first_problem = message
            sys.stderr.write("ampbench: %s; not recorded, training goes on (further problems "
                             "are counted; strict=True or AMPBENCH_STRICT=1 raises "
                             "instead)\n" % message)
        if self._problems <= PROBLEM_EVENTS and self._out is not None and not self._closed:
            self._write([self._event_record(message, "warning", 0.0, self._step)])

    def _guess_device(self):
        torch = _torch()
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return "cuda:%d" % torch.cuda.current_device()
        return "cpu"

    def _write(self, records):
        if self._out is None or not records:
            return
        data = "".join(stream.encode(r) + "\n" for r in records).encode("utf-8", "replace")
        try:
            view = memoryview(data)
            while view:  # an unbuffered write may take part of it
                view = view[self._out.write(view):]
        except OSError as e:
            out, self._out = self._out, None
            try:
                out.close()
            except OSError:
                pass
            why = ("the workbench stopped reading it" if isinstance(e, BrokenPipeError)
                   else e.strerror or str(e))
            # Rows written so far stay; nothing more can go where these went.
            self._problem("the record stream could not be written (%s): recording stopped "
                          "at step %d" % (why, self._step))

    def _next_seq(self):
        self._seq += 1
        return self._seq

    def _begin(self, name):
        s = self.settings
        records = [stream.header(_environment(self.device), "python-recorder " + _version(),
                                 "" if self._bound else uuid.uuid4().hex)]
        if not self._bound:
            # A stream of its own: `ingest` makes an experiment and a run of it.
            now = _now_iso()
            arm = {"name": s.arm, "precision": s.precision, "accumulation": s.accumulation,
                   "resolved_precision": s.precision, "effective_batch": s.effective_batch}
            if s.lr is not None:
                arm["lr"] = stream.number(s.lr)
            spec = {"name": name, "arms": [{"name": s.arm, "precision": s.precision,
                                            "accumulation": s.accumulation}],
                    "seeds": [s.seed], "micro_batch": max(1, s.micro_batch)}
            records.append({"type": "experiment", "id": 1, "name": name,
                            "spec_json": json.dumps(spec), "created_at": now})
            self._run_record = {"type": "run", "id": 1, "experiment_id": 1, "arm": s.arm,
                                "arm_index": s.arm_index, "seed": s.seed,
                                "spec_json": json.dumps(arm),
                                "env_json": json.dumps(records[0]["environment"]),
                                "planned_steps": s.planned_steps, "inputs_json": "",
                                "status": "running", "failure": "", "error": "",
                                "started_at": now, "ended_at": ""}
            records.append(self._run_record)
        self._write(records)

    # ----- the arm's helpers -----

    def autocast(self):
        """The arm's autocast context (nullcontext for fp32 and pure-fp16)."""
        if not self.settings.uses_autocast:
            return contextlib.nullcontext()
        import torch  # the arm asks for autocast: the script trains with PyTorch

        dtype = torch.float16 if self.settings.precision == "amp-fp16" else torch.bfloat16
        return torch.autocast(device_type=self.device.split(":")[0], dtype=dtype)

    def grad_scaler(self):
        """The arm's GradScaler (fp16 with loss scaling on CUDA), else None."""
        if not self.settings.uses_scaler:
            return None
        import torch

        sc = self.settings.scaler
        kwargs = {k: sc[k] for k in ("init_scale", "growth_factor", "backoff_factor",
                                     "growth_interval") if k in sc}
        return torch.cuda.amp.GradScaler(**kwargs)

    def accumulation_boundary(self, micro_step):
        """True after the K-th micro-batch of an optimizer step (micro_step counts from 0)."""
        return (int(micro_step) + 1) % self.settings.accumulation == 0

    @property
    def accumulation(self):
        return self.settings.accumulation

    @property
    def lr(self):
        """The arm's learning rate after its LR rule (None when not set)."""
        return self.settings.lr

    @property
    def seed(self):
        return self.settings.seed

    @property
    def steps_done(self):
        return self._step

    # ----- records -----

    def step(self, loss, lr=None, scaler=None, samples=None, grad_norm=None, data_wait_ms=0.0):
        """One optimizer step: after optimizer.step() (and scaler.update()).

        loss: the step's training loss (a tensor stays on the device until read back);
        samples: training samples in this step (default: the arm's effective batch).
        A value that cannot be recorded (loss None, "abc", a tensor of several values) is
        refused here, naming it; the step still counts, every row before it is kept.
        """
        if self._closed:
            return self._problem("step() after close()")
        now = time.perf_counter()
        self._step += 1  # the optimizer stepped, whether or not its row can be recorded
        try:
            p = self._pending_step(loss, lr, scaler, samples, grad_norm, data_wait_ms)
        except _Refused as e:
            self._mark = now
            return self._problem("step %d: %s" % (self._step, e))
        p.host_ms = (now - self._mark) * 1000.0
        torch = _torch()
        cuda = torch is not None and self.device.startswith("cuda") and torch.cuda.is_available()
        if cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            p.end_event = (self._mark_event, event)
            self._mark_event = event
            dev = torch.device(self.device)
            p.mem = (torch.cuda.memory_allocated(dev), torch.cuda.memory_reserved(dev),
                     torch.cuda.max_memory_allocated(dev))
        else:
            rss = _rss_bytes()
            p.mem = (rss, rss, max(rss, _peak_rss_bytes()))
        p.wall_s = now - self._start
        self._mark = now
        self._pending.append(p)
        if (len(self._pending) >= self._read_back_steps
                and now - self._last_read_back >= self._read_back_s):
            self._read_back()

    def _pending_step(self, loss, lr, scaler, samples, grad_norm, data_wait_ms):
        """The step's values, each checked; _Refused names the first that cannot be recorded."""
        p = _Pending()
        p.step = self._step
        if samples is None:
            samples = self.settings.effective_batch
            if samples == 0 and not self._warned_samples:
                self._warned_samples = True
                self.event("samples per step not given (step(samples=...)) and no micro-batch "
                           "set: time per sample cannot be judged", kind="warning")
        try:
            count = stream.whole(samples, "samples", 0)
        except ValueError as e:
            raise _Refused(str(e)) from None
        p.loss = _recordable(loss, "loss")
        lr = self.settings.lr if lr is None else lr
        p.lr = float("nan") if lr is None else _recordable(lr, "lr")
        p.grad_norm = float("nan") if grad_norm is None else _recordable(grad_norm, "grad_norm")
        p.data_wait_ms = _recordable(data_wait_ms, "data_wait_ms")
        try:
            p.scale_before, p.scale_after = self._scales(scaler)
        except Exception as e:  # a scaler of its own kind: its step is still a step
            raise _Refused("the scaler's scale cannot be read (%s: %s)" % (type(e).__name__, e)) from None
        p.timed = self._step > self.settings.warmup_steps
        p.end_event = None
        self._samples += count
        p.samples = self._samples
        return p

    def _scales(self, scaler):
        """The scale in effect for this step's backward, and the one after its update."""
        if scaler is None or not getattr(scaler, "is_enabled", lambda: False)():
            return 1.0, None
        after = getattr(scaler, "_scale", None)
        if _is_tensor(after):
            after = after.detach().clone()  # on the device: no synchronisation here
        else:
            after = float(scaler.get_scale())
        before = self._scale_after
        if before is None:
            before = float(getattr(scaler, "_init_scale", 65536.0))
        self._scale_after = after
        return before, after

    def eval(self, metric=None, loss=None, step=None, samples=None):
        """An evaluation: metric (accuracy as a fraction in [0, 1]) and validation loss."""
        if self._closed:
            return self._problem("eval() after close()")
        self._read_back()
        try:
            record = {"type": "eval", "run": self._run, "seq": 0,
                      "step": _whole(self._step if step is None else step, "step"),
                      "samples": _whole(self._samples if samples is None else samples, "samples"),
                      "val_loss": _number(loss, "loss"), "val_accuracy": _number(metric, "metric"),
                      "wall_s": stream.number(time.perf_counter() - self._start)}
        except _Refused as e:
            return self._problem("eval() at step %d: %s" % (self._step, e))
        record["seq"] = self._next_seq()
        self._write([record])
        self._restart_timer()

    def event(self, message, kind="info", value=0.0, step=None):
        """A note in the run's record: kind is one of stream.EVENT_KINDS."""
        if self._closed:
            return self._problem("event() after close()")
        try:
            if kind not in stream.EVENT_KINDS:
                raise _Refused("event kind %r: expected one of %s" % (kind, ", ".join(stream.EVENT_KINDS)))
            at = _whole(self._step if step is None else step, "step")
            number = _number(value, "value")
        except _Refused as e:
            return self._problem("event(%r): %s" % (str(message)[:60], e))
        self._read_back()
        self._write([self._event_record(str(message), kind, number, at)])

    def _event_record(self, message, kind, value, step):
        return {"type": "event", "run": self._run, "seq": self._next_seq(), "step": step,
                "kind": kind, "message": message, "value": stream.number(value)}

    def _restart_timer(self):
        # The time an evaluation took is not the next step's.
        self._mark = time.perf_counter()
        torch = _torch()
        if self._mark_event is not None and torch is not None:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self._mark_event = event

    def _read_back(self):
        """Every pending step's device values in one synchronisation, then their rows."""
        pending, self._pending = self._pending, []
        self._last_read_back = time.perf_counter()
        if not pending:
            return
        last_event = pending[-1].end_event
        if last_event is not None:
            last_event[1].synchronize()
        losses = _values([p.loss for p in pending])
        norms = _values([p.grad_norm for p in pending])
        before = _values([p.scale_before for p in pending])
        after = _values([1.0 if p.scale_after is None else p.scale_after for p in pending])
        records = []
        for i, p in enumerate(pending):
            if p.end_event is not None and p.end_event[0] is not None:
                step_ms = p.end_event[0].elapsed_time(p.end_event[1])
            else:
                step_ms = p.host_ms
            skipped = p.scale_after is not None and after[i] < before[i]
            records.append({"type": "step", "run": self._run, "seq": self._next_seq(),
                            "step": p.step, "samples": p.samples,
                            "loss": stream.number(losses[i]), "lr": stream.number(_value(p.lr)),
                            "loss_scale": stream.number(before[i]), "skipped": bool(skipped),
                            "grad_norm": stream.number(norms[i]),
                            "step_ms": stream.number(step_ms),
                            "data_wait_ms": stream.number(_value(p.data_wait_ms)),
                            "timed": bool(p.timed), "mem_allocated": int(p.mem[0]),
                            "mem_reserved": int(p.mem[1]), "mem_peak": int(p.mem[2]),
                            "wall_s": stream.number(p.wall_s)})
            if skipped:
                records.append(self._event_record(
                    "gradients held inf/NaN: optimizer step skipped, loss scale backed off",
                    "skipped_step", after[i], p.step))
        self._write(records)

    def flush(self):
        """Reads back and writes every pending step now."""
        self._read_back()

    def close(self, status="finished", error="", failure=""):
        """Ends the run's record: the pending steps, then its final status."""
        if self._closed:
            return
        if status not in stream.STATUSES or failure not in stream.FAILURES:
            given = "close(status=%r, failure=%r)" % (status, failure)
            # Refused, yet the run still ends: its rows are kept and it is marked for a look.
            status, failure = "failed", "recording"
            error = "%s: expected a status of %s and a failure of %s%s" % (
                given, ", ".join(stream.STATUSES), ", ".join(f for f in stream.FAILURES if f),
                ("; the script's error: %s" % error) if error else "")
            self._problem(given + ": not a status the workbench knows; the run ends failed")
        try:
            self._read_back()
        finally:
            self._closed = True
            try:
                end = []
                if self._problems > PROBLEM_EVENTS:
                    end.append(self._event_record(
                        "%d recording problems in all (the first: %s)"
                        % (self._problems, self._first_problem), "warning", self._problems,
                        self._step))
                if self._run_record is not None:
                    # Its own stream: the run's record again, with its end.
                    end.append(dict(self._run_record, status=status, failure=failure,
                                    error=str(error), ended_at=_now_iso()))
                end.append({"type": "status", "run": self._run, "status": status,
                            "failure": failure, "error": str(error), "last_seq": self._seq})
                self._write(end)
            finally:
                if self._problems > 1 and not self.strict:
                    sys.stderr.write("ampbench: %d recording problems in this run (the first is "
                                     "above)\n" % self._problems)
                if self._out is not None:
                    try:
                        self._out.close()
                    except OSError:
                        pass
                    self._out = None
                if sys.excepthook == self._excepthook:
                    sys.excepthook = self._previous_hook
                atexit.unregister(self._at_exit)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.close()
        else:
            self._close_for(kind, value)
        return False

    # ----- a script that ends without close() -----

    def _close_for(self, kind, value):
        status, failure = "failed", "runtime"
        if issubclass(kind, KeyboardInterrupt):
            status, failure = "cancelled", "cancelled"
        elif _is_out_of_memory(kind, value):
            failure = "out_of_memory"
        text = "%s: %s" % (kind.__name__, value) if str(value) else kind.__name__
        try:
            self.close(status=status, error=text, failure=failure)
        except (RecorderError, OSError):
            pass

    def _excepthook(self, kind, value, tb):
        self._exception = (kind, value)
        self._previous_hook(kind, value, tb)

    def _at_exit(self):
        if self._closed:
            return
        if self._exception is not None:
            self._close_for(*self._exception)
            return
        try:
            self.close()
        except (RecorderError, OSError):
            pass


def _is_out_of_memory(kind, value):
    if kind.__name__ == "OutOfMemoryError":
        return True
    return issubclass(kind, RuntimeError) and "out of memory" in str(value)


def _recordable(value, name):
    """A float, or a one-value tensor left on its device; _Refused names anything else.

    One rule for Python's values and numpy's: a numpy scalar or one-value array is
    judged as the Python value it holds (np.bool_(True) is refused as True is), and a
    tensor of bools as a bool."""
    if _is_tensor(value):
        if value.numel() != 1:
            raise _Refused("%s: a tensor of one value, not of shape %s" % (name, tuple(value.shape)))
        if value.is_complex():
            raise _Refused("%s: a real number, not a complex tensor" % name)
        if value.dtype == _torch().bool:
            raise _Refused("%s=%s is not a number" % (name, _short(value)))
        return value.detach()
    shown = _short(value)
    try:
        value = stream.plain(value, name)
    except ValueError as e:
        raise _Refused(str(e)) from None
    if isinstance(value, (str, bytes, bool, complex)) or value is None:
        raise _Refused("%s=%s is not a number" % (name, shown))
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise _Refused("%s=%s is not a number" % (name, shown)) from None


def _number(value, name):
    """A double for the stream (NaN for None), read now."""
    if value is None:
        return "NaN"
    return stream.number(_value(_recordable(value, name)))


def _whole(value, name):
    try:
        return stream.whole(value, name)
    except ValueError as e:
        raise _Refused(str(e)) from None


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _value(v):
    """A float from a number or a one-element tensor."""
    if _is_tensor(v):
        return float(v.item())
    return float(v)


def _values(items):
    """Floats for a list of numbers and tensors, the tensors in one copy per device."""
    out = [None] * len(items)
    by_device = {}
    for i, v in enumerate(items):
        if _is_tensor(v):
            by_device.setdefault(str(v.device), []).append(i)
        else:
            out[i] = float(v)
    if by_device:
        torch = _torch()
        for indices in by_device.values():
            flat = torch.stack([items[i].reshape(()).double() for i in indices]).tolist()
            for i, f in zip(indices, flat):
                out[i] = float(f)
    return out


def _version():
    from ampbench import __version__

    return __version__
