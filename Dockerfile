# Production image: gunicorn + whitenoise for the web, the same image for workers and beat.
# bubblewrap: the process sandbox's jail; gcc and libc6-dev: the sandbox compiles its launcher
# (workers/sandbox/jail_launch.c) once.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    SPECLOOM_ENV=production SPECLOOM_VAR_DIR=/var/lib/specloom \
    SPECLOOM_SANDBOX_PYTHON=/usr/local/bin/python3
RUN apt-get update \
    && apt-get install -y --no-install-recommends git util-linux iproute2 bubblewrap gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The project installs no package of its own: this layer holds only the pinned dependencies,
# so it is rebuilt only when pyproject.toml changes.
COPY pyproject.toml ./
RUN pip install --no-cache-dir .
COPY . .
RUN SECRET_KEY=build-only-not-secret python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "specloom.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
