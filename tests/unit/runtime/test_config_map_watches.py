"""The ConfigMaps the policy's plugins read are watched, and only while the policy reads them."""

from __future__ import annotations

from vscheduler import catalog
from vscheduler.informer.kinds import Kind, config_map
from vscheduler.runtime.watches import ConfigMapWatches, config_maps_read

RESERVATION = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: reservation\n'
ELSEWHERE = (
    RESERVATION + "    arguments:\n      configMapNamespace: team\n      configMapName: holds\n"
)
DEFAULT = catalog.load_pipeline(None)


class FakeInformer:
    def __init__(self, kind: Kind, log: list[str]) -> None:
        self.kind, self.log = kind, log
        log.append(f"start {kind.namespace} {kind.field_selector}")

    def stop(self, timeout: float = 1.0) -> bool:
        self.log.append(f"stop {self.kind.namespace} {self.kind.field_selector}")
        return True


def watches(log: list[str]) -> ConfigMapWatches:
    return ConfigMapWatches(
        start=lambda kind: FakeInformer(kind, log),
        forget=lambda kind: log.append(f"forget {kind.namespace} {kind.field_selector}"),
    )


def test_a_policy_reads_the_config_maps_its_plugins_name() -> None:
    assert config_maps_read(DEFAULT) == ()
    assert config_maps_read(catalog.load_pipeline(RESERVATION)) == (
        ("kube-system", "vscheduler-reservations"),
    )


def test_nothing_is_watched_before_start_and_the_policy_in_force_after() -> None:
    log: list[str] = []
    w = watches(log)
    w.follow(catalog.load_pipeline(RESERVATION))

    assert log == []

    w.start()

    assert log == ["start kube-system metadata.name=vscheduler-reservations"]
    assert w.watched == (("kube-system", "vscheduler-reservations"),)


def test_a_new_policy_moves_the_watch_and_forgets_the_old_config_map() -> None:
    log: list[str] = []
    w = watches(log)
    w.start()
    w.follow(catalog.load_pipeline(RESERVATION))
    w.follow(catalog.load_pipeline(ELSEWHERE))
    w.follow(catalog.load_pipeline(ELSEWHERE))
    w.follow(DEFAULT)

    assert log == [
        "start kube-system metadata.name=vscheduler-reservations",
        "stop kube-system metadata.name=vscheduler-reservations",
        "forget kube-system metadata.name=vscheduler-reservations",
        "start team metadata.name=holds",
        "stop team metadata.name=holds",
        "forget team metadata.name=holds",
    ]


def test_stop_ends_every_watch() -> None:
    log: list[str] = []
    w = watches(log)
    w.follow(catalog.load_pipeline(ELSEWHERE))
    w.start()
    w.stop()
    w.follow(catalog.load_pipeline(RESERVATION))

    assert log == ["start team metadata.name=holds", "stop team metadata.name=holds"]


def test_the_watch_is_of_one_config_map_by_name_in_its_namespace() -> None:
    assert config_map("team", "holds") == Kind(
        "ConfigMap", "", "v1", "configmaps", namespaced=True, namespace="team",
        field_selector="metadata.name=holds",
    )  # fmt: skip
