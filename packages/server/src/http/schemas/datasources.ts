import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { search } from './common.js'

/** Body of `POST /datasources`. */
export const createDatasourceBody = bodySchemas.datasource.create

/** Body of `PUT`/`PATCH /datasources/{id}`. */
export const updateDatasourceBody = bodySchemas.datasource.update

/** Query of `GET /datasources`. */
export const listDatasourcesQuery = v.object({ ...pageQuery, search })
