"""Images that run netdojo itself (its agents), built on the device image without a registry.

Every agent image runs the same environment, so it is built once per netdojo in a runtime
image: its build context holds a wheelhouse made here (`netdojo.labs.image.wheelhouse`); a
first stage installs it with ``--no-index`` into a virtual environment, using pip run from its
own wheel (Debian's python3 has neither pip nor ensurepip), and the runtime copies only that
environment onto the device image, with Debian's curl from the machine's mirror (runners'
health checks call it). Each agent's image adds only its entry point, port and health check
to the runtime. Images are tagged with netdojo's version and a hash of everything they are
made of (the device image, netdojo's files, the pinned dependencies, the recipe), so each is
built once and found afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from docker.errors import APIError, ImageNotFound
from pydantic import BaseModel

from netdojo import __version__
from netdojo.labs.engine import client
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.image.recipe import PATH_ENV, device_image
from netdojo.labs.image.wheelhouse import Source, constraints, digest, make_wheelhouse, source
from netdojo.labs.paths import sub_dir

RECIPE_VERSION = "1"
REPOSITORY_PREFIX = "netdojo/"
RUNTIME_REPOSITORY = f"{REPOSITORY_PREFIX}agent-runtime"
VENV = "/opt/netdojo"
VENV_BIN = f"{VENV}/bin"
IMAGE_LABEL = "netdojo.image"
STAGE_LABEL = "netdojo.build-stage"
BUILD_TIMEOUT_S = 1800
LOG_TAIL = 40
BUILT = "Successfully built "

Progress = Callable[[str], None]


class AgentImage(BaseModel):
    """What an image runs: ``entrypoint`` takes ``--host``, ``--port`` and ``--card-url``."""

    name: str
    """The repository is ``netdojo/<name>``."""
    entrypoint: list[str]
    port: int
    healthcheck: list[str]

    @property
    def repository(self) -> str:
        return f"{REPOSITORY_PREFIX}{self.name}"


class ImageBuild(BaseModel):
    tag: str
    image_id: str
    action: Literal["cached", "built"]
    seconds: float
    size_mb: float
    wheels: int = 0
    stages: dict[str, float] = {}
    """Seconds of each stage of a build: the wheelhouse, the engine's build."""


RUNTIME_TEMPLATE = """\
FROM {base} AS install
LABEL {stage_label}={stage}
COPY wheels /wheels
RUN python3 -m venv --without-pip {venv} \\
 && {venv_bin}/python /wheels/{pip_wheel}/pip install --no-index --no-cache-dir --quiet \\
    --disable-pip-version-check --find-links /wheels netdojo=={version}

FROM {base}
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends curl && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY --from=install {venv} {venv}
ENV PATH={venv_bin}:{path}
LABEL netdojo.version={version}
"""

TEMPLATE = """\
FROM {runtime}
LABEL {image_label}={name} netdojo.version={version}
EXPOSE {port}
HEALTHCHECK --interval=5s --timeout=5s --start-period=30s --retries=3 CMD {healthcheck}
ENTRYPOINT {entrypoint}
CMD ["--host", "0.0.0.0", "--port", "{port}"]
"""


def runtime_dockerfile(base: str, pip_wheel: str, stage: str) -> str:
    return RUNTIME_TEMPLATE.format(
        base=base,
        stage_label=STAGE_LABEL,
        stage=stage,
        venv=VENV,
        venv_bin=VENV_BIN,
        pip_wheel=pip_wheel,
        version=__version__,
        path=PATH_ENV,
    )


def dockerfile(spec: AgentImage, runtime: str) -> str:
    return TEMPLATE.format(
        runtime=runtime,
        image_label=IMAGE_LABEL,
        name=spec.name,
        version=__version__,
        port=spec.port,
        healthcheck=json.dumps(spec.healthcheck),
        entrypoint=json.dumps(spec.entrypoint),
    )


def runtime_tag(base_id: str, wheel_digest: str) -> str:
    """``netdojo/agent-runtime:<version>-<hash>``: the hash of the recipe, the device image
    and the wheelhouse's makings."""
    made_of = [RECIPE_VERSION, RUNTIME_TEMPLATE, base_id, wheel_digest]
    hashed = hashlib.sha256("\0".join(made_of).encode())
    return f"{RUNTIME_REPOSITORY}:{__version__}-{hashed.hexdigest()[:12]}"


def image_tag(spec: AgentImage, base_id: str, wheel_digest: str) -> str:
    """``netdojo/<name>:<version>-<hash>``: the hash of the recipe, the spec and the runtime
    it is made on."""
    made_of = [RECIPE_VERSION, TEMPLATE, spec.model_dump_json(), runtime_tag(base_id, wheel_digest)]
    hashed = hashlib.sha256("\0".join(made_of).encode())
    return f"{spec.repository}:{__version__}-{hashed.hexdigest()[:12]}"


def _base() -> tuple[str, str]:
    """The device image's tag and id; `PrerequisiteError` when it is not built."""
    base = device_image()
    try:
        return base, str(client(timeout=30).images.get(base).id)
    except ImageNotFound:
        raise PrerequisiteError(
            f"the device image {base} is not built: run `netdojo setup`"
        ) from None


def agent_image_tag(spec: AgentImage) -> str:
    """The tag the image of ``spec`` has once built from this netdojo."""
    _, base_id = _base()
    return image_tag(spec, base_id, digest(source(), constraints()))


