// waypoint's bearer_auth() (through tests/app/jwt_cli) against jose 6, an independent JOSE
// implementation on WebCrypto: jose makes the keys, their JWK Set (exportJWK) and PEM
// (exportSPKI), and RS256, ES256, EdDSA and HS256 tokens (SignJWT), and an unsecured JWT
// (alg "none"); jwt_cli answers one request per token, with the keys as PEM and from the JWK
// Set, and every answer's status and WWW-Authenticate error must be the one expected.
//
// Run by tests/jwt/check, with WAYPOINT_JWT_CLI and WAYPOINT_JWT_NODE_DIR (build/node-jwt).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(path.join(process.env.WAYPOINT_JWT_NODE_DIR, 'package.json'));
const jose = await import(pathToFileURL(require.resolve('jose')).href);
const cli = process.env.WAYPOINT_JWT_CLI;

const now = Math.floor(Date.now() / 1000);
const issuer = 'https://issuer.example';
const audience = 'orders';
const scope = 'orders:read';

const pairs = {
  'rsa-1': { alg: 'RS256', ...(await jose.generateKeyPair('RS256', { extractable: true })) },
  'ec-1': { alg: 'ES256', ...(await jose.generateKeyPair('ES256', { extractable: true })) },
  'ed-1': { alg: 'EdDSA', ...(await jose.generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })) },
};
const secret = crypto.randomBytes(32);
const otherRsa = await jose.generateKeyPair('RS256', { extractable: true });

function claims (changes = {}) {
  const out = { sub: 'ada', iss: issuer, aud: audience, iat: now, exp: now + 600, scope: `profile ${scope}` };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete out[name]; else out[name] = value;
  }
  return out;
}

async function signed (kid, payload = claims(), { key, alg, typ } = {}) {
  const algorithm = alg ?? (kid === 'hs-1' ? 'HS256' : pairs[kid].alg);
  const signingKey = key ?? (kid === 'hs-1' ? secret : pairs[kid].privateKey);
  return new jose.SignJWT(payload)
    .setProtectedHeader({ alg: algorithm, kid, ...(typ ? { typ } : {}) })
    .sign(signingKey);
}

// [rule, token, status, the WWW-Authenticate error ("" for none), the body of a 200]
const rows = [
  ['AcceptsRS256', await signed('rsa-1'), 200, null, 'ada'],
  ['AcceptsES256', await signed('ec-1'), 200, null, 'ada'],
  ['AcceptsEdDSA', await signed('ed-1'), 200, null, 'ada'],
  ['AcceptsHS256', await signed('hs-1'), 200, null, 'ada'],
  ['AcceptsAnAccessTokenTyp', await signed('ec-1', claims(), { typ: 'at+jwt' }), 200, null, 'ada'],
  ['AcceptsAudienceArray', await signed('ed-1', claims({ aud: ['billing', audience] })), 200, null, 'ada'],
  ['RefusesExpired', await signed('rsa-1', claims({ exp: now - 3600 })), 401, 'invalid_token'],
  ['RefusesNotYetValid', await signed('ec-1', claims({ nbf: now + 3600 })), 401, 'invalid_token'],
  ['RefusesWrongAudience', await signed('hs-1', claims({ aud: 'billing' })), 401, 'invalid_token'],
  ['RefusesWrongIssuer', await signed('ed-1', claims({ iss: 'https://evil.example' })), 401, 'invalid_token'],
  ['RefusesAnotherKeyUnderTheSameKid', await signed('rsa-1', claims(), { key: otherRsa.privateKey }),
    401, 'invalid_token'],
  ['RefusesAnotherAlgUnderAKid', await signed('ed-1', claims(), { alg: 'ES256', key: pairs['ec-1'].privateKey }),
    401, 'invalid_token'],
  ['RefusesAnUnsecuredJwt', new jose.UnsecuredJWT(claims()).encode(), 401, 'invalid_token'],
  ['RefusesMissingScope', await signed('rsa-1', claims({ scope: 'profile' })), 403, 'insufficient_scope'],
];

function errorOf (challenge) {
  const match = /error="([^"]*)"/.exec(challenge);
  return match ? match[1] : '';
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waypoint-jwt-'));
const pemArgs = [];
const jwks = { keys: [] };
for (const [kid, { alg, publicKey }] of Object.entries(pairs)) {
  const file = path.join(dir, `${kid}.pem`);
  fs.writeFileSync(file, await jose.exportSPKI(publicKey));
  pemArgs.push('--pem', kid, alg, file);
  jwks.keys.push({ ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' });
}
pemArgs.push('--secret', 'hs-1', secret.toString('hex'));
jwks.keys.push({ ...(await jose.exportJWK(secret)), kid: 'hs-1', alg: 'HS256' });
const jwksFile = path.join(dir, 'jwks.json');
fs.writeFileSync(jwksFile, JSON.stringify(jwks));

for (const [how, keyArgs] of [['PEM', pemArgs], ['JWKS', ['--jwks', jwksFile]]]) {
  const args = [...keyArgs, '--issuer', issuer, '--audience', audience, '--scope', scope, '--now', String(now)];
  const result = spawnSync(cli, args, { input: rows.map(r => r[1] + '\n').join(''), timeout: 60000 });
  const lines = result.stdout.toString().split('\n').filter(line => line !== '');
  test(`${how}: jwt_cli answers every token`, () => {
    assert.equal(result.status, 0, result.stderr.toString());
    assert.equal(lines.length, rows.length);
  });
  rows.forEach(([rule, , status, error, body], i) => {
    test(`${how}: ${rule}`, () => {
      const [got, said] = (lines[i] ?? '').split('\t');
      assert.equal(Number(got), status, lines[i]);
      if (status === 200) {
        assert.equal(said, body);
      } else {
        assert.ok(said.startsWith('Bearer realm="api"'), said);
        assert.equal(errorOf(said), error, said);
      }
    });
  });
}

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
