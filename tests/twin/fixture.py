"""The `Twin` handle that tests, playbook runs and benchmarks use to talk to a running twin.

It wraps the state files written by `ctl.start` and the twin-only endpoints of both
processes (request logs, fault injection, inventory, reachability, wire).
"""

import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

from twin import ctl


def _call_json(url, method, body, context, headers=None):
    """Send `body` (None: no body) as JSON to a twin-only endpoint; the decoded answer, None when it is empty."""
    request = urllib.request.Request(url, method=method, headers={**(headers or {}), 'Content-Type': 'application/json'},
                                     data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(request, context=context, timeout=30) as response:  # nosec: loopback twin only
        payload = response.read()
    return json.loads(payload) if payload else None


def _log_and_faults(call):
    """The request log and fault methods of one side (its twin-only endpoints /_twin/requests and /_twin/faults, the same
    on both): requests(), reset_requests(), inject_fault(**fault), clear_faults(); `call` names the side's request method."""
    def requests(self):
        return getattr(self, call)('GET', '/_twin/requests')

    def reset_requests(self):
        getattr(self, call)('DELETE', '/_twin/requests')

    def inject_fault(self, **fault):
        return getattr(self, call)('POST', '/_twin/faults', fault)

    def clear_faults(self):
        getattr(self, call)('DELETE', '/_twin/faults')
    return requests, reset_requests, inject_fault, clear_faults


class Twin:
    """A running twin: settings, typed clients, request logs, fault injection."""

    def __init__(self, state_dir):
        self.state_dir = os.path.abspath(state_dir)
        with open(os.path.join(self.state_dir, 'vcsim.json'), encoding='utf-8') as handle:
            self.vcsim_state = json.load(handle)
        with open(os.path.join(self.state_dir, 'kube.json'), encoding='utf-8') as handle:
            self.kube_state = json.load(handle)
        self.env = {key: str(value) for key, value in ctl.environment(self.state_dir, self.vcsim_state, self.kube_state).items()}
        self._vsphere = None

    @classmethod
    def start(cls, state_dir, **options):
        ctl.start(state_dir, **options)
        return cls(state_dir)

    def stop(self):
        if self._vsphere is not None:
            from pyVim.connect import Disconnect  # pylint: disable=import-outside-toplevel
            Disconnect(self._vsphere)
            self._vsphere = None
        ctl.stop(self.state_dir)

    # --- Kubernetes side -------------------------------------------------------------------

    def _kube(self, method, path, body=None):
        return _call_json(self.kube_state['url'] + path, method, body, ssl.create_default_context(cafile=self.kube_state['ca_file']),
                          {'Authorization': 'Bearer %s' % self.kube_state['token']})

    # the emulator's request log {'requests': [...], 'counts': {verb: n}, 'writes': n} and its faults, e.g.
    # inject_kube_fault(verb='patch', path='/nodes/', code=500, count=1)
    kube_requests, reset_kube_requests, inject_kube_fault, clear_kube_faults = _log_and_faults('_kube')

    def set_reachable(self, node, reachable):
        """Make OVN-K's egress IP reachability probe to a node fail or succeed again."""
        return self._kube('POST', '/_twin/nodes/%s' % urllib.parse.quote(node), {'reachable': reachable})

    def set_tuned_failure(self, node, message, applied=True):
        """TuneD on a node fails its next profile application with this stderr line (None: it succeeds again); Applied as given."""
        return self._kube('POST', '/_twin/tuned/%s' % urllib.parse.quote(node), {'fail': message, 'applied': applied})

    def wire(self, namespace, pod):
        """The source address an echo target off the cluster sees for traffic from a pod."""
        return self._kube('GET', '/_twin/wire?%s' % urllib.parse.urlencode({'namespace': namespace, 'pod': pod}))

    def kubeconfig_for(self, path, **subject):
        """A kubeconfig whose token the twin authorizes by RBAC: user=, groups= or serviceaccount='namespace/name'."""
        from twin.kube.testing import write_token_kubeconfig  # pylint: disable=import-outside-toplevel
        return write_token_kubeconfig(path, self.kube_state, self._kube('POST', '/_twin/tokens', subject)['token'])

    def api_client(self):
        from kubernetes import config  # pylint: disable=import-outside-toplevel
        return config.new_client_from_config(config_file=self.kube_state['kubeconfig'])

    def core_v1(self):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        return client.CoreV1Api(self.api_client())

    def custom_objects(self):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        return client.CustomObjectsApi(self.api_client())

    # --- vCenter side ----------------------------------------------------------------------

    def _vcsim(self, method, path, body=None):
        base = self.vcsim_state['url'].rsplit('/sdk', 1)[0]
        context = ssl._create_unverified_context()  # pylint: disable=protected-access  # vcsim's self-signed certificate
        return _call_json(base + path, method, body, context)

    def inventory(self):
        """vcsim's live inventory (hosts, port groups, DVS, VMs and their NICs), read without SOAP."""
        return self._vcsim('GET', '/_twin/inventory')

    # vcsim's SOAP request log {'requests': [{'method', 'this', 'status'}], 'counts': {method: n}} and its faults, e.g.
    # inject_vcsim_fault(method='ReconfigVM_Task', this='vm-42', count=1, fault='disk full')
    vcsim_requests, reset_vcsim_requests, inject_vcsim_fault, clear_vcsim_faults = _log_and_faults('_vcsim')

    def set_pnic_link(self, host, device, up):
        """Pull (up=False) or plug back the cable of a host's physical NIC: vCenter then reports no linkSpeed for it."""
        return self._vcsim('POST', '/_twin/pnic', {'host': host, 'device': device, 'link_up': bool(up)})

    def vsphere(self):
        """A pyVmomi service instance logged in to the simulator (kept for the twin's lifetime)."""
        if self._vsphere is None:
            from pyVim.connect import SmartConnect  # pylint: disable=import-outside-toplevel
            self._vsphere = SmartConnect(host=self.vcsim_state['host'], port=int(self.vcsim_state['port']),
                                         user=self.vcsim_state['username'], pwd=self.vcsim_state['password'],
                                         disableSslCertValidation=True)
        return self._vsphere

    # --- helpers -----------------------------------------------------------------------------

    @staticmethod
    def wait_for(predicate, timeout=10.0, interval=0.1, what='condition'):
        """Poll predicate until it returns a truthy value; return it, or raise AssertionError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError('timed out after %.1f s waiting for %s' % (timeout, what))
            time.sleep(interval)


def kube_writes(twin):
    """Successful, non-dry-run writes in the emulator's request log, writes to Leases (the cluster lock) not counted.

    A real run of a writing playbook takes and releases the cluster lock (cluster_lock, docs/reliability.md) even when
    it refuses before its first change; lock_writes() counts those. Check mode writes neither: the log's 'writes'
    (twin.kube_requests()['writes']) counts everything.
    """
    log = twin.kube_requests()
    return log['writes'] - _lease_writes(log)


def kube_counts(twin):
    """The request log's per-verb counts without the Lease requests: a direct call of a writing module takes and releases the
    cluster lock (docs/reliability.md, "Modules called directly"); what it reads and writes of the cluster is the rest."""
    log = twin.kube_requests()
    counts = dict.fromkeys(('get', 'list', 'create', 'update', 'patch', 'delete'), 0)
    for entry in log['requests']:
        if entry.get('resource') != 'leases.coordination.k8s.io':
            counts[entry['verb']] = counts.get(entry['verb'], 0) + 1
    return counts


def lock_writes(twin):
    """Successful writes to Leases (the collection's cluster lock) in the emulator's request log."""
    return _lease_writes(twin.kube_requests())


def _lease_writes(log):
    return sum(1 for entry in log['requests'] if entry.get('resource') == 'leases.coordination.k8s.io' and not entry.get('dry_run')
               and entry['verb'] in ('create', 'update', 'patch', 'delete', 'deletecollection') and 200 <= entry.get('code', 0) < 300)


def vcsim_writes(twin):
    """SOAP calls that change vCenter (everything but reads, session and view housekeeping)."""
    reads = ('Retrieve', 'Login', 'Logout', 'CurrentTime', 'CreateContainerView', 'CreateFilter', 'DestroyView',
             'DestroyPropertyFilter', 'ContinueRetrieve', 'WaitFor', 'FindBy', 'Query', 'HasPrivilege')
    counts = twin.vcsim_requests()['counts']
    return {method: count for method, count in counts.items() if not method.startswith(reads)}


def http_error_body(error):
    """The JSON body of an HTTPError from a twin endpoint, for assertions."""
    if isinstance(error, urllib.error.HTTPError):
        return json.loads(error.read() or b'{}')
    raise error
