"""docs/runbook.md has one `## <id>` section per catalogue finding id, and no section without an id.

Each section names the symptom, what to check, what it means and the fix, so a support engineer
who follows a finding's `docs` link finds the same four parts everywhere.
"""

import os
import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import CATALOGUE

RUNBOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'docs', 'runbook.md')
PARTS = ('**Symptom**', '**Check**', '**Meaning**', '**Fix**')


def sections():
    """{heading: body} for every level-2 heading of the runbook."""
    with open(RUNBOOK, encoding='utf-8') as handle:
        text = handle.read()
    found = {}
    for match in re.finditer(r'^## (.+?)\s*$(.*?)(?=^## |\Z)', text, re.M | re.S):
        found[match.group(1)] = match.group(2)
    return found


def test_every_catalogue_id_has_a_runbook_section():
    missing = sorted(set(CATALOGUE) - set(sections()))
    assert not missing, 'finding ids without a "## <id>" section in docs/runbook.md:\n  ' + '\n  '.join(missing)


def test_every_runbook_section_is_a_catalogue_id():
    unknown = sorted(set(sections()) - set(CATALOGUE))
    assert not unknown, 'docs/runbook.md sections that are no finding id of _catalogue.py:\n  ' + '\n  '.join(unknown)


def test_every_section_has_symptom_check_meaning_and_fix():
    incomplete = sorted('%s (no %s)' % (heading, ', '.join(part for part in PARTS if part not in body))
                        for heading, body in sections().items() if not all(part in body for part in PARTS))
    assert not incomplete, 'runbook sections missing a part:\n  ' + '\n  '.join(incomplete)


def test_section_headings_are_their_own_anchor():
    # GitHub makes the anchor from the heading text; ids are lower case, digits and underscores only
    bad = sorted(heading for heading in sections() if not re.match(r'^[a-z0-9_]+$', heading))
    assert not bad, 'runbook headings that are not plain finding ids: %s' % ', '.join(bad)
