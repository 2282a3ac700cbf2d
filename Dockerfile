# The webhook's image, ghcr.io/draguard/draguard:<version> (deploy/helm/draguard's `image`,
# `draguard webhook manifests --image`; a unit test holds the tag, the UID and the entrypoint in
# step with them). Two stages: the first builds the wheel and installs it with the webhook's
# extras into a virtual environment; the runtime copies only that environment, runs as a fixed
# non-root user (65532, distroless's `nonroot`) and needs no shell: the entrypoint is exec form.
#   docker build -t ghcr.io/draguard/draguard:0.1.0 .
ARG PYTHON=python:3.11-slim-bookworm

FROM ${PYTHON} AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
# the virtual environment first, and its pip for everything: the same steps on python:3.11-slim
# and on a Debian base whose own pip refuses to install into the system (PEP 668)
RUN python3 -m venv /opt/draguard \
 && /opt/draguard/bin/pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
 && /opt/draguard/bin/pip install --no-cache-dir --find-links /wheels "draguard[cluster,webhook]"

FROM ${PYTHON}
COPY --from=build /opt/draguard /opt/draguard
ENV PATH=/opt/draguard/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["draguard"]
CMD ["webhook", "--help"]
