"""The review agent: a heuristic auditor and an optional LLM auditor over a task's
trajectories, and the calibration of their verdicts against human decisions.

Plain Python (no Django): the audit service turns rows into ``facts`` and findings back into
rows.
"""
