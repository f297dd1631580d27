import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, Redacted } from "effect"
import { resolveSecretKey } from "../../composition/adapters.js"
import { notYetSupported } from "../../composition/startup.js"
import { parseSettings, type ResolvedSettings, type Settings } from "../../config/Settings.js"

type Env = Readonly<Record<string, string>>

const ed25519 = generateKeyPairSync("ed25519")
const ed25519Pem = ed25519.privateKey.export({ format: "pem", type: "pkcs8" }).toString()
const ed25519PublicPem = ed25519.publicKey.export({ format: "pem", type: "spki" }).toString()

/** The resolved settings of an environment; fails the test, showing every problem line, when it is refused. */
const accepted = (env: Env): ResolvedSettings => {
  const result = parseSettings(env)
  if (Either.isLeft(result)) throw new Error(`expected the settings to be accepted, got:\n${result.left.join("\n")}`)
  return result.right
}
const settingsOf = (env: Env): Settings => accepted(env).settings

/** The problem lines of an environment; fails the test when it is accepted. */
const refused = (env: Env): ReadonlyArray<string> => {
  const result = parseSettings(env)
  if (Either.isRight(result)) throw new Error(`expected the settings to be refused: ${JSON.stringify(env)}`)
  return result.left
}

/** The one problem line of an environment with a single fault. */
const onlyProblem = (env: Env): string => {
  const lines = refused(env)
  expect(lines).toHaveLength(1)
  return lines[0] ?? ""
}

const rateLimitDefaults = {
  login: { count: 5, windowSeconds: 60 },
  register: { count: 3, windowSeconds: 60 },
  password_reset: { count: 3, windowSeconds: 60 },
  verify_email: { count: 3, windowSeconds: 60 },
  passkey_auth: { count: 10, windowSeconds: 60 },
  refresh: { count: 30, windowSeconds: 60 },
  oauth_callback: { count: 10, windowSeconds: 60 },
  oauth_authorize: { count: 30, windowSeconds: 60 },
  change_password: { count: 5, windowSeconds: 60 },
  passkey_register: { count: 10, windowSeconds: 60 },
  email_sign_in: { count: 3, windowSeconds: 60 },
  email_sign_in_confirm: { count: 10, windowSeconds: 60 },
  oidc_token: { count: 60, windowSeconds: 60 },
  oidc_authorize: { count: 30, windowSeconds: 60 },
  oidc_register: { count: 10, windowSeconds: 3600 }
}

const goodKey = "k".repeat(32)

