"""core/v1 Events as client-go's record.EventRecorder writes them.

ovn-kubernetes records EgressIP events with `util.EventRecorder` (source component
"controlplane") against an ObjectReference holding only Kind and Name; a cluster-scoped
object's events land in namespace `default`. client-go's EventCorrelator folds an identical
event (same source, involved object, type, reason and message) into the existing one by
raising `count` and `lastTimestamp` instead of creating a new object.
"""

import time

NAMESPACE = "default"
COMPONENT = "controlplane"


class EventRecorder:
    """Collects events during a round, then writes them (creating or counting up)."""

    def __init__(self, component=COMPONENT):
        self.component = component
        self.pending = []

    def warning(self, kind, name, reason, message):
        self.pending.append((kind, name, reason, message))

    def flush(self, ctx):
        pending, self.pending = self.pending, []
        if not pending:
            return
        existing = ctx.store.list("events", namespace=NAMESPACE)
        for kind, name, reason, message in pending:
            match = next((e for e in existing if self._same(e, kind, name, reason, message)), None)
            if match is None:
                created = ctx.writer.create("events", self._event(kind, name, reason, message, ctx.timestamp))
                if created is not None:
                    existing.append(created)
            else:
                updated = ctx.writer.patch("events", match, {"count": (match.get("count") or 1) + 1,
                                                             "lastTimestamp": ctx.timestamp})
                if updated is not None:
                    existing[existing.index(match)] = updated

    def _same(self, event, kind, name, reason, message):
        involved = event.get("involvedObject") or {}
        return (involved.get("kind"), involved.get("name"), event.get("reason"), event.get("message"),
                event.get("type"), (event.get("source") or {}).get("component")) == \
            (kind, name, reason, message, "Warning", self.component)

    def _event(self, kind, name, reason, message, timestamp):
        return {
            "apiVersion": "v1", "kind": "Event",
            # client-go names events <object name>.<unix nanoseconds in hex>
            "metadata": {"name": "%s.%x" % (name, time.time_ns()), "namespace": NAMESPACE},
            "involvedObject": {"kind": kind, "name": name},
            "reason": reason, "message": message, "type": "Warning",
            "source": {"component": self.component},
            "firstTimestamp": timestamp, "lastTimestamp": timestamp, "count": 1,
            "reportingComponent": self.component, "reportingInstance": "",
        }
