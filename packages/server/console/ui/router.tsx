import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'

/** The part of the address after `#`, split: `#/users/42?tab=roles` → path ['users', '42']. */
export interface Route {
  path: string[]
  query: URLSearchParams
}

function current(): Route {
  const raw = location.hash.replace(/^#\/?/, '')
  const [path = '', search = ''] = raw.split('?', 2)
  return {
    path: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(search),
  }
}

/** Hash routing: the console is one page, so the server needs no fallback routes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current)
  useEffect(() => {
    const update = () => setRoute(current())
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

export function href(path: string): string {
  return `#${path}`
}

export function navigate(path: string): void {
  location.hash = path
}

export function Link(props: { to: string; children: ComponentChildren; class?: string }) {
  return (
    <a href={href(props.to)} class={props.class}>
      {props.children}
    </a>
  )
}