describe("parseSettings defaults", () => {
  it("gives every setting its documented default when the environment is empty", () => {
    const { settings } = accepted({})
    expect(settings).toMatchObject({
      server: {
        apiPrefix: "/api/v1",
        authRouterPrefix: "/auth",
        authPrefix: "/api/v1/auth",
        host: "127.0.0.1",
        port: 8000,
        workers: 1,
        trustedProxyHeaders: [],
        trustedProxyCount: 1,
        corsOrigins: [],
        demo: false
      },
      storage: {
        databaseUrl: { kind: "sqlite", filename: "./data/portcullis.db" },
        userIdType: "uuid"
      },
      tokens: {
        blacklistEnabled: true,
        accessTokenExpireMinutes: 15,
        refreshTokenExpireDays: 30,
        refreshReuseGraceSeconds: 0,
        emailVerifyExpireMinutes: 1440,
        passwordResetExpireMinutes: 30,
        jwtAlgorithm: "HS256",
        jwtIssuer: "portcullis",
        jwtLeewaySeconds: 30
      },
      cookies: {
        tokenTransport: "bearer",
        cookieSecure: true,
        cookieSameSite: "lax"
      },
      limits: {
        lockoutEnabled: true,
        maxLoginAttempts: 5,
        lockoutDurationMinutes: 15,
        authRateLimitEnabled: true,
        authRateLimits: rateLimitDefaults
      },
      accounts: {
        preventRegistrationEnumeration: true,
        loginField: "email",
        passwordMinLength: 8,
        passwordMaxLength: 256,
        sendVerificationOnRegister: true
      },
      mail: {
        mailFrom: "no-reply@localhost"
      },
      oauth: {
        oauthAutoLinkByEmail: true,
        oauthStateExpireSeconds: 300,
        oauthPkceEnabled: true,
        oauthProviders: []
      },
      passkeys: {
        passkeyEnabled: false,
        passkeyOrigins: [],
        passkeyChallengeBackend: "memory",
        passkeyChallengeTtl: 60,
        passkeyRequireUserVerification: true
      },
      logging: {
        logLevel: "info",
        logFormat: "json"
      }
    })
    expect(settings.server.publicUrl.href).toBe("http://localhost:8000/")
    const unsetOptions: ReadonlyArray<Option.Option<unknown>> = [
      settings.tokens.secretKey,
      settings.storage.redisUrl,
      settings.tokens.jwtPrivateKey,
      settings.tokens.jwtAudience,
      settings.limits.globalRateLimit,
      settings.cookies.cookieDomain,
      settings.mail.smtpUrl,
      settings.mail.mailer,
      settings.passkeys.passkeyRpId,
      settings.passkeys.passkeyRpName
    ]
    for (const unset of unsetOptions) {
      expect(Option.isNone(unset)).toBe(true)
    }
  })

  it("warns, and only warns, that SECRET_KEY is unset", () => {
    const { warnings } = accepted({})
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("SERVICE_SECRET_KEY")
    expect(warnings[0]).toMatch(/not set/)
  })

  it("has no SECRET_KEY warning once a key is set", () => {
    expect(accepted({ SERVICE_SECRET_KEY: goodKey }).warnings).toEqual([])
  })

  it("ignores variables without the SERVICE_ prefix", () => {
    expect(
      accepted({ SERVICE_SECRET_KEY: goodKey, HOST: "workstation", PATH: "/usr/bin", HOME: "/root" }).warnings
    ).toEqual([])
  })

  it("treats an empty variable as unset", () => {
    const settings = settingsOf({ SERVICE_PORT: "", SERVICE_LOCKOUT_ENABLED: "", SERVICE_HOST: "" })
    expect(settings.server.port).toBe(8000)
    expect(settings.limits.lockoutEnabled).toBe(true)
    expect(settings.server.host).toBe("127.0.0.1")
  })

  it("generates a random key of at least 32 bytes when SECRET_KEY is unset, and uses SECRET_KEY when set", () => {
    const settings = settingsOf({})
    const first = Redacted.value(resolveSecretKey(settings))
    const second = Redacted.value(resolveSecretKey(settings))
    expect(Buffer.byteLength(first)).toBeGreaterThanOrEqual(32)
    expect(first).not.toBe(second)
    expect(Redacted.value(resolveSecretKey(settingsOf({ SERVICE_SECRET_KEY: goodKey })))).toBe(goodKey)
  })

  it("accepts every documented setting at once, with no setting reported as unknown", () => {
    const { settings, warnings } = accepted({
      SERVICE_SECRET_KEY: goodKey,
      SERVICE_API_PREFIX: "/api/v2",
      SERVICE_AUTH_ROUTER_PREFIX: "/identity",
      SERVICE_BLACKLIST_ENABLED: "true",
      SERVICE_ACCESS_TOKEN_EXPIRE_MINUTES: "10",
      SERVICE_PREVENT_REGISTRATION_ENUMERATION: "false",
      SERVICE_LOGIN_FIELD: "username",
      SERVICE_OAUTH_AUTO_LINK_BY_EMAIL: "false",
      SERVICE_OAUTH_STATE_EXPIRE_SECONDS: "600",
      SERVICE_OAUTH_PKCE_ENABLED: "false",
      SERVICE_REDIS_URL: "redis://cache.internal:6379/0",
      SERVICE_AUTH_RATE_LIMITS: '{"login":"10/minute"}',
      SERVICE_PASSKEY_ENABLED: "true",
      SERVICE_PASSKEY_RP_ID: "example.com",
      SERVICE_PASSKEY_RP_NAME: "Example",
      SERVICE_PASSKEY_ORIGINS: "https://example.com",
      SERVICE_PASSKEY_CHALLENGE_BACKEND: "redis",
      SERVICE_PASSKEY_CHALLENGE_TTL: "120",
      SERVICE_PASSKEY_REQUIRE_USER_VERIFICATION: "false",
      SERVICE_HOST: "0.0.0.0",
      SERVICE_PORT: "9000",
      SERVICE_DATABASE_URL: "sqlite:/var/lib/portcullis/db.sqlite",
      SERVICE_WORKERS: "4",
      SERVICE_USER_ID_TYPE: "integer",
      SERVICE_REFRESH_TOKEN_EXPIRE_DAYS: "7",
      SERVICE_REFRESH_REUSE_GRACE_SECONDS: "5",
      SERVICE_EMAIL_VERIFY_EXPIRE_MINUTES: "60",
      SERVICE_PASSWORD_RESET_EXPIRE_MINUTES: "20",
      SERVICE_JWT_ALGORITHM: "EdDSA",
      SERVICE_JWT_PRIVATE_KEY: ed25519Pem,
      SERVICE_JWT_VERIFY_KEYS: ed25519PublicPem,
      SERVICE_JWT_ISSUER: "https://auth.example.com",
      SERVICE_JWT_AUDIENCE: "example-api",
      SERVICE_JWT_LEEWAY_SECONDS: "5",
      SERVICE_PASSWORD_MIN_LENGTH: "12",
      SERVICE_PASSWORD_MAX_LENGTH: "128",
      SERVICE_LOCKOUT_ENABLED: "false",
      SERVICE_MAX_LOGIN_ATTEMPTS: "10",
      SERVICE_LOCKOUT_DURATION_MINUTES: "30",
      SERVICE_AUTH_RATE_LIMIT_ENABLED: "false",
      SERVICE_GLOBAL_RATE_LIMIT: "600/minute",
      SERVICE_TRUSTED_PROXY_HEADERS: "X-Forwarded-For",
      SERVICE_TRUSTED_PROXY_COUNT: "2",
      SERVICE_TOKEN_TRANSPORT: "cookie",
      SERVICE_COOKIE_SECURE: "true",
      SERVICE_COOKIE_SAMESITE: "strict",
      SERVICE_COOKIE_DOMAIN: "example.com",
      SERVICE_CORS_ORIGINS: "https://app.example.com",
      SERVICE_DEMO: "true",
      SERVICE_PUBLIC_URL: "https://auth.example.com",
      SERVICE_SMTP_URL: "smtps://mailer:pw@mail.example.com:465",
      SERVICE_MAIL_FROM: "auth@example.com",
      SERVICE_MAILER: "smtp",
      SERVICE_SEND_VERIFICATION_ON_REGISTER: "false",
      SERVICE_LOG_LEVEL: "debug",
      SERVICE_LOG_FORMAT: "pretty",
      SERVICE_OAUTH_GITHUB_CLIENT_ID: "gh-id",
      SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "gh-secret",
      SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "https://app.example.com/oauth/github",
      SERVICE_OAUTH_GITHUB_SCOPES: "read:user,user:email",
      SERVICE_OAUTH_GITHUB_AUTHORIZATION_ENDPOINT: "https://github.example.com/login/oauth/authorize",
      SERVICE_OAUTH_GITHUB_TOKEN_ENDPOINT: "https://github.example.com/login/oauth/access_token",
      SERVICE_OAUTH_GITHUB_USERINFO_ENDPOINT: "https://api.github.example.com/user",
      SERVICE_OAUTH_GITHUB_EMAILS_ENDPOINT: "https://api.github.example.com/user/emails",
      SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify([
        {
          name: "acme",
          authorization_endpoint: "https://sso.acme.test/authorize",
          token_endpoint: "https://sso.acme.test/token",
          userinfo_endpoint: "https://sso.acme.test/userinfo",
          client_id: "acme-id",
          client_secret: "acme-secret",
          redirect_uris: ["https://app.example.com/oauth/acme"]
        }
      ])
    })
    expect(warnings).toEqual([])
    expect(settings).toMatchObject({
      server: {
        authPrefix: "/api/v2/identity",
        port: 9000,
        host: "0.0.0.0",
        workers: 4,
        trustedProxyHeaders: ["x-forwarded-for"],
        corsOrigins: ["https://app.example.com"],
        demo: true
      },
      storage: {
        databaseUrl: { kind: "sqlite", filename: "/var/lib/portcullis/db.sqlite" },
        userIdType: "integer"
      },
      tokens: {
        jwtAlgorithm: "EdDSA"
      },
      cookies: {
        tokenTransport: "cookie",
        cookieSameSite: "strict"
      },
      limits: {
        globalRateLimit: Option.some({ count: 600, windowSeconds: 60 })
      },
      accounts: {
        passwordMinLength: 12,
        passwordMaxLength: 128
      },
      passkeys: {
        passkeyChallengeBackend: "redis",
        passkeyChallengeTtl: 120
      },
      logging: {
        logLevel: "debug",
        logFormat: "pretty"
      }
    })
    expect(settings.oauth.oauthProviders.map((provider) => [provider.name, provider.kind])).toEqual([
      ["github", "github"],
      ["acme", "custom"]
    ])
  })
})

