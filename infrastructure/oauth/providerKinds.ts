import { Effect, Option, Schema } from "effect"
import type { OAuthProviderError } from "../../domain/errors.js"
import type {
  OAuthKind,
  OAuthProviderRegistration,
  ProviderUserFields as UserFields
} from "../../domain/OAuthProvider.js"

export type ProviderKind = OAuthKind | "custom"

/** How a provider's user info is read; every failure is already the provider's fault. */
export interface UserInfoSource {
  /** The OpenID Connect userinfo endpoint's claims. */
  readonly oidcClaims: Effect.Effect<Readonly<Record<string, unknown>>, OAuthProviderError>
  /** A JSON resource read with the access token. */
  readonly json: (url: string) => Effect.Effect<unknown, OAuthProviderError>
  /** Decodes an answer; a mismatch is a malformed answer. */
  readonly decode: <A, I>(schema: Schema.Schema<A, I>, answer: unknown) => Effect.Effect<A, OAuthProviderError>
  readonly endpoints: { readonly userinfo: string; readonly emails: Option.Option<string> }
  readonly claims: OAuthProviderRegistration["claims"]
  readonly mapUserInfo: OAuthProviderRegistration["mapUserInfo"]
}

export interface KindProfile {
  readonly authorizationEndpoint: Option.Option<string>
  readonly tokenEndpoint: Option.Option<string>
  readonly userinfoEndpoint: Option.Option<string>
  readonly emailsEndpoint: Option.Option<string>
  readonly scopes: ReadonlyArray<string>
  /** How the client authenticates at the token endpoint, as each provider documents it. */
  readonly clientAuthentication: "client_secret_post" | "client_secret_basic"
  readonly userInfo: (source: UserInfoSource) => Effect.Effect<UserFields, OAuthProviderError>
}

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Text = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
/** Some providers write booleans as strings. */
const Flag = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
    strict: true,
    decode: (text) => text === "true",
    encode: (flag) => (flag ? "true" : "false")
  })
)

/** The userinfo endpoint's answer, which must be a JSON object. */
const userObject = (source: UserInfoSource) =>
  Effect.flatMap(source.json(source.endpoints.userinfo), (answer) => source.decode(JsonObject, answer))

const OidcClaims = Schema.Struct({
  sub: Schema.NonEmptyString,
  email: Text,
  email_verified: Schema.optionalWith(Flag, { default: () => false }),
  name: Text,
  picture: Text
})

const oidcUserInfo = (source: UserInfoSource) =>
  Effect.gen(function* () {
    const raw = yield* source.oidcClaims
    const claims = yield* source.decode(OidcClaims, raw)
    return {
      provider_user_id: claims.sub,
      email: claims.email,
      email_verified: claims.email_verified,
      name: claims.name,
      picture: claims.picture,
      raw
    }
  })

const GithubUser = Schema.Struct({ id: Schema.Int, login: Schema.String, name: Text, avatar_url: Text })
const GithubEmails = Schema.Array(
  Schema.Struct({ email: Schema.String, primary: Schema.Boolean, verified: Schema.Boolean })
)

// The email on /user is whatever the user made public, verified or not: the address comes from
// /user/emails, the primary one, with its own verified flag.
const githubUserInfo = (source: UserInfoSource) =>
  Effect.gen(function* () {
    const raw = yield* userObject(source)
    const user = yield* source.decode(GithubUser, raw)
    const emails = yield* Option.match(source.endpoints.emails, {
      onNone: () => Effect.succeed([]),
      onSome: (url) => source.json(url).pipe(Effect.flatMap((answer) => source.decode(GithubEmails, answer)))
    })
    const primary = emails.find((email) => email.primary)
    return {
      provider_user_id: String(user.id),
      email: primary?.email ?? null,
      email_verified: primary?.verified ?? false,
      name: user.name ?? user.login,
      picture: user.avatar_url,
      raw
    }
  })

