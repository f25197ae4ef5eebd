// The HTTP client beneath the resource modules (strategies, backtests, results, data). Every
// call answers the payload: envelopes ({code, message, data}) are
// unwrapped, errors become ApiError with the server's `detail` as the message.

export class ApiError extends Error {
  constructor(
    message: string,
    public status: number,
    public body: unknown,
  ) {
    super(message);
  }
}

/**
 * The prefix the service runs under (BASE_PATH): the server writes it into the page's
 * `<meta name="base-path">`. Without it (the Vite dev server) it is read from where the page
 * is served.
 */
export function basePath(pathname = window.location.pathname, served = servedBasePath()): string {
  if (served !== null) return served.replace(/\/+$/, '');
  const i = pathname.indexOf('/ui');
  return i > 0 ? pathname.slice(0, i) : '';
}

function servedBasePath(): string | null {
  if (typeof document === 'undefined') return null;
  return document.querySelector<HTMLMetaElement>('meta[name="base-path"]')?.content ?? null;
}

export function apiURL(path: string): string {
  return basePath() + path;
}

export function wsURL(path: string): string {
  const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${window.location.host}${basePath()}${path}`;
}

export function isEnvelope(v: unknown): v is { code: string; message: string; data: unknown } {
  return !!v && typeof v === 'object' && !Array.isArray(v) && 'code' in v && 'data' in v && 'message' in v;
}

/** The text to show a user for an error body: detail (string or FastAPI-style list), message, or the status. */
export function detailOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (typeof b.detail === 'string') return b.detail;
    if (Array.isArray(b.detail)) return b.detail.map((d) => (typeof d === 'string' ? d : (d as { msg?: string }).msg ?? JSON.stringify(d))).join('; ');
    if (typeof b.message === 'string' && b.message) return b.message;
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 300);
  return `Request failed with HTTP ${status}`;
}

/**
 * The session's CSRF token (from sign-in or GET /api/auth/me), sent with every write: the
 * service refuses cookie-authenticated writes without it.
 */
let csrfToken = '';
export function setCSRFToken(token: string | undefined): void {
  csrfToken = token ?? '';
}

/** Called when the service answers 401 (not signed in, or the session ended). */
let onUnauthenticated: (path: string) => void = () => {};
export function whenUnauthenticated(fn: (path: string) => void): void {
  onUnauthenticated = fn;
}

export async function request<T = unknown>(method: string, path: string, body?: unknown, opts: { raw?: boolean; contentType?: string; headers?: (h: Headers) => void } = {}): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: 'application/json' } };
  if (method !== 'GET' && csrfToken) (init.headers as Record<string, string>)['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) {
    if (typeof body === 'string' && opts.contentType) {
      init.body = body;
      (init.headers as Record<string, string>)['Content-Type'] = opts.contentType;
    } else {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
    }
  }
  let res: Response;
  try {
    res = await fetch(apiURL(path), init);
  } catch (e) {
    throw new ApiError(`Cannot reach the service: ${(e as Error).message}`, 0, null);
  }
  const text = await res.text();
  let data: unknown = text;
  if ((res.headers.get('Content-Type') ?? '').includes('json') && text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (res.status === 401) onUnauthenticated(path);
  opts.headers?.(res.headers);
  if (!res.ok) throw new ApiError(detailOf(data, res.status), res.status, data);
  if (isEnvelope(data) && data.code === 'error') throw new ApiError(data.message || 'The service reported an error', res.status, data);
  if (opts.raw) return data as T;
  return (isEnvelope(data) ? data.data : data) as T;
}

export const get = <T = unknown>(path: string) => request<T>('GET', path);
export const post = <T = unknown>(path: string, body?: unknown) => request<T>('POST', path, body ?? {});
export const put = <T = unknown>(path: string, body?: unknown) => request<T>('PUT', path, body);
export const del = <T = unknown>(path: string) => request<T>('DELETE', path);

export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}

/** Lists may come bare or wrapped in an object under a well-known key. */
export function listOf<T>(v: unknown, ...keys: string[]): T[] {
  if (Array.isArray(v)) return v as T[];
  if (v && typeof v === 'object') {
    for (const k of [...keys, 'items', 'data', 'results']) {
      const x = (v as Record<string, unknown>)[k];
      if (Array.isArray(x)) return x as T[];
    }
  }
  return [];
}
