"""The curator's pipeline in the browser: repositories, synthesis, datasets, trajectories, jobs.

Server-rendered pages with htmx fragments (a page template with named partials), like the
review and release pages. Every view is for curators: someone without a role sees the "no
access" page (or a 404 for an object), a reviewer a 403. Long work is always a job: a view
queues it and the page polls the job's fragment until it answers 286 (done).
"""
