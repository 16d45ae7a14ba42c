"""Job handlers of the curation domain: thin glue from a Job row to a service."""
