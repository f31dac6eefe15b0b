"""KubeWriter removes ConfigMap keys with a precondition-free JSON merge patch."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vscheduler.clock import FixedClock
from vscheduler.effects.ports import ConfigMapWriter
from vscheduler.errors import NotFoundError
from vscheduler.kube.client import KubeApi
from vscheduler.kube.writers import KubeWriter

if TYPE_CHECKING:
    from conftest import FakeApiServer

CONFIG_MAP = "/api/v1/namespaces/kube-system/configmaps/vscheduler-reservations"


@pytest.fixture
def writer(api: KubeApi, clock: FixedClock) -> KubeWriter:
    return KubeWriter(api, clock=clock, component="vscheduler", instance="vscheduler-0")


def test_kube_writer_is_a_config_map_writer(writer: KubeWriter) -> None:
    port: ConfigMapWriter = writer
    assert port is writer


@pytest.mark.timeout(10)
def test_removing_keys_merge_patches_them_to_null(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    apiserver.reply("PATCH", CONFIG_MAP, 200, {"kind": "ConfigMap"})
    writer.remove_config_map_keys("kube-system", "vscheduler-reservations", ["train-0", "b"])
    (request,) = apiserver.requests()
    assert request.method == "PATCH"
    assert request.path == CONFIG_MAP
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert request.body == {"data": {"train-0": None, "b": None}}


@pytest.mark.timeout(10)
def test_removing_keys_of_a_missing_config_map_raises_not_found(
    apiserver: FakeApiServer, writer: KubeWriter
) -> None:
    with pytest.raises(NotFoundError):
        writer.remove_config_map_keys("kube-system", "vscheduler-reservations", ["a"])