describe("parseSettings value forms", () => {
  it.each([
    ["true", true],
    ["TRUE", true],
    ["True", true],
    ["1", true],
    ["yes", true],
    ["YES", true],
    [" yes ", true],
    ["false", false],
    ["FALSE", false],
    ["0", false],
    ["no", false],
    ["No", false]
  ])("reads the boolean %j as %s", (raw, value) => {
    expect(settingsOf({ SERVICE_LOCKOUT_ENABLED: raw }).limits.lockoutEnabled).toBe(value)
    expect(settingsOf({ SERVICE_COOKIE_SECURE: raw }).cookies.cookieSecure).toBe(value)
  })

  it.each(["on", "off", "y", "2", "truthy", "enabled"])("refuses %j as a boolean, naming the accepted forms", (raw) => {
    const line = onlyProblem({ SERVICE_BLACKLIST_ENABLED: raw })
    expect(line).toContain("SERVICE_BLACKLIST_ENABLED")
    expect(line).toContain(JSON.stringify(raw))
    expect(line).toContain("expected true, false, 1, 0, yes or no")
  })

  it("reads a list as CSV or as a JSON array, dropping blank entries", () => {
    const expected = ["https://a.example.com", "https://b.example.com"]
    expect(
      settingsOf({ SERVICE_CORS_ORIGINS: "https://a.example.com,https://b.example.com" }).server.corsOrigins
    ).toEqual(expected)
    expect(
      settingsOf({ SERVICE_CORS_ORIGINS: " https://a.example.com , https://b.example.com ," }).server.corsOrigins
    ).toEqual(expected)
    expect(settingsOf({ SERVICE_CORS_ORIGINS: JSON.stringify(expected) }).server.corsOrigins).toEqual(expected)
    expect(settingsOf({ SERVICE_CORS_ORIGINS: "[]" }).server.corsOrigins).toEqual([])
    expect(
      settingsOf({ SERVICE_TRUSTED_PROXY_HEADERS: '["X-Forwarded-For","X-Real-IP"]' }).server.trustedProxyHeaders
    ).toEqual(["x-forwarded-for", "x-real-ip"])
  })

  it.each([
    ['["https://a.example.com", 3]', "not a string"],
    ['["https://a.example.com"', "not valid JSON"],
    ["https://a.example.com/path", "path"],
    ["a.example.com", "origin"]
  ])("refuses the list %j", (raw, fault) => {
    const line = onlyProblem({ SERVICE_CORS_ORIGINS: raw })
    expect(line).toContain("SERVICE_CORS_ORIGINS")
    expect(line).toContain(fault)
    expect(line).toContain("expected a comma-separated list or a JSON array")
  })

  it("reads integers with surrounding blanks and refuses fractions, exponents and out-of-range values", () => {
    expect(settingsOf({ SERVICE_PORT: " 9000 " }).server.port).toBe(9000)
    for (const raw of ["8000.0", "1e3", "0x1f", "65536", "-1", "eighty"]) {
      const line = onlyProblem({ SERVICE_PORT: raw })
      expect(line.startsWith(`SERVICE_PORT=${JSON.stringify(raw)} `)).toBe(true)
      expect(line).toContain("expected an integer from 0 to 65535")
    }
  })

  it("accepts case variants of enumerations", () => {
    expect(settingsOf({ SERVICE_JWT_ALGORITHM: "hs512" }).tokens.jwtAlgorithm).toBe("HS512")
    expect(settingsOf({ SERVICE_COOKIE_SAMESITE: "Strict" }).cookies.cookieSameSite).toBe("strict")
    expect(settingsOf({ SERVICE_LOG_LEVEL: "WARN" }).logging.logLevel).toBe("warning")
  })

  it("reads DATABASE_URL in each documented form", () => {
    expect(settingsOf({ SERVICE_DATABASE_URL: "memory:" }).storage.databaseUrl).toEqual({ kind: "memory" })
    expect(settingsOf({ SERVICE_DATABASE_URL: "sqlite:/tmp/x.db" }).storage.databaseUrl).toEqual({
      kind: "sqlite",
      filename: "/tmp/x.db"
    })
    expect(settingsOf({ SERVICE_DATABASE_URL: "sqlite::memory:" }).storage.databaseUrl).toEqual({
      kind: "sqlite",
      filename: ":memory:"
    })
    const postgres = settingsOf({ SERVICE_DATABASE_URL: "postgres://app:pw@db.internal/portcullis" }).storage
      .databaseUrl
    expect(postgres.kind).toBe("postgres")
    for (const raw of ["sqlite:", "mysql://db/x", "portcullis.db"]) {
      expect(onlyProblem({ SERVICE_DATABASE_URL: raw })).toContain("SERVICE_DATABASE_URL")
    }
  })
})

describe("parseSettings PORT", () => {
  it("listens on PORT when SERVICE_PORT is unset, and SERVICE_PORT wins when both are set", () => {
    expect(settingsOf({ PORT: "9100" }).server.port).toBe(9100)
    expect(settingsOf({ PORT: "9100", SERVICE_PORT: "9200" }).server.port).toBe(9200)
    expect(settingsOf({ PORT: "9100", SERVICE_PORT: "" }).server.port).toBe(9100)
  })

  it("refuses an invalid PORT naming PORT, but not when SERVICE_PORT overrides it", () => {
    expect(onlyProblem({ PORT: "http" })).toMatch(
      /^PORT="http" is not an integer; expected an integer from 0 to 65535$/
    )
    expect(settingsOf({ PORT: "http", SERVICE_PORT: "9200" }).server.port).toBe(9200)
  })

  it("never listens on HOST: shells export it as the machine's name", () => {
    expect(settingsOf({ HOST: "workstation.lan" }).server.host).toBe("127.0.0.1")
  })
})

describe("parseSettings PUBLIC_URL", () => {
  it("is http://localhost:<PORT> when unset, whichever variable gave the port", () => {
    const publicUrl = (env: Env) => settingsOf(env).server.publicUrl.href
    expect(publicUrl({ SERVICE_PORT: "19500" })).toBe("http://localhost:19500/")
    expect(publicUrl({ PORT: "19600" })).toBe("http://localhost:19600/")
    expect(publicUrl({ PORT: "19600", SERVICE_PORT: "19500" })).toBe("http://localhost:19500/")
  })

  it("is its own value when set, whatever the port", () => {
    const settings = settingsOf({ SERVICE_PORT: "19500", SERVICE_PUBLIC_URL: "https://auth.example.com" })
    expect(settings.server.publicUrl.href).toBe("https://auth.example.com/")
  })
})

describe("parseSettings STORE_TIMEOUT_SECONDS", () => {
  it("bounds every store call at 5 seconds by default, 1 to 60 when set", () => {
    expect(settingsOf({}).storage.storeTimeoutSeconds).toBe(5)
    expect(settingsOf({ SERVICE_STORE_TIMEOUT_SECONDS: "2" }).storage.storeTimeoutSeconds).toBe(2)
    expect(onlyProblem({ SERVICE_STORE_TIMEOUT_SECONDS: "0" })).toContain("SERVICE_STORE_TIMEOUT_SECONDS")
    expect(onlyProblem({ SERVICE_STORE_TIMEOUT_SECONDS: "61" })).toContain("from 1 to 60")
  })
})

describe("parseSettings AUTH_RATE_LIMITS", () => {
  it("overrides one bucket and keeps the other defaults", () => {
    expect(settingsOf({ SERVICE_AUTH_RATE_LIMITS: '{"login":"10/minute"}' }).limits.authRateLimits).toEqual({
      ...rateLimitDefaults,
      login: { count: 10, windowSeconds: 60 }
    })
  })

  it("reads every window form: second, minute, hour, day and <n>s", () => {
    const limits = settingsOf({
      SERVICE_AUTH_RATE_LIMITS: JSON.stringify({
        login: "100/30s",
        register: "2/hour",
        verify_email: "1/day",
        passkey_auth: "4/second",
        refresh: " 60 / minute "
      })
    }).limits.authRateLimits
    expect(limits.login).toEqual({ count: 100, windowSeconds: 30 })
    expect(limits.register).toEqual({ count: 2, windowSeconds: 3600 })
    expect(limits.verify_email).toEqual({ count: 1, windowSeconds: 86_400 })
    expect(limits.passkey_auth).toEqual({ count: 4, windowSeconds: 1 })
    expect(limits.refresh).toEqual({ count: 60, windowSeconds: 60 })
    expect(limits.password_reset).toEqual(rateLimitDefaults.password_reset)
    expect(limits.oauth_callback).toEqual(rateLimitDefaults.oauth_callback)
  })

  it("refuses an unknown bucket name, naming it", () => {
    const line = onlyProblem({ SERVICE_AUTH_RATE_LIMITS: '{"signin":"5/minute"}' })
    expect(line).toContain("SERVICE_AUTH_RATE_LIMITS")
    expect(line).toContain("signin")
    expect(line).toContain("expected a JSON object of login, register")
  })

  it.each([
    ['{"login":"5 per minute"}', "login"],
    ['{"login":"0/minute"}', "login"],
    ['{"login":"5/0s"}', "login"],
    ['{"login":"5/fortnight"}', "login"],
    ['{"login":5}', "login"],
    ['["login"]', "not a JSON object"],
    ["5/minute", "not valid JSON"],
    ["{login: 5/minute}", "not valid JSON"]
  ])("refuses %j", (raw, fault) => {
    const line = onlyProblem({ SERVICE_AUTH_RATE_LIMITS: raw })
    expect(line.startsWith("SERVICE_AUTH_RATE_LIMITS=")).toBe(true)
    expect(line).toContain(fault)
    expect(line).toContain("expected ")
  })

  it("reads GLOBAL_RATE_LIMIT as one limit", () => {
    expect(settingsOf({ SERVICE_GLOBAL_RATE_LIMIT: "600/minute" }).limits.globalRateLimit).toEqual(
      Option.some({ count: 600, windowSeconds: 60 })
    )
    expect(onlyProblem({ SERVICE_GLOBAL_RATE_LIMIT: "600" })).toContain("SERVICE_GLOBAL_RATE_LIMIT")
  })
})

