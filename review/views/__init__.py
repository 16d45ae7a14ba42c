"""HTML views of the reviewer's workspace, one module per page: the dashboard, the queue, the
task page (with its leases, decisions and edits in place), trajectories.

Plain functions; objects come through access helpers. Pages render whole templates; htmx
requests get the named partial of the same template (`"review/task.html#decision"`), so a page
and its fragments never drift apart. Every view checks the role first, and every task is
fetched with `get_task_for_user` (404 for outsiders).
"""
