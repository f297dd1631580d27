import { Option, Schema } from "effect"
import { eventNames } from "../domain/Events.js"
import { type FieldSchema, type ProfileRules, protectedUserFields } from "../domain/Profile.js"
import type { NoticeKind } from "../domain/SecurityNotice.js"
import type { PublicUser } from "../domain/User.js"
import { type CustomOAuthProvider, customProviderProblems } from "./oauthProviders.js"

/** The user as event handlers and custom claims receive it: the JSON user object of the API. */
export type UserJson = typeof PublicUser.Encoded

type Handler<Args extends ReadonlyArray<unknown>> = (...args: Args) => void | Promise<void>

/**
 * Handlers a deployment registers by event name, called with the spec's arguments in order.
 * They run after the request has been answered; a handler that throws or rejects is logged and
 * changes nothing. A handler for one of the send events (the two token mails, the security notice) replaces the built-in mailer for it.
 */
export interface EventHandlers {
  readonly after_register?: Handler<[user: UserJson]>
  readonly after_login?: Handler<[user: UserJson]>
  readonly after_logout?: Handler<[user: UserJson]>
  readonly after_password_change?: Handler<[user: UserJson]>
  readonly after_password_reset?: Handler<[user: UserJson]>
  readonly after_email_verify?: Handler<[user: UserJson]>
  readonly after_oauth_login?: Handler<[user: UserJson, provider: string, is_new_user: boolean]>
  readonly after_oauth_register?: Handler<[user: UserJson, user_info: Readonly<Record<string, unknown>>]>
  readonly after_oauth_link?: Handler<[user: UserJson, provider: string]>
  readonly after_oauth_unlink?: Handler<[user: UserJson, provider: string]>
  readonly send_verification_email?: Handler<[email: string, token: string]>
  readonly send_password_reset_email?: Handler<[email: string, token: string]>
  /** An address change's confirmation token, for the new address; a handler replaces the built-in mail. */
  readonly send_email_change_email?: Handler<[email: string, token: string]>
  /**
   * An address change's approval token, for the verified current address (the account moves to
   * `newEmail`); a handler replaces the built-in mail.
   */
  readonly send_email_change_approval_email?: Handler<[email: string, token: string, newEmail: string]>
  /** The undo token of an address change made, for the old address; a handler replaces the built-in mail. */
  readonly send_email_change_undo_email?: Handler<[email: string, token: string, newEmail: string]>
  /**
   * A sign-in link and code (EMAIL_SIGN_IN_ENABLED); a handler replaces the built-in mail. When
   * asked from the OpenID Provider's sign-in page, `authorizationRequest` names the request the
   * link resumes: it should open `<PUBLIC_URL><AUTH_PREFIX>/oauth2/sign-in?request=…&token=…`.
   */
  readonly send_sign_in_email?: Handler<
    [email: string, token: string, code: string, sign_up: boolean, authorizationRequest: string | null]
  >
  /** A way in changed (docs/behaviour.md, "Ways in"); a handler replaces the built-in notice mail. */
  readonly send_security_notice?: Handler<[email: string, notice: SecurityNoticeJson]>
}

/** A security notice as a handler receives it: what changed, when (ISO 8601), from where. */
export interface SecurityNoticeJson {
  readonly kind: NoticeKind
  readonly subject: string
  readonly occurred_at: string
  readonly ip_address: string | null
  readonly user_agent: string | null
}

/**
 * A custom user field's schema. Its encoded side is what the API shows and the store keeps, so
 * it must be JSON (strings, numbers, booleans, null, arrays and objects of them).
 */
// biome-ignore lint/suspicious/noExplicitAny: a field may decode to any type; only its JSON side matters
export type UserFieldSchema = Schema.Schema<any, any, never>

/** Which custom fields the registration body accepts, and which of those it requires. */
export interface RegistrationFields {
  /** Fields the registration body may carry; `required` ones are accepted too. */
  readonly accept?: ReadonlyArray<string>
  /** Fields the registration body must carry (422 naming each missing one). */
  readonly require?: ReadonlyArray<string>
}

