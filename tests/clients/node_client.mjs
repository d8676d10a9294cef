#!/usr/bin/env node
// node_client.mjs: end-to-end check of the server with the official TypeScript MCP SDK
// (npm @modelcontextprotocol/sdk, installed by scripts/ensure-tools.sh into
// target/tools/clients) over its StreamableHTTPClientTransport.
//
// Usage: KFIN_TOKEN=<jwt> node node_client.mjs URL [--expect-version VERSION]
//   URL  the MCP endpoint, e.g. http://127.0.0.1:8080/ (or .../mcp), or a view of it
//        (.../mcp/x/payables,receivables, .../mcp/readonly, .../mcp/x/payables/readonly)
// The SDK speaks the initialize era: it offers its latest version and the server settles
// on 2025-06-18 (the default expected version). The token goes in an
// `Authorization: Bearer` header on every request (requestInit.headers). The view the
// client expects comes from the URL's path (SPEC section 5.4; the same facts as
// catalogue.py, which the Python clients share).
//
// Checks, each printed as `PASS name` or `FAIL name: why`:
//   * the negotiated protocol version is the expected one;
//   * tools/list (every page) is exactly the view's part of the catalogue, starting with
//     finance_workspaces_list, in the money-flow order; on the full list the first 40
//     tools hold every payables and receivables tool; a read-only view lists no tool
//     without readOnlyHint;
//   * calling finance_workspaces_list returns a result that is not an error, whose text
//     content is JSON containing the demo workspace id (and so does structuredContent,
//     when present);
//   * read tools of the view: finance_payables_list with filters, sort and a projection
//     answers only pending payables due in December, with only the projected fields,
//     finance_receivables_list projected rows, and finance_accounts_get the demo
//     checking account with its balance (the SDK checks each structuredContent against
//     the tool's outputSchema);
//   * on a view, tools outside it are refused with JSON-RPC -32602, as an unknown tool.
// Exit status 0 only if every check passed.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const DEMO_WORKSPACE_ID = '2b93f876-769a-4bdc-b23e-304957f313b4';
// "Conta corrente Itaú", the demo checking account.
const DEMO_ACCOUNT_ID = 'a1b2c3d4-0001-4000-8000-000000000001';
// "Aluguel de dezembro", pending, due 2026-12-10.
const DEMO_PENDING_PAYABLE_ID = 'b1110000-0001-4000-8000-000000000001';
const WORKSPACES_TOOL = 'finance_workspaces_list';

// The catalogue (SPEC section 5.1) in the order of tools/list (section 5).
const CATALOGUE = {
  workspaces: ['list'],
  reports: ['aging', 'income_statement'],
  cash_flow: ['get'],
  payables: ['list', 'get', 'create', 'update', 'delete', 'aggregates', 'settle', 'cancel', 'reopen', 'send_to_bank', 'cancel_dispatch'],
  receivables: ['list', 'get', 'create', 'update', 'delete', 'aggregates', 'settle', 'cancel', 'reopen', 'charge', 'cancel_charge'],
  reconciliations: ['create', 'get', 'delete', 'suggest'],
  transactions: ['list', 'get', 'create', 'update', 'delete', 'aggregates'],
  transfers: ['get', 'create'],
  accounts: ['list', 'get', 'create', 'update', 'delete', 'adjust_balance', 'import_statement'],
  receipts: ['list', 'get'],
  attachments: ['list', 'get', 'upload', 'download', 'link', 'unlink', 'delete'],
  companies: ['list', 'get', 'create', 'update', 'delete'],
  people: ['list', 'get', 'create', 'update', 'delete'],
  categories: ['list', 'get', 'create', 'update', 'delete'],
  cost_centers: ['list', 'get', 'create', 'update', 'delete'],
  taxes: ['list', 'get', 'create', 'update', 'delete'],
  automatic_rules: ['list', 'get', 'create', 'update', 'delete', 'reorder'],
};
const RESOURCES = Object.keys(CATALOGUE);
const READ_ACTIONS = new Set(['list', 'get', 'aggregates', 'download', 'suggest', 'aging', 'income_statement']);
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

// The view a URL's path asks for: { toolsets: Set | null (all), readonly }.
function viewOf(urlString) {
  const path = decodeURIComponent(new URL(urlString).pathname).replace(/\/+$/, '');
  let toolsets = null;
  let readonly = false;
  if (path.startsWith('/mcp/x/')) {
    let rest = path.slice('/mcp/x/'.length);
    if (rest.endsWith('/readonly')) {
      rest = rest.slice(0, -'/readonly'.length);
      readonly = true;
    }
    toolsets = new Set(rest.split(',').map((t) => t.trim()).filter(Boolean));
  } else if (path === '/mcp/readonly') {
    readonly = true;
  }
  const shows = (name) => {
    const parsed = parseTool(name);
    if (!parsed) return false;
    const [resource, action] = parsed;
    if (resource !== 'workspaces' && toolsets && !toolsets.has(resource)) return false;
    return !readonly || READ_ACTIONS.has(action);
  };
  const names = RESOURCES.flatMap((r) => CATALOGUE[r].map((a) => `finance_${r}_${a}`));
  const label = [toolsets ? RESOURCES.filter((r) => toolsets.has(r)).join(',') : 'all', ...(readonly ? ['readonly'] : [])].join('/');
  return { toolsets, readonly, shows, expected: names.filter(shows), label, narrowed: toolsets !== null || readonly };
}

