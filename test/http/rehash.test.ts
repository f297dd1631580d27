import { describe, expect, layer } from "@effect/vitest"
import * as argon2 from "@node-rs/argon2"
import * as bcrypt from "@node-rs/bcrypt"
import { Effect, Option } from "effect"
import { UserRepo } from "../../application/ports/UserRepo.js"
import { Email, type UserId } from "../../domain/User.js"
import { expectProblem, login, password, uniqueEmail } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

const current = "$argon2id$v=19$m=19456,t=2,p=1$"

/** A user whose stored hash came from elsewhere: an older system, other parameters. */
const userWithHash = (hashed: string) =>
  Effect.gen(function* () {
    const users = yield* UserRepo
    const email = Email.make(uniqueEmail("legacy"))
    const user = yield* users.create({
      email,
      hashed_password: Option.some(hashed),
      is_active: true,
      is_verified: false,
      is_superuser: false
    })
    return { email, id: user.id }
  })

const storedHash = (id: UserId) =>
  Effect.flatMap(UserRepo, (users) => users.findById(id)).pipe(
    Effect.map((user) => Option.getOrThrow(Option.flatMap(user, (u) => u.hashed_password)))
  )

const legacyHashes = {
  "bcrypt (cost 4)": () => bcrypt.hash(password, { cost: 4 }),
  "argon2id with other parameters": () => argon2.hash(password, { memoryCost: 8192, timeCost: 1, parallelism: 1 }),
  argon2i: () => argon2.hash(password, { algorithm: 1 as argon2.Algorithm })
}

for (const backend of TestApp.backends) {
  describe(`transparent rehash at login (${backend.name})`, () => {
    layer(TestApp.layer(backend), { excludeTestServices: true })((it) => {
      for (const [kind, make] of Object.entries(legacyHashes)) {
        it.effect(`a ${kind} hash verifies and is replaced by argon2id at the configured cost`, () =>
          Effect.gen(function* () {
            const legacy = yield* Effect.promise(make)
            expect(legacy.startsWith(current)).toBe(false)
            const user = yield* userWithHash(legacy)
            expectProblem(yield* login(user.email, "not the password"), 401, "AuthenticationError")
            expect(yield* storedHash(user.id)).toBe(legacy)
            expect((yield* login(user.email)).status).toBe(200)
            const upgraded = yield* storedHash(user.id)
            expect(upgraded.startsWith(current)).toBe(true)
            expect((yield* login(user.email)).status).toBe(200)
            expect(yield* storedHash(user.id)).toBe(upgraded)
          })
        )
      }
    })
  })
}
