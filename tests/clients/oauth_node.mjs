#!/usr/bin/env node
// oauth_node.mjs: the official TypeScript MCP SDK (npm @modelcontextprotocol/sdk, from
// target/tools/clients) signs in to the server with its OAuthClientProvider flow, run by
// tests/clients/oauth_clients.py, which drives the browser.
//
// Usage: node oauth_node.mjs MCP_URL --issuer ISSUER --client-name NAME [--label LABEL]
//                            [--client-metadata-url URL --callback-port PORT]
//   MCP_URL   the server's MCP endpoint (ISSUER/mcp)
//   ISSUER    the authorization server's issuer (what `iss` must be)
//   --client-metadata-url  CIMD: the provider's clientMetadataUrl (an HTTPS URL whose
//             document names http://127.0.0.1:PORT/callback); without it the SDK
//             registers the client (RFC 7591)
//   --callback-port  the port of the redirect URI (default: a free one)
//
// The flow, as an app built on the SDK runs it: a loopback callback server
// (http://127.0.0.1:PORT/callback); connect() meets the 401, discovers, registers (or
// names its document), and calls redirectToAuthorization(url), which prints
// `AUTHORIZE <url>` on stdout (the driver gives it to the browser) — connect() then
// throws UnauthorizedError; the callback brings code, state and iss; finishAuth(code)
// exchanges the code; a new connection lists the tools (printed as one `TOOLS <json>`
// line for the driver's catalogue checks) and calls finance_workspaces_list. Then the
// refresh: the SDK (1.x) keeps no expiry and refreshes when the server answers 401 with
// a refresh token stored, so the stored access token is made invalid as an expired one
// is; a new connection meets the 401, the SDK refreshes (grant_type=refresh_token) and
// retries, and a tools/call runs on the refreshed token.
//
// Checks, each printed as `PASS label: name` or `FAIL label: name: why`. Every request
// the SDK sends goes through a logging fetch, so the registration, the code exchange,
// the refresh and the bearer of each MCP request are seen. Exit status 0 only if every
// check passed. The callback server closes before the script exits.
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const DEMO_WORKSPACE_ID = '2b93f876-769a-4bdc-b23e-304957f313b4';
const WORKSPACES_TOOL = 'finance_workspaces_list';
const CALLBACK_SECONDS = 60;

const here = path.dirname(fileURLToPath(import.meta.url));
const toolsDir = process.env.KFIN_NODE_CLIENTS_DIR ?? path.resolve(here, '../../target/tools/clients');

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const mcpUrl = args[0];
const issuer = option('--issuer');
const clientName = option('--client-name') ?? 'Kobana test: TypeScript SDK';
const label = option('--label') ?? 'oauth node';
const clientMetadataUrl = option('--client-metadata-url');
const callbackPort = Number(option('--callback-port') ?? 0);

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
  const require = createRequire(path.join(toolsDir, 'package.json'));
  const load = async (spec) => import(pathToFileURL(require.resolve(spec)).href);
  const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { UnauthorizedError } = await load('@modelcontextprotocol/sdk/client/auth.js');
  return { Client, StreamableHTTPClientTransport, UnauthorizedError };
}

