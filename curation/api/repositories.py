"""Repositories: the status table, imports (one, many, or an uploaded archive) as jobs, the
set-up a curator can change, and synthesis. A repository's `source` is left out: a git URL can
carry credentials.

    GET   /api/v1/repositories                  the status table (?status= ?name= ?language=)
    POST  /api/v1/repositories                  import: one item, {"items": [...]}, or an archive
    GET   /api/v1/repositories/{id}             one repository
    PATCH /api/v1/repositories/{id}             its set-up (setup/test command, requirements)
    POST  /api/v1/repositories/{id}/synthesize  a synthesis job
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response

from curation import access
from curation.api.errors import Conflict
from curation.api.filters import RepositoryFilter
from curation.api.params import JSONInputSerializer
from curation.api.parsers import JSONParser
from curation.api.router import router
from curation.models import Repository
from curation.selectors.repositories import repositories_visible, repository_state
from curation.services.repositories import (
    RepositoryImportError,
    repository_import_enqueue_batch,
    repository_update_setup,
)
from curation.services.repository_sources import (
    SetupOverrides,
    allowed_roots,
    parse_requirements,
    request_from_item,
    upload_request,
)
from curation.services.synthesis import ENGINES, SynthesisInputError, synthesis_enqueue

MAX_BATCH = 1000


class StrictCharField(serializers.CharField):
    """A string, and only a string: 5 is not the name "5"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class RepositorySerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()
    status_reason = serializers.SerializerMethodField()
    extra_requirements = serializers.SerializerMethodField()

    class Meta:
        model = Repository
        fields = [
            "id",
            "name",
            "source_kind",
            "default_commit",
            "requested_commit",
            "upstream",
            "environment_version",
            "language",
            "setup_command",
            "test_command",
            "extra_requirements",
            "status",
            "status_reason",
            "test_files",
            "tests_collected",
            "tasks_verified",
            "import_job",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ChoiceField(choices=Repository.Status.choices))
    def get_status(self, repository) -> str:
        return repository_state(repository).status

    def get_status_reason(self, repository) -> str:
        return repository_state(repository).reason

    def get_extra_requirements(self, repository) -> list[str]:
        return list(repository.environment.get("requirements", []))


class SetupSerializer(JSONInputSerializer):
    setup_command = StrictCharField(max_length=500, required=False, allow_blank=True)
    test_command = StrictCharField(max_length=500, required=False, allow_blank=True)
    requirements = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, max_length=100
    )


class ImportItemSerializer(JSONInputSerializer):
    source = StrictCharField(
        max_length=4000, required=False, help_text="a git URL or a path on the server"
    )
    url = StrictCharField(max_length=2000, required=False, help_text="a git URL")
    path = StrictCharField(
        max_length=4000,
        required=False,
        help_text="a folder, git repository or archive on the server, under the allowed roots",
    )
    commit = StrictCharField(max_length=200, required=False, allow_blank=True)
    name = StrictCharField(max_length=100, required=False, allow_blank=True)
    setup = SetupSerializer(required=False)

    def validate(self, attrs):
        given = [key for key in ("source", "url", "path") if attrs.get(key)]
        if len(given) != 1:
            raise ValidationError({"source": ["Give exactly one of source, url or path."]})
        return attrs


class ImportSerializer(ImportItemSerializer):
    """One repository, or `items` for many (a corpus): one job per repository."""

    items = ImportItemSerializer(many=True, required=False, max_length=MAX_BATCH)

    def validate(self, attrs):
        if "items" in attrs:
            if len(attrs) > 1:
                raise ValidationError({"items": ["Give items alone, or one repository."]})
            if not attrs["items"]:
                raise ValidationError({"items": ["Give at least one item."]})
            return attrs
        return super().validate(attrs)


class ArchiveImportSerializer(serializers.Serializer):
    archive = serializers.FileField(help_text=".tar.gz, .tgz, .tar or .zip of the project")
    commit = StrictCharField(max_length=200, required=False, allow_blank=True)
    name = StrictCharField(max_length=100, required=False, allow_blank=True)
    setup_command = StrictCharField(max_length=500, required=False, allow_blank=True)


class ImportResultSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    repository = serializers.IntegerField(required=False)
    name = serializers.CharField(required=False)
    job = serializers.IntegerField(required=False, allow_null=True)
    action = serializers.ChoiceField(
        choices=["queued", "retried", "in_progress", "exists"], required=False
    )
    status = serializers.ChoiceField(choices=Repository.Status.choices, required=False)
    error = serializers.CharField(required=False)


class ImportResponseSerializer(serializers.Serializer):
    results = ImportResultSerializer(many=True)


class SetupUpdateSerializer(JSONInputSerializer):
    setup_command = StrictCharField(max_length=500, required=False, allow_blank=True)
    test_command = StrictCharField(max_length=500, required=False, allow_blank=True)
    extra_requirements = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, max_length=100
    )


class SynthesizeSerializer(JSONInputSerializer):
    dataset = StrictCharField(max_length=100, help_text="dataset name")
    engine = serializers.ChoiceField(choices=list(ENGINES), default="procedural")
    count = serializers.IntegerField(min_value=1, max_value=200, default=10)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)


