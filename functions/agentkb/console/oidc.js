// Sign-in with the configured OIDC issuer: authorization code + PKCE (RFC 7636, S256) for a public client, as a
// browser app must (RFC 9700 §2.1.1; no secret, no implicit flow). The issuer and client come from the same-origin
// config.json; the issuer's discovery document names its endpoints. What the round trip needs (state, nonce,
// verifier) waits in sessionStorage, and is spent by the callback whatever its outcome.
const PENDING = 'agentkb.console.oidc-pending';

function b64url(bytes) {
  return btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_')
    .replace(/=+$/, '');
}

function random(size) { return b64url(crypto.getRandomValues(new Uint8Array(size))); }

/** The claims of a JWT, read (never trusted: the API verifies the access token; see completeSignIn). */
export function claimsOf(token) {
  try {
    const part = String(token).split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(part + '='.repeat((4 - (part.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  } catch { return null; }
}

function origin(url) { return new URL(url).origin; }
function usable(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || (u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname));
  } catch { return false; }
}

async function discover(config) {
  const res = await fetch(`${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
    { credentials: 'omit', cache: 'no-store' });
  if (!res.ok) throw new Error(`The identity provider's discovery document answered HTTP ${res.status}`);
  const doc = await res.json();
  if (String(doc.issuer).replace(/\/$/, '') !== config.issuer.replace(/\/$/, '')) {
    throw new Error('The discovery document names another issuer: refused.');
  }
  if (!usable(doc.authorization_endpoint) || !usable(doc.token_endpoint)) {
    throw new Error('The discovery document has no usable authorization or token endpoint.');
  }
  if (origin(doc.token_endpoint) !== origin(config.issuer)) {
    throw new Error("The issuer's token endpoint is on another origin, which this console's policy does not reach.");
  }
  const methods = doc.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) throw new Error('The issuer does not support PKCE S256.');
  return doc;
}

function redirectUri() { return location.origin + location.pathname; }

/** Leave for the issuer's authorization endpoint; resolves only with a problem (the page navigates away). */
export async function startSignIn(config, workspace) {
  const doc = await discover(config);
  const verifier = random(32);  // 43 characters of [A-Za-z0-9_-]: RFC 7636 §4.1
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const pending = { state: random(16), nonce: random(16), verifier, workspace, issuer: config.issuer,
    clientId: config.clientId, tokenEndpoint: doc.token_endpoint, redirectUri: redirectUri(),
    returnTo: location.hash && location.hash !== '#/signin' ? location.hash : '#/kbs' };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const scope = [config.scope, config.workspaceScope ? config.workspaceScope + workspace : ''].join(' ').trim();
  const target = new URL(doc.authorization_endpoint);
  for (const [name, value] of Object.entries({ response_type: 'code', client_id: config.clientId,
    redirect_uri: pending.redirectUri, scope, state: pending.state, nonce: pending.nonce,
    code_challenge: challenge, code_challenge_method: 'S256' })) target.searchParams.set(name, value);
  location.assign(target.toString());
}

function said(body) {
  return body && body.error ? `${body.error}${body.error_description ? ` - ${body.error_description}` : ''}` : '';
}

async function exchange(pending, code) {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri,
    client_id: pending.clientId, code_verifier: pending.verifier });
  let res;
  try {
    res = await fetch(pending.tokenEndpoint, { method: 'POST', body: form, credentials: 'omit', cache: 'no-store' });
  } catch (error) {
    return { problem: `The identity provider's token endpoint did not answer: ${error.message}` };
  }
  let body = null;
  try { body = await res.json(); } catch { body = null; }
  if (!res.ok) return { problem: `The identity provider refused the code: ${said(body) || `HTTP ${res.status}`}` };
  if (!body || typeof body.access_token !== 'string' || String(body.token_type).toLowerCase() !== 'bearer') {
    return { problem: 'The identity provider answered no bearer access token.' };
  }
  return { body };
}

// OIDC Core §3.1.3.7: the ID token came straight from the token endpoint over TLS, so its issuer, audience,
// nonce and expiry are checked here and its signature is not (the API verifies the access token it is given).
function idProblem(pending, idToken) {
  const claims = claimsOf(idToken);
  if (!claims) return 'The identity provider answered no readable ID token.';
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (String(claims.iss).replace(/\/$/, '') !== pending.issuer.replace(/\/$/, '')) return 'ID token: another issuer.';
  if (!audiences.includes(pending.clientId)) return 'ID token: another audience.';
  if (claims.nonce !== pending.nonce) return 'ID token: the nonce is not this sign-in\'s: refused.';
  if (!(claims.exp * 1000 > Date.now())) return 'ID token: expired.';
  return null;
}

/** When this load is the issuer's callback: {credential} or {problem}; else null. The URL loses code and state. */
export async function completeSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has('state') && !params.has('code') && !params.has('error')) return null;
  let pending = null;
  try { pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null'); } catch { pending = null; }
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', location.pathname + ((pending && pending.returnTo) || ''));
  if (!pending || params.get('state') !== pending.state) {
    return { problem: 'The sign-in answer is not the one this tab asked for (state mismatch): refused.' };
  }
  if (params.get('iss') && params.get('iss') !== pending.issuer) {
    return { problem: 'The sign-in answer came from another issuer: refused.' };
  }
  if (params.get('error')) {
    return { problem: `The identity provider did not sign you in: ${said(Object.fromEntries(params))}` };
  }
  const { body, problem } = await exchange(pending, params.get('code') || '');
  if (problem) return { problem };
  const idCheck = body.id_token ? idProblem(pending, body.id_token) : 'The identity provider answered no ID token.';
  if (idCheck) return { problem: idCheck };
  const id = claimsOf(body.id_token) || {};
  const access = claimsOf(body.access_token) || {};
  const ends = [Number(body.expires_in) > 0 ? Date.now() + Number(body.expires_in) * 1000 : Infinity,
    Number(access.exp) > 0 ? access.exp * 1000 : Infinity];
  const expiresAt = Math.min(...ends);
  return { credential: { kind: 'bearer', secret: body.access_token, workspace: pending.workspace,
    who: id.preferred_username || id.email || id.name || id.sub || access.sub,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : null } };
}
