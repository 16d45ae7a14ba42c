"""Reads of the reviewer's workspace, one module per page: the queue, the task page (workspace,
leases, history), trajectories, the dashboard.

Every function takes the user and starts from `visible_tasks`, so what a page can list is what
the user may see. Query counts are fixed per page (no per-row queries): the benchmark in
bench/pages.py holds them to at most 20 whatever the size of the data. Pages get plain
dataclasses and dicts for what they compute; model instances are never decorated with extra
attributes.
"""