describe("parseSettings prefixes", () => {
  it.each([
    [{}, "/api/v1/auth"],
    [{ SERVICE_API_PREFIX: "" }, "/auth"],
    [{ SERVICE_AUTH_ROUTER_PREFIX: "" }, "/api/v1"],
    [{ SERVICE_API_PREFIX: "", SERVICE_AUTH_ROUTER_PREFIX: "" }, ""],
    [{ SERVICE_API_PREFIX: "/v2" }, "/v2/auth"],
    [{ SERVICE_API_PREFIX: "/v2", SERVICE_AUTH_ROUTER_PREFIX: "/identity" }, "/v2/identity"],
    [{ SERVICE_API_PREFIX: "/api/v3", SERVICE_AUTH_ROUTER_PREFIX: "/a/b" }, "/api/v3/a/b"]
  ])("combines %j into %j", (env, authPrefix) => {
    expect(settingsOf(env).server.authPrefix).toBe(authPrefix)
  })

  it("keeps API_PREFIX and AUTH_ROUTER_PREFIX apart", () => {
    const settings = settingsOf({ SERVICE_API_PREFIX: "", SERVICE_AUTH_ROUTER_PREFIX: "/auth" })
    expect(settings.server.apiPrefix).toBe("")
    expect(settings.server.authRouterPrefix).toBe("/auth")
  })

  it.each(["api", "/api/", "/", "/api v1", "https://x/api"])("refuses the prefix %j", (raw) => {
    const line = onlyProblem({ SERVICE_API_PREFIX: raw })
    expect(line.startsWith(`SERVICE_API_PREFIX=${JSON.stringify(raw)} `)).toBe(true)
    expect(line).toContain("expected empty or a path")
    expect(onlyProblem({ SERVICE_AUTH_ROUTER_PREFIX: raw })).toContain("SERVICE_AUTH_ROUTER_PREFIX")
  })
})

/** One bad value for each non-secret setting; each is refused on its own, with no rule between settings involved. */
const invalid: Env = {
  SERVICE_API_PREFIX: "api",
  SERVICE_AUTH_ROUTER_PREFIX: "/auth/",
  SERVICE_HOST: "   ",
  SERVICE_PORT: "abc",
  SERVICE_DATABASE_URL: "mysql://db/portcullis",
  SERVICE_WORKERS: "0",
  SERVICE_USER_ID_TYPE: "bigint",
  SERVICE_BLACKLIST_ENABLED: "maybe",
  SERVICE_ACCESS_TOKEN_EXPIRE_MINUTES: "0",
  SERVICE_REFRESH_TOKEN_EXPIRE_DAYS: "-1",
  SERVICE_REFRESH_REUSE_GRACE_SECONDS: "301",
  SERVICE_EMAIL_VERIFY_EXPIRE_MINUTES: "a day",
  SERVICE_PASSWORD_RESET_EXPIRE_MINUTES: "1.5",
  SERVICE_JWT_ALGORITHM: "none",
  SERVICE_JWT_ISSUER: " ",
  SERVICE_JWT_AUDIENCE: " ",
  SERVICE_JWT_LEEWAY_SECONDS: "-5",
  SERVICE_PREVENT_REGISTRATION_ENUMERATION: "2",
  SERVICE_LOGIN_FIELD: " ",
  SERVICE_PASSWORD_MIN_LENGTH: "0",
  SERVICE_PASSWORD_MAX_LENGTH: "long",
  SERVICE_LOCKOUT_ENABLED: "on",
  SERVICE_MAX_LOGIN_ATTEMPTS: "0",
  SERVICE_LOCKOUT_DURATION_MINUTES: "0",
  SERVICE_AUTH_RATE_LIMIT_ENABLED: "y",
  SERVICE_AUTH_RATE_LIMITS: "5/minute",
  SERVICE_GLOBAL_RATE_LIMIT: "600 per minute",
  SERVICE_TRUSTED_PROXY_HEADERS: "[1]",
  SERVICE_TRUSTED_PROXY_COUNT: "0",
  SERVICE_TOKEN_TRANSPORT: "header",
  SERVICE_COOKIE_SECURE: "sometimes",
  SERVICE_COOKIE_SAMESITE: "lenient",
  SERVICE_COOKIE_DOMAIN: "https://example.com",
  SERVICE_CORS_ORIGINS: "https://app.example.com/path",
  SERVICE_PUBLIC_URL: "ftp://example.com",
  SERVICE_MAIL_FROM: " ",
  SERVICE_MAILER: "sendmail",
  SERVICE_SEND_VERIFICATION_ON_REGISTER: "x",
  SERVICE_OAUTH_AUTO_LINK_BY_EMAIL: "x",
  SERVICE_OAUTH_STATE_EXPIRE_SECONDS: "10",
  SERVICE_OAUTH_PKCE_ENABLED: "x",
  SERVICE_PASSKEY_ENABLED: "x",
  SERVICE_PASSKEY_RP_ID: "https://example.com",
  SERVICE_PASSKEY_RP_NAME: " ",
  SERVICE_PASSKEY_ORIGINS: "example.com",
  SERVICE_PASSKEY_CHALLENGE_BACKEND: "disk",
  SERVICE_PASSKEY_CHALLENGE_TTL: "5",
  SERVICE_PASSKEY_REQUIRE_USER_VERIFICATION: "x",
  SERVICE_DEMO: "maybe",
  SERVICE_LOG_LEVEL: "loud",
  SERVICE_LOG_FORMAT: "xml",
  SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: "not a url",
  SERVICE_OAUTH_GITLAB_SCOPES: "[1]"
}

describe("parseSettings problem lines", () => {
  it.each(Object.entries(invalid))(
    "refuses %s=%j with one line naming it, its value and the expected form",
    (name, raw) => {
      const line = onlyProblem({ [name]: raw })
      expect(line.startsWith(`${name}=${JSON.stringify(raw)} `)).toBe(true)
      expect(line).toMatch(/; expected .+/)
    }
  )

  it("reports every invalid value at once, one line each", () => {
    const lines = refused(invalid)
    const names = Object.keys(invalid)
    expect(lines).toHaveLength(names.length)
    for (const name of names) {
      expect(lines.filter((line) => line.startsWith(`${name}=`))).toHaveLength(1)
    }
  })

  it("keeps a value with a line break on one line", () => {
    const line = onlyProblem({ SERVICE_PORT: "80\n81" })
    expect(line).not.toContain("\n")
    expect(line.startsWith('SERVICE_PORT="80\\n81" ')).toBe(true)
  })

  it("reports two invalid values as two lines", () => {
    const lines = refused({ SERVICE_PORT: "abc", SERVICE_LOCKOUT_ENABLED: "perhaps" })
    expect(lines).toHaveLength(2)
    expect(lines.some((line) => line.startsWith('SERVICE_PORT="abc"'))).toBe(true)
    expect(lines.some((line) => line.startsWith('SERVICE_LOCKOUT_ENABLED="perhaps"'))).toBe(true)
  })

  it("reports a fault between settings beside a bad value", () => {
    const lines = refused({ SERVICE_PORT: "abc", SERVICE_COOKIE_SAMESITE: "none", SERVICE_COOKIE_SECURE: "false" })
    expect(lines).toHaveLength(2)
    expect(lines.join("\n")).toContain("SERVICE_PORT")
    expect(lines.join("\n")).toContain("SERVICE_COOKIE_SAMESITE")
  })
})

