# syntax=docker/dockerfile:1
# One image for every Accord service: `docker run IMAGE serve NAME --host 0.0.0.0 --port PORT`.
# Build: docker build -t accord:dev .   (see docs/deploy.md)

# Both stages use the same base so the venv's interpreter symlink stays valid after the copy.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- build: resolve exactly what uv.lock says, into /app/.venv --------------------------------
FROM ${PYTHON_IMAGE} AS build

# Same uv as the Makefile's, from PyPI (no install script downloaded from elsewhere).
ARG UV_VERSION=0.13.8
RUN pip install --no-cache-dir --disable-pip-version-check "uv==${UV_VERSION}"

# Compile bytecode at build time: the runtime root filesystem is read-only.
# Non-editable installs put the packages themselves in the venv, so the runtime stage needs no
# source tree.
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv \
    UV_NO_EDITABLE=1

WORKDIR /src

# Third-party dependencies first: this layer is rebuilt only when the lock changes.
COPY pyproject.toml uv.lock ./
COPY contracts/pyproject.toml contracts/pyproject.toml
COPY contracts/refund/pyproject.toml contracts/refund/pyproject.toml
COPY protocol/pyproject.toml protocol/pyproject.toml
COPY protocol/kit/pyproject.toml protocol/kit/pyproject.toml
COPY protocol/runtime/pyproject.toml protocol/runtime/pyproject.toml
COPY protocol/cli/pyproject.toml protocol/cli/pyproject.toml
COPY tools/pyproject.toml tools/pyproject.toml
COPY agents/pyproject.toml agents/pyproject.toml
RUN uv sync --frozen --all-packages --no-dev --no-install-workspace

# Then the workspace members (contracts/ holds accord-refund-contracts' folder, refund/;
# protocol/ holds accord-kit's, kit/, accord-runtime's, runtime/, and accord-cli's, cli/).
COPY contracts/ contracts/
COPY protocol/ protocol/
COPY tools/ tools/
COPY agents/ agents/
RUN uv sync --frozen --all-packages --no-dev

# ---- runtime: the venv and a non-root user, nothing else ------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

LABEL org.opencontainers.image.title="accord" \
      org.opencontainers.image.description="Accord agent mesh: A2A agents and MCP tool servers"

# A fixed numeric uid/gid so Kubernetes can check runAsNonRoot without resolving names.
RUN groupadd --system --gid 10001 accord \
    && useradd --system --uid 10001 --gid accord --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin accord \
    && mkdir -p /data \
    && chown accord:accord /data \
    && chmod 0700 /data

COPY --from=build /app/.venv /app/.venv

# ACCORD_DATA_DIR holds SQLite files and the development JWT secret when no database or secret
# is configured; mount a volume (or an emptyDir) there. ACCORD_HEALTHCHECK_URL lets one image
# check whichever service it runs: set it next to --port.
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ACCORD_DATA_DIR=/data \
    ACCORD_HEALTHCHECK_URL=http://127.0.0.1:8700/healthz

USER 10001:10001
WORKDIR /data
EXPOSE 8700 8701 8702 8710 8711

# The slim image has no curl: probe /healthz with the interpreter we ship anyway.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ['ACCORD_HEALTHCHECK_URL'], timeout=2)"]

ENTRYPOINT ["accord"]
CMD ["serve", "orchestrator", "--host", "0.0.0.0"]