// The redirect URI: answers a small page, hands each authorization response to wait().
function callbackServer(port) {
  const received = [];
  let wake;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    res.writeHead(url.pathname === '/callback' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>done</title><p>You may close this window.</p>');
    if (url.pathname === '/callback') {
      received.push(url.searchParams);
      wake?.();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/callback`,
        async wait() {
          const deadline = Date.now() + CALLBACK_SECONDS * 1000;
          while (received.length === 0) {
            if (Date.now() > deadline) throw new Error(`no callback within ${CALLBACK_SECONDS}s`);
            await new Promise((r) => {
              wake = r;
              setTimeout(r, 500);
            });
          }
          return received.shift();
        },
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

// The provider an app implements: everything in memory.
class MemoryProvider {
  constructor(redirectUrl) {
    this._redirectUrl = redirectUrl;
    this.clientMetadataUrl = clientMetadataUrl;
    this.client = undefined;
    this.stored = undefined;
    this.verifier = undefined;
    this.sentState = undefined;
    this.authorizeUrls = [];
  }

  get redirectUrl() {
    return this._redirectUrl;
  }

  get clientMetadata() {
    return {
      client_name: clientName,
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this.sentState = crypto.randomBytes(24).toString('base64url');
    return this.sentState;
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(info) {
    this.client = info;
  }

  tokens() {
    return this.stored;
  }

  saveTokens(tokens) {
    this.stored = tokens;
  }

  redirectToAuthorization(url) {
    this.authorizeUrls.push(url.href);
    console.log(`AUTHORIZE ${url.href}`);
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

// Every request the SDK sends, with the form of a POST to /token and the bearer.
function loggingFetch(log) {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    let form;
    if (url.pathname === '/token' && typeof init.body !== 'undefined') {
      form = Object.fromEntries(new URLSearchParams(init.body.toString()));
    }
    log.push({ method: init.method ?? 'GET', path: url.pathname, form, bearer: headers.get('authorization') });
    return fetch(input, init);
  };
}

async function listAll(client) {
  const tools = [];
  let cursor;
  for (let page = 0; page < 50; page += 1) {
    const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: 30000 });
    tools.push(...res.tools);
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

async function workspacesCall(client, when) {
  const result = await client.callTool({ name: WORKSPACES_TOOL, arguments: {} }, undefined, { timeout: 30000 });
  const text = (result.content ?? []).find((c) => c.type === 'text')?.text ?? '';
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  record(`tools/call ${WORKSPACES_TOOL} ${when}: the demo workspace`,
    !result.isError && containsValue(parsed, DEMO_WORKSPACE_ID), `isError=${result.isError}: ${text.slice(0, 300)}`);
}

async function main() {
  if (!mcpUrl || !issuer) {
    console.log(`FAIL ${label}: setup: usage: node oauth_node.mjs MCP_URL --issuer ISSUER [...]`);
    return 1;
  }
  let sdk;
  try {
    sdk = await loadSdk();
  } catch (e) {
    record('load @modelcontextprotocol/sdk', false, `${e.message} (run scripts/ensure-tools.sh)`);
    return 1;
  }
  const callback = await callbackServer(callbackPort);
  const provider = new MemoryProvider(callback.url);
  const log = [];
  const newTransport = () => new sdk.StreamableHTTPClientTransport(new URL(mcpUrl), {
    authProvider: provider,
    fetch: loggingFetch(log),
  });
  const newClient = () => new sdk.Client({ name: 'kfin-e2e-node-oauth', version: '1.0.0' });
  const connect = async () => {
    const transport = newTransport();
    const client = newClient();
    await client.connect(transport, { timeout: 30000 });
    return { client, transport };
  };
  const posts = (p) => log.filter((r) => r.method === 'POST' && r.path === p);
  const tokenPosts = (grant) => posts('/token').filter((r) => r.form?.grant_type === grant);

  try {
    // 1. The 401, discovery, registration and the redirect.
    const first = newTransport();
    let thrown;
    try {
      await newClient().connect(first, { timeout: 30000 });
    } catch (e) {
      thrown = e;
    }
    record('connect without a token throws UnauthorizedError after handing over the authorize URL',
      thrown instanceof sdk.UnauthorizedError && provider.authorizeUrls.length === 1,
      `threw ${thrown?.name}: ${thrown?.message}; ${provider.authorizeUrls.length} authorize URLs`);
    if (provider.authorizeUrls.length !== 1) return 1;
    const clientId = provider.client?.client_id;
    const registered = `${posts('/register').length} registrations, client_id ${clientId}`;
    if (clientMetadataUrl) {
      record('CIMD: no registration, the document URL is the client id',
        posts('/register').length === 0 && clientId === clientMetadataUrl, registered);
    } else {
      record('registered by POST /register (RFC 7591) with a kfin-… client id',
        posts('/register').length === 1 && typeof clientId === 'string' && clientId.startsWith('kfin-'), registered);
    }
    const asked = new URL(provider.authorizeUrls[0]).searchParams;
    record('the authorization request carries the client id and the provider\'s state',
      asked.get('client_id') === clientId && asked.get('state') === provider.sentState,
      `client_id ${asked.get('client_id')}, state ${asked.get('state')}`);

    // 2. The browser signs in and approves; the callback.
    const answer = await callback.wait();
    record('the callback carries one code',
      answer.getAll('code').length === 1 && !!answer.get('code'), `params ${[...answer.keys()]}`);
    record('the callback carries the state sent',
      answer.get('state') === provider.sentState, `state ${answer.get('state')}`);
    // The SDK (1.x) does not check iss itself (RFC 9207); the app does.
    record(`the callback carries iss ${issuer} (RFC 9207)`,
      answer.getAll('iss').length === 1 && answer.get('iss') === issuer,
      `iss ${answer.getAll('iss')}`);
    record('the callback carries no error',
      !answer.has('error'), `error ${answer.get('error')} ${answer.get('error_description')}`);

    // 3. The code for tokens.
    await first.finishAuth(answer.get('code'));
    const codes = tokenPosts('authorization_code');
    record('one code exchanged at /token with a PKCE verifier and the resource',
      codes.length === 1 && !!codes[0].form.code_verifier && codes[0].form.resource === mcpUrl,
      `${codes.length} exchanges: ${JSON.stringify(codes.map((c) => Object.keys(c.form)))}`);
    const firstTokens = provider.stored;
    record('the SDK stored an access token and a refresh token',
      !!firstTokens?.access_token && !!firstTokens?.refresh_token,
      `stored ${JSON.stringify(Object.keys(firstTokens ?? {}))}`);

    // 4. Connected: the tools and a call.
    const { client } = await connect();
    const tools = await listAll(client);
    console.log(`TOOLS ${JSON.stringify(tools)}`);
    record(`tools/list is not empty and holds ${WORKSPACES_TOOL}`,
      tools.length > 0 && tools.some((t) => t.name === WORKSPACES_TOOL), `${tools.length} tools`);
    await workspacesCall(client, 'with the first token');
    await client.close();

    // 5. The refresh: the stored access token made invalid, as an expired one is.
    const access = firstTokens.access_token;
    const invalid = access.slice(0, -4) + (access.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    provider.stored = { ...firstTokens, access_token: invalid };
    const before = log.length;
    const again = await connect();
    const refreshes = tokenPosts('refresh_token');
    record('the server\'s 401 made the SDK refresh at /token (grant_type=refresh_token, the resource named)',
      refreshes.length === 1 && refreshes[0].form.refresh_token === firstTokens.refresh_token
      && refreshes[0].form.resource === mcpUrl,
      `${refreshes.length} refreshes: ${JSON.stringify(refreshes.map((r) => Object.keys(r.form)))}`);
    record('no new authorization was started (no redirect)', provider.authorizeUrls.length === 1,
      `${provider.authorizeUrls.length} authorize URLs`);
    const after = provider.stored;
    record('the refresh answered a new access token and a rotated refresh token',
      !!after?.access_token && after.access_token !== firstTokens.access_token && after.access_token !== invalid
      && !!after.refresh_token && after.refresh_token !== firstTokens.refresh_token,
      'tokens unchanged');
    await workspacesCall(again.client, 'after the refresh');
    const mcpRequests = log.slice(before).filter((r) => r.method === 'POST' && r.path === new URL(mcpUrl).pathname);
    record('the call after the refresh carried the new access token',
      mcpRequests.length > 0 && mcpRequests.at(-1).bearer === `Bearer ${after?.access_token}`, 'another bearer');
    await again.client.close();
  } catch (e) {
    record('the flow ran to its end', false, `${e.name}: ${e.message}`);
  } finally {
    await callback.close();
  }
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
