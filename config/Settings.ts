import { Either, Option, Redacted, Schema } from "effect"
import * as F from "./forms.js"

/** Every setting is read from an environment variable with this prefix. */
export const PREFIX = "SERVICE_"

export type DatabaseUrl =
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: Redacted.Redacted<string> }

const databaseUrl: F.Form<DatabaseUrl> = {
  expected: "memory:, sqlite:<path>, sqlite::memory: or postgres://…",
  read: (raw) => {
    const value = raw.trim()
    if (value === "memory:") return Either.right({ kind: "memory" })
    if (value.startsWith("sqlite:")) {
      const filename = value.slice("sqlite:".length)
      return filename === "" ? Either.left("names no file") : Either.right({ kind: "sqlite", filename })
    }
    if (/^postgres(ql)?:\/\//.test(value)) return Either.right({ kind: "postgres", url: Redacted.make(value) })
    return Either.left("is not a database URL")
  }
}

/** The route buckets AUTH_RATE_LIMITS may name, with their default limits per client IP. */
export const rateLimitBuckets = {
  login: { count: 5, windowSeconds: 60 },
  register: { count: 3, windowSeconds: 60 },
  password_reset: { count: 3, windowSeconds: 60 },
  verify_email: { count: 3, windowSeconds: 60 },
  passkey_auth: { count: 10, windowSeconds: 60 },
  refresh: { count: 30, windowSeconds: 60 },
  oauth_callback: { count: 10, windowSeconds: 60 }
} satisfies Record<string, F.RateLimit>
export type RateLimitBucket = keyof typeof rateLimitBuckets

export const jwtAlgorithms = ["HS256", "HS384", "HS512", "EdDSA", "ES256", "RS256"] as const
export type JwtAlgorithm = (typeof jwtAlgorithms)[number]

/** The built-in OAuth provider kinds, each enabled by its SERVICE_OAUTH_<KIND>_CLIENT_ID. */
export const oauthKinds = ["google", "github", "discord", "gitlab"] as const
export type OAuthKind = (typeof oauthKinds)[number]

export interface OAuthProviderSettings {
  readonly name: string
  readonly kind: OAuthKind | "custom"
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly redirectUris: ReadonlyArray<string>
  readonly scopes: Option.Option<ReadonlyArray<string>>
  readonly authorizationEndpoint: Option.Option<string>
  readonly tokenEndpoint: Option.Option<string>
  readonly userinfoEndpoint: Option.Option<string>
  readonly emailsEndpoint: Option.Option<string>
  /** A custom provider's own PKCE flag; built-in kinds follow OAUTH_PKCE_ENABLED. */
  readonly pkce: Option.Option<boolean>
  /** A custom provider's map from OAuthUserInfo fields to userinfo keys. */
  readonly claims: Readonly<Record<string, string>>
}

const CustomProviders = Schema.Array(
  Schema.Struct({
    name: Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_-]{0,31}$/)),
    authorization_endpoint: Schema.String,
    token_endpoint: Schema.String,
    userinfo_endpoint: Schema.String,
    scopes: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
    pkce: Schema.optionalWith(Schema.Boolean, { default: () => false }),
    client_id: Schema.String,
    client_secret: Schema.String,
    redirect_uris: Schema.NonEmptyArray(Schema.String),
    claims: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) })
  })
)

