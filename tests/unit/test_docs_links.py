"""Every relative link in README.md, CONTRIBUTING.md and docs/*.md points to a file that exists (and, with an anchor
into a Markdown file, to a heading of that file). External links (http, https, mailto) are not followed."""

import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ['README.md', 'CONTRIBUTING.md'] + sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, 'docs', '*.md')))

FENCE = re.compile(r'^(```|~~~).*?^\1', re.M | re.S)
INLINE_CODE = re.compile(r'`[^`\n]*`')
INLINE_LINK = re.compile(r'!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REFERENCE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$', re.M)
HEADING = re.compile(r'^#{1,6}\s+(.+?)\s*#*\s*$', re.M)
EXTERNAL = re.compile(r'^[a-z][a-z0-9+.-]*:', re.I)
# Pages another open issue is still writing: links to them are allowed until they exist, then this entry must go.
PENDING = {}


def _read(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as handle:
        return handle.read()


def links(text):
    """The link targets of a Markdown text, outside code."""
    text = INLINE_CODE.sub('', FENCE.sub('', text))
    return INLINE_LINK.findall(text) + REFERENCE.findall(text)


def slug(heading):
    """The anchor GitHub gives a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading).lower()
    text = re.sub(r'[^\w\- ]', '', text.replace('`', ''))
    return text.replace(' ', '-')


def anchors(path):
    seen, result = {}, set()
    for heading in HEADING.findall(FENCE.sub('', _read(path))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else '%s-%d' % (base, count))
    return result


def broken_links(page):
    problems = []
    for target in links(_read(page)):
        if EXTERNAL.match(target):
            continue
        path, _hash, anchor = target.partition('#')
        resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if resolved in PENDING and not os.path.exists(os.path.join(ROOT, resolved)):
            continue
        if not os.path.exists(os.path.join(ROOT, resolved)):
            problems.append('%s: %s (no file %s)' % (page, target, resolved))
        elif anchor and resolved.endswith('.md') and anchor not in anchors(resolved):
            problems.append('%s: %s (no heading #%s in %s)' % (page, target, anchor, resolved))
    return problems


def test_slugs_follow_github():
    assert slug('`egressip_network`') == 'egressip_network'
    assert slug('Code changes required, or viable but unsupported?') == 'code-changes-required-or-viable-but-unsupported'
    assert slug('What is not known (or not tested)') == 'what-is-not-known-or-not-tested'


def test_links_outside_code_are_found():
    text = 'see [a](docs/a.md#x) and ![b](img.png "t")\n`[c](no.md)`\n```\n[d](no.md)\n```\n[e]: <ref.md>\n[f](https://x.y/)\n'
    assert links(text) == ['docs/a.md#x', 'img.png', 'https://x.y/', 'ref.md']


def test_every_relative_link_points_to_a_file_that_exists():
    problems = [problem for page in PAGES for problem in broken_links(page)]
    assert problems == [], 'broken relative links:\n' + '\n'.join(problems)


def test_pending_pages_are_still_missing():
    written = sorted(path for path in PENDING if os.path.exists(os.path.join(ROOT, path)))
    assert written == [], '%s now exist: remove them from PENDING in this test so their links are checked' % ', '.join(written)
