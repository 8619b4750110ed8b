import { useState } from 'preact/hooks'
import { api, type Page, queryString } from '../api'
import { Pager } from './forms'
import { type Loaded, useLoad } from './states'

/** A paginated collection with a search box's text and the page number as state. */
export function usePaged<T>(
  path: string,
  filters: Record<string, string | undefined> = {},
  pageSize = 20,
) {
  const [page, setPage] = useState(1)
  const [search, setSearchText] = useState('')
  const key = JSON.stringify(filters)
  const result: Loaded<Page<T>> = useLoad(
    () =>
      api<Page<T>>(
        'GET',
        `${path}${queryString({ ...filters, search, page, page_size: pageSize })}`,
      ),
    [path, key, search, page],
  )
  const setSearch = (text: string) => {
    setSearchText(text)
    setPage(1)
  }
  return { result, page, setPage, search, setSearch }
}

export function PagerFor<T>(props: { page: Page<T>; onPage: (n: number) => void }) {
  if (props.page.total <= props.page.page_size && props.page.page === 1) return null
  return (
    <Pager
      page={props.page.page}
      pageSize={props.page.page_size}
      total={props.page.total}
      onPage={props.onPage}
    />
  )
}

/** Names of every item in a collection (up to 100), for pickers. */
export function useOptions<T>(path: string, label: (item: T) => string, id: (item: T) => string) {
  const all = useLoad(() => api<Page<T>>('GET', `${path}?page_size=100`), [path])
  if (all.state !== 'ok') return [] as [string, string][]
  return all.data.data.map((item) => [id(item), label(item)] as [string, string])
}
