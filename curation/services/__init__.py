"""Writes of the curation domain, one module per entity (HackSoft style: <entity>_<action>)."""
