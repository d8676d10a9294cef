#!/usr/bin/env node
// oidc_provider.mjs: npm oidc-provider (target/tools/oidc-provider, installed by
// scripts/ensure-tools.sh) as a company's OpenID Connect provider, for the end-to-end
// test of people signing in (tests/clients/people.sh).
//
// Usage: node oidc_provider.mjs --redirect-uri URI --client-id ID --client-secret-file FILE
//                               --account LOGIN=EMAIL [--account LOGIN=EMAIL]...
//   --redirect-uri        the server's callback (KFIN_PUBLIC_URL + /oauth/callback): the
//                         only redirect URI of the client
//   --client-id           the server's client at this provider: confidential
//                         (client_secret_basic), its secret the first line of the file
//                         the server reads too (KFIN_OIDC_CLIENT_SECRET_FILE)
//   --account LOGIN=EMAIL a person: whoever types LOGIN on the provider's login page
//                         (any password) is subject LOGIN, with that e-mail, verified
//                         (email_verified: true), and the name "Pessoa LOGIN"
//
// Listens on 127.0.0.1 on a free port and prints `ISSUER http://127.0.0.1:PORT` on stdout
// once it answers; the issuer is exactly that (no trailing slash). The sign-in is the
// authorization code flow with PKCE required, the login and consent pages those of
// oidc-provider's development interactions (a form with `login` and `password`, then
// one with a submit button for the consent). ID tokens are RS256, signed by a key made
// at start (a fresh kid), and carry email, email_verified and name
// (conformIdTokenClaims: false, so the claims of the scopes go in the ID token); the
// provider knows no account but these. Stops on SIGTERM or SIGINT.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
const toolsDir = process.env.KFIN_OIDC_PROVIDER_DIR ?? path.resolve(here, '../../target/tools/oidc-provider');

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const redirectUri = option('--redirect-uri');
const clientId = option('--client-id');
const secretFile = option('--client-secret-file');
const accounts = new Map();
args.forEach((arg, at) => {
  if (arg === '--account') {
    const [login, email] = (args[at + 1] ?? '').split('=');
    accounts.set(login, email);
  }
});
if (!redirectUri || !clientId || !secretFile || accounts.size === 0) {
  console.error(
    'usage: oidc_provider.mjs --redirect-uri URI --client-id ID --client-secret-file FILE --account LOGIN=EMAIL...',
  );
  process.exit(2);
}
const clientSecret = fs.readFileSync(secretFile, 'utf8').split('\n')[0].trim();

const require = createRequire(path.join(toolsDir, 'package.json'));
const { default: Provider } = await import(pathToFileURL(require.resolve('oidc-provider')).href);

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  pkce: { required: () => true },
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, sub) {
    const email = accounts.get(sub);
    if (!email) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, email, email_verified: true, name: `Pessoa ${sub}` };
      },
    };
  },
});
// The development interactions warn that they are for development: this is one.
provider.on('server_error', (ctx, error) => console.error(`oidc-provider server_error: ${error.stack ?? error}`));
server.on('request', provider.callback());

const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
console.log(`ISSUER ${issuer}`);
