from django.core.management.base import BaseCommand, CommandError

from curation.services.repositories import RepositoryImportError, repository_import


class Command(BaseCommand):
    help = "Import a repository from a git URL, a local folder or git repository, or an archive."

    def add_arguments(self, parser):
        parser.add_argument("source", help="git URL, local path, or .tar.gz/.tgz/.tar/.zip file")
        parser.add_argument("--name", help="name for the repository (default: from the source)")
        parser.add_argument("--commit", help="commit to use as default (default: HEAD)")
        parser.add_argument("--setup", dest="setup_command", help="environment setup command")

    def handle(self, *args, source, name, commit, setup_command, **options):
        try:
            repo = repository_import(
                source=source, name=name, commit=commit, setup_command=setup_command
            )
        except RepositoryImportError as exc:
            raise CommandError(str(exc)) from None
        layout = repo.layout
        self.stdout.write(
            self.style.SUCCESS(f"Imported {repo.name} at {repo.default_commit[:12]}")
            + f" ({repo.source_kind}; packages: {', '.join(layout.get('packages', [])) or '-'}; "
            f"src layout: {'yes' if layout.get('src_layout') else 'no'}; "
            f"tests: {layout.get('test_files', 0)} files in "
            f"{', '.join(layout.get('test_dirs', [])) or '-'}; "
            f"framework: {layout.get('test_framework')})"
        )
