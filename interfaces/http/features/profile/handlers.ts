import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option, Schema } from "effect"
import { Accounts } from "../../../../application/Accounts.js"
import { PublicUser, toPublicUser, type User } from "../../../../domain/User.js"
import { CurrentPrincipal } from "../../Authentication.js"
import { feature, featureApi, shapeOf } from "../../Feature.js"
import { profileGroup } from "./group.js"

const encodeUser = Schema.encodeEither(PublicUser)
const answers = new WeakMap<User, HttpServerResponse.HttpServerResponse>()

/**
 * GET /me's answer, made once for each stored user: while a user's row stays the same, the store
 * answers the same User (userRows.ts), and encoding it and writing its JSON again on every call
 * was a twentieth of /me's CPU. An answer is a value (headers are set on copies of it), so one
 * serves every call. A user that would not encode is answered as any route's value is, so that
 * the failure is the API's usual one.
 */
const answerOf = (user: User): PublicUser | HttpServerResponse.HttpServerResponse => {
  const known = answers.get(user)
  if (known !== undefined) return known
  const encoded = encodeUser(toPublicUser(user))
  if (Either.isLeft(encoded)) return toPublicUser(user)
  const answer = HttpServerResponse.unsafeJson(encoded.right)
  answers.set(user, answer)
  return answer
}

/** The profile group's handlers. */
export const profile = feature({
  name: "profile",
  limits: [],
  api: (context) =>
    featureApi(profileGroup(shapeOf(context)), (handlers) =>
      Effect.gen(function* () {
        const accounts = yield* Accounts
        return handlers
          .handle("me", () => Effect.map(CurrentPrincipal, (principal) => answerOf(principal.user)))
          .handle("verifiedMe", () => Effect.map(CurrentPrincipal, (principal) => answerOf(principal.user)))
          .handle("updateMe", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) => accounts.updateProfile(principal, payload))
          )
          .handle("deleteMe", () => Effect.flatMap(CurrentPrincipal, accounts.deleteAccount))
          .handle("changePassword", ({ payload }) =>
            Effect.flatMap(CurrentPrincipal, (principal) =>
              accounts.changePassword(principal, Option.fromNullable(payload.current_password), payload.new_password)
            ).pipe(Effect.as({ detail: "The password has been changed; your other sessions have ended." }))
          )
      })
    )
})
