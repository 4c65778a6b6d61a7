"""The lab runtime: a `LabSpec` becomes a live Kathará lab on Docker."""
