// Sign-in, and the account page: who you are, your API tokens, and for admins the users
// and the audit log.
import { accounts, ApiError } from '../api';
import type { Me, Token } from '../api';
import { button, confirmDialog, empty, errorBox, field, h, toast } from '../dom';
import { fmtDateTime } from '../format';
import { navigate } from '../router';

/** Told the page's identity (shown in the header): on sign-in, at start, on sign-out. */
let onChange: (m: Me | null) => void = () => {};

export function onIdentity(fn: (m: Me | null) => void): void {
  onChange = fn;
}

export function setIdentity(m: Me | null): void {
  onChange(m);
}

export function loginView(main: HTMLElement, _p: Record<string, string>, query: URLSearchParams): void {
  const name = h('input', { type: 'text', name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const msg = h('p', { class: 'error-text', role: 'alert', id: 'login-error' });
  const submit = h('button', { class: 'btn primary', type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card narrow',
      'aria-labelledby': 'login-title',
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        msg.textContent = '';
        submit.disabled = true;
        try {
          setIdentity(await accounts.login(name.value.trim(), password.value));
          const next = query.get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('/login') ? next : '/', true);
        } catch (e) {
          msg.textContent = e instanceof ApiError ? e.message : String(e);
          password.value = '';
          password.focus();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('h1', { id: 'login-title' }, 'Sign in'),
    field('User name', name),
    field('Password', password),
    msg,
    h('div', { class: 'actions' }, submit),
  );
  main.replaceChildren(form);
  name.focus();
}

export async function accountView(main: HTMLElement): Promise<void> {
  main.replaceChildren(h('h1', null, 'Account'), h('p', { class: 'muted' }, 'Loading…'));
  let me: Me;
  try {
    me = await accounts.me();
  } catch (e) {
    main.replaceChildren(h('h1', null, 'Account'), errorBox(e));
    return;
  }
  if (!me.accounts) {
    main.replaceChildren(
      h('h1', null, 'Account'),
      empty('Accounts are off: this service runs for one user on this machine. Add users with `backtestd user add` and listen beyond loopback (or set AUTH=on) to share it with a team.'),
    );
    return;
  }
  const tokens = h('div', { id: 'token-list' });
  const created = h('div', { 'aria-live': 'polite' });
  const loadTokens = async () => {
    try {
      const list = await accounts.listTokens();
      tokens.replaceChildren(tokenTable(list, loadTokens));
    } catch (e) {
      tokens.replaceChildren(errorBox(e));
    }
  };
  const tname = h('input', { type: 'text', maxlength: 100, placeholder: 'e.g. ci' });
  const expires = h('select', null, ...[['', 'Never'], ['30d', '30 days'], ['90d', '90 days'], ['365d', '1 year']].map(([v, l]) => h('option', { value: v, selected: v === '90d' }, l)));
  const readOnly = h('input', { type: 'checkbox' });
  const metricsOnly = h('input', { type: 'checkbox', id: 'metrics-only' });
  const form = h(
    'form',
    {
      class: 'form-row',
      onsubmit: async (ev: Event) => {
        ev.preventDefault();
        try {
          const t = await accounts.createToken({ name: tname.value.trim(), read_only: readOnly.checked, metrics_only: metricsOnly.checked, expires_in: expires.value });
          const secret = h('input', { type: 'text', readonly: true, value: t.token, class: 'mono', size: 50, 'aria-label': 'New token' });
          created.replaceChildren(
            h(
              'div',
              { class: 'notice ok', id: 'new-token' },
              h('p', null, h('strong', null, `Token ${t.id} created. `), 'Copy it now: it is not shown again. Send it as ', h('code', null, 'Authorization: Bearer <token>'), '.'),
              secret,
              h('button', { class: 'btn small', type: 'button', onclick: () => navigator.clipboard?.writeText(t.token).then(() => toast('Copied', 'ok')) }, 'Copy'),
            ),
          );
          secret.select();
          tname.value = '';
          await loadTokens();
        } catch (e) {
          toast(e instanceof Error ? e.message : String(e), 'error');
        }
      },
    },
    field('Name', tname),
    field('Expires', expires),
    h('div', { class: 'field checkbox' }, h('label', null, readOnly, ' Read-only')),
    ...(me.role === 'admin' ? [h('div', { class: 'field checkbox' }, h('label', { title: 'Reads /metrics and nothing else: for a Prometheus server' }, metricsOnly, ' Metrics only'))] : []),
    h('div', { class: 'field' }, h('button', { class: 'btn primary', type: 'submit' }, 'Create token')),
  );
  main.replaceChildren(
    h('h1', null, 'Account'),
    h('dl', { class: 'meta' }, h('dt', null, 'User'), h('dd', { id: 'account-user' }, me.user ?? ''), h('dt', null, 'Role'), h('dd', null, roleText(me.role))),
    h('h2', null, 'API tokens'),
    h('p', { class: 'muted' }, 'For scripts and CI. A token acts with your role; a read-only one only reads. Revoking one takes effect at once.'),
    form,
    created,
    tokens,
    ...(me.role === 'admin' ? [adminSection()] : []),
  );
  await loadTokens();
}

function roleText(role: string): string {
  return (
    {
      admin: 'admin — everything, including users, tokens and data imports',
      researcher: 'researcher — creates strategies and runs backtests; changes only their own; reads everything',
      viewer: 'viewer — reads everything, changes nothing',
    }[role] ?? role
  );
}

function tokenTable(list: Token[], reload: () => Promise<void>): HTMLElement {
  if (!list.length) return empty('No tokens yet.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table compact' },
      h('caption', { class: 'sr-only' }, 'API tokens'),
      h('thead', null, h('tr', null, ...['Id', 'Name', 'Access', 'Created', 'Expires', 'Last used', 'Status', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h(
        'tbody',
        null,
        list.map((t) =>
          h(
            'tr',
            null,
            h('td', null, h('code', null, t.id)),
            h('td', null, t.name || '—'),
            h('td', null, t.metrics_only ? 'metrics only' : t.read_only ? 'read-only' : 'read-write'),
            h('td', null, fmtDateTime(t.created_at)),
            h('td', null, t.expires_at ? fmtDateTime(t.expires_at) : 'never'),
            h('td', null, t.last_used_at ? fmtDateTime(t.last_used_at) : 'never'),
            h('td', null, t.revoked_at ? `revoked ${fmtDateTime(t.revoked_at)}` : t.expires_at && Date.parse(t.expires_at) < Date.now() ? 'expired' : 'active'),
            h(
              'td',
              { class: 'actions' },
              t.revoked_at
                ? null
                : h(
                    'button',
                    {
                      class: 'btn small danger',
                      type: 'button',
                      onclick: async () => {
                        if (!(await confirmDialog(`Revoke ${t.id}?`, 'Scripts using it stop working at once.', 'Revoke'))) return;
                        try {
                          await accounts.revokeToken(t.id);
                          toast(`${t.id} revoked`, 'ok');
                          await reload();
                        } catch (e) {
                          toast(e instanceof Error ? e.message : String(e), 'error');
                        }
                      },
                    },
                    'Revoke',
                  ),
            ),
          ),
        ),
      ),
    ),
  );
}

function adminSection(): HTMLElement {
  const users = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  const audit = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  accounts.listUsers().then(
    (list) =>
      users.replaceChildren(
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table compact', id: 'user-table' },
            h('caption', { class: 'sr-only' }, 'Users'),
            h('thead', null, h('tr', null, ...['Name', 'Role', 'Status', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', null, list.map((u) => h('tr', null, h('td', null, u.name), h('td', null, u.role), h('td', null, u.disabled ? 'disabled' : 'active'), h('td', null, fmtDateTime(u.created_at))))),
          ),
        ),
      ),
    (e) => users.replaceChildren(errorBox(e)),
  );
  accounts.listAudit({ limit: 50 }).then(
    (list) =>
      audit.replaceChildren(
        list.length
          ? h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'table compact', id: 'audit-table' },
                h('caption', { class: 'sr-only' }, 'Audit log'),
                h('thead', null, h('tr', null, ...['When', 'Who', 'Action', 'Target', 'From'].map((c) => h('th', { scope: 'col' }, c)))),
                h('tbody', null, list.map((x) => h('tr', null, h('td', null, fmtDateTime(x.at)), h('td', null, x.actor ?? '—'), h('td', null, x.action), h('td', null, x.target), h('td', null, x.remote_addr)))),
              ),
            )
          : empty('Nothing recorded yet.'),
      ),
    (e) => audit.replaceChildren(errorBox(e)),
  );
  return h(
    'section',
    null,
    h('h2', null, 'Users'),
    h('p', { class: 'muted' }, 'Add users and change roles with ', h('code', null, 'backtestd user'), ' or the API (POST /api/users, PATCH /api/users/{name}).'),
    users,
    retentionSection(),
    h('h2', null, 'Audit log'),
    h('p', { class: 'muted' }, 'The latest 50 entries; GET /api/audit filters and pages, and the bi_audit view has them all.'),
    audit,
  );
}

/** Sends the page to sign-in, keeping where it was. */
export function toLogin(from: string): void {
  setIdentity(null);
  if (from.startsWith('/login')) return;
  navigate(`/login?next=${encodeURIComponent(from)}`, true);
}

/** Retention: delete finished, unpinned runs and studies older than an age (admins). */
function retentionSection(): HTMLElement {
  const age = h('input', { id: 'prune-age', type: 'text', value: '180d', size: 6, 'aria-label': 'Older than' }) as HTMLInputElement;
  const out = h('p', { class: 'muted', id: 'prune-result', role: 'status' });
  const run = async (dryRun: boolean) => {
    const olderThan = age.value.trim();
    if (!dryRun && !(await confirmDialog(`Delete runs and studies older than ${olderThan}?`, 'Finished runs with their results and logs, and finished studies, go for good; pinned ones stay. To keep a copy, use backtestd prune --export.', 'Delete', 'Keep them'))) return;
    try {
      const r = await accounts.prune(olderThan, dryRun);
      out.textContent = `${dryRun ? 'Would delete' : 'Deleted'} ${r.tasks} runs and ${r.studies} studies created before ${fmtDateTime(r.before)}.`;
    } catch (e) {
      toast((e as Error).message, 'error');
    }
  };
  return h(
    'section',
    null,
    h('h2', null, 'Retention'),
    h('p', { class: 'muted' }, 'Deletes finished runs and studies older than an age (180d, 26w, 36h), except pinned ones. RETENTION=180d does it daily.'),
    h('div', { class: 'field inline' }, h('label', { for: 'prune-age' }, 'Older than '), age, ' ', button('Count', () => void run(true), 'btn small', { id: 'prune-count' }), ' ', button('Delete', () => void run(false), 'btn small danger', { id: 'prune-run' })),
    out,
  );
}
