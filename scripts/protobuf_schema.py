"""Write `vscheduler/kube/podschema.py`: the Pod's protobuf messages as the decoder reads them.

    python scripts/protobuf_schema.py [GOMODCACHE] > vscheduler/kube/podschema.py

Reads k8s.io/api and k8s.io/apimachinery (the version `VERSION` names) from the Go module cache
(`go env GOMODCACHE`, or the argument): each message's fields from `generated.proto` (number,
type, repeated or map) joined by field number with its Go struct's field in `types.go` (JSON
name, `omitempty`, pointer or not, `inline`), so a decoded Pod has the keys its JSON form has.
Only the messages a Pod reaches are written. Run again when `VERSION` moves; the output is
checked in (the scheduler never needs the Go sources).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Final

VERSION = "v0.34.10"
ROOT = "k8s.io.api.core.v1.Pod"
PACKAGES = {
    "k8s.io.api.core.v1": ("api", "core/v1", ["types.go"]),
    "k8s.io.apimachinery.pkg.apis.meta.v1": ("apimachinery", "pkg/apis/meta/v1", ["types.go"]),
    "k8s.io.apimachinery.pkg.api.resource": ("apimachinery", "pkg/api/resource", []),
    "k8s.io.apimachinery.pkg.util.intstr": ("apimachinery", "pkg/util/intstr", []),
    "k8s.io.apimachinery.pkg.runtime": ("apimachinery", "pkg/runtime", []),
}
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "TIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "MICROTIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "DURATION",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "FIELDSV1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "QUANTITY",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "INTORSTRING",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "RAWEXTENSION",
}
SCALARS = {
    "string": "STRING",
    "bytes": "BYTES",
    "bool": "BOOL",
    "int32": "INT",
    "int64": "INT",
    "double": "DOUBLE",
}
SKIPPED = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta": ("managedFields",),
    "k8s.io.api.core.v1.PodSpec": (
        "hostname",
        "subdomain",
        "ephemeralContainers",
        "serviceAccountName",
        "serviceAccount",
    ),
    "k8s.io.api.core.v1.Container": (
        "env",
        "envFrom",
        "volumeMounts",
        "volumeDevices",
        "command",
        "args",
        "workingDir",
    ),
    "k8s.io.api.core.v1.VolumeSource": (
        "hostPath",
        "emptyDir",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "gitRepo",
        "secret",
        "nfs",
        "iscsi",
        "glusterfs",
        "rbd",
        "flexVolume",
        "cinder",
        "cephfs",
        "flocker",
        "downwardAPI",
        "fc",
        "azureFile",
        "configMap",
        "vsphereVolume",
        "quobyte",
        "azureDisk",
        "photonPersistentDisk",
        "projected",
        "portworxVolume",
        "scaleIO",
        "storageos",
        "csi",
        "image",
    ),
    "k8s.io.api.core.v1.EphemeralVolumeSource": ("volumeClaimTemplate",),
    "k8s.io.api.core.v1.PodStatus": (
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
        "hostIP",
        "hostIPs",
        "podIP",
        "podIPs",
    ),
}
"""Fields no fact reads, left out of the decoded pod (`podschema.SKIPPED` says which):
`managedFields` (the cache drops them), the spec's and containers' fields
`convert.pod._UNREAD_SPEC` and `_UNREAD_CONTAINER` name (but `nodeName`), every volume source
but a claim's and an ephemeral volume's (`TaskFacts.claims`), and the status's
per-container statuses and addresses. They are most of a running pod's bytes."""

_MESSAGE = re.compile(r"^message (\w+) \{$")
_FIELD = re.compile(r"^\s+(optional|repeated) ([\w.]+) (\w+) = (\d+);")
_MAP = re.compile(r"^\s+map<(\w+), ([\w.]+)> (\w+) = (\d+);")
_STRUCT = re.compile(r"^type (\w+) struct \{$")
_GOFIELD = re.compile(r"^\t(?:(\w+)\s+)?([^\s`]+)\s+`([^`]*)`")


