# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wire check option: the documentation of ``wire_argument_spec()`` in module_utils/core/option_specs.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  wire:
    description:
      - The wire check. For each EgressIP object, a short-lived probe Pod in a namespace the object selects runs
        C(curl -sS --max-time 5 http://<echo_target>) once; an echo service off the cluster answers with the source
        address it sees, which must be one of the egress IPs assigned to the object. The pod is deleted afterwards.
      - Status alone cannot show a blackhole (DOMAIN.md section 6, ovn-kubernetes#6553); the wire can.
      - Not run in check mode (it creates pods); the result then says so.
      - Leave out to skip the wire check.
    type: dict
    suboptions:
      echo_target:
        description:
          - C(host:port) (or C(host)) of the echo service off the cluster, reached over HTTP. It must not be a node
            address (traffic to node addresses bypasses EgressIP), and it must answer with the client address only.
        type: str
        required: true
      echo_target_ipv6:
        description:
          - C([IPv6 address]:port) of an echo service off the cluster reached over IPv6. Given, the objects with IPv6 egress
            IPs get a second probe to it, whose answer must be one of their assigned IPv6 egress IPs (and the probe to
            O(wire.echo_target) one of their IPv4 ones; an object with IPv6 egress IPs only gets the IPv6 probe alone), as
            traffic of each family leaves with an egress IP of that family.
        type: str
      namespaces:
        description:
          - Namespace to run the probe of each EgressIP object in, a dict from the object name to the namespace name; the
            namespace must be selected by the object's C(namespaceSelector).
          - Objects not named here use the first namespace (by name) their selector selects.
        type: dict
        default: {}
      create_namespace:
        description:
          - When no namespace is selected by an object, create C(egressip-probe-<object>) with labels that satisfy its
            C(namespaceSelector) (and C(egressip.ocp/managed-by=ocp.egressip)), and delete it after the probe.
        type: bool
        default: false
      image:
        description: A container image with C(curl); it runs as a non-root user with no privileges.
        type: str
        default: registry.access.redhat.com/ubi9/ubi-minimal:latest
      timeout:
        description:
          - Seconds a probe pod may take to be scheduled, pull its image and finish (C(activeDeadlineSeconds)).
        type: int
        default: 60
      probes:
        description:
          - Probe pods per object. An object with several egress IPs spreads flows over its egress nodes, so more probes
            see more of its IPs; each probe must see one of them.
        type: int
        default: 1
'''