/** Every setting of the service, resolved. Secrets stay redacted until the code that needs them. */
export interface Settings {
  /** None: a random key is generated at start-up (tokens then do not survive a restart). */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  readonly apiPrefix: string
  readonly authRouterPrefix: string
  /** API_PREFIX followed by AUTH_ROUTER_PREFIX. */
  readonly authPrefix: string
  readonly host: string
  readonly port: number
  readonly databaseUrl: DatabaseUrl
  readonly workers: number
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  readonly userIdType: "uuid" | "integer" | "string"
  readonly blacklistEnabled: boolean
  readonly accessTokenExpireMinutes: number
  readonly refreshTokenExpireDays: number
  readonly refreshReuseGraceSeconds: number
  readonly emailVerifyExpireMinutes: number
  readonly passwordResetExpireMinutes: number
  readonly jwtAlgorithm: JwtAlgorithm
  readonly jwtPrivateKey: Option.Option<Redacted.Redacted<string>>
  readonly jwtIssuer: string
  readonly jwtAudience: Option.Option<string>
  readonly jwtLeewaySeconds: number
  readonly preventRegistrationEnumeration: boolean
  readonly loginField: string
  readonly passwordMinLength: number
  readonly passwordMaxLength: number
  readonly lockoutEnabled: boolean
  readonly maxLoginAttempts: number
  readonly lockoutDurationMinutes: number
  readonly authRateLimitEnabled: boolean
  readonly authRateLimits: Readonly<Record<RateLimitBucket, F.RateLimit>>
  readonly globalRateLimit: Option.Option<F.RateLimit>
  readonly trustedProxyHeaders: ReadonlyArray<string>
  readonly trustedProxyCount: number
  readonly tokenTransport: "bearer" | "cookie"
  readonly cookieSecure: boolean
  readonly cookieSameSite: "lax" | "strict" | "none"
  readonly cookieDomain: Option.Option<string>
  readonly corsOrigins: ReadonlyArray<string>
  readonly publicUrl: URL
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  readonly mailFrom: string
  readonly mailer: Option.Option<"smtp" | "console">
  readonly sendVerificationOnRegister: boolean
  readonly oauthAutoLinkByEmail: boolean
  readonly oauthStateExpireSeconds: number
  readonly oauthPkceEnabled: boolean
  readonly oauthProviders: ReadonlyArray<OAuthProviderSettings>
  readonly passkeyEnabled: boolean
  readonly passkeyRpId: Option.Option<string>
  readonly passkeyRpName: Option.Option<string>
  readonly passkeyOrigins: ReadonlyArray<string>
  readonly passkeyChallengeBackend: "memory" | "redis"
  readonly passkeyChallengeTtl: number
  readonly passkeyRequireUserVerification: boolean
  readonly logLevel: "trace" | "debug" | "info" | "warning" | "error" | "fatal" | "none"
  readonly logFormat: "json" | "pretty" | "logfmt"
}

export interface ResolvedSettings {
  readonly settings: Settings
  /** Things that work but deserve the operator's attention, one sentence each. */
  readonly warnings: ReadonlyArray<string>
}

/**
 * Reads every setting from an environment. Answers all problems at once, one line each, naming
 * the variable, the value's fault and the expected form; a secret's value is never repeated.
 */
