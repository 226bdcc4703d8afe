import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { developmentKeyId, request } from '../api.ts';
import { InstantInput } from '../components/InstantControls.tsx';
import { Empty, ErrorNotice, Loading } from '../components/Status.tsx';
import {
  ExplorerCreateKeyDocument,
  ExplorerKeysDocument,
  ExplorerRevokeKeyDocument,
  type Scope,
} from '../generated/operations.ts';
import { formatInstant } from '../instants.ts';

const SCOPE_LABEL: Record<Scope, string> = { READ: 'read', WRITE: 'write', ADMIN: 'admin' };

/**
 * The workspace's API keys, for a key with the admin scope: make one (its secret shown
 * once, to copy now), list them with their status and last use, revoke one (asked twice).
 * What a key may grant is the gateway's rule: only scopes the key asking holds, and never
 * past its own expiry; the form offers only those scopes and shows the gateway's refusal.
 */
export function KeysPage({
  apiKey,
  scopes,
  onWrongKey,
}: {
  apiKey: string;
  scopes: readonly Scope[];
  onWrongKey: () => void;
}) {
  const queryClient = useQueryClient();
  const keys = useQuery({
    queryKey: ['keys', apiKey],
    queryFn: ({ signal }) => request(apiKey, ExplorerKeysDocument, {}, signal),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['keys', apiKey] });
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const create = useMutation({
    mutationFn: (input: { name: string; scopes: Scope[]; expiresAt: string | null }) =>
      request(apiKey, ExplorerCreateKeyDocument, input),
    onSuccess: (answer) => {
      setCreated({ name: answer.createApiKey.apiKey.name ?? '', secret: answer.createApiKey.key });
      void refresh();
    },
  });
  const [confirming, setConfirming] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (keyId: string) => request(apiKey, ExplorerRevokeKeyDocument, { keyId }),
    onSuccess: () => {
      setConfirming(null);
      void refresh();
    },
  });

  const developmentId = developmentKeyId();
  if (!scopes.includes('ADMIN')) {
    return <Empty>Managing keys needs a key with the admin scope; this one has not.</Empty>;
  }
  return (
    <section className="keys-page" data-testid="keys-page">
      <h2>API keys</h2>
      <CreateKeyForm
        scopes={scopes}
        busy={create.isPending}
        onSubmit={(input) => {
          setCreated(null);
          create.mutate(input);
        }}
      />
      {create.isError && <ErrorNotice error={create.error} onWrongKey={onWrongKey} />}
      {created && <NewSecret name={created.name} secret={created.secret} />}
      {revoke.isError && <ErrorNotice error={revoke.error} onWrongKey={onWrongKey} />}
      {keys.isPending ? (
        <Loading what="the keys" />
      ) : keys.isError ? (
        <ErrorNotice error={keys.error} onWrongKey={onWrongKey} retry={() => keys.refetch()} />
      ) : (
        <table className="keys" aria-label="API keys of this workspace">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key id</th>
              <th scope="col">Scopes</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.apiKeys.map((key) => (
              <tr key={key.keyId} data-key-id={key.keyId} data-status={key.status}>
                <td>
                  <KeyName keyId={key.keyId} name={key.name} developmentId={developmentId} />
                </td>
                <td>
                  <code>{key.keyId}</code>
                </td>
                <td>{key.scopes.map((s) => SCOPE_LABEL[s]).join(', ')}</td>
                <td>{key.status.toLowerCase()}</td>
                <td>{formatInstant(key.createdAt)}</td>
                <td>{key.expiresAt ? formatInstant(key.expiresAt) : 'never'}</td>
                <td>{key.lastUsedAt ? formatInstant(key.lastUsedAt) : '—'}</td>
                <td>
                  {key.status !== 'REVOKED' &&
                    (confirming === key.keyId ? (
                      <button
                        type="button"
                        className="danger"
                        disabled={revoke.isPending}
                        onClick={() => revoke.mutate(key.keyId)}
                      >
                        Confirm: revoke {key.name ?? key.keyId}
                      </button>
                    ) : (
                      <button
                        type="button"
                        onClick={() => setConfirming(key.keyId)}
                        aria-label={`Revoke ${key.name ?? key.keyId}`}
                      >
                        Revoke
                      </button>
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * A key's name. A key made through the API has one; one made outside it has none: the
 * development key `npm start` makes and prints (known when this page was handed it) or
 * one made with the CLI (`npm run keys`). Labelled by what this page knows.
 */
function KeyName({
  keyId,
  name,
  developmentId,
}: {
  keyId: string;
  name: string | null;
  developmentId: string | null;
}) {
  if (keyId === developmentId) {
    return (
      <>
        {name}
        {name && ' '}
        <span className="badge" data-testid="development-key">
          development key
        </span>{' '}
        <span className="hint">(printed by npm start)</span>
      </>
    );
  }
  if (name !== null) return name;
  return (
    <span className="hint">
      {developmentId === null
        ? '(no name: made with the CLI, or the development key printed at start)'
        : '(no name: made with the CLI)'}
    </span>
  );
}

function CreateKeyForm({
  scopes,
  busy,
  onSubmit,
}: {
  scopes: readonly Scope[];
  busy: boolean;
  onSubmit: (input: { name: string; scopes: Scope[]; expiresAt: string | null }) => void;
}) {
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Scope[]>(['READ']);
  const [expiresAt, setExpiresAt] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit({ name: name.trim(), scopes: chosen, expiresAt });
  };
  return (
    <form className="key-create" onSubmit={submit} aria-label="Make a key">
      <label htmlFor="key-name">Name</label>
      <input
        id="key-name"
        value={name}
        maxLength={100}
        required
        placeholder="ingest pipeline"
        onChange={(e) => setName(e.currentTarget.value)}
      />
      <fieldset className="modes">
        <legend>Scopes (only those this key holds)</legend>
        {scopes.map((scope) => (
          <label key={scope}>
            <input
              type="checkbox"
              checked={chosen.includes(scope)}
              onChange={(e) => {
                const checked = e.currentTarget.checked;
                setChosen((list) => (checked ? [...list, scope] : list.filter((s) => s !== scope)));
              }}
            />{' '}
            {SCOPE_LABEL[scope]}
          </label>
        ))}
      </fieldset>
      <InstantInput
        label="Expires at"
        hint="empty: never (or when this key does)"
        empty="never"
        value={expiresAt}
        testId="key-expires-at"
        onChange={setExpiresAt}
      />
      <button type="submit" disabled={busy || chosen.length === 0 || name.trim() === ''}>
        Make the key
      </button>
    </form>
  );
}

/** The new key's secret, shown this once, with a button to copy it. */
function NewSecret({ name, secret }: { name: string; secret: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <div className="status new-secret" role="status" data-testid="new-secret">
      <p>The key "{name}", shown this once: copy it now. The gateway keeps only a hash of it.</p>
      <p>
        <code data-testid="secret">{secret}</code>{' '}
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(secret).then(
              () => setCopied('yes'),
              () => setCopied('no'),
            )
          }
        >
          Copy
        </button>{' '}
        {copied === 'yes' && 'Copied.'}
        {copied === 'no' && 'The browser refused: select the key and copy it.'}
      </p>
    </div>
  );
}