/** The password validator's options (spec, Limits); lengths merge with the settings'. */
export interface PasswordPolicyOptions {
  /** The stricter of this and PASSWORD_MIN_LENGTH applies. */
  readonly min_length?: number
  readonly require_uppercase?: boolean
  readonly require_lowercase?: boolean
  readonly require_digit?: boolean
  readonly require_special?: boolean
  /** Refused whatever their letter case. */
  readonly blocked_passwords?: ReadonlyArray<string>
}

/** A JSON object, as stamped into an access token's `extra` claim. */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * What a deployment supplies in code, beside its SERVICE_ settings. Every option is optional.
 * `GroupName` is the names of the route groups (the composition root's table of features).
 */
export interface Deployment<GroupName extends string = string> {
  readonly events?: EventHandlers
  /**
   * Custom user fields, each with its Effect Schema: stored on the user, returned on the user
   * object next to `id` and `email`, and editable with PATCH /me unless protected.
   */
  readonly userFields?: { readonly [name: string]: UserFieldSchema }
  /** Which custom fields POST /register accepts and requires (none by default). */
  readonly registration?: RegistrationFields
  /** Custom fields PATCH /me may not change, beside the spec's protected fields. */
  readonly protectedFields?: ReadonlyArray<string>
  readonly passwordPolicy?: PasswordPolicyOptions
  /**
   * Claims stamped into every access token's `extra` when it is issued (login and refresh):
   * a JSON object computed from the user object. Changes reach clients at their next refresh.
   */
  readonly customClaims?: (user: UserJson) => JsonObject | Promise<JsonObject>
  /**
   * OAuth providers added in code, beside the SERVICE_OAUTH_ settings' ones: any provider
   * following the standard authorization-code flow.
   */
  readonly oauthProviders?: ReadonlyArray<CustomOAuthProvider>
  /** The route groups to expose (all by default). `auth` cannot be left out. */
  readonly routeGroups?: ReadonlyArray<GroupName>
}

const options = [
  "events",
  "userFields",
  "registration",
  "protectedFields",
  "passwordPolicy",
  "customClaims",
  "oauthProviders",
  "routeGroups"
] as const

/** Names a custom field may take: they become JSON keys, SQL JSON paths and index names. */
const fieldName = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

const isStringArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

const eventProblems = (events: unknown): ReadonlyArray<string> => {
  if (events === undefined) return []
  if (typeof events !== "object" || events === null) return ["events is not an object"]
  return Object.entries(events).flatMap(([name, handler]) =>
    !(eventNames as ReadonlyArray<string>).includes(name)
      ? [`events.${name} is not an event (expected one of ${eventNames.join(", ")})`]
      : typeof handler !== "function"
        ? [`events.${name} is not a function`]
        : []
  )
}

const userFieldProblems = (fields: unknown): ReadonlyArray<string> => {
  if (fields === undefined) return []
  if (typeof fields !== "object" || fields === null) return ["userFields is not an object"]
  return Object.entries(fields).flatMap(([name, schema]) => {
    if (!fieldName.test(name)) return [`userFields.${name} is not a valid field name (letters, digits and _)`]
    if (protectedUserFields.includes(name) || name === "fields") {
      return [`userFields.${name} is a built-in user field`]
    }
    if (!Schema.isSchema(schema)) return [`userFields.${name} is not an Effect Schema`]
    return []
  })
}

/** Names in `list` that are not declared fields. */
const undeclared = (path: string, list: unknown, declared: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (list === undefined) return []
  if (!isStringArray(list)) return [`${path} is not a list of field names`]
  return list.filter((name) => !declared.includes(name)).map((name) => `${path}: ${name} is not declared in userFields`)
}

const passwordPolicyProblems = (policy: unknown): ReadonlyArray<string> => {
  if (policy === undefined) return []
  if (typeof policy !== "object" || policy === null) return ["passwordPolicy is not an object"]
  return Object.entries(policy).flatMap(([key, value]): ReadonlyArray<string> => {
    switch (key) {
      case "min_length":
        return Number.isInteger(value) && (value as number) >= 1
          ? []
          : ["passwordPolicy.min_length is not a positive integer"]
      case "require_uppercase":
      case "require_lowercase":
      case "require_digit":
      case "require_special":
        return typeof value === "boolean" ? [] : [`passwordPolicy.${key} is not a boolean`]
      case "blocked_passwords":
        return isStringArray(value) ? [] : ["passwordPolicy.blocked_passwords is not a list of strings"]
      default:
        return [
          `passwordPolicy.${key} is not a password policy option (expected: min_length, require_uppercase, require_lowercase, require_digit, require_special, blocked_passwords)`
        ]
    }
  })
}

/** The route groups there are, and the ones a deployment cannot leave out, each with the reason why. */
export interface RouteGroups {
  readonly names: ReadonlyArray<string>
  readonly required: ReadonlyArray<{ readonly name: string; readonly because: string }>
}

const routeGroupProblems = (groups: unknown, known: RouteGroups): ReadonlyArray<string> => {
  if (groups === undefined) return []
  if (!isStringArray(groups)) return ["routeGroups is not a list of route group names"]
  const problems = groups
    .filter((group) => !known.names.includes(group))
    .map((group) => `routeGroups: ${group} is not a route group (expected some of ${known.names.join(", ")})`)
  for (const { name, because } of known.required) {
    if (!groups.includes(name)) problems.push(`routeGroups must include ${name} (${because})`)
  }
  return problems
}

/**
 * Why a value loaded from a deployment module is not a Deployment, one line per problem; empty
 * when it is one. Catches a misspelt option, event or field name at start-up instead of a
 * silent no-op.
 */
export const deploymentProblems = (value: unknown, groups: RouteGroups): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null) return ["the module's default export is not an object"]
  const problems: Array<string> = []
  for (const key of Object.keys(value)) {
    if (!(options as ReadonlyArray<string>).includes(key)) {
      problems.push(`${key} is not a deployment option (expected: ${options.join(", ")})`)
    }
  }
  const deployment = value as { readonly [K in (typeof options)[number]]?: unknown }
  problems.push(...eventProblems(deployment.events))
  problems.push(...userFieldProblems(deployment.userFields))
  const declared =
    typeof deployment.userFields === "object" && deployment.userFields !== null
      ? Object.keys(deployment.userFields)
      : []
  const registration = deployment.registration
  if (registration !== undefined) {
    if (typeof registration !== "object" || registration === null) {
      problems.push("registration is not an object")
    } else {
      for (const key of Object.keys(registration)) {
        if (key !== "accept" && key !== "require") {
          problems.push(`registration.${key} is not a registration option (expected: accept, require)`)
        }
      }
      const { accept, require } = registration as { readonly accept?: unknown; readonly require?: unknown }
      problems.push(...undeclared("registration.accept", accept, declared))
      problems.push(...undeclared("registration.require", require, declared))
    }
  }
  problems.push(...undeclared("protectedFields", deployment.protectedFields, declared))
  problems.push(...passwordPolicyProblems(deployment.passwordPolicy))
  if (deployment.customClaims !== undefined && typeof deployment.customClaims !== "function") {
    problems.push("customClaims is not a function")
  }
  problems.push(...customProviderProblems(deployment.oauthProviders))
  problems.push(...routeGroupProblems(deployment.routeGroups, groups))
  return problems
}

/** The custom login field, when LOGIN_FIELD names one the deployment declares. */
export const customLoginField = (loginField: string, deployment: Deployment): Option.Option<string> =>
  loginField !== "email" && deployment.userFields?.[loginField] !== undefined ? Option.some(loginField) : Option.none()

/**
 * What the use cases and the API need to know of the deployment's custom fields. A custom login
 * field is required at registration (an account without it could never sign in) and unique.
 */
export const profileRules = (loginField: string, deployment: Deployment): ProfileRules => {
  const schemas = new Map<string, FieldSchema>(Object.entries(deployment.userFields ?? {}))
  const protectedFields = new Set([...protectedUserFields, ...(deployment.protectedFields ?? [])])
  const login = Option.toArray(customLoginField(loginField, deployment))
  const requiredFields = new Set([...(deployment.registration?.require ?? []), ...login])
  return {
    protectedFields,
    editableFields: new Set([...schemas.keys()].filter((name) => !protectedFields.has(name))),
    schemas,
    registrationFields: new Set([...(deployment.registration?.accept ?? []), ...requiredFields]),
    requiredFields,
    uniqueFields: new Set(login)
  }
}
