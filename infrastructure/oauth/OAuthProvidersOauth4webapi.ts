import { Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as oauth from "oauth4webapi"
import {
  type CodeExchange,
  type OAuthProviderClient,
  OAuthProviders,
  type ProviderTokens
} from "../../application/ports/OAuthProviders.js"
import { OAuthError, OAuthProviderError } from "../../domain/errors.js"
import type { OAuthUserInfo } from "../../domain/OAuth.js"
import type { OAuthProviderRegistration } from "../../domain/OAuthProvider.js"
import { boundedFetch, providerFailure, tokenFailure, UnexpectedStatus } from "./providerCalls.js"
import { kinds, type UserInfoSource } from "./providerKinds.js"

export interface Options {
  readonly providers: ReadonlyArray<OAuthProviderRegistration>
  /** OAUTH_PKCE_ENABLED: PKCE for the built-in kinds. True by default. */
  readonly pkce?: boolean
  /**
   * How long one exchange with a provider may take: the code exchange and every call reading the
   * user, their answers' bodies included. 10 seconds by default.
   */
  readonly timeout?: Duration.DurationInput
}

/**
 * A provider's client as this adapter builds it: the port's, and the exchange's two steps apart,
 * each given up at the `deadline` it is handed (its exchange's), or at one of its own without one.
 */
export interface ProviderClient extends OAuthProviderClient {
  readonly exchangeCode: (
    exchange: CodeExchange,
    deadline?: AbortSignal
  ) => Effect.Effect<ProviderTokens, OAuthError | OAuthProviderError>
  readonly userInfo: (
    accessToken: Redacted.Redacted<string>,
    deadline?: AbortSignal
  ) => Effect.Effect<OAuthUserInfo, OAuthProviderError>
}

/** Settings accept plain http only on these hosts, for local development and tests. */
const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

const jsonObject = (text: string): Readonly<Record<string, unknown>> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The token endpoint's answer as oauth4webapi should judge it. GitHub refuses a code with a 200
 * and an OAuth error body: it becomes the 400 it means. An ID token is dropped unread: user info
 * comes from the userinfo endpoint, and a custom or self-hosted provider's settings do not name
 * the issuer its claims would be checked against.
 */
const judgeable = async (response: Response): Promise<Response> => {
  if (response.status !== 200) return response
  const text = await response.text()
  const headers = { "content-type": response.headers.get("content-type") ?? "" }
  const body = jsonObject(text)
  // Not an object: oauth4webapi tells it malformed.
  if (body === undefined) return new Response(text, { status: 200, headers })
  const { id_token: _unread, ...granted } = body
  return new Response(JSON.stringify(granted), { status: typeof granted.error === "string" ? 400 : 200, headers })
}

const client = (config: OAuthProviderRegistration, options: Options, timeout: Duration.Duration): ProviderClient => {
  const kind = kinds[config.kind]
  const endpoint = (override: Option.Option<string>, fallback: Option.Option<string>, what: string) =>
    Option.getOrThrowWith(
      Option.orElse(override, () => fallback),
      () => new Error(`OAuth provider ${config.name} has no ${what} endpoint`)
    )
  const authorizationEndpoint = endpoint(config.authorizationEndpoint, kind.authorizationEndpoint, "authorization")
  const tokenEndpoint = endpoint(config.tokenEndpoint, kind.tokenEndpoint, "token")
  const userinfoEndpoint = endpoint(config.userinfoEndpoint, kind.userinfoEndpoint, "userinfo")
  const server: oauth.AuthorizationServer = {
    // Never compared: no ID token or issuer parameter is ever checked against it.
    issuer: new URL(authorizationEndpoint).origin,
    authorization_endpoint: authorizationEndpoint,
    token_endpoint: tokenEndpoint,
    userinfo_endpoint: userinfoEndpoint
  }
  const registration: oauth.Client = { client_id: config.clientId }
  const secret = Redacted.value(config.clientSecret)
  const clientAuthentication =
    kind.clientAuthentication === "client_secret_basic"
      ? oauth.ClientSecretBasic(secret)
      : oauth.ClientSecretPost(secret)
  const scopes = Option.getOrElse(config.scopes, () => kind.scopes)
  // A custom provider without a word on PKCE uses it: a leaked code is then useless to another flow.
  const pkce = config.kind === "custom" ? Option.getOrElse(config.pkce, () => true) : (options.pkce ?? true)
  // Compared as written, not as parsed: `/a/../cb` or `%2e` forms of an allowed URL are refused.
  const allowedRedirects = new Set(config.redirectUris)

  // The refusal says what was compared, to the client its own value (the allowed ones are the
  // operator's to see, in the log), and why an unencoded URL with a query of its own never matches.
  const setting =
    config.kind === "custom"
      ? "its redirect_uris in SERVICE_OAUTH_CUSTOM_PROVIDERS"
      : `SERVICE_OAUTH_${config.kind.toUpperCase()}_REDIRECT_URIS`
  const checkRedirect = (redirectUri: string) =>
    allowedRedirects.has(redirectUri)
      ? Effect.void
      : Effect.logInfo("an OAuth redirect_uri was refused").pipe(
          Effect.annotateLogs({ provider: config.name, received: redirectUri, allowed: [...allowedRedirects] }),
          Effect.zipRight(
            Effect.fail(
              new OAuthError({
                message: `The redirect_uri is not allowed for this provider: ${JSON.stringify(redirectUri)}, as received, is not one of ${setting}, compared character for character. Encode it as a query value (encodeURIComponent): a redirect_uri with a query of its own is otherwise cut at its first &.`
              })
            )
          )
        )

  /** A new exchange's deadline: every call of the exchange is given up when it fires. */
  const deadline = () => AbortSignal.timeout(Duration.toMillis(timeout))

  const transport = (url: string, signal: AbortSignal) => {
    const target = new URL(url)
    return {
      [oauth.customFetch]: boundedFetch,
      [oauth.allowInsecureRequests]: target.protocol === "http:" && loopbackHosts.has(target.hostname),
      signal
    }
  }

  /**
   * One call to the provider, given up at the exchange's deadline (or when the caller is); a
   * failure is logged and answered in words safe for both.
   */
  const call = <A, E extends OAuthError | OAuthProviderError>(
    step: "token" | "userinfo",
    failure: (provider: string, cause: unknown) => E,
    exchange: AbortSignal,
    run: (signal: AbortSignal) => Promise<A>
  ) =>
    Effect.tryPromise({
      try: (interrupted) => run(AbortSignal.any([interrupted, exchange])),
      catch: (cause) => failure(config.name, cause)
    }).pipe(
      // A refused code is the request's business; anything else may need the operator.
      Effect.tapError((error) =>
        (error._tag === "OAuthError" ? Effect.logInfo : Effect.logWarning)("OAuth provider call failed").pipe(
          Effect.annotateLogs({ provider: config.name, step, failure: error.message })
        )
      )
    )

  const malformed = new OAuthProviderError({ message: `The OAuth provider ${config.name} answered invalid user info.` })

  const userInfoSource = (accessToken: string, exchange: AbortSignal): UserInfoSource => ({
    oidcClaims: call("userinfo", providerFailure, exchange, async (signal) => {
      const response = await oauth.userInfoRequest(
        server,
        registration,
        accessToken,
        transport(userinfoEndpoint, signal)
      )
      return oauth.processUserInfoResponse(server, registration, oauth.skipSubjectCheck, response)
    }),
    json: (url) =>
      call("userinfo", providerFailure, exchange, async (signal) => {
        const headers = new Headers({ accept: "application/json" })
        const response = await oauth.protectedResourceRequest(
          accessToken,
          "GET",
          new URL(url),
          headers,
          null,
          transport(url, signal)
        )
        if (response.status !== 200) {
          await response.body?.cancel()
          throw new UnexpectedStatus(response.status)
        }
        return (await response.json()) as unknown
      }),
    decode: (schema, answer) =>
      Effect.mapError(Schema.decodeUnknown(schema)(answer), () => malformed).pipe(
        Effect.tapError(() =>
          Effect.logWarning("OAuth provider call failed").pipe(
            Effect.annotateLogs({ provider: config.name, step: "userinfo", failure: malformed.message })
          )
        )
      ),
    endpoints: {
      userinfo: userinfoEndpoint,
      emails: Option.orElse(config.emailsEndpoint, () => kind.emailsEndpoint)
    },
    claims: config.claims,
    mapUserInfo: config.mapUserInfo
  })

  const exchangeCode: ProviderClient["exchangeCode"] = ({ code, redirectUri, codeVerifier }, bound) =>
    Effect.gen(function* () {
      yield* checkRedirect(redirectUri)
      if (code === "") return yield* new OAuthError({ message: "The authorization code is missing." })
      const granted = yield* call("token", tokenFailure, bound ?? deadline(), async (signal) => {
        const callback = oauth.validateAuthResponse(
          server,
          registration,
          new URLSearchParams({ code }),
          oauth.skipStateCheck
        )
        const response = await oauth.authorizationCodeGrantRequest(
          server,
          registration,
          clientAuthentication,
          callback,
          redirectUri,
          pkce ? codeVerifier : oauth.nopkce,
          transport(tokenEndpoint, signal)
        )
        return oauth.processAuthorizationCodeResponse(server, registration, await judgeable(response))
      })
      return {
        access_token: Redacted.make(granted.access_token),
        ...(granted.refresh_token === undefined ? {} : { refresh_token: Redacted.make(granted.refresh_token) }),
        ...(granted.expires_in === undefined ? {} : { expires_in: granted.expires_in })
      }
    })

  const userInfo: ProviderClient["userInfo"] = (accessToken, bound) =>
    Effect.suspend(() => kind.userInfo(userInfoSource(Redacted.value(accessToken), bound ?? deadline()))).pipe(
      Effect.map((fields) => ({ provider: config.name, ...fields }))
    )

  return {
    name: config.name,

    authorizationUrl: ({ state, redirectUri, codeVerifier }) =>
      Effect.gen(function* () {
        yield* checkRedirect(redirectUri)
        const url = new URL(authorizationEndpoint)
        url.searchParams.set("response_type", "code")
        url.searchParams.set("client_id", config.clientId)
        url.searchParams.set("redirect_uri", redirectUri)
        if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "))
        url.searchParams.set("state", state)
        if (pkce) {
          const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(codeVerifier))
          url.searchParams.set("code_challenge", challenge)
          url.searchParams.set("code_challenge_method", "S256")
        }
        return url.href
      }),

    // One deadline for the whole exchange, started with it and handed to each step: a provider
    // answering each call slowly cannot stretch the exchange past one bound.
    identify: (exchange) =>
      Effect.suspend(() => {
        const bound = deadline()
        return Effect.flatMap(exchangeCode(exchange, bound), (tokens) =>
          Effect.map(userInfo(tokens.access_token, bound), (info) => ({ tokens, info }))
        )
      }),

    exchangeCode,
    userInfo
  }
}

/**
 * The configured providers, over oauth4webapi. Every call goes through one fetch that never
 * follows a redirect and reads at most 1 MiB of an answer; an exchange (code, then user) is given
 * up once the timeout has passed. A provider without an endpoint it needs (a custom one missing
 * from its settings) stops the layer: settings never produce one. Its clients are the port's
 * and more (`ProviderClient`); the layer offers only the port.
 */
export const make = (options: Options) =>
  Effect.sync(() => {
    const timeout = Duration.decode(options.timeout ?? Duration.seconds(10))
    const clients = new Map(options.providers.map((config) => [config.name, client(config, options, timeout)] as const))
    return {
      names: options.providers.map((config) => config.name),
      get: (name: string) => Option.fromNullable(clients.get(name))
    }
  })

export const layer = (options: Options) => Layer.effect(OAuthProviders, make(options))
