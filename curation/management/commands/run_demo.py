"""Run the web server, a Celery worker and Celery beat together until Ctrl-C stops them all."""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run web server + worker + beat on the current settings (the embedded default)."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("SPECLOOM_PORT", 8000)))
        parser.add_argument("--concurrency", type=int, default=2)

    def handle(self, *args, port, concurrency, **options):
        # DEBUG is off by default, and then runserver serves no static files: WhiteNoise does,
        # from STATIC_ROOT, so the files are collected there first.
        call_command("collectstatic", interactive=False, verbosity=0)
        if settings.DEBUG:
            self.stdout.write(self.style.WARNING("DEBUG is on (SPECLOOM_DEBUG): not for real use"))
        python = sys.executable
        commands = {
            "web": [python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            "worker": [
                python,
                "-m",
                "celery",
                "-A",
                "specloom",
                "worker",
                "-Q",
                "default,sandbox,synthesis",
                "-c",
                str(concurrency),
                "-l",
                "INFO",
            ],
            "beat": [python, "-m", "celery", "-A", "specloom", "beat", "-l", "INFO"],
        }
        processes = {name: subprocess.Popen(cmd) for name, cmd in commands.items()}
        self.stdout.write(self.style.SUCCESS(f"Specloom is running at http://127.0.0.1:{port}/"))
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        while not stopping:
            for name, process in processes.items():
                if process.poll() is not None:
                    self.stderr.write(f"{name} exited with {process.returncode}; stopping the rest")
                    exit_code = process.returncode or 1
                    stopping = True
            time.sleep(0.5)
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 15
        for process in processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
        sys.exit(exit_code)
