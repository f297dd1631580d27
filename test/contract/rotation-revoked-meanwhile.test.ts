import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import { TokenHolders } from "../../application/ports/TokenHolders.js"
import { postgresFastAdapters, sqlRepositories } from "../../composition/stores.js"
import { FamilyId } from "../../domain/Session.js"
import * as Postgres from "../support/postgres.js"
import { at, newUser, startFamily, tokenOf } from "../support/sessionRecords.js"

/**
 * A rotation claims the token, then updates the family under a re-check that it is still live:
 * a session ended between the two makes the whole rotation roll back. This holds the family's
 * row with an uncommitted revocation while the rotation runs, so that its claim succeeds and its
 * family update waits, then commits the revocation.
 */

/**
 * The repositories on a fresh PostgreSQL schema, its client reachable to hold a lock of its own:
 * the plain adapters, or the fast ones `serve` composes.
 */
const adapters = [
  { name: "plain", postgres: () => sqlRepositories().pipe(Layer.provideMerge(Postgres.layer())) },
  {
    name: "fast",
    postgres: () => sqlRepositories({}, postgresFastAdapters).pipe(Layer.provideMerge(Postgres.layer()))
  }
]

describe.skipIf(Postgres.noPostgres).each(adapters)(
  "a rotation whose family is ended while it runs (PostgreSQL, $name)",
  ({ postgres }) => {
    it.live("loses and changes nothing: the token unspent, no successor stored, the family ended", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const families = yield* RefreshTokenRepo
        const user = yield* newUser("meanwhile@example.com")
        yield* startFamily(user.id, "family-meanwhile")
        // A revocation that holds the family's row, uncommitted, until it is let go.
        const locked = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        const revocation = yield* Effect.fork(
          sql.withTransaction(
            sql`UPDATE token_families SET revoked_at = ${at.epochMillis} WHERE family_id = ${"family-meanwhile"}`.pipe(
              Effect.zipRight(Deferred.succeed(locked, undefined)),
              Effect.zipRight(Deferred.await(commit))
            )
          )
        )
        yield* Deferred.await(locked)
        // The rotation reads the family as live (the revocation is not committed) and waits on its row.
        const rotation = yield* Effect.fork(
          families.rotate({
            presented: "digest-family-meanwhile",
            successor: tokenOf("digest-meanwhile-successor", "family-meanwhile"),
            sealedSuccessor: Option.some("sealed-pair"),
            now: at
          })
        )
        yield* Effect.sleep("300 millis")
        expect(yield* Fiber.poll(rotation)).toEqual(Option.none())
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(revocation)
        expect(yield* Fiber.join(rotation)).toBe(false)

        expect(yield* families.findByDigest("digest-meanwhile-successor")).toEqual(Option.none())
        const presented = yield* Effect.flatMap(TokenHolders, (holders) => holders.presented("digest-family-meanwhile"))
        expect(
          Option.map(presented, ({ token, family }) => ({
            spent: Option.isSome(token.rotated_at) || Option.isSome(token.sealed_successor),
            ended: Option.isSome(family.revoked_at)
          }))
        ).toEqual(Option.some({ spent: false, ended: true }))
        expect(yield* families.isEnded(FamilyId.make("family-meanwhile"))).toBe(true)
      }).pipe(Effect.provide(postgres()))
    )
  }
)
