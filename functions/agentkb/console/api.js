// The public API, same origin, with the signed-in user's credential. Under a stage (/prod/console) the API is
// the stage's root (/prod); on `agentkb serve` it is the server's root.
import { session } from './signin.js';

export const BASE = location.pathname.replace(/\/console(\/.*)?$/, '');

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || (status ? `HTTP ${status}` : 'The API did not answer'));
    this.status = status;
    this.code = error.code;
    this.details = error.details;
  }
}

export function url(path, query) {
  const target = new URL(BASE + path, location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') target.searchParams.set(name, value);
  }
  return target;
}

function parse(text) {
  try { return text ? JSON.parse(text) : null; } catch { return { error: { message: text.slice(0, 200) } }; }
}

let onUnauthorized = () => {};
export function whenUnauthorized(handler) { onUnauthorized = handler; }

export async function api(method, path, { query, body, signingIn = false } = {}) {
  const headers = { ...session.authHeaders() };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url(path, query), { method, headers, credentials: 'omit', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, { error: { message: `The API did not answer: ${error.message}` } });
  }
  const data = parse(await res.text());
  if (res.status === 401 && !signingIn) onUnauthorized();  // a refused sign-in is answered by its form
  if (!res.ok) throw new ApiError(res.status, data);
  return { status: res.status, data, headers: res.headers };
}

/** POST with upload progress (fetch reports none): resolves {status, data}, never rejects. */
export function postWithProgress(path, query, body, onProgress) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url(path, query));
    for (const [name, value] of Object.entries(session.authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Content-Type', 'application/json');
    xhr.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(event.loaded / event.total); };
    xhr.onload = () => resolve({ status: xhr.status, data: parse(xhr.responseText) });
    xhr.onerror = () => resolve({ status: 0, data: { error: { message: 'The API did not answer' } } });
    xhr.send(JSON.stringify(body));
  });
}

/** Every page of a paged list route ({data, nextCursor}), up to `max` items. */
export async function listAll(path, query, max = 1000) {
  const items = [];
  let cursor;
  do {
    const { data } = await api('GET', path, { query: { ...query, limit: 200, cursor } });
    items.push(...data.data);
    cursor = data.nextCursor;
  } while (cursor && items.length < max);
  return items;
}
