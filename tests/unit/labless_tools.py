"""Lab tools over a two-device topology and no lab: for checks settled before a lab is needed
(arguments, schemas, refusals)."""

from __future__ import annotations

from typing import cast

from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.model import DeviceFacts, InterfaceFacts, PublicHalf
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

NO_LAB = cast(LiveLab, None)  # every call made through these tools is settled before a lab


def two_devices() -> PublicHalf:
    interfaces = [InterfaceFacts(name="eth0", link="lan0")]
    return PublicHalf(
        brief="b",
        devices=[
            DeviceFacts(name="r1", role="router", interfaces=interfaces),
            DeviceFacts(name="h1", role="host", interfaces=interfaces),
        ],
        links=[("lan0", ["r1", "h1"])],
    )


def labless_tools() -> LabTools:
    return LabTools(NO_LAB, two_devices(), Trajectory(episode="e"))
