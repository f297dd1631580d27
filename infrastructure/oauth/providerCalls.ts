import * as oauth from "oauth4webapi"
import { OAuthError, OAuthProviderError } from "../../domain/errors.js"

/** What oauth4webapi hands its custom fetch; its bodies are ones fetch takes. */
interface FetchRequest {
  readonly body?: unknown
  readonly headers: Record<string, string>
  readonly method: string
  readonly signal?: AbortSignal | undefined
}

/** A provider answered a redirect: following it could send the code or a token anywhere. */
class Redirected extends Error {}

/** A provider answered more than `answerLimit` bytes. */
class TooLarge extends Error {}

/** A resource answered another status than 200. */
export class UnexpectedStatus extends Error {
  constructor(readonly status: number) {
    super(`unexpected status ${status}`)
  }
}

/**
 * The most of one answer read, after decompression. No answer of a provider needs more, and a
 * provider (or whoever runs a custom one) must not make this service buffer what it likes.
 */
export const answerLimit = 1024 * 1024

/** The body's bytes, given up (and the connection with it) as soon as they pass the limit. */
const cappedBody = async (response: Response): Promise<Uint8Array<ArrayBuffer> | null> => {
  if (response.body === null) return null
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > answerLimit) {
      await reader.cancel().catch(() => undefined)
      throw new TooLarge()
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.byteLength
  }
  return body
}

/**
 * The one fetch every call to a provider goes through: never following a redirect, and reading
 * at most `answerLimit` bytes of the answer before handing it on, so that the caller's signal
 * (the exchange's deadline) bounds the body too.
 */
export const boundedFetch = async (url: string, request: FetchRequest): Promise<Response> => {
  const response = await fetch(url, {
    method: request.method,
    headers: request.headers,
    body: (request.body ?? null) as BodyInit | null,
    redirect: "manual",
    ...(request.signal === undefined ? {} : { signal: request.signal })
  })
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined)
    throw new Redirected(`redirected with status ${response.status}`)
  }
  const body = await cappedBody(response)
  return new Response(body === null || body.byteLength === 0 ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}

/**
 * Token endpoint errors that blame this service's registration rather than the code: the
 * operator's to fix, not the user's (GitHub names its own).
 */
const clientFaults = new Set([
  "invalid_client",
  "unauthorized_client",
  "unsupported_grant_type",
  "incorrect_client_credentials"
])

/** The failure and its causes, outermost first. */
const causeChain = (failure: unknown): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  for (let current = failure; current instanceof Error && chain.length < 8; current = current.cause) chain.push(current)
  return chain
}

/**
 * Why a call failed, in words safe to show and log: never a secret, a token or a body, which
 * oauth4webapi's errors may hold in their causes.
 */
const reason = (failure: unknown): string => {
  if (causeChain(failure).some((cause) => cause instanceof Error && cause.name === "TimeoutError")) {
    return "did not answer in time"
  }
  if (failure instanceof Redirected) return "answered with a redirect, which is not followed"
  if (failure instanceof TooLarge) return "answered more than 1 MiB"
  if (failure instanceof UnexpectedStatus) return `answered with status ${failure.status}`
  if (failure instanceof oauth.ResponseBodyError) {
    return clientFaults.has(failure.error)
      ? "refused this service's client credentials"
      : `answered an error with status ${failure.status}`
  }
  if (failure instanceof oauth.WWWAuthenticateChallengeError) {
    return `refused the access token it issued (status ${failure.status})`
  }
  if (failure instanceof oauth.OperationProcessingError && failure.cause instanceof Response) {
    return `answered with status ${failure.cause.status}`
  }
  if (
    failure instanceof oauth.OperationProcessingError ||
    failure instanceof oauth.UnsupportedOperationError ||
    failure instanceof SyntaxError
  ) {
    return "answered something that is not valid"
  }
  return "could not be reached"
}

/**
 * A failed token request as the port's errors: a code the provider refuses is the request's
 * fault (OAuthError); anything else is the provider's.
 */
export const tokenFailure = (provider: string, failure: unknown): OAuthError | OAuthProviderError =>
  failure instanceof oauth.ResponseBodyError && !clientFaults.has(failure.error)
    ? new OAuthError({ message: "The provider refused the authorization code." })
    : providerFailure(provider, failure)

export const providerFailure = (provider: string, failure: unknown): OAuthProviderError =>
  new OAuthProviderError({ message: `The OAuth provider ${provider} ${reason(failure)}.` })
