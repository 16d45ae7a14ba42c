"""Reads of the curation domain (HackSoft style: <entity>_<query>), shared by views and API."""
