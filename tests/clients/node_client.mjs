#!/usr/bin/env node
// node_client.mjs: end-to-end check of the server with the official TypeScript MCP SDK
// (npm @modelcontextprotocol/sdk, installed by scripts/ensure-tools.sh into
// target/tools/clients) over its StreamableHTTPClientTransport.
//
// Usage: KFIN_TOKEN=<jwt> node node_client.mjs URL [--header "Name: value"]... [--expect-version VERSION]
//   URL  the MCP endpoint, e.g. http://127.0.0.1:8080/ (or .../mcp), or a view of it
//        (.../mcp/x/payables,receivables, .../mcp/readonly, .../mcp/x/payables/readonly),
//        or find mode (.../mcp/find, .../mcp/find/readonly)
//   --header  an extra HTTP header on every request, e.g. "X-MCP-Find: true"
// The SDK speaks the initialize era: it offers its latest version and the server settles
// on 2025-06-18 (the default expected version). The token goes in an
// `Authorization: Bearer` header on every request (requestInit.headers). The view the
// client expects comes from the URL's path and the X-MCP-* headers (SPEC sections 5.4
// and 5.5; the same facts as catalogue.py, which the Python clients share). In find mode
// every catalogue tool but finance_workspaces_list is called through the runner of its
// class (finance_tools_run_read, _write, _destructive, from the tool's action) with
// {tool, arguments}, and must answer what the direct call answers.
//
// Checks, each printed as `PASS name` or `FAIL name: why`:
//   * the negotiated protocol version is the expected one;
//   * tools/list (every page) is exactly the view's part of the catalogue, starting with
//     finance_workspaces_list, in the money-flow order; on the full list the first 40
//     tools hold every payables and receivables tool; a read-only view lists no tool
//     without readOnlyHint. In find mode: exactly finance_workspaces_list,
//     finance_tools_search and the runners of the classes the view offers, in that
//     order, the read runner (and the search) readOnlyHint true, the write runner
//     readOnlyHint false and destructiveHint false, the destructive runner
//     destructiveHint true;
//   * find mode: finance_tools_search {query: "contas a pagar vencidas"} answers
//     finance_payables_list first with runner finance_tools_run_read, only tools of the
//     view, each with name, title, description and the runner of its class (at most 8);
//     {names: [finance_payables_list], detail: full} answers it with its inputSchema,
//     outputSchema and annotations;
//   * calling finance_workspaces_list returns a result that is not an error, whose text
//     content is JSON containing the demo workspace id (and so does structuredContent,
//     when present);
//   * read tools of the view: finance_payables_list with filters, sort and a projection
//     answers only pending payables due in December, with only the projected fields,
//     finance_receivables_list projected rows, and finance_accounts_get the demo
//     checking account with its balance (the SDK checks each structuredContent against
//     the tool's outputSchema);
//   * errors in the server's words (as catalogue.error_cases): finance_payables_list
//     {limit: 100000} (bad_request naming the bounds), finance_payables_get of an id that
//     names nothing (not_found) and finance_payables_delete (refused on this era, naming
//     protocol 2026-07-28) answer isError results whose text is the envelope, with no
//     structuredContent, and callTool (which validates output schemas) does not throw;
//   * on a view, tools outside it are refused with JSON-RPC -32602, as an unknown tool;
//   * find mode refusals (as catalogue.find_refusals): a catalogue tool called by its own
//     name, and the write runners of a read-only view, are JSON-RPC -32602; a tool
//     outside the view (or one that does not exist) through a runner is an isError
//     result, bad_request with details {field: tool, reason: unknown_tool}; a tool of
//     the view through the runner of another class is bad_request with details
//     {field: tool, reason: wrong_runner, runner: <its runner>}.
// Exit status 0 only if every check passed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const DEMO_WORKSPACE_ID = '2b93f876-769a-4bdc-b23e-304957f313b4';
// "Conta corrente Itaú", the demo checking account.
const DEMO_ACCOUNT_ID = 'a1b2c3d4-0001-4000-8000-000000000001';
// "Aluguel de dezembro", pending, due 2026-12-10.
const DEMO_PENDING_PAYABLE_ID = 'b1110000-0001-4000-8000-000000000001';
const DEMO_COMPANY_ID = 'c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11';
const WORKSPACES_TOOL = 'finance_workspaces_list';
// Find mode (SPEC section 5.5).
const SEARCH_TOOL = 'finance_tools_search';
const READ_RUNNER = 'finance_tools_run_read';
const WRITE_RUNNER = 'finance_tools_run_write';
const DESTRUCTIVE_RUNNER = 'finance_tools_run_destructive';
const RUNNERS = [READ_RUNNER, WRITE_RUNNER, DESTRUCTIVE_RUNNER];
// The catalogue in the order of tools/list, read from the server's own listing
// (src/mcp/listing.tsv: one line per tool, name then annotations; a Rust test keeps it
// what the server lists), so adding a tool edits no client test. The toolsets are the
// views' names; a tool belongs to the longest one its name starts with.
const TOOLSETS = ['reports', 'cash_flow', 'payables', 'receivables', 'reconciliations', 'transactions', 'transfers',
  'accounts', 'receipts', 'attachments', 'companies', 'people', 'categories', 'cost_centers', 'taxes',
  'automatic_rules', 'banks'];
