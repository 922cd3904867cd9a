"""Helpers shared by the self-tests of the Kubernetes API emulator (their fixtures are in conftest.py)."""

import json
import os
import shutil

import pytest
from kubernetes.client.rest import ApiException

# Debian 12's `kubernetes-client` (1.20) as scripts/bootstrap.sh installs it, any `kubectl` on PATH, or TWIN_KUBECTL.
KUBECTL = os.environ.get("TWIN_KUBECTL") or shutil.which("kubectl")
NO_KUBECTL = "kubectl is not installed (scripts/bootstrap.sh installs Debian's kubernetes-client)"


def failure(call, *args, **kwargs):
    """(HTTP status, parsed Status body) of a call that must fail."""
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    return info.value.status, json.loads(info.value.body)
