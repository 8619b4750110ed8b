import { bodySchemas } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { search } from './common.js'

/** Body of `POST /identity-providers`. */
export const createIdentityProviderBody = bodySchemas.identityProvider.create

/** Body of `PUT`/`PATCH /identity-providers/{id}`. */
export const updateIdentityProviderBody = bodySchemas.identityProvider.update

/** Query of `GET /identity-providers`. */
export const listIdentityProvidersQuery = v.object({ ...pageQuery, search })
