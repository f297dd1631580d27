import { Clock, Effect, Layer } from "effect"
import { Blacklist } from "../../application/ports/Blacklist.js"
import { RedisClient, script } from "./RedisClient.js"

/** Sets the key to `until` (epoch ms) with that expiry, unless it already holds a later one. */
const extend = script(`
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
`)

/**
 * Revocations as `blacklist:jti:<jti>` and `blacklist:family:<id>` keys holding their `until`
 * (epoch ms) and expiring at it, so Redis holds only what is still live. The `until` is compared
 * with Effect's Clock, so expiry is exact to the millisecond whatever Redis' own timer does.
 */
export const make = Effect.gen(function* () {
  const client = yield* RedisClient
  const jtiKey = (jti: string) => client.key(`blacklist:jti:${jti}`)
  const familyKey = (familyId: string) => client.key(`blacklist:family:${familyId}`)

  const put = (key: string, until: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      until <= now
        ? Effect.void
        : Effect.asVoid(client.use("revoke", (redis) => extend(redis, [key], [until, until - now])))
    )

  return Blacklist.of({
    revokeToken: (jti, until) => put(jtiKey(jti), until.epochMillis),
    revokeFamily: (familyId, until) => put(familyKey(familyId), until.epochMillis),
    isRevoked: (jti, familyId) =>
      Effect.gen(function* () {
        const keys = familyId === null ? [jtiKey(jti)] : [jtiKey(jti), familyKey(familyId)]
        const values = yield* client.use("isRevoked", (redis) => redis.mget(...keys))
        const now = yield* Clock.currentTimeMillis
        return values.some((value) => value !== null && Number(value) > now)
      })
  })
})

export const layer = Layer.effect(Blacklist, make)
