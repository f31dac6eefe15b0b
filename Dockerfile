# syntax=docker/dockerfile:1
# vscheduler's image: `docker build -t vscheduler:0.1.0 .` (docs/install.md).
#
# builder: every pinned runtime dependency (deploy/image/requirements.txt, hash-checked, binary
#          wheels only, so no compiler is needed) and vscheduler itself, as wheels.
# final:   a venv at /opt/vscheduler with exactly those wheels, installed from the builder's
#          /wheels through a bind mount (the wheels never land in a layer); no pip, no caches,
#          no build tools; user 65532:65532; nothing written at run time, so the pod runs with
#          a read-only root filesystem. The steps are deploy/image/install.sh, which
#          integration/test_deploy.py runs for real.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
WORKDIR /src
COPY pyproject.toml README.md ./
COPY vscheduler ./vscheduler
COPY deploy/image ./deploy/image
RUN sh deploy/image/install.sh wheels /src /wheels

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="vscheduler" \
      org.opencontainers.image.description="A Volcano-compatible batch scheduler for Kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    --mount=type=bind,source=deploy/image/install.sh,target=/usr/local/lib/vscheduler-install.sh \
    sh /usr/local/lib/vscheduler-install.sh install /wheels /opt/vscheduler \
    && python -m pip uninstall --yes --no-cache-dir --disable-pip-version-check pip setuptools wheel \
    && groupadd --system --gid 65532 vscheduler \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin vscheduler
# Bytecode was compiled at install time; nothing is written at run time.
ENV PATH=/opt/vscheduler/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
WORKDIR /
EXPOSE 8080
ENTRYPOINT ["vscheduler", "run"]