export const parseSettings = (
  env: Readonly<Record<string, string | undefined>>
): Either.Either<ResolvedSettings, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const warnings: Array<string> = []
  const known = new Set<string>()

  /** The raw value; an empty variable counts as unset, except where emptiness is a value. */
  const raw = (name: string, emptyIsValue = false): string | undefined => {
    known.add(PREFIX + name)
    const value = env[PREFIX + name]
    return value === "" && !emptyIsValue ? undefined : value
  }
  const problem = (name: string, value: string, fault: string, expected: string, secret: boolean) =>
    problems.push(
      `${PREFIX}${name}${secret ? "" : `=${JSON.stringify(withoutCredentials(value))}`} ${fault}; expected ${expected}`
    )

  const optional = <A>(name: string, form: F.Form<A>, options: { secret?: boolean; emptyIsValue?: boolean } = {}) => {
    const value = raw(name, options.emptyIsValue)
    if (value === undefined) return Option.none<A>()
    const read = form.read(value)
    if (Either.isLeft(read)) {
      problem(name, value, read.left, form.expected, options.secret === true)
      return Option.none<A>()
    }
    return Option.some(read.right)
  }
  const setting = <A>(name: string, form: F.Form<A>, fallback: A, options: { emptyIsValue?: boolean } = {}) =>
    Option.getOrElse(optional(name, form, options), () => fallback)
  const secret = (name: string) => optional(name, F.text, { secret: true }).pipe(Option.map(Redacted.make))

  const secretKey = secret("SECRET_KEY")
  if (Option.isSome(secretKey) && Buffer.byteLength(Redacted.value(secretKey.value)) < 32) {
    problems.push(
      `${PREFIX}SECRET_KEY is too short; expected at least 32 bytes (\`portcullis secret\` prints a good one)`
    )
  }
  const apiPrefix = setting("API_PREFIX", F.pathPrefix, "/api/v1", { emptyIsValue: true })
  const authRouterPrefix = setting("AUTH_ROUTER_PREFIX", F.pathPrefix, "/auth", { emptyIsValue: true })
  const databaseUrlValue = setting("DATABASE_URL", databaseUrl, { kind: "sqlite", filename: "./data/portcullis.db" })
  const redisUrl = optional("REDIS_URL", F.url("redis:", "rediss:"), { secret: true }).pipe(
    Option.map((value) => Redacted.make(value.href))
  )
  const workers = setting("WORKERS", F.int(1, 64), 1)
  const minLength = setting("PASSWORD_MIN_LENGTH", F.int(1, 1024), 8)
  const maxLength = setting("PASSWORD_MAX_LENGTH", F.int(1, 4096), 256)
  const jwtAlgorithm = setting("JWT_ALGORITHM", { ...F.oneOf(...jwtAlgorithms), read: readAlgorithm }, "HS256")
  const jwtPrivateKey = secret("JWT_PRIVATE_KEY")
  const tokenTransport = setting("TOKEN_TRANSPORT", F.oneOf("bearer", "cookie"), "bearer")
  const cookieSecure = setting("COOKIE_SECURE", F.bool, true)
  const cookieSameSite = setting("COOKIE_SAMESITE", F.oneOf("lax", "strict", "none"), "lax")
  const publicUrl = setting("PUBLIC_URL", F.url("http:", "https:"), new URL("http://localhost:8000"))
  const smtpUrl = optional("SMTP_URL", F.url("smtp:", "smtps:"), { secret: true }).pipe(
    Option.map((value) => Redacted.make(value.href))
  )
  const mailer = optional("MAILER", F.oneOf("smtp", "console"))
  const blacklistEnabled = setting("BLACKLIST_ENABLED", F.bool, true)
  const passkeyEnabled = setting("PASSKEY_ENABLED", F.bool, false)
  const passkeyRpId = optional("PASSKEY_RP_ID", F.domain)
  const passkeyRpName = optional("PASSKEY_RP_NAME", F.text)
  const passkeyOrigins = setting("PASSKEY_ORIGINS", F.list(F.origin), [])
  const passkeyChallengeBackend = setting("PASSKEY_CHALLENGE_BACKEND", F.oneOf("memory", "redis"), "memory")

  const settings: Settings = {
    secretKey,
    apiPrefix,
    authRouterPrefix,
    authPrefix: apiPrefix + authRouterPrefix,
    host: setting("HOST", F.text, "127.0.0.1"),
    port: setting("PORT", F.int(0, 65_535), 8000),
    databaseUrl: databaseUrlValue,
    workers,
    redisUrl,
    userIdType: setting("USER_ID_TYPE", F.oneOf("uuid", "integer", "string"), "uuid"),
    blacklistEnabled,
    accessTokenExpireMinutes: setting("ACCESS_TOKEN_EXPIRE_MINUTES", F.int(1, 1440), 15),
    refreshTokenExpireDays: setting("REFRESH_TOKEN_EXPIRE_DAYS", F.int(1, 3650), 30),
    refreshReuseGraceSeconds: setting("REFRESH_REUSE_GRACE_SECONDS", F.int(0, 300), 0),
    emailVerifyExpireMinutes: setting("EMAIL_VERIFY_EXPIRE_MINUTES", F.int(1, 525_600), 1440),
    passwordResetExpireMinutes: setting("PASSWORD_RESET_EXPIRE_MINUTES", F.int(1, 1440), 30),
    jwtAlgorithm,
    jwtPrivateKey,
    jwtIssuer: setting("JWT_ISSUER", F.text, "portcullis"),
    jwtAudience: optional("JWT_AUDIENCE", F.text),
    jwtLeewaySeconds: setting("JWT_LEEWAY_SECONDS", F.int(0, 300), 30),
    preventRegistrationEnumeration: setting("PREVENT_REGISTRATION_ENUMERATION", F.bool, true),
    loginField: setting("LOGIN_FIELD", F.text, "email"),
    passwordMinLength: minLength,
    passwordMaxLength: maxLength,
    lockoutEnabled: setting("LOCKOUT_ENABLED", F.bool, true),
    maxLoginAttempts: setting("MAX_LOGIN_ATTEMPTS", F.int(1, 1000), 5),
    lockoutDurationMinutes: setting("LOCKOUT_DURATION_MINUTES", F.int(1, 10_080), 15),
    authRateLimitEnabled: setting("AUTH_RATE_LIMIT_ENABLED", F.bool, true),
    authRateLimits: setting(
      "AUTH_RATE_LIMITS",
      F.mapOf(Object.keys(rateLimitBuckets), F.rateLimit, rateLimitBuckets),
      rateLimitBuckets
    ) as Settings["authRateLimits"],
    globalRateLimit: optional("GLOBAL_RATE_LIMIT", F.rateLimit),
    trustedProxyHeaders: setting("TRUSTED_PROXY_HEADERS", F.list(F.text), []).map((h) => h.toLowerCase()),
    trustedProxyCount: setting("TRUSTED_PROXY_COUNT", F.int(1, 32), 1),
    tokenTransport,
    cookieSecure,
    cookieSameSite,
    cookieDomain: optional("COOKIE_DOMAIN", F.domain),
    corsOrigins: setting("CORS_ORIGINS", F.list(F.origin), []),
    publicUrl,
    smtpUrl,
    mailFrom: setting("MAIL_FROM", F.text, "no-reply@localhost"),
    mailer,
    sendVerificationOnRegister: setting("SEND_VERIFICATION_ON_REGISTER", F.bool, true),
    oauthAutoLinkByEmail: setting("OAUTH_AUTO_LINK_BY_EMAIL", F.bool, true),
    oauthStateExpireSeconds: setting("OAUTH_STATE_EXPIRE_SECONDS", F.int(30, 3600), 300),
    oauthPkceEnabled: setting("OAUTH_PKCE_ENABLED", F.bool, true),
    oauthProviders: [],
    passkeyEnabled,
    passkeyRpId,
    passkeyRpName,
    passkeyOrigins,
    passkeyChallengeBackend,
    passkeyChallengeTtl: setting("PASSKEY_CHALLENGE_TTL", F.int(10, 600), 60),
    passkeyRequireUserVerification: setting("PASSKEY_REQUIRE_USER_VERIFICATION", F.bool, true),
    logLevel: setting("LOG_LEVEL", logLevel, "info"),
    logFormat: setting("LOG_FORMAT", F.oneOf("json", "pretty", "logfmt"), "json")
  }

  const oauthProviders = readOAuthProviders(optional, secret, problems, warnings)

  // Rules between settings, once each value is known to be well-formed.
  if (minLength > maxLength) {
    problems.push(`${PREFIX}PASSWORD_MIN_LENGTH is above ${PREFIX}PASSWORD_MAX_LENGTH; expected min <= max`)
  }
  if (jwtAlgorithm.startsWith("HS") ? Option.isSome(jwtPrivateKey) : Option.isNone(jwtPrivateKey)) {
    problems.push(
      jwtAlgorithm.startsWith("HS")
        ? `${PREFIX}JWT_PRIVATE_KEY is set but ${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} signs with SECRET_KEY; expected an EdDSA, ES256 or RS256 algorithm, or no private key`
        : `${PREFIX}JWT_ALGORITHM=${jwtAlgorithm} needs ${PREFIX}JWT_PRIVATE_KEY; expected a PEM private key`
    )
  }
  if (workers > 1) {
    if (
      databaseUrlValue.kind === "memory" ||
      (databaseUrlValue.kind === "sqlite" && databaseUrlValue.filename === ":memory:")
    ) {
      problems.push(
        `${PREFIX}WORKERS=${workers} needs a shared database; expected ${PREFIX}DATABASE_URL=postgres://… or sqlite:<path>`
      )
    }
    if (Option.isNone(redisUrl)) {
      problems.push(`${PREFIX}WORKERS=${workers} needs shared state; expected ${PREFIX}REDIS_URL=redis://…`)
    }
  }
  if (passkeyEnabled) {
    if (Option.isNone(passkeyRpId))
      problems.push(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_RP_ID; expected ${F.domain.expected}`)
    if (Option.isNone(passkeyRpName))
      problems.push(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_RP_NAME; expected ${F.text.expected}`)
    if (passkeyOrigins.length === 0)
      problems.push(`${PREFIX}PASSKEY_ENABLED needs ${PREFIX}PASSKEY_ORIGINS; expected ${F.list(F.origin).expected}`)
    Option.map(passkeyRpId, (rpId) => {
      for (const value of passkeyOrigins) {
        const host = new URL(value).hostname
        if (host !== rpId && !host.endsWith(`.${rpId}`)) {
          problems.push(
            `${PREFIX}PASSKEY_ORIGINS has ${value}, which is not on ${PREFIX}PASSKEY_RP_ID=${rpId}; expected origins on that domain`
          )
        }
      }
    })
  }
  if (passkeyChallengeBackend === "redis" && Option.isNone(redisUrl)) {
    problems.push(`${PREFIX}PASSKEY_CHALLENGE_BACKEND=redis needs ${PREFIX}REDIS_URL; expected redis://…`)
  }
  if (cookieSameSite === "none" && !cookieSecure) {
    problems.push(
      `${PREFIX}COOKIE_SAMESITE=none needs ${PREFIX}COOKIE_SECURE=true; browsers refuse such cookies otherwise`
    )
  }
  if (Option.isSome(mailer) && mailer.value === "smtp" && Option.isNone(smtpUrl)) {
    problems.push(`${PREFIX}MAILER=smtp needs ${PREFIX}SMTP_URL; expected smtp://… or smtps://…`)
  }

  if (Option.isNone(secretKey)) {
    warnings.push(`${PREFIX}SECRET_KEY is not set: a random key is used, so tokens do not survive a restart`)
  }
  if (!blacklistEnabled) {
    warnings.push(`${PREFIX}BLACKLIST_ENABLED=false: logged-out access tokens stay valid until they expire`)
  }
  if (tokenTransport === "cookie" && !cookieSecure) {
    warnings.push(`${PREFIX}COOKIE_SECURE=false: the refresh cookie travels over plain HTTP`)
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith(PREFIX) && !known.has(name)) warnings.push(`${name} is not a Portcullis setting and is ignored`)
  }

  return problems.length > 0
    ? Either.left(problems)
    : Either.right({ settings: { ...settings, oauthProviders }, warnings })
}

