import { Data, DateTime, Effect, Either, Metric, Option } from "effect"
import {
  type AuthorizationRequest,
  decideAuthorization,
  NextStep,
  nextStep,
  type OAuthError
} from "../../domain/oidc/Authorization.js"
import type { Client } from "../../domain/oidc/Client.js"
import { normaliseResourceUri, type Resource } from "../../domain/oidc/Resource.js"
import { UserId } from "../../domain/User.js"
import { Audit } from "../Audit.js"
import { oidcAuthorizations } from "../metrics.js"
import { AuthorizationCodes } from "../ports/AuthorizationCodes.js"
import { Consents } from "../ports/Consents.js"
import { Cryptography } from "../ports/Cryptography.js"
import { OidcClients } from "../ports/OidcClients.js"
import { OidcResources } from "../ports/OidcResources.js"
import { ParkedRequests } from "../ports/ParkedRequests.js"
import { Transaction } from "../ports/Transaction.js"
import { UserRepo } from "../ports/UserRepo.js"
import { SecurityNotices } from "../SecurityNotices.js"
import { ClientDirectory, type FetchCounter } from "./ClientDirectory.js"
import { OidcPolicy } from "./OidcPolicy.js"

/** The user the browser is signed in as, by the provider's session cookie. */
export interface BrowserSession {
  readonly user_id: string
  /** When the user last proved themselves (seconds since the epoch). */
  readonly auth_time: number
  /** How (RFC 8176). */
  readonly amr: ReadonlyArray<string>
}

export type AuthorizeOutcome = Data.TaggedEnum<{
  /** Shown to the browser (400): the client or its redirect URI is not known, never redirected to. */
  ErrorPage: OAuthError
  /** The browser goes back to the client, with a code or an error, the state and the issuer. */
  Redirect: { readonly location: string }
  /** The browser goes to the sign-in page with the parked request's id. */
  SignIn: { readonly request: string }
  /** The browser goes to the consent page with the parked request's id. */
  Consent: { readonly request: string }
}>
export const AuthorizeOutcome = Data.taggedEnum<AuthorizeOutcome>()

/** How the metrics name each outcome (portcullis_oidc_authorizations). */
const outcomeLabels: Record<AuthorizeOutcome["_tag"], string> = {
  ErrorPage: "error_page",
  Redirect: "redirect",
  SignIn: "sign_in",
  Consent: "consent"
}

/** Why a parked request cannot go on: unknown, expired or answered already. */
export class ParkedRequestGone extends Data.TaggedError("ParkedRequestGone")<{}> {}

/** Parameters added to a redirect URI as its query has them (RFC 6749 §4.1.2), its own kept as they are. */
export const withParameters = (uri: string, parameters: Readonly<Record<string, string | null>>) => {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(parameters)) if (value !== null) query.append(name, value)
  return `${uri}${uri.includes("?") ? "&" : "?"}${query.toString()}`
}

/**
 * The authorization endpoint's flow (OAuth 2.1 §4.1, OIDC Core §3.1.2): a request judged by the
 * domain's rules, parked under an opaque id while the user signs in or consents, and answered with
 * a single-use code bound to what it was issued for. Every redirect carries `state` and `iss`.
 */
