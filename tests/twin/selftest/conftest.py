"""Fixtures shared by the twin's self-tests (a module that needs another set-up defines its own fixture of that name).

- `emu` (module scope): the Kubernetes API emulator (twin.kube) as a subprocess with --no-controllers; SIGTERM must
  stop it cleanly at the end of the module. `emu.startup_seconds` is how long it took to start.
- `api`, `core`, `custom` (module scope): the real `kubernetes` client on the kubeconfig the emulator writes (its admin
  token, its CA verified): ApiClient, CoreV1Api, CustomObjectsApi.
- `cluster`: a FakeCluster (twin.controllers.testing: 3 masters, 3 workers) whose controllers have settled.
"""

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client, config  # noqa: E402

from twin.controllers.testing import FakeCluster  # noqa: E402
from twin.kube.testing import Emulator  # noqa: E402


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    started = time.monotonic()
    emulator = Emulator(tmp_path_factory.mktemp("kube"), "--no-controllers")
    emulator.startup_seconds = time.monotonic() - started
    yield emulator
    assert emulator.stop() == 0, "SIGTERM must stop the emulator cleanly"


@pytest.fixture(scope="module")
def api(emu):
    return config.new_client_from_config(config_file=emu.kubeconfig)


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture(name="cluster")
def cluster_fixture():
    cluster = FakeCluster()
    cluster.settle()
    return cluster
