"""Writes through the in-process store, counting only writes that changed something.

A round that changes nothing must write nothing (no resourceVersion churn); the count lets
`Runner.settle()` tell when the simulated cluster has converged. Conflicts and vanished
objects are not errors for a controller: the next round reads again and retries.
"""

import logging

from twin.kube.errors import ApiError

LOG = logging.getLogger(__name__)
RETRIED = (404, 409)


def _version(obj):
    return ((obj or {}).get("metadata") or {}).get("resourceVersion")


def create_with_status(store, resource, obj):
    """Create, then write status through the status subresource when the create dropped it.

    The apiserver drops status on create for custom resources with a status subresource
    (customresource strategy PrepareForCreate), so a controller writes it in a second call.
    """
    created = store.create(resource, obj)
    if "status" in obj and created.get("status") != obj["status"]:
        created["status"] = obj["status"]
        created = store.update(resource, created, subresource="status")
    return created


class Writer:
    """Store writes of one reconcile round."""

    def __init__(self, store):
        self.store = store
        self.changes = 0

    def _count(self, before, after):
        if after is not None and _version(after) != before:
            self.changes += 1
        return after

    def _guard(self, action, *args, **kwargs):
        try:
            return action(*args, **kwargs)
        except ApiError as error:
            if error.code not in RETRIED:
                raise
            LOG.debug("write retried next round: %s", error.message)
            return None

    def create(self, resource, obj):
        return self._count(None, self._guard(create_with_status, self.store, resource, obj))

    def update_status(self, resource, obj):
        """Replace status through the status subresource (resourceVersion checked)."""
        return self._count(_version(obj), self._guard(self.store.update, resource, obj, subresource="status"))

    def patch(self, resource, current, patch, subresource=None, patch_type="merge"):
        """Merge patch (or `patch_type` "json": a JSON patch) of `current` (the object as read this round)."""
        meta = current["metadata"]
        result = self._guard(self.store.patch, resource, meta["name"], patch, patch_type=patch_type,
                             namespace=meta.get("namespace"), subresource=subresource)
        return self._count(_version(current), result)

    def delete(self, resource, name, namespace=None):
        result = self._guard(self.store.delete, resource, name, namespace=namespace)
        if result is not None:
            self.changes += 1
        return result
