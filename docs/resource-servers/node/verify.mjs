#!/usr/bin/env node
// Offline validation of a Gatehouse access token (RFC 9068 §4, RFC 8725), for
// a resource server written for Node.js (18 or later), with its built-in
// modules only.
//
// An HTTP handler calls `await authenticate(req.headers.authorization, ...)`
// with one policy and one KeySet made at start. Run as a program it checks one
// token and prints the claims (exit 0) or the refusal (exit 1) as JSON:
//
//   verify.mjs --issuer https://localhost:8443 --audience https://localhost:8444 \
//       --scope api:serverA --ca-file var/tls/ca.pem [--jwks-cache FILE] TOKEN
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const LEEWAY = 60; // seconds of clock skew tolerated on exp, nbf and iat
const MAXIMUM_AGE = 3600; // a key set older than this is fetched again
const UNKNOWN_KID_INTERVAL = 30; // at most one refetch for an unknown kid per this many seconds
const RETRY_INTERVAL = 30; // after a failed refresh, serve the held keys this long before trying again
// The issuer's algorithms, each with the one kind of key (kty, crv) that signs with it:
// RFC 7518 §3.3 RS256 with RSA, §3.4 ES256 with P-256, RFC 8037 §3.1 EdDSA with Ed25519.
const ALGORITHMS = new Map([['RSA', 'RS256'], ['EC P-256', 'ES256'], ['OKP Ed25519', 'EdDSA']]);

/** A refused request: 401, or 403 for a good token not meant for this API. */
export class Refusal extends Error {
  constructor(error, description) {
    super(description);
    this.error = error;
    this.status = ['invalid_audience', 'insufficient_scope'].includes(error) ? 403 : 401;
  }

  /** The WWW-Authenticate value (RFC 6750 §3). */
  challenge(policy) {
    // RFC 6750 §3.1: "If the request lacks any authentication information
    // ... the resource server SHOULD NOT include an error code".
    if (this.error === 'missing_token') return `Bearer realm="${policy.audience}"`;
    // RFC 6750 §3.1: insufficient_scope "MAY include the "scope" attribute
    // with the scope necessary to access the protected resource."
    if (this.error === 'insufficient_scope') {
      return `Bearer realm="${policy.audience}", error="insufficient_scope", scope="${policy.scope}"`;
    }
    return `Bearer realm="${policy.audience}", error="invalid_token", error_description="${this.message}"`;
  }
}

/** No key set could be fetched yet: answer 503 with Retry-After, not 401. */
export class KeysUnavailable extends Error {}

/**
 * The issuer's signing keys by kid, found through discovery, cached, and
 * refetched on an unknown kid at most once per UNKNOWN_KID_INTERVAL. With a
 * `path`, the cache survives restarts (and the program's separate runs).
 */
export class KeySet {
  constructor(issuer, caFile, path) {
    this.issuer = issuer;
    this.ca = caFile ? readFileSync(caFile) : undefined; // trusts only this CA when given
    this.path = path;
    this.state = path && existsSync(path) ? JSON.parse(readFileSync(path, 'utf8'))
      : { jwks_uri: null, fetched_at: null, refetched_at: null, keys: [] };
    this.pending = null; // one fetch at a time, shared by concurrent requests
  }

  async key(kid, now) {
    if (this.pending) await this.pending; // a fetch under way may bring this kid
    const state = this.state;
    if (state.fetched_at === null || now - state.fetched_at >= MAXIMUM_AGE) {
      await this.fetch(now, state.fetched_at === null ? 'no key set yet' : 'key set is stale');
    } else if (!this.find(kid)) {
      // RFC 7517 §4.5: the kid is used "to choose among a set of keys within a
      // JWK Set during key rollover": a new kid may be a new key.
      const last = state.refetched_at;
      if (last === null || now - last >= UNKNOWN_KID_INTERVAL) {
        state.refetched_at = now;
        await this.fetch(now, `unknown kid ${kid}`);
      } else {
        log(`unknown kid ${kid}: refetched ${now - last} s ago, not again yet`);
      }
    }
    return this.find(kid);
  }

  /** `{ alg, key }` for kid, or null. */
  find(kid) {
    for (const jwk of this.state.keys) {
      // RFC 9068 §4: "The resource server MUST use the keys provided by the
      // authorization server." Only signing keys of the issuer's algorithms
      // qualify, and an "alg" member (RFC 7517 §4.4) must fit the key.
      const alg = ALGORITHMS.get(jwk.crv === undefined ? jwk.kty : `${jwk.kty} ${jwk.crv}`);
      if (jwk.kid === kid && alg && (jwk.use ?? 'sig') === 'sig' && (jwk.alg ?? alg) === alg) {
        return { alg, key: createPublicKey({ key: jwk, format: 'jwk' }) };
      }
    }
    return null;
  }

  fetch(now, reason) {
    this.pending ??= this.download(now, reason).finally(() => { this.pending = null; });
    return this.pending;
  }