def _proto(path: Path, package: str) -> dict[str, dict[int, tuple[str, str, str]]]:
    """message -> number -> (label, type, name); label is optional, repeated or map (type
    then "key,value")."""
    out: dict[str, dict[int, tuple[str, str, str]]] = {}
    current: dict[int, tuple[str, str, str]] | None = None
    for line in path.read_text().splitlines():
        if m := _MESSAGE.match(line):
            current = out.setdefault(f"{package}.{m[1]}", {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _FIELD.match(line)):
            current[int(m[4])] = (m[1], _qualified(m[2], package), m[3])
        elif current is not None and (m := _MAP.match(line)):
            current[int(m[4])] = ("map", f"{m[1]},{_qualified(m[2], package)}", m[3])
    return out


def _qualified(type_: str, package: str) -> str:
    if type_.startswith("."):
        return type_[1:]
    return type_ if type_ in SCALARS else f"{package}.{type_}"


def _go(path: Path, package: str) -> dict[str, dict[int, tuple[str, bool, bool, bool]]]:
    """struct -> protobuf number -> (json name, omitempty, pointer, inline)."""
    out: dict[str, dict[int, tuple[str, bool, bool, bool]]] = {}
    current: dict[int, tuple[str, bool, bool, bool]] | None = None
    for line in path.read_text().splitlines():
        if m := _STRUCT.match(line):
            current = out.setdefault(f"{package}.{m[1]}", {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _GOFIELD.match(line)):
            tags = dict(re.findall(r'(\w+):"([^"]*)"', m[3]))
            proto = tags.get("protobuf", "")
            if not proto or proto == "-":
                continue
            number = int(proto.split(",")[1])
            json_name, *options = tags.get("json", "").split(",")
            current[number] = (
                json_name,
                "omitempty" in options,
                m[2].startswith("*"),
                "inline" in options,
            )
    return out


def main() -> None:
    cache = Path(
        sys.argv[1]
        if len(sys.argv) > 1
        else subprocess.check_output(["go", "env", "GOMODCACHE"], text=True).strip()
    )
    proto: dict[str, dict[int, tuple[str, str, str]]] = {}
    go: dict[str, dict[int, tuple[str, bool, bool, bool]]] = {}
    for package, (module, sub, gofiles) in PACKAGES.items():
        base = cache / "k8s.io" / f"{module}@{VERSION}" / sub
        proto.update(_proto(base / "generated.proto", package))
        for name in gofiles:
            go.update(_go(base / name, package))
    lines = [_HEADER.format(version=VERSION, script=Path(__file__).name)]
    lines.append("MESSAGES: Final[dict[str, dict[int, Field]]] = {")
    for name in sorted(_reachable(proto)):
        lines.append(f'    "{_short(name)}": {{')
        lines.extend(_rows(name, proto[name], go.get(name, {})))
        lines.append("    },")
    lines.append("}")
    lines.append("SKIPPED: Final[dict[str, tuple[str, ...]]] = {")
    lines.extend(f'    "{_short(name)}": {keys!r},' for name, keys in sorted(SKIPPED.items()))
    lines.append("}")
    lines.append('"""The fields left out of each message (never read by a fact of a pod)."""')
    sys.stdout.write("\n".join(lines) + "\n")


def _reachable(proto: dict[str, dict[int, tuple[str, str, str]]]) -> list[str]:
    """The messages a Pod reaches through the fields not skipped."""
    seen: list[str] = []
    todo = [ROOT]
    while todo:
        name = todo.pop()
        if name in seen or name in SPECIAL:
            continue
        seen.append(name)
        for label, type_, field in proto[name].values():
            if field in SKIPPED.get(name, ()):
                continue
            for t in type_.split(",") if label == "map" else [type_]:
                if t not in SCALARS and t not in SPECIAL:
                    todo.append(t)
    return seen


def _rows(
    name: str,
    fields: dict[int, tuple[str, str, str]],
    go: dict[int, tuple[str, bool, bool, bool]],
) -> list[str]:
    """One message's fields as table rows (skipped ones left out)."""
    rows = []
    for number, (label, type_, proto_name) in sorted(fields.items()):
        json_name, omitempty, pointer, inline = go.get(number, (proto_name, False, True, False))
        if json_name in SKIPPED.get(name, ()):
            continue
        flags = []
        if label == "repeated":
            flags.append("REPEATED")
        if inline:
            flags.append("INLINE")
        if omitempty and not pointer and label == "optional" and type_ in SCALARS:
            flags.append("OMIT_ZERO")
        if label == "map":
            key, value = type_.split(",")
            kind, sub = "MAP", f"{SCALARS[key]},{_kind(value)[0]},{_kind(value)[1]}"
        else:
            kind, sub = _kind(type_)
        rows.append(
            f'        {number}: ("{json_name}", {kind}, "{sub}", {" | ".join(flags) or "0"}),'
        )
    return rows


READ: Final = ("STRING", "BOOL", "INT", "TIME", "MICROTIME", "QUANTITY", "INTORSTRING")
"""The kinds `kube.protodecode` reads; a pod field of another (bytes, double, Duration,
FieldsV1, RawExtension: none in v1 Pods but in skipped fields) stops the generator."""


def _kind(type_: str) -> tuple[str, str]:
    kind = SCALARS.get(type_) or SPECIAL.get(type_) or "MESSAGE"
    if kind != "MESSAGE" and kind not in READ:
        raise SystemExit(f"{type_}: a kind kube.protodecode does not read; add a reader first")
    return kind, "" if kind != "MESSAGE" else _short(type_)


def _short(name: str) -> str:
    return name.removeprefix("k8s.io.api.").removeprefix("k8s.io.apimachinery.pkg.apis.")


_HEADER = '''"""Generated by scripts/{script} (k8s.io/api, apimachinery {version}): do not edit.

A Pod's protobuf messages, for `kube.protodecode`: message -> field number -> (JSON key, kind,
message or map types, flags). Flags: REPEATED; INLINE (the message's keys go into its parent's,
as JSON inlines an embedded struct); OMIT_ZERO (a non-pointer `omitempty` field, left out of
JSON when "", 0 or false, always written in protobuf). The fields `SKIPPED` names are left
out: no fact of a pod reads them.
"""

from __future__ import annotations

from typing import Final

Field = tuple[str, int, str, int]

STRING: Final = 1
BOOL: Final = 3
INT: Final = 4
MESSAGE: Final = 6
MAP: Final = 7
TIME: Final = 8
MICROTIME: Final = 9
QUANTITY: Final = 12
INTORSTRING: Final = 13

REPEATED: Final = 1
INLINE: Final = 2
OMIT_ZERO: Final = 4
'''

if __name__ == "__main__":
    main()
