# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a verification checks and how: the options of egressip_verify besides its connections, and the record a
verification made elsewhere carries so that egressip_verify can tell whether it may return it as its own.

preflight verifies its own read of a converged cluster when given these options (its ``verify`` option, enable's
converged record, checks/verification_io.py). Its result carries ``made_with`` (the validated options and the mode), and
egressip_verify - its action plugin, which imports this light file on the controller, or the module itself - returns
it instead of verifying again only when its own options, validated the same way, are the same. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import (
    failure_domains_argument_spec, objects_argument_spec, portgroup_argument_spec, wire_argument_spec)

# the key of a result made elsewhere (preflight) that says with which options it was made
MADE_WITH = 'made_with'


def option_spec():
    """The options of egressip_verify besides the connections, its handed-over vCenter facts, ``fail_on_error`` and
    ``precomputed``; preflight's ``verify`` option takes exactly these."""
    spec = dict(
        objects=objects_argument_spec(default=[]),
        network=network_argument_spec(),
        datacenter=dict(type='str'),
        cluster=dict(type='str'),
        portgroup=portgroup_argument_spec(),
        failure_domains=failure_domains_argument_spec(),
        remediate=dict(type='bool', default=False),
        remediation_limit=dict(type='int'),
        remediation_hold_down=dict(type='int', default=0),
        remediation_min_egress_nodes=dict(type='int', default=0),
        wait_timeout=dict(type='int', default=120),
        poll_interval=dict(type='float', default=1.0),
    )
    spec.update(wire_argument_spec())
    return spec


REQUIRED_TOGETHER = [('datacenter', 'cluster', 'portgroup')]


def validated(options):
    """(params, messages): ``options`` (option_spec() keys) validated as AnsibleModule validates them, defaults filled."""
    result = ArgumentSpecValidator(option_spec(), required_together=REQUIRED_TOGETHER).validate(options)
    return result.validated_parameters, [str(error) for error in result.errors]


def made_with(params, check_mode):
    """The record a result made elsewhere carries: its options (option_spec() keys) and whether it ran in check mode."""
    return {'options': dict((key, params.get(key)) for key in option_spec()), 'check_mode': bool(check_mode)}


# the report's rows are the result's own (checks/verify.report): a handed-over result carries them once
SHARED_ROWS = ('nodes', 'egress_ips')


def packed(output, record):
    """``output`` (a verification) with ``record`` (made_with), its report without the rows it shares with the result
    (hundreds of KB at 500 nodes, sent once instead of twice through the controller)."""
    report = dict((key, value) for key, value in output['report'].items() if key not in SHARED_ROWS)
    return dict(output, report=report, **{MADE_WITH: dict(record, shared_rows=list(SHARED_ROWS))})


def unpacked(precomputed):
    """The verification ``packed`` made, as egressip_verify returns it: without the record, the report's rows back."""
    output = dict((key, value) for key, value in precomputed.items() if key != MADE_WITH)
    report = dict(output['report'])
    report.update((key, output[key]) for key in precomputed[MADE_WITH].get('shared_rows') or () if key in output)
    output['report'] = report
    return output


def reusable(precomputed, options, check_mode):
    """``precomputed`` (preflight's ``verify`` result) without its record when it was made with these ``options``
    (validated here the same way; other keys are ignored) in the same mode; None when anything differs."""
    if not isinstance(precomputed, dict) or not isinstance(precomputed.get(MADE_WITH), dict) or not isinstance(precomputed.get('report'), dict):
        return None
    spec = option_spec()
    params, problems = validated(dict((key, value) for key, value in options.items() if key in spec))
    record = dict((key, value) for key, value in precomputed[MADE_WITH].items() if key != 'shared_rows')
    if problems or record != made_with(params, check_mode):
        return None
    return unpacked(precomputed)
