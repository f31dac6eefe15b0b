"""The scheduler policy: Volcano's `volcano-scheduler.conf` parsed into frozen values.

`schema` holds the shapes (Policy, Tier, PluginOption, ...) and the keys Volcano accepts; `parse`
turns YAML text into a Policy, collecting every error; `yaml_text` loads YAML as Volcano's YAML
library types it; `arguments` reads a plugin's or an action's `arguments` with types, collecting
every problem; `default` is the built-in policy; `suggest` words the "did you mean" hints. Nothing
here does I/O or knows which plugins exist: callers pass the registries' names in.
"""