const DiscordUser = Schema.Struct({
  id: Schema.NonEmptyString,
  username: Schema.String,
  global_name: Text,
  avatar: Text,
  email: Text,
  verified: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

const discordUserInfo = (source: UserInfoSource) =>
  Effect.gen(function* () {
    const raw = yield* userObject(source)
    const user = yield* source.decode(DiscordUser, raw)
    return {
      provider_user_id: user.id,
      email: user.email,
      email_verified: user.verified,
      name: user.global_name ?? user.username,
      picture: user.avatar === null ? null : `https://cdn.discordapp.com/avatars/${user.id}/${user.avatar}.png`,
      raw
    }
  })

/** Ids are strings or, at some providers, integers. */
const MappedId = Schema.Union(Schema.NonEmptyString, Schema.Int)

const Mapped = Schema.Struct({
  provider_user_id: MappedId,
  email: Text,
  email_verified: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  name: Text,
  picture: Text
})

/**
 * A custom provider whose code reads its userinfo answer. What the code returns is checked like
 * any provider's answer; code that throws is a malformed answer, never a crash.
 */
const mappedUserInfo = (
  source: UserInfoSource,
  raw: Readonly<Record<string, unknown>>,
  map: (userinfo: Readonly<Record<string, unknown>>) => unknown
) =>
  Effect.try(() => map(raw)).pipe(
    Effect.orElseSucceed(() => undefined),
    Effect.flatMap((mapped) => source.decode(Mapped, mapped)),
    Effect.map((user) => ({ ...user, provider_user_id: String(user.provider_user_id), raw }))
  )

/**
 * A custom provider: its code's reading of the userinfo answer, or each field read from the key
 * its `claims` names, or the default key.
 */
const customUserInfo = (source: UserInfoSource) =>
  Effect.gen(function* () {
    const raw = yield* userObject(source)
    if (Option.isSome(source.mapUserInfo)) return yield* mappedUserInfo(source, raw, source.mapUserInfo.value)
    const key = (field: keyof UserFields) => source.claims[field] ?? field
    const text = (field: keyof UserFields) => {
      const value = raw[key(field)]
      return typeof value === "string" ? value : null
    }
    const idKey = source.claims.provider_user_id ?? (raw.sub !== undefined ? "sub" : "id")
    const id = yield* source.decode(MappedId, raw[idKey])
    const verified = raw[key("email_verified")]
    return {
      provider_user_id: String(id),
      email: text("email"),
      email_verified: verified === true || verified === "true",
      name: text("name"),
      picture: text("picture"),
      raw
    }
  })

const endpoints = (authorization: string, token: string, userinfo: string, emails?: string) => ({
  authorizationEndpoint: Option.some(authorization),
  tokenEndpoint: Option.some(token),
  userinfoEndpoint: Option.some(userinfo),
  emailsEndpoint: Option.fromNullable(emails)
})

/** What each kind brings: its endpoints (overridable), default scopes and user-info shape. */
export const kinds: Readonly<Record<ProviderKind, KindProfile>> = {
  google: {
    ...endpoints(
      "https://accounts.google.com/o/oauth2/v2/auth",
      "https://oauth2.googleapis.com/token",
      "https://openidconnect.googleapis.com/v1/userinfo"
    ),
    scopes: ["openid", "email", "profile"],
    clientAuthentication: "client_secret_post",
    userInfo: oidcUserInfo
  },
  github: {
    ...endpoints(
      "https://github.com/login/oauth/authorize",
      "https://github.com/login/oauth/access_token",
      "https://api.github.com/user",
      "https://api.github.com/user/emails"
    ),
    scopes: ["read:user", "user:email"],
    clientAuthentication: "client_secret_post",
    userInfo: githubUserInfo
  },
  discord: {
    ...endpoints(
      "https://discord.com/oauth2/authorize",
      "https://discord.com/api/oauth2/token",
      "https://discord.com/api/users/@me"
    ),
    scopes: ["identify", "email"],
    clientAuthentication: "client_secret_basic",
    userInfo: discordUserInfo
  },
  gitlab: {
    ...endpoints(
      "https://gitlab.com/oauth/authorize",
      "https://gitlab.com/oauth/token",
      "https://gitlab.com/oauth/userinfo"
    ),
    scopes: ["openid", "email", "profile"],
    clientAuthentication: "client_secret_post",
    userInfo: oidcUserInfo
  },
  // Its endpoints and scopes come from its settings; client_secret_basic is RFC 6749's default.
  custom: {
    authorizationEndpoint: Option.none(),
    tokenEndpoint: Option.none(),
    userinfoEndpoint: Option.none(),
    emailsEndpoint: Option.none(),
    scopes: [],
    clientAuthentication: "client_secret_basic",
    userInfo: customUserInfo
  }
}
