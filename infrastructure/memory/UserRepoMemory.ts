import { DateTime, Effect, Layer, Option } from "effect"
import { AddressChanges } from "../../application/ports/AddressChanges.js"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { UserAlreadyExistsError } from "../../domain/errors.js"
import { User, UserId } from "../../domain/User.js"
import { validated } from "../../domain/validated.js"
import { randomUserId, type UserRepoOptions } from "../users.js"

/**
 * Users in a Map, for tests and throwaway runs. Synchronous operations make each one atomic.
 * Integer ids count from 1 and are never reused, not even after a delete.
 */
/** Oldest first; by id among users created at the same instant. */
const byCreation = (a: User, b: User) =>
  a.created_at.epochMillis - b.created_at.epochMillis || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const make = Effect.fnUntraced(function* (options: UserRepoOptions = {}) {
  const idType = options.idType ?? "uuid"
  let lastInteger = 0
  const byId = new Map<UserId, User>()
  const addressChanges = yield* AddressChanges
  /** Whether a live undo of an address change reserves `email` for another account than `self`. */
  const reserved = (email: string, self?: UserId) =>
    Effect.flatMap(DateTime.now, (now) =>
      Effect.map(addressChanges.reservedFor(email, now), (holder) => Option.isSome(holder) && holder.value !== self)
    )
  const unique = options.uniqueFields ?? []
  /** Whether another user than `self` holds one of `fields`' unique values. */
  const clashes = (fields: Readonly<Record<string, unknown>>, self?: UserId) => {
    for (const user of byId.values()) {
      if (user.id === self) continue
      for (const field of unique) {
        if (fields[field] !== undefined && user.fields[field] === fields[field]) return true
      }
    }
    return false
  }
  const replace = (user: User, changes: Partial<User>) => {
    const updated = new User({ ...user, ...changes }, validated)
    byId.set(user.id, updated)
    return updated
  }
  return UserRepo.of({
    create: (fields) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        if (yield* reserved(fields.email)) return yield* new UserAlreadyExistsError()
        return yield* Effect.suspend(() => {
          for (const user of byId.values()) if (user.email === fields.email) return new UserAlreadyExistsError()
          if (clashes(fields.fields ?? {})) return new UserAlreadyExistsError()
          const id = idType === "integer" ? UserId.make(String(++lastInteger)) : randomUserId(idType)
          const user = new User({ ...fields, fields: { ...fields.fields }, id, created_at: now, roles: [] }, validated)
          byId.set(user.id, user)
          return Effect.succeed(user)
        })
      }),
    findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
    findByLogin: (field, value) =>
      Effect.sync(() => {
        for (const user of byId.values()) {
          if (field === "email" ? user.email === value : user.fields[field] === value) return Option.some(user)
        }
        return Option.none()
      }),
    list: ({ emailStartsWith, emailContains, after, limit }) =>
      Effect.sync(() =>
        [...byId.values()]
          .filter((user) => emailStartsWith === undefined || user.email.startsWith(emailStartsWith))
          .filter((user) => emailContains === undefined || user.email.includes(emailContains))
          .filter((user) => after === undefined || byCreation(after, user) < 0)
          .sort(byCreation)
          .slice(0, limit)
      ),
    setPassword: (id, hashedPassword) =>
      Effect.sync(() => {
        const user = byId.get(id)
        if (user !== undefined) replace(user, { hashed_password: Option.some(hashedPassword) })
      }),
    setEmail: (id, email) =>
      Effect.flatMap(reserved(email, id), (isReserved) => {
        const user = byId.get(id)
        if (user === undefined) return Effect.succeed(Option.none())
        if (isReserved) return Effect.fail(new UserAlreadyExistsError())
        for (const other of byId.values()) {
          if (other.id !== id && other.email === email) return Effect.fail(new UserAlreadyExistsError())
        }
        return Effect.succeed(Option.some(replace(user, { email, is_verified: true })))
      }),
    clearPassword: (id) =>
      Effect.sync(() => {
        const user = byId.get(id)
        if (user !== undefined) replace(user, { hashed_password: Option.none() })
      }),
    changeCredentials: (id, expected) =>
      Effect.sync(() => {
        const user = byId.get(id)
        if (user === undefined || (expected !== undefined && user.credential_version !== expected)) return false
        replace(user, { credential_version: user.credential_version + 1 })
        return true
      }),
    // The memory store's transactions run one at a time (TransactionMemory), which holds the answer.
    holdCredentials: (id, version) => Effect.sync(() => byId.get(id)?.credential_version === version),
    setFields: (id, fields) =>
      Effect.suspend(() => {
        const user = byId.get(id)
        if (user === undefined) return Effect.succeed(Option.none())
        if (clashes(fields, id)) return Effect.fail(new UserAlreadyExistsError())
        return Effect.succeed(Option.some(replace(user, { fields: { ...user.fields, ...fields } })))
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

/** The repository for a deployment's id type and unique custom fields. */
export const layerWith = (options: UserRepoOptions) => Layer.effect(UserRepo, make(options))

export const layer = layerWith({})