def build_agent_image(
    spec: AgentImage, progress: Progress = lambda _msg: None, rebuild: bool = False
) -> ImageBuild:
    """The image of ``spec``: found when built before (unless ``rebuild``), else built on the
    runtime of this netdojo, which is built first when missing (or ``rebuild``)."""
    started = time.monotonic()
    base, base_id = _base()
    found, pins = source(), constraints()
    wheel_digest = digest(found, pins)
    tag = image_tag(spec, base_id, wheel_digest)
    earlier = _image_id(tag)
    if earlier is not None and not rebuild:
        return _report(tag, "cached", started)
    runtime = runtime_tag(base_id, wheel_digest)
    wheels, stages = 0, dict[str, float]()
    if rebuild or _image_id(runtime) is None:
        wheels, stages = _build_runtime(runtime, base, found, pins, progress, rebuild)
    work = Path(tempfile.mkdtemp(prefix="agent-image-", dir=sub_dir("build")))
    try:
        (work / "Dockerfile").write_text(dockerfile(spec, runtime))
        progress(f"docker build {tag}")
        building = time.monotonic()
        image_id = _docker_build(work, tag, progress, fresh=False)
        stages["image_s"] = round(time.monotonic() - building, 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _retag(tag, image_id, earlier)
    return _report(tag, "built", started, wheels=wheels, stages=stages)


def _build_runtime(
    tag: str, base: str, found: Source, pins: str, progress: Progress, fresh: bool
) -> tuple[int, dict[str, float]]:
    """Build the runtime ``tag``: the number of wheels installed and the seconds of each stage
    (the wheelhouse, the engine's build)."""
    earlier = _image_id(tag)
    work = Path(tempfile.mkdtemp(prefix="agent-runtime-", dir=sub_dir("build")))
    try:
        progress(f"wheelhouse of {found.target}")
        making = time.monotonic()
        wheels = make_wheelhouse(work / "context" / "wheels", found, pins, progress)
        stages = {"wheelhouse_s": round(time.monotonic() - making, 2)}
        pip_wheel = next((w.name for w in wheels if w.name.startswith("pip-")), None)
        if pip_wheel is None:
            raise PrerequisiteError("the wheelhouse holds no wheel of pip")
        stage = secrets.token_hex(8)
        (work / "context" / "Dockerfile").write_text(runtime_dockerfile(base, pip_wheel, stage))
        progress(f"docker build {tag}")
        building = time.monotonic()
        try:
            image_id = _docker_build(work / "context", tag, progress, fresh=fresh)
        finally:
            _remove_stage(stage)
        stages["docker_build_s"] = round(time.monotonic() - building, 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _retag(tag, image_id, earlier)
    return len(wheels), stages


def _retag(tag: str, image_id: str, earlier: str | None) -> None:
    """Give the image built as ``tag`` the version and `latest` tags too, and remove the one
    that had ``tag`` before it, if any, once nothing else is built on it."""
    images = client(timeout=60).images
    repository = tag.partition(":")[0]
    image = images.get(image_id)
    for alias in (__version__, "latest"):
        image.tag(repository, alias)
    if earlier is not None and earlier != image_id:
        with contextlib.suppress(APIError):
            images.remove(earlier)


def _image_id(tag: str) -> str | None:
    try:
        return str(client(timeout=30).images.get(tag).id)
    except ImageNotFound:
        return None


def _report(
    tag: str,
    action: Literal["cached", "built"],
    started: float,
    wheels: int = 0,
    stages: dict[str, float] | None = None,
) -> ImageBuild:
    image = client(timeout=30).images.get(tag)
    return ImageBuild(
        tag=tag,
        image_id=str(image.id),
        action=action,
        seconds=round(time.monotonic() - started, 2),
        size_mb=round(int(image.attrs.get("Size", 0)) / 1e6, 1),
        wheels=wheels,
        stages=stages or {},
    )


def _docker_build(context: Path, tag: str, progress: Progress, fresh: bool) -> str:
    """Build ``context`` with the engine's own builder (no registry is asked: the base is
    local), reusing no earlier layer when ``fresh``; the id of the image, or
    `PrerequisiteError` with the log's tail."""
    api = client(timeout=BUILD_TIMEOUT_S).api
    log: list[str] = []
    image_id = None
    for chunk in api.build(
        path=str(context), tag=tag, rm=True, forcerm=True, pull=False, nocache=fresh, decode=True
    ):
        if "error" in chunk:
            tail = "".join(log[-LOG_TAIL:])
            raise PrerequisiteError(f"docker build of {tag} failed: {chunk['error']}\n{tail}")
        text = str(chunk.get("stream") or "")
        if text:
            log.append(text)
            if text.strip():
                progress(f"build: {text.strip()}")
        aux = chunk.get("aux")
        if isinstance(aux, dict) and aux.get("ID"):
            image_id = str(aux["ID"])
        elif text.startswith(BUILT):
            image_id = image_id or text[len(BUILT) :].strip()
    if image_id is None:
        raise PrerequisiteError(f"docker build of {tag} made no image:\n{''.join(log[-LOG_TAIL:])}")
    return image_id


def _remove_stage(stage: str) -> None:
    """Remove the install stage's images of one build (they hold the wheelhouse); an image is
    removable once no other is its child, so rounds go until none is left or none goes."""
    api = client(timeout=120).api
    left = [i["Id"] for i in api.images(all=True, filters={"label": f"{STAGE_LABEL}={stage}"})]
    while left:
        removed = []
        for image_id in left:
            with contextlib.suppress(APIError):
                api.remove_image(image_id, noprune=False)
                removed.append(image_id)
        if not removed:
            return
        left = [i for i in left if i not in removed and _exists(api, i)]


def _exists(api: Any, image_id: str) -> bool:
    try:
        api.inspect_image(image_id)
    except ImageNotFound:
        return False
    return True