describe("parseSettings secrets", () => {
  const shortKey = "short-but-still-secret-Zq9" // 26 bytes

  it("refuses a SECRET_KEY shorter than 32 bytes without repeating it", () => {
    const line = onlyProblem({ SERVICE_SECRET_KEY: shortKey })
    expect(line).toContain("SERVICE_SECRET_KEY")
    expect(line).toContain("32 bytes")
    expect(line).not.toContain(shortKey)
    expect(line).not.toContain("Zq9")
  })

  it("refuses a 31-byte key and accepts a 32-byte one, counting bytes rather than characters", () => {
    expect(onlyProblem({ SERVICE_SECRET_KEY: "x".repeat(31) })).toContain("SERVICE_SECRET_KEY")
    expect(Option.map(settingsOf({ SERVICE_SECRET_KEY: goodKey }).tokens.secretKey, Redacted.value)).toEqual(
      Option.some(goodKey)
    )
    // 16 two-byte characters are 32 bytes.
    expect(Option.isSome(settingsOf({ SERVICE_SECRET_KEY: "é".repeat(16) }).tokens.secretKey)).toBe(true)
  })

  it("keeps a refused SECRET_KEY out of every line when other settings are refused too", () => {
    const lines = refused({ SERVICE_SECRET_KEY: shortKey, SERVICE_PORT: "abc", SERVICE_WORKERS: "x" })
    expect(lines).toHaveLength(3)
    expect(lines.join("\n")).not.toContain(shortKey)
  })

  it.each([
    ["SERVICE_SMTP_URL", "http://mailer:Sm7pPa55word@mail.example.com"],
    ["SERVICE_SMTP_URL", "smtp//mailer:Sm7pPa55word@mail.example.com"],
    ["SERVICE_REDIS_URL", "http://:R3disPa55word@cache.internal:6379"],
    ["SERVICE_REDIS_URL", "redis//default:R3disPa55word@cache.internal"],
    ["SERVICE_JWT_PRIVATE_KEY", "   "],
    ["SERVICE_OAUTH_GITHUB_CLIENT_SECRET", "   "]
  ])("refuses a bad %s without repeating its value", (name, raw) => {
    const lines = refused({ [name]: raw })
    const line = lines.find((entry) => entry.startsWith(name)) ?? ""
    expect(line).toContain(name)
    expect(line).toContain("expected ")
    expect(line.startsWith(`${name}=`)).toBe(false)
    for (const entry of lines) {
      expect(entry).not.toContain("Pa55word")
      if (raw.trim() !== "") expect(entry).not.toContain(raw)
    }
  })

  it("keeps accepted secrets redacted in the resolved settings", () => {
    const { settings } = accepted({
      SERVICE_SECRET_KEY: `${"s".repeat(28)}KeY1`,
      SERVICE_SMTP_URL: "smtps://mailer:Sm7pPa55word@mail.example.com:465",
      SERVICE_REDIS_URL: "redis://:R3disPa55word@cache.internal:6379",
      SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@db.internal/portcullis",
      SERVICE_OAUTH_GOOGLE_CLIENT_ID: "g-id",
      SERVICE_OAUTH_GOOGLE_CLIENT_SECRET: "G00glePa55word",
      SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: "https://app.example.com/cb"
    })
    const shown = `${JSON.stringify(settings)}\n${String(settings.mail.smtpUrl)}\n${String(settings.storage.redisUrl)}`
    expect(shown).not.toContain("Pa55word")
    expect(shown).not.toContain("KeY1")
    expect(Option.map(settings.mail.smtpUrl, Redacted.value)).toEqual(
      Option.some("smtps://mailer:Sm7pPa55word@mail.example.com:465")
    )
  })

  it("does not repeat the password of a mistyped postgres DATABASE_URL", () => {
    // An accepted postgres URL is kept redacted; a refused one holds the same credentials.
    const line = onlyProblem({ SERVICE_DATABASE_URL: "postgres:/app:Pg5qlPa55word@db.internal/portcullis" })
    expect(line).toContain("SERVICE_DATABASE_URL")
    expect(line).not.toContain("Pa55word")
  })

  it("does not repeat a client secret from an OAUTH_CUSTOM_PROVIDERS value that is not valid JSON", () => {
    // The value holds client secrets, so the line about it must not echo it.
    const raw = '[{"name":"acme","client_secret":"Cu5tomPa55word",}]'
    const line = onlyProblem({ SERVICE_OAUTH_CUSTOM_PROVIDERS: raw })
    expect(line).toContain("SERVICE_OAUTH_CUSTOM_PROVIDERS")
    expect(line).not.toContain("Cu5tomPa55word")
  })
})