const LISTING = readFileSync(new URL('../../src/mcp/listing.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const [name, annotations] = line.split('\t');
    return [name, JSON.parse(annotations)];
  });
const CATALOGUE = {};
for (const [name] of LISTING) {
  const resource = ['workspaces', ...TOOLSETS].sort((a, b) => b.length - a.length)
    .find((r) => name.startsWith(`finance_${r}_`));
  if (!resource) throw new Error(`listing.tsv: ${name} belongs to no toolset`);
  (CATALOGUE[resource] ??= []).push(name.slice(`finance_${resource}_`.length));
}
const RESOURCES = Object.keys(CATALOGUE);
const READ_TOOLS = new Set(LISTING.filter(([, a]) => a.readOnlyHint).map(([name]) => name));
const DESTRUCTIVE_TOOLS = new Set(LISTING.filter(([, a]) => a.destructiveHint).map(([name]) => name));
const CURSOR_LIMIT = 40;

// [resource, action] of a catalogue tool name, or undefined.
function parseTool(name) {
  for (const resource of [...RESOURCES].sort((a, b) => b.length - a.length)) {
    const prefix = `finance_${resource}_`;
    if (name.startsWith(prefix) && CATALOGUE[resource].includes(name.slice(prefix.length))) {
      return [resource, name.slice(prefix.length)];
    }
  }
  return undefined;
}

// The find-mode runner of a catalogue tool, from its annotations (undefined: not a tool
// of this catalogue).
function runnerOf(name) {
  const parsed = parseTool(name);
  if (!parsed) return undefined;
  if (READ_TOOLS.has(name)) return READ_RUNNER;
  if (DESTRUCTIVE_TOOLS.has(name)) return DESTRUCTIVE_RUNNER;
  return WRITE_RUNNER;
}

// The view a URL's path and the X-MCP-* headers ask for:
// { toolsets: Set | null (all), readonly, find, ... }.
function viewOf(urlString, headers = {}) {
  const path = decodeURIComponent(new URL(urlString).pathname).replace(/\/+$/, '');
  let toolsets = null;
  let readonly = false;
  let find = false;
  if (path === '/mcp/find' || path === '/mcp/find/readonly') {
    find = true;
    readonly = path.endsWith('/readonly');
  } else if (path.startsWith('/mcp/x/')) {
    let rest = path.slice('/mcp/x/'.length);
    if (rest.endsWith('/readonly')) {
      rest = rest.slice(0, -'/readonly'.length);
      readonly = true;
    }
    toolsets = new Set(rest.split(',').map((t) => t.trim()).filter(Boolean));
  } else if (path === '/mcp/readonly') {
    readonly = true;
  }
  for (const [key, value] of Object.entries(headers)) {
    const k = key.toLowerCase();
    if (k === 'x-mcp-toolsets') {
      const named = new Set(value.split(',').map((t) => t.trim()).filter(Boolean));
      toolsets = toolsets ? new Set([...toolsets].filter((t) => named.has(t))) : named;
    } else if (k === 'x-mcp-readonly' && value.trim().toLowerCase() === 'true') {
      readonly = true;
    } else if (k === 'x-mcp-find' && value.trim().toLowerCase() === 'true') {
      find = true;
    }
  }
  const shows = (name) => {
    const parsed = parseTool(name);
    if (!parsed) return false;
    const [resource] = parsed;
    if (resource !== 'workspaces' && toolsets && !toolsets.has(resource)) return false;
    return !readonly || READ_TOOLS.has(name);
  };
  const names = RESOURCES.flatMap((r) => CATALOGUE[r].map((a) => `finance_${r}_${a}`));
  const label = [...(find ? ['find'] : []), toolsets ? RESOURCES.filter((r) => toolsets.has(r)).join(',') : 'all',
    ...(readonly ? ['readonly'] : [])].join('/');
  const offered = new Set(names.filter((n) => shows(n) && n !== WORKSPACES_TOOL).map(runnerOf));
  // Find mode: the runners of the classes the view offers (the workspaces tool is listed
  // as itself and counts for none).
  const runners = RUNNERS.filter((r) => offered.has(r));
  const expected = find ? [WORKSPACES_TOOL, SEARCH_TOOL, ...runners] : names.filter(shows);
  // The tools/call that runs catalogue tool `name` in this view: [name, arguments].
  const call = (name, args) => (!find || name === WORKSPACES_TOOL ? [name, args] : [runnerOf(name), { tool: name, arguments: args }]);
  return { toolsets, readonly, find, shows, runners, expected, call, label, narrowed: toolsets !== null || readonly };
}

