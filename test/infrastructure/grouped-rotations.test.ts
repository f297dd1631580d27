import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { AuthorizationCodes } from "../../application/ports/AuthorizationCodes.js"
import { OidcGrants } from "../../application/ports/OidcGrants.js"
import { RefreshTokenRepo } from "../../application/ports/RefreshTokenRepo.js"
import type { Grant } from "../../domain/oidc/Grant.js"
import { StoreTimeout } from "../../infrastructure/storeTimeout.js"
import { addClient, addUser } from "../support/oidcFixtures.js"
import {
  commitsInLog,
  emptyLog,
  fileOfClient,
  holdingWriteLock,
  later,
  now,
  onFile,
  rotatedAt,
  rotation,
  session
} from "../support/rotations.js"

/**
 * The rotations of a SQLite file's fast adapters (the first-party refresh's and the provider's
 * refresh grants'), and the provider's code redemptions, that arrive together are committed together (infrastructure/sql/fast/
 * groupCommit.ts): counted in the write-ahead log, and each caller told what is on the disk.
 */
/** A live grant of `userId` to "app". */
const grantOf = (grantId: string, userId: string, scopes: ReadonlyArray<string>): Grant => ({
  grant_id: grantId,
  client_id: "app",
  user_id: userId,
  scopes,
  resources: [],
  auth_time: 1,
  amr: ["pwd"],
  created_at: now,
  last_used_at: now,
  expires_at: later,
  revoked_at: null
})

