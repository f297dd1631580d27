import { Effect, Option, Schema } from "effect"
import type { AuthPolicy } from "../application/AuthPolicy.js"
import { customLoginField, type Deployment, profileRules } from "../config/Deployment.js"
import { PREFIX } from "../config/reader.js"
import type { Settings } from "../config/Settings.js"
import { makePasswordPolicy, type PasswordPolicy } from "../domain/Password.js"
import { PublicUser } from "../domain/User.js"

/**
 * The settings' password lengths merged with the deployment's validator options: the stricter
 * minimum applies, the maximum stays the setting's (it bounds hashing work).
 */
export const passwordPolicy = ({ accounts }: Settings, deployment: Deployment): PasswordPolicy => {
  const { min_length, ...rules } = deployment.passwordPolicy ?? {}
  return makePasswordPolicy({
    ...rules,
    min_length: Math.max(accounts.passwordMinLength, min_length ?? 0),
    max_length: accounts.passwordMaxLength
  })
}

/** Custom fields no two users may share: the login field, when it is a custom one. */
export const uniqueFields = ({ accounts }: Settings, deployment: Deployment): ReadonlyArray<string> =>
  Option.toArray(customLoginField(accounts.loginField, deployment))

const JsonObject = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const encodeUser = Schema.encodeSync(PublicUser)

/**
 * The deployment's claims function as the use cases call it: given the user object in its JSON
 * form, answering a JSON object. A throw, a rejection or anything but a JSON object is a defect
 * (logged, 500): a token is never issued without the claims the deployment stamps into it.
 */
export const customClaims = (deployment: Deployment) =>
  Option.map(
    Option.fromNullable(deployment.customClaims),
    (claims) => (user: PublicUser) =>
      Effect.tryPromise({
        try: async () => claims(encodeUser(user)),
        catch: (error) => error
      }).pipe(
        Effect.flatMap((value) =>
          typeof value === "object" && value !== null && !Array.isArray(value)
            ? Schema.decodeUnknown(JsonObject)(JSON.stringify(value))
            : Effect.fail(new Error("customClaims must answer a JSON object"))
        ),
        Effect.orDieWith((error) => new Error("the deployment's customClaims failed", { cause: error }))
      )
  )

/**
 * The rules the use cases follow: the settings' sections as they are, and what the deployment's
 * code adds to them. The one place where settings become the application's policy.
 */
export const authPolicy = (settings: Settings, deployment: Deployment): AuthPolicy["Type"] => ({
  tokens: settings.tokens,
  accounts: settings.accounts,
  limits: settings.limits,
  oauth: settings.oauth,
  passkeys: settings.passkeys,
  storage: { ...settings.storage, dynamicClientIdleDays: settings.oidc.dynamicClientIdleDays },
  passwordPolicy: passwordPolicy(settings, deployment),
  profile: profileRules(settings.accounts.loginField, deployment),
  customClaims: customClaims(deployment)
})

/** LOGIN_FIELD names no field the deployment declares (email aside). */
export const loginFieldProblems = ({ accounts }: Settings, deployment: Deployment): ReadonlyArray<string> =>
  accounts.loginField === "email" || Option.isSome(customLoginField(accounts.loginField, deployment))
    ? []
    : [
        `${PREFIX}LOGIN_FIELD: ${accounts.loginField} is not email nor a custom field the deployment declares (userFields)`
      ]
