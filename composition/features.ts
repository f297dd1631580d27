import { Layer } from "effect"
import { AddressChange } from "../application/AddressChange.js"
import { AddressChangeUndo } from "../application/AddressChangeUndo.js"
import { Admin } from "../application/Admin.js"
import { EmailSignIn } from "../application/EmailSignIn.js"
import { OAuthFlow } from "../application/OAuthFlow.js"
import { OAuthLinking } from "../application/OAuthLinking.js"
import { OAuthSignIn } from "../application/OAuthSignIn.js"
import { OAuthStates } from "../application/OAuthStates.js"
import { Apps } from "../application/oidc/Apps.js"
import { Authorize } from "../application/oidc/Authorize.js"
import { BrowserSessions } from "../application/oidc/BrowserSessions.js"
import { ClientRegistration } from "../application/oidc/ClientRegistration.js"
import { GrantTokens } from "../application/oidc/GrantTokens.js"
import { Token } from "../application/oidc/Token.js"
import { Passkeys } from "../application/Passkeys.js"
import { PasswordReset } from "../application/PasswordReset.js"
import { type Deployment as DeploymentOf, deploymentProblems as problemsOf } from "../config/Deployment.js"
import { withUseCases } from "../interfaces/http/Feature.js"
import { admin } from "../interfaces/http/features/admin/handlers.js"
import { auth } from "../interfaces/http/features/auth/handlers.js"
import { emailChange } from "../interfaces/http/features/email-change/handlers.js"
import { emailSignIn } from "../interfaces/http/features/email-sign-in/handlers.js"
import { jwks } from "../interfaces/http/features/jwks/handlers.js"
import { oauth } from "../interfaces/http/features/oauth/handlers.js"
import { oidc } from "../interfaces/http/features/oidc/handlers.js"
import { passkey } from "../interfaces/http/features/passkey/handlers.js"
import { profile } from "../interfaces/http/features/profile/handlers.js"
import { sessions } from "../interfaces/http/features/sessions/handlers.js"
import { verify } from "../interfaces/http/features/verify/handlers.js"

/** Sign-in and linking share the steps of a provider's flow and its states. */
const oauthUseCases = Layer.merge(OAuthSignIn.Default, OAuthLinking.Default).pipe(
  Layer.provide(OAuthFlow.Default),
  Layer.provide(OAuthStates.Default)
)

/** The provider's flow, its tokens where they are used, its browser sessions and the user's apps. */
const oidcUseCases = Layer.mergeAll(
  Authorize.Default,
  GrantTokens.Default,
  BrowserSessions.Default,
  Apps.Default,
  EmailSignIn.Default,
  Passkeys.Default,
  ClientRegistration.Default,
  // A social provider's return to the sign-in page signs in as /oauth/{provider}/callback does.
  oauthUseCases
).pipe(Layer.provideMerge(Token.Default))

/**
 * Every feature of the service, in one table: each brings its route group and handlers, its
 * limited routes, the settings that turn it on and what it cannot do yet
 * (interfaces/http/features/<name>/), and is given here the use cases of its own beside those
 * every feature shares (application.ts), built only while it is served. A deployment serves the
 * ones its `routeGroups` keep.
 */
export const features = [
  auth,
  profile,
  withUseCases(verify, PasswordReset.Default),
  sessions,
  withUseCases(admin, Admin.Default),
  withUseCases(oauth, oauthUseCases),
  withUseCases(passkey, Passkeys.Default),
  withUseCases(emailSignIn, EmailSignIn.Default),
  withUseCases(emailChange, Layer.merge(AddressChange.Default, AddressChangeUndo.Default)),
  withUseCases(oidc, oidcUseCases),
  jwks
] as const

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
