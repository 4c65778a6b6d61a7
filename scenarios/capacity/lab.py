"""The lab of a capacity-planning instance: one device, with no link, holding the model.

The agent's code runs there as an unprivileged user (`netdojo.tools.python_code`) and may
change only the plan folder; the judge reads the model and the answer from it. Nothing of the
judge, of the reference solution or of the expected answer is ever put in the device.
"""

from __future__ import annotations

from netdojo.labs.spec import DeviceSpec, LabSpec, Limits

PLANNER = "planner"
PLAN_DIR = "/srv/plan"
MODEL_PATH = f"{PLAN_DIR}/model.json"
ANSWER_PATH = f"{PLAN_DIR}/answer.json"
SANDBOX_UID = 10001
"""The user the agent's code runs as: it owns the plan folder and nothing else."""
PLANNER_LIMITS = Limits(memory_mib=1024, cpus=1.0, pids=64)
"""Room for networkx over a level-3 model (tens of thousands of entities)."""


def planner_lab(model_json: str, lab_name: str) -> LabSpec:
    """A lab of the planner device alone, the model at `MODEL_PATH`, the folder the user's."""
    device = DeviceSpec(
        name=PLANNER,
        role="host",
        files={MODEL_PATH: model_json},
        startup=[
            f"chown -R {SANDBOX_UID}:{SANDBOX_UID} {PLAN_DIR}",
            f"chmod 0755 {PLAN_DIR}",
            f"chmod 0644 {MODEL_PATH}",
        ],
        limits=PLANNER_LIMITS,
    )
    return LabSpec(name=lab_name, devices=[device])
