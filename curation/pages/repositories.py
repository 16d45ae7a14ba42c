"""Repositories: the status table, imports (git URL, server path, archive, many at once),
a repository's page and its environment recipe."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from curation.forms import (
    ArchiveImportForm,
    BatchImportForm,
    GitImportForm,
    PathImportForm,
    RecipeForm,
)
from curation.pages.common import curator_page, job_progress_response, render_partial
from curation.selectors.jobs import attach_subjects
from curation.selectors.repositories import (
    get_repository_for_user,
    repositories_listed,
    repository_state,
)
from curation.services.recipes import (
    RecipeConflict,
    recipe_prepare_enqueue,
    recipe_row,
    recipe_update,
)
from curation.services.repositories import (
    RepositoryImportError,
    repository_import_enqueue,
    repository_import_enqueue_batch,
)
from curation.services.repository_sources import (
    ImportRequest,
    SetupOverrides,
    allowed_roots,
    git_request,
    path_request,
    request_from_item,
    upload_request,
)
from workers.models import Job
from workers.recipes.recipe import RecipeError

LIST = "curation/repositories.html"
DETAIL = "curation/repository_detail.html"
RECIPE = "curation/repository_recipe.html"
IMPORT_FORMS = {
    "git": GitImportForm,
    "path": PathImportForm,
    "archive": ArchiveImportForm,
    "batch": BatchImportForm,
}


def _rows(user):
    repositories = list(repositories_listed(user).order_by("-id"))
    for repository in repositories:
        repository.state = repository_state(repository)
    return repositories


def _list_context(request, forms=None, active="git"):
    roots = allowed_roots()
    forms = forms or {}
    rows = _rows(request.user)
    return {
        "nav": "pipeline",
        "step": "repositories",
        "repositories": rows,
        "pending": any(r.state.importing for r in rows),
        "forms": {kind: forms.get(kind) or cls() for kind, cls in IMPORT_FORMS.items()},
        "active": active,
        "roots": roots,
        "paths_allowed": roots is None or bool(roots),
    }


@require_GET
@curator_page
def repositories(request):
    if request.htmx and request.GET.get("part") == "table":
        context = _list_context(request)
        response = render_partial(request, LIST, "table", context)
        if not context["pending"]:  # nothing importing any more: stop polling
            response = HttpResponseStopPolling(response.content)
        return response
    return render(request, LIST, _list_context(request))


def _overrides(form) -> SetupOverrides:
    command = form.cleaned_data.get("setup_command")
    return SetupOverrides(setup_command=command.strip()) if command else SetupOverrides()


def _request_for(kind: str, form, request):
    data = form.cleaned_data
    options = {
        "commit": data.get("commit"),
        "name": data.get("name"),
        "setup": _overrides(form),
    }
    if kind == "git":
        return git_request(data["url"], **options)
    if kind == "path":
        return path_request(data["path"], roots=allowed_roots(), **options)
    return upload_request(data["archive"], **options)


def _batch_items(text: str) -> list[dict]:
    items = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        item = {"source": words[0]}
        if len(words) > 1:
            item["commit"] = words[1]
        items.append(item)
    return items


@require_POST
@curator_page
def repository_import_view(request):
    kind = request.POST.get("kind", "")
    form_class = IMPORT_FORMS.get(kind)
    if form_class is None:
        messages.error(request, "Choose how to import: a git URL, a server path or an archive.")
        return redirect("repositories")
    form = form_class(request.POST, request.FILES)

    def refused(message: str | None = None):
        if message:
            form.add_error(None, message)
        return render(request, LIST, _list_context(request, {kind: form}, kind), status=400)

    if not form.is_valid():
        return refused()
    if kind == "batch":
        items = _batch_items(form.cleaned_data["lines"])
        if not items:
            return refused("Give at least one git URL or path.")
        if len(items) > 1000:
            return refused("At most 1,000 repositories at once; use manage.py import_corpus.")
        results = repository_import_enqueue_batch(
            items=items,
            parse=lambda item: request_from_item(item, roots=allowed_roots()),
            user=request.user,
        )
        errors = [f"line {r.index + 1}: {r.error}" for r in results if r.error]
        queued = [r.outcome for r in results if r.outcome is not None]
        if errors and not queued:
            return refused(" · ".join(errors[:20]))
        actions = {}
        for outcome in queued:
            actions[outcome.action] = actions.get(outcome.action, 0) + 1
        summary = ", ".join(f"{n} {a.replace('_', ' ')}" for a, n in sorted(actions.items()))
        messages.success(request, f"{len(items)} repositories: {summary}.")
        for error in errors[:20]:
            messages.error(request, error)
        return redirect("repositories")
    try:
        outcome = repository_import_enqueue(
            request=_request_for(kind, form, request), user=request.user
        )
    except RepositoryImportError as exc:
        return refused(str(exc))
    text = {
        "queued": "Import queued.",
        "retried": "Its last import failed: trying again.",
        "in_progress": "This source is being imported already.",
        "exists": "This source and commit are imported already.",
    }[outcome.action]
    messages.success(request, f"{outcome.repository.name}: {text}")
    return redirect("repository-detail", repository_id=outcome.repository.pk)


def _detail_context(request, repository, **extra):
    repository.state = repository_state(repository)
    jobs = attach_subjects(
        list(Job.objects.filter(Job.target_filter(repository)).order_by("-id")[:10])
    )
    tasks = dict(
        repository.tasks.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    return {
        "nav": "pipeline",
        "step": "repositories",
        "repository": repository,
        "import_job": repository.import_job,
        "jobs": jobs,
        "task_counts": sorted(tasks.items()),
        "layout": repository.layout or {},
        **_recipe_context(repository),
        **extra,
    }


@require_GET
@curator_page
def repository_detail(request, repository_id: int):
    repository = get_repository_for_user(request.user, repository_id)
    return render(request, DETAIL, _detail_context(request, repository))


@require_GET
@curator_page
def repository_import_progress(request, repository_id: int):
    repository = get_repository_for_user(request.user, repository_id)
    job = repository.import_job
    if job is None:
        return render_partial(request, DETAIL, "import", _detail_context(request, repository))
    return job_progress_response(
        request,
        job,
        template=DETAIL,
        name="import",
        context=_detail_context(request, repository),
    )


@require_POST
@curator_page
def repository_retry(request, repository_id: int):
    repository = get_repository_for_user(request.user, repository_id)
    job = repository.import_job
    state = repository_state(repository)
    if job is None or state.status != "failed" or repository.is_imported:
        messages.error(request, "Only a failed import can be retried.")
        return redirect("repository-detail", repository_id=repository.pk)
    outcome = repository_import_enqueue(
        request=ImportRequest.from_params(job.params["source"]), user=request.user
    )
    messages.success(request, f"{repository.name}: import queued again (job {outcome.job.pk}).")
    return redirect("repository-detail", repository_id=repository.pk)


def _recipe_context(repository, *, form=None, editing=False, saved=False, error=""):
    row = recipe_row(repository=repository)
    job = (
        Job.objects.filter(kind="prepare_environment", params__repository_id=repository.pk)
        .order_by("-pk")
        .first()
    )
    return {
        "repository": repository,
        "recipe_row": row,
        "recipe": row.recipe or {},
        "recipe_form": form or RecipeForm(initial=RecipeForm.initial_of(row)),
        "recipe_editing": editing,
        "recipe_saved": saved,
        "recipe_error": error,
        "recipe_job": job,
        "recipe_trying": bool(job and not job.is_finished),
    }


@require_http_methods(["GET", "POST"])
@curator_page
def repository_recipe(request, repository_id: int):
    """The "Environment recipe" section: the recipe in use with its environment report and
    every attempt; edited in place (a curator's recipe is tried at once)."""
    repository = get_repository_for_user(request.user, repository_id)
    if request.method == "GET":
        editing = request.GET.get("edit") == "1"
        context = _recipe_context(repository, editing=editing)
        if context["recipe_trying"] or request.GET.get("poll") == "1":
            job = context["recipe_job"]
            if job is not None:
                return job_progress_response(
                    request, job, template=RECIPE, name="recipe", context=context
                )
        return render_partial(request, RECIPE, "recipe", context)
    form = RecipeForm(request.POST)
    status, error = 400, ""
    if form.is_valid():
        try:
            row = recipe_update(
                row=recipe_row(repository=repository),
                data=form.recipe_data(),
                user=request.user,
                revision=form.cleaned_data["revision"],
            )
        except RecipeConflict as exc:
            status, error = 409, str(exc)
        except (RecipeError, forms.ValidationError) as exc:
            form.add_error(None, exc.messages[0] if hasattr(exc, "messages") else str(exc))
        else:
            recipe_prepare_enqueue(repository=repository, user=request.user)
            if request.htmx:
                return render_partial(
                    request, RECIPE, "recipe", _recipe_context(repository, saved=True)
                )
            messages.success(request, f"Recipe saved as revision {row.revision}; a try is queued.")
            return redirect("repository-detail", repository_id=repository.pk)
    context = _recipe_context(repository, form=form, editing=status != 409, error=error)
    if request.htmx:
        return render_partial(request, RECIPE, "recipe", context, status=status)
    return render(
        request, DETAIL, {**_detail_context(request, repository), **context}, status=status
    )


@require_POST
@curator_page
def repository_recipe_prepare(request, repository_id: int):
    """Infer the recipe again (or try the curator's) and store its environment report."""
    repository = get_repository_for_user(request.user, repository_id)
    try:
        recipe_prepare_enqueue(repository=repository, user=request.user)
    except RecipeError as exc:
        context = _recipe_context(repository, error=str(exc))
        if request.htmx:
            return render_partial(request, RECIPE, "recipe", context, status=409)
        messages.error(request, str(exc))
        return redirect("repository-detail", repository_id=repository.pk)
    if request.htmx:
        return render_partial(request, RECIPE, "recipe", _recipe_context(repository))
    messages.success(request, "The environment is being prepared.")
    return redirect("repository-detail", repository_id=repository.pk)