// The annotations each find-mode meta tool must carry (MCP's defaults: readOnlyHint false,
// destructiveHint true, so the false ones must be explicit).
const FIND_ANNOTATIONS = {
  [SEARCH_TOOL]: { readOnlyHint: true },
  [READ_RUNNER]: { readOnlyHint: true },
  [WRITE_RUNNER]: { readOnlyHint: false, destructiveHint: false },
  [DESTRUCTIVE_RUNNER]: { readOnlyHint: false, destructiveHint: true },
};

function findListingChecks(view, tools, names) {
  const l = view.label;
  record(`tools/list [${l}] is exactly ${view.expected.join(', ')} in this order`,
    JSON.stringify(names) === JSON.stringify(view.expected), `listed ${names}`);
  for (const tool of tools) {
    const wanted = FIND_ANNOTATIONS[tool.name];
    if (!wanted) continue;
    const got = Object.fromEntries(Object.keys(wanted).map((k) => [k, tool.annotations?.[k]]));
    record(`${tool.name} [${l}] is annotated ${Object.entries(wanted).map(([k, v]) => `${k}=${v}`).join(', ')}`,
      Object.entries(wanted).every(([k, v]) => got[k] === v), `got ${JSON.stringify(got)}`);
  }
}

function listingChecks(view, tools) {
  const names = tools.map((t) => t.name);
  const l = view.label;
  record(`tools/list [${l}] starts with ${WORKSPACES_TOOL}`, names[0] === WORKSPACES_TOOL, `first is ${names[0]}`);
  if (view.find) {
    findListingChecks(view, tools, names);
  } else {
    fullListingChecks(view, tools, names);
  }
  if (view.readonly) {
    const writing = tools.filter((t) => t.annotations?.readOnlyHint !== true || t.annotations?.destructiveHint === true)
      .map((t) => t.name);
    record(`tools/list [${l}] has no write or destructive tool`, writing.length === 0,
      `not readOnlyHint, or destructiveHint: ${writing.slice(0, 8)}`);
  }
}

function fullListingChecks(view, tools, names) {
  const l = view.label;
  const missing = view.expected.filter((n) => !names.includes(n));
  const extra = names.filter((n) => !view.expected.includes(n));
  record(`tools/list [${l}] is exactly the view's ${view.expected.length} tools`,
    missing.length === 0 && extra.length === 0 && new Set(names).size === names.length,
    `${names.length} listed; missing ${missing.slice(0, 8)}; not in the view ${extra.slice(0, 8)}`);
  const ranks = names.map((n) => { const p = parseTool(n); return p ? RESOURCES.indexOf(p[0]) : RESOURCES.length; });
  record(`tools/list [${l}] in the money-flow order (workspaces, reports, cash flow, payables, receivables, …)`,
    ranks.every((r, i) => i === 0 || ranks[i - 1] <= r),
    `resource order: ${[...new Set(names.map((n) => parseTool(n)?.[0] ?? n))].join(', ')}`);
  if (!view.toolsets) {
    const cut = names.slice(0, CURSOR_LIMIT);
    const lost = ['payables', 'receivables'].flatMap((r) => CATALOGUE[r].map((a) => `finance_${r}_${a}`))
      .filter((n) => view.shows(n) && !cut.includes(n));
    record(`the first ${CURSOR_LIMIT} tools [${l}] include every payables and receivables tool`, lost.length === 0,
      `beyond the first ${CURSOR_LIMIT}: ${lost}`);
  }
}