describe("parseSettings rules between settings", () => {
  it("refuses PASSWORD_MIN_LENGTH above PASSWORD_MAX_LENGTH", () => {
    const line = onlyProblem({ SERVICE_PASSWORD_MIN_LENGTH: "20", SERVICE_PASSWORD_MAX_LENGTH: "10" })
    expect(line).toContain("SERVICE_PASSWORD_MIN_LENGTH")
    expect(line).toContain("SERVICE_PASSWORD_MAX_LENGTH")
    expect(onlyProblem({ SERVICE_PASSWORD_MIN_LENGTH: "300" })).toContain("SERVICE_PASSWORD_MIN_LENGTH")
    expect(
      settingsOf({ SERVICE_PASSWORD_MIN_LENGTH: "12", SERVICE_PASSWORD_MAX_LENGTH: "12" }).accounts.passwordMinLength
    ).toBe(12)
  })

  it("refuses WORKERS>1 with a memory database or without REDIS_URL", () => {
    const redis = { SERVICE_REDIS_URL: "redis://cache.internal:6379" }
    for (const database of ["memory:", "sqlite::memory:"]) {
      const line = onlyProblem({ SERVICE_WORKERS: "2", SERVICE_DATABASE_URL: database, ...redis })
      expect(line).toContain("SERVICE_WORKERS")
      expect(line).toContain("SERVICE_DATABASE_URL")
    }
    const line = onlyProblem({ SERVICE_WORKERS: "2", SERVICE_DATABASE_URL: "sqlite:/tmp/db.sqlite" })
    expect(line).toContain("SERVICE_WORKERS")
    expect(line).toContain("SERVICE_REDIS_URL")
    expect(refused({ SERVICE_WORKERS: "3", SERVICE_DATABASE_URL: "memory:" })).toHaveLength(2)
    expect(settingsOf({ SERVICE_WORKERS: "2", ...redis }).server.workers).toBe(2)
    expect(settingsOf({ SERVICE_WORKERS: "1", SERVICE_DATABASE_URL: "memory:" }).server.workers).toBe(1)
  })

  it("refuses PASSKEY_ENABLED without RP_ID, RP_NAME and ORIGINS, one line each", () => {
    const lines = refused({ SERVICE_PASSKEY_ENABLED: "true" })
    expect(lines).toHaveLength(3)
    for (const name of ["SERVICE_PASSKEY_RP_ID", "SERVICE_PASSKEY_RP_NAME", "SERVICE_PASSKEY_ORIGINS"]) {
      expect(lines.filter((line) => line.includes(name))).toHaveLength(1)
    }
  })

  it("refuses a passkey origin that is not on the RP ID, and accepts subdomains and localhost", () => {
    const passkeys = {
      SERVICE_PASSKEY_ENABLED: "yes",
      SERVICE_PASSKEY_RP_ID: "example.com",
      SERVICE_PASSKEY_RP_NAME: "Example"
    }
    for (const foreign of ["https://example.org", "https://notexample.com"]) {
      const line = onlyProblem({ ...passkeys, SERVICE_PASSKEY_ORIGINS: `https://example.com,${foreign}` })
      expect(line).toContain("SERVICE_PASSKEY_ORIGINS")
      expect(line).toContain(foreign)
    }
    const settings = settingsOf({
      ...passkeys,
      SERVICE_PASSKEY_ORIGINS: '["https://example.com","https://app.example.com"]'
    })
    expect(settings.passkeys.passkeyOrigins).toEqual(["https://example.com", "https://app.example.com"])
    expect(Option.getOrNull(settings.passkeys.passkeyRpId)).toBe("example.com")
    const local = settingsOf({
      SERVICE_PASSKEY_ENABLED: "true",
      SERVICE_PASSKEY_RP_ID: "localhost",
      SERVICE_PASSKEY_RP_NAME: "Dev",
      SERVICE_PASSKEY_ORIGINS: "http://localhost:8000"
    })
    expect(local.passkeys.passkeyEnabled).toBe(true)
  })

  it("refuses PASSKEY_CHALLENGE_BACKEND=redis without REDIS_URL", () => {
    expect(onlyProblem({ SERVICE_PASSKEY_CHALLENGE_BACKEND: "redis" })).toContain("SERVICE_REDIS_URL")
  })

  it("refuses COOKIE_SAMESITE=none with COOKIE_SECURE=false", () => {
    const line = onlyProblem({ SERVICE_COOKIE_SAMESITE: "none", SERVICE_COOKIE_SECURE: "false" })
    expect(line).toContain("SERVICE_COOKIE_SAMESITE")
    expect(line).toContain("SERVICE_COOKIE_SECURE")
    expect(settingsOf({ SERVICE_COOKIE_SAMESITE: "none" }).cookies.cookieSameSite).toBe("none")
  })

  it("refuses an asymmetric JWT_ALGORITHM without JWT_PRIVATE_KEY, and a private key with an HMAC algorithm", () => {
    for (const algorithm of ["EdDSA", "ES256", "RS256"]) {
      const line = onlyProblem({ SERVICE_JWT_ALGORITHM: algorithm })
      expect(line).toContain("SERVICE_JWT_ALGORITHM")
      expect(line).toContain("SERVICE_JWT_PRIVATE_KEY")
    }
    const line = onlyProblem({ SERVICE_JWT_PRIVATE_KEY: ed25519Pem })
    expect(line).toContain("SERVICE_JWT_PRIVATE_KEY")
    expect(line).not.toContain(ed25519Pem.split("\n")[1])
    expect(onlyProblem({ SERVICE_JWT_VERIFY_KEYS: ed25519PublicPem })).toContain("SERVICE_JWT_VERIFY_KEYS")
    expect(
      settingsOf({ SERVICE_JWT_ALGORITHM: "EdDSA", SERVICE_JWT_PRIVATE_KEY: ed25519Pem }).tokens.jwtAlgorithm
    ).toBe("EdDSA")
  })

  it("refuses MAILER=smtp without SMTP_URL", () => {
    const line = onlyProblem({ SERVICE_MAILER: "smtp" })
    expect(line).toContain("SERVICE_MAILER")
    expect(line).toContain("SERVICE_SMTP_URL")
    expect(Option.getOrNull(settingsOf({ SERVICE_MAILER: "console" }).mail.mailer)).toBe("console")
  })
})

describe("parseSettings OAuth providers", () => {
  it.each(["google", "github", "discord", "gitlab"])(
    "refuses %s with a CLIENT_ID but no secret or redirect URIs, one line each",
    (kind) => {
      const name = `SERVICE_OAUTH_${kind.toUpperCase()}`
      const lines = refused({ [`${name}_CLIENT_ID`]: "client-id" })
      expect(lines).toHaveLength(2)
      expect(lines.filter((line) => line.includes(`${name}_CLIENT_SECRET`))).toHaveLength(1)
      expect(lines.filter((line) => line.includes(`${name}_REDIRECT_URIS`))).toHaveLength(1)
      expect(onlyProblem({ [`${name}_CLIENT_ID`]: "client-id", [`${name}_CLIENT_SECRET`]: "s" })).toContain(
        `${name}_REDIRECT_URIS`
      )
      expect(
        onlyProblem({ [`${name}_CLIENT_ID`]: "client-id", [`${name}_REDIRECT_URIS`]: "https://app.example.com/cb" })
      ).toContain(`${name}_CLIENT_SECRET`)
    }
  )

  it("enables a fully configured built-in kind", () => {
    const { settings } = accepted({
      SERVICE_OAUTH_GOOGLE_CLIENT_ID: "google-id",
      SERVICE_OAUTH_GOOGLE_CLIENT_SECRET: "google-secret",
      SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: "https://app.example.com/cb,https://app.example.com/cb2"
    })
    expect(settings.oauth.oauthProviders).toHaveLength(1)
    const provider = settings.oauth.oauthProviders[0]
    expect(provider?.name).toBe("google")
    expect(provider?.kind).toBe("google")
    expect(provider?.clientId).toBe("google-id")
    expect(provider?.redirectUris).toEqual(["https://app.example.com/cb", "https://app.example.com/cb2"])
    expect(provider && Redacted.value(provider.clientSecret)).toBe("google-secret")
  })

  it("accepts plain-http endpoint overrides only on loopback hosts", () => {
    const github = {
      SERVICE_OAUTH_GITHUB_CLIENT_ID: "id",
      SERVICE_OAUTH_GITHUB_CLIENT_SECRET: "secret",
      SERVICE_OAUTH_GITHUB_REDIRECT_URIS: "http://localhost:3000/cb"
    }
    const line = onlyProblem({ ...github, SERVICE_OAUTH_GITHUB_TOKEN_ENDPOINT: "http://github.example.com/token" })
    expect(line).toContain("SERVICE_OAUTH_GITHUB_TOKEN_ENDPOINT")
    expect(line).toContain("expected an https:// URL")
    const provider = settingsOf({
      ...github,
      SERVICE_OAUTH_GITHUB_TOKEN_ENDPOINT: "http://127.0.0.1:9000/token",
      SERVICE_OAUTH_GITHUB_USERINFO_ENDPOINT: "http://localhost:9000/user"
    }).oauth.oauthProviders[0]
    expect(Option.getOrNull(provider?.tokenEndpoint ?? Option.none())).toBe("http://127.0.0.1:9000/token")
  })

  const custom = {
    name: "acme",
    authorization_endpoint: "https://sso.acme.test/authorize",
    token_endpoint: "https://sso.acme.test/token",
    userinfo_endpoint: "https://sso.acme.test/userinfo",
    client_id: "acme-id",
    client_secret: "acme-secret",
    redirect_uris: ["https://app.example.com/oauth/acme"]
  }
  const customProviders = (value: unknown) => ({ SERVICE_OAUTH_CUSTOM_PROVIDERS: JSON.stringify(value) })

  it("reads OAUTH_CUSTOM_PROVIDERS with its defaults: PKCE on unless the entry says pkce: false", () => {
    const provider = settingsOf(customProviders([custom])).oauth.oauthProviders[0]
    expect(provider).toMatchObject({ name: "acme", kind: "custom", clientId: "acme-id", claims: {} })
    expect(Option.getOrNull(provider?.pkce ?? Option.none())).toBe(true)
    const plain = settingsOf(customProviders([{ ...custom, pkce: false }])).oauth.oauthProviders[0]
    expect(Option.getOrNull(plain?.pkce ?? Option.none())).toBe(false)
    expect(Option.getOrNull(provider?.scopes ?? Option.none())).toEqual([])
  })

  it("refuses OAUTH_CUSTOM_PROVIDERS that is not JSON", () => {
    const line = onlyProblem({ SERVICE_OAUTH_CUSTOM_PROVIDERS: "[{name: acme}]" })
    expect(line).toContain("SERVICE_OAUTH_CUSTOM_PROVIDERS")
    expect(line).toContain("not valid JSON")
  })

  it.each([
    ["an object instead of a list", custom],
    ["a provider without client_id", [{ ...custom, client_id: undefined }]],
    ["a provider with no redirect URIs", [{ ...custom, redirect_uris: [] }]],
    ["a provider with an unknown field", [{ ...custom, tenant: "x" }]],
    ["a provider with a bad name", [{ ...custom, name: "Acme Corp" }]]
  ])("refuses OAUTH_CUSTOM_PROVIDERS with %s", (_, value) => {
    const line = onlyProblem(customProviders(value))
    expect(line).toContain("SERVICE_OAUTH_CUSTOM_PROVIDERS")
    expect(line).toContain("expected a JSON list")
  })

  it("refuses a custom provider endpoint over plain http on a host that is not loopback", () => {
    const line = onlyProblem(customProviders([{ ...custom, token_endpoint: "http://sso.acme.test/token" }]))
    expect(line).toContain("SERVICE_OAUTH_CUSTOM_PROVIDERS")
    expect(line).toContain("acme")
    expect(line).toContain("plain http")
  })

  it("accepts a custom provider endpoint over plain http on 127.0.0.1 and localhost", () => {
    const provider = settingsOf(
      customProviders([
        {
          ...custom,
          authorization_endpoint: "http://127.0.0.1:9000/authorize",
          token_endpoint: "http://127.0.0.1:9000/token",
          userinfo_endpoint: "http://localhost:9000/userinfo",
          pkce: true,
          scopes: ["openid", "email"],
          claims: { provider_user_id: "id" }
        }
      ])
    ).oauth.oauthProviders[0]
    expect(Option.getOrNull(provider?.tokenEndpoint ?? Option.none())).toBe("http://127.0.0.1:9000/token")
    expect(Option.getOrNull(provider?.pkce ?? Option.none())).toBe(true)
    expect(provider?.claims).toEqual({ provider_user_id: "id" })
  })

  it("refuses two providers of one name", () => {
    const line = onlyProblem(customProviders([custom, custom]))
    expect(line).toContain("SERVICE_OAUTH_CUSTOM_PROVIDERS")
    expect(line).toContain("acme")
  })
})

