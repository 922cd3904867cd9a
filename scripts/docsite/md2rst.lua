-- pandoc Lua filter for scripts/docsite_rst.py: one docs/<page>.md -> docs/docsite/rst/<page>.rst.
-- Metadata (set by the generator): docsite_page (this page's name), docsite_pages (every page, comma-separated),
-- docsite_prefix (the collection's label prefix, ansible_collections.ocp.egressip.docsite.).
-- * The first level-1 heading carries the page label <prefix><page>; every other heading the label
--   <prefix><page>.<GitHub anchor>, so a Markdown link page.md#anchor keeps pointing at its section.
-- * Links to another page (x.md, x.md#anchor, #anchor) become :ref: roles to those labels.
-- * Raw HTML is shown as the text it is: the pages use none on purpose, but placeholders such as <reasons> or
--   <time> in a message read as HTML tags to a Markdown parser (GitHub hides them; the docsite shows them).
-- * Links to any other relative file (examples/, roles/, extensions/ ...) are not shipped in the docsite: the text
--   stays and the path follows as literal text, relative to the collection root.
local prefix, page, pages = '', '', {}

local function meta_string(value)
  return value and pandoc.utils.stringify(value) or ''
end

local function label(name, anchor)
  if anchor and anchor ~= '' then
    return prefix .. name .. '.' .. anchor
  end
  return prefix .. name
end

local function escape_role_text(text)
  return (text:gsub('([\\`<>])', '\\%1'))
end

-- A normalized path relative to the collection root for a link from docs/<page>.md.
local function collection_path(target)
  local parts = {}
  for part in ('docs/' .. target):gmatch('[^/]+') do
    if part == '..' then
      table.remove(parts)
    elseif part ~= '.' then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, '/')
end

local seen_title = false

local function Header(el)
  if el.level == 1 and not seen_title then
    seen_title = true
    el.identifier = label(page)
  else
    el.identifier = label(page, el.identifier)
  end
  return el
end

local function ref_target(target)
  if target:match('^#') then
    return label(page, target:sub(2))
  end
  local name, anchor = target:match('^([%w_%-]+)%.md#(.+)$')
  if not name then
    name = target:match('^([%w_%-]+)%.md$')
  end
  if name and pages[name] then
    return label(name, anchor)
  end
  return nil
end

local function Link(el)
  local target = el.target
  if target:match('^%a[%w+.-]*:') then -- http:, https:, mailto: ...
    return nil
  end
  local ref = ref_target(target)
  if ref then
    local text = pandoc.utils.stringify(el.content)
    if text == target or text:match('^[%w_%-/]*%.md$') then
      -- [variables.md](variables.md): the docsite shows the page's title instead of a file name
      return pandoc.RawInline('rst', ':ref:`' .. ref .. '`')
    end
    return pandoc.RawInline('rst', ':ref:`' .. escape_role_text(text) .. ' <' .. ref .. '>`')
  end
  local path = collection_path((target:gsub('#.*$', '')))
  local text = pandoc.utils.stringify(el.content)
  if text == path or text == target or text == (path:match('[^/]+$')) then
    return pandoc.Code(path)
  end
  local result = el.content
  result:extend({pandoc.Space(), pandoc.Str('('), pandoc.Code(path), pandoc.Str(')')})
  return result
end

local function RawInline(el)
  if el.format == 'html' then
    return pandoc.Str(el.text)
  end
end

local function RawBlock(el)
  if el.format == 'html' then
    return pandoc.Para({pandoc.Str(el.text)})
  end
end

-- A role must not touch a word character: `x:ref:` is not markup. Pandoc does not escape around raw RST,
-- so an escaped space (nothing in the output) separates them.
local function Inlines(inlines)
  for i = #inlines, 1, -1 do
    local el = inlines[i]
    if el.t == 'RawInline' and el.format == 'rst' and el.text:match('^:ref:') then
      local before, after = inlines[i - 1], inlines[i + 1]
      local text = el.text
      if before and before.t == 'Str' and before.text:match('[%w_]$') then
        text = '\\ ' .. text
      end
      if after and after.t == 'Str' and after.text:match('^[%w_]') then
        text = text .. '\\ '
      end
      el.text = text
    end
  end
  return inlines
end

function Pandoc(doc)
  prefix = meta_string(doc.meta.docsite_prefix)
  page = meta_string(doc.meta.docsite_page)
  for name in meta_string(doc.meta.docsite_pages):gmatch('[^,]+') do
    pages[name] = true
  end
  doc = doc:walk({Header = Header})
  doc = doc:walk({Link = Link, RawInline = RawInline, RawBlock = RawBlock})
  doc = doc:walk({Inlines = Inlines})
  return doc
end
