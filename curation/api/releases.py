"""Releases: cut one (a job), follow it, read its manifest and datasheet, download its files,
compare two versions. A ready release never changes: there is no update, and deleting one is a
409 (only a release that failed to build can be deleted)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response

from curation import access
from curation.api.errors import Conflict
from curation.api.files import stored_file_response
from curation.api.filters import ReleaseFilter
from curation.api.params import (
    JSONBooleanField,
    JSONInputSerializer,
    int_param,
    int_schema,
    query_param,
)
from curation.api.parsers import JSONParser
from curation.api.router import router
from curation.api.schema import COMPONENT_CONSTRAINTS, ERROR_REF
from curation.exports.formats import FORMATS, MEDIA_TYPES
from curation.models import Release
from curation.selectors.releases import (
    get_release_for_user,
    release_diff,
    releases_listed,
    releases_visible,
)
from curation.services.releases import (
    VERSION_PATTERN,
    ReleaseInputError,
    release_cut,
    release_delete,
    release_environment_file,
    release_file_path,
)
from workers.sandbox.images import CONTEXT_FILES

RELEASE_SCOPE = "release"
_NOT_READY = OpenApiResponse(
    ERROR_REF, description="The release (or the one compared with) is building or failed."
)


class ReleaseFileSerializer(serializers.Serializer):
    filename = serializers.CharField()
    sha256 = serializers.CharField()
    bytes = serializers.IntegerField()
    media_type = serializers.CharField()


class ReleaseSerializer(serializers.ModelSerializer):
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)
    tasks = serializers.SerializerMethodField()
    files = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Release
        fields = [
            "id",
            "dataset",
            "version",
            "status",
            "tasks",
            "manifest_sha256",
            "files",
            "job",
            "created_by",
            "created_at",
            "cut_at",
        ]
        read_only_fields = fields

    def get_tasks(self, release) -> int:
        count = getattr(release, "task_count", None)
        return count if count is not None else len(release.manifest)

    @extend_schema_field(serializers.DictField(child=ReleaseFileSerializer()))
    def get_files(self, release) -> dict[str, dict]:
        return {
            fmt: {key: meta[key] for key in ("filename", "sha256", "bytes", "media_type")}
            for fmt, meta in release.files.items()
        }


class ManifestEntrySerializer(serializers.Serializer):
    instance_id = serializers.CharField()
    task_id = serializers.IntegerField()
    revision = serializers.IntegerField()
    content_sha256 = serializers.CharField()
    environment = serializers.CharField(
        required=False, help_text="hash of its environment image: environments/<hash>/"
    )
    image = serializers.CharField(required=False, help_text="<prefix>:<hash>")


class ReleaseDetailSerializer(ReleaseSerializer):
    manifest = ManifestEntrySerializer(many=True, read_only=True)
    error = serializers.SerializerMethodField()

    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "manifest", "error"]
        read_only_fields = fields

    def get_error(self, release) -> str:
        return release.datasheet.get("error", "") if release.status == "failed" else ""


class ReleaseCutSerializer(JSONInputSerializer):
    dataset = serializers.CharField(
        max_length=100, help_text="dataset name; one you cannot see is a 404"
    )
    version = serializers.RegexField(
        # ECMA's `$` (the schema's) never matches before a final newline, Python's does: the
        # check here is a full match too (validate_version).
        regex=VERSION_PATTERN.pattern,
        max_length=32,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="up to 32 letters, digits, '.', '_' or '-'; default: the next vN",
    )
    trajectories = JSONBooleanField(
        default=False, help_text="put trajectories and evaluations in the specloom file"
    )
    include_unsafe = JSONBooleanField(
        default=False,
        help_text="keep trajectories flagged unsafe by the review agent; only with trajectories",
    )

    def validate_version(self, value: str) -> str:
        if value and not VERSION_PATTERN.fullmatch(value):
            raise serializers.ValidationError(
                "Use up to 32 letters, digits, '.', '_' or '-', starting with a letter or digit."
            )
        return value

    def validate(self, attrs):
        if attrs.get("include_unsafe") and not attrs.get("trajectories"):
            raise serializers.ValidationError(
                {"include_unsafe": ["Only together with trajectories=true."]}
            )
        return attrs


COMPONENT_CONSTRAINTS["ReleaseCutRequest"] = {
    # include_unsafe=true only together with trajectories=true (ReleaseCutSerializer.validate).
    "anyOf": [
        {"not": {"required": ["include_unsafe"]}},
        {"properties": {"include_unsafe": {"enum": [False]}}},
        {"required": ["trajectories"], "properties": {"trajectories": {"enum": [True]}}},
    ]
}


class ReleaseDiffEntrySerializer(serializers.Serializer):
    instance_id = serializers.CharField()
    from_revision = serializers.IntegerField()
    to_revision = serializers.IntegerField()
    from_sha256 = serializers.CharField()
    to_sha256 = serializers.CharField()


class ReleaseRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    dataset = serializers.CharField()
    version = serializers.CharField()


class ReleaseDiffSerializer(serializers.Serializer):
    # "from" is a keyword, hence vars().
    vars()["from"] = ReleaseRefSerializer()
    to = ReleaseRefSerializer()
    added = serializers.ListField(child=serializers.CharField())
    removed = serializers.ListField(child=serializers.CharField())
    changed = ReleaseDiffEntrySerializer(many=True)
    unchanged = serializers.IntegerField()


class ReleaseViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Immutable, checksummed versions of a dataset."""

    filterset_class = ReleaseFilter
    # No PUT or PATCH: a release has nothing that can be changed.
    http_method_names = ["get", "post", "delete", "head", "options"]
    # A cut is a JSON object: in a form every value is text, so a form's "0" would pass as
    # `include_unsafe` where the schema says boolean.
    parser_classes = [JSONParser]

    # Every write to releases (cutting, deleting a failed one) is a curator's, with a token of
    # the release scope; PUT and PATCH then meet a clear 405 rather than a scope error.
    def required_role(self, request):
        return None if request.method in SAFE_METHODS else access.CURATOR

    def required_scope(self, request):
        return None if request.method in SAFE_METHODS else RELEASE_SCOPE

    @property
    def extra_query_params(self):
        return {"export": ("format",), "diff": ("against",)}.get(self.action, ())

    def get_queryset(self):
        user = self.request.user
        # Only a release's own page and its datasheet need the big JSON columns.
        releases = (
            releases_visible(user)
            if self.action in ("retrieve", "datasheet")
            else (releases_listed(user))
        )
        return releases.select_related("created_by").order_by("id")

    def get_serializer_class(self):
        if self.action == "create":
            return ReleaseCutSerializer
        if self.action == "retrieve":
            return ReleaseDetailSerializer
        return ReleaseSerializer

    @extend_schema(request=ReleaseCutSerializer, responses={202: ReleaseSerializer})
    def create(self, request, *args, **kwargs):
        """Cut a release of the dataset's approved tasks. The cut runs as a job: follow
        `/api/v1/jobs/{job}` or poll the release until its status is `ready`."""
        data = ReleaseCutSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        dataset = access.visible_datasets(request.user).filter(name=values["dataset"]).first()
        if dataset is None:
            raise NotFound(f"No dataset named {values['dataset']!r} that you can see.")
        try:
            release = release_cut(
                dataset=dataset,
                version=values.get("version") or None,
                user=request.user,
                trajectories=values["trajectories"],
                include_unsafe=values["include_unsafe"],
            )
        except ReleaseInputError as exc:
            raise Conflict(str(exc)) from None
        release = self.get_queryset().get(pk=release.pk)
        return Response(ReleaseSerializer(release).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(
                ERROR_REF,
                description="The release is ready (never deleted) or still being cut.",
            ),
        }
    )
    def destroy(self, request, *args, **kwargs):
        """Delete a release that failed to build. A ready release is never deleted, and one
        still being cut cannot be deleted until its job has ended (both 409)."""
        release = self.get_object()
        try:
            release_delete(release=release)
        except ReleaseInputError as exc:
            raise Conflict(str(exc)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 409: _NOT_READY})
    @action(detail=True, methods=["get"])
    def datasheet(self, request, pk=None):
        """Counts by origin, repository, spec kind and difficulty; rejections and their reasons;
        reviewer agreement; model pass rates; trajectories left out. Frozen at the cut."""
        release = self._ready(self.get_object())
        return Response(release.datasheet)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format", str, enum=list(FORMATS), default="specloom", description="file format"
            ),
            OpenApiParameter(
                "Range", str, OpenApiParameter.HEADER, description="one byte range, e.g. bytes=0-"
            ),
        ],
        responses={
            **{
                (code, media_type): OpenApiResponse(OpenApiTypes.BINARY, description=description)
                for code, description in (
                    (200, "The whole file."),
                    (206, "The requested byte range."),
                )
                for media_type in sorted(set(MEDIA_TYPES.values()))
            },
            (304, "application/octet-stream"): OpenApiResponse(
                description="Not modified (If-None-Match)."
            ),
            (416, "application/json"): OpenApiResponse(
                ERROR_REF, description="The range is outside the file."
            ),
            (409, "application/json"): _NOT_READY,
        },
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def export(self, request, pk=None):
        """Download an export file, stored once at the cut (Range and If-Range supported; the
        sha256 is in `X-Checksum-Sha256`, `Repr-Digest` and the `ETag`)."""
        fmt = query_param(request, "format", "specloom")
        if fmt not in FORMATS:
            raise ValidationError({"format": [f"Choose one of {', '.join(FORMATS)}."]})
        release = self._ready(self.get_object())
        meta = release.files[fmt]
        return stored_file_response(
            request,
            release_file_path(release, fmt),
            sha256=meta["sha256"],
            media_type=meta["media_type"],
            filename=meta["filename"],
        )

    def perform_content_negotiation(self, request, force=False):
        # A file download answers with the file's own type whatever the client accepts.
        files = ("export", "environment_file")
        return super().perform_content_negotiation(request, force=force or self.action in files)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "against", int_schema(), required=True, description="id of the earlier release"
            )
        ],
        responses={200: ReleaseDiffSerializer, 409: _NOT_READY},
    )
    @action(detail=True, methods=["get"])
    def diff(self, request, pk=None):
        """Tasks added, removed and changed since the release `against`."""
        against = int_param(request, "against", required=True)
        new = self._ready(self.get_object())
        old = self._ready(get_release_for_user(request.user, against))
        return Response(release_diff(old=old, new=new))

    @extend_schema(
        parameters=[
            OpenApiParameter("environment", str, OpenApiParameter.PATH, pattern="^[0-9a-f]{32}$"),
            OpenApiParameter("name", str, OpenApiParameter.PATH, enum=list(CONTEXT_FILES)),
        ],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="A file of the image's build context."
            ),
            (409, "application/json"): _NOT_READY,
        },
    )
    @action(
        detail=True,
        methods=["get"],
        pagination_class=None,
        url_path=r"environments/(?P<environment>[^/]+)/(?P<name>[^/]+)",
    )
    def environment_file(self, request, pk=None, environment=None, name=None):
        """A file of an environment image's build context, as the release ships it under
        `environments/<hash>/` (`docker build` takes the folder as it is)."""
        release = self._ready(self.get_object())
        try:
            path, meta = release_environment_file(release, environment, name)
        except KeyError:
            raise NotFound("No such environment file in this release.") from None
        return stored_file_response(
            request,
            path,
            sha256=meta["sha256"],
            media_type="application/octet-stream",
            filename=name,
        )

    def _ready(self, release: Release) -> Release:
        if release.status != Release.Status.READY:
            raise Conflict(f"{release} is {release.status}, not ready.")
        return release


router.register("releases", ReleaseViewSet, basename="release")