describe("rotations of a SQLite file committed together", () => {
  it.live("rotations that arrive together are committed together, one after another each alone", () =>
    onFile(
      Effect.gen(function* () {
        const families = yield* Effect.all(Array.from({ length: 12 }, (_, lane) => session(`together-${lane}`)))
        const tokens = yield* RefreshTokenRepo
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const outcomes = yield* Effect.all(
          families.map((familyId, lane) => tokens.rotate(rotation(`together-${lane}`, `together-${lane}-2`, familyId))),
          { concurrency: "unbounded" }
        )
        expect(outcomes).toEqual(families.map(() => true))
        // Twelve rotations, one transaction: the disk's sync paid once.
        expect(commitsInLog(file)).toBe(1)
        for (const lane of [0, 5, 11]) expect(Option.isSome(yield* rotatedAt(`together-${lane}`))).toBe(true)

        yield* emptyLog(file)
        for (const lane of [0, 1, 2])
          expect(yield* tokens.rotate(rotation(`together-${lane}-2`, `together-${lane}-3`, families[lane] ?? ""))).toBe(
            true
          )
        expect(commitsInLog(file)).toBe(3)
      })
    )
  )

  it.live("the provider's refresh grants that arrive together are committed together too", () =>
    onFile(
      Effect.gen(function* () {
        const userId = yield* addUser("grants@example.com")
        yield* addClient("app")
        const grants = yield* OidcGrants
        const grantToken = (digest: string, grantId: string) => ({
          digest,
          grant_id: grantId,
          issued_at: now,
          expires_at: later,
          rotated_at: null
        })
        const lanes = Array.from({ length: 8 }, (_, lane) => `grant-${lane}`)
        for (const grantId of lanes)
          yield* grants.start(
            grantOf(grantId, userId, ["openid", "offline_access"]),
            Option.some(grantToken(`${grantId}-t1`, grantId))
          )
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const outcomes = yield* Effect.all(
          lanes.map((grantId) => grants.rotate(`${grantId}-t1`, grantToken(`${grantId}-t2`, grantId), now)),
          { concurrency: "unbounded" }
        )
        expect(outcomes).toEqual(lanes.map(() => true))
        expect(commitsInLog(file)).toBe(1)
        const rotated = yield* grants.presented("grant-3-t1")
        expect(Option.map(rotated, ({ token }) => token.rotated_at !== null)).toEqual(Option.some(true))
        expect(Option.isSome(yield* grants.presented("grant-3-t2"))).toBe(true)
      })
    )
  )

  it.live("the provider's code redemptions that arrive together are committed together, each code once", () =>
    onFile(
      Effect.gen(function* () {
        const userId = yield* addUser("codes@example.com")
        yield* addClient("app")
        const grants = yield* OidcGrants
        const codes = yield* AuthorizationCodes
        const lanes = Array.from({ length: 8 }, (_, lane) => `code-${lane}`)
        for (const digest of lanes)
          yield* codes.add({
            digest,
            client_id: "app",
            user_id: userId,
            redirect_uri: "http://127.0.0.1/cb",
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            scopes: ["openid"],
            resources: [],
            nonce: null,
            auth_time: 1,
            amr: ["pwd"],
            expires_at: later,
            redeemed_at: null,
            family_id: null
          })
        const file = yield* fileOfClient
        yield* emptyLog(file)
        // Each code redeemed twice at once: one redemption of each starts its grant.
        const outcomes = yield* Effect.all(
          lanes.flatMap((digest) => [
            grants.startFromCode(digest, grantOf(`${digest}-a`, userId, ["openid"]), Option.none()),
            grants.startFromCode(digest, grantOf(`${digest}-b`, userId, ["openid"]), Option.none())
          ]),
          { concurrency: "unbounded" }
        )
        expect(commitsInLog(file)).toBe(1)
        expect(outcomes.filter(Boolean)).toHaveLength(lanes.length)
        for (const digest of lanes) {
          const started = [yield* grants.find(`${digest}-a`), yield* grants.find(`${digest}-b`)].filter(Option.isSome)
          expect(started).toHaveLength(1)
          expect(yield* codes.markReplayed(digest, now)).toEqual(Option.some(started[0]?.value.grant_id))
        }
      })
    )
  )

  it.live("a rotation refused inside a group rolls back alone; the others of its group commit", () =>
    onFile(
      Effect.gen(function* () {
        const good = yield* session("grouped-good")
        const bad = yield* session("grouped-bad")
        yield* session("grouped-taken")
        const tokens = yield* RefreshTokenRepo
        const file = yield* fileOfClient
        yield* emptyLog(file)
        const [won, refused] = yield* Effect.all(
          [
            tokens.rotate(rotation("grouped-good", "grouped-good-2", good)),
            // The successor's digest is already stored: the insert breaks the key after the claim.
            Effect.either(tokens.rotate(rotation("grouped-bad", "grouped-taken", bad)))
          ],
          { concurrency: "unbounded" }
        )
        expect(commitsInLog(file)).toBe(1)
        expect(won).toBe(true)
        expect(refused).toMatchObject({ _tag: "Left", left: { _tag: "StoreUnavailableError" } })
        expect(Option.isSome(yield* rotatedAt("grouped-good"))).toBe(true)
        expect(Option.isSome(yield* tokens.findByDigest("grouped-good-2"))).toBe(true)
        expect(yield* rotatedAt("grouped-bad")).toEqual(Option.none())
      })
    )
  )

  it.live("a rotation whose caller gave up before its group was written is not written", () =>
    onFile(
      Effect.gen(function* () {
        const familyId = yield* session("given-up")
        const other = yield* session("given-up-other")
        const tokens = yield* RefreshTokenRepo
        // A transaction of the client holds the write lock and the permit meanwhile.
        const holding = yield* holdingWriteLock(other, "400 millis")
        yield* Effect.sleep("50 millis")
        const gaveUp = yield* Effect.either(
          tokens
            .rotate(rotation("given-up", "given-up-2", familyId))
            .pipe(Effect.provideService(StoreTimeout, Duration.millis(100)))
        )
        expect(gaveUp).toMatchObject({ _tag: "Left", left: { _tag: "StoreUnavailableError" } })
        yield* holding.await
        yield* Effect.sleep("50 millis")
        // The caller was told the store did not answer: its token must still be good, not spent.
        expect(yield* rotatedAt("given-up")).toEqual(Option.none())
        expect(yield* tokens.findByDigest("given-up-2")).toEqual(Option.none())
        expect(yield* tokens.rotate(rotation("given-up", "given-up-3", familyId))).toBe(true)
      })
    )
  )
})
