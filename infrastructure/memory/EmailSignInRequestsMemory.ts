import { type DateTime, Effect, Layer, Option } from "effect"
import { EmailSignInRequests } from "../../application/ports/EmailSignInRequests.js"
import { afterWrongCode, type EmailSignInRequest, isLive, WrongCodeCount } from "../../domain/EmailSignIn.js"

/**
 * Pending sign-ins by mail in a Map by address, for tests and throwaway runs. Each operation
 * runs without yielding, so a take or a counted code is atomic.
 */
export const make = Effect.sync(() => {
  const byEmail = new Map<string, EmailSignInRequest>()
  /** The address's request while a code may still take it. */
  const liveRequest = (email: string, now: DateTime.Utc, maxAttempts: number) => {
    const request = byEmail.get(email)
    return request !== undefined && isLive(request, now) && request.attempts < maxAttempts ? request : undefined
  }

  return EmailSignInRequests.of({
    replace: (request) => Effect.sync(() => void byEmail.set(request.email, request)),
    takeByToken: (tokenDigest, now) =>
      Effect.sync(() => {
        for (const request of byEmail.values()) {
          if (request.token_digest !== tokenDigest) continue
          byEmail.delete(request.email)
          return isLive(request, now) ? Option.some(request) : Option.none()
        }
        return Option.none()
      }),
    takeByCode: (email, codeDigest, now, maxAttempts) =>
      Effect.sync(() => {
        const request = liveRequest(email, now, maxAttempts)
        if (request === undefined || request.code_digest !== codeDigest) return Option.none()
        byEmail.delete(email)
        return Option.some(request)
      }),
    countWrongCode: (email, now, maxAttempts) =>
      Effect.sync(() => {
        const request = liveRequest(email, now, maxAttempts)
        if (request === undefined) return WrongCodeCount.NoRequest()
        const attempts = request.attempts + 1
        if (attempts >= maxAttempts) byEmail.delete(email)
        else byEmail.set(email, { ...request, attempts })
        return afterWrongCode(attempts, maxAttempts)
      }),
    countExpired: (before) =>
      Effect.sync(
        () => [...byEmail.values()].filter((request) => request.expires_at.epochMillis < before.epochMillis).length
      ),
    deleteExpired: (before, limit) =>
      Effect.sync(() => {
        let deleted = 0
        for (const [email, request] of byEmail) {
          if (deleted >= limit) break
          if (request.expires_at.epochMillis < before.epochMillis) {
            byEmail.delete(email)
            deleted++
          }
        }
        return deleted
      })
  })
})

export const layer = Layer.effect(EmailSignInRequests, make)