export class Authorize extends Effect.Service<Authorize>()("app/Authorize", {
  dependencies: [ClientDirectory.Default],
  effect: Effect.gen(function* () {
    const clients = yield* OidcClients
    const directory = yield* ClientDirectory
    const resources = yield* OidcResources
    const consents = yield* Consents
    const parked = yield* ParkedRequests
    const codes = yield* AuthorizationCodes
    const crypto = yield* Cryptography
    const audit = yield* Audit
    const notices = yield* SecurityNotices
    const users = yield* UserRepo
    const tx = yield* Transaction
    const policy = yield* OidcPolicy

    const redirect = (request: { readonly redirect_uri: string; readonly state: string | null }, result: object) =>
      AuthorizeOutcome.Redirect({
        location: withParameters(request.redirect_uri, { ...result, state: request.state, iss: policy.issuer })
      })

    const consentedScopes = (userId: string, clientId: string) =>
      Effect.map(consents.find(userId, clientId), (found) =>
        Option.getOrUndefined(Option.map(found, (consent) => consent.scopes))
      )

    /** A code for the signed-in user, stored as a digest; the redirect that carries it. */
    const issueCode = (request: AuthorizationRequest, session: BrowserSession) =>
      Effect.gen(function* () {
        const code = yield* crypto.randomSecret
        const now = yield* DateTime.now
        yield* codes.add({
          digest: crypto.digest(code),
          client_id: request.client_id,
          user_id: session.user_id,
          redirect_uri: request.redirect_uri,
          code_challenge: request.code_challenge,
          scopes: request.scopes,
          resources: request.resources,
          nonce: request.nonce,
          auth_time: session.auth_time,
          amr: session.amr,
          expires_at: DateTime.add(now, { seconds: policy.codeTtlSeconds }),
          redeemed_at: null,
          family_id: null
        })
        return redirect(request, { code })
      })

    /** Parks the request under a new id; the browser carries the id, the store its digest. */
    const park = (request: AuthorizationRequest) =>
      Effect.gen(function* () {
        const id = yield* crypto.randomSecret
        const now = yield* DateTime.now
        yield* parked.park({
          digest: crypto.digest(id),
          request,
          parked_at: now,
          expires_at: DateTime.add(now, { seconds: policy.requestTtlSeconds })
        })
        return id
      })

    /** Where the request stands for this browser's sign-in (one made since it was parked counts for it). */
    const stepFor = (
      request: AuthorizationRequest,
      client: Client,
      session: BrowserSession | undefined,
      parkedAt: DateTime.Utc | undefined
    ) =>
      Effect.gen(function* () {
        const consented = session === undefined ? undefined : yield* consentedScopes(session.user_id, client.client_id)
        // auth_time has seconds only: a sign-in within the second the request was parked counts for it.
        const signedInForThis =
          session !== undefined &&
          parkedAt !== undefined &&
          session.auth_time * 1000 > DateTime.toEpochMillis(parkedAt) - 1000
        return nextStep(request, client, session, signedInForThis, consented, yield* DateTime.now)
      })

    /** What the request needs next for this browser, and the outcome that says so. */
    const proceed = (
      request: AuthorizationRequest,
      client: Client,
      session: BrowserSession | undefined,
      parkedAs: { readonly id: string; readonly digest: string; readonly parked_at: DateTime.Utc } | undefined
    ) =>
      Effect.gen(function* () {
        const step = yield* stepFor(request, client, session, parkedAs?.parked_at)
        if (step._tag === "Refuse") return redirect(request, { error: step.error })
        if (step._tag === "IssueCode" && session !== undefined) {
          if (parkedAs !== undefined && !(yield* parked.remove(parkedAs.digest))) return yield* new ParkedRequestGone()
          return yield* issueCode(request, session)
        }
        const id = parkedAs?.id ?? (yield* park(request))
        return NextStep.$is("Consent")(step)
          ? AuthorizeOutcome.Consent({ request: id })
          : AuthorizeOutcome.SignIn({ request: id })
      })

    /** An authorization request (its parameters, first value of each) from a browser, signed in or not. */
    /** The registered resources among those named (normalised), for the domain's decision. */
    const registeredAmong = (asked: ReadonlyArray<string>) =>
      Effect.map(
        Effect.forEach(
          [...new Set(asked.map(normaliseResourceUri).filter((uri): uri is string => uri !== undefined))],
          (uri) => resources.find(uri)
        ),
        (found) => {
          const byUri = new Map<string, Resource>()
          for (const resource of found) if (Option.isSome(resource)) byUri.set(resource.value.uri, resource.value)
          return { asked, registered: (uri: string) => byUri.get(uri) }
        }
      )

    const authorize = (
      params: Readonly<Record<string, string | undefined>>,
      session: BrowserSession | undefined,
      resourcesAsked: ReadonlyArray<string> = [],
      counted?: FetchCounter
    ) =>
      Effect.tap(decide(params, session, resourcesAsked, counted), (outcome) =>
        Metric.increment(Metric.tagged(oidcAuthorizations, "outcome", outcomeLabels[outcome._tag]))
      )

    const decide = (
      params: Readonly<Record<string, string | undefined>>,
      session: BrowserSession | undefined,
      resourcesAsked: ReadonlyArray<string>,
      counted: FetchCounter | undefined
    ) =>
      Effect.gen(function* () {
        const named =
          params.client_id === undefined || params.client_id === ""
            ? Either.right(undefined)
            : yield* directory.named(params.client_id, counted)
        if (Either.isLeft(named))
          return AuthorizeOutcome.ErrorPage({
            error: "invalid_client",
            error_description: `the client's metadata document: ${named.left.reason}`
          })
        const client = named.right
        const decision = decideAuthorization(params, client, yield* registeredAmong(resourcesAsked))
        switch (decision._tag) {
          case "ErrorPage":
            return AuthorizeOutcome.ErrorPage({ error: decision.error, error_description: decision.error_description })
          case "RedirectError":
            return redirect(decision, { error: decision.error, error_description: decision.error_description })
          case "Accepted":
            return yield* proceed(decision.request, decision.client, session, undefined)
        }
      })

    /** The parked request of `id`, with its client (gone with its client). */
    const parkedRequest = (id: string) =>
      Effect.gen(function* () {
        const digest = crypto.digest(id)
        const found = yield* parked.find(digest, yield* DateTime.now)
        if (Option.isNone(found)) return yield* new ParkedRequestGone()
        const client = yield* clients.find(found.value.request.client_id)
        if (Option.isNone(client)) return yield* new ParkedRequestGone()
        return { id, ...found.value, client: client.value }
      })

    /** A parked request resumed once its browser has signed in (or to see where it stands). */
    const resume = (id: string, session: BrowserSession | undefined) =>
      Effect.flatMap(parkedRequest(id), (found) => proceed(found.request, found.client, session, found))

    /** What the consent page shows of a parked request: the client, and the scopes to grant. */
    const consentPrompt = (id: string) =>
      Effect.map(parkedRequest(id), ({ client, request }) => ({
        client_id: client.client_id,
        client_name: client.name,
        self_registered: client.self_registered,
        redirect_host: new URL(request.redirect_uri).host,
        scopes: request.scopes
      }))

    /**
     * The user's answer on the consent page: a refusal sends `access_denied` back; an approval is
     * stored (a first grant audited with the user as its subject) and answered with a code.
     */
    const answerConsent = (id: string, session: BrowserSession, approve: boolean) =>
      Effect.gen(function* () {
        const found = yield* parkedRequest(id)
        const { request, client } = found
        // An answer counts only from a browser whose sign-in the request accepts (prompt=login, max_age).
        const step = yield* stepFor(request, client, session, found.parked_at)
        if (step._tag === "SignIn") return AuthorizeOutcome.SignIn({ request: id })
        if (!(yield* parked.remove(found.digest))) return yield* new ParkedRequestGone()
        if (!approve) return redirect(request, { error: "access_denied", error_description: "the user declined" })
        const user = yield* users.findById(UserId.make(session.user_id))
        const notice = yield* tx.transaction(
          Effect.gen(function* () {
            const first = yield* consents.grant(session.user_id, client.client_id, request.scopes, yield* DateTime.now)
            if (!first || Option.isNone(user)) return Option.none()
            yield* audit.append({
              type: "oidc.consent_granted",
              user_id: UserId.make(session.user_id),
              details: { client_id: client.client_id, scopes: request.scopes.join(" ") }
            })
            // The owner hears of every app let in, as of every new way in: it commits with the grant.
            return yield* notices.announceNotice(user.value.email, { kind: "app_allowed", subject: client.name })
          })
        )
        yield* notices.told(notice)
        return yield* issueCode(request, session)
      })

    return { authorize, resume, consentPrompt, answerConsent } as const
  })
}) {}
