"""The arm's settings, as the workbench hands them to a training script.

`ampbench-cli run --script` starts the script once per arm and seed with these
environment variables set; a script started by hand reads none and gets the
defaults (or the values given to Recorder / ArmSettings explicitly).
"""

import json
import os

#: Every variable the workbench sets for a script, and what it holds.
VARIABLES = {
    "AMPBENCH_STREAM_FD": "file descriptor the record stream goes to (a pipe the workbench reads)",
    "AMPBENCH_STREAM": "a file the record stream goes to (set it yourself to record by hand)",
    "AMPBENCH_RUN_ID": "the run's id in the workbench's database",
    "AMPBENCH_EXPERIMENT_ID": "the experiment's id in the workbench's database",
    "AMPBENCH_EXPERIMENT": "the experiment's name",
    "AMPBENCH_ARM": "the arm's name",
    "AMPBENCH_ARM_INDEX": "the arm's row in the spec (0-based)",
    "AMPBENCH_SEED": "the run's seed",
    "AMPBENCH_PRECISION": "fp32 | amp-fp16 | amp-bf16 | pure-fp16 (amp resolved on the device)",
    "AMPBENCH_ACCUMULATION": "micro-batches per optimizer step (K)",
    "AMPBENCH_LR": "the learning rate after the arm's LR rule",
    "AMPBENCH_BASE_LR": "the spec's learning rate before the rule",
    "AMPBENCH_LR_RULE": "linear | sqrt | none: how lr follows the effective batch",
    "AMPBENCH_MICRO_BATCH": "samples per micro-batch",
    "AMPBENCH_EFFECTIVE_BATCH": "samples per optimizer step (micro-batch x K)",
    "AMPBENCH_PLANNED_STEPS": "optimizer steps the run is planned for",
    "AMPBENCH_MICRO_STEPS": "micro-batches the run is planned for",
    "AMPBENCH_WARMUP_STEPS": "first optimizer steps left out of the timing",
    "AMPBENCH_EVAL_INTERVAL": "micro-batches between evaluations (0: at the end)",
    "AMPBENCH_DEVICE": "cpu or cuda:N, as the workbench resolved the spec's device",
    "AMPBENCH_DATA": "the spec's data file (arrays, image folder, csv); empty for a folder",
    "AMPBENCH_DATA_DIR": "the spec's Fashion-MNIST folder; empty for a file",
    "AMPBENCH_GRAD_CLIP": "max global gradient norm (0: no clipping)",
    "AMPBENCH_LOSS_SCALING": "1 when an fp16 arm scales its loss (GradScaler), else 0",
    "AMPBENCH_SCALER": "the GradScaler's settings as JSON (init_scale, growth_factor, ...)",
    "AMPBENCH_ARM_JSON": "the whole planned arm as JSON (every field of the arm)",
}

PRECISIONS = ("fp32", "amp-fp16", "amp-bf16", "pure-fp16")
LR_RULES = ("linear", "sqrt", "none")


class SettingsError(ValueError):
    """A setting from the environment (or given) that cannot be used; names it."""


def _text(env, key, default=""):
    value = env.get(key)
    return default if value is None or value == "" else value


def _int(env, key, default, low=None):
    text = _text(env, key)
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise SettingsError("%s=%r: expected a whole number" % (key, text)) from None
    if low is not None and value < low:
        raise SettingsError("%s=%r: expected a whole number from %d up" % (key, text, low))
    return value


def _float(env, key, default):
    text = _text(env, key)
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise SettingsError("%s=%r: expected a number" % (key, text)) from None