// Tools outside the view to try, with arguments that would be valid inside it.
const REFUSAL_ARGUMENTS = {
  finance_payables_settle: { id: DEMO_PENDING_PAYABLE_ID, payment_date: '2026-12-10', financial_account_id: DEMO_ACCOUNT_ID },
  finance_companies_create: { name: 'Empresa fora da vista', cnpj: '11.222.333/0001-81' },
  finance_accounts_get: { id: DEMO_ACCOUNT_ID },
  finance_receivables_list: { limit: 1 },
  finance_payables_list: { limit: 1 },
  finance_payables_create: {
    company_id: DEMO_COMPANY_ID, description: 'Conta pelo executor errado', amount: '10.00', due_date: '2026-12-28',
    person_name: 'Fornecedor do teste', idempotency_key: crypto.randomUUID(),
  },
};
function refusedTools(view) {
  const names = [
    ...(view.readonly ? ['finance_payables_settle', 'finance_companies_create'] : []),
    ...(view.toolsets ? ['finance_accounts_get', 'finance_receivables_list', 'finance_companies_create'] : []),
  ];
  return [...new Set(names)].filter((n) => !view.shows(n));
}

// The read tool a `names` + `detail: full` search asks for (one with an outputSchema).
function searchFullTarget(view) {
  return ['finance_payables_list', 'finance_receivables_list', 'finance_accounts_get'].find(view.shows) ?? WORKSPACES_TOOL;
}

// Find mode: what must be refused ({check, name, args, expect: '-32602' | 'unknown_tool' |
// 'wrong_runner', runner}), as catalogue.find_refusals.
function findRefusals(view) {
  const l = view.label;
  const cases = [];
  const direct = searchFullTarget(view);
  if (direct !== WORKSPACES_TOOL) {
    cases.push({ check: `${direct} called by its own name [${l}] is refused with -32602`, name: direct,
      args: REFUSAL_ARGUMENTS[direct], expect: '-32602' });
  }
  for (const [runner, name] of [[WRITE_RUNNER, 'finance_companies_create'], [DESTRUCTIVE_RUNNER, 'finance_payables_settle']]) {
    if (!view.runners.includes(runner)) {
      cases.push({ check: `${runner} [${l}] is refused with -32602`, name: runner,
        args: { tool: name, arguments: REFUSAL_ARGUMENTS[name] }, expect: '-32602' });
    }
  }
  for (const name of refusedTools(view)) {
    const via = view.runners.includes(runnerOf(name)) ? runnerOf(name) : READ_RUNNER;
    cases.push({ check: `${name} outside the view [${l}] through ${via} is unknown_tool`, name: via,
      args: { tool: name, arguments: REFUSAL_ARGUMENTS[name] }, expect: 'unknown_tool' });
  }
  cases.push({ check: `a tool that does not exist through ${READ_RUNNER} [${l}] is unknown_tool`, name: READ_RUNNER,
    args: { tool: 'finance_payables_archive', arguments: {} }, expect: 'unknown_tool' });
  for (const [name, via] of [['finance_payables_settle', READ_RUNNER], ['finance_payables_list', WRITE_RUNNER],
    ['finance_payables_create', DESTRUCTIVE_RUNNER]]) {
    if (view.shows(name) && view.runners.includes(via)) {
      cases.push({ check: `${name} through ${via} [${l}] is wrong_runner naming ${runnerOf(name)}`, name: via,
        args: { tool: name, arguments: REFUSAL_ARGUMENTS[name] }, expect: 'wrong_runner', runner: runnerOf(name) });
    }
  }
  return cases;
}