/** A value as it may be echoed in a problem line: any `user:password@` of a URL masked. */
const withoutCredentials = (value: string) => value.replace(/([a-z][a-z0-9+.-]*:\/*)[^/@\s]*@/gi, "$1<credentials>@")

const readAlgorithm = (raw: string): Either.Either<JwtAlgorithm, string> => {
  const found = jwtAlgorithms.find((algorithm) => algorithm.toLowerCase() === raw.trim().toLowerCase())
  return found === undefined ? Either.left("is not a supported algorithm") : Either.right(found)
}

const logLevel: F.Form<Settings["logLevel"]> = {
  expected: "trace, debug, info, warning, error, fatal or none",
  read: (raw) => {
    const value = raw.trim().toLowerCase()
    return F.oneOf("trace", "debug", "info", "warning", "error", "fatal", "none").read(
      value === "warn" ? "warning" : value
    )
  }
}

/** An endpoint override: https anywhere, plain http only on a loopback host (local test providers). */
const endpoint: F.Form<string> = {
  expected: "an https:// URL (http:// only on localhost or 127.0.0.1)",
  read: (raw) =>
    Either.flatMap(F.url("http:", "https:").read(raw), (value) =>
      value.protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(value.hostname)
        ? Either.right(value.href)
        : Either.left("uses plain http on a host that is not loopback")
    )
}

const readOAuthProviders = (
  optional: <A>(name: string, form: F.Form<A>, options?: { secret?: boolean }) => Option.Option<A>,
  secret: (name: string) => Option.Option<Redacted.Redacted<string>>,
  problems: Array<string>,
  warnings: Array<string>
): ReadonlyArray<OAuthProviderSettings> => {
  const providers: Array<OAuthProviderSettings> = []
  for (const kind of oauthKinds) {
    const name = `OAUTH_${kind.toUpperCase()}`
    const clientId = optional(`${name}_CLIENT_ID`, F.text)
    const clientSecret = secret(`${name}_CLIENT_SECRET`)
    const redirectUris = optional(`${name}_REDIRECT_URIS`, F.list(F.url("http:", "https:")))
    const scopes = optional(`${name}_SCOPES`, F.list(F.text))
    const authorizationEndpoint = optional(`${name}_AUTHORIZATION_ENDPOINT`, endpoint)
    const tokenEndpoint = optional(`${name}_TOKEN_ENDPOINT`, endpoint)
    const userinfoEndpoint = optional(`${name}_USERINFO_ENDPOINT`, endpoint)
    const emailsEndpoint = kind === "github" ? optional(`${name}_EMAILS_ENDPOINT`, endpoint) : Option.none()
    if (Option.isNone(clientId)) {
      if (Option.isSome(clientSecret) || Option.isSome(redirectUris)) {
        warnings.push(`${PREFIX}${name}_CLIENT_ID is not set, so the other ${PREFIX}${name}_ settings are ignored`)
      }
      continue
    }
    if (Option.isNone(clientSecret)) {
      problems.push(`${PREFIX}${name}_CLIENT_ID is set without ${PREFIX}${name}_CLIENT_SECRET; expected both`)
    }
    if (Option.isNone(redirectUris) || redirectUris.value.length === 0) {
      problems.push(
        `${PREFIX}${name}_CLIENT_ID is set without ${PREFIX}${name}_REDIRECT_URIS; expected the allowed callback URLs`
      )
    }
    if (Option.isNone(clientSecret) || Option.isNone(redirectUris)) continue
    providers.push({
      name: kind,
      kind,
      clientId: clientId.value,
      clientSecret: clientSecret.value,
      redirectUris: redirectUris.value.map((uri) => uri.href),
      scopes,
      authorizationEndpoint,
      tokenEndpoint,
      userinfoEndpoint,
      emailsEndpoint,
      pkce: Option.none(),
      claims: {}
    })
  }
  Option.map(optional("OAUTH_CUSTOM_PROVIDERS", F.json, { secret: true }), (value) => {
    const decoded = Schema.decodeUnknownEither(CustomProviders)(value, { onExcessProperty: "error" })
    if (Either.isLeft(decoded)) {
      problems.push(
        `${PREFIX}OAUTH_CUSTOM_PROVIDERS does not fit; expected a JSON list of {name, authorization_endpoint, token_endpoint, userinfo_endpoint, scopes, pkce, client_id, client_secret, redirect_uris, claims}`
      )
      return
    }
    for (const custom of decoded.right) {
      if (providers.some((provider) => provider.name === custom.name)) {
        problems.push(`${PREFIX}OAUTH_CUSTOM_PROVIDERS names ${custom.name} twice; expected unique names`)
        continue
      }
      const endpoints = [custom.authorization_endpoint, custom.token_endpoint, custom.userinfo_endpoint].map(
        endpoint.read
      )
      const redirects = custom.redirect_uris.map((uri) => Either.map(F.url("http:", "https:").read(uri), String))
      const bad = [...endpoints, ...redirects].find(Either.isLeft)
      if (bad !== undefined) {
        problems.push(
          `${PREFIX}OAUTH_CUSTOM_PROVIDERS gives ${custom.name} an endpoint or redirect URI that ${bad.left}; expected ${endpoint.expected}`
        )
        continue
      }
      providers.push({
        name: custom.name,
        kind: "custom",
        clientId: custom.client_id,
        clientSecret: Redacted.make(custom.client_secret),
        redirectUris: custom.redirect_uris,
        scopes: Option.some(custom.scopes),
        authorizationEndpoint: Option.some(custom.authorization_endpoint),
        tokenEndpoint: Option.some(custom.token_endpoint),
        userinfoEndpoint: Option.some(custom.userinfo_endpoint),
        emailsEndpoint: Option.none(),
        pkce: Option.some(custom.pkce),
        claims: custom.claims
      })
    }
  })
  return providers
}
