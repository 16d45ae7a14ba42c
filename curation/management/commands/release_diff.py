import json

from django.core.management.base import BaseCommand, CommandError

from curation.models import Release
from curation.selectors.releases import ReleaseNotComparable, release_diff


class Command(BaseCommand):
    help = "List the tasks added, removed and changed between two releases of a dataset."

    def add_arguments(self, parser):
        parser.add_argument("dataset", help="dataset name")
        parser.add_argument("old", help="the earlier version")
        parser.add_argument("new", help="the later version")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="print the diff as JSON"
        )

    def handle(self, *args, dataset, old, new, as_json: bool, **options):
        releases = []
        for version in (old, new):
            release = Release.objects.filter(dataset__name=dataset, version=version).first()
            if release is None:
                raise CommandError(f"{dataset} has no release {version!r}")
            releases.append(release)
        try:
            diff = release_diff(old=releases[0], new=releases[1])
        except ReleaseNotComparable as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(json.dumps(diff, indent=2, sort_keys=True))
            return
        self.stdout.write(
            f"{dataset} {old} -> {new}: {len(diff['added'])} added, {len(diff['removed'])} "
            f"removed, {len(diff['changed'])} changed, {diff['unchanged']} unchanged"
        )
        for instance_id in diff["added"]:
            self.stdout.write(f"+ {instance_id}")
        for instance_id in diff["removed"]:
            self.stdout.write(f"- {instance_id}")
        for entry in diff["changed"]:
            self.stdout.write(
                f"~ {entry['instance_id']} r{entry['from_revision']} -> r{entry['to_revision']}"
            )