async function findRefusalChecks(client, view) {
  for (const c of findRefusals(view)) {
    let result;
    try {
      result = await client.callTool({ name: c.name, arguments: c.args }, undefined, { timeout: 30000 });
    } catch (e) {
      if (c.expect === '-32602') record(c.check, e.code === -32602, `${e.name} ${e.code}: ${e.message}`);
      else record(c.check, false, `JSON-RPC error ${e.code}, not an isError result: ${e.message}`);
      continue;
    }
    const text = (result.content ?? []).find((x) => x.type === 'text')?.text;
    if (c.expect === '-32602') {
      record(c.check, false, `answered a result (isError=${result.isError}): ${text?.slice(0, 300)}`);
      continue;
    }
    let error;
    try {
      error = JSON.parse(text).error;
    } catch {
      error = undefined;
    }
    const details = { field: 'tool', reason: c.expect, ...(c.runner ? { runner: c.runner } : {}) };
    record(c.check,
      result.isError === true && error?.code === 'bad_request'
        && JSON.stringify(sortKeys(error.details)) === JSON.stringify(sortKeys(details))
        && JSON.stringify(result.structuredContent ?? JSON.parse(text)) === JSON.stringify(JSON.parse(text)),
      `isError=${result.isError}: ${text?.slice(0, 300)}`);
  }
}

function sortKeys(o) {
  return o && typeof o === 'object' && !Array.isArray(o) ? Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]])) : o;
}

// Find mode: finance_tools_search finds the tools of the view.
async function searchChecks(client, view) {
  const l = view.label;
  try {
    const found = await callJson(client, SEARCH_TOOL, { query: 'contas a pagar vencidas' });
    const entries = found.tools ?? [];
    if (view.shows('finance_payables_list')) {
      record(`${SEARCH_TOOL} "contas a pagar vencidas" [${l}] finds finance_payables_list first, run by ${READ_RUNNER}`,
        entries[0]?.name === 'finance_payables_list' && entries[0]?.runner === READ_RUNNER,
        `got ${JSON.stringify(found).slice(0, 400)}`);
    }
    const wrong = [];
    for (const e of entries) {
      const known = parseTool(e.name ?? '') !== undefined;
      if (Object.keys(e).sort().join() !== 'description,name,runner,title') wrong.push(`${e.name}: keys ${Object.keys(e)}`);
      else if (!view.runners.includes(e.runner)) wrong.push(`${e.name}: runner ${e.runner} not listed here`);
      else if (known && (!view.shows(e.name) || e.runner !== runnerOf(e.name))) {
        wrong.push(`${e.name}: in the view ${view.shows(e.name)}, runner ${e.runner}`);
      }
    }
    record(`${SEARCH_TOOL} [${l}] answers only tools of the view, each with name, title, description and the runner of`
      + ' its class (at most 8)', entries.length > 0 && entries.length <= 8 && wrong.length === 0,
    `${entries.length} tools; ${wrong.slice(0, 5)}`);

    const target = searchFullTarget(view);
    const full = await callJson(client, SEARCH_TOOL, { names: [target], detail: 'full' });
    const entry = full.tools?.length === 1 ? full.tools[0] : {};
    record(`${SEARCH_TOOL} names=[${target}] detail=full [${l}] answers it with its inputSchema, outputSchema and annotations`,
      entry.name === target && entry.runner === (runnerOf(target) ?? READ_RUNNER)
        && entry.inputSchema?.type === 'object' && typeof entry.inputSchema?.properties === 'object'
        && typeof entry.outputSchema === 'object' && entry.annotations?.readOnlyHint === true,
      `got ${JSON.stringify(full).slice(0, 400)}`);
  } catch (e) {
    record(SEARCH_TOOL, false, `${e.name}: ${e.message}`);
  }
}

async function refusals(client, view) {
  if (view.find) {
    await findRefusalChecks(client, view);
    return;
  }
  for (const name of refusedTools(view)) {
    const check = `${name} outside the view [${view.label}] is refused with -32602`;
    try {
      const result = await client.callTool({ name, arguments: REFUSAL_ARGUMENTS[name] }, undefined, { timeout: 30000 });
      record(check, false, `answered a result (isError=${result.isError}): ${JSON.stringify(result.content).slice(0, 300)}`);
    } catch (e) {
      record(check, e.code === -32602, `${e.name} ${e.code}: ${e.message}`);
    }
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));
const toolsDir = process.env.KFIN_NODE_CLIENTS_DIR ?? path.resolve(here, '../../target/tools/clients');

