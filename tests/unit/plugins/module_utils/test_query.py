"""The query option: a JMESPath expression checked before any request, errors naming the expression."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.core.query import compile_query, describe_jmespath_error, run_query

RESULT = {
    'egressips': [{'name': 'payments', 'all_assigned': False, 'ips': [{'ip': '10.20.0.200', 'network': 'secondary'}]},
                  {'name': 'audit', 'all_assigned': True, 'ips': []}],
    'nodes': [{'name': 'w0', 'egress_assignable': True, 'secondary_subnets': ['10.20.0.0/24']}],
}


def test_query_applies_to_the_result():
    assert run_query(compile_query('egressips[?!all_assigned].name'), 'x', RESULT) == ['payments']
    assert run_query(compile_query('nodes[?egress_assignable].{node: name, subnets: secondary_subnets}'), 'x', RESULT) == [
        {'node': 'w0', 'subnets': ['10.20.0.0/24']}]
    assert run_query(compile_query('egressips[].ips[].ip'), 'x', RESULT) == ['10.20.0.200']
    assert run_query(compile_query('missing'), 'x', RESULT) is None


@pytest.mark.parametrize('expression, error', [
    ('egressips[?name ==', 'Incomplete expression at column 18'),
    ('egressips[?name == `payments].name', 'Unclosed ` delimiter at column 19'),
    ('egressips[].@@', 'Parse error at column 12'),
    ('nodes[', 'Incomplete expression at column 6'),
])
def test_syntax_error_names_the_expression_and_the_error(expression, error):
    with pytest.raises(ModuleFailure) as failure:
        compile_query(expression)
    msg = failure.value.msg
    assert msg.startswith('query %r is not a valid JMESPath expression: ' % expression)
    assert error in msg
    assert '\n' not in msg
    assert failure.value.details['reason'] == 'invalid_query' and failure.value.details['jmespath_version']


def test_evaluation_error_names_the_expression():
    expression = 'length(nodes[0].egress_assignable)'
    with pytest.raises(ModuleFailure) as failure:
        run_query(compile_query(expression), expression, RESULT)
    assert failure.value.msg.startswith("query 'length(nodes[0].egress_assignable)' failed on the result: In function length(), invalid type")
    assert failure.value.details['reason'] == 'query_failed'


def test_unknown_function():
    with pytest.raises(ModuleFailure) as failure:
        run_query(compile_query('nope(nodes)'), 'nope(nodes)', RESULT)
    assert "query 'nope(nodes)'" in failure.value.msg and 'nope' in failure.value.msg


def test_describe_plain_exception():
    assert describe_jmespath_error(ValueError('')) == 'ValueError'
