"""AMP Workbench's recorder for your own PyTorch training script.

Three lines in a plain loop:

    import ampbench
    rec = ampbench.Recorder()          # the arm, seed, precision ... the workbench set
    ...
    rec.step(loss, lr=lr, scaler=scaler, samples=len(x))   # after each optimizer step

`ampbench-cli run --script train.py --arm ... --seeds ...` runs the script once per
arm and seed, reads what it records into its database and judges the arms. Only the
standard library is imported here; PyTorch is used when the script uses it.
"""

from ampbench.recorder import Recorder, RecorderError
from ampbench.settings import VARIABLES, ArmSettings, SettingsError, under_workbench

__version__ = "0.1.0"

__all__ = ["Recorder", "RecorderError", "ArmSettings", "SettingsError", "VARIABLES",
           "under_workbench", "lightning_callback", "hf_callback"]


def lightning_callback(recorder=None):
    """A Lightning Callback that records through `recorder` (imports Lightning now)."""
    from ampbench.integrations import lightning_callback as make

    return make(recorder)


def hf_callback(recorder=None):
    """A Hugging Face TrainerCallback that records through `recorder` (imports transformers now)."""
    from ampbench.integrations import hf_callback as make

    return make(recorder)
