import { Effect, Layer, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { UserRepo } from "../../application/ports/UserRepo.js"

/** Both reads of the repositories in turn: in memory each is a lookup in a Map, so there is nothing to join. */
export const make = Effect.gen(function* () {
  const users = yield* UserRepo
  const families = yield* RefreshTokenRepo
  return TokenHolders.of({
    find: (userId, familyId) =>
      Effect.flatMap(users.findById(userId), (user) =>
        Option.isNone(user)
          ? Effect.succeedNone
          : Effect.map(families.isEnded(familyId), (sessionEnded) => Option.some({ user: user.value, sessionEnded }))
      ),
    presented: (digest) =>
      Effect.flatMap(families.findByDigest(digest), (found) =>
        Option.isNone(found)
          ? Effect.succeedNone
          : Effect.map(users.findById(found.value.family.user_id), (user) => Option.some({ ...found.value, user }))
      )
  })
})

export const layer = Layer.effect(TokenHolders, make)
