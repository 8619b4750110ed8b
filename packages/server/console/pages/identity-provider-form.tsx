import { useState } from 'preact/hooks'
import type { IdentityProvider, RoleRef } from '../types'
import { ActionError, Checkbox, failedField, TextField, useAction } from '../ui/forms'
import { MappingRows } from '../ui/mapping-rows'
import { useOptions } from '../ui/paged'

type AttributeRow = { claim: string; attribute: string }
type RoleRow = { value: string; role_id: string }

/** The form's text for every field of a provider (docs/sso.md#identity-providers). */
interface ProviderDraft {
  name: string
  issuer: string
  clientId: string
  /** Typed by the admin; empty means "keep what is stored". */
  clientSecret: string
  removeSecret: boolean
  audiences: string
  usernameClaim: string
  roleClaim: string
  attributeMappings: AttributeRow[]
  roleMappings: RoleRow[]
  jitUsers: boolean
  isActive: boolean
  consoleSignIn: boolean
  adminClaim: string
  adminValue: string
}

function draftOf(p: IdentityProvider | undefined): ProviderDraft {
  return {
    name: p?.name ?? '',
    issuer: p?.issuer ?? '',
    clientId: p?.client_id ?? '',
    clientSecret: '',
    removeSecret: false,
    audiences: p?.audiences.join(', ') ?? '',
    usernameClaim: p?.username_claim ?? '',
    roleClaim: p?.role_claim ?? 'groups',
    attributeMappings: p?.attribute_mappings.map((m) => ({ ...m })) ?? [],
    roleMappings: p?.role_mappings.map((m) => ({ ...m })) ?? [],
    jitUsers: p?.jit_users ?? false,
    isActive: p?.is_active ?? true,
    consoleSignIn: p?.console_sign_in ?? false,
    adminClaim: p?.admin_claim?.claim ?? '',
    adminValue: p?.admin_claim?.value ?? '',
  }
}

const isBlankRow = (row: Record<string, string>) => Object.values(row).every((v) => v.trim() === '')

/**
 * The request body. The secret is sent only when typed (or removed on purpose), so saving other
 * fields never touches it; half-filled rows are sent as they are for the API to name them.
 */
function bodyOf(d: ProviderDraft): Record<string, unknown> {
  const secret = d.clientSecret ? { client_secret: d.clientSecret } : undefined
  const removal = d.removeSecret ? { client_secret: null } : {}
  const hasAdminClaim = d.adminClaim.trim() !== '' || d.adminValue.trim() !== ''
  return {
    name: d.name,
    issuer: d.issuer,
    client_id: d.clientId,
    ...(secret ?? removal),
    audiences: d.audiences
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    username_claim: d.usernameClaim.trim() || null,
    role_claim: d.roleClaim.trim() || 'groups',
    attribute_mappings: d.attributeMappings.filter((r) => !isBlankRow(r)),
    role_mappings: d.roleMappings.filter((r) => !isBlankRow(r)),
    jit_users: d.jitUsers,
    is_active: d.isActive,
    console_sign_in: d.consoleSignIn,
    admin_claim: hasAdminClaim ? { claim: d.adminClaim, value: d.adminValue } : null,
  }
}

/** Every field of an identity provider, for creating one (no `provider`) or editing it. */
export function IdentityProviderForm(props: {
  provider?: IdentityProvider
  title: string
  submitLabel: string
  save: (body: Record<string, unknown>) => Promise<void>
}) {
  const [draft, setDraft] = useState(() => draftOf(props.provider))
  const set =
    <K extends keyof ProviderDraft>(key: K) =>
    (value: ProviderDraft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }))
  const roles = useOptions<RoleRef>(
    '/roles',
    (r) => r.name,
    (r) => r.id,
  )
  const action = useAction()
  const bad = (field: string) => failedField(action.error, field)
  const secretSet = props.provider?.client_secret_set === true
  const submit = (e: Event) => {
    e.preventDefault()
    void action.run(async () => {
      await props.save(bodyOf(draft))
      // The typed secret is stored now; the field goes back to "set; leave blank to keep it".
      setDraft((d) => ({ ...d, clientSecret: '', removeSecret: false }))
    })
  }
  return (
    <form class="card" onSubmit={submit}>
      <h2>{props.title}</h2>
      <div class="row">
        <TextField label="Name" value={draft.name} onChange={set('name')} invalid={bad('name')} />
        <TextField
          label="Issuer URL"
          value={draft.issuer}
          onChange={set('issuer')}
          invalid={bad('issuer')}
          hint="exactly as the provider writes it in iss; https (http only on loopback)"
        />
      </div>
      <div class="row">
        <TextField
          label="Client ID"
          value={draft.clientId}
          onChange={set('clientId')}
          invalid={bad('client_id')}
        />
        <TextField
          label="Client secret"
          type="password"
          autoComplete="new-password"
          value={draft.clientSecret}
          onChange={set('clientSecret')}
          invalid={bad('client_secret')}
          hint={
            secretSet
              ? 'set; leave blank to keep it (it is never shown)'
              : 'not set; needed for console sign-in'
          }
        />
      </div>
      {secretSet && (
        <Checkbox
          label="Remove the stored client secret"
          checked={draft.removeSecret}
          onChange={set('removeSecret')}
        />
      )}
      <div class="row">
        <TextField
          label="Audiences (comma-separated; empty: the client ID)"
          value={draft.audiences}
          onChange={set('audiences')}
          invalid={bad('audiences')}
        />
        <TextField
          label="Username claim (empty: preferred_username, email, sub)"
          value={draft.usernameClaim}
          onChange={set('usernameClaim')}
          invalid={bad('username_claim')}
        />
        <TextField
          label="Role claim"
          value={draft.roleClaim}
          onChange={set('roleClaim')}
          invalid={bad('role_claim')}
        />
      </div>
      <MappingRows
        legend="Attribute mappings (claim → user attribute, copied at each login)"
        noun="Attribute mapping"
        columns={[
          { key: 'claim', label: 'claim' },
          { key: 'attribute', label: 'attribute' },
        ]}
        rows={draft.attributeMappings}
        onChange={set('attributeMappings')}
        invalid={(i) => bad(`attribute_mappings[${i}]`)}
      />
      <MappingRows
        legend="Role mappings (a value of the role claim → a role)"
        noun="Role mapping"
        columns={[
          { key: 'value', label: 'claim value' },
          { key: 'role_id', label: 'role', options: [['', '(choose a role)'], ...roles] },
        ]}
        rows={draft.roleMappings}
        onChange={set('roleMappings')}
        invalid={(i) => bad(`role_mappings[${i}]`)}
      />
      <fieldset>
        <legend>Admin claim (who becomes an admin at console sign-in)</legend>
        <div class="row">
          <TextField
            label="Admin claim name"
            value={draft.adminClaim}
            onChange={set('adminClaim')}
            invalid={bad('admin_claim')}
          />
          <TextField
            label="Admin claim value"
            value={draft.adminValue}
            onChange={set('adminValue')}
            invalid={bad('admin_claim')}
          />
        </div>
      </fieldset>
      <Checkbox
        label="Create users at their first login (just-in-time)"
        checked={draft.jitUsers}
        onChange={set('jitUsers')}
      />
      <Checkbox
        label="Console sign-in (needs the admin claim)"
        checked={draft.consoleSignIn}
        onChange={set('consoleSignIn')}
      />
      <Checkbox
        label="Active (its tokens are accepted)"
        checked={draft.isActive}
        onChange={set('isActive')}
      />
      <ActionError error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {props.submitLabel}
      </button>
    </form>
  )
}