const args = process.argv.slice(2);
const extraHeaders = {};
let url;
let expectVersion = '2025-06-18';
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--expect-version') {
    expectVersion = args[(i += 1)];
  } else if (args[i] === '--header') {
    const [key, ...rest] = (args[(i += 1)] ?? '').split(':');
    extraHeaders[key.trim()] = rest.join(':').trim();
  } else if (!url) {
    url = args[i];
  }
}
const label = `node[sdk] ${[url, ...Object.entries(extraHeaders).map(([k, v]) => `[${k}: ${v}]`)].join(' ')}`;
let failed = 0;

function record(name, ok, why = '') {
  if (ok) {
    console.log(`PASS ${label}: ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${label}: ${name}: ${why}`);
  }
  return ok;
}

function containsValue(node, wanted) {
  if (typeof node === 'string') return node === wanted;
  if (Array.isArray(node)) return node.some((v) => containsValue(v, wanted));
  if (node && typeof node === 'object') return Object.values(node).some((v) => containsValue(v, wanted));
  return false;
}

async function loadSdk() {
  // The SDK lives in target/tools/clients, not beside this file: resolve it from there,
  // through the package's own exports map.
  const require = createRequire(path.join(toolsDir, 'package.json'));
  const load = async (spec) => {
    const resolved = require.resolve(spec);
    return import(pathToFileURL(resolved).href);
  };
  const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
  return { Client, StreamableHTTPClientTransport };
}

// Calls a tool that must succeed (in find mode through its runner, when `view` is
// given); answers the JSON of its text content, checking that structuredContent (when
// present) says the same.
async function callJson(client, name, args, view) {
  const [target, targetArgs] = view ? view.call(name, args) : [name, args];
  const result = await client.callTool({ name: target, arguments: targetArgs }, undefined, { timeout: 30000 });
  const text = (result.content ?? []).find((c) => c.type === 'text')?.text;
  if (result.isError) throw new Error(`${name} answered an error: ${text?.slice(0, 300)}`);
  const parsed = JSON.parse(text);
  if (result.structuredContent !== undefined && JSON.stringify(result.structuredContent) !== JSON.stringify(parsed)) {
    throw new Error(`${name}: structuredContent differs from the text content`);
  }
  return parsed;
}

// Errors in the server's words (as catalogue.error_cases, on this client's legacy era):
// an isError result whose text is the envelope and which carries no structuredContent.
// callTool checks structuredContent against the tool's outputSchema and throws its own
// error when it does not conform, so an envelope there would hide the server's message.
const ERROR_CASES = [
  { check: "a bad argument (finance_payables_list limit 100000) shows the server's message",
    name: 'finance_payables_list', args: { limit: 100000 }, code: 'bad_request', words: ['between 1 and 100'] },
  { check: "an id that names nothing (finance_payables_get) shows the server's message",
    name: 'finance_payables_get', args: { id: 'b1110000-0001-4000-8000-0000000000ff' }, code: 'not_found', words: [] },
  { check: "a refused confirmation (finance_payables_delete on the legacy era) shows the server's message",
    name: 'finance_payables_delete', args: { id: DEMO_PENDING_PAYABLE_ID }, code: 'forbidden', words: ['2026-07-28'] },
];

async function errorResults(client, view) {
  for (const c of ERROR_CASES.filter((e) => view.shows(e.name))) {
    const [target, targetArgs] = view.call(c.name, c.args);
    let result;
    try {
      result = await client.callTool({ name: target, arguments: targetArgs }, undefined, { timeout: 30000 });
    } catch (e) {
      record(c.check, false, `${e.name} ${e.code}: ${e.message}`);
      continue;
    }
    const text = (result.content ?? []).find((x) => x.type === 'text')?.text;
    let error;
    try {
      error = JSON.parse(text).error;
    } catch {
      error = undefined;
    }
    record(c.check,
      result.isError === true && result.structuredContent === undefined && typeof error?.message === 'string'
        && error.code === c.code && c.words.every((w) => error.message.includes(w)),
      `isError=${result.isError}, structuredContent=${JSON.stringify(result.structuredContent)?.slice(0, 100)}: ${text?.slice(0, 300)}`);
  }
}

