"""Export formats of tasks: Specloom JSONL, SWE-bench JSONL and Parquet.

`records` turns a task queryset into plain dicts in batches (constant memory, no model
instances); `formats` turns those dicts into bytes. Release files and the ad-hoc streaming export
share both, so a task looks the same wherever it is exported.
"""
