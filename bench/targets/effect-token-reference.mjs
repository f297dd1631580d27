// The lean Effect token endpoint: what Effect 3's HttpApi and @effect/sql cost for the provider's
// two token-endpoint paths with nothing of ours in them, beside oidc-provider in
// `npm run bench:provider`, as the lean /me is beside the floor in `npm run bench`. POST /token is
// one HttpApi endpoint (its form decoded by a schema, Basic client authentication read from the
// header), the statements Portcullis's stores run, through @effect/sql-sqlite-node on one SQLite
// file: the client read and its secret's digest compared; for a code, the code read, PKCE S256
// checked, the code claimed and its grant (and refresh token) started in one transaction; for a
// refresh token, the token and its grant read, the token rotated and the grant touched in one
// transaction; then the user read and two RS256 JWTs signed with jose (the key imported once):
// an RFC 9068 access token and the ID token, at once (Portcullis signs them one after the other:
// in process, signing them at once bought it nothing, the main thread being what bounds a
// request's rate). No audit, events, consent, resources, lockout, rate
// limit, logging or metrics. POST /mint (untimed) stores a code for the bench to redeem.
// REFERENCE_DB is the database file; the process prints its issuer on stdout once it listens.
import { createHash, generateKeyPairSync, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Schema } from "effect"
import { exportJWK, SignJWT } from "jose"

const port = Number(process.env.PORT ?? 8300)
const issuer = `http://127.0.0.1:${port}`
const client = { id: "bench", secret: "bench-client-secret" }
const keys = generateKeyPairSync("rsa", { modulusLength: 2048 })
const jwk = { ...(await exportJWK(keys.publicKey)), kid: "bench", alg: "RS256", use: "sig" }
const digest = (text) => createHash("sha256").update(text).digest("base64url")
const sameDigest = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
const seconds = () => Math.floor(Date.now() / 1000)

