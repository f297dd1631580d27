import { DateTime, Effect, Layer, Option } from "effect"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { User, UserId, type UserIdType } from "../../domain/User.js"
import { randomUserId, UserIdTypeSetting } from "../userIds.js"

/**
 * Users in a Map, for tests and throwaway runs. Synchronous operations make each one atomic.
 * Integer ids count from 1 and are never reused, not even after a delete.
 */
export const make = Effect.gen(function* () {
  const idType = yield* UserIdTypeSetting
  let lastInteger = 0
  const byId = new Map<UserId, User>()
  const replace = (user: User, changes: Partial<User>) => {
    const updated = new User({ ...user, ...changes })
    byId.set(user.id, updated)
    return updated
  }
  return UserRepo.of({
    create: (fields) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        return yield* Effect.suspend(() => {
          for (const user of byId.values()) if (user.email === fields.email) return new UserAlreadyExistsError()
          const id = idType === "integer" ? UserId.make(String(++lastInteger)) : randomUserId(idType)
          const user = new User({ ...fields, id, created_at: now, roles: [] })
          byId.set(user.id, user)
          return Effect.succeed(user)
        })
      }),
    findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
    findByLogin: (field, value) =>
      Effect.sync(() => {
        if (field !== "email") return Option.none()
        for (const user of byId.values()) if (user.email === value) return Option.some(user)
        return Option.none()
      }),
    setPassword: (id, hashedPassword) =>
      Effect.sync(() => {
        const user = byId.get(id)
        if (user !== undefined) replace(user, { hashed_password: Option.some(hashedPassword) })
      }),
    setFlags: (id, flags) =>
      Effect.sync(() => Option.map(Option.fromNullable(byId.get(id)), (user) => replace(user, flags))),
    delete: (id) => Effect.sync(() => void byId.delete(id)),
    assignRole: (id, role) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(byId.get(id)), (user) =>
          user.roles.includes(role) ? user : replace(user, { roles: [...user.roles, role].sort() })
        )
      ),
    removeRole: (id, role) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(byId.get(id)), (user) =>
          user.roles.includes(role) ? replace(user, { roles: user.roles.filter((held) => held !== role) }) : user
        )
      )
  })
})

/** The repository for a deployment's USER_ID_TYPE. */
export const layerFor = (idType: UserIdType) =>
  Layer.effect(UserRepo, make).pipe(Layer.provide(Layer.succeed(UserIdTypeSetting, idType)))

export const layer = layerFor("uuid")