  async download(now, reason) {
    let keys;
    try {
      if (this.state.jwks_uri === null) {
        const document = await this.get(`${this.issuer}/.well-known/openid-configuration`);
        // OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be
        // identical to the Issuer URL that was used as the prefix".
        if (document.issuer !== this.issuer) throw new Error(`discovery names issuer ${document.issuer}`);
        this.state.jwks_uri = document.jwks_uri;
      }
      keys = (await this.get(this.state.jwks_uri)).keys;
      if (!Array.isArray(keys)) throw new Error('the JWKS has no keys array');
    } catch (error) {
      if (this.state.keys.length === 0) throw new KeysUnavailable(`cannot fetch the issuer's keys: ${error.message}`);
      log(`JWKS fetch failed (${error.message}); keeping the keys held`);
      this.state.fetched_at = Math.max(this.state.fetched_at, now - MAXIMUM_AGE + RETRY_INTERVAL);
      return;
    }
    Object.assign(this.state, { keys, fetched_at: now });
    log(`fetched ${keys.length} keys from ${this.state.jwks_uri} (${reason})`);
    if (this.path) {
      writeFileSync(`${this.path}.tmp`, JSON.stringify(this.state));
      renameSync(`${this.path}.tmp`, this.path);
    }
  }

  get(url) {
    return new Promise((resolve, reject) => {
      // no-cache (RFC 9111 §5.2.1.4): past the issuer's 2-second copy, so a
      // refetch for a kid just rotated in finds it.
      const options = { ca: this.ca, timeout: 5000, headers: { 'Cache-Control': 'no-cache' } };
      const request = get(url, options, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => { body += chunk; });
        response.on('end', () => {
          if (response.statusCode !== 200) return reject(new Error(`${url} answered ${response.statusCode}`));
          try { resolve(JSON.parse(body)); } catch (error) { reject(error); }
        });
      });
      request.on('timeout', () => request.destroy(new Error(`${url} timed out`)));
      request.on('error', reject);
    });
  }
}

/**
 * The verified claims of a request's Authorization header, or a thrown
 * Refusal (or KeysUnavailable). The checks run in a fixed order: header,
 * key, signature, then claims.
 */
export async function authenticate(authorization, policy, keys, now = Math.floor(Date.now() / 1000)) {
  const token = bearerToken(authorization);
  const parts = token.split('.');
  if (parts.length !== 3) throw new Refusal('malformed_token', 'the access token is not a well-formed JWT');
  const header = decodeSegment(parts[0]);
  checkAlgorithm(header);
  checkType(header);
  checkCritical(header);
  const key = await signingKey(header, keys, now);
  checkSignature(parts, key);
  const claims = decodeSegment(parts[1]);
  checkRequired(claims);
  checkIssuer(claims, policy);
  checkTimeWindow(claims, now);
  checkAudience(claims, policy);
  checkScope(claims, policy);
  checkNotBound(claims);
  return claims;
}

function bearerToken(authorization) {
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token (the scheme is case-insensitive).
  const [scheme, ...rest] = (authorization ?? '').trim().split(' ');
  if (scheme.toLowerCase() !== 'bearer') {
    throw new Refusal('missing_token', 'an access token is required (Authorization: Bearer)');
  }
  const token = rest.join(' ').trim();
  if (!token) throw new Refusal('malformed_token', 'the Authorization header is not a valid Bearer credential');
  return token;
}

// RFC 7519 §7.2: "base64url decode the encoded representation of the JOSE
// Header" ... "Verify that the resulting octet sequence is ... a completely
// valid JSON object". (Buffer skips characters outside base64url: refuse them first.)
function decodeSegment(segment) {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(segment)) throw new Error('not base64url');
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    return value;
  } catch {
    throw new Refusal('malformed_token', 'the access token is not a well-formed JWT');
  }
}

function checkAlgorithm(header) {
  // RFC 8725 §3.1: "Libraries MUST enable the caller to specify a supported
  // set of algorithms and MUST NOT use any other algorithms". RFC 9068 §4:
  // "The resource server MUST reject any JWT in which the value of "alg" is "none"."
  if (![...ALGORITHMS.values()].includes(header.alg)) {
    throw new Refusal('invalid_signature', 'the access token is not signed with RS256, ES256 or EdDSA');
  }
}

function checkType(header) {
  // RFC 9068 §4: "Resource servers MUST verify that the "typ" header value is
  // "at+jwt" or "application/at+jwt" and reject tokens carrying any other value."
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
  if (typ !== 'at+jwt' && typ !== 'application/at+jwt') {
    throw new Refusal('malformed_token', 'the token is not a JWT access token (typ at+jwt)');
  }
}

function checkCritical(header) {
  // RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are
  // not understood and supported by the recipient, then the JWS is invalid."
  if ('crit' in header) {
    throw new Refusal('malformed_token', 'the access token uses unsupported critical header parameters');
  }
}

