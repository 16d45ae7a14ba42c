from curation.access import user_roles


def roles(request) -> dict:
    return {"user_roles": sorted(user_roles(getattr(request, "user", None)))}