class OAuthError extends Schema.TaggedError()(
  "OAuthError",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

const TokenForm = Schema.Struct({
  grant_type: Schema.String,
  code: Schema.optional(Schema.String),
  code_verifier: Schema.optional(Schema.String),
  redirect_uri: Schema.optional(Schema.String),
  refresh_token: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

const Tokens = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Number,
  id_token: Schema.String,
  refresh_token: Schema.optional(Schema.String),
  scope: Schema.String
})

const Api = HttpApi.make("token-reference").add(
  HttpApiGroup.make("provider")
    .add(HttpApiEndpoint.get("discovery", "/.well-known/openid-configuration").addSuccess(Schema.Unknown))
    .add(HttpApiEndpoint.get("jwks", "/jwks").addSuccess(Schema.Unknown))
    .add(
      HttpApiEndpoint.post("mint", "/mint")
        .setPayload(Schema.Struct({ scope: Schema.String, code_challenge: Schema.String, redirect_uri: Schema.String }))
        .addSuccess(Schema.Struct({ code: Schema.String }))
    )
    .add(HttpApiEndpoint.post("token", "/token").setPayload(TokenForm).addSuccess(Tokens).addError(OAuthError))
)

const refuse = (error) => Effect.fail(new OAuthError({ error }))

const Handlers = HttpApiBuilder.group(Api, "provider", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // As Portcullis commits: the log synced at each commit (free on tmpfs, where the bench runs it).
    yield* sql`PRAGMA journal_mode = WAL`
    yield* sql`PRAGMA synchronous = FULL`
    yield* sql`CREATE TABLE IF NOT EXISTS clients (client_id TEXT PRIMARY KEY, secret_digest TEXT NOT NULL,
      redirect_uris TEXT NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT NOT NULL, email_verified INTEGER NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS codes (digest TEXT PRIMARY KEY, client_id TEXT NOT NULL, user_id TEXT NOT NULL,
      redirect_uri TEXT NOT NULL, code_challenge TEXT NOT NULL, scopes TEXT NOT NULL, auth_time INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, redeemed_at INTEGER, grant_id TEXT)`
    yield* sql`CREATE TABLE IF NOT EXISTS grants (grant_id TEXT PRIMARY KEY, client_id TEXT NOT NULL, user_id TEXT NOT NULL,
      scopes TEXT NOT NULL, auth_time INTEGER NOT NULL, last_used_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      revoked_at INTEGER)`
    yield* sql`CREATE TABLE IF NOT EXISTS refresh_tokens (digest TEXT PRIMARY KEY, grant_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL, rotated_at INTEGER)`
    yield* sql`INSERT OR REPLACE INTO clients VALUES (${client.id}, ${digest(client.secret)}, '["https://app.example.com/cb"]')`
    const userId = randomUUID()
    yield* sql`INSERT INTO users VALUES (${userId}, 'bench@example.com', 1)`

    /** The client of the Basic header, its secret's digest compared in constant time. */
    const authenticated = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const header = request.headers.authorization ?? ""
      const decoded = Buffer.from(header.slice(6), "base64").toString("utf8")
      const colon = decoded.indexOf(":")
      const id = decodeURIComponent(decoded.slice(0, colon))
      const [found] = yield* sql`SELECT * FROM clients WHERE client_id = ${id}`
      if (found === undefined || !sameDigest(found.secret_digest, digest(decodeURIComponent(decoded.slice(colon + 1)))))
        return yield* refuse("invalid_client")
      return found
    })

    /** The user's claims, the access token and the ID token of a grant. */
    const answer = (grant, refreshToken) =>
      Effect.gen(function* () {
        const [user] = yield* sql`SELECT * FROM users WHERE id = ${grant.user_id}`
        const iat = seconds()
        const scope = JSON.parse(grant.scopes).join(" ")
        const [access, id] = yield* Effect.promise(() =>
          Promise.all([
            new SignJWT({ client_id: grant.client_id, scope, jti: randomUUID() })
              .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: "bench" })
              .setIssuer(issuer)
              .setSubject(grant.user_id)
              .setAudience(issuer)
              .setIssuedAt(iat)
              .setExpirationTime(iat + 900)
              .sign(keys.privateKey),
            new SignJWT({ auth_time: grant.auth_time, email: user.email, email_verified: user.email_verified === 1 })
              .setProtectedHeader({ alg: "RS256", kid: "bench" })
              .setIssuer(issuer)
              .setSubject(grant.user_id)
              .setAudience(grant.client_id)
              .setIssuedAt(iat)
              .setExpirationTime(iat + 3600)
              .sign(keys.privateKey)
          ])
        )
        return {
          access_token: access,
          token_type: "Bearer",
          expires_in: 900,
          id_token: id,
          scope,
          ...(refreshToken === undefined ? {} : { refresh_token: refreshToken })
        }
      })

    const newRefreshToken = (grantId, now) =>
      Effect.gen(function* () {
        const token = randomBytes(32).toString("base64url")
        yield* sql`INSERT INTO refresh_tokens VALUES (${digest(token)}, ${grantId}, ${now + 30 * 86_400_000}, NULL)`
        return token
      })

    const redeem = (found, form) =>
      Effect.gen(function* () {
        if (form.code === undefined) return yield* refuse("invalid_request")
        const codeDigest = digest(form.code)
        const now = Date.now()
        const [code] = yield* sql`SELECT * FROM codes WHERE digest = ${codeDigest}`
        if (
          code === undefined ||
          code.client_id !== found.client_id ||
          code.redirect_uri !== form.redirect_uri ||
          code.expires_at < now ||
          code.redeemed_at !== null ||
          form.code_verifier === undefined ||
          !sameDigest(code.code_challenge, digest(form.code_verifier))
        )
          return yield* refuse("invalid_grant")
        const grant = {
          grant_id: randomUUID(),
          client_id: found.client_id,
          user_id: code.user_id,
          scopes: code.scopes,
          auth_time: code.auth_time
        }
        const refresh = yield* sql.withTransaction(
          Effect.gen(function* () {
            const claimed = yield* sql`UPDATE codes SET redeemed_at = ${now}, grant_id = ${grant.grant_id}
              WHERE digest = ${codeDigest} AND redeemed_at IS NULL RETURNING digest`
            if (claimed.length === 0) return yield* refuse("invalid_grant")
            yield* sql`INSERT INTO grants VALUES (${grant.grant_id}, ${grant.client_id}, ${grant.user_id}, ${grant.scopes},
              ${grant.auth_time}, ${now}, ${now + 30 * 86_400_000}, NULL)`
            return JSON.parse(grant.scopes).includes("offline_access")
              ? yield* newRefreshToken(grant.grant_id, now)
              : undefined
          })
        )
        return yield* answer(grant, refresh)
      })

    const rotate = (found, form) =>
      Effect.gen(function* () {
        if (form.refresh_token === undefined) return yield* refuse("invalid_request")
        const tokenDigest = digest(form.refresh_token)
        const now = Date.now()
        const [held] = yield* sql`SELECT t.expires_at AS token_expires_at, t.rotated_at, g.*
          FROM refresh_tokens t JOIN grants g ON g.grant_id = t.grant_id WHERE t.digest = ${tokenDigest}`
        if (
          held === undefined ||
          held.client_id !== found.client_id ||
          held.revoked_at !== null ||
          held.rotated_at !== null ||
          held.token_expires_at < now
        )
          return yield* refuse("invalid_grant")
        const next = yield* sql.withTransaction(
          Effect.gen(function* () {
            const spent = yield* sql`UPDATE refresh_tokens SET rotated_at = ${now}
              WHERE digest = ${tokenDigest} AND rotated_at IS NULL RETURNING digest`
            if (spent.length === 0) return yield* refuse("invalid_grant")
            const token = yield* newRefreshToken(held.grant_id, now)
            yield* sql`UPDATE grants SET last_used_at = ${now} WHERE grant_id = ${held.grant_id}`
            return token
          })
        )
        return yield* answer(held, next)
      })

    return handlers
      .handle("discovery", () =>
        Effect.succeed({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic"],
          code_challenge_methods_supported: ["S256"]
        })
      )
      .handle("jwks", () => Effect.succeed({ keys: [jwk] }))
      .handle("mint", ({ payload }) =>
        Effect.gen(function* () {
          const code = randomBytes(32).toString("base64url")
          yield* sql`INSERT INTO codes VALUES (${digest(code)}, ${client.id}, ${userId}, ${payload.redirect_uri},
            ${payload.code_challenge}, ${JSON.stringify(payload.scope.split(" "))}, ${seconds()},
            ${Date.now() + 60_000}, NULL, NULL)`
          return { code }
        }).pipe(Effect.orDie)
      )
      .handle("token", ({ payload }) =>
        Effect.gen(function* () {
          const found = yield* authenticated
          if (payload.grant_type === "authorization_code") return yield* redeem(found, payload)
          if (payload.grant_type === "refresh_token") return yield* rotate(found, payload)
          return yield* refuse("unsupported_grant_type")
        }).pipe(Effect.catchTag("SqlError", Effect.die))
      )
  })
)

const Server = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers))),
  Layer.provide(SqliteClient.layer({ filename: process.env.REFERENCE_DB ?? ":memory:" })),
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port })),
  Layer.tap(() => Effect.sync(() => console.log(issuer)))
)

NodeRuntime.runMain(Layer.launch(Server))
