import { type Deployment as DeploymentOf, deploymentProblems as problemsOf } from "../config/Deployment.js"
import { admin } from "../interfaces/http/features/admin.js"
import { auth } from "../interfaces/http/features/auth.js"
import { jwks } from "../interfaces/http/features/jwks.js"
import { oauth } from "../interfaces/http/features/oauth.js"
import { passkey } from "../interfaces/http/features/passkey.js"
import { profile } from "../interfaces/http/features/profile.js"
import { sessions } from "../interfaces/http/features/sessions.js"
import { verify } from "../interfaces/http/features/verify.js"

/**
 * Every feature of the service, in one table: each brings its route group, handlers, limited
 * routes, the settings that turn it on and what it cannot do yet (interfaces/http/features/).
 * A deployment serves the ones its `routeGroups` keep.
 */
export const features = [auth, profile, verify, sessions, admin, oauth, passkey, jwks] as const

/** The route groups a deployment may name: the features' names. */
export type RouteGroupName = (typeof features)[number]["name"]

/** What a deployment supplies in code, its route groups among the features'. */
export type Deployment = DeploymentOf<RouteGroupName>

/**
 * Why a value loaded from a deployment module is not a Deployment, one line per problem; empty
 * when it is one.
 */
export const deploymentProblems = (value: unknown) =>
  problemsOf(value, {
    names: features.map((feature) => feature.name),
    required: features.flatMap((feature) =>
      feature.required === undefined ? [] : [{ name: feature.name, because: feature.required }]
    )
  })