function listingChecks(view, tools) {
  const names = tools.map((t) => t.name);
  const l = view.label;
  record(`tools/list [${l}] starts with ${WORKSPACES_TOOL}`, names[0] === WORKSPACES_TOOL, `first is ${names[0]}`);
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
  if (view.readonly) {
    const writing = tools.filter((t) => t.annotations?.readOnlyHint !== true || t.annotations?.destructiveHint === true)
      .map((t) => t.name);
    record(`tools/list [${l}] has no write or destructive tool`, writing.length === 0,
      `not readOnlyHint, or destructiveHint: ${writing.slice(0, 8)}`);
  }
}

// Tools outside the view to try, with arguments that would be valid inside it.
const REFUSAL_ARGUMENTS = {
  finance_payables_settle: { id: DEMO_PENDING_PAYABLE_ID, payment_date: '2026-12-10', financial_account_id: DEMO_ACCOUNT_ID },
  finance_companies_create: { name: 'Empresa fora da vista', cnpj: '11.222.333/0001-81' },
  finance_accounts_get: { id: DEMO_ACCOUNT_ID },
  finance_receivables_list: { limit: 1 },
};
function refusedTools(view) {
  const names = [
    ...(view.readonly ? ['finance_payables_settle', 'finance_companies_create'] : []),
    ...(view.toolsets ? ['finance_accounts_get', 'finance_receivables_list', 'finance_companies_create'] : []),
  ];
  return [...new Set(names)].filter((n) => !view.shows(n));
}

async function refusals(client, view) {
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
const url = args.find((a) => !a.startsWith('--'));
const ev = args.indexOf('--expect-version');
const expectVersion = ev >= 0 ? args[ev + 1] : '2025-06-18';
const label = `node[sdk] ${url}`;
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

// Calls a tool that must succeed; answers the JSON of its text content, checking that
// structuredContent (when present) says the same.
async function callJson(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30000 });
  const text = (result.content ?? []).find((c) => c.type === 'text')?.text;
  if (result.isError) throw new Error(`${name} answered an error: ${text?.slice(0, 300)}`);
  const parsed = JSON.parse(text);
  if (result.structuredContent !== undefined && JSON.stringify(result.structuredContent) !== JSON.stringify(parsed)) {
    throw new Error(`${name}: structuredContent differs from the text content`);
  }
  return parsed;
}

async function readTools(client, view) {
  try {
    if (view.shows('finance_payables_list')) await payablesList(client);
    if (view.shows('finance_receivables_list')) {
      const page = await callJson(client, 'finance_receivables_list', { limit: 5, fields: ['id', 'status', 'amount'] });
      const rows = page.data ?? [];
      record('finance_receivables_list answers projected rows',
        rows.length > 0 && rows.every((r) => Object.keys(r).sort().join() === 'amount,id,status'),
        `got ${JSON.stringify(page).slice(0, 400)}`);
    }
    if (view.shows('finance_accounts_get')) {
      const account = await callJson(client, 'finance_accounts_get', { id: DEMO_ACCOUNT_ID });
      record('finance_accounts_get answers the account and its balance',
        account.id === DEMO_ACCOUNT_ID && typeof account.balance === 'string',
        `got ${JSON.stringify(account).slice(0, 300)}`);
    }
  } catch (e) {
    record('read tools', false, `${e.name}: ${e.message}`);
  }
}

async function payablesList(client) {
  const page = await callJson(client, 'finance_payables_list', {
    filters: { status: { in: ['pending'] }, due_date: { gte: '2026-12-01', lte: '2026-12-31' } },
    sort: 'due_date',
    limit: 10,
    fields: ['id', 'status', 'due_date', 'amount'],
  });
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
    console.log('FAIL node: setup: usage: KFIN_TOKEN=<jwt> node node_client.mjs URL [--expect-version V]');
    return 1;
  }
  let sdk;
  try {
    sdk = await loadSdk();
  } catch (e) {
    record('load @modelcontextprotocol/sdk', false, `${e.message} (run scripts/ensure-tools.sh)`);
    return 1;
  }

  const view = viewOf(url);
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
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

    await readTools(client, view);
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