async function signingKey(header, keys, now) {
  // RFC 7515 §4.1.4: "The "kid" (key ID) Header Parameter is a hint
  // indicating which key was used to secure the JWS."
  const key = typeof header.kid === 'string' ? await keys.key(header.kid, now) : null;
  if (!key) throw new Refusal('unknown_signing_key', 'the access token is signed with a key the issuer does not publish');
  // RFC 8725 §3.1: a key is used with its own algorithm only: an RSA key
  // never verifies an ES256 token, whatever the token's alg says.
  if (key.alg !== header.alg) throw new Refusal('invalid_signature', 'the access token signature does not verify');
  return key;
}

function checkSignature(parts, { alg, key }) {
  // RFC 7515 §5.2: "Validate the JWS Signature against the JWS Signing Input
  // ... If any of the listed steps fails, then the signature or MAC cannot be validated."
  // RFC 7518 §3.4: an ES256 signature is R || S (Node's 'ieee-p1363'), not DER.
  // RFC 8037 §3.1: EdDSA signs the JWS Signing Input itself, with no digest.
  const valid = /^[A-Za-z0-9_-]+$/.test(parts[2])
    && verify(alg === 'EdDSA' ? null : 'sha256', Buffer.from(`${parts[0]}.${parts[1]}`),
      { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2], 'base64url'));
  if (!valid) throw new Refusal('invalid_signature', 'the access token signature does not verify');
}

function checkRequired(claims) {
  // RFC 9068 §2.2: iss, exp, aud, sub and iat are REQUIRED.
  const isText = (value) => typeof value === 'string' && value !== '';
  const audience = [claims.aud].flat();
  const valid = isText(claims.iss) && isText(claims.sub) && audience.length > 0 && audience.every(isText)
    && typeof claims.exp === 'number' && typeof claims.iat === 'number'
    && ['undefined', 'number'].includes(typeof claims.nbf) && ['undefined', 'string'].includes(typeof claims.scope);
  if (!valid) throw new Refusal('malformed_token', 'the access token claims are missing or of the wrong type');
}

function checkIssuer(claims, policy) {
  // RFC 9068 §4: "The issuer identifier for the authorization server ...
  // MUST exactly match the value of the "iss" claim."
  if (claims.iss !== policy.issuer) {
    throw new Refusal('invalid_issuer', `the access token was not issued by ${policy.issuer}`);
  }
}

function checkTimeWindow(claims, now) {
  // RFC 9068 §4: "The current time MUST be before the time represented by
  // the "exp" claim. Implementers MAY provide for some small leeway".
  if (now >= claims.exp + LEEWAY) throw new Refusal('token_expired', 'the access token has expired');
  // RFC 7519 §4.1.5: "the current date/time MUST be after or equal to the
  // not-before date/time listed in the "nbf" claim." An iat in the future likewise.
  if (now + LEEWAY < (claims.nbf ?? 0) || now + LEEWAY < claims.iat) {
    throw new Refusal('token_expired', 'the access token is not valid yet');
  }
}

function checkAudience(claims, policy) {
  // RFC 9068 §4: "The resource server MUST validate that the "aud" claim
  // contains a resource indicator value corresponding to an identifier the
  // resource server expects for itself."
  if (![claims.aud].flat().includes(policy.audience)) {
    throw new Refusal('invalid_audience', `the access token is not meant for ${policy.audience}`);
  }
}

function checkScope(claims, policy) {
  // RFC 9068 §2.2.3: the scope claim is "a space-separated list of scopes".
  // RFC 6750 §3.1 insufficient_scope: "The request requires higher privileges
  // than provided by the access token."
  if (!(claims.scope ?? '').split(' ').includes(policy.scope)) {
    throw new Refusal('insufficient_scope', `the access token does not grant ${policy.scope}`);
  }
}

function checkNotBound(claims) {
  // RFC 9449 §7.2: "such a protected resource MUST reject a DPoP-bound access
  // token received as a bearer token". This program takes Bearer tokens only.
  if (claims.cnf !== undefined) {
    throw new Refusal('token_requires_dpop', 'the access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof');
  }
}

function log(message) {
  process.stderr.write(`jwks: ${message}\n`);
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      issuer: { type: 'string' },
      audience: { type: 'string' },
      scope: { type: 'string' },
      'ca-file': { type: 'string' },
      'jwks-cache': { type: 'string' },
    },
  });
  if (!values.issuer || !values.audience || !values.scope || positionals.length !== 1) {
    process.stderr.write('usage: verify.mjs --issuer URL --audience URL --scope SCOPE [--ca-file PEM] [--jwks-cache FILE] TOKEN\n');
    return 2;
  }
  const policy = { issuer: values.issuer, audience: values.audience, scope: values.scope };
  const keys = new KeySet(values.issuer, values['ca-file'], values['jwks-cache']);
  try {
    console.log(JSON.stringify(await authenticate(`Bearer ${positionals[0]}`, policy, keys)));
    return 0;
  } catch (error) {
    if (error instanceof Refusal) {
      console.log(JSON.stringify({ status: error.status, error: error.error, error_description: error.message,
        www_authenticate: error.challenge(policy) }));
      return 1;
    }
    if (error instanceof KeysUnavailable) {
      console.log(JSON.stringify({ status: 503, error: 'temporarily_unavailable', error_description: error.message }));
      return 2;
    }
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
