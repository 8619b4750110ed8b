/**
 * The application's data access. Every function takes a `Query` instead of a connection, so
 * production passes a `pg` pool (`(sql, params) => pool.query(sql, params).then((r) => r.rows)`)
 * and the test suite passes Palisade's rewrite running on PGlite.
 */
export type Query = <Row>(sql: string, params?: readonly unknown[]) => Promise<Row[]>

export interface Customer {
  id: number
  name: string
  email: string
}

/** Every customer the caller may see, by id. */
export function listCustomers(query: Query): Promise<Customer[]> {
  return query<Customer>('SELECT id, name, email FROM customers ORDER BY id')
}

/** Revenue per customer name, over the orders the caller may see. */
export function revenueByCustomer(query: Query): Promise<{ name: string; revenue: number }[]> {
  return query(
    `SELECT c.name, sum(o.amount)::int AS revenue
       FROM customers c JOIN orders o ON o.customer_id = c.id
      GROUP BY c.name ORDER BY c.name`,
  )
}

/** One customer's social security number (which the policies deny). */
export async function customerSsn(query: Query, id: number): Promise<string | undefined> {
  const [row] = await query<{ ssn: string }>('SELECT ssn FROM customers WHERE id = $1', [id])
  return row?.ssn
}