describe("parseSettings unknown variables", () => {
  it("warns about an unknown SERVICE_ variable, naming it, and still accepts the settings", () => {
    const { warnings } = accepted({ SERVICE_SECRET_KEY: goodKey, SERVICE_PROT: "9000", SERVICE_ACCESS_TOKEN_TTL: "5" })
    expect(warnings).toHaveLength(2)
    expect(warnings.filter((warning) => warning.includes("SERVICE_PROT"))).toHaveLength(1)
    expect(warnings.filter((warning) => warning.includes("SERVICE_ACCESS_TOKEN_TTL"))).toHaveLength(1)
  })

  it("does not let a typo stand in for the setting it resembles", () => {
    expect(settingsOf({ SERVICE_PROT: "9000" }).server.port).toBe(8000)
  })
})

describe("notYetSupported", () => {
  it("refuses nothing with the defaults", () => {
    expect(notYetSupported(settingsOf({}))).toEqual([])
    expect(notYetSupported(settingsOf({ SERVICE_DATABASE_URL: "memory:" }))).toEqual([])
  })

  it("accepts a postgres:// database URL, never repeating the URL's password", () => {
    const refusedLines = notYetSupported(
      settingsOf({ SERVICE_DATABASE_URL: "postgres://app:Pg5qlPa55word@db.internal/portcullis" })
    )
    expect(refusedLines).toEqual([])
    expect(refusedLines.join("\n")).not.toContain("Pa55word")
    expect(notYetSupported(settingsOf({ SERVICE_DATABASE_URL: "postgresql://db.internal/x" }))).toEqual([])
  })

  it("accepts TOKEN_TRANSPORT=cookie, the mailers and every USER_ID_TYPE", () => {
    expect(notYetSupported(settingsOf({ SERVICE_TOKEN_TRANSPORT: "cookie" }))).toEqual([])
    for (const type of ["uuid", "integer", "string"]) {
      expect(notYetSupported(settingsOf({ SERVICE_USER_ID_TYPE: type }))).toEqual([])
    }
    expect(notYetSupported(settingsOf({ SERVICE_MAILER: "console" }))).toEqual([])
    expect(notYetSupported(settingsOf({ SERVICE_SMTP_URL: "smtp://mail.example.com:25" }))).toEqual([])
    expect(notYetSupported(settingsOf({ SERVICE_REDIS_URL: "redis://cache:6379" }))).toEqual([])
  })

  it.each([[{ SERVICE_LOGIN_FIELD: "username" }, "SERVICE_LOGIN_FIELD"]])("refuses %j, naming %s", (env, name) => {
    const refusedLines = notYetSupported(settingsOf(env))
    expect(refusedLines).toHaveLength(1)
    expect(refusedLines[0]).toContain(name)
  })

  it("refuses each unsupported setting on its own line", () => {
    const refusedLines = notYetSupported(
      settingsOf({
        SERVICE_DATABASE_URL: "postgres://db.internal/x",
        SERVICE_TOKEN_TRANSPORT: "cookie",
        SERVICE_PASSKEY_ENABLED: "true",
        SERVICE_PASSKEY_RP_ID: "example.com",
        SERVICE_PASSKEY_RP_NAME: "Example",
        SERVICE_PASSKEY_ORIGINS: "https://example.com",
        SERVICE_JWT_ALGORITHM: "EdDSA",
        SERVICE_JWT_PRIVATE_KEY: ed25519Pem,
        SERVICE_OAUTH_GOOGLE_CLIENT_ID: "id",
        SERVICE_OAUTH_GOOGLE_CLIENT_SECRET: "secret",
        SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: "https://example.com/cb",
        SERVICE_LOGIN_FIELD: "username"
      })
    )
    expect(refusedLines).toHaveLength(1)
    expect(refusedLines.join("\n")).toContain("SERVICE_LOGIN_FIELD")
  })

  it("accepts passkeys now that the passkey group is served", () => {
    expect(
      notYetSupported(
        settingsOf({
          SERVICE_PASSKEY_ENABLED: "true",
          SERVICE_PASSKEY_RP_ID: "example.com",
          SERVICE_PASSKEY_RP_NAME: "Example",
          SERVICE_PASSKEY_ORIGINS: "https://example.com"
        })
      )
    ).toEqual([])
  })

  it("accepts OAuth providers now that the oauth group is served", () => {
    expect(
      notYetSupported(
        settingsOf({
          SERVICE_OAUTH_GOOGLE_CLIENT_ID: "id",
          SERVICE_OAUTH_GOOGLE_CLIENT_SECRET: "secret",
          SERVICE_OAUTH_GOOGLE_REDIRECT_URIS: "https://example.com/cb"
        })
      )
    ).toEqual([])
  })
})

