"""Raw Kubernetes objects (plain dicts from YAML or JSON) become model facts, exactly.

`pod`, `node`, `podgroup`, `queue` and `misc` convert one object each; `snapshot` turns a
document stream into a `ClusterSnapshot`; `files` reads snapshot files. Every malformed field is
an `InputError` naming the object (`Kind namespace/name`) and the field path.

This package is pure: no I/O except `files` reading the paths it is given, no clock, and no
`kubernetes` import (raw JSON is faster to convert than the client's model classes).
"""
