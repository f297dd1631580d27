import { Data, DateTime } from "effect"
import { constantTimeEqual } from "../OAuth.js"

/**
 * An authorization code as stored: only its digest, and what it was issued for, so that only that
 * client, at that redirect URI, with the verifier of that challenge, can redeem it, once.
 */
export interface StoredCode {
  readonly digest: string
  readonly client_id: string
  readonly user_id: string
  readonly redirect_uri: string
  readonly code_challenge: string
  readonly scopes: ReadonlyArray<string>
  /** The resources (RFC 8707) its tokens are for; none: the client itself. */
  readonly resources: ReadonlyArray<string>
  readonly nonce: string | null
  /** When the user signed in (seconds since the epoch), for the ID token's auth_time. */
  readonly auth_time: number
  /** How the user signed in (RFC 8176), for the ID token's amr. */
  readonly amr: ReadonlyArray<string>
  readonly expires_at: DateTime.Utc
  /** When it was redeemed: a second redemption is a replay. */
  readonly redeemed_at: DateTime.Utc | null
  /** The grant (a token family) its first redemption started, ended on a replay. */
  readonly family_id: string | null
}

/** What the client presents at the token endpoint with the code. */
export interface CodeRedemption {
  readonly client_id: string
  readonly redirect_uri: string | undefined
  /** The S256 challenge of the presented code_verifier (base64url SHA-256), computed by the caller. */
  readonly challenge_of_verifier: string | undefined
}

export type RedemptionDecision = Data.TaggedEnum<{
  Redeem: { readonly code: StoredCode }
  /** invalid_grant: unknown, expired, another client's, another redirect URI or another verifier. */
  Refuse: { readonly reason: string }
  /** invalid_grant, and every token issued from the code's first redemption ends (RFC 6749 §4.1.2). */
  Replayed: { readonly family_id: string | null }
}>
export const RedemptionDecision = Data.taggedEnum<RedemptionDecision>()

/**
 * Whether a code may be redeemed. A replay is told first, whoever presents it: the code leaked,
 * so what it gave ends. Another client's code is refused without a word about the code, so that
 * a client cannot learn that it exists.
 */
export const decideRedemption = (
  code: StoredCode | undefined,
  presented: CodeRedemption,
  now: DateTime.Utc
): RedemptionDecision => {
  if (code === undefined) return RedemptionDecision.Refuse({ reason: "the code is not known" })
  if (code.redeemed_at !== null) return RedemptionDecision.Replayed({ family_id: code.family_id })
  if (code.client_id !== presented.client_id) return RedemptionDecision.Refuse({ reason: "the code is not known" })
  if (!DateTime.lessThan(now, code.expires_at)) return RedemptionDecision.Refuse({ reason: "the code has expired" })
  if (presented.redirect_uri !== code.redirect_uri)
    return RedemptionDecision.Refuse({ reason: "redirect_uri differs from the authorization request's" })
  if (presented.challenge_of_verifier === undefined)
    return RedemptionDecision.Refuse({ reason: "code_verifier is missing or malformed" })
  if (!constantTimeEqual(code.code_challenge, presented.challenge_of_verifier))
    return RedemptionDecision.Refuse({ reason: "code_verifier does not match the code_challenge" })
  return RedemptionDecision.Redeem({ code })
}
