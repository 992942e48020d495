// A real OAuth 2.0 authorization server (npm `oidc-provider`) for solgate's tests of
// `[[auth.issuers]]`: client credentials, JWT access tokens (RS256 and ES256), opaque
// access tokens with RFC 7662 introspection, and RFC 7009 revocation.
//
// Started by deploy/scripts/services.sh (`ensure_oidc_provider`), which installs the
// package under target/oidc-provider/. Usage: node oidc-provider.mjs [PORT] [URL_FILE]
// (PORT 0 or absent: a free port). The issuer URL is printed and, with URL_FILE, written
// there once the server listens.
//
// Resources (RFC 8707 `resource` of the token request):
//   urn:solgate:jwt     audience "solgate", RS256 JWT
//   urn:solgate:es256   audience "solgate", ES256 JWT
//   urn:solgate:short   audience "solgate", RS256 JWT living 1 s (expired-token tests)
//   urn:solgate:hs256   audience "solgate", HS256 JWT (solgate must refuse HS* from issuers)
//   urn:solgate:opaque  audience "solgate", opaque (introspection)
//   urn:other           audience "other-service", RS256 JWT (wrong-audience tests)
// Clients (client_secret_basic):
//   solgate-test-member / member-secret       roles ["member"], project "p1"
//   solgate-test-admin / admin-secret         roles ["admin"], project "p1"
//   solgate-test-noroles / noroles-secret     no roles claim, project "p1"
//   solgate-introspector / introspector-secret  solgate's own, for introspection
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

// The package lives under target/oidc-provider/, not beside this script: resolve it there.
const home = process.env.SOLGATE_OIDC_HOME || path.resolve(import.meta.dirname, '../../target/oidc-provider');
const require = createRequire(path.join(home, 'package.json'));
const { default: Provider, errors } = await import(pathToFileURL(require.resolve('oidc-provider')).href);

const port = Number(process.argv[2] || 0);
const urlFile = process.argv[3];

function signingKey(type, options, alg) {
  const { privateKey } = generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid: `${alg.toLowerCase()}-${randomUUID()}`, alg, use: 'sig' };
}

const keys = [
  signingKey('rsa', { modulusLength: 2048 }, 'RS256'),
  signingKey('ec', { namedCurve: 'P-256' }, 'ES256'),
];

const claimsOfClient = {
  'solgate-test-member': { roles: ['member'], project: 'p1' },
  'solgate-test-admin': { roles: ['admin'], project: 'p1' },
  'solgate-test-noroles': { project: 'p1' },
};

const resources = {
  'urn:solgate:jwt': { audience: 'solgate', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } },
  'urn:solgate:es256': { audience: 'solgate', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } },
  'urn:solgate:short': {
    audience: 'solgate', accessTokenFormat: 'jwt', accessTokenTTL: 1, jwt: { sign: { alg: 'RS256' } },
  },
  'urn:solgate:hs256': {
    audience: 'solgate',
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'HS256', key: Buffer.from('a shared secret solgate must never accept from an issuer') } },
  },
  'urn:solgate:opaque': { audience: 'solgate', accessTokenFormat: 'opaque' },
  'urn:other': { audience: 'other-service', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } },
};

const client = (id, secret) => ({
  client_id: id,
  client_secret: secret,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  token_endpoint_auth_method: 'client_secret_basic',
  scope: 'vnflcm vnfpkgm',
});

const configuration = {
  clients: [
    client('solgate-test-member', 'member-secret'),
    client('solgate-test-admin', 'admin-secret'),
    client('solgate-test-noroles', 'noroles-secret'),
    client('solgate-introspector', 'introspector-secret'),
  ],
  jwks: { keys },
  scopes: ['vnflcm', 'vnfpkgm'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'urn:solgate:jwt',
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        const info = resources[resource];
        if (!info) throw new errors.InvalidTarget();
        return { scope: 'vnflcm vnfpkgm', ...info };
      },
    },
  },
  extraTokenClaims: (_ctx, token) => claimsOfClient[token.clientId],
  ttl: {
    ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL || 600,
  },
};

const server = (await import('node:http')).createServer();
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  if (urlFile) {
    writeFileSync(`${urlFile}.tmp`, `${issuer}\n`);
    renameSync(`${urlFile}.tmp`, urlFile);
  }
  console.log(`oidc-provider listening: ${issuer}`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => process.exit(0));
}