class ArmSettings:
    """What one run trains with. Every attribute may also be given explicitly."""

    def __init__(self, arm="", seed=0, precision="fp32", accumulation=1, lr=None,
                 base_lr=None, lr_rule="none", micro_batch=0, planned_steps=0,
                 micro_steps=0, warmup_steps=5, eval_interval=0, device="", run_id=0,
                 experiment_id=0, experiment="", arm_index=0, grad_clip=0.0,
                 loss_scaling=True, scaler=None, data="", data_dir="", arm_json=None):
        if precision not in PRECISIONS:
            raise SettingsError("precision %r: expected one of %s" % (precision, ", ".join(PRECISIONS)))
        if lr_rule not in LR_RULES:
            raise SettingsError("lr_rule %r: expected one of %s" % (lr_rule, ", ".join(LR_RULES)))
        if int(accumulation) < 1:
            raise SettingsError("accumulation %r: expected a whole number from 1 up" % (accumulation,))
        self.arm = arm or precision  # by hand, an arm is named for its precision
        self.arm_index = int(arm_index)
        self.seed = int(seed)
        self.precision = precision
        self.accumulation = int(accumulation)
        self.base_lr = base_lr
        self.lr = lr if lr is not None else base_lr
        self.lr_rule = lr_rule
        self.micro_batch = int(micro_batch)
        self.planned_steps = int(planned_steps)
        self.micro_steps = int(micro_steps)
        self.warmup_steps = int(warmup_steps)
        self.eval_interval = int(eval_interval)
        self.device = device
        self.run_id = int(run_id)
        self.experiment_id = int(experiment_id)
        self.experiment = experiment
        self.grad_clip = float(grad_clip)
        self.loss_scaling = bool(loss_scaling)
        self.scaler = dict(scaler or {})
        self.data = data
        self.data_dir = data_dir
        self.arm_json = arm_json

    @property
    def effective_batch(self):
        """Samples per optimizer step (micro-batch x K); 0 when the micro-batch is unknown."""
        return self.micro_batch * self.accumulation

    @property
    def uses_autocast(self):
        return self.precision in ("amp-fp16", "amp-bf16")

    @property
    def uses_scaler(self):
        return self.precision == "amp-fp16" and self.loss_scaling

    def as_dict(self):
        return dict(vars(self))

    @classmethod
    def from_environment(cls, environ=None, **given):
        """The settings in `environ` (default os.environ); `given` ones win."""
        env = os.environ if environ is None else environ
        scaler = {}
        scaler_text = _text(env, "AMPBENCH_SCALER")
        if scaler_text:
            try:
                scaler = json.loads(scaler_text)
            except ValueError:
                raise SettingsError("AMPBENCH_SCALER is not JSON: %r" % scaler_text) from None
            if not isinstance(scaler, dict):
                raise SettingsError("AMPBENCH_SCALER must be a JSON object: %r" % scaler_text)
        arm_json = None
        arm_text = _text(env, "AMPBENCH_ARM_JSON")
        if arm_text:
            try:
                arm_json = json.loads(arm_text)
            except ValueError:
                raise SettingsError("AMPBENCH_ARM_JSON is not JSON: %r" % arm_text) from None
        values = dict(
            arm=_text(env, "AMPBENCH_ARM"),
            arm_index=_int(env, "AMPBENCH_ARM_INDEX", 0, 0),
            seed=_int(env, "AMPBENCH_SEED", 0, 0),
            precision=_text(env, "AMPBENCH_PRECISION", "fp32"),
            accumulation=_int(env, "AMPBENCH_ACCUMULATION", 1, 1),
            lr=_float(env, "AMPBENCH_LR", None),
            base_lr=_float(env, "AMPBENCH_BASE_LR", None),
            lr_rule=_text(env, "AMPBENCH_LR_RULE", "none"),
            micro_batch=_int(env, "AMPBENCH_MICRO_BATCH", 0, 0),
            planned_steps=_int(env, "AMPBENCH_PLANNED_STEPS", 0, 0),
            micro_steps=_int(env, "AMPBENCH_MICRO_STEPS", 0, 0),
            warmup_steps=_int(env, "AMPBENCH_WARMUP_STEPS", 5, 0),
            eval_interval=_int(env, "AMPBENCH_EVAL_INTERVAL", 0, 0),
            device=_text(env, "AMPBENCH_DEVICE"),
            run_id=_int(env, "AMPBENCH_RUN_ID", 0, 0),
            experiment_id=_int(env, "AMPBENCH_EXPERIMENT_ID", 0, 0),
            experiment=_text(env, "AMPBENCH_EXPERIMENT"),
            grad_clip=_float(env, "AMPBENCH_GRAD_CLIP", 0.0),
            loss_scaling=_text(env, "AMPBENCH_LOSS_SCALING", "1") != "0",
            scaler=scaler,
            data=_text(env, "AMPBENCH_DATA"),
            data_dir=_text(env, "AMPBENCH_DATA_DIR"),
            arm_json=arm_json,
        )
        values.update({k: v for k, v in given.items() if v is not None})
        return cls(**values)


def under_workbench(environ=None):
    """Whether the workbench started this process to record a planned run."""
    env = os.environ if environ is None else environ
    return bool(_text(env, "AMPBENCH_STREAM_FD")) and bool(_text(env, "AMPBENCH_RUN_ID"))