class JobRefSerializer(serializers.Serializer):
    job = serializers.IntegerField()
    status = serializers.CharField()


def _item(data: dict) -> dict:
    item = {key: data[key] for key in ("source", "url", "path", "commit", "name") if key in data}
    if "setup" in data:
        item["setup"] = dict(data["setup"])
    return item


class RepositoryViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Repositories: all of them for curators; for a reviewer, those their tasks come from."""

    serializer_class = RepositorySerializer
    filterset_class = RepositoryFilter
    parser_classes = [JSONParser, MultiPartParser]
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_parsers(self):
        # Only an import takes a form (an archive upload); a change of settings is JSON, where
        # a list is a list (in a form, an empty `extra_requirements` would just be absent).
        action = getattr(self, "action", None)
        if action is None and self.request is not None:
            # A request's parsers are chosen before DRF names its action.
            creating = self.request.method == "POST" and "pk" not in self.kwargs
        else:
            creating = action == "create"
        return super().get_parsers() if creating else [JSONParser()]

    def required_role(self, request):
        return None if request.method in SAFE_METHODS else access.CURATOR

    def get_queryset(self):
        return repositories_visible(self.request.user).order_by("id")

    def get_serializer_class(self):
        return {
            "create": ImportSerializer,
            "partial_update": SetupUpdateSerializer,
            "synthesize": SynthesizeSerializer,
        }.get(self.action, RepositorySerializer)

    @extend_schema(
        request={
            "application/json": ImportSerializer,
            "multipart/form-data": ArchiveImportSerializer,
        },
        responses={202: ImportResponseSerializer},
    )
    def create(self, request, *args, **kwargs):
        """Import repositories as jobs: one item (`source`, `url` or `path`, with `commit`,
        `name`, `setup`), `items` for many, or an uploaded `archive` (multipart). Importing a
        source and commit again returns the repository already there; one whose import failed
        is tried again. Bad items are reported with their index; the others go ahead."""
        roots = allowed_roots()
        if (request.content_type or "").startswith("multipart/"):
            upload = ArchiveImportSerializer(data=request.data)
            upload.is_valid(raise_exception=True)
            values = upload.validated_data
            command = values.get("setup_command")
            try:
                first = upload_request(
                    values["archive"],
                    commit=values.get("commit"),
                    name=values.get("name"),
                    setup=SetupOverrides(setup_command=command) if command else SetupOverrides(),
                )
            except RepositoryImportError as exc:
                raise ValidationError({"archive": [str(exc)]}) from None
            items, parse = [first], lambda request_: request_
        else:
            data = ImportSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            values = data.validated_data
            raw = values.get("items", [values])
            items = [_item(item) for item in raw]

            def parse(item):
                return request_from_item(item, roots=roots)

        results = repository_import_enqueue_batch(items=items, parse=parse, user=request.user)
        if not any(result.outcome for result in results):
            raise ValidationError(
                {
                    "items" if len(results) > 1 else "source": [
                        f"item {r.index}: {r.error}" if len(results) > 1 else r.error
                        for r in results
                    ]
                }
            )
        return Response(
            {"results": [result.as_dict() for result in results]}, status=status.HTTP_202_ACCEPTED
        )

    @extend_schema(request=SetupUpdateSerializer, responses={200: RepositorySerializer})
    def partial_update(self, request, *args, **kwargs):
        """Change how the repository's environment is set up."""
        repository = self.get_object()
        data = SetupUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            repository_update_setup(
                repository=repository,
                setup_command=values.get("setup_command", repository.setup_command),
                test_command=values.get("test_command", repository.test_command),
                requirements=parse_requirements(
                    values.get("extra_requirements", repository.environment.get("requirements", []))
                ),
            )
        except RepositoryImportError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from None
        return Response(RepositorySerializer(self.get_queryset().get(pk=repository.pk)).data)

    @extend_schema(request=SynthesizeSerializer, responses={202: JobRefSerializer})
    @action(detail=True, methods=["post"])
    def synthesize(self, request, pk=None):
        """Queue a synthesis run: tasks from this repository into a dataset, each validated.
        A repository that is not imported is a 409 with the reason."""
        repository = self.get_object()
        data = SynthesizeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        dataset = access.visible_datasets(request.user).filter(name=values["dataset"]).first()
        if dataset is None:
            raise ValidationError({"dataset": [f"No dataset named {values['dataset']!r}."]})
        if not repository.is_imported:
            raise Conflict(f"Repository {repository.name!r} is not imported yet.")
        try:
            job = synthesis_enqueue(
                repository=repository,
                dataset=dataset,
                engine=values["engine"],
                count=values["count"],
                seed=values["seed"],
                user=request.user,
            )
        except SynthesisInputError as exc:
            if "not imported" in str(exc):
                raise Conflict(str(exc)) from None
            raise ValidationError({"engine": [str(exc)]}) from None
        return Response({"job": job.pk, "status": job.status}, status=status.HTTP_202_ACCEPTED)


router.register("repositories", RepositoryViewSet, basename="repository")