async function readTools(client, view) {
  try {
    if (view.shows('finance_payables_list')) await payablesList(client, view);
    if (view.shows('finance_receivables_list')) {
      const page = await callJson(client, 'finance_receivables_list', { limit: 5, fields: ['id', 'status', 'amount'] }, view);
      const rows = page.data ?? [];
      record('finance_receivables_list answers projected rows',
        rows.length > 0 && rows.every((r) => Object.keys(r).sort().join() === 'amount,id,status'),
        `got ${JSON.stringify(page).slice(0, 400)}`);
    }
    if (view.shows('finance_accounts_get')) {
      const account = await callJson(client, 'finance_accounts_get', { id: DEMO_ACCOUNT_ID }, view);
      record('finance_accounts_get answers the account and its balance',
        account.id === DEMO_ACCOUNT_ID && typeof account.balance === 'string',
        `got ${JSON.stringify(account).slice(0, 300)}`);
    }
  } catch (e) {
    record('read tools', false, `${e.name}: ${e.message}`);
  }
}

async function payablesList(client, view) {
  const page = await callJson(client, 'finance_payables_list', {
    filters: { status: { in: ['pending'] }, due_date: { gte: '2026-12-01', lte: '2026-12-31' } },
    sort: 'due_date',
    limit: 10,
    fields: ['id', 'status', 'due_date', 'amount'],
  }, view);
  const rows = page.data ?? [];
  const dates = rows.map((r) => r.due_date);
  record('finance_payables_list filters: pending, due in December, projected',
    rows.length > 0
      && rows.every((r) => r.status === 'pending' && r.due_date >= '2026-12-01' && r.due_date <= '2026-12-31')
      && rows.every((r) => Object.keys(r).sort().join() === 'amount,due_date,id,status')
      && dates.join() === [...dates].sort().join()
      && rows.some((r) => r.id === DEMO_PENDING_PAYABLE_ID),
    `got ${JSON.stringify(page).slice(0, 400)}`);
}

async function main() {
  const token = (process.env.KFIN_TOKEN ?? '').trim();
  if (!url || !token) {
    console.log('FAIL node: setup: usage: KFIN_TOKEN=<jwt> node node_client.mjs URL [--header "N: v"]... [--expect-version V]');
    return 1;
  }
  let sdk;
  try {
    sdk = await loadSdk();
  } catch (e) {
    record('load @modelcontextprotocol/sdk', false, `${e.message} (run scripts/ensure-tools.sh)`);
    return 1;
  }

  const view = viewOf(url, extraHeaders);
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...extraHeaders, Authorization: `Bearer ${token}` } },
  });
  const client = new sdk.Client({ name: 'kfin-e2e-node', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: 30000 });
  } catch (e) {
    record('connect', false, `${e.name}: ${e.message}`);
    return 1;
  }

  try {
    const version = transport.protocolVersion;
    record(`protocol version ${expectVersion}`, version === expectVersion, `negotiated ${JSON.stringify(version)}`);

    const tools = [];
    let cursor;
    for (let page = 0; page < 50; page += 1) { // bounded, so a looping cursor cannot hang
      const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: 30000 });
      tools.push(...res.tools);
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    listingChecks(view, tools);

    // callTool also validates structuredContent against the tool's outputSchema.
    const result = await client.callTool({ name: WORKSPACES_TOOL, arguments: {} }, undefined, { timeout: 30000 });
    const texts = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
    record(`${WORKSPACES_TOOL} result is not an error`, !result.isError, `isError: ${texts[0]?.slice(0, 300)}`);
    let parsed;
    let why = `no text content in ${JSON.stringify(result.content).slice(0, 300)}`;
    if (texts.length > 0) {
      try {
        parsed = JSON.parse(texts[0]);
      } catch (e) {
        why = `text content is not JSON (${e.message}): ${texts[0].slice(0, 300)}`;
      }
    }
    record(`${WORKSPACES_TOOL} JSON includes demo workspace ${DEMO_WORKSPACE_ID}`,
      parsed !== undefined && containsValue(parsed, DEMO_WORKSPACE_ID),
      parsed === undefined ? why : `got ${texts[0].slice(0, 300)}`);
    if (result.structuredContent !== undefined) {
      record(`${WORKSPACES_TOOL} structuredContent includes the demo workspace`,
        containsValue(result.structuredContent, DEMO_WORKSPACE_ID),
        `got ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
    }

    if (view.find) await searchChecks(client, view);
    await readTools(client, view);
    await errorResults(client, view);
    await refusals(client, view);
  } catch (e) {
    record('request', false, `${e.name}: ${e.message}`);
  } finally {
    try {
      await client.close();
    } catch (e) {
      record('close', false, `${e.name}: ${e.message}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
