import './styles.css'
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure, api, onSignedOut, type Session, setSession } from './api'
import { AccessRequestsPage } from './pages/access-requests'
import { AdminAuditPage } from './pages/admin-audit'
import { AttributesPage } from './pages/attributes'
import { DashboardPage } from './pages/dashboard'
import { DatasourcePage, DatasourcesPage } from './pages/datasources'
import { DecisionFunctionPage, DecisionFunctionsPage } from './pages/decision-functions'
import { IdentityProviderPage, IdentityProvidersPage } from './pages/identity-providers'
import { PoliciesPage, PolicyPage } from './pages/policies'
import { PreviewPage } from './pages/preview'
import { QueryAuditPage } from './pages/query-audit'
import { RolePage, RolesPage } from './pages/roles'
import { SignInPage } from './pages/sign-in'
import { SimulationPage } from './pages/simulation'
import { completeProviderSignIn } from './pages/sso-sign-in'
import { UserPage, UsersPage } from './pages/users'
import type { User } from './types'
import { type Route, useRoute } from './ui/router'

const NAV: [path: string, label: string][] = [
  ['/', 'Overview'],
  ['/users', 'Users'],
  ['/roles', 'Roles'],
  ['/access-requests', 'Access requests'],
  ['/datasources', 'Datasources'],
  ['/policies', 'Policies'],
  ['/decision-functions', 'Decision functions'],
  ['/attributes', 'Attributes'],
  ['/identity-providers', 'Identity providers'],
  ['/audit/queries', 'Query audit'],
  ['/audit/admin', 'Admin audit'],
  ['/preview', 'Preview as user'],
  ['/simulation', 'What-if'],
]

function page(route: Route) {
  const [section, id] = route.path
  switch (section) {
    case undefined:
      return <DashboardPage />
    case 'users':
      return id ? <UserPage id={id} /> : <UsersPage />
    case 'roles':
      return id ? <RolePage id={id} /> : <RolesPage />
    case 'datasources':
      return id ? <DatasourcePage id={id} /> : <DatasourcesPage />
    case 'policies':
      return id ? <PolicyPage id={id} /> : <PoliciesPage />
    case 'decision-functions':
      return id ? <DecisionFunctionPage id={id} /> : <DecisionFunctionsPage />
    case 'attributes':
      return <AttributesPage />
    case 'identity-providers':
      return id ? <IdentityProviderPage id={id} /> : <IdentityProvidersPage />
    case 'access-requests':
      return <AccessRequestsPage />
    case 'audit':
      return id === 'admin' ? <AdminAuditPage /> : <QueryAuditPage route={route} />
    case 'preview':
      return <PreviewPage />
    case 'simulation':
      return <SimulationPage />
    default:
      return <p class="state error">No page here. Pick one from the menu.</p>
  }
}

function isCurrent(path: string, route: Route): boolean {
  const here = `/${route.path.join('/')}`
  return path === '/' ? here === '/' : here === path || here.startsWith(`${path}/`)
}

function Shell(props: { user: User; onSignOut: () => void }) {
  const route = useRoute()
  const main = useRef<HTMLElement>(null)
  const key = route.path.join('/')
  // Moving to a page puts focus on it, so keyboard and screen-reader users land on its content.
  useEffect(() => {
    main.current?.querySelector<HTMLElement>('h1')?.focus()
  }, [key])
  return (
    <div class="shell">
      {/* A button, not a link: with hash routing, `#main` would be read as a page. */}
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">Palisade</span>
        <span class="who">
          Signed in as <strong>{props.user.username}</strong>
        </span>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Sections">
        <ul>
          {NAV.map(([path, label]) => (
            <li key={path}>
              <a href={`#${path}`} aria-current={isCurrent(path, route) ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {page(route)}
      </main>
    </div>
  )
}

function App() {
  // undefined while the session cookie is being checked, null when signed out.
  const [user, setUser] = useState<User | null | undefined>(undefined)
  const [providerError, setProviderError] = useState<ApiFailure | null>(null)
  useEffect(() => onSignedOut(() => setUser(null)), [])
  // Back from an identity provider, the sign-in is finished first; else a reload or a new tab
  // finds the session the cookie still holds (docs/console.md).
  useEffect(() => {
    completeProviderSignIn()
      .then((session) => session ?? api<Session>('GET', '/auth/session'))
      .then(
        (session) => {
          setSession(session)
          setUser(session.user)
        },
        (error: unknown) => {
          if (error instanceof ApiFailure && error.code === 'sso_refused') setProviderError(error)
          setUser(null)
        },
      )
  }, [])
  if (user === undefined) return <p class="state loading">Loading…</p>
  if (!user) return <SignInPage onSignedIn={setUser} providerError={providerError} />
  const signOut = async () => {
    await api('POST', '/auth/logout').catch(() => undefined)
    setSession(null)
    setUser(null)
  }
  return <Shell user={user} onSignOut={signOut} />
}

const root = document.getElementById('app')
if (root) render(<App />, root)
