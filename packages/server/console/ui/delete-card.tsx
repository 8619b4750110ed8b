import { api } from '../api'
import { ActionError, useAction } from './forms'
import { navigate } from './router'

/**
 * The "Delete" card of a resource page: asks first (the question may need a lookup, such as a
 * role's impact), deletes through the API, then goes back to the list.
 */
export function DeleteCard(props: {
  /** The button text, e.g. "Delete user". */
  label: string
  question: () => string | Promise<string>
  /** The resource's API path, e.g. `/users/{id}`. */
  path: string
  /** The list page to go back to. */
  back: string
}) {
  const action = useAction()
  const remove = () =>
    action.run(async () => {
      if (!confirm(await props.question())) return
      await api('DELETE', props.path)
      navigate(props.back)
    })
  return (
    <div class="card danger">
      <h2>Delete</h2>
      <ActionError error={action.error} />
      <button type="button" class="danger" onClick={remove} disabled={action.busy}>
        {props.label}
      </button>
    </div>
  )
}
