// Accounts (team mode): sign-in, who am I, API tokens, users and the audit log.
import { del, get, post, qs, setCSRFToken } from './client';
import type { AuditEntry, CreatedToken, Me, Token, User } from './types';

/** Who the page acts as; also remembers the session's CSRF token for later writes. */
export async function me(): Promise<Me> {
  const m = await get<Me>('/api/auth/me');
  setCSRFToken(m.csrf_token);
  return m;
}

export async function login(name: string, password: string): Promise<Me> {
  const m = await post<Me>('/api/auth/login', { name, password });
  setCSRFToken(m.csrf_token);
  return m;
}

export async function logout(): Promise<void> {
  await post('/api/auth/logout');
  setCSRFToken('');
}

export const listTokens = (user?: string) => get<Token[]>(`/api/tokens${qs({ user })}`);
export const createToken = (body: { name: string; read_only: boolean; metrics_only?: boolean; expires_in: string; user?: string }) => post<CreatedToken>('/api/tokens', body);
export const revokeToken = (id: string) => del<Token>(`/api/tokens/${encodeURIComponent(id)}`);
export const listUsers = () => get<User[]>('/api/users');
export const listAudit = (q: { actor?: string; action?: string; skip?: number; limit?: number }) => get<AuditEntry[]>(`/api/audit${qs(q)}`);

/** What POST /api/admin/prune deleted (or, for a dry run, would delete). */
export interface PruneReport {
  tasks: number;
  studies: number;
  before: string;
  dry_run: boolean;
  vacuumed: boolean;
}
/** Deletes finished, unpinned runs and studies older than an age such as 180d (admins). */
export const prune = (olderThan: string, dryRun: boolean) => post<PruneReport>('/api/admin/prune', { older_than: olderThan, dry_run: dryRun });