describe("JWT signing keys", () => {
  const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const pem = (key: import("node:crypto").KeyObject) =>
    key.export(key.type === "private" ? { format: "pem", type: "pkcs8" } : { format: "pem", type: "spki" }).toString()
  const jwk = (key: import("node:crypto").KeyObject) => JSON.stringify(key.export({ format: "jwk" }))
  const keyFile = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "portcullis-keys-")), "key")
    writeFileSync(file, text)
    return file
  }
  const asymmetric = (algorithm: string, env: Env) => ({ SERVICE_JWT_ALGORITHM: algorithm, ...env })

  it("accepts each algorithm's private key as PEM or JWK, from the value or a file, and keeps it redacted", () => {
    const pairs = [
      ["EdDSA", ed25519.privateKey],
      ["ES256", p256.privateKey],
      ["RS256", rsa.privateKey]
    ] as const
    for (const [algorithm, key] of pairs) {
      for (const env of [
        { SERVICE_JWT_PRIVATE_KEY: pem(key) },
        { SERVICE_JWT_PRIVATE_KEY: jwk(key) },
        { SERVICE_JWT_PRIVATE_KEY_FILE: keyFile(pem(key)) },
        { SERVICE_JWT_PRIVATE_KEY_FILE: keyFile(jwk(key)) }
      ]) {
        const { tokens } = settingsOf(asymmetric(algorithm, env))
        const signing = Option.map(tokens.jwtPrivateKey, Redacted.value)
        expect(Option.map(signing, (found) => found.algorithm)).toEqual(Option.some(algorithm))
        expect(JSON.stringify(tokens)).not.toContain(pem(key).split("\n")[1])
      }
    }
    expect(
      settingsOf(asymmetric("RS256", { SERVICE_JWT_PRIVATE_KEY: pem(rsa.privateKey) })).tokens.jwtVerifyKeys
    ).toEqual([])
  })

  it("refuses, one line each and never echoing the key: another algorithm's key, a public key, a small RSA key, a bad file", () => {
    const cases: ReadonlyArray<readonly [Env, string]> = [
      [asymmetric("EdDSA", { SERVICE_JWT_PRIVATE_KEY: pem(p256.privateKey) }), "Ed25519"],
      [asymmetric("ES256", { SERVICE_JWT_PRIVATE_KEY: jwk(ed25519.privateKey) }), "P-256"],
      [asymmetric("EdDSA", { SERVICE_JWT_PRIVATE_KEY: ed25519PublicPem }), "public key"],
      [asymmetric("ES256", { SERVICE_JWT_PRIVATE_KEY: jwk(p256.publicKey) }), "public key"],
      [
        asymmetric("RS256", {
          SERVICE_JWT_PRIVATE_KEY: pem(generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey)
        }),
        "1024-bit"
      ],
      [
        asymmetric("EdDSA", {
          SERVICE_JWT_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\nSeCrEt\n-----END PRIVATE KEY-----"
        }),
        "PEM"
      ],
      [asymmetric("EdDSA", { SERVICE_JWT_PRIVATE_KEY_FILE: "/nonexistent/portcullis/key.pem" }), "ENOENT"],
      [
        asymmetric("EdDSA", { SERVICE_JWT_PRIVATE_KEY: ed25519Pem, SERVICE_JWT_PRIVATE_KEY_FILE: keyFile(ed25519Pem) }),
        "both set"
      ]
    ]
    for (const [env, fault] of cases) {
      const line = onlyProblem(env)
      expect(line, JSON.stringify(env)).toMatch(/^SERVICE_JWT_PRIVATE_KEY/)
      expect(line).toContain(fault)
      expect(line).toContain("expected")
      for (const value of Object.values(env)) {
        if (value.includes("KEY") || value.startsWith("{")) expect(line).not.toContain(value.split("\n")[1] ?? value)
      }
    }
    expect(
      onlyProblem(asymmetric("EdDSA", { SERVICE_JWT_PRIVATE_KEY_FILE: "/nonexistent/portcullis/key.pem" }))
    ).toContain('"/nonexistent/portcullis/key.pem"')
  })

  it("reads JWT_VERIFY_KEYS as a JWK Set, a JSON array of JWKs or PEM strings, or PEM text, each key with its algorithm", () => {
    const signing = { SERVICE_JWT_ALGORITHM: "EdDSA", SERVICE_JWT_PRIVATE_KEY: ed25519Pem }
    const algorithmsOf = (env: Env) =>
      settingsOf({ ...signing, ...env }).tokens.jwtVerifyKeys.map((key) => key.algorithm)
    const publicJwks = [
      JSON.parse(jwk(p256.publicKey)),
      { ...JSON.parse(jwk(rsa.publicKey)), alg: "RS256", kid: "old" }
    ]
    expect(algorithmsOf({ SERVICE_JWT_VERIFY_KEYS: JSON.stringify({ keys: publicJwks }) })).toEqual(["ES256", "RS256"])
    expect(algorithmsOf({ SERVICE_JWT_VERIFY_KEYS: JSON.stringify(publicJwks) })).toEqual(["ES256", "RS256"])
    expect(algorithmsOf({ SERVICE_JWT_VERIFY_KEYS: JSON.stringify([pem(rsa.publicKey)]) })).toEqual(["RS256"])
    expect(algorithmsOf({ SERVICE_JWT_VERIFY_KEYS: `${pem(p256.publicKey)}\n${ed25519PublicPem}` })).toEqual([
      "ES256",
      "EdDSA"
    ])
    expect(algorithmsOf({ SERVICE_JWT_VERIFY_KEYS_FILE: keyFile(JSON.stringify({ keys: publicJwks })) })).toEqual([
      "ES256",
      "RS256"
    ])
  })

  it("reads JWT_VERIFY_KEYS as one bare JWK, as the README's rotation recipe sets it from keygen's last line", () => {
    const previous = { ...JSON.parse(jwk(p256.publicKey)), kid: "previous", alg: "ES256", use: "sig" }
    const keys = settingsOf({
      SERVICE_JWT_ALGORITHM: "EdDSA",
      SERVICE_JWT_PRIVATE_KEY: ed25519Pem,
      SERVICE_JWT_VERIFY_KEYS: JSON.stringify(previous)
    }).tokens.jwtVerifyKeys
    expect(keys.map((key) => key.algorithm)).toEqual(["ES256"])
    expect(keys[0]?.key.export({ format: "jwk" })).toEqual(JSON.parse(jwk(p256.publicKey)))
  })

  it("refuses a private key, an unreadable entry or a JWK whose alg is not its key's among JWT_VERIFY_KEYS", () => {
    const signing = { SERVICE_JWT_ALGORITHM: "EdDSA", SERVICE_JWT_PRIVATE_KEY: ed25519Pem }
    const cases: ReadonlyArray<readonly [string, string]> = [
      [pem(p256.privateKey), "private key"],
      [JSON.stringify([JSON.parse(jwk(p256.privateKey))]), "private JWK"],
      [JSON.stringify({ keys: [{ ...JSON.parse(jwk(p256.publicKey)), alg: "RS256" }] }), "alg"],
      ['{"keys": [', "not valid JSON"],
      ["not a key", "no PEM block"],
      [JSON.stringify([{ kty: "OKP", crv: "Ed25519" }]), "unreadable JWK"]
    ]
    for (const [value, fault] of cases) {
      const line = onlyProblem({ ...signing, SERVICE_JWT_VERIFY_KEYS: value })
      expect(line, value).toMatch(/^SERVICE_JWT_VERIFY_KEYS /)
      expect(line).toContain(fault)
      expect(line).not.toContain(value.slice(0, 40))
    }
  })
})
